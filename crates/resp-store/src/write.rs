//! One flush: a snapshot of dirty keys encoded as key-row upserts, binary COPY rows of elements
//! and element deletes, written in one transaction and one round trip.

use bytes::{BufMut, BytesMut};
use sluice_pg::sql::quote_ident;
use sluice_pg::{Connection, ErrorKind, SyncMode};
use sluice_resp::durable::CommitInfo;
use std::collections::HashMap;

#[cfg(doc)]
use sluice_resp::engine::ListPart;
use sluice_resp::engine::{Elements, Entry, ListGrid, Saved, Snapshot, StreamId, Value};

use crate::Error;
use crate::codec::RowWriter;

/// The tables element rows are copied into, with their columns, in the order written (`keys`
/// rows are upserted instead).
const TABLES: [(&str, &str); 5] = [
    ("hash_fields", "db, key, field, value"),
    ("list_chunks", "db, key, chunk, first_pos, items, grid"),
    ("set_members", "db, key, member"),
    ("zset_members", "db, key, member, score"),
    ("stream_entries", "db, key, ms, seq, fields"),
];

/// Each list's grid (positions per chunk) and where its first element is stored, by database
/// and key: a list written in part gets positions relative to its head, and chunks of its
/// grid from those. Lists absent get [`ListGrid::default`].
pub type ListHeads = HashMap<ListKey, ListGrid>;

/// A list's database and key.
pub type ListKey = (i32, Vec<u8>);

/// Keys that may have element rows in the tables (hashes, lists, sets, sorted sets, streams),
/// by database and a hash of the key: a superset (collisions, rows swept since) is harmless.
/// A key written as a string or deleted is looked up in the tables for element rows to delete
/// only when it is here, so strings cost no probe of `keys` at a flush.
pub type Collections = foldhash::HashSet<(i32, u64)>;

/// What the writer knows of the tables besides the keys: each list's grid and where it
/// starts, which keys may have element rows.
#[derive(Debug, Default)]
pub struct Known {
    pub heads: ListHeads,
    pub collections: Collections,
}

/// The entry of `key` in [`Collections`]: computed for every key of every flush, with a fast
/// hash (a collision only costs a probe).
pub fn collection_entry(db: i32, key: &[u8]) -> (i32, u64) {
    use std::hash::BuildHasher;
    (db, foldhash::quality::FixedState::default().hash_one(key))
}

/// Element rows to delete, by key: the database, key and field or member of each.
#[derive(Debug, Default)]
pub struct ElementDeletes {
    dbs: Vec<i32>,
    keys: Vec<Vec<u8>>,
    members: Vec<Vec<u8>>,
}

impl ElementDeletes {
    fn push(&mut self, db: i32, key: &[u8], member: &[u8]) {
        self.dbs.push(db);
        self.keys.push(key.to_vec());
        self.members.push(member.to_vec());
    }
}

/// The rows of one snapshot, ready to send: the key rows as arrays, one binary COPY buffer per
/// element table.
#[derive(Debug)]
pub struct Encoded {
    buffers: [BytesMut; 5],
    rows: [u64; 5],
    key_rows: u64,
    /// Dirty keys' databases and names, whether their element rows go (written whole or gone),
    /// and their new key rows: type (`None`: the key is gone), expiry in Unix ms (0: none) and
    /// a string's value. Rows are upserted: an unchanged key keeps its index entries (a HOT
    /// update), where a delete and insert added one per write and left the old to vacuum.
    dbs: Vec<i32>,
    keys: Vec<Vec<u8>>,
    /// Whether the key's old element rows must go and it may have some (see [`Collections`]).
    probe: Vec<bool>,
    types: Vec<Option<&'static str>>,
    expire_ms: Vec<i64>,
    values: Vec<Option<Vec<u8>>>,
    /// Fields, set members and sorted-set members written in part: their rows are deleted,
    /// then the ones still there copied in.
    hash: ElementDeletes,
    set: ElementDeletes,
    zset: ElementDeletes,
    /// Chunks `[lo, hi]` of lists written in part whose rows go (copied again after).
    list_dbs: Vec<i32>,
    list_keys: Vec<Vec<u8>>,
    list_lo: Vec<i64>,
    list_hi: Vec<i64>,
    /// Lists' grids and where their first elements are once this commits (`None`: no list
    /// there any more).
    heads: Vec<(ListKey, Option<ListGrid>)>,
    /// Keys that are collections once this commits (true) or no longer (false).
    collections: Vec<((i32, u64), bool)>,
    written_keys: u64,
    /// The function libraries' names and code, when they changed: they replace the stored ones.
    functions: Option<(Vec<String>, Vec<Vec<u8>>)>,
    cleared: Vec<i32>,
    taken_at_ms: i64,
    /// Notification payloads naming what this flush emptied, wrote and deleted (empty without
    /// followers: see [`crate::notify`]).
    notices: Vec<String>,
}

impl Encoded {
    /// Whether the flush must delete rows whatever the sweep: a key gone (no type), a key whose
    /// old element rows may linger (`probe`), or a database emptied. A flush of strings that
    /// never were collections and of collections written in part deletes nothing of `keys`.
    pub fn needs_deletes(&self) -> bool {
        !self.cleared.is_empty() || self.probe.contains(&true) || self.types.contains(&None)
    }

    /// Rows written in all.
    pub fn rows(&self) -> u64 {
        self.key_rows + self.rows.iter().sum::<u64>()
    }

    /// Keys written or deleted.
    pub fn keys(&self) -> u64 {
        self.written_keys
    }

    /// Notifications this flush sends.
    pub fn notices(&self) -> u64 {
        self.notices.len() as u64
    }

    /// Records in `known` what the tables hold once this committed: where lists start, which
    /// keys are collections.
    pub fn update_known(&self, known: &mut Known) {
        for db in &self.cleared {
            known.heads.retain(|(d, _), _| d != db);
            known.collections.retain(|(d, _)| d != db);
        }
        for (key, head) in &self.heads {
            match head {
                Some(h) => {
                    known.heads.insert(key.clone(), *h);
                }
                None => {
                    known.heads.remove(key);
                }
            }
        }
        for (entry, collection) in &self.collections {
            if *collection {
                known.collections.insert(*entry);
            } else {
                known.collections.remove(entry);
            }
        }
    }
}

/// Encodes a snapshot (outside the store lock); `known` says which keys may have element rows
/// (where lists written in part start came with the snapshot, [`ListPart::grid`]). With
/// `notify` (followers listen), the flush also names what it emptied, wrote and deleted.
pub fn encode(snapshot: &Snapshot, known: &Known, notify: bool) -> Encoded {
    let mut buffers: [BytesMut; 5] = Default::default();
    for buf in &mut buffers {
        buf.put_slice(sluice_pg::BINARY_HEADER);
    }
    let n = snapshot.entries.len();
    let mut e = Encoded {
        buffers,
        rows: [0; 5],
        key_rows: 0,
        dbs: Vec::with_capacity(n),
        keys: Vec::with_capacity(n),
        probe: Vec::with_capacity(n),
        types: Vec::with_capacity(n),
        expire_ms: Vec::with_capacity(n),
        values: Vec::with_capacity(n),
        hash: ElementDeletes::default(),
        set: ElementDeletes::default(),
        zset: ElementDeletes::default(),
        list_dbs: Vec::new(),
        list_keys: Vec::new(),
        list_lo: Vec::new(),
        list_hi: Vec::new(),
        heads: Vec::new(),
        collections: Vec::new(),
        written_keys: n as u64,
        functions: snapshot
            .functions
            .as_ref()
            .map(|libraries| libraries.iter().cloned().unzip()),
        cleared: snapshot
            .cleared
            .iter()
            .map(|&db| i32::try_from(db).unwrap_or(i32::MAX))
            .collect(),
        taken_at_ms: snapshot.taken_at_ms,
        notices: Vec::new(),
    };
    let mut payloads = notify.then(|| {
        let mut p = crate::notify::Payloads::default();
        for &db in &e.cleared {
            p.cleared(db);
        }
        if e.functions.is_some() {
            p.functions();
        }
        p
    });
    let cleared_before = |db: i32| cleared_in(&snapshot.cleared, db);
    // In key order: PostgreSQL's index probes and heap updates then walk the pages in order
    // instead of jumping across the whole index for every key.
    let mut order: Vec<&(usize, _, Saved)> = snapshot.entries.iter().collect();
    order.sort_unstable_by(|a, b| (a.0, &a.1[..]).cmp(&(b.0, &b.1[..])));
    for (db, key, saved) in order {
        let db = i32::try_from(*db).unwrap_or(i32::MAX);
        if let Some(p) = payloads.as_mut() {
            name_for_followers(p, db, key, saved);
        }
        // A key written in part keeps its row in `keys` unless its expiry changed.
        if !matches!(saved, Saved::Part { key_row: false, .. }) {
            e.dbs.push(db);
            e.keys.push(key.to_vec());
        }
        let slot = collection_entry(db, key);
        let was_collection = known.collections.contains(&slot) && !cleared_before(db);
        match saved {
            Saved::Gone => {
                e.probe.push(was_collection);
                e.collections.push((slot, false));
                e.types.push(None);
                e.expire_ms.push(0);
                e.values.push(None);
                // Only a collection can have been a list with a head to forget.
                if was_collection {
                    e.heads.push(((db, key.to_vec()), None));
                }
            }
            Saved::Whole(entry) => {
                let collection = !matches!(entry.value, Value::Str(_));
                e.probe.push(collection || was_collection);
                e.collections.push((slot, collection));
                // A list's grid is picked here, from its elements, and kept until it is next
                // written whole: its old rows all go (`probe`), whatever grid they were on.
                let head = encode_whole(&mut e, db, key, entry);
                if head.is_some() || was_collection {
                    e.heads.push(((db, key.to_vec()), head));
                }
            }
            Saved::Part {
                key_row: rewrite_key,
                type_name,
                expire_at,
                elements,
            } => {
                e.collections.push((slot, true));
                if *rewrite_key {
                    e.probe.push(false);
                    key_row(&mut e, type_name, *expire_at, None);
                }
                encode_part(&mut e, db, key, elements);
            }
        }
    }
    for buf in &mut e.buffers {
        buf.put_i16(-1);
    }
    e.notices = payloads
        .map(crate::notify::Payloads::finish)
        .unwrap_or_default();
    e
}

/// Names a written key for followers: the members of a hash, set or sorted set written in
/// part, so that they read those alone; any other key whole.
fn name_for_followers(p: &mut crate::notify::Payloads, db: i32, key: &[u8], saved: &Saved) {
    let Saved::Part { elements, .. } = saved else {
        p.key(db, key);
        return;
    };
    match elements {
        Elements::Hash(fields) => p.part(db, key, fields.iter().map(|(f, _)| f.as_slice())),
        Elements::Set(members) => p.part(db, key, members.iter().map(|(m, _)| m.as_slice())),
        Elements::ZSet(members) => p.part(db, key, members.iter().map(|(m, _)| m.as_slice())),
        Elements::List(_) => p.key(db, key),
    }
}

/// Whether database `db` was emptied in this snapshot (its lists start afresh).
fn cleared_in(cleared: &[usize], db: i32) -> bool {
    usize::try_from(db).is_ok_and(|d| cleared.contains(&d))
}

/// The key's new row in `keys` (its database and name are pushed by the caller).
fn key_row(e: &mut Encoded, type_name: &'static str, expire_at: i64, value: Option<&[u8]>) {
    e.types.push(Some(type_name));
    e.expire_ms.push(expire_at.clamp(0, MAX_EXPIRE_MS));
    e.values.push(value.map(<[u8]>::to_vec));
    e.key_rows += 1;
}

/// Expiry times past this (year 200,000) are stored as it: PostgreSQL's timestamps end in
/// the year 294,276, and a time it refuses would fail every flush after it.
const MAX_EXPIRE_MS: i64 = 6_249_000_000_000_000;

/// Encodes a key written whole; a list gives its grid and head (position 0).
fn encode_whole(e: &mut Encoded, db: i32, key: &[u8], entry: &Entry) -> Option<ListGrid> {
    let type_name = entry.value.type_name();
    match &entry.value {
        Value::Str(v) => key_row(e, type_name, entry.expire_at, Some(v)),
        Value::Stream(stream) => {
            let meta = crate::stream_meta::encode(stream);
            key_row(e, type_name, entry.expire_at, Some(&meta));
        }
        _ => key_row(e, type_name, entry.expire_at, None),
    }
    let [h, l, s, z, x] = &mut e.buffers;
    let mut head = None;
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
            e.rows[0] += hash.len() as u64;
        }
        Value::List(list) => {
            let (rows, grid) = crate::chunks::encode_whole(l, db, key, list);
            e.rows[1] += rows;
            head = Some(crate::chunks::head(grid, 0));
        }
        Value::Set(set) => {
            for member in set.iter() {
                RowWriter::start(s, 3).int4(db).bytes(key).bytes(member);
            }
            e.rows[2] += set.len() as u64;
        }
        Value::ZSet(zset) => {
            for (member, score) in zset.iter() {
                RowWriter::start(z, 4)
                    .int4(db)
                    .bytes(key)
                    .bytes(member)
                    .float8(score);
            }
            e.rows[3] += zset.len() as u64;
        }
        Value::Stream(stream) => {
            let mut items: Vec<&[u8]> = Vec::new();
            let rows = &mut e.rows[4];
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
                *rows += 1;
                true
            });
        }
    }
    head
}

/// The changed elements of a key written in part: their rows deleted, the present ones copied.
fn encode_part(e: &mut Encoded, db: i32, key: &[u8], elements: &Elements) {
    let [h, l, s, z, _] = &mut e.buffers;
    match elements {
        Elements::Hash(fields) => {
            for (field, value) in fields {
                e.hash.push(db, key, field);
                if let Some(value) = value {
                    RowWriter::start(h, 4)
                        .int4(db)
                        .bytes(key)
                        .bytes(field)
                        .bytes(value);
                    e.rows[0] += 1;
                }
            }
        }
        Elements::Set(members) => {
            for (member, present) in members {
                e.set.push(db, key, member);
                if *present {
                    RowWriter::start(s, 3).int4(db).bytes(key).bytes(member);
                    e.rows[2] += 1;
                }
            }
        }
        Elements::ZSet(members) => {
            for (member, score) in members {
                e.zset.push(db, key, member);
                if let Some(score) = score {
                    RowWriter::start(z, 4)
                        .int4(db)
                        .bytes(key)
                        .bytes(member)
                        .float8(*score);
                    e.rows[3] += 1;
                }
            }
        }
        Elements::List(part) => {
            let written = crate::chunks::encode_part(l, db, key, part);
            for (lo, hi) in written.deletes {
                e.list_dbs.push(db);
                e.list_keys.push(key.to_vec());
                e.list_lo.push(lo);
                e.list_hi.push(hi);
            }
            e.rows[1] += written.rows;
            if let Some(head) = written.head {
                e.heads.push(((db, key.to_vec()), Some(head)));
            }
        }
    }
}

/// The statements of a flush for one schema, built once.
#[derive(Debug)]
pub struct Statements {
    clear: String,
    delete: String,
    /// What a flush with nothing to delete sends instead of `delete`: the same row shape
    /// (no expired rows counted, the WAL position).
    position: String,
    /// Writes the key rows of the keys written.
    upsert: String,
    /// Deletes of changed hash fields, set members and sorted-set members.
    members: [String; 3],
    list_ranges: String,
    copies: [String; 5],
    /// Replace the stored function libraries.
    functions: [String; 2],
    /// Followers' channel, and the statement sending a flush's notifications to it.
    channel: String,
    notify: &'static str,
}

impl Statements {
    pub fn new(schema: &str) -> Self {
        let s = quote_ident(schema);
        let children = [
            ("hash_fields", "hash"),
            ("list_chunks", "list"),
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
        // Gone keys' rows go, and every row expired by the snapshot's time but those of the
        // keys this flush writes (upserted after: a key whose expiry was lifted or moved in
        // memory after its row's expiry passed is alive, its elements too). Element rows go
        // with every expired row, and with a key written whole or gone that may have some
        // (`probe`: a collection now, or one in `Collections`); they are deleted for the type
        // the key had, so a string costs no probe of the other tables, and a string that never
        // was a collection none of `keys`. Keys written in part lose just the rows of their
        // changed elements.
        let expired_by = "timestamptz 'epoch' + $4::int8 * interval '1 millisecond'";
        let mut delete = format!(
            "WITH d AS (SELECT * FROM unnest($1::int4[], $2::bytea[], $3::bool[], $5::text[]) \
                 AS d(db, key, probe, type)), \
             gone AS (DELETE FROM {s}.keys k USING d \
                 WHERE d.type IS NULL AND k.db = d.db AND k.key = d.key \
                 AND (k.expire_at IS NULL OR k.expire_at > {expired_by})), \
             expired AS (DELETE FROM {s}.keys k WHERE expire_at <= {expired_by} \
                 AND NOT EXISTS (SELECT FROM d \
                     WHERE d.type IS NOT NULL AND d.db = k.db AND d.key = k.key) \
                 RETURNING db, key, type), \
             doomed AS (SELECT k.db, k.key, k.type FROM {s}.keys k JOIN d \
                 ON k.db = d.db AND k.key = d.key \
                 WHERE d.probe AND (d.type IS NOT NULL OR k.expire_at IS NULL \
                     OR k.expire_at > {expired_by}) \
                 UNION ALL SELECT * FROM expired)"
        );
        for (i, (table, kind)) in children.iter().enumerate() {
            delete.push_str(&format!(
                ", c{i} AS (DELETE FROM {s}.{table} t USING doomed d                      WHERE d.type = '{kind}' AND t.db = d.db AND t.key = d.key)"
            ));
        }
        // Element rows of keys written in part: statements of their own, sent only when the
        // flush has such rows (an empty unnest still costs its plan nodes at every commit).
        let members = [
            ("hash_fields", "field"),
            ("set_members", "member"),
            ("zset_members", "member"),
        ]
        .map(|(table, column)| {
            format!(
                "DELETE FROM {s}.{table} t \
                 USING unnest($1::int4[], $2::bytea[], $3::bytea[]) AS d(db, key, m) \
                 WHERE t.db = d.db AND t.key = d.key AND t.{column} = d.m"
            )
        });
        let list_ranges = format!(
            "DELETE FROM {s}.list_chunks t \
             USING unnest($1::int4[], $2::bytea[], $3::int8[], $4::int8[]) AS d(db, key, lo, hi) \
             WHERE t.db = d.db AND t.key = d.key AND t.chunk >= d.lo AND t.chunk <= d.hi"
        );
        delete
            .push_str(" SELECT (SELECT count(*) FROM expired), pg_current_wal_insert_lsn()::text");
        let upsert = format!(
            "INSERT INTO {s}.keys (db, key, type, expire_at, value) \
             SELECT db, key, type, \
                    timestamptz 'epoch' + nullif(e, 0) * interval '1 millisecond', value \
             FROM unnest($1::int4[], $2::bytea[], $3::text[], $4::int8[], $5::bytea[]) \
                 AS r(db, key, type, e, value) \
             WHERE type IS NOT NULL \
             ON CONFLICT (db, key) DO UPDATE \
             SET type = excluded.type, expire_at = excluded.expire_at, value = excluded.value"
        );
        let copies = TABLES.map(|(table, columns)| {
            format!("COPY {s}.{table} ({columns}) FROM STDIN (FORMAT binary)")
        });
        Self {
            clear,
            delete,
            position: "SELECT 0::int8, pg_catalog.pg_current_wal_insert_lsn()::text".to_string(),
            upsert,
            members,
            list_ranges,
            copies,
            functions: [
                format!("DELETE FROM {s}.functions"),
                format!(
                    "INSERT INTO {s}.functions (library, code) \
                     SELECT * FROM unnest($1::text[], $2::bytea[])"
                ),
            ],
            channel: crate::notify::channel(schema),
            notify: "SELECT pg_catalog.pg_notify($1, p) FROM unnest($2::text[]) AS p",
        }
    }
}

/// Writes an encoded snapshot in one transaction and one round trip: the deletes, each COPY
/// with its data, and the commit (the Sync ending the implicit transaction) go out in one write.
/// With `delete`, the delete statement goes first (gone and probed keys' rows, rows expired by
/// the snapshot's time); without (a flush that needs no deletes, [`Encoded::needs_deletes`],
/// between sweeps), only the WAL position is read: the statement's seven data-modifying parts
/// cost PostgreSQL more than the rest of a small flush.
pub async fn write(
    conn: &mut Connection,
    statements: &Statements,
    encoded: &Encoded,
    delete: bool,
) -> Result<CommitInfo, Error> {
    let started = std::time::Instant::now();
    let step = "writing a flush";
    let mut p = conn
        .pipeline(SyncMode::Once)
        .await
        .map_err(|e| Error::pg(step, e))?;
    let mut steps: Vec<&'static str> = Vec::with_capacity(8);
    if !encoded.cleared.is_empty() {
        p.query(&statements.clear, &[&encoded.cleared])
            .map_err(|e| Error::pg("emptying flushed databases", e))?;
        steps.push("emptying flushed databases");
    }
    let delete_at = if delete {
        p.query(
            &statements.delete,
            &[
                &encoded.dbs,
                &encoded.keys,
                &encoded.probe,
                &encoded.taken_at_ms,
                &encoded.types,
            ],
        )
    } else {
        p.query(&statements.position, &[])
    }
    .map_err(|e| Error::pg("deleting the dirty keys' rows", e))?;
    steps.push("deleting the dirty keys' rows");
    if encoded.key_rows > 0 {
        let step = "writing the keys' rows";
        p.query(
            &statements.upsert,
            &[
                &encoded.dbs,
                &encoded.keys,
                &encoded.types,
                &encoded.expire_ms,
                &encoded.values,
            ],
        )
        .map_err(|e| Error::pg(step, e))?;
        steps.push(step);
    }
    let elements_step = "deleting the rows of changed elements";
    for (sql, deletes) in
        statements
            .members
            .iter()
            .zip([&encoded.hash, &encoded.set, &encoded.zset])
    {
        if !deletes.dbs.is_empty() {
            p.query(sql, &[&deletes.dbs, &deletes.keys, &deletes.members])
                .map_err(|e| Error::pg(elements_step, e))?;
            steps.push(elements_step);
        }
    }
    if !encoded.list_dbs.is_empty() {
        p.query(
            &statements.list_ranges,
            &[
                &encoded.list_dbs,
                &encoded.list_keys,
                &encoded.list_lo,
                &encoded.list_hi,
            ],
        )
        .map_err(|e| Error::pg(elements_step, e))?;
        steps.push(elements_step);
    }
    if !encoded.notices.is_empty() {
        // Delivered at commit, in commit order, to the followers LISTENing.
        let step = "notifying the followers";
        p.query(statements.notify, &[&statements.channel, &encoded.notices])
            .map_err(|e| Error::pg(step, e))?;
        steps.push(step);
    }
    if let Some((names, codes)) = &encoded.functions {
        let step = "replacing the function libraries";
        p.query(&statements.functions[0], &[])
            .map_err(|e| Error::pg(step, e))?;
        p.query(&statements.functions[1], &[names, codes])
            .map_err(|e| Error::pg(step, e))?;
        steps.extend([step, step]);
    }
    for (i, sql) in statements.copies.iter().enumerate() {
        if encoded.rows[i] == 0 {
            continue;
        }
        p.copy_in(sql, &encoded.buffers[i])
            .map_err(|e| Error::pg(TABLES[i].0, e))?;
        steps.push(TABLES[i].0);
    }
    let results = p.run().await.map_err(|e| Error::pg(step, e))?;
    // The statement that failed names the step; the others only say they were aborted.
    let mut lsn = None;
    let mut aborted = None;
    for (i, result) in results.into_iter().enumerate() {
        let name = steps.get(i).copied().unwrap_or(step);
        match result {
            Ok(rows) if i == delete_at => {
                let row = rows.get(0).ok_or(Error::Load("no row from the delete"))?;
                lsn = Some(row.get::<String>(1).map_err(|e| Error::pg(name, e))?);
            }
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::PipelineAborted => {
                aborted.get_or_insert(Error::pg(name, e));
            }
            Err(e) => return Err(Error::pg(name, e)),
        }
    }
    if let Some(e) = aborted {
        return Err(e);
    }
    let lsn = lsn.ok_or(Error::Load("no result from the delete"))?;
    Ok(CommitInfo {
        lsn,
        keys: encoded.keys(),
        rows: encoded.rows(),
        micros: started.elapsed().as_micros() as u64,
    })
}
