//! The process-wide database for test suites: `DATABASE_URL`, or one shared embedded cluster.

use std::sync::OnceLock;

use crate::cluster::Cluster;
use crate::error::EmbeddedError;
use crate::options::ClusterOptions;
use crate::roles::Role;

/// The environment variable naming an external server to test against.
pub const DATABASE_URL_ENV: &str = "DATABASE_URL";

/// The database a test process uses: an external server named by `DATABASE_URL`, or a
/// temporary cluster (with TLS and the test roles) started once per process on first use.
///
/// The shared cluster lives in a static and is never dropped: when the test process exits (or
/// dies), its watchdog stops the server and removes the files. Do not stop or restart it; a test
/// that needs to should start its own with [`private_cluster`].
#[derive(Debug)]
pub struct TestDatabase {
    url: String,
    cluster: Option<Cluster>,
}

impl TestDatabase {
    /// The superuser URL: `DATABASE_URL` as given, or
    /// `postgres://postgres:<password>@127.0.0.1:<port>/postgres` for the embedded cluster
    /// (see [`Cluster::url`]: it carries the cluster's generated password).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Whether this is the embedded cluster (so it has the test roles, TLS and the
    /// `sluice_test` database) rather than an external server.
    pub fn is_embedded(&self) -> bool {
        self.cluster.is_some()
    }

    /// The embedded cluster, when this is one.
    pub fn cluster(&self) -> Option<&Cluster> {
        self.cluster.as_ref()
    }

    /// The embedded cluster, or `None` after printing on stderr that `test_name` is skipped
    /// because it needs one (an external `DATABASE_URL` is in use).
    pub fn cluster_or_skip(&self, test_name: &str) -> Option<&Cluster> {
        if self.cluster.is_none() {
            eprintln!(
                "skipping {test_name}: it needs the embedded test cluster (test roles, TLS), but \
                 {DATABASE_URL_ENV} points at an external server; unset it to run this test"
            );
        }
        self.cluster.as_ref()
    }

    /// The URL for one of the test roles (embedded cluster only).
    pub fn url_for(&self, role: &Role, dbname: &str) -> Option<String> {
        self.cluster.as_ref().map(|c| c.url_for(role, dbname))
    }
}

/// The process's test database, starting the embedded cluster on first call (thread-safe).
///
/// # Panics
/// When neither `DATABASE_URL` is set nor a cluster can be started; the message says why and
/// what to install. Use [`try_test_database`] to handle that yourself.
pub fn test_database() -> &'static TestDatabase {
    match try_test_database() {
        Ok(db) => db,
        Err(error) => panic!("no test database: {error}"),
    }
}

/// Like [`test_database`], returning the error instead of panicking. A failure is remembered:
/// later calls in the process return the same error without trying again.
pub fn try_test_database() -> Result<&'static TestDatabase, &'static EmbeddedError> {
    static DATABASE: OnceLock<Result<TestDatabase, EmbeddedError>> = OnceLock::new();
    DATABASE
        .get_or_init(|| {
            if let Some(url) = external_url() {
                eprintln!(
                    "sluice-embedded: using the server named by {DATABASE_URL_ENV} for tests; \
                     tests that need the embedded cluster (test roles, TLS, restarts) are skipped"
                );
                return Ok(TestDatabase { url, cluster: None });
            }
            let cluster = Cluster::start(ClusterOptions::temporary())?;
            Ok(TestDatabase {
                url: cluster.url(),
                cluster: Some(cluster),
            })
        })
        .as_ref()
}

/// Starts a temporary cluster of the test's own (to stop, restart or reconfigure freely).
///
/// Returns `None` after printing a skip message when it cannot be started and `DATABASE_URL`
/// is set (such machines may lack server binaries on purpose).
///
/// # Panics
/// When it cannot be started and `DATABASE_URL` is not set.
pub fn private_cluster(test_name: &str, options: ClusterOptions) -> Option<Cluster> {
    match Cluster::start(options) {
        Ok(cluster) => Some(cluster),
        Err(error) if external_url().is_some() => {
            eprintln!(
                "skipping {test_name}: it needs a private cluster, which could not be started \
                 ({error}); {DATABASE_URL_ENV} alone does not allow it"
            );
            None
        }
        Err(error) => panic!("{test_name}: could not start a private cluster: {error}"),
    }
}

fn external_url() -> Option<String> {
    std::env::var(DATABASE_URL_ENV)
        .ok()
        .filter(|url| !url.trim().is_empty())
}
