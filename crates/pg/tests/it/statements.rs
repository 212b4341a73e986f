//! The statement cache: automatic preparation, eviction, stale statements, and turning it off.
#![allow(clippy::unwrap_used)]

use crate::common;

use sluice_pg::{Config, Connection};

async fn connect_with(threshold: u32, capacity: usize) -> Connection {
    let mut config = Config::parse(common::db().url()).unwrap();
    config
        .set_prepare_threshold(threshold)
        .set_statement_cache_capacity(capacity);
    Connection::connect_with(&config).await.unwrap()
}

async fn server_statements(conn: &mut Connection) -> i64 {
    let rows = conn
        .simple_query("SELECT count(*) FROM pg_prepared_statements")
        .await
        .unwrap();
    common::text(&rows[0], 0).unwrap().parse().unwrap()
}

#[tokio::test]
async fn prepares_after_threshold_runs() {
    let mut conn = connect_with(3, 16).await;
    for i in 1..=5 {
        conn.query("SELECT 1 + 1", &[]).await.unwrap();
        assert_eq!(
            conn.cached_statements(),
            usize::from(i >= 3),
            "after {i} runs"
        );
    }
    assert_eq!(server_statements(&mut conn).await, 1);
}

#[tokio::test]
async fn threshold_zero_never_prepares() {
    let mut conn = connect_with(0, 16).await;
    for _ in 0..10 {
        conn.query("SELECT 2", &[]).await.unwrap();
    }
    assert_eq!(conn.cached_statements(), 0);
    assert_eq!(server_statements(&mut conn).await, 0);
}

#[tokio::test]
async fn eviction_closes_statements_on_the_server() {
    let mut conn = connect_with(1, 4).await;
    for i in 0..20 {
        conn.query(&format!("SELECT {i}"), &[]).await.unwrap();
    }
    assert_eq!(conn.cached_statements(), 4);
    // The Close messages of evicted statements ride with the next request.
    assert_eq!(server_statements(&mut conn).await, 4);
}

#[tokio::test]
async fn stale_statement_is_prepared_again() {
    let mut conn = connect_with(1, 16).await;
    let table = common::unique("stale");
    conn.batch_execute(&format!(
        "CREATE TABLE {table} (a int); INSERT INTO {table} VALUES (1)"
    ))
    .await
    .unwrap();
    let sql = format!("SELECT * FROM {table}");
    assert_eq!(conn.query(&sql, &[]).await.unwrap().columns().len(), 1);
    conn.batch_execute(&format!(
        "ALTER TABLE {table} ADD COLUMN b text DEFAULT 'x'"
    ))
    .await
    .unwrap();
    // "cached plan must not change result type": re-prepared and retried once, transparently.
    let rows = conn.query(&sql, &[]).await.unwrap();
    assert_eq!(rows.columns().len(), 2);
    assert_eq!(common::text(&rows, 1).as_deref(), Some("x"));

    // Statements dropped behind our back ("does not exist") are prepared again too.
    conn.batch_execute("DEALLOCATE ALL").await.unwrap();
    assert_eq!(
        conn.cached_statements(),
        0,
        "DEALLOCATE ALL clears the cache"
    );
    conn.query(&sql, &[]).await.unwrap();
    conn.batch_execute("SELECT pg_catalog.set_config('search_path', 'public', false)")
        .await
        .unwrap();
    let name = conn.prepare(&sql).await.unwrap().name().to_owned();
    conn.execute(&format!("DEALLOCATE {name}"), &[])
        .await
        .unwrap();
    assert_eq!(conn.query(&sql, &[]).await.unwrap().len(), 1);
}

#[tokio::test]
async fn stale_statement_inside_a_transaction_fails_once_then_recovers() {
    let mut conn = connect_with(1, 16).await;
    let table = common::unique("stale_tx");
    conn.batch_execute(&format!("CREATE TABLE {table} (a int)"))
        .await
        .unwrap();
    let sql = format!("SELECT * FROM {table}");
    conn.query(&sql, &[]).await.unwrap();
    let mut tx = conn.transaction().unwrap();
    tx.batch_execute(&format!("ALTER TABLE {table} ADD COLUMN b int"))
        .await
        .unwrap();
    let err = tx.query(&sql, &[]).await.unwrap_err();
    assert_eq!(err.code(), Some("0A000"));
    tx.rollback().await.unwrap();
    conn.batch_execute(&format!("ALTER TABLE {table} ADD COLUMN b int"))
        .await
        .unwrap();
    assert_eq!(conn.query(&sql, &[]).await.unwrap().columns().len(), 2);
}

#[tokio::test]
async fn explicit_prepare_describes_params_and_columns() {
    let mut conn = common::connect().await;
    let s = conn
        .prepare("SELECT $1::int4 AS n, $2::text AS t")
        .await
        .unwrap();
    assert_eq!(s.param_types(), &[23, 25]);
    assert_eq!(
        s.columns().iter().map(|c| c.name()).collect::<Vec<_>>(),
        ["n", "t"]
    );
    assert_eq!(s.columns()[0].type_oid(), 23);
    let err = conn.prepare("SELECT nope").await.unwrap_err();
    assert_eq!(err.code(), Some("42703"));
}

#[tokio::test]
async fn a_trailed_stream_dropped_unread_leaves_no_statement_on_the_server() {
    // Every statement prepared at its first use.
    let mut conn = connect_with(1, 16).await;
    for round in 0..3 {
        let mut batch = conn.pipeline(sluice_pg::SyncMode::Once).await.unwrap();
        batch.query("SELECT generate_series(1, 5000)", &[]).unwrap();
        batch
            .query(&format!("SELECT {round} AS trailing_{round}"), &[])
            .unwrap();
        let (_, stream) = batch.run_stream_then(1).await.unwrap();
        // A client gone mid-answer: neither the rows nor the trailing statement are read.
        drop(stream);
    }
    // The streamed statement is cached (its head was read); the trailing ones were never
    // recorded, and none of them stays on the server.
    assert_eq!(server_statements(&mut conn).await, 1);
}
