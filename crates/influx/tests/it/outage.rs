//! What the write API and `/health` answer when PostgreSQL is stopped, refuses the login or
//! lacks the database of the URL, on a private cluster: InfluxDB's `{"code", "message"}` with a
//! 503 naming what failed, never the URL's password, PostgreSQL's host and port, the OS's error
//! text or the pool's internals.
#![allow(clippy::unwrap_used)]

use crate::common::{Server, start_with};
use sluice_embedded::{Cluster, ClusterOptions, private_cluster};
use sluice_http::ServerOptions;
use sluice_influx::InfluxConfig;
use sluice_pg::Connection;
use std::time::{Duration, Instant};

const ROLE: &str = "influx_outage";
const PASSWORD: &str = "Influx-Secret-91c2";
const DATABASE: &str = "influx_outage_db";

fn url(cluster: &Cluster, database: &str) -> String {
    format!(
        "postgres://{ROLE}:{PASSWORD}@{}:{}/{database}?sslmode=disable",
        cluster.host(),
        cluster.port()
    )
}

async fn superuser(cluster: &Cluster, sql: &str) {
    let mut conn = Connection::connect(&cluster.url()).await.unwrap();
    conn.batch_execute(sql).await.unwrap();
}

/// Every answer of a database that cannot serve: the write endpoints and `/health`, 503 each,
/// the body checked for what it must not show and for `must_name`.
async fn check_unavailable(cluster: &Cluster, server: &Server, what: &str, must_name: &str) {
    let port = cluster.port().to_string();
    let data_dir = cluster.data_dir().to_string_lossy().into_owned();
    let forbidden = [
        PASSWORD,
        port.as_str(),
        "127.0.0.1",
        "postgres://",
        data_dir.as_str(),
        "os error",
        "callers waiting",
        "connections open",
        "database unavailable: database unavailable",
    ];
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
        let header = answer
            .headers
            .get("x-influxdb-error")
            .map(|v| v.to_str().unwrap_or_default().to_owned())
            .unwrap_or_default();
        for word in forbidden {
            assert!(
                !answer.body.contains(word),
                "{what}, {path}: {word:?} in {}",
                answer.body
            );
            assert!(
                !header.contains(word),
                "{what}, {path}: {word:?} in {header}"
            );
        }
    }
    let health = server.send("GET", "/health", &[], "").await;
    assert_eq!(health.status, 503, "{what}, /health: {}", health.body);
    assert_eq!(health.json()["status"], "fail");
    for word in forbidden {
        assert!(
            !health.body.contains(word),
            "{what}, /health: {word:?} in {}",
            health.body
        );
    }
}

/// Writes until one is answered 204 (the pool may first hand out a connection the server
/// closed), for at most 20 s.
async fn until_written(server: &Server) {
    let started = Instant::now();
    loop {
        let answer = server.post("/write?db=outage", "cpu v=1\n").await;
        if answer.status == 204 {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "still {} {}",
            answer.status,
            answer.body
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outage_answers_name_the_failure_without_internals() {
    let Some(cluster) = private_cluster(
        "influx_outage",
        ClusterOptions::temporary().tls(false).test_roles(false),
    ) else {
        return;
    };
    superuser(
        &cluster,
        &format!("CREATE ROLE {ROLE} LOGIN PASSWORD '{PASSWORD}'"),
    )
    .await;
    superuser(
        &cluster,
        &format!("CREATE DATABASE {DATABASE} OWNER {ROLE}"),
    )
    .await;
    let server = start_with(
        InfluxConfig::default(),
        ServerOptions::default(),
        &url(&cluster, DATABASE),
    )
    .await;
    until_written(&server).await;

    let missing = start_with(
        InfluxConfig::default(),
        ServerOptions::default(),
        &url(&cluster, "influx_no_such_db"),
    )
    .await;
    check_unavailable(&cluster, &missing, "no such database", "3D000").await;

    cluster.stop_server().unwrap();
    check_unavailable(&cluster, &server, "stopped", "PostgreSQL").await;

    cluster.start_server().unwrap();
    until_written(&server).await;
    superuser(
        &cluster,
        &format!(
            "ALTER ROLE {ROLE} PASSWORD 'another-one'; \
             SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '{ROLE}'"
        ),
    )
    .await;
    // The pool's connections are gone; the next ones are refused.
    let started = Instant::now();
    loop {
        let answer = server.post("/write?db=outage", "cpu v=1\n").await;
        if answer.body.contains("28P01") {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "still {} {}",
            answer.status,
            answer.body
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    check_unavailable(&cluster, &server, "password refused", "28P01").await;
}
