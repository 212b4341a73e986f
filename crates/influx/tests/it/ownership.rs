//! The write API writes only where Sluice owns: application tables and schemas are refused and
//! left untouched; tables of older versions are adopted by the README's SQL; a least-privilege
//! role suffices.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{columns, count, rows, start, start_with, unique, url, value};
use sluice_http::ServerOptions;
use sluice_influx::InfluxConfig;

fn listing(databases: &[&str]) -> InfluxConfig {
    InfluxConfig {
        databases: databases.iter().map(|d| (*d).to_owned()).collect(),
        ..InfluxConfig::default()
    }
}

/// An application table in `public` with one row, as an app would have it.
async fn application_table() -> String {
    let table = unique("accounts");
    rows(&format!(
        "CREATE TABLE public.\"{table}\" (owner text PRIMARY KEY, balance numeric NOT NULL);
         INSERT INTO public.\"{table}\" VALUES ('alice', 10)"
    ))
    .await;
    table
}

async fn untouched(schema: &str, table: &str) {
    assert_eq!(
        columns(schema, table).await,
        ["owner:text", "balance:numeric"],
        "{schema}.{table} was altered"
    );
    assert_eq!(
        value(&format!(
            "SELECT string_agg(owner || '=' || balance, ',') FROM \"{schema}\".\"{table}\""
        ))
        .await
        .as_deref(),
        Some("alice=10")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hijack_of_an_application_table_is_refused() {
    let table = application_table().await;
    let line = format!("{table},owner=mallory balance=1000000u 1\n");

    // Default configuration: `public` is not a database the API writes.
    let server = start(InfluxConfig::default()).await;
    for path in ["/write?db=public", "/api/v2/write?org=o&bucket=public"] {
        let answer = server.post(path, &line).await;
        assert_eq!(answer.status, 403, "{path}: {}", answer.body);
        assert_eq!(answer.json()["code"], "forbidden");
        let message = answer.json()["message"].as_str().unwrap().to_owned();
        assert!(message.contains("\"public\""), "{message}");
        assert!(message.contains("[influx] databases"), "{message}");
    }
    untouched("public", &table).await;

    // Even with `public` listed, the application's table is not Sluice's: refused whole, with
    // the good line of another measurement in the same body left unwritten too.
    let listed = start(listing(&["public"])).await;
    let other = unique("m");
    let body = format!("{other} v=1 1\n{line}");
    for path in ["/write?db=public", "/api/v2/write?bucket=public"] {
        let answer = listed.post(path, &body).await;
        assert_eq!(answer.status, 403, "{path}: {}", answer.body);
        let json = answer.json();
        assert_eq!(json["code"], "forbidden");
        let message = json["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("\"public\".\"{table}\"")),
            "{message}"
        );
        assert!(message.contains("did not create"), "{message}");
        assert_eq!(json["error"].as_str(), Some(message));
    }
    untouched("public", &table).await;
    assert_eq!(count("public", &other).await, None);

    // A listed `public` takes new measurements, which Sluice then owns.
    let answer = listed
        .post("/write?db=public", &format!("{other} v=1 1\n"))
        .await;
    assert_eq!(answer.status, 204, "{}", answer.body);
    assert_eq!(count("public", &other).await, Some(1));
    rows(&format!(
        "DROP TABLE public.\"{table}\", public.\"{other}\""
    ))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemas_sluice_did_not_create_are_refused() {
    let app = unique("app");
    rows(&format!(
        "CREATE SCHEMA \"{app}\"; CREATE TABLE \"{app}\".accounts (owner text, balance numeric);
         INSERT INTO \"{app}\".accounts VALUES ('alice', 10)"
    ))
    .await;
    let server = start(InfluxConfig::default()).await;
    let answer = server
        .post(
            &format!("/write?db={app}"),
            "accounts,owner=mallory balance=1 1\n",
        )
        .await;
    assert_eq!(answer.status, 403, "{}", answer.body);
    assert!(answer.body.contains("did not create"), "{}", answer.body);
    // A new measurement is refused too: the schema is not Sluice's.
    let answer = server
        .post(&format!("/write?db={app}"), "cpu v=1 1\n")
        .await;
    assert_eq!(answer.status, 403, "{}", answer.body);
    assert_eq!(count(&app, "cpu").await, None);
    untouched(&app, "accounts").await;
    // CREATE DATABASE follows the same rule.
    for name in [app.as_str(), "public", "sluice_influx", "pg_catalog"] {
        let answer = server
            .send(
                "POST",
                &format!("/query?q=CREATE+DATABASE+%22{name}%22"),
                &[],
                "",
            )
            .await;
        assert_eq!(answer.status, 403, "{name}: {}", answer.body);
    }
    // The catalog is never a database, listed or not.
    let listed = start(listing(&["sluice_influx"])).await;
    let answer = listed
        .post("/write?db=sluice_influx", "measurements v=1 1\n")
        .await;
    assert_eq!(answer.status, 403, "{}", answer.body);
    // With a list, only the listed databases are accepted.
    let db = unique("listed");
    let only = start(listing(&[&db])).await;
    assert_eq!(
        only.post("/write?db=other", "cpu v=1 1\n").await.status,
        403
    );
    assert_eq!(
        only.post(&format!("/write?db={db}"), "cpu v=1 1\n")
            .await
            .status,
        204
    );
    rows(&format!("DROP SCHEMA \"{app}\" CASCADE")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_made_again_by_hand_is_no_longer_sluices() {
    let server = start(InfluxConfig::default()).await;
    let db = unique("influx_own");
    let path = format!("/write?db={db}");
    assert_eq!(server.post(&path, "cpu v=1 1\n").await.status, 204);
    assert_eq!(
        value(&format!(
            "SELECT count(*) FROM sluice_influx.measurements WHERE database = '{db}' AND name = 'cpu'"
        ))
        .await
        .as_deref(),
        Some("1")
    );
    // Dropped and made again by hand, with another owner's columns: another oid.
    rows(&format!(
        "DROP TABLE \"{db}\".cpu; CREATE TABLE \"{db}\".cpu (owner text, balance numeric);
         INSERT INTO \"{db}\".cpu VALUES ('alice', 10)"
    ))
    .await;
    // A server that has not cached the table refuses it.
    let fresh = start(InfluxConfig::default()).await;
    let answer = fresh.post(&path, "cpu,owner=mallory balance=5 2\n").await;
    assert_eq!(answer.status, 403, "{}", answer.body);
    untouched(&db, "cpu").await;
}

/// The README's adoption SQL for `schema`.
fn adoption_sql(schema: &str) -> String {
    let readme = include_str!("../../../../README.md");
    let block = readme
        .split("<!-- adopt -->")
        .nth(1)
        .and_then(|rest| rest.split("```sql").nth(1))
        .and_then(|rest| rest.split("```").next())
        .expect("README.md has the adoption SQL after <!-- adopt -->");
    block.replace("'telegraf'", &format!("'{schema}'"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_of_older_versions_are_adopted_by_the_readme_sql() {
    // What a Sluice without the catalog left behind: a schema and a measurement table.
    let db = unique("influx_old");
    rows(&format!(
        "CREATE SCHEMA \"{db}\";
         CREATE TABLE \"{db}\".cpu (time timestamptz NOT NULL, host text, usage float8);
         INSERT INTO \"{db}\".cpu VALUES ('2023-01-01', 'a', 0.5)"
    ))
    .await;
    let server = start(InfluxConfig::default()).await;
    let path = format!("/write?db={db}");
    let answer = server.post(&path, "cpu,host=b usage=0.7 1\n").await;
    assert_eq!(answer.status, 403, "{}", answer.body);
    assert_eq!(count(&db, "cpu").await, Some(1));

    rows(&adoption_sql(&db)).await;
    let answer = server
        .post(&path, "cpu,host=b usage=0.7 1\nmem used=1i 1\n")
        .await;
    assert_eq!(answer.status, 204, "{}", answer.body);
    assert_eq!(count(&db, "cpu").await, Some(2));
    assert_eq!(count(&db, "mem").await, Some(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_least_privilege_role_writes_and_postgresql_keeps_it_out_of_public() {
    let Some(cluster) = sluice_embedded::test_database().cluster_or_skip("least-privilege role")
    else {
        return;
    };
    let _ = cluster;
    let role = unique("influx_writer");
    let password = "writer-secret-for-this-test";
    // Make sure the catalog exists (as the superuser), then the README's grants.
    let warm = start(InfluxConfig::default()).await;
    assert_eq!(
        warm.post(&format!("/write?db={}", unique("warm")), "m v=1 1\n")
            .await
            .status,
        204
    );
    rows(&format!(
        "CREATE ROLE \"{role}\" LOGIN PASSWORD '{password}';
         GRANT CONNECT, CREATE ON DATABASE postgres TO \"{role}\";
         GRANT USAGE ON SCHEMA sluice_influx TO \"{role}\";
         GRANT SELECT, INSERT, UPDATE ON sluice_influx.databases, sluice_influx.measurements
           TO \"{role}\";
         REVOKE CREATE ON SCHEMA public FROM PUBLIC"
    ))
    .await;
    let superuser = url();
    let at = superuser.find('@').unwrap();
    let role_url = format!("postgres://{role}:{password}{}", &superuser[at..]);
    let table = application_table().await;

    // It writes its own databases.
    let server = start_with(InfluxConfig::default(), ServerOptions::default(), &role_url).await;
    let db = unique("influx_lp");
    let answer = server
        .post(
            &format!("/write?db={db}"),
            "cpu,host=a v=1 1\ncpu,host=b v=2 2\n",
        )
        .await;
    assert_eq!(answer.status, 204, "{}", answer.body);
    assert_eq!(count(&db, "cpu").await, Some(2));
    assert_eq!(
        value(&format!(
            "SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = '\"{db}\".cpu'::regclass"
        ))
        .await,
        Some(role.clone())
    );
    // Listed `public`: Sluice refuses the application's table, and a new measurement there is
    // refused by PostgreSQL itself (no CREATE on public): a 403, not a 500.
    let listed = start_with(listing(&["public"]), ServerOptions::default(), &role_url).await;
    let answer = listed
        .post(
            "/write?db=public",
            &format!("{table},owner=mallory balance=1u 1\n"),
        )
        .await;
    assert_eq!(answer.status, 403, "{}", answer.body);
    let answer = listed
        .post("/write?db=public", &format!("{} v=1 1\n", unique("new")))
        .await;
    assert_eq!(answer.status, 403, "{}", answer.body);
    assert!(answer.body.contains("permission denied"), "{}", answer.body);
    untouched("public", &table).await;
    rows(&format!("DROP TABLE public.\"{table}\"")).await;
}
