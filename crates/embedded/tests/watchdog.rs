//! Integration tests: no server or file outlives the process that started the cluster.
//!
//! Each test re-executes this test binary to run `child_process` in a separate process, which
//! starts a cluster, prints its postmaster pid and directory, then dies: by `abort()` (no
//! destructor runs) or by a normal exit with the cluster held in a never-dropped static (the
//! shared test database). The parent then checks that server, watchdog and files are gone.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sluice_embedded::{Cluster, ClusterOptions, process_alive, test_database};

const CHILD_ENV: &str = "SLUICE_EMBEDDED_TEST_CHILD";
const REPORT: &str = "sluice-child-report";

/// Not a test on its own: the body of the child process (does nothing unless `CHILD_ENV` says
/// how to die).
#[test]
#[ignore = "run by the other tests of this file in a child process"]
fn child_process() {
    let Ok(mode) = std::env::var(CHILD_ENV) else {
        return;
    };
    match mode.as_str() {
        "abort" => {
            let cluster = Cluster::start(ClusterOptions::temporary().tls(false).test_roles(false))
                .expect("start");
            report(&cluster);
            std::process::abort();
        }
        "static" => {
            let cluster = test_database()
                .cluster()
                .expect("embedded (DATABASE_URL removed)");
            report(cluster);
            // Return normally: the harness exits without dropping the static.
        }
        other => panic!("unknown child mode {other}"),
    }
}

fn report(cluster: &Cluster) {
    let pid = cluster.server_pid().expect("running");
    let watchdog = cluster.watchdog_pid().expect("watchdog");
    let root = cluster
        .data_dir()
        .parent()
        .expect("parent")
        .display()
        .to_string();
    println!("{REPORT} {pid} {watchdog} {root}");
}

/// Runs the child in `mode`, returns the postmaster pid, watchdog pid and cluster directory.
fn run_child(mode: &str) -> (u32, u32, PathBuf) {
    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "child_process",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, mode)
        .env_remove("DATABASE_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the child");
    let stdout = child.stdout.take().expect("stdout");
    let mut found = None;
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("read child output");
        // libtest prints "test child_process ... " without a line break before the body runs.
        if let Some((_, rest)) = line.split_once(REPORT) {
            let fields: Vec<&str> = rest.split_whitespace().collect();
            let [pid, watchdog, root] = fields[..] else {
                panic!("bad report {line}");
            };
            found = Some((
                pid.parse().expect("pid"),
                watchdog.parse().expect("pid"),
                PathBuf::from(root),
            ));
        }
    }
    let status = child.wait().expect("wait for the child");
    let found = found.unwrap_or_else(|| panic!("the child reported nothing ({status})"));
    if mode == "abort" {
        assert!(!status.success(), "the child aborted");
    }
    found
}

/// Waits (bounded) until the server and the watchdog are gone and the directory removed.
fn assert_cleaned_up(pid: u32, watchdog: u32, root: &Path) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while (process_alive(pid) || process_alive(watchdog) || root.exists())
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!process_alive(pid), "postmaster {pid} outlived its owner");
    assert!(
        !process_alive(watchdog),
        "watchdog {watchdog} did not finish"
    );
    assert!(!root.exists(), "{} was not removed", root.display());
}

#[test]
fn watchdog_stops_the_server_after_an_abort() {
    let (pid, watchdog, root) = run_child("abort");
    assert_cleaned_up(pid, watchdog, &root);
}

#[test]
fn the_shared_cluster_is_cleaned_up_when_its_process_exits() {
    let (pid, watchdog, root) = run_child("static");
    assert_cleaned_up(pid, watchdog, &root);
}
