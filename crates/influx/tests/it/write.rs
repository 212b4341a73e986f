//! End-to-end writes through HTTP into PostgreSQL, checked with SQL.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{columns, count, rows, start, unique, value};
use sluice_influx::InfluxConfig;
use std::io::Write;

/// Partial writes off: a body is written whole or not at all.
fn all_or_nothing() -> InfluxConfig {
    InfluxConfig {
        accept_partial: false,
        ..InfluxConfig::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v1_write_creates_schema_tables_and_rows() {
    let server = start(InfluxConfig::default()).await;
    let db = unique("influx_v1");
    let body = "cpu,host=a,region=eu usage=0.5,count=3i,ok=true,note=\"hi \\\"there\\\"\" 1700000000000000000\n\
                cpu,host=b,region=eu usage=1.5,count=4i,ok=false,note=\"x\" 1700000000000001000\n\
                \n# a comment\n\
                mem,host=a used=42i 1700000000000000000\n";
    let answer = server.post(&format!("/write?db={db}"), body).await;
    assert_eq!(answer.status, 204, "{}", answer.body);
    assert!(answer.headers.contains_key("x-influxdb-version"));

    assert_eq!(
        columns(&db, "cpu").await,
        [
            "time:timestamp with time zone",
            "host:text",
            "region:text",
            "usage:double precision",
            "count:bigint",
            "ok:boolean",
            "note:text"
        ]
    );
    let cpu = rows(&format!(
        "SELECT extract(epoch FROM time)::numeric(20,6)::text, host, region, usage, count, ok, note \
         FROM \"{db}\".cpu ORDER BY time"
    ))
    .await;
    let s = |v: &str| Some(v.to_owned());
    assert_eq!(
        cpu,
        [
            vec![
                s("1700000000.000000"),
                s("a"),
                s("eu"),
                s("0.5"),
                s("3"),
                s("t"),
                s("hi \"there\"")
            ],
            vec![
                s("1700000000.000001"),
                s("b"),
                s("eu"),
                s("1.5"),
                s("4"),
                s("f"),
                s("x")
            ],
        ]
    );
    assert_eq!(count(&db, "mem").await, Some(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v2_write_with_bucket_and_precision() {
    let server = start(InfluxConfig::default()).await;
    let db = unique("influx_v2");
    let answer = server
        .post(
            &format!("/api/v2/write?org=o&bucket={db}/autogen&precision=ms"),
            "m v=1 1700000000123\n",
        )
        .await;
    assert_eq!(answer.status, 204, "{}", answer.body);
    assert_eq!(
        value(&format!(
            "SELECT (extract(epoch FROM time) * 1000)::int8 FROM \"{db}\".m"
        ))
        .await
        .as_deref(),
        Some("1700000000123")
    );
    let answer = server
        .post(&format!("/write?db={db}&precision=s"), "m v=2 1700000001\n")
        .await;
    assert_eq!(answer.status, 204, "{}", answer.body);
    assert_eq!(
        value(&format!(
            "SELECT extract(epoch FROM time)::int8 FROM \"{db}\".m WHERE v = 2"
        ))
        .await
        .as_deref(),
        Some("1700000001")
    );
    // No timestamp: the server's time, truncated to the precision.
    let answer = server
        .post(&format!("/write?db={db}&precision=s"), "m v=3\n")
        .await;
    assert_eq!(answer.status, 204, "{}", answer.body);
    assert_eq!(
        value(&format!(
            "SELECT abs(extract(epoch FROM now() - time)) < 600 AND extract(microseconds FROM time)::int8 % 1000000 = 0 \
             FROM \"{db}\".m WHERE v = 3"
        ))
        .await
        .as_deref(),
        Some("t")
    );
    // v2 takes only ns, us, ms, s.
    let answer = server
        .post(&format!("/api/v2/write?bucket={db}&precision=n"), "m v=4\n")
        .await;
    assert_eq!(answer.status, 400);
    assert_eq!(answer.json()["code"], "invalid");
    let answer = server.post("/api/v2/write?org=o", "m v=4\n").await;
    assert_eq!(answer.status, 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_tags_and_fields_add_columns() {
    let server = start(InfluxConfig::default()).await;
    let db = unique("influx_evolve");
    let path = format!("/write?db={db}");
    assert_eq!(server.post(&path, "cpu,host=a v=1 1\n").await.status, 204);
    assert_eq!(
        server
            .post(
                &path,
                "cpu,host=b,rack=r1 v=2,w=\"s\" 2\ncpu,host=c v=3 3\n"
            )
            .await
            .status,
        204
    );
    assert_eq!(
        columns(&db, "cpu").await,
        [
            "time:timestamp with time zone",
            "host:text",
            "v:double precision",
            "rack:text",
            "w:text"
        ]
    );
    let got = rows(&format!(
        "SELECT host, rack, v, w FROM \"{db}\".cpu ORDER BY time"
    ))
    .await;
    let s = |v: &str| Some(v.to_owned());
    assert_eq!(
        got,
        [
            vec![s("a"), None, s("1"), None],
            vec![s("b"), s("r1"), s("2"), s("s")],
            vec![s("c"), None, s("3"), None],
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_type_clash_fails_the_whole_request_when_partial_writes_are_off() {
    let server = start(all_or_nothing()).await;
    let db = unique("influx_clash");
    let path = format!("/write?db={db}");
    assert_eq!(server.post(&path, "cpu v=1.5 1\n").await.status, 204);
    // `v` is float8; an integer is a clash; the other table and the new field stay unwritten.
    let answer = server
        .post(&path, "other x=1 2\ncpu v=2.5,extra=1 2\ncpu v=2i 3\n")
        .await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    let json = answer.json();
    assert_eq!(json["code"], "invalid");
    let message = json["message"].as_str().unwrap();
    assert!(message.contains("\"v\""), "{message}");
    assert!(
        message.contains("integer") && message.contains("float"),
        "{message}"
    );
    assert_eq!(count(&db, "cpu").await, Some(1));
    assert_eq!(count(&db, "other").await, None);
    assert_eq!(columns(&db, "cpu").await.len(), 2);

    // A clash against a table this process has not seen (a second server, empty cache).
    let fresh = start(all_or_nothing()).await;
    let answer = fresh.post(&path, "cpu v=\"text\" 4\n").await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert!(answer.body.contains("\\\"v\\\""), "{}", answer.body);
    assert_eq!(count(&db, "cpu").await, Some(1));

    // A clash inside one body, between two lines.
    let answer = server.post(&path, "new a=1i 1\nnew a=1u 2\n").await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert_eq!(count(&db, "new").await, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_line_fails_the_batch_and_is_named_when_partial_writes_are_off() {
    let server = start(all_or_nothing()).await;
    let db = unique("influx_badline");
    let answer = server
        .post(
            &format!("/write?db={db}"),
            "cpu v=1 1\ncpu v=2 2\ncpu v=oops 3\ncpu v=4 4\n",
        )
        .await;
    assert_eq!(answer.status, 400);
    let json = answer.json();
    assert_eq!(json["code"], "invalid");
    let message = json["message"].as_str().unwrap();
    assert!(message.contains("line 3:"), "{message}");
    assert_eq!(count(&db, "cpu").await, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gzip_bodies_are_inflated() {
    let server = start(InfluxConfig::default()).await;
    let db = unique("influx_gzip");
    let mut body = String::new();
    for i in 0..1000 {
        body.push_str(&format!("cpu,host=h{} v={i} {i}000\n", i % 10));
    }
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(body.as_bytes()).unwrap();
    let compressed = encoder.finish().unwrap();
    let answer = server
        .send(
            "POST",
            &format!("/write?db={db}"),
            &[("Content-Encoding", "gzip")],
            compressed,
        )
        .await;
    assert_eq!(answer.status, 204, "{}", answer.body);
    assert_eq!(count(&db, "cpu").await, Some(1000));
    assert_eq!(
        value(&format!("SELECT sum(v)::int8 FROM \"{db}\".cpu"))
            .await
            .as_deref(),
        Some("499500")
    );
    let answer = server
        .send(
            "POST",
            &format!("/write?db={db}"),
            &[("Content-Encoding", "gzip")],
            "not gzip",
        )
        .await;
    assert_eq!(answer.status, 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_first_writes_of_one_measurement_all_succeed() {
    let server = std::sync::Arc::new(start(InfluxConfig::default()).await);
    // A second API instance: its own cache, so both race on the catalog.
    let other = std::sync::Arc::new(start(InfluxConfig::default()).await);
    let db = unique("influx_race");
    // Both know the schema, so the race is on the table and its columns alone.
    for api in [&server, &other] {
        let create = format!("/query?q=CREATE+DATABASE+{db}");
        assert_eq!(api.send("POST", &create, &[], "").await.status, 200);
    }
    let mut tasks = Vec::new();
    for i in 0..8 {
        let server = if i % 2 == 0 {
            server.clone()
        } else {
            other.clone()
        };
        let path = format!("/write?db={db}");
        tasks.push(tokio::spawn(async move {
            // Each writer brings its own tag and field too, so columns are added concurrently.
            let body = format!("cpu,host=h{i},t{i}=x v=1,f{i}={i}i {i}\n");
            server.post(&path, &body).await
        }));
    }
    for task in tasks {
        let answer = task.await.unwrap();
        assert_eq!(answer.status, 204, "{}", answer.body);
    }
    assert_eq!(count(&db, "cpu").await, Some(8));
    assert_eq!(columns(&db, "cpu").await.len(), 3 + 16);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsigned_fields_are_numeric() {
    let server = start(InfluxConfig::default()).await;
    let db = unique("influx_uint");
    let answer = server
        .post(
            &format!("/write?db={db}"),
            "m n=18446744073709551615u 1000\nm n=0u 2000\nm n=10000u 3000\nm n=123456789u 4000\n",
        )
        .await;
    assert_eq!(answer.status, 204, "{}", answer.body);
    assert_eq!(
        columns(&db, "m").await,
        ["time:timestamp with time zone", "n:numeric"]
    );
    let got: Vec<_> = rows(&format!("SELECT n::text FROM \"{db}\".m ORDER BY time"))
        .await
        .into_iter()
        .map(|r| r[0].clone().unwrap())
        .collect();
    assert_eq!(got, ["18446744073709551615", "0", "10000", "123456789"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tags_as_one_jsonb_column() {
    let server = start(InfluxConfig {
        tags_as_jsonb: true,
        ..InfluxConfig::default()
    })
    .await;
    let db = unique("influx_jsonb");
    let path = format!("/write?db={db}");
    let answer = server
        .post(&path, "cpu,host=a,region=e\\ u v=1 1000\ncpu v=2 2000\n")
        .await;
    assert_eq!(answer.status, 204, "{}", answer.body);
    assert_eq!(
        columns(&db, "cpu").await,
        [
            "time:timestamp with time zone",
            "tags:jsonb",
            "v:double precision"
        ]
    );
    let got = rows(&format!(
        "SELECT tags->>'host', tags->>'region', tags::text FROM \"{db}\".cpu ORDER BY time"
    ))
    .await;
    let s = |v: &str| Some(v.to_owned());
    assert_eq!(
        got,
        [
            vec![s("a"), s("e u"), s(r#"{"host": "a", "region": "e u"}"#)],
            vec![None, None, s("{}")]
        ]
    );
    // A field named like the tags column clashes.
    let answer = server.post(&path, "cpu tags=1 3\n").await;
    assert_eq!(answer.status, 400, "{}", answer.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_value_postgresql_refuses_is_a_bad_request_when_partial_writes_are_off() {
    let server = start(all_or_nothing()).await;
    let db = unique("influx_nul");
    let path = format!("/write?db={db}");
    assert_eq!(server.post(&path, "logs msg=\"ok\" 1\n").await.status, 204);
    // Line protocol allows a NUL inside a string; PostgreSQL text does not.
    let answer = server
        .post(&path, "logs msg=\"ok\" 2\nlogs msg=\"a\0b\" 3\n")
        .await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert_eq!(count(&db, "logs").await, Some(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_dropped_behind_the_cache_are_made_again() {
    let server = start(InfluxConfig::default()).await;
    let db = unique("influx_stale");
    let path = format!("/write?db={db}");
    assert_eq!(server.post(&path, "cpu,host=a v=1 1\n").await.status, 204);
    rows(&format!("DROP TABLE \"{db}\".cpu")).await;
    let answer = server.post(&path, "cpu,host=a v=2 2\n").await;
    assert_eq!(answer.status, 204, "{}", answer.body);
    rows(&format!("DROP SCHEMA \"{db}\" CASCADE")).await;
    let answer = server.post(&path, "cpu,host=a v=3 3\n").await;
    assert_eq!(answer.status, 204, "{}", answer.body);
    assert_eq!(
        value(&format!(
            "SELECT string_agg(v::text, ',') FROM \"{db}\".cpu"
        ))
        .await
        .as_deref(),
        Some("3")
    );
}
