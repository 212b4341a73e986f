//! The server's limits over real connections: slow headers, the connection cap, graceful
//! shutdown with a request in flight.
#![allow(clippy::unwrap_used)]

mod server_support;

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
async fn connections_beyond_the_cap_wait_until_one_closes() {
    let mut router = Router::new();
    router.mount("/echo", Arc::new(Echo));
    let options = ServerOptions {
        max_connections: 1,
        ..ServerOptions::default()
    };
    let mut server = Server::start(router, options).await;
    let mut first = Client::connect(server.addr).await;
    assert_eq!(bounded(first.send("GET", "/-/live", b"")).await.status, 200);

    // The second connection is taken by the kernel's backlog but not served while the first
    // one is open.
    let mut second = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    second
        .write_all(b"GET /-/live HTTP/1.1\r\nhost: t\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut byte = [0u8; 1];
    let early = tokio::time::timeout(Duration::from_millis(300), second.read(&mut byte)).await;
    assert!(early.is_err(), "a connection beyond the cap was served");

    first.task.abort();
    drop(first);
    let mut answer = Vec::new();
    bounded(second.read_to_end(&mut answer)).await.unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
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
