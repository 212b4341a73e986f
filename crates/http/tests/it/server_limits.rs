//! The server's limits over real connections: slow heads and bodies (chunk timeout, minimum
//! rate, request timeout), idle keep-alive, the connection cap and its eviction of connections
//! that make no progress (the slow-body attack), graceful shutdown with a request in flight.
#![allow(clippy::unwrap_used)]

use crate::server_support;

use server_support::{Client, Echo, Server, Slow, bounded, get};
use sluice_http::{Router, ServerOptions};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test]
async fn a_slow_request_head_gets_the_connection_closed() {
    let mut router = Router::new();
    router.mount("/echo", Arc::new(Echo));
    let options = ServerOptions {
        header_timeout: Duration::from_millis(200),
        ..ServerOptions::default()
    };
    let mut server = Server::start(router, options).await;
    let mut raw = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    // Half a head, then nothing: the server must give up and close.
    raw.write_all(b"GET /echo HTTP/1.1\r\nhost: t\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    let _ = bounded(raw.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(!answer.contains("200 OK"), "{answer}");
    // The server still serves others.
    assert_eq!(bounded(get(server.addr, "/-/live")).await.status, 200);
    server.stop();
    bounded(server.task).await.unwrap().unwrap();
}

#[tokio::test]
async fn connections_beyond_the_cap_wait_while_every_slot_is_busy() {
    let (started, mut has_started) = tokio::sync::mpsc::unbounded_channel();
    let mut router = Router::new();
    router.mount(
        "/slow",
        Arc::new(Slow {
            started,
            delay: Duration::from_millis(800),
        }),
    );
    let options = ServerOptions {
        max_connections: 1,
        ..ServerOptions::default()
    };
    let mut server = Server::start(router, options).await;
    let addr = server.addr;
    let busy = tokio::spawn(async move { get(addr, "/slow").await });
    bounded(has_started.recv()).await.unwrap();

    // The only slot is busy answering: a second connection is not served meanwhile.
    let mut second = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    second
        .write_all(b"GET /-/live HTTP/1.1\r\nhost: t\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut byte = [0u8; 1];
    let early = tokio::time::timeout(Duration::from_millis(400), second.read(&mut byte)).await;
    assert!(early.is_err(), "a connection beyond the cap was served");

    assert_eq!(bounded(busy).await.unwrap().status, 200);
    let mut answer = Vec::new();
    bounded(second.read_to_end(&mut answer)).await.unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    server.stop();
    bounded(server.task).await.unwrap().unwrap();
}

#[tokio::test]
async fn at_the_cap_an_idle_connection_gives_its_slot_to_a_new_one() {
    let options = ServerOptions {
        max_connections: 1,
        ..ServerOptions::default()
    };
    let mut server = Server::start(Router::new(), options).await;
    let mut idle = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    idle.write_all(b"GET /-/live HTTP/1.1\r\nhost: t\r\n\r\n")
        .await
        .unwrap();
    let mut answer = vec![0u8; 1024];
    let n = bounded(idle.read(&mut answer)).await.unwrap();
    assert!(answer.get(..n).unwrap().starts_with(b"HTTP/1.1 200"));

    // Kept alive and idle, it holds the only slot until a new connection needs it.
    let fresh = bounded(get(server.addr, "/-/live")).await;
    assert_eq!(fresh.status, 200);
    let mut rest = Vec::new();
    bounded(idle.read_to_end(&mut rest)).await.unwrap();
    assert!(
        rest.is_empty(),
        "the idle connection was closed without an answer"
    );
    server.stop();
    bounded(server.task).await.unwrap().unwrap();
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed_after_the_keep_alive_timeout() {
    let options = ServerOptions {
        keep_alive_timeout: Duration::from_millis(300),
        ..ServerOptions::default()
    };
    let mut server = Server::start(Router::new(), options).await;
    let mut raw = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    raw.write_all(b"GET /-/live HTTP/1.1\r\nhost: t\r\n\r\n")
        .await
        .unwrap();
    let mut answer = vec![0u8; 1024];
    let n = bounded(raw.read(&mut answer)).await.unwrap();
    assert!(answer.get(..n).unwrap().starts_with(b"HTTP/1.1 200"));
    let mut rest = Vec::new();
    bounded(raw.read_to_end(&mut rest)).await.unwrap();
    assert!(rest.is_empty());
    server.stop();
    bounded(server.task).await.unwrap().unwrap();
}

/// Sends a request head promising `length` bytes, then one byte every `every`, until the
/// server answers or closes; the answer.
async fn trickle(addr: std::net::SocketAddr, length: usize, every: Duration) -> String {
    let mut raw = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!("PUT /echo HTTP/1.1\r\nhost: t\r\ncontent-length: {length}\r\n\r\n");
    raw.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0u8; 2048];
    for _ in 0..length {
        tokio::select! {
            read = raw.read(&mut answer) => {
                let n = read.unwrap_or(0);
                return String::from_utf8_lossy(answer.get(..n).unwrap_or_default()).into_owned();
            }
            () = tokio::time::sleep(every) => {}
        }
        if raw.write_all(b"x").await.is_err() {
            break;
        }
    }
    let n = raw.read(&mut answer).await.unwrap_or(0);
    String::from_utf8_lossy(answer.get(..n).unwrap_or_default()).into_owned()
}

#[tokio::test]
async fn a_body_under_the_minimum_rate_is_answered_408_after_the_grace() {
    let mut router = Router::new();
    router.mount("/echo", Arc::new(Echo));
    let options = ServerOptions {
        min_body_rate: 100,
        min_body_rate_grace: Duration::from_millis(500),
        ..ServerOptions::default()
    };
    let mut server = Server::start(router, options).await;
    // Ten bytes a second, with a chunk timeout of 30 s that never runs out.
    let answer = bounded(trickle(server.addr, 1000, Duration::from_millis(100))).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(
        answer.contains("under the minimum of 100 bytes/s"),
        "{answer}"
    );
    // A body at speed is untouched by the rule.
    let mut client = Client::connect(server.addr).await;
    let fast = bounded(client.send("PUT", "/echo", &[b'x'; 100_000])).await;
    assert_eq!((fast.status, fast.body.as_str()), (200, "100000 bytes"));
    server.stop();
    bounded(server.task).await.unwrap().unwrap();
}

#[tokio::test]
async fn a_body_not_read_whole_within_the_request_timeout_is_answered_408() {
    let mut router = Router::new();
    router.mount("/echo", Arc::new(Echo));
    let options = ServerOptions {
        min_body_rate: 0,
        request_timeout: Duration::from_millis(600),
        ..ServerOptions::default()
    };
    let mut server = Server::start(router, options).await;
    let answer = bounded(trickle(server.addr, 1000, Duration::from_millis(20))).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("request timeout"), "{answer}");
    server.stop();
    bounded(server.task).await.unwrap().unwrap();
}

#[tokio::test]
async fn slow_bodies_on_every_slot_do_not_lock_out_fast_clients() {
    // The attack of issue 22 scaled down: 48 connections for 16 slots, each sending its body
    // one byte every 200 ms and coming back when dropped, for 4 s. The per-chunk body timeout
    // (30 s) never runs out; the minimum rate (50 B/s after 500 ms) and the cap's eviction of
    // slow connections must keep the server answering others within a second throughout.
    let mut router = Router::new();
    router.mount("/echo", Arc::new(Echo));
    let options = ServerOptions {
        max_connections: 16,
        min_body_rate: 50,
        min_body_rate_grace: Duration::from_millis(500),
        ..ServerOptions::default()
    };
    let mut server = Server::start(router, options).await;
    let addr = server.addr;
    let until = tokio::time::Instant::now() + Duration::from_secs(4);
    let attackers: Vec<_> = (0..48)
        .map(|_| {
            tokio::spawn(async move {
                let mut dropped = 0u32;
                while tokio::time::Instant::now() < until {
                    let answer = trickle(addr, 100_000, Duration::from_millis(200)).await;
                    assert!(!answer.contains("200 OK"), "{answer}");
                    dropped += 1;
                }
                dropped
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut probes = 0;
    let mut slowest = Duration::ZERO;
    while tokio::time::Instant::now() < until {
        for path in ["/-/live", "/-/ready"] {
            let started = std::time::Instant::now();
            let answer = tokio::time::timeout(Duration::from_secs(1), get(addr, path))
                .await
                .unwrap_or_else(|_| panic!("{path} took over a second under the attack"));
            assert_eq!(answer.status, 200, "{path}");
            slowest = slowest.max(started.elapsed());
        }
        let write = tokio::time::timeout(Duration::from_secs(1), async {
            Client::connect(addr)
                .await
                .send("PUT", "/echo", b"fast body")
                .await
        })
        .await
        .expect("a fast write took over a second under the attack");
        assert_eq!((write.status, write.body.as_str()), (200, "9 bytes"));
        probes += 1;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    eprintln!("{probes} probe rounds, the slowest answer took {slowest:?}");
    assert!(probes >= 5, "{probes} probe rounds");
    let mut dropped = 0;
    for attacker in attackers {
        dropped += bounded(attacker).await.unwrap();
    }
    assert!(
        dropped >= 48,
        "the slow connections were dropped ({dropped})"
    );
    let metrics = bounded(get(addr, "/-/metrics")).await.body;
    let evicted: u64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("sluice_http_connections_evicted_total "))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no eviction counter in {metrics}"));
    assert!(evicted > 0, "{metrics}");
    assert!(
        metrics.contains("\nsluice_http_inflight_body_budget_bytes 268435456\n"),
        "{metrics}"
    );
    server.stop();
    bounded(server.task).await.unwrap().unwrap();
}

#[tokio::test]
async fn shutdown_finishes_the_request_in_flight_and_closes_the_listener() {
    let (started, mut has_started) = tokio::sync::mpsc::unbounded_channel();
    let mut router = Router::new();
    router.mount(
        "/slow",
        Arc::new(Slow {
            started,
            delay: Duration::from_millis(300),
        }),
    );
    let mut server = Server::start(router, ServerOptions::default()).await;
    let addr = server.addr;
    let in_flight = tokio::spawn(async move { get(addr, "/slow").await });
    bounded(has_started.recv()).await.unwrap();
    server.stop();
    let answer = bounded(in_flight).await.unwrap();
    assert_eq!((answer.status, answer.body.as_str()), (200, "done"));
    bounded(server.task).await.unwrap().unwrap();
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "the listener is still open after shutdown"
    );
}

#[tokio::test]
async fn a_slow_request_body_is_answered_408() {
    let mut router = Router::new();
    router.mount("/echo", Arc::new(Echo));
    let options = ServerOptions {
        body_timeout: Duration::from_millis(200),
        ..ServerOptions::default()
    };
    let mut server = Server::start(router, options).await;
    let mut raw = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    // Ten bytes promised, two sent, then silence.
    raw.write_all(b"PUT /echo HTTP/1.1\r\nhost: t\r\ncontent-length: 10\r\n\r\nab")
        .await
        .unwrap();
    let mut answer = vec![0u8; 1024];
    let n = bounded(raw.read(&mut answer)).await.unwrap();
    let answer = String::from_utf8_lossy(answer.get(..n).unwrap());
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    server.stop();
    bounded(server.task).await.unwrap().unwrap();
}

#[tokio::test]
async fn without_keep_alive_each_connection_serves_one_request() {
    let options = ServerOptions {
        keep_alive: false,
        ..ServerOptions::default()
    };
    let mut server = Server::start(Router::new(), options).await;
    let mut raw = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    raw.write_all(
        b"GET /-/live HTTP/1.1\r\nhost: t\r\n\r\nGET /-/live HTTP/1.1\r\nhost: t\r\n\r\n",
    )
    .await
    .unwrap();
    let mut answer = Vec::new();
    bounded(raw.read_to_end(&mut answer)).await.unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert_eq!(answer.matches("HTTP/1.1 200").count(), 1, "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("connection: close"),
        "{answer}"
    );
    server.stop();
    bounded(server.task).await.unwrap().unwrap();
}
