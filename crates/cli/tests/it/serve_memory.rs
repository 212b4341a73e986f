//! `sluice serve` as a process under four concurrent 100 MB bodies to the InfluxDB write API:
//! the server's peak resident set stays within `[http] max_inflight_bytes` plus a fixed
//! overhead, because the write API reads its body through sluice-http's budgeted reader.
//!
//! Measured on the real binary: its peak resident set (VmHWM of /proc/<pid>/status) against its
//! resident set once ready. The bodies are not line protocol (the parse fails at once), so what
//! is measured is the holding of bodies, not the writer's own work.
#![allow(clippy::unwrap_used)]

use crate::serve_support::{Running, http_address};

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

const BODY: usize = 100_000_000;
const BUDGET_MIB: usize = 128;
/// Runtime, pool, hyper's buffers, allocator slack of a debug build.
const OVERHEAD_MIB: usize = 64;

fn status_mib(pid: u32, field: &str) -> usize {
    (sluice_embedded::testkit::proc_status_kib(pid, field) >> 10) as usize
}

/// POSTs a `BODY`-byte body from a reused 1 MiB buffer; the answer.
fn send_body(addr: &str) -> String {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    write!(
        stream,
        "POST /write?db=budget HTTP/1.1\r\nhost: t\r\nconnection: close\r\n\
         content-length: {BODY}\r\n\r\n"
    )
    .unwrap();
    let chunk = vec![b'x'; 1 << 20];
    let mut sent = 0;
    while sent < BODY {
        let n = chunk.len().min(BODY - sent);
        if stream.write_all(chunk.get(..n).unwrap()).is_err() {
            break;
        }
        sent += n;
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
}

#[test]
fn concurrent_large_bodies_stay_within_max_inflight_bytes() {
    let url = sluice_embedded::test_database().url().to_string();
    let mut command = Command::new(env!("CARGO_BIN_EXE_sluice"));
    command.arg("serve");
    for (name, _) in std::env::vars() {
        if name == "DATABASE_URL" || name.starts_with("SLUICE_") {
            command.env_remove(name);
        }
    }
    let child = command
        .args(["--http", "127.0.0.1:0"])
        .env("SLUICE_LOG", "warn")
        .env("SLUICE_DATABASE_URL", &url)
        .env("SLUICE_POOL_SIZE", "2")
        .env("SLUICE_HTTP_ACCESS_LOG", "false")
        .env("SLUICE_HTTP_MAX_INFLIGHT_BYTES", format!("{BUDGET_MIB}MiB"))
        .env("SLUICE_HTTP_INFLIGHT_WAIT", "60s")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut running = Running(child);
    let addr = http_address(&mut running.0);
    let pid = running.0.id();
    let baseline = status_mib(pid, "VmRSS:");

    let senders: Vec<_> = (0..4)
        .map(|_| {
            let addr = addr.clone();
            std::thread::spawn(move || send_body(&addr))
        })
        .collect();
    for sender in senders {
        let answer = sender.join().unwrap();
        assert!(answer.starts_with("HTTP/1.1 400"), "{answer:.300}");
        assert!(answer.contains("unable to parse"), "{answer:.300}");
    }
    let peak = status_mib(pid, "VmHWM:");
    let grown = peak.saturating_sub(baseline);
    eprintln!(
        "sluice serve: peak resident set {peak} MiB, {baseline} MiB when ready: grew {grown} MiB \
         (budget {BUDGET_MIB} MiB + overhead {OVERHEAD_MIB} MiB)"
    );
    assert!(
        grown <= BUDGET_MIB + OVERHEAD_MIB,
        "four 100 MB bodies grew sluice serve by {grown} MiB, over the budget of {BUDGET_MIB} \
         MiB + {OVERHEAD_MIB} MiB"
    );
}
