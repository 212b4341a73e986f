//! The fixture of the outage tests (what each gate answers when PostgreSQL fails): a private
//! cluster with a role that logs in with a password and owns a database, the faults done to it,
//! and the check that an answer shows nothing of the connection settings or the driver.

use std::time::{Duration, Instant};

use sluice_pg::{Connection, Pool, PoolSettings};

use super::TestServer;
use crate::{Cluster, ClusterOptions, private_cluster};

/// What no client-facing answer may hold besides the cluster's password, port and directory:
/// the host, a URL, the OS's error text, the pool's counters, Rust's Debug output.
const NEVER_SHOWN: [&str; 8] = [
    "127.0.0.1",
    "postgres://",
    "os error",
    "callers waiting",
    "connections open",
    "pipeline statement",
    "Error {",
    "Kind",
];

/// A temporary cluster (no TLS, no test roles) with `role`, which logs in with `password` and
/// owns the database named after it.
pub struct OutageCluster {
    /// The cluster; stopped and started by the tests.
    pub cluster: Cluster,
    role: String,
    password: String,
}

impl OutageCluster {
    /// Starts the cluster and makes the role and its database; None where a private cluster
    /// cannot run (see [`private_cluster`]).
    pub async fn start(test_name: &str, role: &str, password: &str) -> Option<OutageCluster> {
        let cluster = private_cluster(
            test_name,
            ClusterOptions::temporary().tls(false).test_roles(false),
        )?;
        let outage = OutageCluster {
            cluster,
            role: role.to_owned(),
            password: password.to_owned(),
        };
        outage
            .superuser(&format!("CREATE ROLE {role} LOGIN PASSWORD '{password}'"))
            .await;
        outage
            .superuser(&format!("CREATE DATABASE {role} OWNER {role}"))
            .await;
        Some(outage)
    }

    /// The role's URL, with its password, for `database`.
    pub fn url(&self, database: &str) -> String {
        format!(
            "postgres://{}:{}@{}:{}/{database}?sslmode=disable",
            self.role,
            self.password,
            self.cluster.host(),
            self.cluster.port()
        )
    }

    /// A small pool (2 connections, 3 s to acquire one) as the role, on `database`: failures
    /// show soon.
    pub fn pool(&self, database: &str) -> Pool {
        let mut settings = PoolSettings::new();
        settings
            .set_max_size(2)
            .set_acquire_timeout(Duration::from_secs(3));
        Pool::connect(&self.url(database), settings)
            .unwrap_or_else(|e| panic!("a pool on {database}: {e}"))
    }

    /// The URL of the role's own database.
    pub fn own_url(&self) -> String {
        self.url(&self.role)
    }

    /// Runs `sql` as the superuser, its commits flushed (the cluster commits asynchronously,
    /// and a crash would take them).
    pub async fn superuser(&self, sql: &str) {
        let mut conn = Connection::connect(&self.cluster.url())
            .await
            .unwrap_or_else(|e| panic!("connecting as the superuser: {e}"));
        // Apart: CREATE DATABASE may not share an implicit transaction.
        conn.batch_execute("SET synchronous_commit = on")
            .await
            .unwrap_or_else(|e| panic!("synchronous_commit: {e}"));
        conn.batch_execute(sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// Changes the role's password and ends its sessions: every next login is refused (28P01).
    pub async fn refuse_logins(&self) {
        let role = &self.role;
        self.superuser(&format!(
            "ALTER ROLE {role} PASSWORD 'not-the-urls'; \
             SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '{role}'"
        ))
        .await;
    }

    /// Gives the role its password back.
    pub async fn accept_logins(&self) {
        let (role, password) = (&self.role, &self.password);
        self.superuser(&format!("ALTER ROLE {role} PASSWORD '{password}'"))
            .await;
    }

    /// Kills (SIGKILL) the backend running a statement whose text holds `fragment`, once one
    /// does: PostgreSQL then restarts itself, ending every session.
    pub async fn kill_backend_running(&self, fragment: &str) {
        let pid = within_20_seconds("the backend to kill", || async {
            let mut conn = Connection::connect(&self.cluster.url())
                .await
                .map_err(|e| e.to_string())?;
            let row = conn
                .query_opt(
                    "SELECT pid FROM pg_stat_activity WHERE state = 'active' \
                     AND strpos(query, $1) > 0 AND pid <> pg_backend_pid()",
                    &[&fragment],
                )
                .await
                .map_err(|e| e.to_string())?;
            match row {
                Some(row) => row.get::<i32>(0).map_err(|e| e.to_string()),
                None => Err(format!("no backend runs {fragment:?}")),
            }
        })
        .await;
        let killed = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .unwrap_or_else(|e| panic!("kill: {e}"));
        assert!(killed.success(), "kill -KILL {pid}");
    }

    /// Sends `method path` (no body) to `server` until `done` accepts the answer; no answer on
    /// the way may show internals.
    pub async fn send_until(
        &self,
        server: &TestServer,
        method: &str,
        path: &str,
        what: &str,
        done: impl Fn(u16, &str) -> bool,
    ) -> (u16, String) {
        within_20_seconds(what, || async {
            let answer = server.send(method, path, &[], "").await;
            self.assert_no_internals(what, &answer.body);
            if done(answer.status, &answer.body) {
                Ok((answer.status, answer.body))
            } else {
                Err(format!("{} {}", answer.status, answer.body))
            }
        })
        .await
    }

    /// Fails the test when `text`, an answer to a client, shows the password, the role, the
    /// cluster's port or directory, or any of the words every answer is checked for (the host,
    /// a URL, the OS's error text, the pool's counters, Debug output).
    pub fn assert_no_internals(&self, what: &str, text: &str) {
        let port = self.cluster.port().to_string();
        let data_dir = self.cluster.data_dir().to_string_lossy().into_owned();
        let own = [
            self.password.as_str(),
            self.role.as_str(),
            port.as_str(),
            data_dir.as_str(),
        ];
        for word in own.into_iter().chain(NEVER_SHOWN) {
            assert!(!text.contains(word), "{what}: {word:?} in {text}");
        }
    }
}

/// Calls `attempt` until it gives Some, every 100 ms, failing the test after 20 s with the last
/// thing `attempt` reported.
pub async fn within_20_seconds<T, F, Fut>(what: &str, mut attempt: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, String>>,
{
    let started = Instant::now();
    loop {
        match attempt().await {
            Ok(done) => return done,
            Err(last) => assert!(
                started.elapsed() < Duration::from_secs(20),
                "{what}: still {last} after 20 s"
            ),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
