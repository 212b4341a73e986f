//! Helpers shared by the integration tests: running psql against a cluster.

#![allow(dead_code)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sluice_embedded::Cluster;

/// psql from the cluster's install (panics with advice when missing: these tests need it).
pub fn psql_path(cluster: &Cluster) -> PathBuf {
    cluster.binaries().program("psql").unwrap_or_else(|| {
        panic!(
            "psql is missing from {}; install the PostgreSQL client (apt-get install postgresql-client)",
            cluster.bin_dir().display()
        )
    })
}

/// Runs `sql` with `psql -X -At` on `conninfo`; `Ok(stdout)` or `Err(stderr)`.
pub fn psql(
    cluster: &Cluster,
    conninfo: &str,
    password: Option<&str>,
    sql: &str,
) -> Result<String, String> {
    let mut command = Command::new(psql_path(cluster));
    command
        .args([
            "-X",
            "-q",
            "-At",
            "-v",
            "ON_ERROR_STOP=1",
            "-c",
            sql,
            "-d",
            conninfo,
        ])
        .stdin(Stdio::null())
        .env("PGCONNECT_TIMEOUT", "10");
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("PG") && name != "PGCONNECT_TIMEOUT" {
            command.env_remove(name);
        }
    }
    if let Some(password) = password {
        command.env("PGPASSWORD", password);
    }
    outcome(&command.output().expect("run psql"))
}

/// A finished program's standard output (`Ok`) or, when it failed, its standard error (`Err`),
/// trimmed.
pub fn outcome(output: &std::process::Output) -> Result<String, String> {
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).trim().to_owned())
    }
}

/// A keyword/value connection string to the cluster over TCP.
pub fn tcp(cluster: &Cluster, host: &str, user: &str, dbname: &str, extra: &str) -> String {
    format!(
        "host={host} port={} user={user} dbname={dbname} {extra}",
        cluster.port()
    )
}

/// False, after a skip message, when no cluster can be started because the server binaries are
/// missing while `DATABASE_URL` is set (a machine meant to test against an external server).
/// Without `DATABASE_URL` the test goes on and fails with the real error.
pub fn can_start_clusters(test_name: &str) -> bool {
    match sluice_embedded::find_binaries() {
        Err(error) if std::env::var("DATABASE_URL").is_ok_and(|url| !url.trim().is_empty()) => {
            eprintln!("skipping {test_name}: {error}");
            false
        }
        _ => true,
    }
}

/// A temporary directory (in /dev/shm when there is one) that the server user can reach (when
/// root it is `postgres`), so mode 0755 rather than 0700; removed when dropped.
pub fn reachable_tempdir(prefix: &str) -> tempfile::TempDir {
    let parent = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(if Path::new("/dev/shm").is_dir() {
            "/dev/shm"
        } else {
            "/tmp"
        })
        .expect("tempdir");
    std::fs::set_permissions(parent.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    parent
}
