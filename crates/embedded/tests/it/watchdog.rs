//! Integration tests: no server or file outlives the process that started the cluster.
//!
//! Each test re-executes this test binary to run `child_process` in a separate process, which
//! starts a cluster, prints its postmaster pid and directory, then dies: by `abort()` (no
//! destructor runs) or by a normal exit with the cluster held in a never-dropped static (the
//! shared test database). The parent then checks that server, watchdog and files are gone.

use crate::common;

use std::io::{BufRead as _, BufReader};
use std::path::PathBuf;
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
    let parent = |dir: &std::path::Path| dir.parent().expect("parent").display().to_string();
    let root = parent(cluster.data_dir());
    let templates = sluice_embedded::template_dirs();
    let [template] = &templates[..] else {
        panic!("expected one template, got {templates:?}");
    };
    let template = parent(template);
    println!("{REPORT} {pid} {watchdog} {root} {template}");
}

/// What a child reported: postmaster pid, watchdog pid, cluster directory, template directory.
type Report = (u32, u32, PathBuf, PathBuf);

/// Runs the child in `mode`, returns what it reported.
fn run_child(mode: &str) -> Report {
    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "watchdog::child_process",
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
            let [pid, watchdog, root, template] = fields[..] else {
                panic!("bad report {line}");
            };
            found = Some((
                pid.parse().expect("pid"),
                watchdog.parse().expect("pid"),
                PathBuf::from(root),
                PathBuf::from(template),
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

/// Waits (bounded) until the server and the watchdog are gone and the directories removed.
fn assert_cleaned_up((pid, watchdog, root, template): Report) {
    let leftovers =
        || process_alive(pid) || process_alive(watchdog) || root.exists() || template.exists();
    let deadline = Instant::now() + Duration::from_secs(30);
    while leftovers() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!process_alive(pid), "postmaster {pid} outlived its owner");
    assert!(
        !process_alive(watchdog),
        "watchdog {watchdog} did not finish"
    );
    assert!(!root.exists(), "{} was not removed", root.display());
    assert!(
        !template.exists(),
        "template {} was not removed",
        template.display()
    );
}

#[test]
fn watchdog_stops_the_server_after_an_abort() {
    if !common::can_start_clusters("watchdog_stops_the_server_after_an_abort") {
        return;
    }
    assert_cleaned_up(run_child("abort"));
}

#[test]
fn the_shared_cluster_is_cleaned_up_when_its_process_exits() {
    if !common::can_start_clusters("the_shared_cluster_is_cleaned_up_when_its_process_exits") {
        return;
    }
    assert_cleaned_up(run_child("static"));
}
