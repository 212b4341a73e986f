//! The endpoints around writing: /ping, /health, /query, auth, body limits, a database that is down.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{count, start, start_with, unique, url, value};
use sluice_http::ServerOptions;
use sluice_influx::InfluxConfig;
use std::io::Write;

/// A URL where no PostgreSQL listens.
const NOWHERE: &str = "postgres://postgres@127.0.0.1:1/postgres?connect_timeout=2";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ping_answers_204_with_the_version() {
    let server = start(InfluxConfig::default()).await;
    let answer = server.send("GET", "/ping", &[], "").await;
    assert_eq!(answer.status, 204);
    assert_eq!(
        answer.headers["x-influxdb-version"],
        sluice_influx::INFLUXDB_VERSION
    );
    assert_eq!(server.send("HEAD", "/ping", &[], "").await.status, 204);
    let verbose = server.send("GET", "/ping?verbose=true", &[], "").await;
    assert_eq!(verbose.status, 200);
    assert_eq!(verbose.json()["version"], sluice_influx::INFLUXDB_VERSION);
    assert_eq!(server.send("POST", "/ping", &[], "").await.status, 405);
    assert_eq!(server.send("GET", "/write/x", &[], "").await.status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_reports_the_database() {
    let server = start(InfluxConfig::default()).await;
    let answer = server.send("GET", "/health", &[], "").await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.json()["status"], "pass");

    let down = start_with(InfluxConfig::default(), ServerOptions::default(), NOWHERE).await;
    let answer = down.send("GET", "/health", &[], "").await;
    assert_eq!(answer.status, 503, "{}", answer.body);
    assert_eq!(answer.json()["status"], "fail");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_that_is_down_answers_503_with_retry_after() {
    let down = start_with(InfluxConfig::default(), ServerOptions::default(), NOWHERE).await;
    let answer = down.post("/write?db=x", "cpu v=1 1\n").await;
    assert_eq!(answer.status, 503, "{}", answer.body);
    assert!(answer.headers.contains_key("retry-after"));
    assert_eq!(answer.json()["code"], "unavailable");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_create_database_makes_the_schema() {
    let server = start(InfluxConfig::default()).await;
    let db = unique("influx_query");
    let answer = server
        .send(
            "POST",
            &format!("/query?q=CREATE+DATABASE+%22{db}%22"),
            &[],
            "",
        )
        .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.body, r#"{"results":[{"statement_id":0}]}"#);
    let exists = |db: String| async move {
        value(&format!(
            "SELECT count(*) FROM pg_namespace WHERE nspname = '{db}'"
        ))
        .await
    };
    assert_eq!(exists(db.clone()).await.as_deref(), Some("1"));

    // In a form body, as Telegraf sends it; twice is fine.
    let second = unique("influx_query");
    for _ in 0..2 {
        let answer = server
            .send(
                "POST",
                "/query",
                &[("Content-Type", "application/x-www-form-urlencoded")],
                format!("q=CREATE+DATABASE+{second}"),
            )
            .await;
        assert_eq!(answer.status, 200, "{}", answer.body);
    }
    assert_eq!(exists(second).await.as_deref(), Some("1"));

    let answer = server
        .send("POST", "/query?q=DROP+DATABASE+x", &[], "")
        .await;
    assert_eq!(answer.status, 400);
    assert!(
        answer.json()["error"]
            .as_str()
            .unwrap()
            .contains("CREATE DATABASE")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_are_required_when_configured() {
    let server = start(InfluxConfig {
        tokens: vec!["s3cret".into()],
        ..InfluxConfig::default()
    })
    .await;
    let db = unique("influx_auth");
    let line = "cpu v=1 1\n";
    let write = format!("/write?db={db}");

    let answer = server.post(&write, line).await;
    assert_eq!(answer.status, 401);
    assert_eq!(answer.json()["code"], "unauthorized");
    let wrong = server
        .send("POST", &write, &[("Authorization", "Token nope")], line)
        .await;
    assert_eq!(wrong.status, 401);
    let wrong_p = server
        .post(&format!("/write?db={db}&u=me&p=nope"), line)
        .await;
    assert_eq!(wrong_p.status, 401);
    assert_eq!(count(&db, "cpu").await, None);

    let token = server
        .send("POST", &write, &[("Authorization", "Token s3cret")], line)
        .await;
    assert_eq!(token.status, 204, "{}", token.body);
    let v2 = server
        .send(
            "POST",
            &format!("/api/v2/write?bucket={db}"),
            &[("Authorization", "Token s3cret")],
            line,
        )
        .await;
    assert_eq!(v2.status, 204, "{}", v2.body);
    let params = server
        .post(&format!("/write?db={db}&u=me&p=s3cret"), line)
        .await;
    assert_eq!(params.status, 204, "{}", params.body);
    // "me:s3cret"
    let basic = server
        .send(
            "POST",
            &write,
            &[("Authorization", "Basic bWU6czNjcmV0")],
            line,
        )
        .await;
    assert_eq!(basic.status, 204, "{}", basic.body);
    // Four writes of one point: one row (duplicates merge).
    assert_eq!(count(&db, "cpu").await, Some(1));

    // /ping and /health need no token; /query does.
    assert_eq!(server.send("GET", "/ping", &[], "").await.status, 204);
    assert_eq!(server.send("GET", "/health", &[], "").await.status, 200);
    let query = server
        .send("POST", "/query?q=CREATE+DATABASE+x", &[], "")
        .await;
    assert_eq!(query.status, 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_over_the_limit_answer_413() {
    let options = ServerOptions {
        body_limit: 1000,
        ..ServerOptions::default()
    };
    let server = start_with(InfluxConfig::default(), options, url()).await;
    let db = unique("influx_limit");
    let mut body = String::new();
    for i in 0..100 {
        body.push_str(&format!("cpu v={i} {i}\n"));
    }
    assert!(body.len() > 1000);
    let answer = server.post(&format!("/write?db={db}"), &body).await;
    assert_eq!(answer.status, 413, "{}", answer.body);
    assert_eq!(answer.json()["code"], "request too large");

    // Small when compressed, over the limit once inflated.
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(body.as_bytes()).unwrap();
    let compressed = encoder.finish().unwrap();
    assert!(compressed.len() < 1000);
    let answer = server
        .send(
            "POST",
            &format!("/write?db={db}"),
            &[("Content-Encoding", "gzip")],
            compressed,
        )
        .await;
    assert_eq!(answer.status, 413, "{}", answer.body);
    assert_eq!(count(&db, "cpu").await, None);
}

/// An HS256 token for secret `reallyreallyreallyreallyverysafe` (role rest_web_user, sub alice).
const JWT: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoicmVzdF93ZWJfdXNlciIsInN1YiI6ImFsaWNlIn0.eQzLzo6JL9eGBSsRwpQt_xmn-bZcrpoFkxa5ZMbcLY8";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_valid_jwt_is_accepted_in_place_of_a_token() {
    let jwt =
        sluice_http::jwt::JwtConfig::new("reallyreallyreallyreallyverysafe", false, None, ".role")
            .unwrap();
    let server = start(InfluxConfig {
        tokens: vec!["s3cret".into()],
        jwt: Some(std::sync::Arc::new(jwt)),
        ..InfluxConfig::default()
    })
    .await;
    let db = unique("influx_jwt");
    let line = "cpu v=1 1\n";
    let write = format!("/write?db={db}");
    let bearer = format!("Bearer {JWT}");
    let answer = server
        .send("POST", &write, &[("Authorization", &bearer)], line)
        .await;
    assert_eq!(answer.status, 204, "{}", answer.body);
    // A token whose signature does not verify, and none at all: refused, nothing written.
    let refused = "cpu v=2 2\n";
    let forged = format!("Bearer {}x", &JWT[..JWT.len() - 1]);
    let answer = server
        .send("POST", &write, &[("Authorization", &forged)], refused)
        .await;
    assert_eq!(answer.status, 401);
    assert_eq!(server.post(&write, refused).await.status, 401);
    // The plain token still works.
    let token = server
        .send("POST", &write, &[("Authorization", "Token s3cret")], line)
        .await;
    assert_eq!(token.status, 204, "{}", token.body);
    assert_eq!(count(&db, "cpu").await, Some(1));
}
