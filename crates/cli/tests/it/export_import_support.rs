//! Shared helpers of the export/import tests: the test database, running the real `sluice`
//! binary, and the server's own COPY output fetched through the driver.
#![allow(dead_code, unused_imports, clippy::unwrap_used)]

use sluice_pg::Connection;
use std::io::Write;
use std::process::{Command, Output, Stdio};

/// The test database's URL, connections to it, unique names: the shared test kit.
pub use sluice_embedded::testkit::{connect, unique, url};

/// Runs `sluice <args>` against the test database with `stdin` as standard input.
pub fn sluice(args: &[&str], stdin: &[u8]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sluice"));
    command
        .args(args)
        .env_remove("DATABASE_URL")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("sluice starts");
    let mut pipe = child.stdin.take().expect("stdin is piped");
    let input = stdin.to_vec();
    // A separate thread, so a child writing much output never waits on us writing its input.
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let output = child.wait_with_output().expect("sluice finishes");
    writer.join().unwrap();
    output
}

/// `sluice export -d <url> <args...> <sql>`, which must succeed; its standard output.
pub fn export(args: &[&str], sql: &str) -> Vec<u8> {
    let mut all = vec!["export", "-d", url()];
    all.extend_from_slice(args);
    all.push(sql);
    let out = sluice(&all, b"");
    assert!(
        out.status.success(),
        "sluice export {args:?} {sql:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// `sluice import -d <url> <args...>` with `input` on standard input.
pub fn import(args: &[&str], input: &[u8]) -> Output {
    let mut all = vec!["import", "-d", url(), "--quiet"];
    all.extend_from_slice(args);
    sluice(&all, input)
}

/// The server's own `COPY (sql) TO STDOUT options` output.
pub async fn copy_out(conn: &mut Connection, sql: &str, options: &str) -> Vec<u8> {
    let mut copy = conn
        .copy_out(&format!("COPY ({sql}) TO STDOUT {options}"))
        .await
        .expect("COPY TO STDOUT");
    let mut out = Vec::new();
    while let Some(chunk) = copy.next_chunk().await.expect("COPY data") {
        out.extend_from_slice(&chunk);
    }
    out
}

/// Every row of `table` ordered by its first column, in COPY text format: a byte-exact picture
/// of its values.
pub async fn table_text(conn: &mut Connection, table: &str) -> String {
    let out = copy_out(conn, &format!("SELECT * FROM {table} ORDER BY 1"), "").await;
    String::from_utf8(out).unwrap()
}

/// Lossy text of a process output stream.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Creates `name` with a column of every type family (and an enum, a domain and a composite
/// type of its own) and rows of typical, NULL and edge values. Column `id` orders the rows.
/// `lossless` leaves out the values JSON cannot carry back (JSON null inside json arrays).
pub async fn create_types_table(conn: &mut Connection, name: &str, lossless: bool) {
    let ddl = format!(
        r#"
        CREATE TYPE {name}_mood AS ENUM ('sad', 'ok', 'happy "quoted"');
        CREATE DOMAIN {name}_pos AS int CHECK (VALUE > 0);
        CREATE TYPE {name}_pair AS (x int, label text);
        CREATE TABLE {name} (
            id int PRIMARY KEY,
            i2 int2, i4 int4, i8 int8, num numeric, f4 float4, f8 float8, b bool,
            t text, vc varchar(20), ch char(5), nm name, by bytea,
            d date, tm time, ts timestamp, tstz timestamptz, iv interval, u uuid,
            j json, jb jsonb,
            ai int[], at text[], af float8[], ajb jsonb[], ab bool[], an numeric[], abox box[],
            ip inet, m money, mood {name}_mood, amood {name}_mood[], pos {name}_pos,
            apos {name}_pos[], pair {name}_pair, r int4range, tv tsvector, bits bit(3), x xml
        );
        "#
    );
    conn.batch_execute(&ddl)
        .await
        .expect("create the types table");
    let null_element = if lossless { "" } else { ", 'null'" };
    let rows = format!(
        r#"
        INSERT INTO {name} (id) VALUES (2);
        INSERT INTO {name} VALUES (
            1, 1, 2, 3, 4.50, 1.5, 2.25, true,
            'plain', 'var', 'ab', 'nm', '\x0102ff',
            '2024-02-29', '13:14:15.5', '2024-01-02 03:04:05.123456', '2024-01-02 03:04:05+02',
            '1 day 02:03:04', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
            '{{"a": 1, "b": [true, null]}}', '{{"k": "v", "n": 1.50}}',
            '{{1,2,3}}', '{{a,"b c"}}', '{{1.5,-2}}', ARRAY['{{"k": 1}}'::jsonb, '[1, 2]'],
            '{{t}}', '{{1.0}}', ARRAY['(1,1),(0,0)'::box],
            '10.0.0.1/8', '12.34', 'ok', '{{sad,ok}}', 5, '{{1,2}}', ROW(1, 'one'), '[1,5)',
            'a:1 b:2', '101', '<a>x</a>'
        );
        INSERT INTO {name} VALUES (
            3, -32768, 2147483647, -9223372036854775808, 'NaN', 'Infinity', '-Infinity', false,
            E'quote " comma , nl \n cr \r tab \t bs \\ ctl \x01\x1f\x7f uni é€𝄞', '', 'a', 'x y', '\x00',
            'infinity', '24:00', '-infinity', '2000-01-01 00:00+05:30',
            '-1 year 2 mons -3 days 04:05:06.789', '00000000-0000-0000-0000-000000000000',
            '[1, "x\ty", {{}}]', '[]',
            '{{{{1,2}},{{3,NULL}}}}', '{{"","NULL",NULL,"a,b","q\"\\","{{}}","x y"}}',
            '{{NaN,Infinity,-Infinity,-0,1e308,1e-307}}',
            ARRAY['{{"k": "v\"w"}}'::jsonb, '1', '"s"'{null_element}], '{{t,f,NULL}}', '{{1.50,NaN,-0.001}}',
            ARRAY['(1,1),(0,0)'::box, '(3,3),(2,2)'],
            '::1/128', '-1234.5', 'happy "quoted"', '{{sad,"happy \"quoted\""}}', 7, '{{3,NULL}}',
            ROW(NULL, 'a "b",c'), 'empty', '''a b'':1', '000', '<a>x &amp; y</a>'
        );
        INSERT INTO {name} (id, t, vc, ch, f8, f4, num, at) VALUES
            (4, '\.', 'NULL', '\N', 1e308, '-0', '-0.000100', '{{"\\.","\\N"}}'),
            (5, repeat('long text ', 100000), NULL, NULL, 1e-300, 3.4e38, 1e100, '{{}}'),
            (6, '', ' lead and trail ', ' ', 0.1, 0.1, 0.1, ARRAY[repeat('x', 1000)]);
        "#
    );
    conn.batch_execute(&rows)
        .await
        .expect("fill the types table");
}

/// Creates an empty table like `source` (same columns and types) named `name`.
pub async fn create_copy_of(conn: &mut Connection, source: &str, name: &str) {
    conn.batch_execute(&format!("CREATE TABLE {name} (LIKE {source})"))
        .await
        .expect("create the copy");
}
