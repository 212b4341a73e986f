//! View-file GETs on a streaming replica: rows, objects and HEAD served by it, deletes on the
//! primary, and the primary answering when the replica lags or is stopped.
#![allow(clippy::unwrap_used)]

use sluice_embedded::testkit::TestServer;
use sluice_embedded::{ClusterOptions, private_cluster};
use sluice_http::view::{ViewMount, load_slice};
use sluice_http::{Router, ServerOptions};
use sluice_pg::config::Config;
use sluice_pg::pool::{PRIMARY_APPLICATION_NAME, ReadPools, ReplicaState};
use sluice_pg::{Connection, Pool, PoolSettings};
use std::sync::Arc;
use std::time::{Duration, Instant};

const VIEW: &str = r#"{"sql": [
    {"path": ["/who"], "GET": "SELECT pg_is_in_recovery() AS in_recovery, current_setting('application_name') AS app"},
    {"path": ["/whoobject"], "return": "object",
     "GET": "SELECT pg_is_in_recovery() AS in_recovery, current_setting('application_name') AS app"},
    {"path": ["/notes", 1], "return": "object",
     "GET": "SELECT id, pg_is_in_recovery() AS in_recovery FROM view_notes WHERE id = $1::int",
     "DELETE": "DELETE FROM view_notes WHERE id = $1::int"}
]}"#;

/// Who answered the rows GET and the object GET, as `in_recovery:app` each.
async fn who(server: &TestServer) -> (String, String) {
    let rows = server
        .send("GET", "/v/who", &[("accept", "application/json")], "")
        .await;
    assert_eq!(rows.status, 200, "{}", rows.body);
    let rows = rows.json();
    let object = server.send("GET", "/v/whoobject", &[], "").await;
    assert_eq!(object.status, 200, "{}", object.body);
    let object = object.json();
    let text = |v: &serde_json::Value| {
        format!("{}:{}", v["in_recovery"], v["app"].as_str().unwrap_or("?"))
    };
    (text(&rows[0]), text(&object))
}

async fn eventually_who(server: &TestServer, expected: &str, what: &str) {
    let started = Instant::now();
    loop {
        let (rows, object) = who(server).await;
        if rows == expected && object == expected {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{what}: still {rows} / {object} after 15 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn view_gets_go_to_the_replica_and_fall_back_to_the_primary() {
    let Some(mut cluster) = private_cluster(
        "view_replicas",
        ClusterOptions::temporary().tls(false).test_roles(false),
    ) else {
        return;
    };
    let mut conn = Connection::connect(&cluster.url()).await.unwrap();
    conn.batch_execute(
        "CREATE TABLE view_notes (id int PRIMARY KEY); INSERT INTO view_notes VALUES (1), (2)",
    )
    .await
    .unwrap();
    drop(conn);
    cluster.start_replicas(1).unwrap();
    let mut primary_config = Config::parse(&cluster.url()).unwrap();
    primary_config.set_application_name(PRIMARY_APPLICATION_NAME);
    let primary = Pool::new(primary_config, PoolSettings::new());
    let pools = ReadPools::connect(
        primary.clone(),
        &[cluster.replicas()[0].url()],
        PoolSettings::new(),
        Duration::from_secs(1),
    )
    .await
    .unwrap();
    let view = load_slice("replicas.json", VIEW.as_bytes()).unwrap();
    let mut router = Router::new();
    router.database(primary.clone()).replicas(pools.clone());
    router.mount(
        "/v",
        Arc::new(ViewMount::new(view, primary.clone()).with_replicas(pools.clone())),
    );
    let mut server = TestServer::start(router, ServerOptions::default()).await;

    let on_replica = "true:sluice-replica-0".to_owned();
    let on_primary = format!("false:{PRIMARY_APPLICATION_NAME}");
    // Twice: the second object GET runs through the replica's pipelining mode.
    for _ in 0..2 {
        assert_eq!(who(&server).await, (on_replica.clone(), on_replica.clone()));
    }
    let head = server.send("HEAD", "/v/who", &[], "").await;
    assert_eq!(head.status, 200);
    let replica = pools.replicas()[0].clone();
    assert!(replica.served() >= 5, "served {}", replica.served());
    // Every lease is given back once the bodies are sent (a streamed one holds it until then).
    let started = Instant::now();
    while replica.in_flight() != 0 {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "a lease was never given back"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let labels = format!("replica=\"0\",host=\"{}\"", replica.host());
    let metrics = server.send("GET", "/-/metrics", &[], "").await.body;
    assert!(
        metrics.contains(&format!("sluice_replica_up{{{labels}}} 1\n")),
        "{metrics}"
    );
    assert!(
        metrics.contains(&format!(
            "sluice_replica_state{{{labels},state=\"healthy\"}} 1\n"
        )),
        "{metrics}"
    );
    assert!(
        metrics.contains(&format!(
            "sluice_replica_requests_total{{{labels}}} {}\n",
            replica.served()
        )),
        "{metrics}"
    );

    // A DELETE runs on the primary (a replica would refuse it); the replica's GET then misses
    // the row once replayed.
    let deleted = server.send("DELETE", "/v/notes/2", &[], "").await;
    assert!(deleted.status < 300, "{}: {}", deleted.status, deleted.body);
    let started = Instant::now();
    loop {
        let note = server.send("GET", "/v/notes/2", &[], "").await;
        if note.status == 404 {
            break;
        }
        assert_eq!(note.json()["in_recovery"], true, "{}", note.body);
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "the delete never replayed"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Replay paused and a write: the primary answers beyond a second of lag, the replica again
    // once replay resumes.
    let mut on_the_replica = Connection::connect(&cluster.replicas()[0].url())
        .await
        .unwrap();
    on_the_replica
        .batch_execute("SELECT pg_wal_replay_pause()")
        .await
        .unwrap();
    let mut conn = primary.get().await.unwrap();
    conn.batch_execute("INSERT INTO view_notes VALUES (3)")
        .await
        .unwrap();
    drop(conn);
    eventually_who(&server, &on_primary, "GETs leave the paused replica").await;
    assert_eq!(replica.state(), ReplicaState::Lagging);
    let metrics = server.send("GET", "/-/metrics", &[], "").await.body;
    assert!(
        metrics.contains(&format!("sluice_replica_up{{{labels}}} 0\n")),
        "{metrics}"
    );
    assert!(
        metrics.contains(&format!(
            "sluice_replica_state{{{labels},state=\"lagging\"}} 1\n"
        )),
        "{metrics}"
    );
    let note = server.send("GET", "/v/notes/3", &[], "").await;
    assert_eq!(
        note.status, 200,
        "the primary has the new row: {}",
        note.body
    );
    on_the_replica
        .batch_execute("SELECT pg_wal_replay_resume()")
        .await
        .unwrap();
    drop(on_the_replica);
    eventually_who(&server, &on_replica, "GETs come back after replay resumed").await;

    // The replica stopped: GETs are answered by the primary at once.
    cluster.replicas()[0].stop_server().unwrap();
    assert_eq!(who(&server).await, (on_primary.clone(), on_primary.clone()));
    cluster.replicas()[0].start_server().unwrap();
    eventually_who(
        &server,
        &on_replica,
        "GETs come back after the replica restarted",
    )
    .await;

    server.stop();
    let _ = server.task.await;
    pools.close().await;
    primary.close().await;
}
