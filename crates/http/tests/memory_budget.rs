//! The budget on request-body memory in flight: four concurrent 100 MB bodies, each read whole
//! by its mount, keep the process's peak resident memory within the budget plus a fixed
//! overhead; past the wait for room a body is answered 503 with `Retry-After`.
//!
//! How the memory is measured: this file holds one test, so the test binary is its own process
//! and runs nothing else; the server runs in it, and the clients send their bodies from one
//! reused 1 MiB buffer each (the kernel holds what is in flight on the sockets, not the
//! process). The peak resident set (VmHWM of /proc/self/status) is reset just before the
//! bodies are sent (`echo 5 > /proc/self/clear_refs`), so it is the peak of the server's work
//! plus the clients' four buffers, the runtime and the allocator's slack: the stated overhead.
#![allow(clippy::unwrap_used)]

#[path = "it/server_support/mod.rs"]
mod server_support;

use server_support::{Hold, Server, bounded};
use sluice_embedded::testkit;
use sluice_http::{Router, ServerOptions};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const BODY: usize = 100_000_000;
const BUDGET: usize = 128 << 20;
/// Runtime, hyper's buffers, the clients' 4 MiB, allocator slack.
const OVERHEAD: usize = 48 << 20;

/// Sends a `BODY`-byte PUT from a reused 1 MiB buffer; the answer's head and body.
async fn send_body(addr: SocketAddr) -> String {
    let mut raw = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "PUT /hold HTTP/1.1\r\nhost: t\r\nconnection: close\r\ncontent-length: {BODY}\r\n\r\n"
    );
    raw.write_all(head.as_bytes()).await.unwrap();
    let chunk = vec![b'x'; 1 << 20];
    let mut sent = 0;
    while sent < BODY {
        let n = chunk.len().min(BODY - sent);
        if raw.write_all(chunk.get(..n).unwrap()).await.is_err() {
            break; // Answered (503) before the end.
        }
        sent += n;
    }
    let mut answer = Vec::new();
    let _ = raw.read_to_end(&mut answer).await;
    String::from_utf8_lossy(&answer).into_owned()
}

fn status_kib(field: &str) -> usize {
    testkit::proc_status_kib(std::process::id(), field) as usize
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_large_bodies_stay_within_the_memory_budget() {
    if std::fs::write("/proc/self/clear_refs", "5").is_err() {
        eprintln!("skipping: cannot reset the peak resident set (/proc/self/clear_refs)");
        return;
    }
    let mut router = Router::new();
    router.mount("/hold", Arc::new(Hold(Duration::from_millis(300))));
    let options = ServerOptions {
        max_inflight_bytes: BUDGET,
        inflight_wait: Duration::from_secs(60),
        ..ServerOptions::default()
    };
    let mut server = Server::start(router, options).await;
    let addr = server.addr;
    let baseline = status_kib("VmRSS:") << 10;
    testkit::reset_peak_rss();

    let senders: Vec<_> = (0..4).map(|_| tokio::spawn(send_body(addr))).collect();
    for sender in senders {
        let answer = tokio::time::timeout(Duration::from_secs(120), sender)
            .await
            .expect("a body took over two minutes")
            .unwrap();
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer:.200}");
        assert!(answer.ends_with(&format!("{BODY} bytes")), "{answer:.200}");
    }
    let peak = status_kib("VmHWM:") << 10;
    let grown = peak.saturating_sub(baseline);
    eprintln!(
        "peak resident set {} MiB over a baseline of {} MiB: grew {} MiB (budget {} MiB + \
         overhead {} MiB)",
        peak >> 20,
        baseline >> 20,
        grown >> 20,
        BUDGET >> 20,
        OVERHEAD >> 20
    );
    assert!(
        grown <= BUDGET + OVERHEAD,
        "four 100 MB bodies grew the resident set by {} MiB, over the budget of {} MiB + {} MiB",
        grown >> 20,
        BUDGET >> 20,
        OVERHEAD >> 20
    );

    // A short wait: while one body holds most of the budget, another is answered 503 with
    // Retry-After instead of waiting on.
    server.stop();
    bounded(server.task).await.unwrap().unwrap();
    let mut router = Router::new();
    router.mount("/hold", Arc::new(Hold(Duration::from_millis(300))));
    let options = ServerOptions {
        max_inflight_bytes: BUDGET,
        inflight_wait: Duration::from_millis(200),
        ..ServerOptions::default()
    };
    let mut server = Server::start(router, options).await;
    let addr = server.addr;
    let answers = futures_join(send_body(addr), send_body(addr)).await;
    let busy: Vec<&String> = answers
        .iter()
        .filter(|a| a.starts_with("HTTP/1.1 503"))
        .collect();
    assert_eq!(busy.len(), 1, "{:.200} / {:.200}", answers[0], answers[1]);
    assert!(
        busy[0].to_ascii_lowercase().contains("retry-after: 1"),
        "{:.300}",
        busy[0]
    );
    assert!(busy[0].contains("budget of"), "{:.300}", busy[0]);
    server.stop();
    bounded(server.task).await.unwrap().unwrap();
}

async fn futures_join(
    a: impl Future<Output = String>,
    b: impl Future<Output = String>,
) -> [String; 2] {
    let (a, b) = tokio::join!(a, b);
    [a, b]
}
