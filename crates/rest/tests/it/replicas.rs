//! Reads on a streaming replica: table and view GETs served by it (both the pipelined and the
//! streamed path), writes and calls on the primary, lag eviction while replay is paused, and a
//! stopped replica whose reads the primary answers.
#![allow(clippy::unwrap_used)]

use crate::common::send;
use sluice_embedded::{ClusterOptions, private_cluster};
use sluice_http::{Router, ServerOptions};
use sluice_pg::config::Config;
use sluice_pg::pool::{PRIMARY_APPLICATION_NAME, ReadPools, ReplicaState};
use sluice_pg::{Connection, Pool, PoolSettings};
use sluice_rest::api::{RestApi, SchemaSource};
use std::sync::Arc;
use std::time::{Duration, Instant};

const SETUP: &str = "
CREATE TABLE items (id int PRIMARY KEY, name text);
INSERT INTO items VALUES (1, 'one');
CREATE VIEW whoami AS
  SELECT pg_is_in_recovery() AS in_recovery, current_setting('application_name') AS app;
CREATE FUNCTION in_recovery() RETURNS boolean LANGUAGE sql VOLATILE AS 'SELECT pg_is_in_recovery()';
CREATE FUNCTION in_recovery_stable() RETURNS boolean LANGUAGE sql STABLE
  AS 'SELECT pg_is_in_recovery()';
";

/// Who answered `GET /whoami` (pipelined path) and `GET /whoami` as CSV (streamed path).
async fn who(address: std::net::SocketAddr) -> (String, String) {
    let answer = send(address, "GET", "/whoami", &[], Vec::new(), false).await;
    assert_eq!(
        answer.status,
        200,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    let json = answer.json();
    let pipelined = format!(
        "{}:{}",
        json[0]["in_recovery"],
        json[0]["app"].as_str().unwrap()
    );
    let answer = send(
        address,
        "GET",
        "/whoami",
        &[("accept", "text/csv")],
        Vec::new(),
        false,
    )
    .await;
    assert_eq!(
        answer.status,
        200,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    let csv = String::from_utf8(answer.body).unwrap();
    // CSV writes booleans as PostgreSQL does: t / f.
    let line = csv.lines().nth(1).unwrap_or_default();
    let (flag, app) = line.split_once(',').unwrap_or_default();
    let flag = match flag {
        "t" => "true",
        "f" => "false",
        other => other,
    };
    let streamed = format!("{flag}:{app}");
    (pipelined, streamed)
}

async fn eventually_who(address: std::net::SocketAddr, expected: &str, what: &str) {
    let started = Instant::now();
    loop {
        let (pipelined, streamed) = who(address).await;
        if pipelined == expected && streamed == expected {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{what}: still {pipelined} / {streamed} after 15 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn eventually_items(address: std::net::SocketAddr, expected: usize) {
    let started = Instant::now();
    loop {
        let answer = send(address, "GET", "/items?order=id", &[], Vec::new(), false).await;
        assert_eq!(answer.status, 200);
        if answer.json().as_array().map(Vec::len) == Some(expected) {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "items: {expected} not seen"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_go_to_the_replica_writes_and_calls_to_the_primary() {
    let Some(mut cluster) = private_cluster(
        "rest_replicas",
        ClusterOptions::temporary().tls(false).test_roles(false),
    ) else {
        return;
    };
    let (config, cache) = crate::common::set_up_schema(&cluster.url(), SETUP).await;
    cluster.start_replicas(1).unwrap();
    let mut primary_config = Config::parse(&cluster.url()).unwrap();
    primary_config.set_application_name(PRIMARY_APPLICATION_NAME);
    let primary = Pool::new(primary_config, PoolSettings::new());
    let replica_url = cluster.replicas()[0].url();
    let pools = ReadPools::connect(
        primary.clone(),
        &[replica_url],
        PoolSettings::new(),
        Duration::from_secs(1),
    )
    .await
    .unwrap();
    let api = RestApi::new(primary.clone(), config, SchemaSource::Fixed(cache))
        .with_replicas(pools.clone());
    let mut router = Router::new();
    router.mount("", Arc::new(api));
    let server = crate::common::Listening::serve(router, ServerOptions::default())
        .await
        .unwrap();
    let address = server.address;

    // Reads: the replica, by both paths.
    let on_replica = "true:sluice-replica-0".to_owned();
    let on_primary = format!("false:{PRIMARY_APPLICATION_NAME}");
    assert_eq!(who(address).await, (on_replica.clone(), on_replica.clone()));
    let head = send(address, "HEAD", "/whoami", &[], Vec::new(), false).await;
    assert_eq!(head.status, 200);
    let replica = pools.replicas()[0].clone();
    assert!(replica.served() >= 3, "served {}", replica.served());
    assert_eq!(replica.in_flight(), 0, "every lease given back");

    // A write goes to the primary (a replica would refuse it) and reaches the replica's reads.
    let created = send(
        address,
        "POST",
        "/items",
        &[("content-type", "application/json")],
        br#"{"id": 2, "name": "two"}"#.to_vec(),
        false,
    )
    .await;
    assert_eq!(
        created.status,
        201,
        "{}",
        String::from_utf8_lossy(&created.body)
    );
    eventually_items(address, 2).await;
    // Calls by GET (a STABLE function) run on the replica, calls by POST on the primary.
    for (method, function, on_replica) in [
        ("GET", "in_recovery_stable", true),
        ("POST", "in_recovery", false),
        ("POST", "in_recovery_stable", false),
    ] {
        let body = if method == "POST" {
            b"{}".to_vec()
        } else {
            Vec::new()
        };
        let called = send(
            address,
            method,
            &format!("/rpc/{function}"),
            &[("content-type", "application/json")],
            body,
            false,
        )
        .await;
        assert_eq!(
            called.status,
            200,
            "{}",
            String::from_utf8_lossy(&called.body)
        );
        assert_eq!(
            called.json(),
            serde_json::json!(on_replica),
            "{method} /rpc/{function} on the replica: {on_replica}"
        );
    }

    // Replay paused and a write: beyond a second of lag the reads go to the primary, and come
    // back once replay resumes; nothing stale is served after the eviction.
    let mut on_the_replica = Connection::connect(&cluster.replicas()[0].url())
        .await
        .unwrap();
    on_the_replica
        .batch_execute("SELECT pg_wal_replay_pause()")
        .await
        .unwrap();
    let created = send(
        address,
        "POST",
        "/items",
        &[("content-type", "application/json")],
        br#"{"id": 3, "name": "three"}"#.to_vec(),
        false,
    )
    .await;
    assert_eq!(created.status, 201);
    eventually_who(address, &on_primary, "reads leave the paused replica").await;
    assert_eq!(replica.state(), ReplicaState::Lagging);
    eventually_items(address, 3).await;
    on_the_replica
        .batch_execute("SELECT pg_wal_replay_resume()")
        .await
        .unwrap();
    drop(on_the_replica);
    eventually_who(address, &on_replica, "reads come back after replay resumed").await;
    eventually_items(address, 3).await;

    // The replica stopped: reads are still answered (the primary takes them at once), and the
    // replica is back once it runs again.
    cluster.replicas()[0].stop_server().unwrap();
    for _ in 0..5 {
        let answer = send(address, "GET", "/items?order=id", &[], Vec::new(), false).await;
        assert_eq!(
            answer.status,
            200,
            "{}",
            String::from_utf8_lossy(&answer.body)
        );
        assert_eq!(answer.json().as_array().map(Vec::len), Some(3));
    }
    let (pipelined, streamed) = who(address).await;
    assert_eq!(
        (pipelined, streamed),
        (on_primary.clone(), on_primary.clone())
    );
    cluster.replicas()[0].start_server().unwrap();
    eventually_who(
        address,
        &on_replica,
        "reads come back after the replica restarted",
    )
    .await;

    server.stop().await;
    pools.close().await;
    primary.close().await;
}
