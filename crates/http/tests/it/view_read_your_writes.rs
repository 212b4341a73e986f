//! Read your writes through a view file on a streaming replica: PUT, PATCH, POST and DELETE
//! answer with their commit position (`Sluice-Lsn`); while the replica's replay is paused, a
//! GET naming it (rows, object) is answered by the primary, never stale; a malformed position
//! is a 400.
#![allow(clippy::unwrap_used)]

use sluice_embedded::testkit::{Answer, TestServer};
use sluice_embedded::{ClusterOptions, private_cluster};
use sluice_http::view::{ViewMount, load_slice};
use sluice_http::{Router, ServerOptions};
use sluice_pg::config::Config;
use sluice_pg::pool::{PRIMARY_APPLICATION_NAME, ReadPools};
use sluice_pg::{Connection, Lsn, Pool, PoolSettings};
use std::sync::Arc;
use std::time::Duration;

const VIEW: &str = r#"{"sql": [
    {"path": ["/notes"],
     "GET": "SELECT id, body, pg_is_in_recovery() AS in_recovery FROM ryw_notes ORDER BY id",
     "POST": {"table": "ryw_notes", "columns": {"id": {"key": true}, "body": {}}},
     "PUT": {"table": "ryw_notes", "columns": {"id": {"key": true}, "body": {}}}},
    {"path": ["/notes", 1], "return": "object",
     "GET": "SELECT id, body, pg_is_in_recovery() AS in_recovery FROM ryw_notes WHERE id = $1::int",
     "PATCH": {"table": "ryw_notes", "columns": {"id": {"key": true, "source": 1}, "body": {}}},
     "DELETE": "DELETE FROM ryw_notes WHERE id = $1::int"}
]}"#;

fn lsn_of(answer: &Answer, what: &str) -> Lsn {
    let text = answer
        .header("sluice-lsn")
        .unwrap_or_else(|| panic!("{what}: no Sluice-Lsn ({}: {})", answer.status, answer.body));
    Lsn::parse(text.as_bytes()).unwrap_or_else(|| panic!("{what}: {text:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn view_writes_answer_with_their_commit_and_gets_naming_it_are_never_stale() {
    let Some(mut cluster) = private_cluster(
        "view_read_your_writes",
        ClusterOptions::temporary().tls(false).test_roles(false),
    ) else {
        return;
    };
    let mut conn = Connection::connect(&cluster.url()).await.unwrap();
    conn.batch_execute("CREATE TABLE ryw_notes (id int PRIMARY KEY, body text)")
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
        Duration::from_secs(600),
    )
    .await
    .unwrap();
    pools.set_lsn_wait(Duration::from_millis(200));
    let view = load_slice("ryw.json", VIEW.as_bytes()).unwrap();
    let mut router = Router::new();
    router.database(primary.clone()).replicas(pools.clone());
    router.mount(
        "/v",
        Arc::new(ViewMount::new(view, primary.clone()).with_replicas(pools.clone())),
    );
    let mut server = TestServer::start(router, ServerOptions::default()).await;
    let json = ("content-type", "application/json");

    // Each kind of write answers with its commit position, each later than the one before.
    let mut last = Lsn(0);
    let writes = [
        ("POST", "/v/notes", r#"[{"id": 1, "body": "one"}]"#),
        ("PUT", "/v/notes", r#"[{"id": 2, "body": "two"}]"#),
        ("PATCH", "/v/notes/1", r#"{"body": "uno"}"#),
        ("POST", "/v/notes", r#"[{"id": 3, "body": "three"}]"#),
        ("DELETE", "/v/notes/3", ""),
    ];
    for (method, path, body) in writes {
        let answer = server.send(method, path, &[json], body).await;
        assert!(
            answer.status < 300,
            "{method} {path}: {} {}",
            answer.status,
            answer.body
        );
        let lsn = lsn_of(&answer, &format!("{method} {path}"));
        assert!(lsn > last, "{method} {path}: {lsn} after {last}");
        last = lsn;
    }
    let read = server.send("GET", "/v/notes", &[], "").await;
    assert!(read.header("sluice-lsn").is_none(), "a read names nothing");

    // A malformed position: 400 bad_lsn, saying what a position looks like.
    let refused = server
        .send("GET", "/v/notes/1", &[("sluice-lsn", "0/xyz")], "")
        .await;
    assert_eq!(refused.status, 400);
    let error = refused.json();
    assert_eq!(error["code"], "bad_lsn", "{error}");
    assert!(error["details"].as_str().unwrap().contains("0/16B3748"));

    // Replay paused, a write: GETs naming it are answered by the primary with the new row;
    // GETs naming nothing by the stale replica.
    let mut on_the_replica = Connection::connect(&cluster.replicas()[0].url())
        .await
        .unwrap();
    on_the_replica
        .batch_execute("SELECT pg_wal_replay_pause()")
        .await
        .unwrap();
    let created = server
        .send(
            "POST",
            "/v/notes",
            &[json],
            r#"[{"id": 4, "body": "four"}]"#,
        )
        .await;
    let named = lsn_of(&created, "POST while paused").to_string();
    let naming = [
        ("sluice-lsn", named.as_str()),
        ("accept", "application/json"),
    ];
    let stale = server
        .send("GET", "/v/notes", &[("accept", "application/json")], "")
        .await
        .json();
    assert!(
        stale.as_array().unwrap().iter().all(|n| n["id"] != 4),
        "{stale}"
    );
    assert!(
        stale
            .as_array()
            .unwrap()
            .iter()
            .all(|n| n["in_recovery"] == true)
    );
    let fresh = server.send("GET", "/v/notes", &naming, "").await.json();
    let four = fresh.as_array().unwrap().iter().find(|n| n["id"] == 4);
    assert_eq!(four.map(|n| n["in_recovery"].clone()), Some(false.into()));
    // The object GET, twice (its second run goes through the pipelining mode).
    for _ in 0..2 {
        let object = server.send("GET", "/v/notes/4", &naming, "").await;
        assert_eq!(object.status, 200, "{}", object.body);
        assert_eq!(object.json()["in_recovery"], false);
    }

    on_the_replica
        .batch_execute("SELECT pg_wal_replay_resume()")
        .await
        .unwrap();
    drop(on_the_replica);
    // Once replayed, the replica answers reads naming it.
    pools.set_lsn_wait(Duration::from_secs(30));
    let object = server.send("GET", "/v/notes/4", &naming, "").await;
    assert_eq!(object.json()["in_recovery"], true, "{}", object.body);
    let rows = server.send("GET", "/v/notes", &naming, "").await.json();
    let four = rows.as_array().unwrap().iter().find(|n| n["id"] == 4);
    assert_eq!(four.map(|n| n["in_recovery"].clone()), Some(true.into()));

    let metrics = server.send("GET", "/-/metrics", &[], "").await.body;
    assert!(
        metrics.contains("sluice_read_your_writes_total{route=\"primary\"} 3\n"),
        "{metrics}"
    );
    server.stop();
    pools.close().await;
    primary.close().await;
}
