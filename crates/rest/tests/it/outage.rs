//! What the REST API answers when PostgreSQL is stopped, killed under a request, refuses the
//! login, or lacks the database of the URL, on a private cluster: PostgREST's 503 codes naming
//! what failed, never the URL's password, PostgreSQL's host and port, the OS's error text or
//! the driver's and pool's internals.
#![allow(clippy::unwrap_used)]

use sluice_embedded::testkit::TestServer;
use sluice_embedded::{Cluster, ClusterOptions, private_cluster};
use sluice_http::{Router, ServerOptions};
use sluice_pg::{Connection, Pool, PoolSettings};
use sluice_rest::RestConfig;
use sluice_rest::api::{RestApi, SchemaSource};
use std::sync::Arc;
use std::time::{Duration, Instant};

const ROLE: &str = "rest_outage_app";
const PASSWORD: &str = "Rest-Outage-Secret-91c2";
const DATABASE: &str = "rest_outage_db";
/// Committed with its WAL flushed: the test cluster commits asynchronously, and the crash below
/// would take a fresh table with it.
const SETUP: &str = "SET synchronous_commit = on; CREATE TABLE items (id int PRIMARY KEY); INSERT INTO items VALUES (1); \
     CREATE FUNCTION slow() RETURNS int LANGUAGE sql AS 'SELECT 1 FROM pg_sleep(30)';";

fn url(cluster: &Cluster, database: &str) -> String {
    format!(
        "postgres://{ROLE}:{PASSWORD}@{}:{}/{database}?sslmode=disable",
        cluster.host(),
        cluster.port()
    )
}

fn pool(url: &str) -> Pool {
    let mut settings = PoolSettings::new();
    settings
        .set_max_size(2)
        .set_acquire_timeout(Duration::from_secs(3));
    Pool::connect(url, settings).unwrap()
}

/// Fails when `body` holds what an error body must never show.
fn assert_no_internals(cluster: &Cluster, what: &str, body: &str) {
    let port = cluster.port().to_string();
    let data_dir = cluster.data_dir().to_string_lossy().into_owned();
    let forbidden = [
        PASSWORD,
        ROLE,
        port.as_str(),
        "127.0.0.1",
        "postgres://",
        data_dir.as_str(),
        "os error",
        "callers waiting",
        "connections open",
        "pipeline statement",
        "Error {",
        "Kind",
    ];
    for word in forbidden {
        assert!(!body.contains(word), "{what}: {word:?} in {body}");
    }
}

/// Sends `method path` until `done` accepts the answer, for at most 20 s; no answer on the way
/// may show internals.
async fn send_until(
    cluster: &Cluster,
    server: &TestServer,
    method: &str,
    path: &str,
    what: &str,
    done: impl Fn(u16, &str) -> bool,
) -> (u16, String) {
    let started = Instant::now();
    loop {
        let answer = server.send(method, path, &[], "").await;
        assert_no_internals(cluster, what, &answer.body);
        if done(answer.status, &answer.body) {
            return (answer.status, answer.body);
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{what}: still {} {} after 20 s",
            answer.status,
            answer.body
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn run(url: &str, sql: &str) {
    let mut conn = Connection::connect(url).await.unwrap();
    conn.batch_execute(sql).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outage_answers_name_the_failure_without_internals() {
    let Some(cluster) = private_cluster(
        "rest_outage",
        ClusterOptions::temporary().tls(false).test_roles(false),
    ) else {
        return;
    };
    run(
        &cluster.url(),
        &format!("CREATE ROLE {ROLE} LOGIN PASSWORD '{PASSWORD}'"),
    )
    .await;
    run(
        &cluster.url(),
        &format!("CREATE DATABASE {DATABASE} OWNER {ROLE}"),
    )
    .await;
    let primary_url = url(&cluster, DATABASE);
    run(&primary_url, SETUP).await;
    let config = RestConfig::default();
    let cache = {
        let mut conn = Connection::connect(&primary_url).await.unwrap();
        Arc::new(
            sluice_rest::schema::load(&mut conn, &config.schemas)
                .await
                .unwrap(),
        )
    };
    let mut router = Router::new();
    router.mount(
        "/missing",
        Arc::new(RestApi::new(
            pool(&url(&cluster, "rest_outage_no_such_db")),
            config.clone(),
            SchemaSource::Fixed(cache.clone()),
        )),
    );
    router.mount(
        "",
        Arc::new(RestApi::new(
            pool(&primary_url),
            config,
            SchemaSource::Fixed(cache),
        )),
    );
    let server = TestServer::start(router, ServerOptions::default()).await;
    let ok = |status: u16, _: &str| status == 200;
    send_until(&cluster, &server, "GET", "/items", "before", ok).await;

    // The database of the URL does not exist.
    let (status, body) = send_until(
        &cluster,
        &server,
        "GET",
        "/missing/items",
        "no database",
        |s, _| s != 200,
    )
    .await;
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("PGRST000"), "{body}");
    assert!(
        body.contains("3D000"),
        "the SQLSTATE says what failed: {body}"
    );
    assert_no_internals(&cluster, "no such database", &body);

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
    let pid = loop {
        let mut conn = Connection::connect(&cluster.url()).await.unwrap();
        let row = conn
            .query_opt(
                "SELECT pid FROM pg_stat_activity WHERE query LIKE '%slow%' \
                 AND usename = 'rest_outage_app' AND state = 'active'",
                &[],
            )
            .await
            .unwrap();
        if let Some(row) = row {
            break row.get::<i32>(0).unwrap();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let answer = slow.await.unwrap();
    assert_eq!(answer.status, 503, "{}", answer.body);
    assert_no_internals(&cluster, "killed under a request", &answer.body);
    send_until(&cluster, &server, "GET", "/items", "after the crash", ok).await;

    // Stopped: a pooled connection first answers the server's 57P01, then none can be had.
    cluster.stop_server().unwrap();
    for (method, path) in [("GET", "/items"), ("POST", "/rpc/slow")] {
        // Requests on pooled connections may first find them lost (PGRST001).
        let (status, body) = send_until(&cluster, &server, method, path, "stopped", |s, b| {
            s != 200 && b.contains("PGRST000")
        })
        .await;
        assert_eq!(status, 503, "{method} {path}: {body}");
        assert!(body.contains("PostgreSQL could not be reached"), "{body}");
        assert_no_internals(&cluster, "stopped", &body);
    }

    // Back, but the role's password is no longer the URL's.
    cluster.start_server().unwrap();
    send_until(&cluster, &server, "GET", "/items", "restarted", ok).await;
    run(
        &cluster.url(),
        &format!(
            "ALTER ROLE {ROLE} PASSWORD 'another-one'; \
             SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '{ROLE}'"
        ),
    )
    .await;
    let (status, body) = send_until(
        &cluster,
        &server,
        "GET",
        "/items",
        "password refused",
        |_, b| b.contains("28P01"),
    )
    .await;
    assert_eq!(status, 503, "{body}");
    assert_no_internals(&cluster, "password refused", &body);
}
