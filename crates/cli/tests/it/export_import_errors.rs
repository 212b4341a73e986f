//! Failure paths of `sluice export` and `sluice import`: server errors mid-stream and at parse
//! time, a reader closing the pipe, bad input lines (with their line numbers) leaving the table
//! untouched, and memory that stays bounded whatever the row count.
#![allow(clippy::unwrap_used)]

use crate::export_import_support as support;

use std::io::Read;
use std::process::{Command, Stdio};
use support::*;

fn export_failing(args: &[&str], sql: &str) -> (String, String) {
    let mut all = vec!["export", "-d", url()];
    all.extend_from_slice(args);
    all.push(sql);
    let out = sluice(&all, b"");
    assert_eq!(out.status.code(), Some(1), "stderr: {}", text(&out.stderr));
    (text(&out.stdout), text(&out.stderr))
}

#[test]
fn error_mid_stream_exits_non_zero_with_sqlstate() {
    let (stdout, stderr) = export_failing(
        &["--format", "csv"],
        "SELECT g, 10 / (g - 3000) AS q FROM generate_series(1, 5000) g",
    );
    assert!(stdout.starts_with("g,q\n1,0\n"), "{stdout}");
    assert!(!stdout.contains("\n3000,"));
    assert_eq!(stderr, "ERROR:  22012: division by zero\n");
}

#[test]
fn syntax_error_has_a_caret() {
    let (stdout, stderr) = export_failing(&[], "SELECT *\nFORM pg_class");
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        "ERROR:  42601: syntax error at or near \"FORM\"\nLINE 2: FORM pg_class\n        ^\n"
    );
}

#[tokio::test]
async fn statements_without_rows_are_refused_unrun() {
    let table = unique("never");
    let (_, stderr) = export_failing(&[], &format!("CREATE TABLE {table} (a int)"));
    assert!(stderr.contains("returns no columns"), "{stderr}");
    let mut conn = connect().await;
    let exists = conn
        .query_one(&format!("SELECT to_regclass('{table}') IS NOT NULL"), &[])
        .await
        .unwrap();
    assert_eq!(exists.raw(0), Some(&b"f"[..]));
}

#[test]
fn connection_failure_is_reported() {
    let out = sluice(
        &[
            "export",
            "-d",
            "postgres://nobody@127.0.0.1:1/none?connect_timeout=2",
            "SELECT 1",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("connecting to database \"none\""),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args([
            "export",
            "-d",
            url(),
            "SELECT g, repeat('x', 100) FROM generate_series(1, 5000000) g",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut head = [0u8; 4096];
    stdout.read_exact(&mut head).unwrap();
    assert!(head.starts_with(b"\"g\",\"repeat\"\n1,\"xxx"));
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
}

#[test]
fn memory_stays_bounded() {
    // About 250 MB of CSJ, written to /dev/null; the process must stay small.
    let out = sluice(
        &[
            "export",
            "-d",
            url(),
            "-o",
            "/dev/null",
            "--report-peak-rss",
            "SELECT g, repeat('y', 200), g * 2 FROM generate_series(1, 1000000) g",
        ],
        b"",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let kib: u64 = stderr
        .trim()
        .strip_prefix("peak_rss_kib=")
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no peak RSS in {stderr:?}"));
    assert!(kib > 0 && kib < 40 * 1024, "peak RSS {kib} KiB");
}

/// A table with one row already in it; every failed import must leave exactly that.
async fn table_with_a_row(columns: &str, row: &str) -> (sluice_pg::Connection, String) {
    let mut conn = connect().await;
    let table = unique("imp");
    conn.batch_execute(&format!(
        "CREATE TABLE {table} ({columns}); INSERT INTO {table} VALUES ({row})"
    ))
    .await
    .unwrap();
    (conn, table)
}

/// Imports `input`, which must fail with a message containing each of `expected`, and checks
/// the table still holds only `before`.
async fn import_fails(
    args: &[&str],
    input: &str,
    expected: &[&str],
    conn: &mut sluice_pg::Connection,
    table: &str,
) {
    let before = table_text(conn, table).await;
    let mut all = args.to_vec();
    all.push(table);
    let out = import(&all, input.as_bytes());
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    for e in expected {
        assert!(stderr.contains(e), "{e:?} not in {stderr:?}");
    }
    assert!(stderr.contains("nothing was imported"), "{stderr}");
    assert_eq!(table_text(conn, table).await, before, "the table changed");
}

#[tokio::test]
async fn bad_csj_lines_fail_with_their_line() {
    let (mut conn, table) = table_with_a_row("a int, b text, c int[]", "0, 'keep', NULL").await;
    let header = "\"a\",\"b\",\"c\"\n";
    let ok = "1,\"x\",[1]\n";
    import_fails(
        &[],
        &format!("{header}{ok}2,\"y\" [2]\n"),
        &["line 3, column 7: invalid JSON"],
        &mut conn,
        &table,
    )
    .await;
    import_fails(
        &[],
        &format!("{header}{ok}2,\"y\"\n"),
        &["line 3", "2 values, the header has 3 columns"],
        &mut conn,
        &table,
    )
    .await;
    import_fails(
        &[],
        &format!("{header}{ok}2,\"a\\u0000b\",[]\n"),
        &["line 3", "\\u0000"],
        &mut conn,
        &table,
    )
    .await;
    // A server-side error on a row after blank lines names the input line and the column.
    import_fails(
        &[],
        &format!("{header}{ok}\n\n2,\"y\",[1]\n\"zz\",\"y\",[1]\n"),
        &["line 6, column a: invalid input syntax for type integer: \"zz\" (SQLSTATE 22P02)"],
        &mut conn,
        &table,
    )
    .await;
    import_fails(
        &[],
        &format!("{header}{ok}3,\"y\",[[1],[2,3]]\n"),
        &["line 3, column c", "22P02"],
        &mut conn,
        &table,
    )
    .await;
    import_fails(
        &[],
        "\"a\",\"nope\"\n1,2\n",
        &["column \"nope\" of the input is not a column of"],
        &mut conn,
        &table,
    )
    .await;
    import_fails(&[], "", &["no header"], &mut conn, &table).await;
    let out = import(&["no_such_table_anywhere"], header.as_bytes());
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("42P01"), "{}", text(&out.stderr));
}

#[tokio::test]
async fn bad_json_lines_fail_with_their_line() {
    let (mut conn, table) = table_with_a_row("a int, b jsonb", "0, '{}'").await;
    let ok = "{\"a\": 1, \"b\": {\"k\": 1}}\n";
    import_fails(
        &["--format", "jsonl"],
        &format!("{ok}{{\"a\": 2, \"x\": 1}}\n"),
        &["line 2, column 10: unknown key: \"x\""],
        &mut conn,
        &table,
    )
    .await;
    import_fails(
        &["--format", "jsonl"],
        &format!("{ok}[1, 2]\n"),
        &["line 2, column 1: expected a JSON object"],
        &mut conn,
        &table,
    )
    .await;
    import_fails(
        &["--format", "jsonl"],
        &format!("{ok}\n{{\"a\": 2.5}}\n"),
        &["line 3, column a", "22P02"],
        &mut conn,
        &table,
    )
    .await;
    let out = import(&["--format", "jsonl", &table], b"\n\n");
    assert!(
        out.status.success(),
        "empty input loads nothing: {}",
        text(&out.stderr)
    );
}

#[tokio::test]
async fn bad_csv_lines_fail_with_their_line() {
    let (mut conn, table) = table_with_a_row("a int, b text", "0, 'keep'").await;
    let csv = ["--format", "csv"];
    import_fails(
        &csv,
        "a,b\n1,\"two\nlines\"\n2,x,extra\n",
        &["line 4: wrong number of values: 3 fields, the header has 2"],
        &mut conn,
        &table,
    )
    .await;
    import_fails(
        &csv,
        "a,b\n1,\"two\nlines\"\nzz,x\n",
        &["line 4, column a: invalid input syntax for type integer: \"zz\""],
        &mut conn,
        &table,
    )
    .await;
    import_fails(
        &csv,
        "a,b\n1,x\n\\.\n2,y\n",
        &["line 3", "\\."],
        &mut conn,
        &table,
    )
    .await;
    import_fails(
        &csv,
        "a,b\n1,\"open\n",
        &["line 2: unterminated CSV quoted field"],
        &mut conn,
        &table,
    )
    .await;
    import_fails(&csv, "a,nope\n1,x\n", &["42703", "nope"], &mut conn, &table).await;
    import_fails(
        &csv,
        "a,\n",
        &["header's field 2 is empty"],
        &mut conn,
        &table,
    )
    .await;
    let out = import(&["--format", "csv", "--no-header", &table], b"5,\"x\"\n");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(table_text(&mut conn, &table).await, "0\tkeep\n5\tx\n");
}

#[tokio::test]
async fn bad_tsv_lines_fail_with_their_line() {
    let (mut conn, table) = table_with_a_row("a int, b text", "0, 'keep'").await;
    import_fails(
        &["--format", "tsv", "--header"],
        "a\tb\n1\tx\nzz\ty\n",
        &["line 3, column a", "22P02"],
        &mut conn,
        &table,
    )
    .await;
    import_fails(
        &["--format", "tsv"],
        "1\tx\n2\n",
        &["line 2", "22P04"],
        &mut conn,
        &table,
    )
    .await;
    import_fails(
        &["--format", "tsv"],
        "1\tx\n\\.\n2\ty\n",
        &["line 2", "\\."],
        &mut conn,
        &table,
    )
    .await;
}
