//! Large row bodies streamed into COPY as their frames arrive: rows cut by frame boundaries,
//! the body limit and the body timeout mid-stream, errors on late rows; nothing committed on
//! any failure.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::write_support;

use bytes::Bytes;
use serde_json::json;
use sluice_http::ServerOptions;
use sluice_http::view::model::{Endpoint, Return, Source};
use std::time::Duration;
use write_support::*;

/// Every test of this file uses this threshold (tests run in parallel in one process).
const THRESHOLD: usize = 64 * 1024;

fn streaming() {
    sluice_http::view::write::set_copy_threshold(THRESHOLD);
}

const TAGS: &str = "CREATE TABLE tags (film int, tag text, note text, added_by text,
        PRIMARY KEY (film, tag));
    INSERT INTO tags SELECT 1, 'old' || i, NULL, NULL FROM generate_series(0, 99) i;
    INSERT INTO tags SELECT 1, 't' || i, NULL, NULL FROM generate_series(0, 49) i;
    INSERT INTO tags VALUES (2, 'a', NULL, NULL);";

fn tags_endpoint() -> Endpoint {
    let mut e = endpoint(&["1", "/tags"], Return::Csj);
    let mut added_by = column("added_by");
    added_by.source = Source::Header("x-user".into());
    let mut m = method(
        "tags",
        vec![key_capture("film", 1), key("tag"), column("note"), added_by],
    );
    m.existing = Some("SELECT tag FROM tags WHERE film=$1".into());
    m.delete = Some("DELETE FROM tags WHERE film=$1 AND tag=$2".into());
    e.put = vec![m];
    e
}

/// `body` cut into frames of 1 to 13 bytes, so most rows span several frames.
fn small_frames(body: &[u8]) -> Vec<Bytes> {
    let mut frames = Vec::new();
    let mut start = 0;
    let mut size = 1;
    while start < body.len() {
        let end = (start + size).min(body.len());
        frames.push(Bytes::copy_from_slice(&body[start..end]));
        start = end;
        size = size % 13 + 1;
    }
    frames
}

#[tokio::test]
async fn a_chunked_body_in_small_frames_replaces_the_set() {
    streaming();
    let mut s = start(TAGS, vec![tags_endpoint()]).await;
    const ROWS: usize = 20_000;
    let mut body = String::from("\"tag\",\"note\"\r\n");
    for i in 0..ROWS {
        body.push_str(&format!("\"t{i}\",\"  note {i}\\t \"\r\n"));
        if i % 1000 == 0 {
            body.push('\n'); // Blank lines count as lines and are skipped.
        }
    }
    assert!(body.len() > THRESHOLD);
    let frames = small_frames(body.as_bytes());
    assert!(frames.len() > 10_000);
    let r = s
        .send_frames(
            "PUT",
            "/1/tags",
            &[("content-type", "application/csj"), ("x-user", "ann")],
            frames,
            false,
        )
        .await;
    assert_eq!(
        (r.status, r.json()),
        (
            200,
            json!({"selected": 150, "records": ROWS, "deleted": 100})
        )
    );
    assert_eq!(
        s.rows(
            "SELECT count(*), count(*) FILTER (WHERE note = 'note ' || substr(tag, 2)
                AND added_by = 'ann') FROM tags WHERE film = 1"
        )
        .await,
        [format!("{ROWS}|{ROWS}")]
    );
    assert_eq!(s.rows("SELECT tag FROM tags WHERE film = 2").await, ["a"]);
    // A chunked body under the threshold takes the pipelined path, with the same answers.
    let r = s
        .send_frames(
            "PUT",
            "/1/tags",
            &[("content-type", "application/x-ndjson")],
            small_frames(b"{\"tag\": \"t1\"}\n{\"tag\": \"x\", \"note\": \" y \"}\n"),
            false,
        )
        .await;
    assert_eq!(
        (r.status, r.json()),
        (
            200,
            json!({"selected": ROWS, "records": 2, "deleted": ROWS - 1})
        )
    );
    assert_eq!(
        s.rows("SELECT tag, note FROM tags WHERE film = 1 ORDER BY tag")
            .await,
        ["t1|note 1", "x|y"]
    );
}

const ITEMS: &str = "CREATE TABLE items (id int PRIMARY KEY, title text NOT NULL, n int);
    INSERT INTO items VALUES (1, 'one', 1);";

fn items_endpoint() -> Endpoint {
    let mut e = endpoint(&[], Return::Csj);
    let mut title = column("title");
    title.schema = Some(schema(json!({"type": "string", "maxLength": 25})));
    e.patch = Some(method("items", vec![key("id"), title, column("n")]));
    e
}

/// A CSJ body of `rows` rows (ids from 10); `bad` replaces the data row of that 0-based index.
fn items_body(rows: usize, bad: Option<(usize, &str)>) -> String {
    let mut body = String::from("\"id\",\"title\",\"n\"\n");
    for i in 0..rows {
        match bad {
            Some((at, line)) if at == i => body.push_str(line),
            _ => body.push_str(&format!("{},\"item {i}\",{i}", i + 10)),
        }
        body.push('\n');
    }
    body
}

#[tokio::test]
async fn an_error_on_a_late_row_names_it_and_commits_nothing() {
    streaming();
    let mut s = start(ITEMS, vec![items_endpoint()]).await;
    let before = s.rows("SELECT * FROM items ORDER BY id").await;
    const ROWS: usize = 100_000;
    // Data row 49,999 (0-based) is line 50,001: the header is line 1.
    let bad = 49_999;
    let body = items_body(ROWS, Some((bad, "50009,\"late\",x")));
    let r = s.csj("PATCH", "", &body).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.json()["details"], json!({"line": 50_001, "column": 14}));
    assert!(
        r.json()["message"]
            .as_str()
            .unwrap()
            .contains("line 50001, column 14"),
        "{}",
        r.body
    );
    // The same body chunked (997-byte frames cut rows): the same place.
    let frames: Vec<Bytes> = body
        .as_bytes()
        .chunks(997)
        .map(Bytes::copy_from_slice)
        .collect();
    let r = s.csj_frames("PATCH", "", frames, false).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.json()["details"], json!({"line": 50_001, "column": 14}));
    // A late row against the column schema: 422 with [row, column].
    let long = format!("50009,\"{}\",1", "x".repeat(30));
    let r = s
        .csj("PATCH", "", &items_body(ROWS, Some((bad, &long))))
        .await;
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(r.json()["details"]["path"], json!([bad, "title"]));
    // A late row PostgreSQL refuses (not an integer): 400 with its SQLSTATE.
    let r = s
        .csj(
            "PATCH",
            "",
            &items_body(ROWS, Some((bad, "50009,\"late\",\"soon\""))),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.json()["code"], "22P02");
    // A late row repeating a key: 400 duplicate_key.
    let r = s
        .csj(
            "PATCH",
            "",
            &items_body(ROWS, Some((bad, "10,\"again\",1"))),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.json()["code"], "duplicate_key");
    assert_eq!(s.rows("SELECT * FROM items ORDER BY id").await, before);
    // The connections went back to the pool clean: the whole body is written.
    let r = s.csj("PATCH", "", &items_body(ROWS, None)).await;
    assert_eq!((r.status, r.json()), (200, json!({"records": ROWS})));
    assert_eq!(
        s.rows("SELECT count(*), sum(n) FROM items").await,
        [format!("{}|{}", ROWS + 1, ROWS * (ROWS - 1) / 2 + 1)]
    );
}

#[tokio::test]
async fn the_body_limit_is_answered_413_mid_stream_and_nothing_is_committed() {
    streaming();
    let options = ServerOptions {
        body_limit: 1 << 20,
        ..ServerOptions::default()
    };
    let mut s = start_with(ITEMS, vec![items_endpoint()], options).await;
    let before = s.rows("SELECT * FROM items ORDER BY id").await;
    // Good rows in 4 KiB frames, no Content-Length: the limit exactly, then one byte more;
    // then the client waits. (Sending on after the answer would have the closing server reset
    // the connection, and the client lose the answer.)
    let body = items_body(100_000, None);
    let mut frames: Vec<Bytes> = body
        .as_bytes()
        .chunks(4096)
        .take((1 << 20) / 4096)
        .map(Bytes::copy_from_slice)
        .collect();
    frames.push(Bytes::from_static(b"9"));
    let r = s.csj_frames("PATCH", "", frames, true).await;
    assert_eq!(r.status, 413, "{}", r.body);
    assert_eq!(r.json()["code"], "bad_body");
    assert_eq!(s.rows("SELECT * FROM items ORDER BY id").await, before);
    // The pool's connections still work.
    let r = s.csj("PATCH", "", &items_body(10_000, None)).await;
    assert_eq!((r.status, r.json()), (200, json!({"records": 10_000})));
}

#[tokio::test]
async fn a_body_that_stalls_mid_stream_is_answered_408_and_nothing_is_committed() {
    streaming();
    let options = ServerOptions {
        body_timeout: Duration::from_millis(300),
        ..ServerOptions::default()
    };
    let mut s = start_with(ITEMS, vec![items_endpoint()], options).await;
    let before = s.rows("SELECT * FROM items ORDER BY id").await;
    let body = items_body(20_000, None);
    // Past the threshold (so rows are in the COPY), then silence.
    let frames = vec![Bytes::copy_from_slice(&body.as_bytes()[..2 * THRESHOLD])];
    let r = s.csj_frames("PATCH", "", frames, true).await;
    assert_eq!(r.status, 408, "{}", r.body);
    assert_eq!(s.rows("SELECT * FROM items ORDER BY id").await, before);
}

const PAIRS: &str = "CREATE TABLE names (id int PRIMARY KEY, title text NOT NULL);
    CREATE TABLE counts (id int PRIMARY KEY, n int NOT NULL);
    INSERT INTO counts SELECT i, 0 FROM generate_series(100000, 100099) i;";

/// One PUT through two method objects: `names` upserted, `counts` set-replaced.
fn pairs_endpoint() -> Endpoint {
    let mut e = endpoint(&[], Return::Csj);
    let names = method("names", vec![key("id"), column("title")]);
    let mut counts = method("counts", vec![key("id"), column("n")]);
    counts.existing = Some("SELECT id FROM counts".into());
    counts.delete = Some("DELETE FROM counts WHERE id=$1".into());
    e.put = vec![names, counts];
    e
}

#[tokio::test]
async fn a_large_body_for_several_method_objects_is_spooled_and_written_by_each() {
    streaming();
    let mut s = start(PAIRS, vec![pairs_endpoint()]).await;
    const ROWS: usize = 10_000;
    let body = |bad: Option<usize>| {
        let mut body = String::from("\"id\",\"title\",\"n\"\n");
        for i in 0..ROWS {
            match bad {
                Some(at) if at == i => body.push_str(&format!("{i},\"name {i}\",\"many\"\n")),
                _ => body.push_str(&format!("{i},\"name {i}\",{i}\n")),
            }
        }
        body
    };
    // A bad `n` in the last row fails the second object's COPY: nothing of the first stays.
    let bad = body(Some(ROWS - 1));
    assert!(bad.len() > THRESHOLD);
    let r = s
        .csj_frames("PUT", "/", small_frames(bad.as_bytes()), false)
        .await;
    assert_eq!(
        (r.status, &r.json()["code"]),
        (400, &json!("22P02")),
        "{}",
        r.body
    );
    assert_eq!(s.rows("SELECT count(*) FROM names").await, ["0"]);
    assert_eq!(s.rows("SELECT count(*) FROM counts").await, ["100"]);
    let good = body(None);
    let r = s
        .csj_frames("PUT", "/", small_frames(good.as_bytes()), false)
        .await;
    assert_eq!(
        (r.status, r.json()),
        (
            200,
            json!({"selected": 100, "records": ROWS, "deleted": 100})
        )
    );
    assert_eq!(
        s.rows(
            "SELECT count(*), count(*) FILTER (WHERE title = 'name ' || id),
                (SELECT count(*) FROM counts WHERE n = id) FROM names"
        )
        .await,
        [format!("{ROWS}|{ROWS}|{ROWS}")]
    );
}
