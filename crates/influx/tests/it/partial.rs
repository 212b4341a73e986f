//! Partial writes as InfluxDB answers them: the good points written, the bad ones named with
//! the count dropped (v1: 400 `partial write: ... dropped=N`; v2: 422 with InfluxDB 2's prefix);
//! all or nothing with `accept_partial` off.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{count, rows, start, unique};
use sluice_influx::InfluxConfig;

/// Four points a microsecond apart (points less apart are one: times are kept to the µs).
const BODY: &str = "cpu v=1 1000\ncpu v=2 2000\ncpu v=oops 3000\ncpu v=4 4000\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v1_writes_the_good_lines_and_names_the_bad_one() {
    let server = start(InfluxConfig::default()).await;
    let db = unique("influx_partial1");
    let answer = server.post(&format!("/write?db={db}"), BODY).await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    let json = answer.json();
    let error = json["error"].as_str().unwrap();
    assert!(
        error.starts_with("partial write: unable to parse 'cpu v=oops 3000': line 3:7: "),
        "{error}"
    );
    assert!(error.ends_with(" dropped=1"), "{error}");
    assert_eq!(json["code"], "invalid");
    assert_eq!(count(&db, "cpu").await, Some(3));
    let times = rows(&format!(
        "SELECT string_agg(v::text, ',' ORDER BY time) FROM \"{db}\".cpu"
    ))
    .await;
    assert_eq!(times[0][0].as_deref(), Some("1,2,4"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v2_answers_422_with_influxdb_2s_message() {
    let server = start(InfluxConfig::default()).await;
    let db = unique("influx_partial2");
    let answer = server
        .post(&format!("/api/v2/write?org=o&bucket={db}"), BODY)
        .await;
    assert_eq!(answer.status, 422, "{}", answer.body);
    let json = answer.json();
    assert_eq!(json["code"], "unprocessable entity");
    let message = json["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "failure writing points to database: partial write: unable to parse 'cpu v=oops 3000'"
        ),
        "{message}"
    );
    assert!(message.ends_with(" dropped=1"), "{message}");
    assert_eq!(count(&db, "cpu").await, Some(3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn type_conflicts_drop_only_their_points() {
    let server = start(InfluxConfig::default()).await;
    let db = unique("influx_partial_conflict");
    let v1 = format!("/write?db={db}");
    assert_eq!(server.post(&v1, "cpu v=1.5 1000\n").await.status, 204);
    // Against the table: `v` is float8.
    let answer = server
        .post(
            &v1,
            "cpu v=2i 2000\ncpu v=3i 3000\ncpu v=2.5 4000\nmem x=1 1\n",
        )
        .await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert_eq!(
        answer.json()["error"],
        "partial write: field type conflict: input field \"v\" on measurement \"cpu\" is type \
         integer, already exists as type float dropped=2"
    );
    assert_eq!(count(&db, "cpu").await, Some(2));
    assert_eq!(count(&db, "mem").await, Some(1));
    // The same on v2: 422, InfluxDB 2's prefix.
    let answer = server
        .post(&format!("/api/v2/write?bucket={db}"), "cpu v=\"s\" 5\n")
        .await;
    assert_eq!(answer.status, 422, "{}", answer.body);
    assert_eq!(
        answer.json()["message"],
        "failure writing points to database: partial write: field type conflict: input field \
         \"v\" on measurement \"cpu\" is type string, already exists as type float dropped=1"
    );
    // Within one body the first type wins, later lines of another type are dropped.
    let answer = server
        .post(&v1, "new a=1i 1000\nnew a=1u 2000\nnew a=2i 3000\n")
        .await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert!(answer.body.contains("dropped=1"), "{}", answer.body);
    assert_eq!(count(&db, "new").await, Some(2));
    // A NUL in a string drops its point only.
    let answer = server
        .post(&v1, "logs msg=\"ok\" 2000\nlogs msg=\"a\0b\" 3000\n")
        .await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert!(answer.body.contains("NUL"), "{}", answer.body);
    assert_eq!(count(&db, "logs").await, Some(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_bad_line_is_named_and_counted() {
    let server = start(InfluxConfig::default()).await;
    let db = unique("influx_partial_many");
    let mut body = String::new();
    for i in 0..30 {
        body.push_str(&format!("cpu v={i} {i}000\ncpu v=bad{i} {i}000\n"));
    }
    let answer = server.post(&format!("/write?db={db}"), &body).await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    let error = answer.json()["error"].as_str().unwrap().to_owned();
    assert!(error.ends_with("dropped=30"), "{error}");
    // The first 20 rejected lines are quoted, one per line, then a count of the rest.
    assert_eq!(
        error.matches("unable to parse 'cpu v=bad").count(),
        20,
        "{error}"
    );
    assert!(error.contains("line 4:7:"), "{error}");
    assert!(error.contains("(and 10 more)"), "{error}");
    assert_eq!(count(&db, "cpu").await, Some(30));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_with_no_good_line_is_a_plain_400() {
    let server = start(InfluxConfig::default()).await;
    let db = unique("influx_partial_none");
    for path in [
        format!("/write?db={db}"),
        format!("/api/v2/write?bucket={db}"),
    ] {
        let answer = server.post(&path, "cpu v=oops 1\nmem\n").await;
        assert_eq!(answer.status, 400, "{}", answer.body);
        let json = answer.json();
        assert_eq!(json["code"], "invalid");
        let message = json["message"].as_str().unwrap();
        assert!(
            message.starts_with("unable to parse 'cpu v=oops 1'"),
            "{message}"
        );
        assert!(message.contains("\nunable to parse 'mem'"), "{message}");
        assert!(!message.contains("partial write"), "{message}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_or_nothing_by_setting_or_per_request() {
    let db = unique("influx_strict");
    let strict = start(InfluxConfig {
        accept_partial: false,
        ..InfluxConfig::default()
    })
    .await;
    let answer = strict.post(&format!("/write?db={db}"), BODY).await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert!(answer.body.contains("line 3:"), "{}", answer.body);
    assert_eq!(count(&db, "cpu").await, None);
    // A request can ask for partial writes from a strict server, and for all or nothing from
    // a lenient one.
    let answer = strict
        .post(&format!("/write?db={db}&accept_partial=true"), BODY)
        .await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert_eq!(count(&db, "cpu").await, Some(3));
    let lenient = start(InfluxConfig::default()).await;
    let answer = lenient
        .post(
            &format!("/api/v2/write?bucket={db}&accept_partial=false"),
            "cpu v=5 5000\ncpu v=x 6000\n",
        )
        .await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert_eq!(count(&db, "cpu").await, Some(3));
    let answer = lenient
        .post(
            &format!("/write?db={db}&accept_partial=maybe"),
            "cpu v=5 5\n",
        )
        .await;
    assert_eq!(answer.status, 400, "{}", answer.body);
}
