//! What a view mount and `/-/ready` answer when PostgreSQL is stopped, killed under a request,
//! refuses the login, or lacks the database of the URL, on a private cluster: a 503 naming what
//! failed, never the URL's password, PostgreSQL's host and port, the OS's error text or the
//! pool's internals.
#![allow(clippy::unwrap_used)]

use sluice_embedded::testkit::TestServer;
use sluice_embedded::{Cluster, ClusterOptions, private_cluster};
use sluice_http::view::{ViewMount, load_slice};
use sluice_http::{Router, ServerOptions};
use sluice_pg::{Connection, Pool, PoolSettings};
use std::sync::Arc;
use std::time::{Duration, Instant};

const VIEW: &str = r#"{"sql": [
    {"path": ["/items"], "GET": "SELECT 1 AS one"},
    {"path": ["/slow"], "GET": "SELECT 1 AS one FROM pg_sleep(30)"}
]}"#;

const ROLE: &str = "outage_app";
const PASSWORD: &str = "Outage-Secret-7f3a";
const DATABASE: &str = "outage_db";

fn url(cluster: &Cluster, password: &str, database: &str) -> String {
    format!(
        "postgres://{ROLE}:{password}@{}:{}/{database}?sslmode=disable",
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
        port.as_str(),
        "127.0.0.1",
        "postgres://",
        data_dir.as_str(),
        "os error",
        "callers waiting",
        "connections open",
        "Error {",
        "Kind",
    ];
    for word in forbidden {
        assert!(!body.contains(word), "{what}: {word:?} in {body}");
    }
}

/// Sends `GET path` until `done` accepts the answer (the pool may first hand out a connection
/// the server already closed), for at most 20 s.
async fn get_until(
    server: &TestServer,
    path: &str,
    what: &str,
    done: impl Fn(u16, &str) -> bool,
) -> (u16, String) {
    let started = Instant::now();
    loop {
        let answer = server.send("GET", path, &[], "").await;
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

async fn superuser(cluster: &Cluster, sql: &str) {
    let mut conn = Connection::connect(&cluster.url()).await.unwrap();
    conn.batch_execute(sql).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outage_answers_name_the_failure_without_internals() {
    let Some(cluster) = private_cluster(
        "view_outage",
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
    let primary = pool(&url(&cluster, PASSWORD, DATABASE));
    let missing = pool(&url(&cluster, PASSWORD, "outage_no_such_db"));
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
    get_until(&server, "/v/items", "before", ok).await;

    // The database of the URL does not exist.
    let (status, body) = get_until(&server, "/missing/items", "no database", |s, _| s != 200).await;
    assert_eq!(status, 503, "{body}");
    assert!(
        body.contains("3D000"),
        "the SQLSTATE says what failed: {body}"
    );
    assert_no_internals(&cluster, "no such database", &body);

    // Killed under a request: the backend serving it dies (the server restarts itself).
    let slow = {
        let addr = server.addr;
        tokio::spawn(async move {
            sluice_embedded::testkit::request(addr, "GET", "/v/slow", &[], "").await
        })
    };
    let pid = loop {
        let mut conn = Connection::connect(&cluster.url()).await.unwrap();
        let row = conn
            .query_opt(
                "SELECT pid FROM pg_stat_activity WHERE query LIKE '%pg_sleep(30)%' \
                 AND pid <> pg_backend_pid()",
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
    get_until(&server, "/v/items", "after the crash", ok).await;

    // Stopped: a pooled connection first answers the server's 57P01, then none can be had.
    cluster.stop_server().unwrap();
    let (status, body) = get_until(&server, "/v/items", "stopped", |s, b| {
        s != 200 && !b.contains("57P01")
    })
    .await;
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("database_unavailable"), "{body}");
    assert!(body.contains("PostgreSQL could not be reached"), "{body}");
    assert_no_internals(&cluster, "stopped", &body);
    let ready = server.send("GET", "/-/ready", &[], "").await;
    assert_eq!(ready.status, 503, "{}", ready.body);
    assert_no_internals(&cluster, "/-/ready, stopped", &ready.body);

    // Back, but the role's password is no longer the URL's.
    cluster.start_server().unwrap();
    get_until(&server, "/v/items", "restarted", ok).await;
    superuser(
        &cluster,
        &format!(
            "ALTER ROLE {ROLE} PASSWORD 'another-one'; \
             SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '{ROLE}'"
        ),
    )
    .await;
    let (status, body) = get_until(&server, "/v/items", "password refused", |_, b| {
        b.contains("28P01")
    })
    .await;
    assert_eq!(status, 503, "{body}");
    assert_no_internals(&cluster, "password refused", &body);
    let ready = server.send("GET", "/-/ready", &[], "").await;
    assert_eq!(ready.status, 503, "{}", ready.body);
    assert!(ready.body.contains("28P01"), "{}", ready.body);
    assert_no_internals(&cluster, "/-/ready, password refused", &ready.body);
}
