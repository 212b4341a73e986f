//! Retention set by clients, as InfluxDB users set it: InfluxQL's `CREATE DATABASE ... WITH
//! DURATION`, `CREATE | ALTER | DROP RETENTION POLICY`, `SHOW RETENTION POLICIES`, `SHOW
//! DATABASES`, and the v2 bucket API's retention rules; kept in the catalog, so another
//! gateway's retention pass applies them; the configuration's per-database entries win.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{Server, count, start, unique, value};
use serde_json::{Value, json};
use sluice_influx::InfluxConfig;
use std::time::Duration;

const DAY_NS: i64 = 86_400_000_000_000;

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap()
}

/// Runs `q` through `/query`; returns the `results` array.
async fn query(server: &Server, q: &str) -> Vec<Value> {
    let body = format!("q={}", form(q));
    let answer = server
        .send(
            "POST",
            "/query",
            &[("Content-Type", "application/x-www-form-urlencoded")],
            body,
        )
        .await;
    assert_eq!(answer.status, 200, "{q}: {}", answer.body);
    answer.json()["results"].as_array().unwrap().clone()
}

/// The one result of `q`: its error, if any.
async fn statement_error(server: &Server, q: &str) -> Option<String> {
    let results = query(server, q).await;
    assert_eq!(results.len(), 1, "{results:?}");
    results[0]["error"].as_str().map(str::to_owned)
}

fn form(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            b' ' => "+".to_owned(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// `SHOW RETENTION POLICIES ON db`'s one row.
async fn policy_row(server: &Server, db: &str) -> Value {
    let results = query(server, &format!("SHOW RETENTION POLICIES ON \"{db}\"")).await;
    let series = &results[0]["series"][0];
    assert_eq!(
        series["columns"],
        json!([
            "name",
            "duration",
            "shardGroupDuration",
            "replicaN",
            "default"
        ])
    );
    series["values"][0].clone()
}

async fn relkind(db: &str, table: &str) -> Option<String> {
    value(&format!(
        "SELECT relkind::text FROM pg_class WHERE oid = '\"{db}\".\"{table}\"'::regclass"
    ))
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn influxql_sets_and_changes_a_database_retention() {
    let server = start(InfluxConfig::default()).await;
    let db = unique("influx_rp");
    assert_eq!(
        statement_error(
            &server,
            &format!("CREATE DATABASE \"{db}\" WITH DURATION 7d REPLICATION 1 NAME \"week\"")
        )
        .await,
        None
    );
    assert_eq!(
        policy_row(&server, &db).await,
        json!(["week", "168h0m0s", "24h0m0s", 1, true])
    );
    // The retention applies to writes: a point of 9 days ago is beyond it, and the table is
    // made as day partitions.
    let now = now_ns();
    let body = format!(
        "cpu v=1 {}\ncpu v=2 {}\n",
        now - 9 * DAY_NS,
        now - 5 * DAY_NS
    );
    let answer = server.post(&format!("/write?db={db}"), &body).await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert!(
        answer
            .body
            .contains("points beyond retention policy: 1 points"),
        "{}",
        answer.body
    );
    assert_eq!(count(&db, "cpu").await, Some(1));
    assert_eq!(relkind(&db, "cpu").await.as_deref(), Some("p"));

    // ALTER changes it; another policy name is not found; a second policy is refused.
    assert_eq!(
        statement_error(
            &server,
            &format!("ALTER RETENTION POLICY week ON \"{db}\" DURATION 2d")
        )
        .await,
        None
    );
    assert_eq!(
        policy_row(&server, &db).await,
        json!(["week", "48h0m0s", "24h0m0s", 1, true])
    );
    assert_eq!(
        statement_error(
            &server,
            &format!("ALTER RETENTION POLICY other ON \"{db}\" DURATION 1d")
        )
        .await
        .as_deref(),
        Some("retention policy not found: other")
    );
    let second = statement_error(
        &server,
        &format!("CREATE RETENTION POLICY other ON \"{db}\" DURATION 1d REPLICATION 1"),
    )
    .await
    .unwrap();
    assert!(second.contains("one per database"), "{second}");

    // Another gateway (its own cache) applies the changed retention in its pass: the
    // partition of 5 days ago is dropped, as no process was told but through the catalog.
    let other = sluice_influx::InfluxApi::new(
        sluice_pg::Pool::connect(common::url(), sluice_pg::PoolSettings::new()).unwrap(),
        InfluxConfig::default(),
    );
    let pass = other.enforce_retention().await.unwrap();
    assert_eq!(
        pass.dropped
            .iter()
            .filter(|p| p.starts_with(&format!("{db}.")))
            .count(),
        1,
        "{:?}",
        pass.dropped
    );
    assert_eq!(count(&db, "cpu").await, Some(0));

    // DROP gives the database back to the configuration (here: forever).
    assert_eq!(
        statement_error(&server, &format!("DROP RETENTION POLICY week ON \"{db}\"")).await,
        None
    );
    assert_eq!(
        policy_row(&server, &db).await,
        json!(["autogen", "0s", "0s", 1, true])
    );
    let answer = server
        .post(
            &format!("/write?db={db}"),
            &format!("cpu v=3 {}\n", now - 30 * DAY_NS),
        )
        .await;
    assert_eq!(answer.status, 204, "{}", answer.body);

    // A policy made DEFAULT becomes the database's, under its name.
    assert_eq!(
        statement_error(
            &server,
            &format!(
                "CREATE RETENTION POLICY month ON \"{db}\" DURATION 30d REPLICATION 1 DEFAULT"
            )
        )
        .await,
        None
    );
    assert_eq!(
        policy_row(&server, &db).await,
        json!(["month", "720h0m0s", "24h0m0s", 1, true])
    );

    let databases = query(&server, "SHOW DATABASES").await;
    let names = databases[0]["series"][0]["values"].as_array().unwrap();
    assert!(names.contains(&json!([db])), "{names:?}");
    assert_eq!(databases[0]["series"][0]["name"], "databases");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statements_answer_influxdb_errors() {
    let db = unique("influx_rp_cfg");
    let server = start(InfluxConfig {
        database_retention: [(db.clone(), Some(Duration::from_secs(86_400)))]
            .into_iter()
            .collect(),
        ..InfluxConfig::default()
    })
    .await;
    // The configuration's entry wins: a client cannot change it.
    assert_eq!(
        statement_error(&server, &format!("CREATE DATABASE \"{db}\"")).await,
        None
    );
    let refused = statement_error(
        &server,
        &format!("CREATE DATABASE \"{db}\" WITH DURATION 7d"),
    )
    .await
    .unwrap();
    assert!(refused.contains("[influx] database_retention"), "{refused}");
    assert_eq!(
        policy_row(&server, &db).await,
        json!(["autogen", "24h0m0s", "24h0m0s", 1, true])
    );
    let missing = unique("influx_rp_none");
    assert_eq!(
        statement_error(
            &server,
            &format!(
                "CREATE RETENTION POLICY p ON \"{missing}\" DURATION 1d REPLICATION 1 DEFAULT"
            )
        )
        .await,
        Some(format!("database not found: {missing}"))
    );
    assert_eq!(
        statement_error(&server, "SHOW RETENTION POLICIES")
            .await
            .as_deref(),
        Some("database name required")
    );
    // SHOW RETENTION POLICIES takes the database from the request's db parameter too.
    let answer = server
        .send(
            "GET",
            &format!("/query?db={db}&q=SHOW+RETENTION+POLICIES"),
            &[],
            "",
        )
        .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(
        answer.json()["results"][0]["series"][0]["values"][0][1],
        "24h0m0s"
    );
    // Parse errors are the request's 400, with where.
    let answer = server
        .send(
            "GET",
            "/query?q=CREATE+DATABASE+x+WITH+DURATION+5m",
            &[],
            "",
        )
        .await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert!(
        answer.body.contains("shorter than an hour"),
        "{}",
        answer.body
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v2_buckets_carry_the_retention() {
    let server = start(InfluxConfig::default()).await;
    let bucket = unique("influx_bucket");
    let create = json!({
        "orgID": "0000000000000001",
        "name": bucket,
        "retentionRules": [{"type": "expire", "everySeconds": 7200}],
    });
    let answer = server
        .send(
            "POST",
            "/api/v2/buckets",
            &[("Content-Type", "application/json")],
            create.to_string(),
        )
        .await;
    assert_eq!(answer.status, 201, "{}", answer.body);
    let made = answer.json();
    assert_eq!(made["name"], bucket);
    assert_eq!(made["retentionRules"][0]["everySeconds"], 7200);
    let id = made["id"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 16);

    // Writes follow it: a point of three hours ago is beyond the bucket's retention.
    let now = now_ns();
    let body = format!("m v=1 {}\nm v=2 {}\n", now - 3 * 3_600_000_000_000, now);
    let answer = server
        .post(&format!("/api/v2/write?bucket={bucket}"), &body)
        .await;
    assert_eq!(answer.status, 422, "{}", answer.body);
    assert_eq!(count(&bucket, "m").await, Some(1));

    // Found by name and by id; made again it is a conflict.
    let answer = server
        .send("GET", &format!("/api/v2/buckets?name={bucket}"), &[], "")
        .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.json()["buckets"][0]["id"], id.as_str());
    let answer = server
        .send("GET", &format!("/api/v2/buckets/{id}"), &[], "")
        .await;
    assert_eq!(answer.json()["name"], bucket);
    let answer = server
        .send("POST", "/api/v2/buckets", &[], create.to_string())
        .await;
    assert_eq!(answer.status, 422, "{}", answer.body);
    assert_eq!(answer.json()["code"], "conflict");

    // PATCH with no rule keeps points forever; InfluxQL sees the same policy.
    let answer = server
        .send(
            "PATCH",
            &format!("/api/v2/buckets/{id}"),
            &[],
            json!({"retentionRules": []}).to_string(),
        )
        .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.json()["retentionRules"], json!([]));
    assert_eq!(
        policy_row(&server, &bucket).await,
        json!(["autogen", "0s", "0s", 1, true])
    );
    // Renaming and deleting are PostgreSQL's to do.
    let answer = server
        .send(
            "PATCH",
            &format!("/api/v2/buckets/{id}"),
            &[],
            json!({"name": "other"}).to_string(),
        )
        .await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    let answer = server
        .send("DELETE", &format!("/api/v2/buckets/{id}"), &[], "")
        .await;
    assert_eq!(answer.status, 403, "{}", answer.body);
    assert_eq!(count(&bucket, "m").await, Some(1));
    // Unknown ids and bad rules.
    let answer = server
        .send("GET", "/api/v2/buckets/00000000ffffffff", &[], "")
        .await;
    assert_eq!(answer.status, 404, "{}", answer.body);
    let answer = server
        .send(
            "POST",
            "/api/v2/buckets",
            &[],
            json!({"name": unique("influx_bucket_bad"),
                   "retentionRules": [{"type": "expire", "everySeconds": 60}]})
            .to_string(),
        )
        .await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    let answer = server.send("GET", "/api/v2/orgs?org=my-org", &[], "").await;
    assert_eq!(answer.json()["orgs"][0]["name"], "my-org");
}

/// The catalog as Sluice made it before retention policies.
const OLD_CATALOG: &str = "\
CREATE SCHEMA sluice_influx;
CREATE TABLE sluice_influx.databases (
    name text PRIMARY KEY, nspid oid NOT NULL, created timestamptz NOT NULL DEFAULT now());
CREATE TABLE sluice_influx.measurements (
    database text NOT NULL, name text NOT NULL, relid oid NOT NULL,
    created timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (database, name));";

/// A new database of the test cluster with the old catalog in it; its superuser URL.
async fn database_with_old_catalog(prefix: &str) -> (String, String) {
    let dbname = unique(prefix);
    common::rows(&format!("CREATE DATABASE \"{dbname}\"")).await;
    let base = common::url();
    let slash = base.rfind('/').unwrap();
    let query = base[slash..].find('?').map_or("", |q| &base[slash + q..]);
    let url = format!("{}/{dbname}{query}", &base[..slash]);
    let mut conn = sluice_pg::Connection::connect(&url).await.unwrap();
    conn.batch_execute(OLD_CATALOG).await.unwrap();
    (dbname, url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn catalogs_of_earlier_versions_are_migrated_or_keep_working() {
    let Some(_cluster) = sluice_embedded::test_database().cluster_or_skip("catalog migration")
    else {
        return;
    };
    let options = sluice_http::ServerOptions::default;
    // Its owner's Sluice adds the retention columns and keeps policies from then on.
    let (_, owner_url) = database_with_old_catalog("influx_old_owner").await;
    let server = common::start_with(InfluxConfig::default(), options(), &owner_url).await;
    let db = unique("influx_mig");
    let answer = server
        .post(&format!("/write?db={db}"), &format!("m v=1 {}\n", now_ns()))
        .await;
    assert_eq!(answer.status, 204, "{}", answer.body);
    assert_eq!(
        statement_error(
            &server,
            &format!("ALTER RETENTION POLICY autogen ON {db} DURATION 1d")
        )
        .await,
        None
    );
    assert_eq!(
        policy_row(&server, &db).await,
        json!(["autogen", "24h0m0s", "24h0m0s", 1, true])
    );

    // A least-privilege role may not alter the catalog: it keeps writing, and setting a
    // retention says what its owner must run.
    let (dbname, superuser_url) = database_with_old_catalog("influx_old_writer").await;
    let role = unique("influx_old_writer");
    let password = "old-catalog-writer";
    let mut conn = sluice_pg::Connection::connect(&superuser_url)
        .await
        .unwrap();
    conn.batch_execute(&format!(
        "CREATE ROLE \"{role}\" LOGIN PASSWORD '{password}';
         GRANT CONNECT, CREATE ON DATABASE \"{dbname}\" TO \"{role}\";
         GRANT USAGE ON SCHEMA sluice_influx TO \"{role}\";
         GRANT SELECT, INSERT, UPDATE ON sluice_influx.databases, sluice_influx.measurements
           TO \"{role}\""
    ))
    .await
    .unwrap();
    let at = superuser_url.find('@').unwrap();
    let role_url = format!("postgres://{role}:{password}{}", &superuser_url[at..]);
    let server = common::start_with(InfluxConfig::default(), options(), &role_url).await;
    let answer = server
        .post(&format!("/write?db={db}"), &format!("m v=1 {}\n", now_ns()))
        .await;
    assert_eq!(answer.status, 204, "{}", answer.body);
    let refused = statement_error(
        &server,
        &format!("CREATE RETENTION POLICY p ON {db} DURATION 1d REPLICATION 1 DEFAULT"),
    )
    .await
    .unwrap();
    assert!(
        refused.contains("ADD COLUMN IF NOT EXISTS retention_seconds"),
        "{refused}"
    );
    assert_eq!(
        policy_row(&server, &db).await,
        json!(["autogen", "0s", "0s", 1, true])
    );
}
