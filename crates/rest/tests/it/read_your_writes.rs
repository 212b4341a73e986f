//! Read your writes on a streaming replica: every write answers with its commit position
//! (`Sluice-Lsn`, and the cookie when asked); a read naming it, while the replica's replay is
//! paused, is served by the primary after the wait and never stale; once replay resumes
//! during the wait, by the replica; a malformed position is a 400. Calls by GET (a STABLE
//! function) go to the replica, calls by POST to the primary, each checked by the
//! `application_name` of the pool that ran it.
#![allow(clippy::unwrap_used)]

use crate::common::{Answer, send};
use sluice_embedded::{ClusterOptions, private_cluster};
use sluice_http::lsn::LsnOptions;
use sluice_http::{Router, ServerOptions};
use sluice_pg::config::Config;
use sluice_pg::pool::{LsnOutcome, PRIMARY_APPLICATION_NAME, ReadPools, ReplicaState};
use sluice_pg::{Connection, Lsn, Pool, PoolSettings};
use sluice_rest::api::{RestApi, SchemaSource};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

const SETUP: &str = "
CREATE TABLE items (id int PRIMARY KEY, name text);
INSERT INTO items VALUES (1, 'one');
CREATE VIEW whoami AS
  SELECT pg_is_in_recovery() AS in_recovery, current_setting('application_name') AS app;
CREATE FUNCTION who() RETURNS text LANGUAGE sql STABLE
  AS $$ SELECT pg_is_in_recovery()::text || ':' || current_setting('application_name') $$;
CREATE FUNCTION add_item(id int, name text) RETURNS text LANGUAGE sql VOLATILE
  AS $$ INSERT INTO items VALUES (id, name) RETURNING pg_is_in_recovery()::text || ':' ||
        current_setting('application_name') $$;
";

const JSON: (&str, &str) = ("content-type", "application/json");

async fn post(address: SocketAddr, path: &str, body: &str, headers: &[(&str, &str)]) -> Answer {
    let mut all = vec![JSON];
    all.extend_from_slice(headers);
    send(address, "POST", path, &all, body.as_bytes().to_vec(), false).await
}

/// The answer's `Sluice-Lsn`, checked to be a position.
fn lsn_of(answer: &Answer, what: &str) -> Lsn {
    let text = answer
        .headers
        .get("sluice-lsn")
        .unwrap_or_else(|| {
            panic!(
                "{what}: no Sluice-Lsn in {} {:?}",
                answer.status, answer.headers
            )
        })
        .to_str()
        .unwrap();
    Lsn::parse(text.as_bytes()).unwrap_or_else(|| panic!("{what}: {text:?} is not a position"))
}

/// Who answered a GET of /whoami: pipelined (JSON) and streamed (CSV), as `in_recovery:app`.
async fn who(address: SocketAddr, headers: &[(&str, &str)]) -> (String, String) {
    let answer = send(address, "GET", "/whoami", headers, Vec::new(), false).await;
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
    let mut csv_headers = headers.to_vec();
    csv_headers.push(("accept", "text/csv"));
    let answer = send(address, "GET", "/whoami", &csv_headers, Vec::new(), false).await;
    assert_eq!(answer.status, 200);
    let csv = String::from_utf8(answer.body).unwrap();
    let line = csv.lines().nth(1).unwrap_or_default();
    let (flag, app) = line.split_once(',').unwrap_or_default();
    let flag = if flag == "t" { "true" } else { "false" };
    (pipelined, format!("{flag}:{app}"))
}

/// The names of `/items?id=eq.{id}` as the pipelined and the streamed path answer them.
async fn item(address: SocketAddr, id: u32, headers: &[(&str, &str)]) -> (String, String) {
    let path = format!("/items?id=eq.{id}");
    let answer = send(address, "GET", &path, headers, Vec::new(), false).await;
    assert_eq!(answer.status, 200);
    let pipelined = answer.json().to_string();
    let mut csv_headers = headers.to_vec();
    csv_headers.push(("accept", "text/csv"));
    let answer = send(address, "GET", &path, &csv_headers, Vec::new(), false).await;
    assert_eq!(answer.status, 200);
    (pipelined, String::from_utf8(answer.body).unwrap())
}

fn outcome(pools: &ReadPools, which: LsnOutcome) -> u64 {
    pools
        .lsn_outcomes()
        .iter()
        .find(|(o, _)| *o == which)
        .map_or(0, |(_, n)| *n)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_answer_with_their_commit_and_reads_naming_it_are_never_stale() {
    let Some(mut cluster) = private_cluster(
        "rest_read_your_writes",
        ClusterOptions::temporary().tls(false).test_roles(false),
    ) else {
        return;
    };
    let (config, cache) = crate::common::set_up_schema(&cluster.url(), SETUP).await;
    cluster.start_replicas(1).unwrap();
    let mut primary_config = Config::parse(&cluster.url()).unwrap();
    primary_config.set_application_name(PRIMARY_APPLICATION_NAME);
    let primary = Pool::new(primary_config, PoolSettings::new());
    // A lag allowance far beyond the test: a paused replica stays in, and only the position
    // keeps reads that name it away from it.
    let pools = ReadPools::connect(
        primary.clone(),
        &[cluster.replicas()[0].url()],
        PoolSettings::new(),
        Duration::from_secs(600),
    )
    .await
    .unwrap();
    pools.set_lsn_wait(Duration::from_millis(300));
    let api = RestApi::new(
        primary.clone(),
        config.clone(),
        SchemaSource::Fixed(cache.clone()),
    )
    .with_replicas(pools.clone());
    let with_cookie = RestApi::new(primary.clone(), config, SchemaSource::Fixed(cache))
        .with_replicas(pools.clone())
        .with_lsn(LsnOptions {
            report: true,
            cookie: Some(Duration::from_secs(30)),
        });
    let mut router = Router::new();
    router.mount("", Arc::new(api));
    router.mount("/c", Arc::new(with_cookie));
    let server = crate::common::Listening::serve(router, ServerOptions::default())
        .await
        .unwrap();
    let address = server.address;
    let on_replica = "true:sluice-replica-0".to_owned();
    let on_primary = format!("false:{PRIMARY_APPLICATION_NAME}");

    // Every kind of write answers with its commit position; positions only grow.
    let created = post(address, "/items", r#"{"id": 2, "name": "two"}"#, &[]).await;
    assert_eq!(created.status, 201);
    let mut last = lsn_of(&created, "POST");
    let writes: [(&str, &str, &str); 5] = [
        ("PATCH", "/items?id=eq.2", r#"{"name": "deux"}"#),
        ("PUT", "/items?id=eq.5", r#"{"id": 5, "name": "five"}"#),
        ("DELETE", "/items?id=eq.5", ""),
        ("POST", "/rpc/add_item", r#"{"id": 6, "name": "six"}"#),
        (
            "POST",
            "/",
            r#"[{"method": "POST", "path": "/items", "body": {"id": 7, "name": "seven"}}]"#,
        ),
    ];
    for (method, path, body) in writes {
        let answer = send(
            address,
            method,
            path,
            &[JSON],
            body.as_bytes().to_vec(),
            false,
        )
        .await;
        assert!(
            (200..300).contains(&answer.status),
            "{method} {path}: {} {}",
            answer.status,
            String::from_utf8_lossy(&answer.body)
        );
        let lsn = lsn_of(&answer, &format!("{method} {path}"));
        assert!(lsn > last, "{method} {path}: {lsn} after {last}");
        last = lsn;
    }
    // The POST call ran on the primary (a replica would refuse the insert).
    let called = post(
        address,
        "/rpc/add_item",
        r#"{"id": 8, "name": "eight"}"#,
        &[],
    )
    .await;
    assert_eq!(called.json(), serde_json::json!(on_primary));
    // A read answers with no position; a failed write neither.
    let read = send(address, "GET", "/items", &[], Vec::new(), false).await;
    assert!(read.headers.get("sluice-lsn").is_none());
    let duplicate = post(address, "/items", r#"{"id": 2, "name": "again"}"#, &[]).await;
    assert_eq!(duplicate.status, 409);
    assert!(duplicate.headers.get("sluice-lsn").is_none());

    // A malformed position is refused, for reads and writes alike, saying what is expected.
    for (method, body) in [("GET", ""), ("POST", r#"{"id": 9, "name": "nine"}"#)] {
        let refused = send(
            address,
            method,
            "/items",
            &[JSON, ("sluice-lsn", "yesterday")],
            body.as_bytes().to_vec(),
            false,
        )
        .await;
        assert_eq!(refused.status, 400, "{method}");
        let error = refused.json();
        assert_eq!(error["code"], "PGRSTX02", "{error}");
        assert!(error["message"].as_str().unwrap().contains("Sluice-Lsn"));
        assert!(error["details"].as_str().unwrap().contains("0/16B3748"));
        assert!(error["hint"].as_str().is_some());
    }
    assert_eq!(
        item(address, 9, &[]).await.0,
        "[]",
        "the refused POST wrote nothing"
    );

    // Calls by GET of a STABLE function go to the replica (its pool's application_name).
    let called = send(address, "GET", "/rpc/who", &[], Vec::new(), false).await;
    assert_eq!(called.json(), serde_json::json!(on_replica));

    // The replica gets to the last write: reads naming it are served there.
    let replayed = last.to_string();
    let started = std::time::Instant::now();
    while who(address, &[("sluice-lsn", replayed.as_str())]).await.0 != on_replica {
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "never replayed"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Replay paused on the replica, a write: reads that name it never see the replica's stale
    // state: the primary answers after the wait. Reads that name nothing still go to the
    // (healthy, stale) replica.
    let mut on_the_replica = Connection::connect(&cluster.replicas()[0].url())
        .await
        .unwrap();
    on_the_replica
        .batch_execute("SELECT pg_wal_replay_pause()")
        .await
        .unwrap();
    let created = post(address, "/items", r#"{"id": 10, "name": "ten"}"#, &[]).await;
    assert_eq!(created.status, 201);
    let written = lsn_of(&created, "POST while paused");
    let named = written.to_string();
    let naming = [("sluice-lsn", named.as_str())];
    assert_eq!(pools.replicas()[0].state(), ReplicaState::Healthy);
    assert_eq!(
        who(address, &[]).await,
        (on_replica.clone(), on_replica.clone())
    );
    assert_eq!(
        item(address, 10, &[]).await.0,
        "[]",
        "the replica is behind"
    );
    let to_primary = outcome(&pools, LsnOutcome::Primary);
    let (pipelined, streamed) = item(address, 10, &naming).await;
    assert_eq!(pipelined, r#"[{"id":10,"name":"ten"}]"#);
    assert_eq!(streamed, "id,name\n10,ten\n");
    assert_eq!(
        who(address, &naming).await,
        (on_primary.clone(), on_primary.clone())
    );
    let called = send(address, "GET", "/rpc/who", &naming, Vec::new(), false).await;
    assert_eq!(called.json(), serde_json::json!(on_primary));
    assert_eq!(outcome(&pools, LsnOutcome::Primary), to_primary + 5);
    // An older position the replica has replayed: the replica serves it.
    assert_eq!(
        who(address, &[("sluice-lsn", replayed.as_str())]).await,
        (on_replica.clone(), on_replica.clone())
    );
    // Several positions: the largest counts.
    let both = format!("{replayed}, {named}");
    assert_eq!(
        who(address, &[("sluice-lsn", both.as_str())]).await.0,
        on_primary
    );

    // The cookie: set by writes (the largest position the client had), sent back by reads.
    let created = post(
        address,
        "/c/items",
        r#"{"id": 11, "name": "eleven"}"#,
        &naming,
    )
    .await;
    assert_eq!(created.status, 201);
    let cookie = created
        .headers
        .get("set-cookie")
        .expect("a cookie")
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        cookie.contains("Max-Age=30; HttpOnly; SameSite=Lax"),
        "{cookie}"
    );
    let value = cookie.split(';').next().unwrap().to_owned();
    let cookie_lsn = Lsn::parse(value.trim_start_matches("sluice-lsn=").as_bytes()).unwrap();
    assert_eq!(cookie_lsn, lsn_of(&created, "POST with the cookie"));
    let with_cookie = [("cookie", value.as_str())];
    let answer = send(
        address,
        "GET",
        "/c/items?id=eq.11",
        &with_cookie,
        Vec::new(),
        false,
    )
    .await;
    assert_eq!(
        answer.json(),
        serde_json::json!([{"id": 11, "name": "eleven"}])
    );

    // Replay resumed while reads wait: the replica answers them once it has replayed.
    pools.set_lsn_wait(Duration::from_secs(60));
    let waited = outcome(&pools, LsnOutcome::Waited);
    let waiting = {
        let named = named.clone();
        tokio::spawn(async move { who(address, &[("sluice-lsn", named.as_str())]).await.0 })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    on_the_replica
        .batch_execute("SELECT pg_wal_replay_resume()")
        .await
        .unwrap();
    assert_eq!(waiting.await.unwrap(), on_replica);
    let naming = [("sluice-lsn", named.as_str())];
    assert_eq!(
        item(address, 10, &naming).await.1,
        "id,name\n10,ten\n",
        "the replica now has it"
    );
    assert_eq!(who(address, &naming).await.1, on_replica);
    assert!(outcome(&pools, LsnOutcome::Waited) > waited);

    server.stop().await;
    pools.close().await;
    primary.close().await;
}
