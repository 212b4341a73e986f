//! Large POST bodies streamed into COPY: JSON arrays, JSON Lines and CSV, plain inserts and
//! upserts with representation (a media type handler's too), what triggers set for the answer,
//! a bad element deep in the body refused with its place and nothing written, chunked bodies of
//! unknown length.

use crate::common;

use common::{Served, fixtures, send};
use sluice_rest::RestConfig;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

const TABLE: &str = "CREATE TABLE events (id int PRIMARY KEY, kind text NOT NULL, \
                     payload jsonb, tags text[], at timestamptz DEFAULT now());";

fn json_rows(n: usize, start: usize) -> Vec<u8> {
    let rows: Vec<serde_json::Value> = (start..start + n)
        .map(|i| {
            serde_json::json!({"id": i, "kind": format!("k{}", i % 7),
                "payload": {"n": i, "s": "x".repeat(40)}, "tags": ["a", format!("t{i}")]})
        })
        .collect();
    serde_json::to_vec(&rows).unwrap_or_default()
}

/// POSTs a JSON body to /events, with a Content-Length or `chunked`.
async fn post_json(served: &Served, body: Vec<u8>, chunked: bool) -> common::Answer {
    send(
        served.address,
        "POST",
        "/events",
        &[("content-type", "application/json")],
        body,
        chunked,
    )
    .await
}

/// A chunked POST of `body` to `events` merging duplicates (an upsert, through the stage).
async fn upsert_json(served: &Served, body: Vec<u8>) -> common::Answer {
    send(
        served.address,
        "POST",
        "/events",
        &[
            ("content-type", "application/json"),
            ("prefer", "resolution=merge-duplicates"),
        ],
        body,
        true,
    )
    .await
}

async fn count(served: &Served) -> i64 {
    let mut conn = sluice_pg::Connection::connect(&served.url)
        .await
        .expect("connect");
    let row = conn
        .query_one("SELECT count(*) FROM events", &[])
        .await
        .expect("count");
    row.get(0).expect("a count")
}

/// Serves a database of its own holding `events`, then `more` (SQL).
async fn serve(name: &str, more: &str) -> Served {
    Served::start(
        name,
        &format!("{}{TABLE}{more}", fixtures()),
        RestConfig::default(),
    )
    .await
    .expect("serve")
}

#[test]
fn a_large_json_array_streams_into_the_table() {
    runtime().block_on(async {
        let served = serve("bulk_array", "").await;
        let body = json_rows(20_000, 1);
        assert!(body.len() as u64 > sluice_rest::api::STREAM_THRESHOLD);
        let answer = post_json(&served, body, false).await;
        assert_eq!(
            answer.status,
            201,
            "{}",
            String::from_utf8_lossy(&answer.body)
        );
        assert_eq!(count(&served).await, 20_000);
        // JSON Lines, chunked (no length): streamed too.
        let lines: Vec<u8> = (20_001..20_101)
            .flat_map(|i| format!("{{\"id\": {i}, \"kind\": \"line\"}}\n").into_bytes())
            .collect();
        let answer = send(
            served.address,
            "POST",
            "/events?columns=id,kind",
            &[("content-type", "application/x-ndjson")],
            lines,
            true,
        )
        .await;
        assert_eq!(
            answer.status,
            201,
            "{}",
            String::from_utf8_lossy(&answer.body)
        );
        // CSV straight into COPY.
        let csv: Vec<u8> = std::iter::once("id,kind\n".to_string())
            .chain((20_101..20_201).map(|i| format!("{i},csv\n")))
            .collect::<String>()
            .into_bytes();
        let answer = send(
            served.address,
            "POST",
            "/events",
            &[("content-type", "text/csv")],
            csv,
            true,
        )
        .await;
        assert_eq!(
            answer.status,
            201,
            "{}",
            String::from_utf8_lossy(&answer.body)
        );
        assert_eq!(count(&served).await, 20_200);
        served.finish().await;
    });
}

#[test]
fn a_bad_element_deep_in_the_body_writes_nothing_and_says_where() {
    runtime().block_on(async {
        let served = serve("bulk_bad", "").await;
        let mut rows: Vec<serde_json::Value> =
            serde_json::from_slice(&json_rows(20_000, 1)).unwrap_or_default();
        rows[14_999] =
            serde_json::json!({"id": 15_000, "kind": "x", "payload": null, "tags": [], "extra": 1});
        let body = serde_json::to_vec(&rows).unwrap_or_default();
        let answer = post_json(&served, body, false).await;
        assert_eq!(answer.status, 400);
        let error = answer.json();
        assert_eq!(error["code"], "PGRST102");
        let details = error["details"].as_str().unwrap_or_default();
        assert!(details.contains("element 15000"), "{details}");
        // A key missing from one object: refused, as PostgREST refuses unmatched keys.
        rows[14_999] = serde_json::json!({"id": 15_000, "kind": "x"});
        let body = serde_json::to_vec(&rows).unwrap_or_default();
        let answer = post_json(&served, body, true).await;
        assert_eq!(
            answer.status,
            400,
            "{}",
            String::from_utf8_lossy(&answer.body)
        );
        // A value the column refuses: PostgreSQL's error, nothing written.
        rows[14_999] =
            serde_json::json!({"id": "fifteen", "kind": "x", "payload": null, "tags": []});
        let body = serde_json::to_vec(&rows).unwrap_or_default();
        let answer = post_json(&served, body, false).await;
        assert_eq!(
            answer.status,
            400,
            "{}",
            String::from_utf8_lossy(&answer.body)
        );
        assert_eq!(answer.json()["code"], "22P02");
        assert_eq!(count(&served).await, 0);
        served.finish().await;
    });
}

#[test]
fn a_streamed_upsert_returns_its_rows() {
    runtime().block_on(async {
        let served = serve("bulk_upsert", "").await;
        let answer = post_json(&served, json_rows(20_000, 1), false).await;
        assert_eq!(answer.status, 201);
        // Overlapping ids: merged; a representation of the written rows, selected.
        let answer = send(
            served.address,
            "POST",
            "/events?select=id,kind&order=id",
            &[
                ("content-type", "application/json"),
                (
                    "prefer",
                    "return=representation, resolution=merge-duplicates",
                ),
            ],
            json_rows(20_000, 10_001),
            true,
        )
        .await;
        assert_eq!(
            answer.status,
            201,
            "{}",
            String::from_utf8_lossy(&answer.body)
        );
        assert_eq!(answer.json().as_array().map(Vec::len), Some(20_000));
        assert_eq!(count(&served).await, 30_000);
        // The same rows again: every one updated, none inserted, so 200 as PostgREST answers.
        let answer = upsert_json(&served, json_rows(20_000, 10_001)).await;
        assert_eq!(
            answer.status,
            200,
            "{}",
            String::from_utf8_lossy(&answer.body)
        );
        assert_eq!(count(&served).await, 30_000);
        served.finish().await;
    });
}

/// A media type handler over `events`: the number of rows and the sum of their ids, as bytes;
/// it names itself in a header (`response.headers`).
const FOLD: &str = "CREATE DOMAIN \"application/vnd.fold\" AS bytea; \
    CREATE FUNCTION fold_step(state int8[], next events) RETURNS int8[] LANGUAGE sql AS \
      'SELECT ARRAY[state[1] + 1, state[2] + next.id]'; \
    CREATE FUNCTION fold_end(state int8[]) RETURNS \"application/vnd.fold\" LANGUAGE sql AS $$ \
      SELECT set_config('response.headers', '[{\"X-Folded\": \"yes\"}]', true); \
      SELECT convert_to(state[1] || ' rows, ids ' || state[2], 'UTF8')::\"application/vnd.fold\" $$; \
    CREATE AGGREGATE fold(events) (stype = int8[], initcond = '{0,0}', sfunc = fold_step, \
      finalfunc = fold_end);";

#[test]
fn a_streamed_insert_answers_through_a_media_type_handler() {
    runtime().block_on(async {
        let served = serve("bulk_media", FOLD).await;
        let answer = send(
            served.address,
            "POST",
            "/events",
            &[
                ("content-type", "application/json"),
                ("accept", "application/vnd.fold"),
                ("prefer", "return=representation"),
            ],
            json_rows(20_000, 1),
            true,
        )
        .await;
        assert_eq!(
            answer.status,
            201,
            "{}",
            String::from_utf8_lossy(&answer.body)
        );
        assert_eq!(answer.headers["content-type"], "application/vnd.fold");
        assert_eq!(answer.headers["x-folded"], "yes");
        assert_eq!(answer.body, b"20000 rows, ids 200010000");
        // Without a representation, no aggregate: the usual empty answer.
        let answer = send(
            served.address,
            "POST",
            "/events",
            &[
                ("content-type", "application/json"),
                ("accept", "application/vnd.fold"),
            ],
            json_rows(20_000, 20_001),
            true,
        )
        .await;
        assert_eq!(answer.status, 201);
        assert!(answer.body.is_empty());
        assert_eq!(count(&served).await, 40_000);
        served.finish().await;
    });
}

/// A statement trigger on `events` that names the rows' count in a header and sets the status.
const AUDIT: &str = "CREATE FUNCTION audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
      PERFORM set_config('response.headers', \
        format('[{\"X-Copied\": \"%s\"}]', (SELECT count(*) FROM events)), true); \
      PERFORM set_config('response.status', '202', true); RETURN NULL; END $$; \
    CREATE TRIGGER audit AFTER INSERT ON events FOR EACH STATEMENT EXECUTE PROCEDURE audit();";

#[test]
fn a_streamed_insert_answers_with_what_its_triggers_set() {
    runtime().block_on(async {
        let served = serve("bulk_audit", AUDIT).await;
        // Straight into the table by COPY.
        let answer = post_json(&served, json_rows(20_000, 1), true).await;
        assert_eq!(
            answer.status,
            202,
            "{}",
            String::from_utf8_lossy(&answer.body)
        );
        assert_eq!(answer.headers["x-copied"], "20000");
        // Through the stage: an upsert.
        let answer = upsert_json(&served, json_rows(20_000, 10_001)).await;
        assert_eq!(
            answer.status,
            202,
            "{}",
            String::from_utf8_lossy(&answer.body)
        );
        assert_eq!(answer.headers["x-copied"], "30000");
        served.finish().await;
    });
}

#[test]
fn a_body_over_the_limit_or_a_client_gone_mid_body_writes_nothing() {
    runtime().block_on(async {
        let options = sluice_http::ServerOptions {
            body_limit: 2 << 20,
            ..Default::default()
        };
        let served = Served::start_with(
            "bulk_cut",
            &format!("{}{TABLE}", fixtures()),
            RestConfig::default(),
            sluice_pg::PoolSettings::default(),
            options,
        )
        .await
        .expect("serve");
        let body = json_rows(30_000, 1);
        assert!(body.len() > 2 << 20);
        // Announced too large: refused before the body is read.
        {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let mut socket = tokio::net::TcpStream::connect(served.address)
                .await
                .expect("connect");
            let head = format!(
                "POST /events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
                 Content-Length: {}\r\n\r\n",
                body.len()
            );
            socket.write_all(head.as_bytes()).await.expect("head");
            let mut answer = vec![0; 4096];
            let n = socket.read(&mut answer).await.expect("an answer");
            let answer = String::from_utf8_lossy(&answer[..n]);
            assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
            assert!(answer.contains("PGRST102"), "{answer}");
        }
        // Chunked past the limit: 413 once the limit is crossed (the server may close the
        // connection before the client has sent the rest, which the client sees as an error).
        let answer = common::try_send(
            served.address,
            "POST",
            "/events",
            &[("content-type", "application/json")],
            body.clone(),
            true,
        )
        .await;
        if let Ok(answer) = answer {
            assert_eq!(answer.status, 413);
            assert_eq!(answer.json()["code"], "PGRST102");
        }
        assert_eq!(count(&served).await, 0);
        // A client that sends half of what it announced, then goes away.
        {
            use tokio::io::AsyncWriteExt;
            let mut socket = tokio::net::TcpStream::connect(served.address)
                .await
                .expect("connect");
            let half = &body[..body.len() / 2];
            let head = format!(
                "POST /events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
                 Content-Length: {}\r\n\r\n",
                body.len() / 2 + 1000
            );
            socket.write_all(head.as_bytes()).await.expect("head");
            socket.write_all(half).await.expect("half a body");
            socket.flush().await.expect("flush");
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            drop(socket);
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        assert_eq!(count(&served).await, 0);
        // The API serves on, and a body within the limit is written.
        let answer = post_json(&served, json_rows(5_000, 1), true).await;
        assert_eq!(
            answer.status,
            201,
            "{}",
            String::from_utf8_lossy(&answer.body)
        );
        assert_eq!(count(&served).await, 5_000);
        served.finish().await;
    });
}

#[test]
fn a_body_that_is_not_an_array_of_keyed_objects_is_written_as_a_small_one_is() {
    runtime().block_on(async {
        let setup = format!(
            "{}{TABLE}CREATE TABLE stamps (id serial PRIMARY KEY, at date DEFAULT '2000-01-01');",
            fixtures()
        );
        let served = Served::start("bulk_shapes", &setup, RestConfig::default())
            .await
            .expect("serve");
        // One object over the streaming threshold (a large jsonb value), and one chunked.
        let big =
            serde_json::json!({"id": 1, "kind": "big", "payload": {"s": "x".repeat(1 << 21)}});
        let big = serde_json::to_vec(&big).unwrap_or_default();
        assert!(big.len() as u64 > sluice_rest::api::STREAM_THRESHOLD);
        let small = br#" {"id": 2, "kind": "chunked"}"#.to_vec();
        for (body, chunked) in [(big, false), (small, true)] {
            let answer = post_json(&served, body, chunked).await;
            assert_eq!(
                answer.status,
                201,
                "{}",
                String::from_utf8_lossy(&answer.body)
            );
        }
        assert_eq!(count(&served).await, 2);
        // Chunked bodies without keys: an empty array writes nothing, empty objects a row of
        // defaults each, as they do with a Content-Length.
        let represent = [
            ("content-type", "application/json"),
            ("prefer", "return=representation"),
        ];
        for (body, rows) in [
            ("[]", "[]"),
            (
                "[{}, {}]",
                r#"[{"id":1,"at":"2000-01-01"},{"id":2,"at":"2000-01-01"}]"#,
            ),
            ("{}", r#"[{"id":3,"at":"2000-01-01"}]"#),
        ] {
            let answer = send(
                served.address,
                "POST",
                "/stamps",
                &represent,
                body.into(),
                true,
            )
            .await;
            assert_eq!(
                (answer.status, answer.json()),
                (201, serde_json::from_str(rows).unwrap_or_default()),
                "{body}: {}",
                String::from_utf8_lossy(&answer.body)
            );
        }
        served.finish().await;
    });
}
