//! `[influx] duplicates`: with "merge" (the default) a point written again (same measurement,
//! tag set and time, to the microsecond) is one row, its fields merged, a new non-null value
//! winning; with "keep" every point is a row.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{all_columns, count, rows, start, unique};
use sluice_influx::{Duplicates, InfluxConfig};

fn keep() -> InfluxConfig {
    InfluxConfig {
        duplicates: Duplicates::Keep,
        ..InfluxConfig::default()
    }
}

/// `SELECT <what> FROM db.table ORDER BY <order>`, each row's fields joined by `|`.
async fn select(db: &str, table: &str, what: &str, order: &str) -> Vec<String> {
    rows(&format!(
        "SELECT concat_ws('|', {what}) FROM \"{db}\".\"{table}\" ORDER BY {order}"
    ))
    .await
    .into_iter()
    .map(|r| r[0].clone().unwrap_or_default())
    .collect()
}

fn batch(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "cpu,host=h{} v={i} {}\n",
                i % 7,
                1_700_000_000_000_000_000 + i * 1000
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_batch_is_merged_or_kept() {
    let merging = start(InfluxConfig::default()).await;
    let db = unique("influx_merge_retry");
    let body = batch(500);
    for _ in 0..3 {
        let answer = merging.post(&format!("/write?db={db}"), &body).await;
        assert_eq!(answer.status, 204, "{}", answer.body);
    }
    assert_eq!(count(&db, "cpu").await, Some(500));
    assert!(
        all_columns(&db, "cpu")
            .await
            .contains(&"sluice_series:uuid".to_owned())
    );

    let keeping = start(keep()).await;
    let kept = unique("influx_keep_retry");
    for _ in 0..2 {
        let answer = keeping.post(&format!("/write?db={kept}"), &body).await;
        assert_eq!(answer.status, 204, "{}", answer.body);
    }
    assert_eq!(count(&kept, "cpu").await, Some(1000));
    assert!(
        !all_columns(&kept, "cpu")
            .await
            .contains(&"sluice_series:uuid".to_owned())
    );
    // A table keeps the way it was made: the merging server appends to the kept table.
    let answer = merging.post(&format!("/write?db={kept}"), &body).await;
    assert_eq!(answer.status, 204, "{}", answer.body);
    assert_eq!(count(&kept, "cpu").await, Some(1500));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fields_merge_and_the_last_value_wins() {
    let server = start(InfluxConfig::default()).await;
    let db = unique("influx_merge_fields");
    let path = format!("/write?db={db}");
    for body in [
        "m,host=a a=1 1000\n",
        "m,host=a b=\"x\" 1000\n",
        "m,host=a a=3 1000\n",
        // Within one body the later point wins, fields merged: a=5 (last), c=true (first).
        "m,host=a a=4,c=true 1000\nm,host=a a=5 1000\n",
    ] {
        let answer = server.post(&path, body).await;
        assert_eq!(answer.status, 204, "{body}: {}", answer.body);
    }
    assert_eq!(select(&db, "m", "host, a, b, c", "time").await, ["a|5|x|t"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_series_is_the_whole_tag_set() {
    let server = start(InfluxConfig::default()).await;
    let db = unique("influx_merge_series");
    let path = format!("/write?db={db}");
    let body = "m,a=1,b=2 v=1 1000\n\
                m,b=2,a=1 v=2 1000\n\
                m,a=1 v=3 1000\n\
                m v=4 1000\n\
                m v=5 1000\n\
                m,a=1,b=2,c=3 v=6 1000\n";
    let answer = server.post(&path, body).await;
    assert_eq!(answer.status, 204, "{}", answer.body);
    // Tag order does not matter; a missing tag is another series; no tags is one series.
    assert_eq!(
        select(&db, "m", "a, b, c, v", "v").await,
        ["1|2|2", "1|3", "5", "1|2|3|6"]
    );
    // A new tag key later: another series, the table gains a column, no index to rebuild.
    let answer = server.post(&path, "m,a=1,b=2,d=4 v=7 1000\n").await;
    assert_eq!(answer.status, 204, "{}", answer.body);
    assert_eq!(count(&db, "m").await, Some(5));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn points_apart_by_less_than_a_microsecond_are_one() {
    let server = start(InfluxConfig::default()).await;
    let db = unique("influx_merge_ns");
    let answer = server
        .post(
            &format!("/write?db={db}"),
            "m v=1 1000\nm v=2 1999\nm v=3 2000\n",
        )
        .await;
    assert_eq!(answer.status, 204, "{}", answer.body);
    assert_eq!(
        select(&db, "m", "extract(microseconds FROM time)::int, v", "time").await,
        ["1|2", "2|3"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_tags_sparse_bodies_and_jsonb_tags_merge() {
    // 40 tags: more than an index may have columns, one series id.
    let server = start(InfluxConfig::default()).await;
    let db = unique("influx_merge_wide");
    let mut line = String::from("wide");
    for k in 0..40 {
        line.push_str(&format!(",t{k}=v{k}"));
    }
    let body = format!("{line} v=1 1000\n{line} w=2 1000\n");
    for _ in 0..2 {
        let answer = server.post(&format!("/write?db={db}"), &body).await;
        assert_eq!(answer.status, 204, "{}", answer.body);
    }
    assert_eq!(select(&db, "wide", "t39, v, w", "time").await, ["v39|1|2"]);

    // A sparse body (a COPY per key set) sent twice, with duplicates inside it.
    let mut sparse = String::new();
    for i in 0..3000 {
        let k = i % 300;
        sparse.push_str(&format!("sp,k{k}=x v={i} {}\n", (i % 1500) * 1000));
    }
    for _ in 0..2 {
        let answer = server.post(&format!("/write?db={db}"), &sparse).await;
        assert_eq!(answer.status, 204, "{}", answer.body);
    }
    // (k, time) pairs: i and i + 1500 share time (i % 1500) and k (1500 % 300 = 0): 1,500.
    assert_eq!(count(&db, "sp").await, Some(1500));
    assert_eq!(select(&db, "sp", "k0, v", "time LIMIT 1").await, ["x|1500"]);

    let jsonb = start(InfluxConfig {
        tags_as_jsonb: true,
        ..InfluxConfig::default()
    })
    .await;
    let db = unique("influx_merge_jsonb");
    let body = "j,host=a v=1 1000\nj,host=b v=2 1000\nj,host=a w=3 1000\n";
    for _ in 0..2 {
        let answer = jsonb.post(&format!("/write?db={db}"), body).await;
        assert_eq!(answer.status, 204, "{}", answer.body);
    }
    assert_eq!(
        select(&db, "j", "tags->>'host', v, w", "tags->>'host'").await,
        ["a|1|3", "b|2"]
    );
}
