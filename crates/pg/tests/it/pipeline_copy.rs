//! COPY FROM STDIN inside a pipeline: statements, COPYs with their data and the commit in one
//! round trip, all or nothing under one Sync.
#![allow(clippy::unwrap_used)]

use crate::common;

use bytes::{BufMut, BytesMut};
use sluice_pg::{BINARY_HEADER, ErrorKind, SyncMode};

/// Binary COPY data of `(id int4, name text)` rows.
fn binary_rows(rows: impl IntoIterator<Item = (i32, String)>) -> BytesMut {
    let mut buf = BytesMut::new();
    buf.put_slice(BINARY_HEADER);
    for (id, name) in rows {
        buf.put_i16(2);
        buf.put_i32(4);
        buf.put_i32(id);
        buf.put_i32(name.len() as i32);
        buf.put_slice(name.as_bytes());
    }
    buf.put_i16(-1);
    buf
}

async fn count(conn: &mut sluice_pg::Connection, table: &str) -> String {
    let rows = conn
        .query(&format!("SELECT count(*)::text FROM {table}"), &[])
        .await
        .unwrap();
    common::text(&rows, 0).unwrap()
}

#[tokio::test]
async fn deletes_copies_and_a_query_share_one_sync() {
    let mut conn = common::connect().await;
    let table = common::unique("pipe_copy");
    conn.batch_execute(&format!(
        "CREATE TABLE {table} (id int4 PRIMARY KEY, name text); \
         INSERT INTO {table} SELECT g, 'old' FROM generate_series(1, 10) g"
    ))
    .await
    .unwrap();
    let ids: Vec<i32> = (1..=5).collect();
    let binary = binary_rows((1..=5).map(|i| (i, format!("new{i}"))));
    let mut p = conn.pipeline(SyncMode::Once).await.unwrap();
    p.query(
        &format!("DELETE FROM {table} WHERE id = ANY($1::int4[])"),
        &[&ids],
    )
    .unwrap();
    let copied = p
        .copy_in(
            &format!("COPY {table} (id, name) FROM STDIN (FORMAT binary)"),
            &binary,
        )
        .unwrap();
    let text = p
        .copy_in(
            &format!("COPY {table} (id, name) FROM STDIN"),
            b"11\televen\n12\ttwelve\n",
        )
        .unwrap();
    let total = p
        .query(
            &format!(
                "SELECT count(*)::text, count(*) FILTER (WHERE name LIKE 'new%')::text FROM {table}"
            ),
            &[],
        )
        .unwrap();
    let results = p.run().await.unwrap();
    assert_eq!(
        results[0].as_ref().unwrap().command_tag().rows_affected(),
        5
    );
    assert_eq!(
        results[copied]
            .as_ref()
            .unwrap()
            .command_tag()
            .rows_affected(),
        5
    );
    assert_eq!(
        results[text]
            .as_ref()
            .unwrap()
            .command_tag()
            .rows_affected(),
        2
    );
    let rows = results[total].as_ref().unwrap();
    assert_eq!(common::text(rows, 0).as_deref(), Some("12"));
    assert_eq!(common::text(rows, 1).as_deref(), Some("5"));
    assert_eq!(count(&mut conn, &table).await, "12");
}

#[tokio::test]
async fn a_bad_row_fails_the_whole_batch_and_the_connection_goes_on() {
    let mut conn = common::connect().await;
    let table = common::unique("pipe_copy_bad");
    conn.batch_execute(&format!(
        "CREATE TABLE {table} (id int4 PRIMARY KEY, name text)"
    ))
    .await
    .unwrap();
    let mut p = conn.pipeline(SyncMode::Once).await.unwrap();
    p.query(&format!("INSERT INTO {table} VALUES (100, 'x')"), &[])
        .unwrap();
    // The second row repeats the first's key: the COPY fails at the server.
    p.copy_in(&format!("COPY {table} FROM STDIN"), b"1\ta\n1\tb\n")
        .unwrap();
    p.copy_in(&format!("COPY {table} FROM STDIN"), b"2\tc\n")
        .unwrap();
    let results = p.run().await.unwrap();
    assert_eq!(
        results[0].as_ref().unwrap_err().kind(),
        ErrorKind::PipelineAborted
    );
    assert_eq!(results[1].as_ref().unwrap_err().code(), Some("23505"));
    assert_eq!(
        results[2].as_ref().unwrap_err().kind(),
        ErrorKind::PipelineAborted
    );
    assert_eq!(count(&mut conn, &table).await, "0");
    // A malformed binary stream fails the same way.
    let mut p = conn.pipeline(SyncMode::Once).await.unwrap();
    p.copy_in(
        &format!("COPY {table} FROM STDIN (FORMAT binary)"),
        b"not binary copy data",
    )
    .unwrap();
    let results = p.run().await.unwrap();
    assert_eq!(results[0].as_ref().unwrap_err().code(), Some("22P04"));
    assert_eq!(count(&mut conn, &table).await, "0");
}

#[tokio::test]
async fn data_larger_than_one_message_and_groups_of_their_own() {
    let mut conn = common::connect().await;
    let table = common::unique("pipe_copy_big");
    conn.batch_execute(&format!(
        "CREATE TABLE {table} (id int4 PRIMARY KEY, name text)"
    ))
    .await
    .unwrap();
    // About 3 MB: three CopyData messages.
    let pad = "p".repeat(100);
    let data = binary_rows((0..30_000).map(|i| (i, format!("{i}{pad}"))));
    assert!(data.len() > 3 << 20);
    let mut p = conn.pipeline(SyncMode::Groups).await.unwrap();
    p.copy_in(&format!("COPY {table} FROM STDIN (FORMAT binary)"), &data)
        .unwrap();
    p.sync();
    p.copy_in(&format!("COPY {table} FROM STDIN"), b"0\tduplicate\n")
        .unwrap();
    p.sync();
    p.query(&format!("SELECT count(*)::text FROM {table}"), &[])
        .unwrap();
    let results = p.run().await.unwrap();
    assert_eq!(
        results[0].as_ref().unwrap().command_tag().rows_affected(),
        30_000
    );
    assert_eq!(results[1].as_ref().unwrap_err().code(), Some("23505"));
    assert_eq!(
        common::text(results[2].as_ref().unwrap(), 0).as_deref(),
        Some("30000")
    );
}

#[tokio::test]
async fn a_statement_that_is_not_copy_in_is_refused() {
    let mut conn = common::connect().await;
    let table = common::unique("pipe_copy_misuse");
    conn.batch_execute(&format!("CREATE TABLE {table} (id int4)"))
        .await
        .unwrap();
    let mut p = conn.pipeline(SyncMode::PerStatement).await.unwrap();
    p.copy_in("SELECT 1", b"ignored").unwrap();
    p.copy_in(&format!("INSERT INTO {table} VALUES (1)"), b"ignored")
        .unwrap();
    p.copy_in(&format!("COPY {table} TO STDOUT"), b"ignored")
        .unwrap();
    p.copy_in(&format!("COPY {table} FROM STDIN"), b"7\n")
        .unwrap();
    let results = p.run().await.unwrap();
    for r in &results[..3] {
        assert_eq!(r.as_ref().unwrap_err().kind(), ErrorKind::Usage);
    }
    assert_eq!(
        results[3].as_ref().unwrap().command_tag().rows_affected(),
        1
    );
    // The data sent after the misused statements was ignored; the session is in step.
    assert_eq!(count(&mut conn, &table).await, "2");
}
