//! Retention: tables of a database with a retention are range partitioned by day, partitions
//! made as points need them (and ahead by the retention pass), points beyond the retention
//! refused, old partitions dropped whole; tables made without partitions keep working.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{count, rows, start, unique, value};
use sluice_influx::InfluxConfig;
use std::time::Duration;

const DAY_NS: i64 = 86_400_000_000_000;

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap()
}

fn days(n: u64) -> Option<Duration> {
    Some(Duration::from_secs(n * 86_400))
}

fn retaining(retention: Option<Duration>) -> InfluxConfig {
    InfluxConfig {
        retention,
        ..InfluxConfig::default()
    }
}

/// The partitions of `db.table`, as `name` in name order.
async fn partitions(db: &str, table: &str) -> Vec<String> {
    rows(&format!(
        "SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid \
         WHERE i.inhparent = '\"{db}\".\"{table}\"'::regclass ORDER BY 1"
    ))
    .await
    .into_iter()
    .map(|r| r[0].clone().unwrap())
    .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_are_partitioned_by_day_and_writes_cross_boundaries() {
    let server = start(retaining(days(30))).await;
    let db = unique("influx_ret_parts");
    let today = now_ns().div_euclid(DAY_NS) * DAY_NS;
    // The last microsecond of yesterday and the first of today, and a point of 3 days ago.
    let body = format!(
        "cpu,host=a v=1 {}\ncpu,host=a v=2 {}\ncpu,host=b v=3 {}\n",
        today - 1000,
        today,
        today - 3 * DAY_NS + 5_000
    );
    let answer = server.post(&format!("/write?db={db}"), &body).await;
    assert_eq!(answer.status, 204, "{}", answer.body);
    assert_eq!(
        value(&format!(
            "SELECT relkind::text FROM pg_class WHERE oid = '\"{db}\".cpu'::regclass"
        ))
        .await
        .as_deref(),
        Some("p")
    );
    let parts = partitions(&db, "cpu").await;
    assert_eq!(parts.len(), 3, "{parts:?}");
    assert!(parts.iter().all(|p| p.starts_with("cpu_p")), "{parts:?}");
    assert_eq!(count(&db, "cpu").await, Some(3));
    // Each row in the partition of its day.
    let placed = rows(&format!(
        "SELECT tableoid::regclass::text, v FROM \"{db}\".cpu ORDER BY time"
    ))
    .await;
    assert_ne!(placed[1][0], placed[2][0]);
    // Merging works across the partitioned table (its unique index covers them all).
    let answer = server.post(&format!("/write?db={db}"), &body).await;
    assert_eq!(answer.status, 204, "{}", answer.body);
    assert_eq!(count(&db, "cpu").await, Some(3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn points_beyond_the_retention_are_refused() {
    let server = start(retaining(days(7))).await;
    let db = unique("influx_ret_old");
    let now = now_ns();
    let body = format!(
        "cpu v=1 {}\ncpu v=2 {}\ncpu v=3 {}\n",
        now - 8 * DAY_NS,
        now - 9 * DAY_NS,
        now - DAY_NS
    );
    let answer = server.post(&format!("/write?db={db}"), &body).await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    let error = answer.json()["error"].as_str().unwrap().to_owned();
    assert!(
        error.starts_with("partial write: points beyond retention policy: 2 points"),
        "{error}"
    );
    assert!(error.ends_with("dropped=2"), "{error}");
    assert!(error.contains("168h0m0s"), "{error}");
    assert_eq!(count(&db, "cpu").await, Some(1));
    assert_eq!(partitions(&db, "cpu").await.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_retention_pass_drops_old_partitions_and_makes_the_next_ones() {
    let db = unique("influx_ret_drop");
    // Written while the database keeps a year: points of 10, 5 and 1 days ago.
    let long = start(InfluxConfig {
        database_retention: [(db.clone(), days(365))].into_iter().collect(),
        ..retaining(days(2))
    })
    .await;
    let now = now_ns();
    let body = format!(
        "cpu v=10 {}\ncpu v=5 {}\ncpu v=1 {}\n",
        now - 10 * DAY_NS,
        now - 5 * DAY_NS,
        now - DAY_NS
    );
    let answer = long.post(&format!("/write?db={db}"), &body).await;
    assert_eq!(answer.status, 204, "{}", answer.body);
    assert_eq!(partitions(&db, "cpu").await.len(), 3);

    // Now the database keeps 3 days: the pass drops the partitions of 10 and 5 days ago.
    let short = sluice_influx::InfluxApi::new(
        sluice_pg::Pool::connect(common::url(), sluice_pg::PoolSettings::new()).unwrap(),
        InfluxConfig {
            database_retention: [(db.clone(), days(3))].into_iter().collect(),
            ..InfluxConfig::default()
        },
    );
    let pass = short.enforce_retention().await.unwrap();
    let dropped: Vec<&String> = pass
        .dropped
        .iter()
        .filter(|p| p.starts_with(&format!("{db}.")))
        .collect();
    assert_eq!(dropped.len(), 2, "{:?}", pass.dropped);
    assert_eq!(
        value(&format!(
            "SELECT string_agg(v::text, ',') FROM \"{db}\".cpu"
        ))
        .await
        .as_deref(),
        Some("1")
    );
    // Today's and tomorrow's partitions exist ahead of the data.
    let parts = partitions(&db, "cpu").await;
    assert_eq!(parts.len(), 3, "{parts:?}");
    // A second pass has nothing to do for this table.
    let again = short.enforce_retention().await.unwrap();
    assert!(
        !again
            .dropped
            .iter()
            .any(|p| p.starts_with(&format!("{db}.")))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_without_partitions_keep_working() {
    let db = unique("influx_ret_plain");
    let plain = start(InfluxConfig::default()).await;
    assert_eq!(
        plain
            .post(&format!("/write?db={db}"), "cpu v=1 1000\n")
            .await
            .status,
        204
    );
    let retaining = start(retaining(days(30))).await;
    let answer = retaining
        .post(
            &format!("/write?db={db}"),
            &format!("cpu v=2 {}\n", now_ns()),
        )
        .await;
    assert_eq!(answer.status, 204, "{}", answer.body);
    assert_eq!(count(&db, "cpu").await, Some(2));
    assert!(partitions(&db, "cpu").await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partitioned_tables_keep_taking_writes_once_the_retention_is_lifted() {
    let db = unique("influx_ret_lifted");
    let retaining = start(retaining(days(30))).await;
    let now = now_ns();
    let answer = retaining
        .post(&format!("/write?db={db}"), &format!("cpu v=1 {now}\n"))
        .await;
    assert_eq!(answer.status, 204, "{}", answer.body);
    // Without a retention the table stays partitioned: a point of 40 days ago needs (and
    // gets) its day's partition.
    let forever = start(InfluxConfig::default()).await;
    let answer = forever
        .post(
            &format!("/write?db={db}"),
            &format!("cpu v=2 {}\n", now - 40 * DAY_NS),
        )
        .await;
    assert_eq!(answer.status, 204, "{}", answer.body);
    assert_eq!(count(&db, "cpu").await, Some(2));
    assert_eq!(partitions(&db, "cpu").await.len(), 2);
}
