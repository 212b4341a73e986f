//! Streamed GETs: results larger than a chunk arrive whole and in order; an error after the
//! first chunk cuts the response short instead of ending it as if complete.

use bytes::Bytes;
use http_body_util::Empty;
use sluice_embedded::testkit::{self, TestServer};
use sluice_http::view::{ViewMount, load_slice};
use sluice_http::{Router, ServerOptions};
use sluice_pg::{Pool, PoolSettings};
use std::sync::Arc;

const VIEW: &str = r#"{"sql": [
    {"path": ["/series", 1], "GET": "SELECT g AS n, md5(g::text) AS hash FROM generate_series(1, $1::integer) g"},
    {"path": ["/failing"], "GET": "SELECT g AS n, repeat('x', 100) AS pad, 1 / (g - 150000) AS boom FROM generate_series(1, 200000) g"}
]}"#;

async fn serve() -> TestServer {
    let pool = Pool::connect(testkit::url(), PoolSettings::default()).expect("a pool");
    let view = load_slice("stream.json", VIEW.as_bytes()).expect("the view loads");
    let mut router = Router::new();
    router.mount("/s", Arc::new(ViewMount::new(view, pool)));
    TestServer::start(router, ServerOptions::default()).await
}

async fn get(
    address: std::net::SocketAddr,
    path: &str,
    accept: &str,
) -> (u16, Result<Bytes, hyper::Error>) {
    let headers = [("accept", accept)];
    let (head, body) =
        testkit::exchange(address, "GET", path, &headers, Empty::<Bytes>::new()).await;
    (head.status.as_u16(), body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_chunks_arrive_whole_and_in_order() {
    let server = serve().await;
    let address = server.addr;
    let (status, body) = get(address, "/s/series/100000", "text/csv").await;
    assert_eq!(status, 200);
    let body = body.expect("the whole body");
    assert!(body.len() > 4 * 64 * 1024, "several chunks: {}", body.len());
    let text = std::str::from_utf8(&body).expect("UTF-8");
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("n,hash"));
    let mut expected = 1;
    for line in lines {
        let (n, hash) = line.split_once(',').expect("two fields");
        assert_eq!(n.parse::<u32>().expect("a number"), expected);
        assert_eq!(hash.len(), 32);
        expected += 1;
    }
    assert_eq!(expected, 100_001);

    let (status, body) = get(address, "/s/series/30000", "application/json").await;
    assert_eq!(status, 200);
    let rows: serde_json::Value =
        serde_json::from_slice(&body.expect("the whole body")).expect("one JSON array");
    assert_eq!(rows.as_array().map(Vec::len), Some(30000));
    assert_eq!(rows[29999]["n"], serde_json::json!(30000));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_after_the_first_chunk_cuts_the_response_short() {
    let server = serve().await;
    let address = server.addr;
    let (status, body) = get(address, "/s/failing", "application/csj").await;
    // The status went out with the first chunk; the failure can only show as a broken body.
    assert_eq!(status, 200);
    assert!(body.is_err(), "the body must not look complete");

    // The server goes on serving.
    let (status, body) = get(address, "/s/series/3", "application/csj").await;
    assert_eq!(status, 200);
    assert_eq!(
        body.expect("body"),
        Bytes::from_static(
            b"\"n\",\"hash\"\n1,\"c4ca4238a0b923820dcc509a6f75849b\"\n2,\"c81e728d9d4c2f636f067f89cc14862c\"\n3,\"eccbc87e4b5ce2fe28308fd9f2a7baf3\"\n"
        )
    );
}
