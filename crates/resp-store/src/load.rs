//! The keyspace, or some of its keys, read back from the tables (binary COPY out) into memory.

use std::fmt::Write as _;
use std::time::Instant;

use sluice_pg::Connection;
use sluice_pg::sql::quote_ident;
use sluice_resp::engine::{
    CompactBytes, Key, Store, Stream, StreamId, Value, stream::IdSpec, stream::NodeLimits,
};

use crate::Error;
use crate::chunks::{ListCheck, Seen};
use crate::codec::{RowReader, as_f64, as_i16, as_i32, as_i64, bytea_array, field};
use crate::write::{Collections, Known, ListHeads, collection_entry};

/// A progress line is logged every this many keys.
const PROGRESS_EVERY: u64 = 250_000;

/// What a load found.
#[derive(Debug, Default, Clone, Copy)]
pub struct Loaded {
    pub keys: u64,
    /// Collection elements (fields, items, members, entries).
    pub elements: u64,
    pub millis: u64,
}

/// Reads the function libraries kept in `schema`, by name.
pub async fn load_functions(
    conn: &mut Connection,
    schema: &str,
) -> Result<sluice_resp::engine::Libraries, Error> {
    let step = "loading the function libraries";
    let rows = conn
        .query(
            &format!(
                "SELECT library, code FROM {}.functions ORDER BY library",
                quote_ident(schema)
            ),
            &[],
        )
        .await
        .map_err(|e| Error::pg(step, e))?;
    rows.iter()
        .map(|row| {
            let name: String = row.get(0).map_err(|e| Error::pg(step, e))?;
            let code: Vec<u8> = row.get(1).map_err(|e| Error::pg(step, e))?;
            Ok((name, code))
        })
        .collect()
}

/// Which keys a load reads.
#[derive(Debug, Clone, Copy)]
pub enum Scope<'k> {
    /// Every key (the start-up load, a follower's reload).
    All,
    /// These keys (database, key), the ones a follower was told changed.
    Keys(&'k [(i32, Vec<u8>)]),
}

impl Scope<'_> {
    /// The statement copying `columns` of `table` (aliased `t`) for this scope, rows `order`ed.
    fn copy(&self, s: &str, table: &str, columns: &str, order: &str) -> String {
        match self {
            Scope::All if order.is_empty() => {
                format!("COPY {s}.{table} ({columns}) TO STDOUT (FORMAT binary)")
            }
            _ => format!(
                "COPY (SELECT {columns} FROM {s}.{table} t WHERE true{}{order}) \
                 TO STDOUT (FORMAT binary)",
                self.filter()
            ),
        }
    }

    /// A condition on `t.db, t.key` (empty for every key).
    fn filter(&self) -> String {
        let Scope::Keys(keys) = self else {
            return String::new();
        };
        format!(
            " AND {}",
            keys_in(keys.iter().map(|(db, key)| (*db, key.as_slice())))
        )
    }
}

/// `(t.db, t.key)` among `keys`. COPY takes no parameters: the keys are written as one array
/// literal of hex digits, which needs no escaping.
pub(crate) fn keys_in<'k>(keys: impl IntoIterator<Item = (i32, &'k [u8])>) -> String {
    let mut dbs = String::new();
    let mut hex = String::new();
    for (i, (db, key)) in keys.into_iter().enumerate() {
        let sep = if i == 0 { "" } else { "," };
        let _ = write!(dbs, "{sep}{db}");
        push_hex_element(&mut hex, sep, key);
    }
    format!(
        "(t.db, t.key) IN (SELECT w.db, decode(w.h, 'hex') \
           FROM unnest('{{{dbs}}}'::int4[], '{{{hex}}}'::text[]) AS w(db, h))"
    )
}

/// `sep` then `"<hex of bytes>"`: an element of an array literal.
pub(crate) fn push_hex_element(out: &mut String, sep: &str, bytes: &[u8]) {
    out.push_str(sep);
    out.push('"');
    crate::codec::push_hex(out, bytes);
    out.push('"');
}

/// Reads the live keys of `schema` that `scope` names into `store` (which is empty; nothing
/// loaded is marked dirty). Keys past their expiry are skipped (their rows go at the owner's
/// next flush). Give a follower's load a snapshot of its own (a REPEATABLE READ transaction):
/// the tables are read one statement each.
pub async fn load(
    conn: &mut Connection,
    schema: &str,
    store: &mut Store,
    scope: Scope<'_>,
) -> Result<(Loaded, Known), Error> {
    let started = Instant::now();
    let s = quote_ident(schema);
    let mut loaded = Loaded::default();
    let mut collections = Collections::default();
    let databases = store.db_count();
    let keys_sql = format!(
        "COPY (SELECT db, key, type, (extract(epoch FROM expire_at) * 1000)::int8, value \
               FROM {s}.keys t WHERE (expire_at IS NULL OR expire_at > now()){}) \
         TO STDOUT (FORMAT binary)",
        scope.filter()
    );
    // Which types were found: the tables of the others are not read (a follower's read of a
    // few keys then costs the statements of their types only).
    let mut seen = [false; 6];
    copy_rows(conn, &keys_sql, "keys", |data, f| {
        let db = db_of(data, f, databases)?;
        let key = required(data, f, 1)?;
        let kind = required(data, f, 2)?;
        let expire_at = field(data, f, 3)?.map(as_i64).transpose()?.unwrap_or(0);
        let value = field(data, f, 4)?;
        let value = match kind {
            b"string" => Value::Str(CompactBytes::from(value.unwrap_or_default())),
            b"list" => Value::List(Box::default()),
            b"hash" => Value::Hash(Box::default()),
            b"set" => Value::Set(Box::default()),
            b"zset" => Value::ZSet(Box::default()),
            b"stream" => Value::Stream(Box::new(crate::stream_meta::decode(value)?)),
            _ => return Err(Error::Load("a key of an unknown type")),
        };
        seen[type_index(&value)] = true;
        if !matches!(value, Value::Str(_)) {
            collections.insert(collection_entry(db as i32, key));
        }
        store.load(db, key, value, expire_at);
        loaded.keys += 1;
        if loaded.keys % PROGRESS_EVERY == 0 {
            tracing::info!(
                keys = loaded.keys,
                elapsed_ms = started.elapsed().as_millis() as u64,
                "loading the Redis keyspace from PostgreSQL"
            );
        }
        Ok(())
    })
    .await?;
    let elements = &mut loaded.elements;
    if seen[1] {
        copy_rows(
            conn,
            &scope.copy(&s, "hash_fields", "db, key, field, value", ""),
            "hash_fields",
            |data, f| {
                let db = db_of(data, f, databases)?;
                if let Some(Value::Hash(h)) = store.loaded_mut(db, required(data, f, 1)?) {
                    h.insert(required(data, f, 2)?.into(), required(data, f, 3)?.into());
                    *elements += 1;
                }
                Ok(())
            },
        )
        .await?;
    }
    // Each list's grid and first position are kept for writes in part; a list whose chunks do
    // not hold contiguous positions on one grid (rows written by hand) is written whole at the
    // first flush, from position 0, on the grid its elements call for.
    let mut heads = ListHeads::new();
    let mut broken: Vec<(usize, Vec<u8>)> = Vec::new();
    let mut check = ListCheck::default();
    if seen[2] {
        copy_rows(
            conn,
            &scope.copy(
                &s,
                "list_chunks",
                "db, key, chunk, first_pos, items, grid",
                " ORDER BY db, key, chunk",
            ),
            "list_chunks",
            |data, f| {
                let db = db_of(data, f, databases)?;
                let key = required(data, f, 1)?;
                let Some(Value::List(l)) = store.loaded_mut(db, key) else {
                    return Ok(());
                };
                let chunk = as_i64(required(data, f, 2)?)?;
                let first_pos = as_i64(required(data, f, 3)?)?;
                let grid = as_i16(required(data, f, 5)?)?;
                let items = bytea_array(required(data, f, 4)?).map_err(|source| Error::List {
                    db,
                    key: format!("\"{}\"", key.escape_ascii()),
                    source,
                })?;
                l.extend(items.iter().map(|&item| Key::from(item)));
                *elements += items.len() as u64;
                match check.chunk(db, key, (chunk, grid), first_pos, items.len()) {
                    Seen::First(grid) => {
                        heads.insert((db as i32, key.to_vec()), grid);
                    }
                    Seen::Broken => broken.push((db, key.to_vec())),
                    Seen::Next | Seen::Ignored => {}
                }
                Ok(())
            },
        )
        .await?;
    }
    for (db, key) in broken {
        heads.remove(&(db as i32, key.clone()));
        store.mark_for_rewrite(db, &key);
    }
    if seen[3] {
        copy_rows(
            conn,
            &scope.copy(&s, "set_members", "db, key, member", ""),
            "set_members",
            |data, f| {
                let db = db_of(data, f, databases)?;
                if let Some(Value::Set(set)) = store.loaded_mut(db, required(data, f, 1)?) {
                    set.insert(required(data, f, 2)?.into());
                    *elements += 1;
                }
                Ok(())
            },
        )
        .await?;
    }
    if seen[4] {
        copy_rows(
            conn,
            &scope.copy(&s, "zset_members", "db, key, member, score", ""),
            "zset_members",
            |data, f| {
                let db = db_of(data, f, databases)?;
                if let Some(Value::ZSet(z)) = store.loaded_mut(db, required(data, f, 1)?) {
                    z.insert(required(data, f, 2)?, as_f64(required(data, f, 3)?)?);
                    *elements += 1;
                }
                Ok(())
            },
        )
        .await?;
    }
    if seen[5] {
        copy_rows(
            conn,
            &scope.copy(
                &s,
                "stream_entries",
                "db, key, ms, seq, fields",
                " ORDER BY db, key, ms, seq",
            ),
            "stream_entries",
            |data, f| {
                let db = db_of(data, f, databases)?;
                if let Some(Value::Stream(stream)) = store.loaded_mut(db, required(data, f, 1)?) {
                    // IDs are u64 kept in int8 columns bit for bit.
                    let id = StreamId::new(
                        as_i64(required(data, f, 2)?)? as u64,
                        as_i64(required(data, f, 3)?)? as u64,
                    );
                    let items = bytea_array(required(data, f, 4)?)?;
                    let pairs: Vec<(&[u8], &[u8])> =
                        items.chunks_exact(2).map(|p| (p[0], p[1])).collect();
                    append_loaded(stream, id, &pairs)?;
                    *elements += 1;
                }
                Ok(())
            },
        )
        .await?;
    }
    loaded.millis = started.elapsed().as_millis() as u64;
    store.loaded();
    Ok((loaded, Known { heads, collections }))
}

/// The index of a value's type in a load's `seen` (strings 0; then the element tables' order).
fn type_index(value: &Value) -> usize {
    match value {
        Value::Str(_) => 0,
        Value::Hash(_) => 1,
        Value::List(_) => 2,
        Value::Set(_) => 3,
        Value::ZSet(_) => 4,
        Value::Stream(_) => 5,
    }
}

/// Appends a loaded entry without disturbing the counters read from the keys row.
fn append_loaded(stream: &mut Stream, id: StreamId, pairs: &[(&[u8], &[u8])]) -> Result<(), Error> {
    let (last, added, max_deleted) = (stream.last_id, stream.entries_added, stream.max_deleted_id);
    // Appending needs an ID above the last one: the last entry loaded so far stands in for the
    // stream's last ID (which may be a deleted entry's) until the counters are put back.
    stream.last_id = stream.last_live_id().unwrap_or(StreamId::MIN);
    let appended = stream.append(IdSpec::Exact(id), pairs, NodeLimits::default(), 0);
    stream.last_id = last.max(id);
    stream.entries_added = added;
    stream.max_deleted_id = max_deleted;
    appended
        .map(|_| ())
        .map_err(|_| Error::Load("stream entries out of order"))
}

pub(crate) fn db_of(
    data: &[u8],
    f: &[Option<std::ops::Range<usize>>],
    databases: usize,
) -> Result<usize, Error> {
    let db = as_i32(required(data, f, 0)?)?;
    usize::try_from(db)
        .ok()
        .filter(|&d| d < databases)
        .ok_or(Error::Load(
            "a key in a database number beyond [resp] databases",
        ))
}

pub(crate) fn required<'d>(
    data: &'d [u8],
    f: &[Option<std::ops::Range<usize>>],
    i: usize,
) -> Result<&'d [u8], Error> {
    field(data, f, i)?.ok_or(Error::Load("NULL in a NOT NULL column"))
}

/// Runs a `COPY ... TO STDOUT (FORMAT binary)` and calls `row` for each row.
pub(crate) async fn copy_rows(
    conn: &mut Connection,
    sql: &str,
    table: &'static str,
    mut row: impl FnMut(&[u8], &[Option<std::ops::Range<usize>>]) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut copy = conn.copy_out(sql).await.map_err(|e| Error::pg(table, e))?;
    let mut reader = RowReader::default();
    let mut fields = Vec::new();
    while let Some(chunk) = copy.next_chunk().await.map_err(|e| Error::pg(table, e))? {
        reader.feed(&chunk);
        reader.drain(&mut fields, &mut row)?;
    }
    Ok(())
}
