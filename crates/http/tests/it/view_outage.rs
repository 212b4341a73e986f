//! What a view mount and `/-/ready` answer when PostgreSQL is stopped, killed under a request,
//! refuses the login, or lacks the database of the URL, on a private cluster: a 503 naming what
//! failed, never the URL's password, PostgreSQL's host and port, the OS's error text or the
//! pool's internals.
#![allow(clippy::unwrap_used)]

use sluice_embedded::testkit::TestServer;
use sluice_embedded::testkit::outage::OutageCluster;
use sluice_http::view::{ViewMount, load_slice};
use sluice_http::{Router, ServerOptions};
use std::sync::Arc;

const VIEW: &str = r#"{"sql": [
    {"path": ["/items"], "GET": "SELECT 1 AS one"},
    {"path": ["/slow"], "GET": "SELECT 1 AS one FROM pg_sleep(30)"}
]}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outage_answers_name_the_failure_without_internals() {
    let Some(outage) =
        OutageCluster::start("view_outage", "view_outage", "Outage-Secret-7f3a").await
    else {
        return;
    };
    let primary = outage.pool("view_outage");
    let missing = outage.pool("outage_no_such_db");
    let view = load_slice("outage.json", VIEW.as_bytes()).unwrap();
    let mut router = Router::new();
    router.database(primary.clone());
    router.mount(
        "/v",
        Arc::new(ViewMount::new(view.clone(), primary.clone())),
    );
    router.mount("/missing", Arc::new(ViewMount::new(view, missing)));
    let server = TestServer::start(router, ServerOptions::default()).await;
    let ok = |status: u16, _: &str| status == 200;
    outage
        .send_until(&server, "GET", "/v/items", "before", ok)
        .await;

    // The database of the URL does not exist.
    let (status, body) = outage
        .send_until(&server, "GET", "/missing/items", "no database", |s, _| {
            s != 200
        })
        .await;
    assert_eq!(status, 503, "{body}");
    assert!(
        body.contains("3D000"),
        "the SQLSTATE says what failed: {body}"
    );

    // Killed under a request: the backend serving it dies (the server restarts itself).
    let slow = {
        let addr = server.addr;
        tokio::spawn(async move {
            sluice_embedded::testkit::request(addr, "GET", "/v/slow", &[], "").await
        })
    };
    outage.kill_backend_running("pg_sleep(30)").await;
    let answer = slow.await.unwrap();
    assert_eq!(answer.status, 503, "{}", answer.body);
    outage.assert_no_internals("killed under a request", &answer.body);
    outage
        .send_until(&server, "GET", "/v/items", "after the crash", ok)
        .await;

    // Stopped: a pooled connection first answers the server's 57P01, then none can be had.
    outage.cluster.stop_server().unwrap();
    let (status, body) = outage
        .send_until(&server, "GET", "/v/items", "stopped", |s, b| {
            s != 200 && !b.contains("57P01")
        })
        .await;
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("database_unavailable"), "{body}");
    assert!(body.contains("PostgreSQL could not be reached"), "{body}");
    let ready = server.send("GET", "/-/ready", &[], "").await;
    assert_eq!(ready.status, 503, "{}", ready.body);
    outage.assert_no_internals("/-/ready, stopped", &ready.body);

    // Back, but the role's password is no longer the URL's.
    outage.cluster.start_server().unwrap();
    outage
        .send_until(&server, "GET", "/v/items", "restarted", ok)
        .await;
    outage.refuse_logins().await;
    let (status, body) = outage
        .send_until(&server, "GET", "/v/items", "password refused", |_, b| {
            b.contains("28P01")
        })
        .await;
    assert_eq!(status, 503, "{body}");
    let ready = server.send("GET", "/-/ready", &[], "").await;
    assert_eq!(ready.status, 503, "{}", ready.body);
    assert!(ready.body.contains("28P01"), "{}", ready.body);
    outage.assert_no_internals("/-/ready, password refused", &ready.body);
}
