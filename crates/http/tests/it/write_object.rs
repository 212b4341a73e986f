//! Writes of `return: "object"` endpoints: PUT, PATCH and POST of one JSON object, answered with
//! a row as a JSON object; their errors; the body limit.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::write_support;

use serde_json::json;
use sluice_http::ServerOptions;
use sluice_http::view::model::{Endpoint, Return, Source};
use write_support::*;

const FILMS: &str = "CREATE TABLE films (id serial PRIMARY KEY, title text NOT NULL UNIQUE,
        watched_last date, rating numeric, seen bool);
    INSERT INTO films (title) VALUES ('Metropolis');
    SELECT setval('films_id_seq', 100);";

const GET_FILM: &str =
    "SELECT id, title, watched_last AS watched__last, rating, seen FROM films WHERE id=$1";

fn film_endpoint() -> Endpoint {
    let mut e = endpoint(&["1"], Return::Object);
    e.get = get(GET_FILM, &[1]);
    let mut last = column("watched_last");
    last.source = body_path(&["watched", "last"]);
    let mut m = method(
        "films",
        vec![
            key_capture("id", 1),
            column("title"),
            last,
            column("rating"),
            column("seen"),
        ],
    );
    m.schema = Some(schema(json!({
        "type": "object",
        "properties": {"rating": {"type": "number", "minimum": 0, "maximum": 10}}
    })));
    e.put = vec![m.clone()];
    e.patch = Some(m);
    e
}

fn films_post() -> Endpoint {
    let mut e = endpoint(&[], Return::Object);
    let mut m = method("films", vec![column("title"), column("rating")]);
    m.returning = vec!["id".into(), "title".into()];
    e.post = vec![m];
    e
}

#[tokio::test]
async fn put_patch_post() {
    let mut s = start(FILMS, vec![film_endpoint(), films_post()]).await;
    // PUT upserts and answers with the GET re-run inside the transaction.
    let r = s
        .json(
            "PUT",
            "/2",
            json!({"title": " Nosferatu ", "watched": {"last": "2024-01-02"}, "rating": 8.5}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.json(),
        json!({"id": 2, "title": "Nosferatu", "watched": {"last": "2024-01-02"}, "rating": 8.5, "seen": null})
    );
    // PATCH changes only what it is given.
    let r = s.json("PATCH", "/2", json!({"seen": true})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["seen"], true);
    assert_eq!(r.json()["title"], "Nosferatu");
    // PATCH of a row that does not exist: 404, nothing inserted.
    let r = s.json("PATCH", "/9", json!({"title": "Faust"})).await;
    assert_eq!(r.status, 404, "{}", r.body);
    // POST inserts and answers 201 with the returning columns.
    let r = s
        .json("POST", "", json!({"title": "Faust", "rating": 7}))
        .await;
    assert_eq!(
        (r.status, r.json()),
        (201, json!({"id": 101, "title": "Faust"}))
    );
    assert_eq!(
        s.rows("SELECT id, title, rating, seen FROM films ORDER BY id")
            .await,
        ["1|Metropolis|-|-", "2|Nosferatu|8.5|t", "101|Faust|7|-"]
    );
}

#[tokio::test]
async fn object_errors() {
    let mut s = start(FILMS, vec![film_endpoint(), films_post()]).await;
    let before = s.rows("SELECT * FROM films ORDER BY id").await;
    // The row schema: 422 with the path in the object.
    let r = s
        .json("PUT", "/1", json!({"title": "M", "rating": 11}))
        .await;
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(r.json()["details"]["path"], json!(["rating"]));
    // A unique violation: 409.
    let r = s.json("POST", "", json!({"title": "Metropolis"})).await;
    assert_eq!(r.status, 409, "{}", r.body);
    // Bad input: 400.
    let r = s
        .json(
            "PUT",
            "/1",
            json!({"title": "M", "watched": {"last": "someday"}}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    // Not a JSON object: 400 naming line and column.
    let r = s
        .send(
            "PUT",
            "/1",
            &[("content-type", "application/json")],
            "{\n \"title\": }",
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.json()["details"], json!({"line": 2, "column": 11}));
    assert_eq!(s.rows("SELECT * FROM films ORDER BY id").await, before);
}

#[tokio::test]
async fn body_limit_and_headers() {
    let setup = "CREATE TABLE notes (id int PRIMARY KEY, body text, author text)";
    let mut e = endpoint(&["1"], Return::Object);
    let mut author = column("author");
    author.source = Source::Header("X-User".into());
    let mut body = column("body");
    body.trim = false;
    let mut m = method("notes", vec![key_capture("id", 1), body, author]);
    m.returning = vec!["id".into(), "body".into(), "author".into()];
    e.put = vec![m];
    let options = ServerOptions {
        body_limit: 64,
        ..ServerOptions::default()
    };
    let mut s = start_with(setup, vec![e], options).await;
    let r = s
        .send(
            "PUT",
            "/1",
            &[("content-type", "application/json"), ("x-user", "ann")],
            json!({"body": "  spaced  "}).to_string(),
        )
        .await;
    assert_eq!(
        (r.status, r.json()),
        (200, json!({"id": 1, "body": "  spaced  ", "author": "ann"}))
    );
    let r = s.json("PUT", "/2", json!({"body": "x".repeat(100)})).await;
    assert_eq!(r.status, 413, "{}", r.body);
    assert_eq!(s.rows("SELECT id FROM notes").await, ["1"]);
}
