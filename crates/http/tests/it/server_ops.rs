//! The server's operations endpoints, unmatched paths and the body limit, over real HTTP.
#![allow(clippy::unwrap_used)]

use crate::server_support;

use server_support::{Client, Echo, Server, bounded, get};
use sluice_http::{Router, ServerOptions};
use sluice_pg::pool::{Pool, PoolSettings};
use std::sync::Arc;
use std::time::Duration;

fn pool(url: &str) -> Pool {
    let mut settings = PoolSettings::default();
    settings
        .set_max_size(2)
        .set_acquire_timeout(Duration::from_secs(2));
    Pool::connect(url, settings).unwrap()
}

/// Polls `/-/metrics` until it holds `line` (the record is taken when a response body ends,
/// which may be a moment after the client has read it).
async fn metrics_with(client: &mut Client, line: &str) -> String {
    for _ in 0..200 {
        let answer = client.send("GET", "/-/metrics", b"").await;
        assert_eq!(answer.status, 200);
        if answer.body.contains(line) {
            return answer.body;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("/-/metrics never showed {line}");
}

#[tokio::test]
async fn live_ready_and_metrics_with_a_database() {
    let db = sluice_embedded::test_database();
    let mut router = Router::new();
    router.database(pool(db.url()));
    router.mount("/echo", Arc::new(Echo));
    let mut server = Server::start(router, ServerOptions::default()).await;

    let live = bounded(get(server.addr, "/-/live")).await;
    assert_eq!(live.status, 200);
    let ready = bounded(get(server.addr, "/-/ready")).await;
    assert_eq!(ready.status, 200, "{}", ready.body);
    let mut client = Client::connect(server.addr).await;
    assert_eq!(
        bounded(client.send("POST", "/echo/x", b"hello")).await.body,
        "5 bytes"
    );

    let text = bounded(metrics_with(
        &mut client,
        "sluice_http_requests_total{route=\"/echo\",status=\"200\"} 1\n",
    ))
    .await;
    assert!(text.contains("# TYPE sluice_http_request_duration_seconds histogram"));
    assert!(text.contains("sluice_http_request_duration_seconds_count{route=\"/echo\"} 1\n"));
    assert!(text.contains("sluice_http_requests_total{route=\"/-\",status=\"200\"}"));
    assert!(text.contains("sluice_pool_max_connections 2\n"), "{text}");
    assert!(
        text.contains("sluice_pool_connections_created_total 1\n"),
        "{text}"
    );
    server.stop();
    bounded(server.task).await.unwrap().unwrap();
}

#[tokio::test]
async fn ready_is_503_with_retry_after_when_the_database_is_unreachable() {
    // Port 1 on the loopback refuses connections.
    let mut router = Router::new();
    router.database(pool(
        "postgres://postgres@127.0.0.1:1/postgres?sslmode=disable",
    ));
    let mut server = Server::start(router, ServerOptions::default()).await;
    let ready = bounded(get(server.addr, "/-/ready")).await;
    assert_eq!(ready.status, 503);
    assert_eq!(ready.headers.get("retry-after").unwrap(), "1");
    let error: serde_json::Value = serde_json::from_str(&ready.body).unwrap();
    assert_eq!(error["code"], "not_ready");
    assert_eq!(bounded(get(server.addr, "/-/live")).await.status, 200);
    server.stop();
    bounded(server.task).await.unwrap().unwrap();
}

#[tokio::test]
async fn unmatched_paths_are_404_with_a_json_error() {
    let mut router = Router::new();
    router.mount("/echo", Arc::new(Echo));
    let mut server = Server::start(router, ServerOptions::default()).await;
    for path in ["/", "/echox", "/films/1", "/-/nothing"] {
        let answer = bounded(get(server.addr, path)).await;
        assert_eq!(answer.status, 404, "{path}");
        let error: serde_json::Value = serde_json::from_str(&answer.body).unwrap();
        assert_eq!(error["code"], "not_found", "{path}");
        assert!(error["message"].is_string());
    }
    let ready = bounded(get(server.addr, "/-/ready")).await;
    assert_eq!(ready.status, 200, "no database: nothing to wait for");
    let mut client = Client::connect(server.addr).await;
    bounded(metrics_with(
        &mut client,
        "sluice_http_requests_total{route=\"unmatched\",status=\"404\"} 3\n",
    ))
    .await;
    server.stop();
    bounded(server.task).await.unwrap().unwrap();
}

#[tokio::test]
async fn bodies_over_the_limit_are_413() {
    let mut router = Router::new();
    router.mount("/echo", Arc::new(Echo));
    let options = ServerOptions {
        body_limit: 16,
        ..ServerOptions::default()
    };
    let mut server = Server::start(router, options).await;
    let mut client = Client::connect(server.addr).await;
    let fits = bounded(client.send("PUT", "/echo", &[b'x'; 16])).await;
    assert_eq!((fits.status, fits.body.as_str()), (200, "16 bytes"));
    // Declared too large: the mount's read refuses it before reading (in the mount's own error
    // shape; here Echo's plain text).
    let declared = bounded(client.send("PUT", "/echo", &[b'x'; 100])).await;
    assert_eq!(declared.status, 413);
    assert!(
        declared.body.contains("limit of 16 bytes"),
        "{}",
        declared.body
    );

    // Chunked (no Content-Length): the mount's read stops at the limit.
    let mut raw = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    raw.write_all(
        b"PUT /echo HTTP/1.1\r\nhost: t\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n\
          10\r\nxxxxxxxxxxxxxxxx\r\n10\r\nxxxxxxxxxxxxxxxx\r\n0\r\n\r\n",
    )
    .await
    .unwrap();
    let mut answer = Vec::new();
    bounded(raw.read_to_end(&mut answer)).await.unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    server.stop();
    bounded(server.task).await.unwrap().unwrap();
}
