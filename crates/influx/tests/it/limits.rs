//! Every error the request's content causes is a 4xx with a clear message (Telegraf and the
//! InfluxDB clients retry 5xx forever): PostgreSQL's column and row limits, the column limit
//! of the write API, long and reserved names; the measurement keeps taking what fits.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{columns, count, rows, start, unique};
use sluice_influx::InfluxConfig;

fn with_max_columns(max_columns_per_table: usize) -> InfluxConfig {
    InfluxConfig {
        max_columns_per_table,
        ..InfluxConfig::default()
    }
}

/// One point with `n` distinct tag keys.
fn wide_tags(measurement: &str, n: usize, time: i64) -> String {
    let mut line = measurement.to_owned();
    for k in 0..n {
        line.push_str(&format!(",t{k}=v"));
    }
    line.push_str(&format!(" f=1 {time}\n"));
    line
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_column_limit_is_a_400_that_names_tags_as_jsonb() {
    let server = start(InfluxConfig::default()).await;
    let db = unique("influx_cols");
    let path = format!("/write?db={db}");
    assert_eq!(server.post(&path, "m,host=a f=1 1\n").await.status, 204);
    // 600 tag keys: beyond the default of 500 columns.
    let body = format!("{}m,host=b f=2 3\n", wide_tags("m", 600, 2));
    for (path, status) in [
        (path.clone(), 400),
        (format!("/api/v2/write?bucket={db}"), 422),
    ] {
        let answer = server.post(&path, &body).await;
        assert_eq!(answer.status, status, "{}", answer.body);
        let message = answer.json()["message"].as_str().unwrap().to_owned();
        assert!(message.contains("max_columns_per_table (500)"), "{message}");
        assert!(message.contains("tags_as_jsonb"), "{message}");
        assert!(message.ends_with("dropped=1"), "{message}");
    }
    // The point with known keys was written each time (the same point: one row); the table
    // did not grow.
    assert_eq!(count(&db, "m").await, Some(2));
    assert_eq!(columns(&db, "m").await.len(), 3);
    // All or nothing: the whole body is refused with the same message.
    let answer = server
        .post(&format!("{path}&accept_partial=false"), &body)
        .await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert!(answer.body.contains("tags_as_jsonb"), "{}", answer.body);
    assert_eq!(count(&db, "m").await, Some(2));
    // tags_as_jsonb takes them.
    let jsonb = start(InfluxConfig {
        tags_as_jsonb: true,
        ..InfluxConfig::default()
    })
    .await;
    let answer = jsonb
        .post(&format!("/write?db={}", unique("influx_cols_jsonb")), &body)
        .await;
    assert_eq!(answer.status, 204, "{}", answer.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_new_tag_keys_in_a_small_body_are_a_400() {
    let server = start(InfluxConfig::default()).await;
    let db = unique("influx_keys");
    let mut body = String::new();
    for k in 0..10_000 {
        body.push_str(&format!("m,key{k}=v f=1 {k}\n"));
    }
    assert!(body.len() < 250_000);
    let answer = server.post(&format!("/write?db={db}"), &body).await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert!(
        answer.body.contains("max_columns_per_table"),
        "{}",
        answer.body
    );
    // Every point brings a new key and the keys together exceed the limit: none is written.
    assert_eq!(count(&db, "m").await, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgresqls_column_limit_is_a_400() {
    let server = start(with_max_columns(5000)).await;
    let db = unique("influx_54011");
    let path = format!("/write?db={db}");
    let body = format!("{}ok f=1 1\n", wide_tags("m", 1700, 1));
    let answer = server.post(&path, &body).await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    let message = answer.json()["error"].as_str().unwrap().to_owned();
    assert!(message.contains("(1600)"), "{message}");
    assert!(message.contains("tags_as_jsonb"), "{message}");
    assert!(message.ends_with("dropped=1"), "{message}");
    assert_eq!(count(&db, "m").await, None);
    assert_eq!(count(&db, "ok").await, Some(1));
    let answer = server
        .post(&format!("{path}&accept_partial=false"), &body)
        .await;
    assert_eq!(answer.status, 400, "{}", answer.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_too_large_for_postgresql_is_a_400() {
    let server = start(with_max_columns(1600)).await;
    let db = unique("influx_54000");
    // 1,100 int8 fields: 8.8 kB, more than a heap page holds.
    let mut line = String::from("wide ");
    for k in 0..1100 {
        if k > 0 {
            line.push(',');
        }
        line.push_str(&format!("f{k}={k}i"));
    }
    line.push_str(" 1\nok f=1 1\n");
    let answer = server.post(&format!("/write?db={db}"), &line).await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    let message = answer.json()["error"].as_str().unwrap().to_owned();
    assert!(message.contains("too large for PostgreSQL"), "{message}");
    assert!(message.contains("row is too big"), "{message}");
    assert_eq!(count(&db, "ok").await, Some(1));
    assert_eq!(count(&db, "wide").await.unwrap_or(0), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_and_reserved_names() {
    let server = start(InfluxConfig::default()).await;
    let db = unique("influx_names");
    let path = format!("/write?db={db}");
    let long = "x".repeat(64);
    for body in [
        format!("{long} v=1 1\n"),
        format!("m {long}=1 1\n"),
        format!("m,{long}=a v=1 1\n"),
    ] {
        let answer = server.post(&path, &body).await;
        assert_eq!(answer.status, 400, "{body}: {}", answer.body);
        assert!(answer.body.contains("63 bytes"), "{}", answer.body);
    }
    let answer = server.post(&format!("/write?db={long}"), "m v=1 1\n").await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    // PostgreSQL's reserved schema prefix.
    let answer = server.post("/write?db=pg_metrics", "m v=1 1\n").await;
    assert_eq!(answer.status, 403, "{}", answer.body);
    // System column names are stored under another name, never dropped.
    let answer = server
        .post(&path, "sys,ctid=a,host=h xmin=1i,cmax=\"c\",v=2 1\n")
        .await;
    assert_eq!(answer.status, 204, "{}", answer.body);
    assert_eq!(
        columns(&db, "sys").await,
        [
            "time:timestamp with time zone",
            "ctid_tag:text",
            "host:text",
            "xmin_field:bigint",
            "cmax_field:text",
            "v:double precision"
        ]
    );
    let got = rows(&format!(
        "SELECT ctid_tag, xmin_field, cmax_field FROM \"{db}\".sys"
    ))
    .await;
    assert_eq!(
        got,
        [vec![Some("a".into()), Some("1".into()), Some("c".into())]]
    );
    // `time` as a tag and as a field (issue 19): kept under another name, never dropped.
    let answer = server
        .post(&path, "tm,tag0=v0,time=v0 value=1,time=5i 7\n")
        .await;
    assert_eq!(answer.status, 204, "{}", answer.body);
    assert_eq!(
        columns(&db, "tm").await,
        [
            "time:timestamp with time zone",
            "tag0:text",
            "time_tag:text",
            "value:double precision",
            "time_field:bigint"
        ]
    );
    let got = rows(&format!(
        "SELECT time_tag, time_field, extract(epoch FROM time)::int8 FROM \"{db}\".tm"
    ))
    .await;
    assert_eq!(
        got,
        [vec![Some("v0".into()), Some("5".into()), Some("0".into())]]
    );
    // A key that is both a tag and a field of one point.
    let answer = server.post(&path, "both,host=a host=\"b\" 1\n").await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert!(
        answer.body.contains("both a tag and a field"),
        "{}",
        answer.body
    );
}
