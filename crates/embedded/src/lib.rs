//! sluice-embedded: finds or installs PostgreSQL server binaries and runs a private cluster.
//!
//! Used by every crate's test suite (through [`test_database`] or a [`Cluster`] of its own) and
//! by `sluice serve` as its default database (a persistent [`Cluster`]).
//!
//! * Binaries: [`find_binaries`] looks in `SLUICE_PG_BIN_DIR`, `PATH`, then
//!   `/usr/lib/postgresql/*/bin` (newest first). When none is found and the process is root, it
//!   installs Debian's `postgresql` package with apt-get (non-interactive), then looks again.
//! * Privileges: PostgreSQL refuses to run as root, so as root the server programs run as the
//!   `postgres` system user (or `nobody`), which owns the cluster's files.
//! * Clusters: [`ClusterOptions::temporary`] (tests: a temporary directory, a free port,
//!   durability off, TLS with a private CA, the [`TEST_ROLES`] and the `sluice_test` database)
//!   or [`ClusterOptions::persistent`] (initialised once in a data directory, then reused).
//!   The server listens on 127.0.0.1 and on a unix socket in a private directory.
//! * Access: only the owner gets in. Nothing is trusted: every connection authenticates with
//!   SCRAM; the superuser's password is generated at initialisation and kept in `sluice.pgpass`
//!   (pgpass format, mode 0600) in the data directory; [`Cluster::url`] and
//!   [`Cluster::psql_command`] point at that file (`passfile`, `PGPASSFILE`), so they are safe
//!   to print; [`Cluster::url_with_password`] carries the password itself. Data
//!   directories made by older versions (trusting local connections) are upgraded on start.
//! * Speed: temporary clusters go to `/dev/shm` when it has 1 GiB free (else the temporary
//!   directory; `SLUICE_PG_TMPDIR` overrides), and only the first one per process runs initdb:
//!   the others copy that template data directory.
//! * No leaks: a temporary cluster is stopped and removed on drop, and by a watchdog process
//!   when the owning process dies without dropping it (panic, abort, `SIGKILL`).
//! * Tests only, behind the `test-support` feature (test suites enable it on their
//!   dev-dependency; the `sluice` binary does not, so rcgen and the test roles stay out of it):
//!   temporary clusters, TLS with a private CA, the test roles, [`test_database`],
//!   [`clients`] and [`testkit`] (unique names, connections, an HTTP server on port 0, an HTTP
//!   client).
//!
//! ```no_run
//! use sluice_embedded::{Cluster, ClusterOptions, SCRAM_ROLE, TEST_DATABASE};
//! let cluster = Cluster::start(ClusterOptions::temporary())?;
//! println!("superuser: {}", cluster.url());
//! println!("scram: {}", cluster.url_for(&SCRAM_ROLE, TEST_DATABASE));
//! # Ok::<(), sluice_embedded::EmbeddedError>(())
//! ```

// The docs link the test kit's items, which exist only with the feature.
#![warn(missing_docs)]
#![cfg_attr(not(feature = "test-support"), allow(rustdoc::broken_intra_doc_links))]

mod auth;
mod binaries;
#[cfg(feature = "test-support")]
pub mod clients;
mod cluster;
mod commands;
mod conf;
mod error;
mod install;
mod options;
mod pidfile;
mod replica;
#[cfg(feature = "test-support")]
mod roles;
mod template;
#[cfg(feature = "test-support")]
mod test_db;
#[cfg(feature = "test-support")]
pub mod testkit;
mod tls;
mod user;
mod watchdog;

pub use auth::PASSWORD_FILE;
pub use binaries::{
    BIN_DIR_ENV, Binaries, NO_INSTALL_ENV, find_binaries, find_binaries_for_version,
};
pub use cluster::Cluster;
pub use error::{EmbeddedError, Result};
pub use options::{ClusterOptions, Storage, TMPDIR_ENV, default_data_dir};
pub use pidfile::{PostmasterPid, process_alive};
#[cfg(feature = "test-support")]
pub use roles::{
    AuthMethod, MD5_ROLE, PASSWORD_ROLE, Role, SCRAM_ROLE, TEST_DATABASE, TEST_ROLES, TLS_ROLE,
};
#[cfg(feature = "test-support")]
pub use test_db::{
    DATABASE_URL_ENV, TestDatabase, private_cluster, test_database, try_test_database,
};
/// A fresh private CA and a server certificate for `localhost` it signed: what the tests give
/// Sluice's own TLS listeners.
#[cfg(feature = "test-support")]
pub use tls::{GeneratedTls, generate as generate_test_tls};
pub use user::{ServerUser, running_as_root};

/// Parsers of the files and outputs this crate reads, exposed for the fuzz targets.
#[doc(hidden)]
pub mod parsers {
    pub use crate::auth::parse_password_file;
    pub use crate::binaries::{parse_pg_version_file, parse_version_output};
    pub use crate::conf::recorded_port;
    pub use crate::pidfile::parse as parse_postmaster_pid;
    pub use crate::user::find_user;
}

/// The template data directories this process made; they are removed when it exits.
#[doc(hidden)]
pub use template::template_dirs;
