//! Pipelines: many statements in one write, results in order, errors per Sync mode.
#![allow(clippy::unwrap_used)]

mod common;

use sluice_pg::{ErrorKind, SyncMode};

#[tokio::test]
async fn results_come_back_in_order() {
    let mut conn = common::connect().await;
    let mut p = conn.pipeline(SyncMode::PerStatement).await.unwrap();
    for i in 0..100 {
        p.query(&format!("SELECT {i}"), &[]).unwrap();
    }
    let results = p.run().await.unwrap();
    assert_eq!(results.len(), 100);
    for (i, r) in results.into_iter().enumerate() {
        assert_eq!(common::text(&r.unwrap(), 0), Some(i.to_string()));
    }
}

#[tokio::test]
async fn error_in_the_middle_per_statement_fails_only_itself() {
    let mut conn = common::connect().await;
    let table = common::unique("pipe_each");
    conn.batch_execute(&format!("CREATE TABLE {table} (v int)")).await.unwrap();
    let mut p = conn.pipeline(SyncMode::PerStatement).await.unwrap();
    p.query(&format!("INSERT INTO {table} VALUES (1)"), &[]).unwrap();
    p.query("SELECT 1/0", &[]).unwrap();
    p.query(&format!("INSERT INTO {table} VALUES (3)"), &[]).unwrap();
    let results = p.run().await.unwrap();
    assert!(results[0].is_ok());
    assert_eq!(results[1].as_ref().unwrap_err().code(), Some("22012"));
    assert_eq!(results[2].as_ref().unwrap().command_tag().rows_affected(), 1);
    let rows = conn.query(&format!("SELECT string_agg(v::text, ',' ORDER BY v) FROM {table}"), &[]).await.unwrap();
    assert_eq!(common::text(&rows, 0).as_deref(), Some("1,3"));
}

#[tokio::test]
async fn error_in_the_middle_with_one_sync_fails_everything() {
    let mut conn = common::connect().await;
    let table = common::unique("pipe_once");
    conn.batch_execute(&format!("CREATE TABLE {table} (v int)")).await.unwrap();
    let mut p = conn.pipeline(SyncMode::Once).await.unwrap();
    p.query(&format!("INSERT INTO {table} VALUES (1)"), &[]).unwrap();
    p.query("SELECT 1/0", &[]).unwrap();
    p.query(&format!("INSERT INTO {table} VALUES (3)"), &[]).unwrap();
    let results = p.run().await.unwrap();
    assert_eq!(results[0].as_ref().unwrap_err().kind(), ErrorKind::PipelineAborted);
    assert_eq!(results[1].as_ref().unwrap_err().code(), Some("22012"));
    assert_eq!(results[2].as_ref().unwrap_err().kind(), ErrorKind::PipelineAborted);
    let rows = conn.query(&format!("SELECT count(*) FROM {table}"), &[]).await.unwrap();
    assert_eq!(common::text(&rows, 0).as_deref(), Some("0"), "all or nothing");
}

#[tokio::test]
async fn repeated_sql_in_one_pipeline_is_prepared_once() {
    let mut conn = common::connect().await;
    let mut p = conn.pipeline(SyncMode::Once).await.unwrap();
    for i in 0..50 {
        p.query(&format!("SELECT {} + 0", i % 2), &[]).unwrap();
    }
    let results = p.run().await.unwrap();
    for (i, r) in results.into_iter().enumerate() {
        assert_eq!(common::text(&r.unwrap(), 0), Some((i % 2).to_string()));
    }
    assert_eq!(conn.cached_statements(), 2);
    let rows = conn.simple_query("SELECT count(*) FROM pg_prepared_statements").await.unwrap();
    assert_eq!(common::text(&rows[0], 0).as_deref(), Some("2"));
}

#[tokio::test]
async fn unrun_pipeline_sends_nothing() {
    let mut conn = common::connect().await;
    let table = common::unique("pipe_drop");
    conn.batch_execute(&format!("CREATE TABLE {table} (v int)")).await.unwrap();
    {
        let mut p = conn.pipeline(SyncMode::Once).await.unwrap();
        p.query(&format!("INSERT INTO {table} VALUES (1)"), &[]).unwrap();
    }
    let rows = conn.query(&format!("SELECT count(*) FROM {table}"), &[]).await.unwrap();
    assert_eq!(common::text(&rows, 0).as_deref(), Some("0"));
}

#[tokio::test]
async fn pipeline_inside_a_transaction() {
    let mut conn = common::connect().await;
    let table = common::unique("pipe_tx");
    conn.batch_execute(&format!("CREATE TABLE {table} (v int)")).await.unwrap();
    let mut tx = conn.transaction().unwrap();
    let mut p = tx.pipeline(SyncMode::PerStatement).await.unwrap();
    p.query(&format!("INSERT INTO {table} VALUES (1)"), &[]).unwrap();
    p.query(&format!("INSERT INTO {table} VALUES (2)"), &[]).unwrap();
    assert!(p.run().await.unwrap().iter().all(Result::is_ok));
    tx.rollback().await.unwrap();
    let rows = conn.query(&format!("SELECT count(*) FROM {table}"), &[]).await.unwrap();
    assert_eq!(common::text(&rows, 0).as_deref(), Some("0"));
}
