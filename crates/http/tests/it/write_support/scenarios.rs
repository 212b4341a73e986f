//! Row-body write scenarios, run by `write_rows` (rows pipelined) and `write_copy` (every body
//! through COPY): the two paths must agree.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use super::*;
use serde_json::json;

const FILM_TAGS: &str = "CREATE TABLE film_tags (film int, tag text, PRIMARY KEY (film, tag));
    INSERT INTO film_tags VALUES (1, 'a'), (1, 'b'), (2, 'a');";

fn tags_endpoint() -> Endpoint {
    let mut e = endpoint(&["1", "/tags"], Return::Csj);
    let mut m = method("film_tags", vec![key_capture("film", 1), key("tag")]);
    m.existing = Some("SELECT tag FROM film_tags WHERE film=$1".into());
    m.delete = Some("DELETE FROM film_tags WHERE film=$1 AND tag=$2".into());
    e.put = vec![m];
    e
}

pub async fn set_replace_put() {
    let mut s = start(FILM_TAGS, vec![tags_endpoint()]).await;
    let r = s.csj("PUT", "/1/tags", "\"tag\"\n\"b\"\n\" c \"\n").await;
    assert_eq!(
        (r.status, r.json()),
        (200, json!({"selected": 2, "records": 2, "deleted": 1}))
    );
    assert_eq!(
        s.rows("SELECT film, tag FROM film_tags ORDER BY 1, 2")
            .await,
        ["1|b", "1|c", "2|a"]
    );
    // An empty set deletes everything of film 1 and nothing else.
    let r = s.csj("PUT", "/1/tags", "\"tag\"\n").await;
    assert_eq!(
        (r.status, r.json()),
        (200, json!({"selected": 2, "records": 0, "deleted": 2}))
    );
    assert_eq!(
        s.rows("SELECT film, tag FROM film_tags ORDER BY 1, 2")
            .await,
        ["2|a"]
    );
    // JSON Lines bodies too; a repeated all-key row changes nothing.
    let r = s
        .send(
            "PUT",
            "/2/tags",
            &[("content-type", "application/x-ndjson")],
            "{\"tag\": \"x\"}\n{\"tag\": \"x\"}\n",
        )
        .await;
    assert_eq!(
        (r.status, r.json()),
        (200, json!({"selected": 1, "records": 2, "deleted": 1}))
    );
    assert_eq!(
        s.rows("SELECT film, tag FROM film_tags ORDER BY 1, 2")
            .await,
        ["2|x"]
    );
}

const FILMS: &str = "CREATE TABLE films (id int PRIMARY KEY, title text NOT NULL, year int,
        meta jsonb, added_by text);
    INSERT INTO films VALUES (1, 'Metropolis', 1927, NULL, NULL);";

fn films_endpoint() -> Endpoint {
    let mut e = endpoint(&[], Return::Csj);
    let mut year = column("year");
    year.insert_required = true;
    let mut added_by = column("added_by");
    added_by.source = Source::Header("x-user".into());
    let mut title = column("title");
    title.schema = Some(schema(json!({"type": ["string", "null"], "maxLength": 25})));
    let m = method(
        "films",
        vec![key("id"), title, year, column("meta"), added_by],
    );
    e.patch = Some(m.clone());
    e.put = vec![m.clone()];
    e.post = vec![m];
    e
}

pub async fn patch_upserts() {
    let mut s = start(FILMS, vec![films_endpoint()]).await;
    let body = "\"id\",\"title\",\"year\",\"meta\"\n\
                1,\" Metropolis (restored) \",1927,{\"rating\": 5}\n\
                2,\"Nosferatu\",1922,null\n";
    let r = s
        .send(
            "PATCH",
            "",
            &[("content-type", "text/plain"), ("x-user", "ann")],
            body,
        )
        .await;
    assert_eq!((r.status, r.json()), (200, json!({"records": 2})));
    assert_eq!(
        s.rows("SELECT id, title, year, meta, added_by FROM films ORDER BY id")
            .await,
        [
            "1|Metropolis (restored)|1927|{\"rating\": 5}|ann",
            "2|Nosferatu|1922|-|ann"
        ]
    );
    // A row without the insert-required year is an update: id 3 does not exist, so nothing is
    // inserted; an all-whitespace title is absent, so id 2 keeps its title.
    let body =
        "{\"id\": 3, \"title\": \"Faust\"}\n{\"id\": 2, \"title\": \"  \", \"meta\": [1, 2]}\n";
    let r = s
        .send(
            "PATCH",
            "",
            &[("content-type", "application/x-ndjson")],
            body,
        )
        .await;
    assert_eq!((r.status, r.json()), (200, json!({"records": 2})));
    assert_eq!(
        s.rows("SELECT id, title, year, meta FROM films ORDER BY id")
            .await,
        [
            "1|Metropolis (restored)|1927|{\"rating\": 5}",
            "2|Nosferatu|1922|[1, 2]"
        ]
    );
}

/// Every failure leaves the table as it was.
pub async fn errors_commit_nothing() {
    let mut s = start(FILMS, vec![films_endpoint()]).await;
    let before = s.rows("SELECT * FROM films ORDER BY id").await;
    let header = "\"id\",\"title\",\"year\"\n";
    // Bad input for an integer column: 400, the first row not kept.
    let r = s
        .csj(
            "PATCH",
            "",
            &format!("{header}5,\"A\",1\n6,\"B\",\"soon\"\n"),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.json()["code"], "22P02");
    // NOT NULL violation: 400.
    let r = s
        .csj("PATCH", "", &format!("{header}5,\"A\",1\n7,null,1\n"))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    // Unique violation on POST: 409.
    let r = s
        .csj("POST", "", &format!("{header}5,\"A\",1\n1,\"again\",1\n"))
        .await;
    assert_eq!(r.status, 409, "{}", r.body);
    assert_eq!(r.json()["code"], "23505");
    // A key without a value: 422 naming it with [row, column].
    let r = s
        .csj("PATCH", "", &format!("{header}5,\"A\",1\n\" \",\"B\",2\n"))
        .await;
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(r.json()["details"]["path"], json!([1, "id"]));
    assert!(r.json()["message"].as_str().unwrap().contains("\"id\""));
    // A column schema: 422 with [row, column].
    let r = s
        .csj(
            "PATCH",
            "",
            &format!("{header}5,\"A\",1\n6,\"{}\",2\n", "x".repeat(30)),
        )
        .await;
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(r.json()["details"]["path"], json!([1, "title"]));
    // A body that does not parse: 400 with line and column.
    let r = s
        .csj("PATCH", "", &format!("{header}5,\"A\",1\n6,\"B\",2x\n"))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.json()["details"]["line"], 3);
    assert!(
        r.json()["message"]
            .as_str()
            .unwrap()
            .contains("line 3, column")
    );
    // The same key twice with other values: 400.
    let r = s
        .csj("PATCH", "", &format!("{header}5,\"A\",1\n5,\"B\",2\n"))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.json()["code"], "duplicate_key");
    // ... also when the two rows have different columns (JSON Lines).
    let r = s
        .send(
            "PATCH",
            "",
            &[("content-type", "application/x-ndjson")],
            "{\"id\": 5, \"title\": \"A\", \"year\": 1}\n{\"id\": 5, \"year\": 2}\n",
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.json()["code"], "duplicate_key");
    assert_eq!(s.rows("SELECT * FROM films ORDER BY id").await, before);
}

/// A PUT of several method objects applies them in order in one transaction.
pub async fn method_arrays() {
    let setup = "CREATE TABLE people (name text PRIMARY KEY, age int);
        CREATE TABLE audit (name text PRIMARY KEY, note text REFERENCES people(name));";
    let mut e = endpoint(&["/people"], Return::Csj);
    let mut note = column("note");
    note.source = Source::Field("name".into());
    e.put = vec![
        method("people", vec![key("name"), column("age")]),
        method("audit", vec![key("name"), note]),
    ];
    let mut s = start(setup, vec![e]).await;
    let r = s
        .csj(
            "PUT",
            "/people",
            "\"name\",\"age\"\n\"ann\",30\n\"bob\",null\n",
        )
        .await;
    assert_eq!((r.status, r.json()), (200, json!({"records": 2})));
    assert_eq!(
        s.rows("SELECT p.name, p.age, a.note FROM people p JOIN audit a USING (name) ORDER BY 1")
            .await,
        ["ann|30|ann", "bob|-|bob"]
    );
}
