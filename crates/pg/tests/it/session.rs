//! A session's life: server errors with every field, notices, LISTEN/NOTIFY, server parameters,
//! transactions, cancellation, and futures dropped part-way.
#![allow(clippy::unwrap_used)]

use crate::common;

use sluice_pg::{ErrorKind, ErrorPosition, IsolationLevel, TransactionOptions, TransactionStatus};
use std::time::Duration;

#[tokio::test]
async fn syntax_error_has_sqlstate_and_position() {
    let mut conn = common::connect().await;
    let sql = "SELECT 1,\n  2 FRM t";
    let err = conn.query(sql, &[]).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Db);
    let db = err.as_db_error().unwrap();
    assert_eq!(db.code(), "42601");
    assert_eq!(db.severity(), "ERROR");
    assert!(
        db.message().contains("syntax error at or near"),
        "{}",
        db.message()
    );
    assert_eq!(db.position(), Some(&ErrorPosition::Original(19)));
    assert!(
        db.pretty(sql)
            .ends_with("LINE 2:   2 FRM t\n                ^"),
        "{}",
        db.pretty(sql)
    );
    assert!(db.file().is_some() && db.line().is_some() && db.routine().is_some());
    // The connection is still fine.
    assert_eq!(conn.execute("SELECT 1", &[]).await.unwrap(), 1);
}

#[tokio::test]
async fn unique_violation_names_schema_table_and_constraint() {
    let mut conn = common::connect().await;
    let table = common::unique("uv");
    conn.batch_execute(&format!("CREATE TABLE {table} (id int CONSTRAINT {table}_pk PRIMARY KEY); INSERT INTO {table} VALUES (1)"))
        .await
        .unwrap();
    let err = conn
        .execute(&format!("INSERT INTO {table} VALUES (1)"), &[])
        .await
        .unwrap_err();
    let db = err.as_db_error().unwrap();
    assert_eq!(db.code(), "23505");
    assert_eq!(db.schema(), Some("public"));
    assert_eq!(db.table(), Some(table.as_str()));
    assert_eq!(db.constraint(), Some(format!("{table}_pk").as_str()));
    assert_eq!(db.detail(), Some("Key (id)=(1) already exists."));
    // Column and datatype fields come with not-null violations.
    conn.batch_execute(&format!(
        "ALTER TABLE {table} ADD COLUMN v text NOT NULL DEFAULT ''"
    ))
    .await
    .unwrap();
    let err = conn
        .execute(&format!("INSERT INTO {table} VALUES (2, NULL)"), &[])
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("23502"));
    assert_eq!(err.as_db_error().unwrap().column(), Some("v"));
}

#[tokio::test]
async fn notices_are_collected_and_can_be_handled() {
    let mut conn = common::connect().await;
    conn.batch_execute("DO $$ BEGIN RAISE NOTICE 'first %', 1; RAISE WARNING 'second'; END $$")
        .await
        .unwrap();
    let notices = conn.take_notices();
    assert_eq!(notices.len(), 2);
    assert_eq!(notices[0].message(), "first 1");
    assert_eq!(notices[0].severity(), "NOTICE");
    assert_eq!(notices[1].severity(), "WARNING");
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    conn.set_notice_handler(move |n| sink.lock().unwrap().push(n.message().to_owned()));
    conn.batch_execute("DO $$ BEGIN RAISE NOTICE 'handled'; END $$")
        .await
        .unwrap();
    assert_eq!(*seen.lock().unwrap(), ["handled"]);
    assert!(conn.take_notices().is_empty());
}

#[tokio::test]
async fn listen_notify_between_connections() {
    let mut listener = common::connect().await;
    let mut sender = common::connect().await;
    let channel = common::unique("chan");
    listener
        .batch_execute(&format!("LISTEN {channel}"))
        .await
        .unwrap();
    sender
        .batch_execute(&format!("NOTIFY {channel}, 'hello'"))
        .await
        .unwrap();
    let n = tokio::time::timeout(Duration::from_secs(10), listener.wait_for_notification())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (n.channel.as_str(), n.payload.as_str()),
        (channel.as_str(), "hello")
    );
    assert_eq!(n.process_id, sender.process_id());
    // Notifications that arrive during a query are kept for later.
    sender
        .batch_execute(&format!("NOTIFY {channel}, 'during'"))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    listener
        .execute("SELECT pg_sleep(0.05)", &[])
        .await
        .unwrap();
    let queued = listener.take_notifications();
    assert_eq!(
        queued
            .iter()
            .map(|n| n.payload.as_str())
            .collect::<Vec<_>>(),
        ["during"]
    );
}

#[tokio::test]
async fn waiting_for_a_notification_is_cancel_safe() {
    let mut conn = common::connect().await;
    let wait = tokio::time::timeout(Duration::from_millis(50), conn.wait_for_notification()).await;
    assert!(wait.is_err(), "no notification, so the wait times out");
    assert_eq!(conn.execute("SELECT 1", &[]).await.unwrap(), 1);
}

#[tokio::test]
async fn parameter_status_updates() {
    let mut conn = common::connect().await;
    assert!(conn.server_version_num().unwrap() >= 100_000);
    conn.batch_execute("SET TimeZone = 'Asia/Tokyo'")
        .await
        .unwrap();
    assert_eq!(conn.parameter("TimeZone"), Some("Asia/Tokyo"));
    assert_eq!(conn.parameter("integer_datetimes"), Some("on"));
}

#[tokio::test]
async fn transactions_commit_rollback_and_drop() {
    let mut conn = common::connect().await;
    let table = common::unique("tx");
    conn.batch_execute(&format!("CREATE TABLE {table} (v int)"))
        .await
        .unwrap();
    let count = |n: &sluice_pg::Rows| common::text(n, 0).unwrap();

    let mut tx = conn.transaction().unwrap();
    assert_eq!(
        tx.transaction_status(),
        TransactionStatus::Idle,
        "BEGIN not sent yet"
    );
    tx.execute(&format!("INSERT INTO {table} VALUES (1)"), &[])
        .await
        .unwrap();
    assert_eq!(tx.transaction_status(), TransactionStatus::InTransaction);
    tx.commit().await.unwrap();

    let mut tx = conn.transaction().unwrap();
    tx.execute(&format!("INSERT INTO {table} VALUES (2)"), &[])
        .await
        .unwrap();
    tx.rollback().await.unwrap();

    {
        let mut tx = conn.transaction().unwrap();
        tx.execute(&format!("INSERT INTO {table} VALUES (3)"), &[])
            .await
            .unwrap();
        // Dropped: rolled back with the next request.
    }
    let rows = conn
        .query(&format!("SELECT count(*) FROM {table}"), &[])
        .await
        .unwrap();
    assert_eq!(count(&rows), "1");
    assert_eq!(conn.transaction_status(), TransactionStatus::Idle);

    // An empty transaction sends nothing.
    conn.transaction().unwrap().commit().await.unwrap();

    // COMMIT of a failed transaction is reported, not silent.
    let mut tx = conn.transaction().unwrap();
    tx.execute(&format!("INSERT INTO {table} VALUES (4)"), &[])
        .await
        .unwrap();
    assert!(tx.execute("SELECT 1/0", &[]).await.is_err());
    assert_eq!(tx.transaction_status(), TransactionStatus::Failed);
    let err = tx.commit().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::RolledBack);
    let rows = conn
        .query(&format!("SELECT count(*) FROM {table}"), &[])
        .await
        .unwrap();
    assert_eq!(count(&rows), "1");
}

#[tokio::test]
async fn transaction_options_reach_the_server() {
    let mut conn = common::connect().await;
    let mut tx = conn
        .transaction_with(TransactionOptions {
            isolation: Some(IsolationLevel::Serializable),
            read_only: Some(true),
            deferrable: None,
        })
        .unwrap();
    let rows = tx.query("SELECT current_setting('transaction_isolation'), current_setting('transaction_read_only')", &[]).await.unwrap();
    assert_eq!(common::text(&rows, 0).as_deref(), Some("serializable"));
    assert_eq!(common::text(&rows, 1).as_deref(), Some("on"));
    tx.commit().await.unwrap();
    assert!(conn.transaction().is_ok());
}

#[tokio::test]
async fn nested_transaction_is_refused() {
    let mut conn = common::connect().await;
    conn.batch_execute("BEGIN").await.unwrap();
    assert_eq!(
        conn.transaction().err().map(|e| e.kind()),
        Some(ErrorKind::Usage)
    );
    conn.batch_execute("ROLLBACK").await.unwrap();
}

#[tokio::test]
async fn cancel_a_running_query() {
    let mut conn = common::connect().await;
    let token = conn.cancel_token();
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        token.cancel().await.unwrap();
    });
    let started = std::time::Instant::now();
    let err = conn.execute("SELECT pg_sleep(30)", &[]).await.unwrap_err();
    assert_eq!(err.code(), Some("57014"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(20));
    canceller.await.unwrap();
    assert_eq!(conn.execute("SELECT 1", &[]).await.unwrap(), 1);
}

#[tokio::test]
async fn dropped_query_future_leaves_the_connection_usable() {
    let mut conn = common::connect().await;
    // The query is sent, then its future is dropped while the server sleeps.
    let r = tokio::time::timeout(
        Duration::from_millis(100),
        conn.execute("SELECT pg_sleep(0.5)", &[]),
    )
    .await;
    assert!(r.is_err());
    assert!(conn.is_busy());
    let rows = conn.query("SELECT 42", &[]).await.unwrap();
    assert_eq!(common::text(&rows, 0).as_deref(), Some("42"));
    assert!(!conn.is_busy());
}

#[tokio::test]
async fn dropped_row_stream_is_drained() {
    let mut conn = common::connect().await;
    {
        let mut stream = conn
            .query_stream(
                "SELECT g, repeat('x', 100) FROM generate_series(1, 200000) g",
                &[],
            )
            .await
            .unwrap();
        let first = stream.next_block().await.unwrap().unwrap();
        assert!(!first.is_empty());
    }
    let rows = conn.query("SELECT 'after'", &[]).await.unwrap();
    assert_eq!(common::text(&rows, 0).as_deref(), Some("after"));
}

#[tokio::test]
async fn error_mid_stream_after_some_rows() {
    let mut conn = common::connect().await;
    let mut stream = conn
        .query_stream(
            "SELECT 1 / (5000 - g) FROM generate_series(1, 10000) g",
            &[],
        )
        .await
        .unwrap();
    let mut rows = 0;
    let err = loop {
        match stream.next_block().await {
            Ok(Some(b)) => rows += b.len(),
            Ok(None) => panic!("the division by zero must surface"),
            Err(e) => break e,
        }
    };
    assert_eq!(err.code(), Some("22012"));
    assert!(rows < 5000);
    drop(stream);
    assert_eq!(conn.execute("SELECT 1", &[]).await.unwrap(), 1);
}

#[tokio::test]
async fn query_one_and_query_opt_count_rows() {
    let mut conn = common::connect().await;
    let row = conn.query_one("SELECT 'one'", &[]).await.unwrap();
    assert_eq!(row.raw(0), Some(&b"one"[..]));
    assert!(
        conn.query_opt("SELECT 1 WHERE false", &[])
            .await
            .unwrap()
            .is_none()
    );
    let err = conn
        .query_one("SELECT 1 WHERE false", &[])
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::RowCount);
    let err = conn
        .query_one("SELECT generate_series(1, 2)", &[])
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::RowCount);
    assert_eq!(conn.execute("SELECT 1", &[]).await.unwrap(), 1);
}

#[tokio::test]
async fn simple_query_runs_several_statements() {
    let mut conn = common::connect().await;
    let results = conn
        .simple_query("SELECT 1 AS a; SELECT 'x' AS b, NULL AS c; SET application_name = 'z'")
        .await
        .unwrap();
    assert_eq!(results.len(), 3);
    assert_eq!(results[0].columns()[0].name(), "a");
    assert_eq!(results[1].get(0).unwrap().raw(1), None);
    assert_eq!(results[2].command_tag().as_str(), "SET");
    // Empty query strings are not an error.
    assert!(conn.simple_query("").await.unwrap().is_empty());
    // COPY through a row API is refused cleanly.
    let err = conn
        .simple_query("COPY (SELECT 1) TO STDOUT")
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Usage);
    assert_eq!(conn.execute("SELECT 1", &[]).await.unwrap(), 1);
}

#[tokio::test]
async fn zero_column_rows_are_counted() {
    let mut conn = common::connect().await;
    let rows = conn
        .query("SELECT FROM generate_series(1, 3)", &[])
        .await
        .unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows.iter().count(), 3);
}

#[tokio::test]
async fn prepended_statements_ride_with_the_next_request() {
    let mut conn = common::connect().await;
    conn.prepend("SET application_name = 'prepended'");
    let rows = conn
        .query("SELECT current_setting('application_name')", &[])
        .await
        .unwrap();
    assert_eq!(common::text(&rows, 0).as_deref(), Some("prepended"));
    // A failing prepended statement fails the request it rode with, and only that.
    conn.prepend("SELECT 1/0");
    let err = conn.query("SELECT 1", &[]).await.unwrap_err();
    assert_eq!(err.code(), Some("22012"));
    assert_eq!(conn.execute("SELECT 1", &[]).await.unwrap(), 1);
}

#[tokio::test]
async fn open_transaction_is_rolled_back_before_the_next_user() {
    let mut conn = common::connect().await;
    let table = common::unique("handoff");
    // Separate requests: a BEGIN inside one Query would pull the CREATE into the transaction.
    conn.batch_execute(&format!("CREATE TABLE {table} (v int)"))
        .await
        .unwrap();
    conn.batch_execute(&format!("BEGIN; INSERT INTO {table} VALUES (1)"))
        .await
        .unwrap();
    assert_eq!(conn.transaction_status(), TransactionStatus::InTransaction);
    conn.prepend_rollback_if_open();
    let rows = conn
        .query(&format!("SELECT count(*) FROM {table}"), &[])
        .await
        .unwrap();
    assert_eq!(common::text(&rows, 0).as_deref(), Some("0"));
    assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
    conn.prepend_rollback_if_open();
    assert_eq!(
        conn.execute("SELECT 1", &[]).await.unwrap(),
        1,
        "no ROLLBACK when idle"
    );
    assert!(
        conn.take_notices().is_empty(),
        "no 'no transaction in progress' warning"
    );
}

#[tokio::test]
async fn finish_pending_settles_after_a_cancelled_abandoned_query() {
    let mut conn = common::connect().await;
    let token = conn.cancel_token();
    let r = tokio::time::timeout(
        Duration::from_millis(100),
        conn.execute("SELECT pg_sleep(30)", &[]),
    )
    .await;
    assert!(r.is_err() && conn.is_busy());
    token.cancel().await.unwrap();
    let started = std::time::Instant::now();
    conn.finish_pending().await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(!conn.is_busy());
    assert_eq!(conn.execute("SELECT 1", &[]).await.unwrap(), 1);
}

const RESET_NAME: &[&str] = &["RESET application_name", "SELECT pg_advisory_unlock_all()"];

async fn application_name(conn: &mut sluice_pg::Connection) -> String {
    let rows = conn.simple_query("SHOW application_name").await.unwrap();
    common::text(&rows[0], 0).unwrap()
}

#[tokio::test]
async fn fused_reset_applies_with_the_next_statement() {
    let mut conn = common::connect().await;
    let default = application_name(&mut conn).await;
    conn.batch_execute("SET application_name = 'dirty'")
        .await
        .unwrap();
    conn.prepend_reset(RESET_NAME);
    let rows = conn
        .query("SELECT current_setting('application_name')", &[])
        .await
        .unwrap();
    assert_eq!(
        common::text(&rows, 0),
        Some(default.clone()),
        "the statement sees the reset"
    );
    assert_eq!(application_name(&mut conn).await, default);
}

#[tokio::test]
async fn fused_reset_is_queued_again_when_its_request_fails() {
    let mut conn = common::connect().await;
    let default = application_name(&mut conn).await;
    conn.batch_execute("SET application_name = 'dirty'")
        .await
        .unwrap();
    conn.prepend_reset(RESET_NAME);
    let err = conn.query("SELECT 1/0", &[]).await.unwrap_err();
    assert_eq!(err.code(), Some("22012"));
    // The failed group rolled the reset back; it rides again with the next statement.
    let rows = conn
        .query("SELECT current_setting('application_name')", &[])
        .await
        .unwrap();
    assert_eq!(common::text(&rows, 0), Some(default));
}

#[tokio::test]
async fn reset_falls_back_for_statements_that_refuse_transaction_blocks() {
    let mut conn = common::connect().await;
    let table = common::unique("vac");
    conn.batch_execute(&format!("CREATE TABLE {table} (v int)"))
        .await
        .unwrap();
    conn.batch_execute("SET application_name = 'dirty'")
        .await
        .unwrap();
    conn.prepend_reset(RESET_NAME);
    conn.execute(&format!("VACUUM {table}"), &[]).await.unwrap();
    assert_ne!(application_name(&mut conn).await, "dirty");
    // Pending BEGIN: the reset goes first, outside the transaction the caller opens.
    conn.batch_execute("SET application_name = 'dirty'")
        .await
        .unwrap();
    conn.prepend_reset(RESET_NAME);
    let mut tx = conn.transaction().unwrap();
    tx.execute("SELECT 1", &[]).await.unwrap();
    tx.rollback().await.unwrap();
    assert_ne!(
        application_name(&mut conn).await,
        "dirty",
        "the caller's ROLLBACK kept the reset"
    );
}

#[tokio::test]
async fn prepared_reset_survives_deallocation() {
    let mut conn = common::connect().await;
    for deallocate in [
        "DEALLOCATE ALL",
        "DEALLOCATE sluice_reset_0_0",
        "DISCARD ALL",
    ] {
        conn.prepend_reset(RESET_NAME);
        conn.query("SELECT 1", &[]).await.unwrap();
        conn.batch_execute(deallocate).await.unwrap();
        conn.batch_execute("SET application_name = 'dirty'")
            .await
            .unwrap();
        conn.prepend_reset(RESET_NAME);
        let rows = conn
            .query("SELECT current_setting('application_name')", &[])
            .await
            .unwrap();
        assert_ne!(
            common::text(&rows, 0).as_deref(),
            Some("dirty"),
            "after {deallocate}"
        );
    }
}
