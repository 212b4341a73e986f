//! `sluice export` and `sluice import` against a real server: CSV and TSV byte for byte as the
//! server's own COPY writes them, CSJ/JSON values typed as documented, and round trips of every
//! type family through each format into an empty copy of the table.
#![allow(clippy::unwrap_used)]

use crate::export_import_support as support;

use support::*;

/// Queries whose CSV and TSV must equal COPY's output byte for byte.
fn identity_queries(table: &str) -> Vec<String> {
    vec![
        format!("SELECT * FROM {table} ORDER BY id"),
        format!("SELECT t FROM {table} ORDER BY id"),
        format!("SELECT at, ch FROM {table} WHERE false"),
        "SELECT 1 AS \"a,b\", 2 AS \"q\"\"\", 3 AS \"x y\", 4 AS \"new\nline\", 5 AS \"\\.\""
            .to_owned(),
        "SELECT '\\.' AS \"\\.\"".to_owned(),
        "SELECT NULL::text AS n, '' AS e, '\"' AS q".to_owned(),
        "SELECT g, md5(g::text), g * 0.5, now() > 'epoch' FROM generate_series(1, 5000) g"
            .to_owned(),
    ]
}

#[tokio::test]
async fn csv_and_tsv_are_copy_byte_for_byte() {
    let mut conn = connect().await;
    let table = unique("ident");
    create_types_table(&mut conn, &table, false).await;
    let text_header = conn.server_version_num().unwrap_or(0) >= 150000;
    for sql in identity_queries(&table) {
        let expected = copy_out(&mut conn, &sql, "(FORMAT csv, HEADER)").await;
        assert_eq!(
            text(&export(&["--format", "csv"], &sql)),
            text(&expected),
            "CSV of {sql}"
        );
        let expected = copy_out(&mut conn, &sql, "(FORMAT csv)").await;
        assert_eq!(
            export(&["--format", "csv", "--no-header"], &sql),
            expected,
            "CSV of {sql}"
        );
        let expected = copy_out(&mut conn, &sql, "").await;
        assert_eq!(
            text(&export(&["--format", "tsv"], &sql)),
            text(&expected),
            "TSV of {sql}"
        );
        if text_header {
            let expected = copy_out(&mut conn, &sql, "(HEADER)").await;
            assert_eq!(
                export(&["--format", "tsv", "--header"], &sql),
                expected,
                "TSV of {sql}"
            );
        }
    }
}

fn csj_rows(output: &[u8]) -> Vec<Vec<serde_json::Value>> {
    let text = std::str::from_utf8(output).expect("CSJ is UTF-8");
    assert!(text.ends_with('\n'));
    text.lines()
        .map(|line| {
            let row: serde_json::Value = serde_json::from_str(&format!("[{line}]"))
                .unwrap_or_else(|e| panic!("{e}: {line}"));
            row.as_array().unwrap().clone()
        })
        .collect()
}

#[tokio::test]
async fn json_values_are_typed() {
    let mut conn = connect().await;
    let table = unique("typed");
    create_types_table(&mut conn, &table, false).await;
    let sql = format!("SELECT * FROM {table} ORDER BY id");
    let csj = export(&[], &sql);
    let rows = csj_rows(&csj);
    let names: Vec<String> = rows[0]
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    let get = |row: usize, column: &str| -> &serde_json::Value {
        let i = names.iter().position(|n| n == column).unwrap();
        &rows[row][i]
    };
    use serde_json::json;
    // Row 1: typical values.
    assert_eq!(get(1, "id"), &json!(1));
    assert_eq!(get(1, "num"), &json!(4.50));
    assert_eq!(serde_json::to_string(get(1, "num")).unwrap(), "4.5");
    assert!(
        std::str::from_utf8(&csj)
            .unwrap()
            .lines()
            .nth(1)
            .unwrap()
            .contains(",4.50,")
    );
    assert_eq!(get(1, "b"), &json!(true));
    assert_eq!(get(1, "by"), &json!("\\x0102ff"));
    assert_eq!(get(1, "j"), &json!({"a": 1, "b": [true, null]}));
    assert_eq!(get(1, "jb"), &json!({"k": "v", "n": 1.50}));
    assert_eq!(get(1, "ai"), &json!([1, 2, 3]));
    assert_eq!(get(1, "at"), &json!(["a", "b c"]));
    assert_eq!(get(1, "ajb"), &json!([{"k": 1}, [1, 2]]));
    assert_eq!(get(1, "ab"), &json!([true]));
    assert_eq!(get(1, "abox"), &json!(["(1,1),(0,0)"]));
    assert_eq!(get(1, "mood"), &json!("ok"));
    assert_eq!(get(1, "amood"), &json!(["sad", "ok"]));
    assert_eq!(get(1, "pos"), &json!(5));
    assert_eq!(get(1, "apos"), &json!([1, 2]));
    assert_eq!(get(1, "pair"), &json!("(1,one)"));
    assert_eq!(get(1, "m"), &json!("$12.34"));
    // Row 2: NULL everywhere.
    assert!(rows[2][1..].iter().all(serde_json::Value::is_null));
    // Row 3: edge values.
    assert_eq!(get(3, "i8"), &json!(-9223372036854775808i64));
    assert_eq!(get(3, "num"), &json!("NaN"));
    assert_eq!(get(3, "f4"), &json!("Infinity"));
    assert_eq!(get(3, "f8"), &json!("-Infinity"));
    assert_eq!(
        get(3, "t"),
        &json!("quote \" comma , nl \n cr \r tab \t bs \\ ctl \u{1}\u{1f}\u{7f} uni é€𝄞")
    );
    assert_eq!(get(3, "ai"), &json!([[1, 2], [3, null]]));
    assert_eq!(
        get(3, "at"),
        &json!(["", "NULL", null, "a,b", "q\"\\", "{}", "x y"])
    );
    // serde_json reads 1e-307 a bit off without its float_roundtrip feature: check the text.
    assert_eq!(
        get(3, "af").as_array().unwrap()[..5],
        json!(["NaN", "Infinity", "-Infinity", -0.0, 1e308])
            .as_array()
            .unwrap()[..]
    );
    assert!(
        std::str::from_utf8(&csj)
            .unwrap()
            .contains(r#"["NaN","Infinity","-Infinity",-0,1e+308,1e-307]"#)
    );
    assert_eq!(get(3, "ajb"), &json!([{"k": "v\"w"}, 1, "s", null]));
    assert_eq!(get(3, "ab"), &json!([true, false, null]));
    assert_eq!(get(3, "abox"), &json!(["(1,1),(0,0)", "(3,3),(2,2)"]));
    assert_eq!(get(3, "amood"), &json!(["sad", "happy \"quoted\""]));
    assert_eq!(get(3, "apos"), &json!([3, null]));
    assert_eq!(get(4, "f4"), &json!(-0.0));
    assert_eq!(get(5, "t").as_str().unwrap().len(), 1_000_000);

    // JSON Lines and JSON carry the same values, as objects.
    let jsonl = export(&["--format", "jsonl"], &sql);
    let objects: Vec<serde_json::Value> = std::str::from_utf8(&jsonl)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(objects.len(), rows.len() - 1);
    for (object, row) in objects.iter().zip(&rows[1..]) {
        for (name, value) in names.iter().zip(row) {
            assert_eq!(&object[name], value, "{name}");
        }
    }
    let json: serde_json::Value =
        serde_json::from_slice(&export(&["--format", "json"], &sql)).unwrap();
    assert_eq!(json.as_array().unwrap(), &objects);
}

/// Exports `source` in `format`, imports the output into an empty copy, and compares every row.
async fn round_trip(conn: &mut sluice_pg::Connection, source: &str, format: &str, extra: &[&str]) {
    let target = unique(&format!("{source}_{format}"));
    create_copy_of(conn, source, &target).await;
    let mut args = vec!["--format", format];
    args.extend_from_slice(extra);
    let data = export(&args, &format!("SELECT * FROM {source}"));
    let mut args = vec!["--format", format];
    args.extend_from_slice(extra);
    args.push(&target);
    let out = import(&args, &data);
    assert!(
        out.status.success(),
        "import {format}: {}",
        text(&out.stderr)
    );
    assert_eq!(
        table_text(conn, &target).await,
        table_text(conn, source).await,
        "{format} round trip"
    );
}

#[tokio::test]
async fn every_type_round_trips_in_every_format() {
    let mut conn = connect().await;
    let source = unique("rt");
    create_types_table(&mut conn, &source, true).await;
    for format in ["csj", "csv", "tsv", "jsonl"] {
        round_trip(&mut conn, &source, format, &[]).await;
    }
    round_trip(&mut conn, &source, "tsv", &["--header"]).await;
}

#[tokio::test]
async fn empty_results() {
    let mut conn = connect().await;
    let source = unique("empty");
    create_types_table(&mut conn, &source, true).await;
    conn.batch_execute(&format!("DELETE FROM {source}"))
        .await
        .unwrap();
    let sql = format!("SELECT id, t, ai FROM {source}");
    assert_eq!(text(&export(&[], &sql)), "\"id\",\"t\",\"ai\"\n");
    assert_eq!(text(&export(&["--format", "csv"], &sql)), "id,t,ai\n");
    assert_eq!(text(&export(&["--format", "tsv"], &sql)), "");
    assert_eq!(text(&export(&["--format", "jsonl"], &sql)), "");
    assert_eq!(text(&export(&["--format", "json"], &sql)), "[]\n");
    assert_eq!(text(&export(&["--format", "csj", "--no-header"], &sql)), "");
    for format in ["csj", "csv", "tsv", "jsonl"] {
        round_trip(&mut conn, &source, format, &[]).await;
    }
}

#[tokio::test]
async fn output_file_and_format_from_its_extension() {
    let dir = std::env::temp_dir().join(unique("sluice_export"));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("rows.jsonl");
    let out = sluice(
        &[
            "export",
            "-d",
            url(),
            "-o",
            path.to_str().unwrap(),
            "SELECT 1 AS a, 'x' AS b",
        ],
        b"",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{\"a\":1,\"b\":\"x\"}\n"
    );

    let mut conn = connect().await;
    let table = unique("fromfile");
    conn.batch_execute(&format!("CREATE TABLE {table} (a int, b text)"))
        .await
        .unwrap();
    let out = import(&[&table, path.to_str().unwrap()], b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(table_text(&mut conn, &table).await, "1\tx\n");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn json_lines_keys_in_any_order_and_missing_ones_take_null() {
    let mut conn = connect().await;
    let table = unique("jsonl_keys");
    conn.batch_execute(&format!(
        "CREATE TABLE {table} (id int, \"Name\" text, tags text[], doc jsonb, n numeric DEFAULT 9)"
    ))
    .await
    .unwrap();
    let input = "{\"id\": 1, \"Name\": \"a\", \"tags\": [\"x\", null], \"doc\": {\"k\": [1]}}\n\
                 \n\
                 {\"doc\": \"s\", \"id\": 2}\r\n\
                 {\"tags\": [], \"id\": 3, \"Name\": null, \"doc\": null}\n";
    let out = import(&["--format", "jsonl", &table], input.as_bytes());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        table_text(&mut conn, &table).await,
        "1\ta\t{x,NULL}\t{\"k\": [1]}\t9\n2\t\\N\t\\N\t\"s\"\t9\n3\t\\N\t{}\t\\N\t9\n"
    );
}
