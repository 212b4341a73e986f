//! Pipelines: many statements in one write, results in order, errors per Sync mode.
#![allow(clippy::unwrap_used)]

use crate::common;

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
    conn.batch_execute(&format!("CREATE TABLE {table} (v int)"))
        .await
        .unwrap();
    let mut p = conn.pipeline(SyncMode::PerStatement).await.unwrap();
    p.query(&format!("INSERT INTO {table} VALUES (1)"), &[])
        .unwrap();
    p.query("SELECT 1/0", &[]).unwrap();
    p.query(&format!("INSERT INTO {table} VALUES (3)"), &[])
        .unwrap();
    let results = p.run().await.unwrap();
    assert!(results[0].is_ok());
    assert_eq!(results[1].as_ref().unwrap_err().code(), Some("22012"));
    assert_eq!(
        results[2].as_ref().unwrap().command_tag().rows_affected(),
        1
    );
    let rows = conn
        .query(
            &format!("SELECT string_agg(v::text, ',' ORDER BY v) FROM {table}"),
            &[],
        )
        .await
        .unwrap();
    assert_eq!(common::text(&rows, 0).as_deref(), Some("1,3"));
}

#[tokio::test]
async fn error_in_the_middle_with_one_sync_fails_everything() {
    let mut conn = common::connect().await;
    let table = common::unique("pipe_once");
    conn.batch_execute(&format!("CREATE TABLE {table} (v int)"))
        .await
        .unwrap();
    let mut p = conn.pipeline(SyncMode::Once).await.unwrap();
    p.query(&format!("INSERT INTO {table} VALUES (1)"), &[])
        .unwrap();
    p.query("SELECT 1/0", &[]).unwrap();
    p.query(&format!("INSERT INTO {table} VALUES (3)"), &[])
        .unwrap();
    let results = p.run().await.unwrap();
    assert_eq!(
        results[0].as_ref().unwrap_err().kind(),
        ErrorKind::PipelineAborted
    );
    assert_eq!(results[1].as_ref().unwrap_err().code(), Some("22012"));
    assert_eq!(
        results[2].as_ref().unwrap_err().kind(),
        ErrorKind::PipelineAborted
    );
    let rows = conn
        .query(&format!("SELECT count(*) FROM {table}"), &[])
        .await
        .unwrap();
    assert_eq!(
        common::text(&rows, 0).as_deref(),
        Some("0"),
        "all or nothing"
    );
}

#[tokio::test]
async fn groups_are_transactions_of_their_own() {
    let mut conn = common::connect().await;
    let table = common::unique("pipe_groups");
    conn.batch_execute(&format!("CREATE TABLE {table} (v int)"))
        .await
        .unwrap();
    let mut p = conn.pipeline(SyncMode::Groups).await.unwrap();
    // Group 1: a local setting holds for the next statement of its group.
    p.query("SELECT set_config('sluice.g', 'one', true)", &[])
        .unwrap();
    p.query("SELECT current_setting('sluice.g', true)", &[])
        .unwrap();
    p.sync();
    p.sync(); // an empty group is no group
    // Group 2: fails in the middle, nothing of it takes effect.
    p.query(&format!("INSERT INTO {table} VALUES (1)"), &[])
        .unwrap();
    p.query("SELECT 1/0", &[]).unwrap();
    p.query(&format!("INSERT INTO {table} VALUES (2)"), &[])
        .unwrap();
    p.sync();
    // Group 3 (closed by run): the setting ended with group 1; its insert stays.
    p.query("SELECT current_setting('sluice.g', true)", &[])
        .unwrap();
    p.query(&format!("INSERT INTO {table} VALUES (3)"), &[])
        .unwrap();
    let results = p.run().await.unwrap();
    assert_eq!(results.len(), 7);
    assert_eq!(
        common::text(results[1].as_ref().unwrap(), 0).as_deref(),
        Some("one")
    );
    assert_eq!(
        results[2].as_ref().unwrap_err().kind(),
        ErrorKind::PipelineAborted
    );
    assert_eq!(results[3].as_ref().unwrap_err().code(), Some("22012"));
    assert_eq!(
        results[4].as_ref().unwrap_err().kind(),
        ErrorKind::PipelineAborted
    );
    assert_ne!(
        common::text(results[5].as_ref().unwrap(), 0).as_deref(),
        Some("one")
    );
    assert!(results[6].is_ok());
    let rows = conn
        .query(
            &format!("SELECT string_agg(v::text, ',' ORDER BY v) FROM {table}"),
            &[],
        )
        .await
        .unwrap();
    assert_eq!(common::text(&rows, 0).as_deref(), Some("3"));
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
    let rows = conn
        .simple_query("SELECT count(*) FROM pg_prepared_statements")
        .await
        .unwrap();
    assert_eq!(common::text(&rows[0], 0).as_deref(), Some("2"));
}

#[tokio::test]
async fn unrun_pipeline_sends_nothing() {
    let mut conn = common::connect().await;
    let table = common::unique("pipe_drop");
    conn.batch_execute(&format!("CREATE TABLE {table} (v int)"))
        .await
        .unwrap();
    {
        let mut p = conn.pipeline(SyncMode::Once).await.unwrap();
        p.query(&format!("INSERT INTO {table} VALUES (1)"), &[])
            .unwrap();
    }
    let rows = conn
        .query(&format!("SELECT count(*) FROM {table}"), &[])
        .await
        .unwrap();
    assert_eq!(common::text(&rows, 0).as_deref(), Some("0"));
}

#[tokio::test]
async fn pipeline_inside_a_transaction() {
    let mut conn = common::connect().await;
    let table = common::unique("pipe_tx");
    conn.batch_execute(&format!("CREATE TABLE {table} (v int)"))
        .await
        .unwrap();
    let mut tx = conn.transaction().unwrap();
    let mut p = tx.pipeline(SyncMode::PerStatement).await.unwrap();
    p.query(&format!("INSERT INTO {table} VALUES (1)"), &[])
        .unwrap();
    p.query(&format!("INSERT INTO {table} VALUES (2)"), &[])
        .unwrap();
    assert!(p.run().await.unwrap().iter().all(Result::is_ok));
    tx.rollback().await.unwrap();
    let rows = conn
        .query(&format!("SELECT count(*) FROM {table}"), &[])
        .await
        .unwrap();
    assert_eq!(common::text(&rows, 0).as_deref(), Some("0"));
}

/// The session settings a statement needs, sent in front of it in the same write and the same
/// implicit transaction; its rows streamed; nothing set outlives the batch.
#[tokio::test]
async fn run_stream_runs_settings_and_streams_the_last_statement() {
    let mut conn = common::connect().await;
    for round in 0..7 {
        let mut batch = conn.pipeline(SyncMode::Once).await.unwrap();
        batch
            .query(
                "SELECT set_config('request.path', $1, true), set_config('search_path', $2, true)",
                &[&format!("/films/{round}"), &"pg_catalog"],
            )
            .unwrap();
        batch
            .query(
                "SELECT current_setting('request.path'), g FROM generate_series(1, $1::int) g",
                &[&3000i32],
            )
            .unwrap();
        let (before, mut stream) = batch.run_stream().await.unwrap();
        assert_eq!(before.len(), 1);
        let mut rows = 0;
        while let Some(block) = stream.next_block().await.unwrap() {
            for row in block.iter() {
                assert_eq!(row.get::<&str>(0).unwrap(), format!("/films/{round}"));
                rows += 1;
            }
        }
        drop(stream);
        assert_eq!(rows, 3000);
        let left = conn
            .query_one("SELECT current_setting('request.path', true)", &[])
            .await
            .unwrap();
        assert_eq!(left.get::<Option<&str>>(0).unwrap().unwrap_or(""), "");
    }
}

#[tokio::test]
async fn run_stream_reports_a_failing_setting_and_leaves_the_connection_usable() {
    let mut conn = common::connect().await;
    let mut batch = conn.pipeline(SyncMode::Once).await.unwrap();
    batch
        .query("SET LOCAL ROLE no_such_role_here", &[])
        .unwrap();
    batch.query("SELECT 1", &[]).unwrap();
    let error = batch.run_stream().await.unwrap_err();
    assert_eq!(error.code(), Some("22023"), "{error}");
    let mut batch = conn.pipeline(SyncMode::Once).await.unwrap();
    batch.query("SELECT 1", &[]).unwrap();
    batch.query("SELECT 1/0", &[]).unwrap();
    // The division fails either at the start of its rows or in the first block.
    let error = match batch.run_stream().await {
        Err(error) => error,
        Ok((_, mut stream)) => loop {
            match stream.next_block().await {
                Err(error) => break error,
                Ok(None) => panic!("1/0 gave rows"),
                Ok(Some(_)) => {}
            }
        },
    };
    assert_eq!(error.code(), Some("22012"), "{error}");
    let row = conn.query_one("SELECT 41 + 1", &[]).await.unwrap();
    assert_eq!(row.get::<i32>(0).unwrap(), 42);
}

/// A statement streamed with one after it in the same implicit transaction: the one after
/// reads what the streamed one set, once its rows are read; an error after the rows is the
/// trailing read's; the connection stays usable either way.
#[tokio::test]
async fn run_stream_then_reads_the_statements_after_the_streamed_one() {
    let mut conn = common::connect().await;
    for round in 0..3 {
        let mut batch = conn.pipeline(SyncMode::Once).await.unwrap();
        batch
            .query(
                "SELECT g, set_config('response.status', g::text, true) \
                 FROM generate_series(1, $1::int) g",
                &[&(3000 + round)],
            )
            .unwrap();
        batch
            .query("SELECT current_setting('response.status', true)", &[])
            .unwrap();
        let (before, mut stream) = batch.run_stream_then(1).await.unwrap();
        assert!(before.is_empty());
        let mut rows = 0;
        while let Some(block) = stream.next_block().await.unwrap() {
            rows += block.iter().count();
        }
        assert_eq!(rows, 3000 + round as usize);
        let after = stream.trailing().await.unwrap();
        assert_eq!(after.len(), 1);
        assert_eq!(
            common::text(&after[0], 0).as_deref(),
            Some((3000 + round).to_string().as_str())
        );
        // Dropped unread: the rest is read away before the next request.
        let mut batch = conn.pipeline(SyncMode::Once).await.unwrap();
        batch.query("SELECT generate_series(1, 5000)", &[]).unwrap();
        batch.query("SELECT 1", &[]).unwrap();
        let (_, stream) = batch.run_stream_then(1).await.unwrap();
        drop(stream);
    }
    let mut batch = conn.pipeline(SyncMode::Once).await.unwrap();
    batch.query("SELECT 1", &[]).unwrap();
    batch.query("SELECT 1/0", &[]).unwrap();
    let (_, stream) = batch.run_stream_then(1).await.unwrap();
    let error = stream.trailing().await.unwrap_err();
    assert_eq!(error.code(), Some("22012"), "{error}");
    let batch = conn.pipeline(SyncMode::Once).await.unwrap();
    assert!(batch.run_stream_then(1).await.is_err());
    let row = conn.query_one("SELECT 41 + 1", &[]).await.unwrap();
    assert_eq!(row.get::<i32>(0).unwrap(), 42);
}

/// A table whose foreign key is checked at commit: an insert breaking it succeeds as a
/// statement and fails at the Sync that commits the implicit transaction.
async fn deferred_key_table(conn: &mut sluice_pg::Connection) -> String {
    let table = common::unique("pipe_deferred");
    conn.batch_execute(&format!(
        "CREATE TABLE {table}_parent (id int PRIMARY KEY);
         CREATE TABLE {table} (v int REFERENCES {table}_parent DEFERRABLE INITIALLY DEFERRED)"
    ))
    .await
    .unwrap();
    table
}

#[tokio::test]
async fn a_commit_failing_at_the_sync_fails_the_group() {
    let mut conn = common::connect().await;
    let table = deferred_key_table(&mut conn).await;
    for mode in [SyncMode::Once, SyncMode::PerStatement] {
        let mut p = conn.pipeline(mode).await.unwrap();
        p.query("SELECT 1", &[]).unwrap();
        p.query(&format!("INSERT INTO {table} VALUES (7)"), &[])
            .unwrap();
        let results = p.run().await.unwrap();
        let failed = results
            .iter()
            .find_map(|r| r.as_ref().err())
            .unwrap_or_else(|| panic!("{mode:?}: a failed commit answered {results:?}"));
        assert_eq!(failed.code(), Some("23503"), "{mode:?}: {failed}");
        // Every statement of the group that failed to commit reports it.
        if mode == SyncMode::Once {
            assert!(results.iter().all(Result::is_err), "{results:?}");
        }
        let rows = conn
            .query(&format!("SELECT count(*)::text FROM {table}"), &[])
            .await
            .unwrap();
        assert_eq!(common::text(&rows, 0).as_deref(), Some("0"));
    }
}

#[tokio::test]
async fn a_commit_failing_after_a_trailed_stream_is_its_error() {
    let mut conn = common::connect().await;
    let table = deferred_key_table(&mut conn).await;
    let mut p = conn.pipeline(SyncMode::Once).await.unwrap();
    p.query(&format!("INSERT INTO {table} VALUES (7) RETURNING v"), &[])
        .unwrap();
    p.query("SELECT 2", &[]).unwrap();
    let (_, stream) = p.run_stream_then(1).await.unwrap();
    let error = stream
        .trailing()
        .await
        .expect_err("the commit failed at the Sync");
    assert_eq!(error.code(), Some("23503"), "{error}");
    // The connection is usable after it.
    let rows = conn
        .query(&format!("SELECT count(*)::text FROM {table}"), &[])
        .await
        .unwrap();
    assert_eq!(common::text(&rows, 0).as_deref(), Some("0"));
}

#[tokio::test]
async fn a_misused_run_stream_sends_nothing() {
    let mut conn = common::connect().await;
    let table = common::unique("pipe_misused");
    conn.batch_execute(&format!("CREATE TABLE {table} (v int)"))
        .await
        .unwrap();
    let mut p = conn.pipeline(SyncMode::Groups).await.unwrap();
    p.query(&format!("INSERT INTO {table} VALUES (1)"), &[])
        .unwrap();
    p.query("SELECT 1", &[]).unwrap();
    let Err(error) = p.run_stream().await else {
        panic!("a usage error")
    };
    assert_eq!(error.kind(), ErrorKind::Usage);
    // The insert did not ride along with the next request.
    let rows = conn
        .query(&format!("SELECT count(*)::text FROM {table}"), &[])
        .await
        .unwrap();
    assert_eq!(common::text(&rows, 0).as_deref(), Some("0"));
}
