//! The crate's error type: what failed, where, and what to do about it.

use std::io;
use std::path::PathBuf;

/// Everything that can go wrong while finding, installing or running PostgreSQL.
///
/// Every message says what failed and, where there is one, what to do next.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmbeddedError {
    /// No directory holding `initdb`, `pg_ctl` and `postgres` was found, and none could be
    /// installed.
    #[error(
        "PostgreSQL server binaries (initdb, pg_ctl, postgres) were not found in PATH nor in {searched}{why_not_installed}; \
         install them (Debian/Ubuntu: `sudo apt-get install postgresql`), or point SLUICE_PG_BIN_DIR at \
         a directory that holds them, or set DATABASE_URL to use a running server"
    )]
    BinariesNotFound {
        /// The fixed places that were searched besides PATH.
        searched: String,
        /// Why no automatic install was tried (starts with "; ").
        why_not_installed: String,
    },

    /// `SLUICE_PG_BIN_DIR` names a directory that lacks one of the server binaries.
    #[error(
        "SLUICE_PG_BIN_DIR={dir} does not hold an executable `{missing}`; point it at the bin \
         directory of a PostgreSQL server install (e.g. /usr/lib/postgresql/15/bin) or unset it"
    )]
    BadBinDir {
        /// The directory named by the variable.
        dir: PathBuf,
        /// The binary that is missing.
        missing: &'static str,
    },

    /// The automatic `apt-get` install failed.
    #[error(
        "installing PostgreSQL failed: `{command}` {status}; install the package yourself \
         (`apt-get install postgresql`) or set DATABASE_URL to use a running server"
    )]
    InstallFailed {
        /// The command line that failed.
        command: String,
        /// How it ended.
        status: String,
    },

    /// A program could not be started at all.
    #[error("could not run {program}: {source}")]
    Spawn {
        /// The program.
        program: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },

    /// A helper command (initdb, single-user setup, pg_ctl stop ...) ran but failed.
    #[error("{what} failed: `{command}` {status}\n{output}")]
    CommandFailed {
        /// What the command was for.
        what: &'static str,
        /// The command line.
        command: String,
        /// How it ended.
        status: String,
        /// What it printed (trimmed to the last lines).
        output: String,
    },

    /// A file system operation failed.
    #[error("could not {action} {path}: {source}")]
    Io {
        /// What was being done ("create directory", "write", ...).
        action: &'static str,
        /// The path it was done to.
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },

    /// The server did not come up.
    #[error(
        "the PostgreSQL server in {data_dir} did not start ({status}); last lines of its log {log}:\n{tail}"
    )]
    ServerStart {
        /// The data directory.
        data_dir: PathBuf,
        /// How `pg_ctl start` ended.
        status: String,
        /// The server log file.
        log: PathBuf,
        /// The last lines of that log.
        tail: String,
    },

    /// The TCP port is taken by another process.
    #[error(
        "port 127.0.0.1:{port} is already in use{detail}; choose another port (or none, to let \
         one be picked) or stop the process that holds it"
    )]
    PortInUse {
        /// The port.
        port: u16,
        /// Extra context (what was tried).
        detail: String,
    },

    /// The server did not stop.
    #[error("the PostgreSQL server in {data_dir} did not stop: {reason}")]
    ServerStop {
        /// The data directory.
        data_dir: PathBuf,
        /// What `pg_ctl stop` said.
        reason: String,
    },

    /// Generating the TLS certificates failed.
    #[cfg(feature = "test-support")]
    #[error("could not generate the TLS certificates for the test cluster: {0}")]
    Tls(#[from] rcgen::Error),

    /// The unprivileged server user cannot reach a directory.
    #[error(
        "PostgreSQL runs as user `{user}` (it refuses to run as root), and that user cannot \
         traverse {blocked} on the way to {path}; choose a directory under /var/lib or /tmp, or \
         allow traversal with `chmod o+x {blocked}`"
    )]
    UnreachableDirectory {
        /// The directory the server needs.
        path: PathBuf,
        /// The ancestor that blocks it.
        blocked: PathBuf,
        /// The server user.
        user: String,
    },

    /// Running as root but no user to run the server as.
    #[error(
        "running as root, but /etc/passwd has neither a `postgres` nor a `nobody` user to run \
         the PostgreSQL server as (it refuses to run as root); create one with \
         `useradd --system postgres` or run as an ordinary user"
    )]
    NoServerUser,

    /// A persistent data directory is neither empty nor a PostgreSQL cluster.
    #[error(
        "{path} is not empty and is not a PostgreSQL data directory (no PG_VERSION file); \
         choose an empty or new directory"
    )]
    NotADataDirectory {
        /// The directory.
        path: PathBuf,
    },

    /// A persistent data directory was made by another major version than the binaries found.
    #[error(
        "{data_dir} was initialised by PostgreSQL {data_version}, but no PostgreSQL \
         {data_version} server binaries were found (found version {found_version} in \
         {found_bin_dir}); install PostgreSQL {data_version} \
         (`apt-get install postgresql-{data_version}`), upgrade the cluster with pg_upgrade, \
         or use another data directory"
    )]
    VersionMismatch {
        /// The data directory.
        data_dir: PathBuf,
        /// Its major version (from PG_VERSION).
        data_version: u32,
        /// The major version of the binaries found.
        found_version: u32,
        /// Where they were found.
        found_bin_dir: PathBuf,
    },

    /// A persistent cluster is already running, on another port than the one asked for.
    #[error(
        "the PostgreSQL server in {data_dir} is already running on port {running_port}, not \
         {requested_port}; use port {running_port}, or stop it first with \
         `pg_ctl stop -D {data_dir}`"
    )]
    AlreadyRunningOnOtherPort {
        /// The data directory.
        data_dir: PathBuf,
        /// The port it runs on.
        running_port: u16,
        /// The port that was asked for.
        requested_port: u16,
    },

    /// `postmaster.pid` could not be understood.
    #[error("could not read {path}: {reason}; if no server runs there, remove the file")]
    BadPidFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },

    /// A data directory's `PG_VERSION` file holds no version.
    #[error(
        "{path} holds `{content}`, not a PostgreSQL version; the data directory is damaged or \
         not PostgreSQL's: restore it or choose another directory"
    )]
    BadVersionFile {
        /// The file.
        path: PathBuf,
        /// What it holds (trimmed).
        content: String,
    },

    /// The password file of a data directory could not be understood.
    #[error(
        "{path} does not hold the superuser's password in the form `*:*:*:postgres:<password>`; \
         remove it and start again to set a new password"
    )]
    BadPasswordFile {
        /// The file.
        path: PathBuf,
    },

    /// A server setting name or value cannot be written to postgresql.conf.
    #[error("invalid server setting `{name}`: {reason}")]
    InvalidSetting {
        /// The setting's name.
        name: String,
        /// What is wrong.
        reason: &'static str,
    },

    /// The unix socket path would exceed the operating system's limit.
    #[error(
        "the unix socket path {path} is {len} bytes long, over the limit of {max}; choose a \
         shorter socket directory with ClusterOptions::socket_dir"
    )]
    SocketPathTooLong {
        /// The socket path.
        path: PathBuf,
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },

    /// A program needed to make replicas is missing from the install.
    #[error(
        "{program} is missing from {bin_dir}; it is needed to start replicas (install the \
         PostgreSQL client programs of the same version)"
    )]
    ReplicaProgramMissing {
        /// The program.
        program: &'static str,
        /// Where the server binaries are.
        bin_dir: PathBuf,
    },

    /// A new replica did not replay the primary's WAL in time.
    #[error("the replica in {data_dir} did not replay up to {lsn} in time ({last}); see {log}")]
    ReplicaCatchUp {
        /// The replica's data directory.
        data_dir: PathBuf,
        /// The primary's WAL position it had to reach.
        lsn: String,
        /// What the last check answered.
        last: String,
        /// The replica's server log.
        log: PathBuf,
    },

    /// No default place for a persistent data directory.
    #[error(
        "cannot choose a data directory: neither XDG_DATA_HOME nor HOME is set; pass one \
         explicitly"
    )]
    NoDataDirectory,
}

impl EmbeddedError {
    /// Wraps an I/O error with what was being done and to which path.
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        EmbeddedError::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = EmbeddedError> = std::result::Result<T, E>;
