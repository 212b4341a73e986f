//! Redka's approach as a contender: a Redis server whose every command is its own SQL
//! transaction on PostgreSQL through the sluice-pg driver, over tables shaped like Redka's
//! (`rkey` with one row per key, `rstring`, `rlist`, `rhash`, `rset`, `rzset` by key id).
//! Each command costs one round trip (its statements pipelined under one Sync, one implicit
//! transaction), the most favourable form of "a transaction per command". It answers what
//! redis-benchmark's SET, GET, INCR, LPUSH, RPUSH, HSET, SADD, ZADD and PING tests send.

use anyhow::{Context, Result};
use bytes::{Buf, BytesMut};
use clap::Args;
use sluice_pg::sql::quote_ident;
use sluice_pg::{Connection, SyncMode};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[derive(Debug, Args)]
pub struct RedkaArgs {
    /// The port to listen on (127.0.0.1).
    #[arg(long)]
    port: u16,
    /// The PostgreSQL to keep the data in.
    #[arg(long)]
    database: String,
    /// The schema of the tables (created, emptied at start).
    #[arg(long)]
    schema: String,
}

/// The statements, with `{s}` for the schema.
const TABLES: &str = "
DROP SCHEMA IF EXISTS {s} CASCADE;
CREATE SCHEMA {s};
CREATE TABLE {s}.rkey (id bigserial PRIMARY KEY, key bytea NOT NULL UNIQUE, type int2 NOT NULL,
    version int8 NOT NULL DEFAULT 1, etime int8, mtime int8 NOT NULL, len int8 NOT NULL DEFAULT 0);
CREATE TABLE {s}.rstring (kid int8 PRIMARY KEY REFERENCES {s}.rkey (id) ON DELETE CASCADE,
    value bytea NOT NULL);
CREATE TABLE {s}.rlist (kid int8 NOT NULL REFERENCES {s}.rkey (id) ON DELETE CASCADE,
    pos float8 NOT NULL, elem bytea NOT NULL, PRIMARY KEY (kid, pos));
CREATE TABLE {s}.rhash (kid int8 NOT NULL REFERENCES {s}.rkey (id) ON DELETE CASCADE,
    field bytea NOT NULL, value bytea NOT NULL, PRIMARY KEY (kid, field));
CREATE TABLE {s}.rset (kid int8 NOT NULL REFERENCES {s}.rkey (id) ON DELETE CASCADE,
    elem bytea NOT NULL, PRIMARY KEY (kid, elem));
CREATE TABLE {s}.rzset (kid int8 NOT NULL REFERENCES {s}.rkey (id) ON DELETE CASCADE,
    elem bytea NOT NULL, score float8 NOT NULL, PRIMARY KEY (kid, elem));
CREATE INDEX ON {s}.rzset (kid, score, elem);
";

/// The key's row upserted (type `$type`, modification time `$3`), its id and length returned.
fn upsert_key(s: &str, kind: i16, grows: bool) -> String {
    let len = if grows { "{s}.rkey.len + 1" } else { "1" }.replace("{s}", s);
    format!(
        "k AS (INSERT INTO {s}.rkey (key, type, mtime, len) VALUES ($1, {kind}, $3, 1) \
         ON CONFLICT (key) DO UPDATE SET type = {kind}, version = {s}.rkey.version + 1, \
         mtime = excluded.mtime, etime = NULL, len = {len} RETURNING id, len)"
    )
}

/// Each command's SQL for one element; `$1` key, `$2` element (or value), `$3` time, `$4` more.
struct Statements {
    set: String,
    get: String,
    incr: String,
    lpush: String,
    rpush: String,
    /// The key row of a list push, upserted and locked before the element goes in.
    list_key: String,
    hset: String,
    sadd: String,
    zadd: String,
    flush: String,
}

impl Statements {
    fn new(schema: &str) -> Self {
        let s = &quote_ident(schema);
        // Two statements: the key's row is locked by the first, so the second (a snapshot of
        // its own) sees the pushes committed meanwhile.
        let push = |end: &str, step: &str| {
            format!(
                "INSERT INTO {s}.rlist (kid, pos, elem) \
                 SELECT k.id, coalesce((SELECT {end}(pos) FROM {s}.rlist WHERE kid = k.id), 0) {step} 1, $2 \
                 FROM {s}.rkey k WHERE k.key = $1 RETURNING (SELECT len FROM {s}.rkey WHERE key = $1)"
            )
        };
        Self {
            set: format!(
                "WITH {} INSERT INTO {s}.rstring (kid, value) SELECT id, $2 FROM k \
                 ON CONFLICT (kid) DO UPDATE SET value = excluded.value",
                upsert_key(s, 1, false)
            ),
            get: format!(
                "SELECT v.value FROM {s}.rkey k JOIN {s}.rstring v ON v.kid = k.id WHERE k.key = $1"
            ),
            incr: format!(
                "WITH {} INSERT INTO {s}.rstring (kid, value) SELECT id, $2 FROM k \
                 ON CONFLICT (kid) DO UPDATE SET value = convert_to(\
                     (convert_from({s}.rstring.value, 'UTF8')::int8 + 1)::text, 'UTF8') \
                 RETURNING convert_from(value, 'UTF8')::int8",
                upsert_key(s, 1, false)
            ),
            list_key: format!("WITH {} SELECT id FROM k", upsert_key(s, 2, true))
                .replace("$3", "$2"),
            lpush: push("min", "-"),
            rpush: push("max", "+"),
            hset: format!(
                "WITH {} INSERT INTO {s}.rhash (kid, field, value) SELECT id, $2, $4 FROM k \
                 ON CONFLICT (kid, field) DO UPDATE SET value = excluded.value \
                 RETURNING CASE WHEN xmax = 0 THEN 1::int8 ELSE 0::int8 END",
                upsert_key(s, 4, false)
            ),
            sadd: format!(
                "WITH {} INSERT INTO {s}.rset (kid, elem) SELECT id, $2 FROM k \
                 ON CONFLICT (kid, elem) DO NOTHING RETURNING 1::int8",
                upsert_key(s, 3, false)
            ),
            zadd: format!(
                "WITH {} INSERT INTO {s}.rzset (kid, elem, score) SELECT id, $2, $4::float8 FROM k \
                 ON CONFLICT (kid, elem) DO UPDATE SET score = excluded.score \
                 RETURNING CASE WHEN xmax = 0 THEN 1::int8 ELSE 0::int8 END",
                upsert_key(s, 5, false)
            ),
            flush: format!(
                "TRUNCATE {s}.rkey, {s}.rstring, {s}.rlist, {s}.rhash, {s}.rset, {s}.rzset"
            ),
        }
    }
}

/// `sluice-bench resp redka-serve`: serves until killed.
pub fn serve(args: RedkaArgs) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let s = quote_ident(&args.schema);
        let mut conn = Connection::connect(&args.database)
            .await
            .context("connecting to PostgreSQL")?;
        conn.batch_execute(&TABLES.replace("{s}", &s))
            .await
            .context("creating Redka's tables")?;
        let statements = Arc::new(Statements::new(&args.schema));
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.port)).await?;
        loop {
            let (socket, _) = listener.accept().await?;
            let statements = statements.clone();
            let url = args.database.clone();
            tokio::spawn(async move {
                // A client hanging up mid-request is how redis-benchmark ends; nothing to say.
                let _ = client(socket, &url, &statements).await;
            });
        }
    })
}

/// One client: its own PostgreSQL session (Redka's pool hands each request a connection).
async fn client(mut socket: tokio::net::TcpStream, url: &str, st: &Statements) -> Result<()> {
    socket.set_nodelay(true)?;
    let mut conn = Connection::connect(url).await?;
    let mut input = BytesMut::with_capacity(16 * 1024);
    let mut out = Vec::with_capacity(16 * 1024);
    loop {
        if socket.read_buf(&mut input).await? == 0 {
            return Ok(());
        }
        while let Some(args) = parse_command(&mut input)? {
            if args.is_empty() {
                continue;
            }
            if let Err(e) = run(&mut conn, st, &args, &mut out).await {
                out.extend_from_slice(
                    format!("-ERR {e}\r\n")
                        .replace('\n', " ")
                        .trim_end()
                        .as_bytes(),
                );
                out.extend_from_slice(b"\r\n");
            }
        }
        if !out.is_empty() {
            socket.write_all(&out).await?;
            out.clear();
        }
    }
}

/// One element of a command (a value, field or member) and what goes with it (a hash field's
/// value, a member's score).
type Item = (Vec<u8>, Vec<u8>);

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Runs one command as one transaction and appends its reply.
async fn run(
    conn: &mut Connection,
    st: &Statements,
    args: &[Vec<u8>],
    out: &mut Vec<u8>,
) -> Result<()> {
    let name = String::from_utf8_lossy(&args[0]).to_ascii_uppercase();
    let arg = |i: usize| args.get(i).cloned().unwrap_or_default();
    let now = now_ms();
    // (statement, element, extra) per element; all in one transaction.
    let (sql, items): (&str, Vec<Item>) = match name.as_str() {
        "PING" => {
            out.extend_from_slice(b"+PONG\r\n");
            return Ok(());
        }
        "CONFIG" => {
            // CONFIG GET name: the name and an empty value.
            let param = arg(2);
            out.extend_from_slice(b"*2\r\n");
            bulk(out, &param);
            bulk(out, b"");
            return Ok(());
        }
        "FLUSHALL" | "FLUSHDB" => {
            conn.batch_execute(&st.flush).await?;
            out.extend_from_slice(b"+OK\r\n");
            return Ok(());
        }
        "GET" => {
            let key = arg(1);
            let rows = conn.query(&st.get, &[&key]).await?;
            match rows.get(0).and_then(|r| r.get::<Vec<u8>>(0).ok()) {
                Some(v) => bulk(out, &v),
                None => out.extend_from_slice(b"$-1\r\n"),
            }
            return Ok(());
        }
        "SET" => (&st.set, vec![(arg(2), Vec::new())]),
        "INCR" => (&st.incr, vec![(b"1".to_vec(), Vec::new())]),
        "LPUSH" => (
            &st.lpush,
            args[2..].iter().map(|v| (v.clone(), Vec::new())).collect(),
        ),
        "RPUSH" => (
            &st.rpush,
            args[2..].iter().map(|v| (v.clone(), Vec::new())).collect(),
        ),
        "SADD" => (
            &st.sadd,
            args[2..].iter().map(|v| (v.clone(), Vec::new())).collect(),
        ),
        "HSET" => (
            &st.hset,
            args[2..]
                .chunks_exact(2)
                .map(|p| (p[0].clone(), p[1].clone()))
                .collect(),
        ),
        "ZADD" => (
            &st.zadd,
            args[2..]
                .chunks_exact(2)
                .map(|p| (p[1].clone(), p[0].clone()))
                .collect(),
        ),
        _ => {
            out.extend_from_slice(format!("-ERR unknown command '{name}'\r\n").as_bytes());
            return Ok(());
        }
    };
    let key = arg(1);
    let mut p = conn.pipeline(SyncMode::Once).await?;
    for (element, extra) in &items {
        if name == "LPUSH" || name == "RPUSH" {
            p.query(&st.list_key, &[&key, &now])?;
            p.query(sql, &[&key, element])?;
        } else if name == "ZADD" {
            let score: f64 = String::from_utf8_lossy(extra).parse().context("score")?;
            p.query(sql, &[&key, element, &now, &score])?;
        } else if name == "HSET" {
            p.query(sql, &[&key, element, &now, extra])?;
        } else {
            p.query(sql, &[&key, element, &now])?;
        }
    }
    let mut last = 0i64;
    let mut total = 0i64;
    for result in p.run().await? {
        let rows = result?;
        if let Some(row) = rows.get(0)
            && let Ok(v) = row.get::<i64>(0)
        {
            last = v;
            total += v;
        }
    }
    match name.as_str() {
        "SET" => out.extend_from_slice(b"+OK\r\n"),
        "INCR" | "LPUSH" | "RPUSH" => int(out, last),
        _ => int(out, total),
    }
    Ok(())
}

fn int(out: &mut Vec<u8>, v: i64) {
    out.extend_from_slice(format!(":{v}\r\n").as_bytes());
}

fn bulk(out: &mut Vec<u8>, v: &[u8]) {
    out.extend_from_slice(format!("${}\r\n", v.len()).as_bytes());
    out.extend_from_slice(v);
    out.extend_from_slice(b"\r\n");
}

/// One command from the front of `buf` (a RESP array of bulk strings, or an inline line);
/// `None` until it is whole.
fn parse_command(buf: &mut BytesMut) -> Result<Option<Vec<Vec<u8>>>> {
    let Some(line_end) = find_crlf(buf, 0) else {
        return Ok(None);
    };
    if buf.first() != Some(&b'*') {
        let line = buf[..line_end].to_vec();
        buf.advance(line_end + 2);
        return Ok(Some(
            line.split(|b| *b == b' ')
                .filter(|w| !w.is_empty())
                .map(<[u8]>::to_vec)
                .collect(),
        ));
    }
    let count: usize = std::str::from_utf8(&buf[1..line_end])?.parse()?;
    let mut at = line_end + 2;
    let mut args = Vec::with_capacity(count);
    for _ in 0..count {
        let Some(end) = find_crlf(buf, at) else {
            return Ok(None);
        };
        anyhow::ensure!(buf[at] == b'$', "expected a bulk string");
        let len: usize = std::str::from_utf8(&buf[at + 1..end])?.parse()?;
        let start = end + 2;
        if buf.len() < start + len + 2 {
            return Ok(None);
        }
        args.push(buf[start..start + len].to_vec());
        at = start + len + 2;
    }
    buf.advance(at);
    Ok(Some(args))
}

fn find_crlf(buf: &[u8], from: usize) -> Option<usize> {
    buf.get(from..)?
        .windows(2)
        .position(|w| w == b"\r\n")
        .map(|i| from + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse_whole_or_wait() {
        let mut buf = BytesMut::from(
            &b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\nvv\r\nPING\r\n*1\r\n$4\r\nPI"[..],
        );
        assert_eq!(
            parse_command(&mut buf).unwrap(),
            Some(vec![b"SET".to_vec(), b"k".to_vec(), b"vv".to_vec()])
        );
        assert_eq!(
            parse_command(&mut buf).unwrap(),
            Some(vec![b"PING".to_vec()])
        );
        assert_eq!(parse_command(&mut buf).unwrap(), None);
    }
}
