//! The real InfluxDB clients, unchanged, against the write API: the official `influxdb-client`
//! (v2 API, its batching write API, gzip on) and the `influxdb` v1 client's `write_points`; the
//! rows are then checked in PostgreSQL. Installed by `scripts/clients/install.sh` (missing: a
//! failure under CI, a skip with a message elsewhere).
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{count, rows, start, unique};
use sluice_embedded::clients;
use sluice_influx::InfluxConfig;
use std::process::Command;

const V2_SCRIPT: &str = r#"
import sys
from influxdb_client import InfluxDBClient, Point, WriteOptions
url, bucket, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
errors = []
def on_error(conf, data, exception):
    errors.append(repr(exception))
with InfluxDBClient(url=url, token="any", org="o", enable_gzip=True) as client:
    options = WriteOptions(batch_size=500, flush_interval=200, jitter_interval=0,
                           retry_interval=200, max_retries=2)
    with client.write_api(write_options=options, error_callback=on_error) as write_api:
        for i in range(n):
            point = (Point("cpu load").tag("host", f"h{i % 10}").tag("dc", "eu, west=1")
                     .field("usage", i * 0.5).field("n", i).field("note", 'say "hi"\\now')
                     .time(1_700_000_000_000_000_000 + i * 1000))
            write_api.write(bucket=bucket, record=point)
        # A point written again (a retried batch): merged, not doubled.
        write_api.write(bucket=bucket, record=Point("cpu load").tag("host", "h0")
                        .tag("dc", "eu, west=1").field("extra", True)
                        .time(1_700_000_000_000_000_000))
if errors:
    raise SystemExit("write errors: " + "; ".join(errors))
print("influxdb-client ok")
"#;

const V1_SCRIPT: &str = r#"
import sys
from influxdb import InfluxDBClient
port, db, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
client = InfluxDBClient(host="127.0.0.1", port=port, database=db)
client.create_database(db)
points = [{"measurement": "mem", "tags": {"host": "a b", "rack": f"r{i % 3}"},
           "time": 1_700_000_000_000_000_000 + i * 1000,
           "fields": {"used": i, "free": 1.5, "ok": i % 2 == 0, "name": f"n{i}"}}
          for i in range(n)]
assert client.write_points(points, time_precision="n", batch_size=250)
assert client.write_points([{"measurement": "mem", "tags": {"host": "a b", "rack": "r0"},
                             "time": 1_700_000_000_000_000_000, "fields": {"used": 42}}],
                           time_precision="n")
print("influxdb v1 client ok")
"#;

const V1_POLICY_SCRIPT: &str = r#"
import sys
from influxdb import InfluxDBClient
port, db = int(sys.argv[1]), sys.argv[2]
client = InfluxDBClient(host="127.0.0.1", port=port, database=db)
client.create_database(db)
assert {"name": db} in client.get_list_database(), client.get_list_database()
client.create_retention_policy("week", "7d", 1, database=db, default=True)
policies = client.get_list_retention_policies(db)
assert policies == [{"name": "week", "duration": "168h0m0s", "shardGroupDuration": "24h0m0s",
                     "replicaN": 1, "default": True}], policies
client.alter_retention_policy("week", database=db, duration="2d")
assert client.get_list_retention_policies(db)[0]["duration"] == "48h0m0s"
print("influxdb v1 client retention policies ok")
"#;

const V2_BUCKET_SCRIPT: &str = r#"
import sys
from influxdb_client import InfluxDBClient, BucketRetentionRules
url, name = sys.argv[1], sys.argv[2]
with InfluxDBClient(url=url, token="any", org="my-org") as client:
    buckets = client.buckets_api()
    made = buckets.create_bucket(bucket_name=name, org="my-org",
        retention_rules=BucketRetentionRules(type="expire", every_seconds=7200))
    found = buckets.find_bucket_by_name(name)
    assert found.id == made.id and found.retention_rules[0].every_seconds == 7200, found
    found.retention_rules = [BucketRetentionRules(type="expire", every_seconds=86400)]
    changed = buckets.update_bucket(bucket=found)
    assert changed.retention_rules[0].every_seconds == 86400, changed
    assert name in [b.name for b in buckets.find_buckets().buckets]
print("influxdb-client buckets ok")
"#;

fn run(script: &str, args: &[String]) {
    let Some(python) = clients::require(clients::python(), "the Python clients venv") else {
        return;
    };
    let output = Command::new(python)
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    eprint!("{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn influxdb_client_batching_write_api_with_gzip() {
    if clients::require(clients::python(), "the Python clients venv").is_none() {
        return;
    }
    let server = start(InfluxConfig::default()).await;
    let bucket = unique("influx_py2");
    let url = format!("http://{}", server.addr);
    let args = [url, bucket.clone(), "2000".to_owned()];
    tokio::task::spawn_blocking(move || run(V2_SCRIPT, &args))
        .await
        .unwrap();
    assert_eq!(count(&bucket, "cpu load").await, Some(2000));
    let got = rows(&format!(
        "SELECT host, dc, usage, n, note, extra, extract(epoch FROM time)::numeric(20,6)::text \
         FROM \"{bucket}\".\"cpu load\" WHERE n IN (0, 1999) ORDER BY n"
    ))
    .await;
    let s = |v: &str| Some(v.to_owned());
    assert_eq!(
        got,
        [
            vec![
                s("h0"),
                s("eu, west=1"),
                s("0"),
                s("0"),
                s("say \"hi\"\\now"),
                s("t"),
                s("1700000000.000000")
            ],
            vec![
                s("h9"),
                s("eu, west=1"),
                s("999.5"),
                s("1999"),
                s("say \"hi\"\\now"),
                None,
                s("1700000000.001999")
            ],
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn influxdb_v1_client_write_points() {
    if clients::require(clients::python(), "the Python clients venv").is_none() {
        return;
    }
    let server = start(InfluxConfig::default()).await;
    let db = unique("influx_py1");
    let args = [
        server.addr.port().to_string(),
        db.clone(),
        "1000".to_owned(),
    ];
    tokio::task::spawn_blocking(move || run(V1_SCRIPT, &args))
        .await
        .unwrap();
    assert_eq!(count(&db, "mem").await, Some(1000));
    let got = rows(&format!(
        "SELECT host, rack, used, free, ok, name FROM \"{db}\".mem ORDER BY time LIMIT 2"
    ))
    .await;
    let s = |v: &str| Some(v.to_owned());
    assert_eq!(
        got,
        [
            vec![s("a b"), s("r0"), s("42"), s("1.5"), s("t"), s("n0")],
            vec![s("a b"), s("r1"), s("1"), s("1.5"), s("f"), s("n1")],
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn influxdb_v1_client_manages_retention_policies() {
    if clients::require(clients::python(), "the Python clients venv").is_none() {
        return;
    }
    let server = start(InfluxConfig::default()).await;
    let db = unique("influx_py1_rp");
    let args = [server.addr.port().to_string(), db.clone()];
    tokio::task::spawn_blocking(move || run(V1_POLICY_SCRIPT, &args))
        .await
        .unwrap();
    let kept = rows(&format!(
        "SELECT retention_seconds::text, retention_policy FROM sluice_influx.databases \
         WHERE name = '{db}'"
    ))
    .await;
    let s = |v: &str| Some(v.to_owned());
    assert_eq!(kept, [vec![s("172800"), s("week")]]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn influxdb_client_creates_and_changes_a_bucket() {
    if clients::require(clients::python(), "the Python clients venv").is_none() {
        return;
    }
    let server = start(InfluxConfig::default()).await;
    let bucket = unique("influx_py2_bucket");
    let args = [format!("http://{}", server.addr), bucket.clone()];
    tokio::task::spawn_blocking(move || run(V2_BUCKET_SCRIPT, &args))
        .await
        .unwrap();
    let kept = rows(&format!(
        "SELECT retention_seconds::text FROM sluice_influx.databases WHERE name = '{bucket}'"
    ))
    .await;
    assert_eq!(kept, [vec![Some("86400".to_owned())]]);
}
