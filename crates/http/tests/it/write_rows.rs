//! Writes of row bodies on the pipelined path (bodies under the COPY threshold).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::write_support;

use write_support::scenarios;

#[tokio::test]
async fn set_replace_put() {
    scenarios::set_replace_put().await;
}

#[tokio::test]
async fn patch_upserts() {
    scenarios::patch_upserts().await;
}

#[tokio::test]
async fn errors_commit_nothing() {
    scenarios::errors_commit_nothing().await;
}

#[tokio::test]
async fn method_arrays() {
    scenarios::method_arrays().await;
}

/// A body over the default COPY threshold (512 KiB) takes the COPY path with default settings.
#[tokio::test]
async fn large_body_over_the_threshold() {
    let setup = "CREATE TABLE big (grp int, id int, note text, PRIMARY KEY (grp, id));
        INSERT INTO big SELECT 7, g, 'old' FROM generate_series(0, 29999) g;";
    let mut e = write_support::endpoint(&["1"], sluice_http::view::model::Return::Csj);
    let mut m = write_support::method(
        "big",
        vec![
            write_support::key_capture("grp", 1),
            write_support::key("id"),
            write_support::column("note"),
        ],
    );
    m.existing = Some("SELECT id FROM big WHERE grp = $1".into());
    m.delete = Some("DELETE FROM big WHERE grp = $1 AND id = $2".into());
    e.put = vec![m];
    let mut s = write_support::start(setup, vec![e]).await;
    // Rows 10000..40000: 20000 kept and rewritten, 10000 new, 10000 deleted.
    let mut body = String::from("\"id\",\"note\"\n");
    for i in 10_000..40_000 {
        body.push_str(&format!(
            "{i},\"note\\tnumber {i} with some padding to pass the threshold\"\n"
        ));
    }
    assert!(body.len() > sluice_http::view::write::copy_threshold());
    let r = s.csj("PUT", "/7", &body).await;
    assert_eq!(
        (r.status, r.json()),
        (
            200,
            serde_json::json!({"selected": 30000, "records": 30000, "deleted": 10000})
        )
    );
    assert_eq!(
        s.rows("SELECT count(*), min(id), max(id), count(*) FILTER (WHERE note = 'old') FROM big")
            .await,
        ["30000|10000|39999|0"]
    );
    assert_eq!(
        s.rows("SELECT note FROM big WHERE id = 12345").await,
        ["note\tnumber 12345 with some padding to pass the threshold"]
    );
}

/// A bad value deep in a large body fails the COPY mid-stream: 400, nothing committed, and the
/// server's connections still serve the next request.
#[tokio::test]
async fn large_body_failing_mid_copy() {
    let setup = "CREATE TABLE big (id int PRIMARY KEY, amount int)";
    let mut e = write_support::endpoint(&[], sluice_http::view::model::Return::Csj);
    e.patch = Some(write_support::method(
        "big",
        vec![write_support::key("id"), write_support::column("amount")],
    ));
    let mut s = write_support::start(setup, vec![e]).await;
    let mut body = String::from("\"id\",\"amount\"\n");
    for i in 0..60_000 {
        let amount = if i == 55_000 {
            "\"many\"".to_owned()
        } else {
            i.to_string()
        };
        body.push_str(&format!("{i},{amount}\n"));
    }
    assert!(body.len() > sluice_http::view::write::copy_threshold());
    for _ in 0..3 {
        let r = s.csj("PATCH", "", &body).await;
        assert_eq!(r.status, 400, "{}", r.body);
        assert_eq!(r.json()["code"], "22P02");
    }
    assert_eq!(s.rows("SELECT count(*) FROM big").await, ["0"]);
    let r = s.csj("PATCH", "", "\"id\",\"amount\"\n1,2\n").await;
    assert_eq!(
        (r.status, r.json()),
        (200, serde_json::json!({"records": 1}))
    );
}
