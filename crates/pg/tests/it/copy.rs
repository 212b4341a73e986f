//! COPY in both directions in text, CSV and binary; errors, aborts and large streams.
#![allow(clippy::unwrap_used)]

use crate::common;

use bytes::BytesMut;
use sluice_pg::{BinaryCopyWriter, Connection, ErrorKind, Format};

async fn table(conn: &mut Connection, prefix: &str) -> String {
    let name = common::unique(prefix);
    conn.batch_execute(&format!(
        "CREATE TABLE {name} (id int, note text, amount numeric)"
    ))
    .await
    .unwrap();
    name
}

async fn copy_out_all(conn: &mut Connection, sql: &str) -> Vec<u8> {
    let mut out = conn.copy_out(sql).await.unwrap();
    let mut data = Vec::new();
    while let Some(chunk) = out.next_chunk().await.unwrap() {
        data.extend_from_slice(&chunk);
    }
    data
}

#[tokio::test]
async fn text_format_round_trip() {
    let mut conn = common::connect().await;
    let t = table(&mut conn, "copy_text").await;
    let data = "1\tplain\t1.5\n2\ttab\\there\\nnewline\t\\N\n3\t\\N\t-0.25\n";
    let mut copy = conn.copy_in(&format!("COPY {t} FROM STDIN")).await.unwrap();
    assert_eq!((copy.format(), copy.column_count()), (Format::Text, 3));
    // Split mid-row: COPY data is a byte stream.
    copy.write(&data.as_bytes()[..10]).await.unwrap();
    copy.write(&data.as_bytes()[10..]).await.unwrap();
    assert_eq!(copy.finish().await.unwrap(), 3);
    let out = copy_out_all(
        &mut conn,
        &format!("COPY (SELECT * FROM {t} ORDER BY id) TO STDOUT"),
    )
    .await;
    assert_eq!(String::from_utf8(out).unwrap(), data);
}

#[tokio::test]
async fn csv_format_round_trip_with_header() {
    let mut conn = common::connect().await;
    let t = table(&mut conn, "copy_csv").await;
    let data = "id,note,amount\n1,\"quoted, comma\",2\n2,\"line\nbreak \"\"q\"\"\",\n";
    let mut copy = conn
        .copy_in(&format!("COPY {t} FROM STDIN (FORMAT csv, HEADER)"))
        .await
        .unwrap();
    copy.write(data.as_bytes()).await.unwrap();
    assert_eq!(copy.finish().await.unwrap(), 2);
    let out = copy_out_all(
        &mut conn,
        &format!("COPY (SELECT * FROM {t} ORDER BY id) TO STDOUT (FORMAT csv, HEADER)"),
    )
    .await;
    assert_eq!(String::from_utf8(out).unwrap(), data);
}

#[tokio::test]
async fn binary_format_round_trip() {
    let mut conn = common::connect().await;
    let src = table(&mut conn, "copy_bin_src").await;
    conn.batch_execute(&format!(
        "INSERT INTO {src} SELECT g, CASE WHEN g % 7 = 0 THEN NULL ELSE 'n' || g END, g / 3.0 FROM generate_series(1, 5000) g"
    ))
    .await
    .unwrap();
    let dst = table(&mut conn, "copy_bin_dst").await;
    let data = copy_out_all(&mut conn, &format!("COPY {src} TO STDOUT (FORMAT binary)")).await;
    assert!(data.starts_with(b"PGCOPY\n\xff\r\n\0"));
    let mut copy = conn
        .copy_in(&format!("COPY {dst} FROM STDIN (FORMAT binary)"))
        .await
        .unwrap();
    assert_eq!(copy.format(), Format::Binary);
    for piece in data.chunks(100_000) {
        copy.write(piece).await.unwrap();
    }
    assert_eq!(copy.finish().await.unwrap(), 5000);
    let rows = conn
        .query(&format!("SELECT count(*) FROM ((TABLE {src} EXCEPT ALL TABLE {dst}) UNION ALL (TABLE {dst} EXCEPT ALL TABLE {src})) d"), &[])
        .await
        .unwrap();
    assert_eq!(common::text(&rows, 0).as_deref(), Some("0"));
}

#[tokio::test]
async fn binary_copy_writer_loads_typed_rows() {
    let mut conn = common::connect().await;
    let t = common::unique("copy_writer");
    conn.batch_execute(&format!(
        "CREATE TABLE {t} (id int8, note text, ok bool, score float8)"
    ))
    .await
    .unwrap();
    let copy = conn
        .copy_in(&format!("COPY {t} FROM STDIN (FORMAT binary)"))
        .await
        .unwrap();
    let types = [
        sluice_pg::types::oid::INT8,
        sluice_pg::types::oid::TEXT,
        sluice_pg::types::oid::BOOL,
        sluice_pg::types::oid::FLOAT8,
    ];
    let mut writer = BinaryCopyWriter::new(copy, &types).unwrap();
    for i in 0..20_000i64 {
        let note = format!("row {i}");
        let note: Option<&str> = if i % 10 == 0 { None } else { Some(&note) };
        writer
            .write_row(&[&i, &note, &(i % 2 == 0), &(i as f64 / 4.0)])
            .await
            .unwrap();
    }
    assert_eq!(writer.finish().await.unwrap(), 20_000);
    let rows = conn
        .query(&format!("SELECT count(*), count(note), sum(id), sum(score), count(*) FILTER (WHERE ok) FROM {t}"), &[])
        .await
        .unwrap();
    let row = rows.get(0).unwrap();
    let got: Vec<_> = row
        .raw_fields()
        .map(|f| String::from_utf8(f.unwrap().to_vec()).unwrap())
        .collect();
    assert_eq!(got, ["20000", "18000", "199990000", "49997500", "10000"]);
}

#[tokio::test]
async fn binary_copy_writer_rejects_a_value_of_the_wrong_type() {
    let mut conn = common::connect().await;
    let t = common::unique("copy_writer_bad");
    conn.batch_execute(&format!("CREATE TABLE {t} (id int4)"))
        .await
        .unwrap();
    let copy = conn
        .copy_in(&format!("COPY {t} FROM STDIN (FORMAT binary)"))
        .await
        .unwrap();
    let mut writer = BinaryCopyWriter::new(copy, &[sluice_pg::types::oid::INT4]).unwrap();
    let err = writer.write_row(&[&"not a number"]).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conversion);
    drop(writer);
    let rows = conn
        .query(&format!("SELECT count(*) FROM {t}"), &[])
        .await
        .unwrap();
    assert_eq!(common::text(&rows, 0).as_deref(), Some("0"));
}

#[tokio::test]
async fn bad_row_fails_the_copy_with_its_line_and_loads_nothing() {
    let mut conn = common::connect().await;
    let t = table(&mut conn, "copy_bad").await;
    let mut copy = conn.copy_in(&format!("COPY {t} FROM STDIN")).await.unwrap();
    copy.write(b"1\ta\t1\n2\tb\t2\nthree\tc\t3\n")
        .await
        .unwrap();
    let err = copy.finish().await.unwrap_err();
    let db = err.as_db_error().unwrap();
    assert_eq!(db.code(), "22P02");
    assert!(db.where_().unwrap().contains("line 3"), "{:?}", db.where_());
    let rows = conn
        .query(&format!("SELECT count(*) FROM {t}"), &[])
        .await
        .unwrap();
    assert_eq!(common::text(&rows, 0).as_deref(), Some("0"));
}

#[tokio::test]
async fn early_server_error_stops_a_long_copy() {
    let mut conn = common::connect().await;
    let t = table(&mut conn, "copy_early").await;
    let mut copy = conn.copy_in(&format!("COPY {t} FROM STDIN")).await.unwrap();
    let mut chunk = BytesMut::new();
    chunk.extend_from_slice(b"bad\tx\t1\n");
    for i in 0..20_000 {
        chunk.extend_from_slice(format!("{i}\tfiller row number {i}\t{i}\n").as_bytes());
    }
    let mut failed = None;
    for _ in 0..200 {
        if let Err(e) = copy.write(&chunk).await {
            failed = Some(e);
            break;
        }
    }
    let err = match failed {
        Some(e) => e,
        None => copy.finish().await.unwrap_err(),
    };
    assert_eq!(err.code(), Some("22P02"));
    assert_eq!(conn.execute("SELECT 1", &[]).await.unwrap(), 1);
}

#[tokio::test]
async fn aborted_and_dropped_copies_load_nothing() {
    let mut conn = common::connect().await;
    let t = table(&mut conn, "copy_abort").await;
    let mut copy = conn.copy_in(&format!("COPY {t} FROM STDIN")).await.unwrap();
    copy.write(b"1\ta\t1\n").await.unwrap();
    copy.abort("changed my mind").await.unwrap();
    {
        let mut copy = conn.copy_in(&format!("COPY {t} FROM STDIN")).await.unwrap();
        copy.write(b"2\tb\t2\n").await.unwrap();
    }
    let rows = conn
        .query(&format!("SELECT count(*) FROM {t}"), &[])
        .await
        .unwrap();
    assert_eq!(common::text(&rows, 0).as_deref(), Some("0"));
}

#[tokio::test]
async fn large_copy_streams_both_ways() {
    let mut conn = common::connect().await;
    let t = table(&mut conn, "copy_large").await;
    let mut copy = conn.copy_in(&format!("COPY {t} FROM STDIN")).await.unwrap();
    let mut expected = 0u64;
    let mut buf = Vec::with_capacity(1 << 20);
    for i in 0..300_000u64 {
        buf.extend_from_slice(format!("{i}\tsome text for row {i}\t{i}.5\n").as_bytes());
        expected += i;
        if buf.len() > 500_000 {
            copy.write(&buf).await.unwrap();
            buf.clear();
        }
    }
    copy.write(&buf).await.unwrap();
    assert_eq!(copy.finish().await.unwrap(), 300_000);
    let mut out = conn
        .copy_out(&format!("COPY {t} (id) TO STDOUT"))
        .await
        .unwrap();
    let (mut sum, mut lines, mut pending) = (0u64, 0u64, Vec::new());
    while let Some(chunk) = out.next_chunk().await.unwrap() {
        pending.extend_from_slice(&chunk);
        let end = pending
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        for line in pending[..end]
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
        {
            sum += std::str::from_utf8(line).unwrap().parse::<u64>().unwrap();
            lines += 1;
        }
        pending.drain(..end);
    }
    assert_eq!(out.command_tag().unwrap().rows_affected(), 300_000);
    assert_eq!((lines, sum), (300_000, expected));
}

#[tokio::test]
async fn copy_statement_through_the_wrong_call_is_refused() {
    let mut conn = common::connect().await;
    let err = conn.copy_in("SELECT 1").await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Usage);
    let t = table(&mut conn, "copy_wrong").await;
    let err = conn
        .copy_out(&format!("COPY {t} FROM STDIN"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Usage);
    let err = conn
        .execute(&format!("COPY {t} FROM STDIN"), &[])
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Usage);
    assert_eq!(conn.execute("SELECT 1", &[]).await.unwrap(), 1);
}
