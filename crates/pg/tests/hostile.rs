//! Bytes from a misbehaving peer: the driver errors cleanly, never panics, never allocates in
//! proportion to a length it was told but did not receive. The peer here is a raw socket that
//! speaks just enough of the protocol to get through startup, then sends garbage.
#![allow(clippy::unwrap_used)]

use sluice_pg::{Connection, ErrorKind};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

fn message(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![tag];
    m.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
    m.extend_from_slice(body);
    m
}

/// Startup answered with AuthenticationOk and ReadyForQuery; then, after the first request,
/// `reply` is sent and the socket closed.
async fn hostile_server(reply: Vec<u8>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut buf = vec![0u8; 4096];
        let _ = socket.read(&mut buf).await.unwrap(); // startup
        let mut hello = message(b'R', &[0, 0, 0, 0]);
        hello.extend(message(b'Z', b"I"));
        socket.write_all(&hello).await.unwrap();
        let _ = socket.read(&mut buf).await.unwrap(); // the query
        let _ = socket.write_all(&reply).await;
        let _ = socket.shutdown().await;
    });
    port
}

fn peak_rss_kib() -> u64 {
    sluice_embedded::testkit::proc_status_kib(std::process::id(), "VmHWM:")
}

async fn run_against(reply: Vec<u8>) -> sluice_pg::Error {
    let port = hostile_server(reply).await;
    let mut conn = Connection::connect(&format!(
        "host=127.0.0.1 port={port} user=x sslmode=disable"
    ))
    .await
    .unwrap();
    let err = conn.simple_query("SELECT 1").await.unwrap_err();
    assert!(conn.is_broken());
    err
}

#[tokio::test]
async fn huge_declared_length_does_not_allocate_it() {
    let before = peak_rss_kib();
    // A DataRow claiming ~1 GiB, followed by only a few bytes and the end of the stream.
    let mut reply = message(
        b'T',
        b"\0\x01a\0\0\0\0\0\0\0\0\0\0\x19\xff\xff\xff\xff\xff\xff\0\0",
    );
    reply.extend_from_slice(&[
        b'D', 0x3f, 0xff, 0xff, 0xf0, 0, 1, 0x3f, 0xff, 0xff, 0xe0, b'x', b'y',
    ]);
    let err = run_against(reply).await;
    assert!(err.is_closed(), "{err}");
    let grown = peak_rss_kib().saturating_sub(before);
    assert!(
        grown < 32 * 1024,
        "memory grew by {grown} KiB for a length that never arrived"
    );
}

#[tokio::test]
async fn invalid_length_is_a_protocol_error() {
    let err = run_against(vec![b'D', 0, 0, 0, 2]).await;
    assert_eq!(err.kind(), ErrorKind::Protocol, "{err}");
}

#[tokio::test]
async fn unknown_message_type_is_a_protocol_error() {
    let err = run_against(message(b'?', b"what")).await;
    assert_eq!(err.kind(), ErrorKind::Protocol, "{err}");
}

#[tokio::test]
async fn data_row_that_disagrees_with_its_description() {
    // One column described, two fields sent.
    let mut reply = message(
        b'T',
        b"\0\x01a\0\0\0\0\0\0\0\0\0\0\x19\xff\xff\xff\xff\xff\xff\0\0",
    );
    reply.extend(message(b'D', b"\0\x02\0\0\0\x01x\0\0\0\x01y"));
    let err = run_against(reply).await;
    assert_eq!(err.kind(), ErrorKind::Protocol, "{err}");
}

#[tokio::test]
async fn connection_closed_mid_response() {
    let err = run_against(message(
        b'T',
        b"\0\x01a\0\0\0\0\0\0\0\0\0\0\x19\xff\xff\xff\xff\xff\xff\0\0",
    ))
    .await;
    assert!(err.is_closed(), "{err}");
    assert!(err.to_string().contains("closed the connection"), "{err}");
}

#[tokio::test]
async fn garbage_during_startup_fails_the_connect() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut buf = vec![0u8; 4096];
        let _ = socket.read(&mut buf).await.unwrap();
        let _ = socket.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n").await;
    });
    let err = Connection::connect(&format!(
        "host=127.0.0.1 port={port} user=x sslmode=disable"
    ))
    .await
    .unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Protocol | ErrorKind::Closed),
        "{err}"
    );
}
