//! What the write API and `/health` answer when PostgreSQL is stopped, refuses the login or
//! lacks the database of the URL, on a private cluster: InfluxDB's `{"code", "message"}` with a
//! 503 naming what failed, never the URL's password, PostgreSQL's host and port, the OS's error
//! text or the pool's internals.
#![allow(clippy::unwrap_used)]

use crate::common::{Server, start_with};
use sluice_embedded::testkit::outage::{OutageCluster, within_20_seconds};
use sluice_http::ServerOptions;
use sluice_influx::InfluxConfig;

/// Every answer of a database that cannot serve: the write endpoints and `/health`, 503 each,
/// the body checked for what it must not show and for `must_name`.
async fn check_unavailable(outage: &OutageCluster, server: &Server, what: &str, must_name: &str) {
    for (path, key) in [
        ("/api/v2/write?bucket=outage", "message"),
        ("/write?db=outage", "error"),
    ] {
        let answer = server.post(path, "cpu v=1\n").await;
        assert_eq!(answer.status, 503, "{what}, {path}: {}", answer.body);
        let body = answer.json();
        assert_eq!(
            body["code"], "unavailable",
            "{what}, {path}: {}",
            answer.body
        );
        let message = body[key].as_str().unwrap_or_default();
        assert!(message.contains(must_name), "{what}, {path}: {message}");
        assert!(
            !message.contains("database unavailable: database unavailable"),
            "{what}, {path}: {message}"
        );
        let header = answer
            .headers
            .get("x-influxdb-error")
            .map(|v| v.to_str().unwrap_or_default().to_owned())
            .unwrap_or_default();
        outage.assert_no_internals(&format!("{what}, {path}"), &answer.body);
        outage.assert_no_internals(&format!("{what}, {path}, X-Influxdb-Error"), &header);
    }
    let health = server.send("GET", "/health", &[], "").await;
    assert_eq!(health.status, 503, "{what}, /health: {}", health.body);
    assert_eq!(health.json()["status"], "fail");
    outage.assert_no_internals(&format!("{what}, /health"), &health.body);
}

/// Writes until one is answered 204 (the pool may first hand out a connection the server
/// closed).
async fn until_written(server: &Server) {
    within_20_seconds("writing", || async {
        let answer = server.post("/write?db=outage", "cpu v=1\n").await;
        if answer.status == 204 {
            Ok(())
        } else {
            Err(format!("{} {}", answer.status, answer.body))
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outage_answers_name_the_failure_without_internals() {
    let Some(outage) =
        OutageCluster::start("influx_outage", "influx_outage", "Influx-Secret-91c2").await
    else {
        return;
    };
    let server = start_with(
        InfluxConfig::default(),
        ServerOptions::default(),
        &outage.own_url(),
    )
    .await;
    until_written(&server).await;

    let missing = start_with(
        InfluxConfig::default(),
        ServerOptions::default(),
        &outage.url("influx_no_such_db"),
    )
    .await;
    check_unavailable(&outage, &missing, "no such database", "3D000").await;

    outage.cluster.stop_server().unwrap();
    check_unavailable(&outage, &server, "stopped", "PostgreSQL").await;

    outage.cluster.start_server().unwrap();
    until_written(&server).await;
    outage.refuse_logins().await;
    // The pool's connections are gone; the next ones are refused.
    within_20_seconds("login refused", || async {
        let answer = server.post("/write?db=outage", "cpu v=1\n").await;
        if answer.body.contains("28P01") {
            Ok(())
        } else {
            Err(format!("{} {}", answer.status, answer.body))
        }
    })
    .await;
    check_unavailable(&outage, &server, "password refused", "28P01").await;
}
