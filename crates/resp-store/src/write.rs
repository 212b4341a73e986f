//! One flush: a snapshot of dirty keys encoded as binary COPY rows and written in one transaction.

use bytes::{BufMut, BytesMut};
use sluice_pg::Connection;
use sluice_pg::sql::quote_ident;
use sluice_resp::durable::CommitInfo;
use sluice_resp::engine::{Snapshot, StreamId, Value};

use crate::Error;
use crate::codec::RowWriter;

/// The tables rows are copied into, with their columns, in the order written.
const TABLES: [(&str, &str); 6] = [
    ("keys", "db, key, type, expire_at, value"),
    ("hash_fields", "db, key, field, value"),
    ("list_items", "db, key, pos, value"),
    ("set_members", "db, key, member"),
    ("zset_members", "db, key, member, score"),
    ("stream_entries", "db, key, ms, seq, fields"),
];

/// The rows of one snapshot, ready to send: one binary COPY buffer per table.
#[derive(Debug)]
pub struct Encoded {
    buffers: [BytesMut; 6],
    rows: [u64; 6],
    /// Dirty keys' databases and names (their old rows are deleted first).
    dbs: Vec<i32>,
    keys: Vec<Vec<u8>>,
    cleared: Vec<i32>,
    taken_at_ms: i64,
}

impl Encoded {
    /// Rows to copy in all.
    pub fn rows(&self) -> u64 {
        self.rows.iter().sum()
    }

    /// Keys written or deleted.
    pub fn keys(&self) -> u64 {
        self.keys.len() as u64
    }
}

/// Encodes a snapshot (outside the store lock).
pub fn encode(snapshot: &Snapshot) -> Encoded {
    let mut buffers: [BytesMut; 6] = Default::default();
    for buf in &mut buffers {
        buf.put_slice(sluice_pg::BINARY_HEADER);
    }
    let mut rows = [0u64; 6];
    let mut dbs = Vec::with_capacity(snapshot.entries.len());
    let mut keys = Vec::with_capacity(snapshot.entries.len());
    for (db, key, entry) in &snapshot.entries {
        let db = i32::try_from(*db).unwrap_or(i32::MAX);
        dbs.push(db);
        keys.push(key.to_vec());
        let Some(entry) = entry else { continue };
        let [k, h, l, s, z, x] = &mut buffers;
        let mut row = RowWriter::start(k, 5);
        row.int4(db)
            .bytes(key)
            .bytes(entry.value.type_name().as_bytes());
        if entry.expire_at == 0 {
            row.null();
        } else {
            row.timestamp_ms(entry.expire_at);
        }
        match &entry.value {
            Value::Str(v) => {
                row.bytes(v);
            }
            Value::Stream(stream) => {
                row.bytes(&crate::stream_meta::encode(stream));
            }
            _ => {
                row.null();
            }
        }
        rows[0] += 1;
        match &entry.value {
            Value::Str(_) => {}
            Value::Hash(hash) => {
                for (field, value) in hash.iter() {
                    RowWriter::start(h, 4)
                        .int4(db)
                        .bytes(key)
                        .bytes(field)
                        .bytes(value);
                }
                rows[1] += hash.len() as u64;
            }
            Value::List(list) => {
                for (pos, value) in list.iter().enumerate() {
                    RowWriter::start(l, 4)
                        .int4(db)
                        .bytes(key)
                        .int8(pos as i64)
                        .bytes(value);
                }
                rows[2] += list.len() as u64;
            }
            Value::Set(set) => {
                for member in set.iter() {
                    RowWriter::start(s, 3).int4(db).bytes(key).bytes(member);
                }
                rows[3] += set.len() as u64;
            }
            Value::ZSet(zset) => {
                for (member, score) in zset.iter() {
                    RowWriter::start(z, 4)
                        .int4(db)
                        .bytes(key)
                        .bytes(member)
                        .float8(score);
                }
                rows[4] += zset.len() as u64;
            }
            Value::Stream(stream) => {
                let mut items: Vec<&[u8]> = Vec::new();
                stream.walk(StreamId::MIN, StreamId::MAX, false, |entry| {
                    items.clear();
                    for (field, value) in entry.fields() {
                        items.push(field);
                        items.push(value);
                    }
                    // IDs are u64; int8 keeps their bits (IDs past 2^63 read back negative).
                    RowWriter::start(x, 5)
                        .int4(db)
                        .bytes(key)
                        .int8(entry.id.ms as i64)
                        .int8(entry.id.seq as i64)
                        .bytea_array(items.iter().copied());
                    rows[5] += 1;
                    true
                });
            }
        }
    }
    for buf in &mut buffers {
        buf.put_i16(-1);
    }
    Encoded {
        buffers,
        rows,
        dbs,
        keys,
        cleared: snapshot
            .cleared
            .iter()
            .map(|&db| i32::try_from(db).unwrap_or(i32::MAX))
            .collect(),
        taken_at_ms: snapshot.taken_at_ms,
    }
}

/// The statements of a flush for one schema, built once.
#[derive(Debug)]
pub struct Statements {
    clear: String,
    delete: String,
    copies: [String; 6],
}

impl Statements {
    pub fn new(schema: &str) -> Self {
        let s = quote_ident(schema);
        let children = [
            ("hash_fields", "hash"),
            ("list_items", "list"),
            ("set_members", "set"),
            ("zset_members", "zset"),
            ("stream_entries", "stream"),
        ];
        let mut clear = format!("WITH k AS (DELETE FROM {s}.keys WHERE db = ANY($1::int4[]))");
        for (i, (table, _)) in children.iter().enumerate() {
            clear.push_str(&format!(
                ", c{i} AS (DELETE FROM {s}.{table} WHERE db = ANY($1::int4[]))"
            ));
        }
        clear.push_str(" SELECT 1");
        // The dirty keys' rows and every row expired by the snapshot's time go; children are
        // deleted for the type their key had, so a string costs no probe of the other tables.
        let mut delete = format!(
            "WITH gone AS (DELETE FROM {s}.keys k USING unnest($1::int4[], $2::bytea[]) AS d(db, key) \
                 WHERE k.db = d.db AND k.key = d.key RETURNING k.db, k.key, k.type), \
             expired AS (DELETE FROM {s}.keys \
                 WHERE expire_at <= timestamptz 'epoch' + $3::int8 * interval '1 millisecond' \
                 RETURNING db, key, type), \
             doomed AS (SELECT * FROM gone UNION ALL SELECT * FROM expired)"
        );
        for (i, (table, kind)) in children.iter().enumerate() {
            delete.push_str(&format!(
                ", c{i} AS (DELETE FROM {s}.{table} t USING doomed d \
                     WHERE d.type = '{kind}' AND t.db = d.db AND t.key = d.key)"
            ));
        }
        delete
            .push_str(" SELECT (SELECT count(*) FROM expired), pg_current_wal_insert_lsn()::text");
        let copies = TABLES.map(|(table, columns)| {
            format!("COPY {s}.{table} ({columns}) FROM STDIN (FORMAT binary)")
        });
        Self {
            clear,
            delete,
            copies,
        }
    }
}

/// Writes an encoded snapshot in one transaction.
pub async fn write(
    conn: &mut Connection,
    statements: &Statements,
    encoded: &Encoded,
) -> Result<CommitInfo, Error> {
    let started = std::time::Instant::now();
    let mut tx = conn
        .transaction()
        .map_err(|e| Error::pg("starting a flush", e))?;
    if !encoded.cleared.is_empty() {
        tx.execute(&statements.clear, &[&encoded.cleared])
            .await
            .map_err(|e| Error::pg("emptying flushed databases", e))?;
    }
    let row = tx
        .query_one(
            &statements.delete,
            &[&encoded.dbs, &encoded.keys, &encoded.taken_at_ms],
        )
        .await
        .map_err(|e| Error::pg("deleting the dirty keys' rows", e))?;
    let lsn: String = row
        .get(1)
        .map_err(|e| Error::pg("deleting the dirty keys' rows", e))?;
    for (i, sql) in statements.copies.iter().enumerate() {
        if encoded.rows[i] == 0 {
            continue;
        }
        let mut copy = tx
            .copy_in(sql)
            .await
            .map_err(|e| Error::pg(TABLES[i].0, e))?;
        copy.write(&encoded.buffers[i])
            .await
            .map_err(|e| Error::pg(TABLES[i].0, e))?;
        copy.finish().await.map_err(|e| Error::pg(TABLES[i].0, e))?;
    }
    tx.commit()
        .await
        .map_err(|e| Error::pg("committing a flush", e))?;
    Ok(CommitInfo {
        lsn,
        keys: encoded.keys(),
        rows: encoded.rows(),
        micros: started.elapsed().as_micros() as u64,
    })
}
