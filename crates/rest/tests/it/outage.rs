//! What the REST API answers when PostgreSQL is stopped, killed under a request, refuses the
//! login, or lacks the database of the URL, on a private cluster: PostgREST's 503 codes naming
//! what failed, never the URL's password, PostgreSQL's host and port, the OS's error text or
//! the driver's and pool's internals.
#![allow(clippy::unwrap_used)]

use sluice_embedded::testkit::TestServer;
use sluice_embedded::testkit::outage::OutageCluster;
use sluice_http::{Router, ServerOptions};
use sluice_rest::api::{RestApi, SchemaSource};
use std::sync::Arc;

/// Committed with its WAL flushed: the test cluster commits asynchronously, and the crash below
/// would take a fresh table with it.
const SETUP: &str = "SET synchronous_commit = on; CREATE TABLE items (id int PRIMARY KEY); \
     INSERT INTO items VALUES (1); \
     CREATE FUNCTION slow() RETURNS int LANGUAGE sql AS 'SELECT 1 FROM pg_sleep(30)';";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outage_answers_name_the_failure_without_internals() {
    let Some(outage) =
        OutageCluster::start("rest_outage", "rest_outage", "Rest-Outage-Secret-91c2").await
    else {
        return;
    };
    let primary_url = outage.own_url();
    let (config, cache) = crate::common::set_up_schema(&primary_url, SETUP).await;
    let mut router = Router::new();
    router.mount(
        "/missing",
        Arc::new(RestApi::new(
            outage.pool("rest_outage_no_such_db"),
            config.clone(),
            SchemaSource::Fixed(cache.clone()),
        )),
    );
    router.mount(
        "",
        Arc::new(RestApi::new(
            outage.pool("rest_outage"),
            config,
            SchemaSource::Fixed(cache),
        )),
    );
    let server = TestServer::start(router, ServerOptions::default()).await;
    let ok = |status: u16, _: &str| status == 200;
    outage
        .send_until(&server, "GET", "/items", "before", ok)
        .await;

    // The database of the URL does not exist.
    let (status, body) = outage
        .send_until(&server, "GET", "/missing/items", "no database", |s, _| {
            s != 200
        })
        .await;
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("PGRST000"), "{body}");
    assert!(
        body.contains("3D000"),
        "the SQLSTATE says what failed: {body}"
    );

    // Killed under a request: the backend serving it dies (the server restarts itself).
    let slow = {
        let addr = server.addr;
        tokio::spawn(async move {
            sluice_embedded::testkit::request(
                addr,
                "POST",
                "/rpc/slow",
                &[("content-type", "application/json")],
                "{}",
            )
            .await
        })
    };
    outage.kill_backend_running("\"slow\"(").await;
    let answer = slow.await.unwrap();
    assert_eq!(answer.status, 503, "{}", answer.body);
    outage.assert_no_internals("killed under a request", &answer.body);
    outage
        .send_until(&server, "GET", "/items", "after the crash", ok)
        .await;

    // Stopped: requests on pooled connections may first find them lost (PGRST001), then none
    // can be had.
    outage.cluster.stop_server().unwrap();
    for (method, path) in [("GET", "/items"), ("POST", "/rpc/slow")] {
        let (status, body) = outage
            .send_until(&server, method, path, "stopped", |s, b| {
                s != 200 && b.contains("PGRST000")
            })
            .await;
        assert_eq!(status, 503, "{method} {path}: {body}");
        assert!(body.contains("PostgreSQL could not be reached"), "{body}");
    }

    // Back, but the role's password is no longer the URL's.
    outage.cluster.start_server().unwrap();
    outage
        .send_until(&server, "GET", "/items", "restarted", ok)
        .await;
    outage.refuse_logins().await;
    let (status, _) = outage
        .send_until(&server, "GET", "/items", "password refused", |_, b| {
            b.contains("28P01")
        })
        .await;
    assert_eq!(status, 503);
}
