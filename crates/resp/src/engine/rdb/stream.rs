//! Streams in DUMP payloads: Redis's listpack nodes with delta-encoded IDs, the stream's
//! counters, consumer groups with their pending entries and consumers (RDB stream types 15 and
//! 19; Sluice writes 19, as Redis 7.0 does).

use std::collections::{BTreeMap, BTreeSet};

use super::packed::{self, LpItem};
use super::{RdbError, Reader, Result, write_len, write_string};
use crate::engine::stream::{Consumer, Group, IdSpec, Nack, NodeLimits, Stream, StreamId};
use crate::engine::{Key, Value};

/// RDB_TYPE_STREAM_LISTPACKS: Redis 5.0 to 6.2.
pub(super) const TYPE_STREAM_LISTPACKS: u8 = 15;
/// RDB_TYPE_STREAM_LISTPACKS_2: Redis 7.0 (adds first ID, max deleted ID, entries added and each
/// group's entries read).
pub(super) const TYPE_STREAM_LISTPACKS_2: u8 = 19;

/// Entry flags inside a node (Redis's STREAM_ITEM_FLAG_*).
const FLAG_DELETED: i64 = 1;
const FLAG_SAME_FIELDS: i64 = 2;

/// Entries and bytes per written node (Redis's stream-node-max-entries and -bytes defaults).
const NODE_MAX_ENTRIES: usize = 100;
const NODE_MAX_BYTES: usize = 4096;

/// A live entry about to be written: its ID and field/value pairs.
type EntryFields<'a> = (StreamId, Vec<(&'a [u8], &'a [u8])>);

fn bad(what: &'static str) -> RdbError {
    RdbError::Format(what)
}

/// Writes `stream` as an RDB_TYPE_STREAM_LISTPACKS_2 value (type byte included).
pub(super) fn write(out: &mut Vec<u8>, stream: &Stream) {
    out.push(TYPE_STREAM_LISTPACKS_2);
    let nodes = nodes(stream);
    write_len(out, nodes.len() as u64);
    for (master, listpack) in &nodes {
        write_string(out, &raw_id(*master));
        write_string(out, listpack);
    }
    write_len(out, stream.length);
    write_id(out, stream.last_id);
    write_id(out, stream.first_id);
    write_id(out, stream.max_deleted_id);
    write_len(out, stream.entries_added);
    write_len(out, stream.groups.len() as u64);
    for (name, group) in &stream.groups {
        write_string(out, name);
        write_id(out, group.last_id);
        // Redis stores an unknown count (-1) as the unsigned length it casts back.
        write_len(out, group.entries_read as u64);
        write_len(out, group.pel.len() as u64);
        for (id, nack) in &group.pel {
            out.extend_from_slice(&raw_id(*id));
            out.extend_from_slice(&nack.delivery_time.to_le_bytes());
            write_len(out, nack.delivery_count);
        }
        write_len(out, group.consumers.len() as u64);
        for (name, consumer) in &group.consumers {
            write_string(out, name);
            out.extend_from_slice(&consumer.seen_time.to_le_bytes());
            write_len(out, consumer.pel.len() as u64);
            for id in &consumer.pel {
                out.extend_from_slice(&raw_id(*id));
            }
        }
    }
}

fn write_id(out: &mut Vec<u8>, id: StreamId) {
    write_len(out, id.ms);
    write_len(out, id.seq);
}

/// An ID as a node key or PEL entry: milliseconds then sequence, big-endian.
fn raw_id(id: StreamId) -> [u8; 16] {
    let mut raw = [0u8; 16];
    raw[..8].copy_from_slice(&id.ms.to_be_bytes());
    raw[8..].copy_from_slice(&id.seq.to_be_bytes());
    raw
}

fn parse_raw_id(raw: &[u8]) -> Result<StreamId> {
    let (ms, seq) = raw.split_at_checked(8).ok_or(bad("stream ID"))?;
    let ms: [u8; 8] = ms.try_into().map_err(|_| bad("stream ID"))?;
    let seq: [u8; 8] = seq.try_into().map_err(|_| bad("stream ID"))?;
    Ok(StreamId::new(
        u64::from_be_bytes(ms),
        u64::from_be_bytes(seq),
    ))
}

/// The live entries in nodes of Redis's layout: (the node's first ID, its listpack).
fn nodes(stream: &Stream) -> Vec<(StreamId, Vec<u8>)> {
    let mut nodes = Vec::new();
    let mut entries: Vec<EntryFields<'_>> = Vec::new();
    let mut bytes = 0;
    stream.walk(StreamId::MIN, StreamId::MAX, false, |entry| {
        let fields: Vec<(&[u8], &[u8])> = entry.fields().collect();
        let size: usize = fields
            .iter()
            .map(|(f, v)| f.len() + v.len() + 4)
            .sum::<usize>()
            + 8;
        if !entries.is_empty()
            && (entries.len() >= NODE_MAX_ENTRIES || bytes + size > NODE_MAX_BYTES)
        {
            nodes.push(node_listpack(&entries));
            entries.clear();
            bytes = 0;
        }
        bytes += size;
        entries.push((entry.id, fields));
        true
    });
    if !entries.is_empty() {
        nodes.push(node_listpack(&entries));
    }
    nodes
}

/// One node: the master entry (counts and the first entry's field names), then each entry as
/// flags, the ID's deltas from the first, the fields (only values when they match the master's)
/// and the number of elements it took.
fn node_listpack(entries: &[EntryFields<'_>]) -> (StreamId, Vec<u8>) {
    let master = entries.first().map_or(StreamId::MIN, |(id, _)| *id);
    let master_fields: Vec<&[u8]> = entries
        .first()
        .map(|(_, f)| f.iter().map(|(name, _)| *name).collect())
        .unwrap_or_default();
    let mut items: Vec<LpItem<'_>> = vec![
        LpItem::Int(entries.len() as i64),
        LpItem::Int(0),
        LpItem::Int(master_fields.len() as i64),
    ];
    items.extend(master_fields.iter().map(|f| LpItem::Str(f)));
    items.push(LpItem::Int(0));
    for (id, fields) in entries {
        let same = fields.len() == master_fields.len()
            && fields.iter().zip(&master_fields).all(|((f, _), m)| f == m);
        let n = fields.len() as i64;
        items.push(LpItem::Int(if same { FLAG_SAME_FIELDS } else { 0 }));
        items.push(LpItem::Int(id.ms.wrapping_sub(master.ms) as i64));
        items.push(LpItem::Int(id.seq.wrapping_sub(master.seq) as i64));
        if same {
            items.extend(fields.iter().map(|(_, v)| LpItem::Str(v)));
            items.push(LpItem::Int(n + 3));
        } else {
            items.push(LpItem::Int(n));
            for (f, v) in fields {
                items.push(LpItem::Str(f));
                items.push(LpItem::Str(v));
            }
            items.push(LpItem::Int(n * 2 + 4));
        }
    }
    (master, packed::write_listpack_items(items.into_iter()))
}

/// Reads a stream value of RDB type `kind` (15 or 19).
pub(super) fn read(r: &mut Reader<'_>, kind: u8) -> Result<Value> {
    let mut stream = Stream::default();
    let limits = NodeLimits::default();
    let node_count = r.len()?;
    let mut previous: Option<StreamId> = None;
    for _ in 0..node_count {
        let master = parse_raw_id(&r.string()?)?;
        let elements = packed::listpack(&r.string()?)?;
        read_node(&mut stream, master, &elements, &mut previous, limits)?;
    }
    let length = r.len_u64()?;
    if length != stream.length {
        return Err(bad("stream length"));
    }
    let last_id = read_id(r)?;
    if previous.is_some_and(|p| p > last_id) {
        return Err(bad("stream last ID"));
    }
    stream.last_id = last_id;
    if kind == TYPE_STREAM_LISTPACKS_2 {
        stream.first_id = read_id(r)?;
        stream.max_deleted_id = read_id(r)?;
        stream.entries_added = r.len_u64()?;
    } else {
        // Before 7.0 these were not kept: Redis takes the entries there are as all ever added.
        stream.max_deleted_id = StreamId::MIN;
        stream.entries_added = stream.length;
        stream.first_id = stream.edge_id(false).unwrap_or_default();
    }
    let group_count = r.len()?;
    for _ in 0..group_count {
        let name = Key::from(r.string()?);
        let last_id = read_id(r)?;
        let entries_read = if kind == TYPE_STREAM_LISTPACKS_2 {
            r.len_u64()? as i64
        } else {
            stream.estimate_distance(last_id).unwrap_or(-1)
        };
        let group = read_group(r, last_id, entries_read)?;
        if stream.groups.insert(name, group).is_some() {
            return Err(bad("duplicate consumer group"));
        }
    }
    Ok(Value::Stream(Box::new(stream)))
}

fn read_id(r: &mut Reader<'_>) -> Result<StreamId> {
    Ok(StreamId::new(r.len_u64()?, r.len_u64()?))
}

fn read_millis(r: &mut Reader<'_>) -> Result<i64> {
    let raw: [u8; 8] = r.take(8, "time")?.try_into().map_err(|_| bad("time"))?;
    Ok(i64::from_le_bytes(raw))
}

fn read_group(r: &mut Reader<'_>, last_id: StreamId, entries_read: i64) -> Result<Group> {
    let mut group = Group::new(last_id, entries_read);
    // The group's PEL comes first, without owners; each consumer's list then claims its own.
    let mut unowned: BTreeMap<StreamId, (i64, u64)> = BTreeMap::new();
    let pending = r.len()?;
    for _ in 0..pending {
        let id = parse_raw_id(r.take(16, "PEL entry")?)?;
        let delivery_time = read_millis(r)?;
        let delivery_count = r.len_u64()?;
        if unowned
            .insert(id, (delivery_time, delivery_count))
            .is_some()
        {
            return Err(bad("duplicate PEL entry"));
        }
    }
    let consumers = r.len()?;
    for _ in 0..consumers {
        let name = Key::from(r.string()?);
        let seen_time = read_millis(r)?;
        let mut pel = BTreeSet::new();
        let owned = r.len()?;
        for _ in 0..owned {
            let id = parse_raw_id(r.take(16, "consumer PEL entry")?)?;
            let (delivery_time, delivery_count) = unowned
                .remove(&id)
                .ok_or(bad("consumer PEL entry not in the group's"))?;
            group.pel.insert(
                id,
                Nack {
                    consumer: name.clone(),
                    delivery_time,
                    delivery_count,
                },
            );
            pel.insert(id);
        }
        if group
            .consumers
            .insert(name, Consumer { seen_time, pel })
            .is_some()
        {
            return Err(bad("duplicate consumer"));
        }
    }
    if !unowned.is_empty() {
        return Err(bad("PEL entry without a consumer"));
    }
    Ok(group)
}

/// A cursor over a node's listpack elements.
struct Elements<'a> {
    items: &'a [Vec<u8>],
    at: usize,
}

impl<'a> Elements<'a> {
    fn next(&mut self, what: &'static str) -> Result<&'a [u8]> {
        let e = self.items.get(self.at).ok_or(bad(what))?;
        self.at += 1;
        Ok(e.as_slice())
    }

    fn int(&mut self, what: &'static str) -> Result<i64> {
        crate::num::parse_i64(self.next(what)?).ok_or(bad(what))
    }

    /// A count of elements still to come: more than remain is corrupt.
    fn count(&mut self, what: &'static str) -> Result<usize> {
        let n = usize::try_from(self.int(what)?).map_err(|_| bad(what))?;
        if n > self.items.len() - self.at {
            return Err(bad(what));
        }
        Ok(n)
    }

    fn done(&self) -> bool {
        self.at >= self.items.len()
    }
}

/// Appends a node's live entries to `stream`; `previous` is the last ID seen, IDs must grow.
fn read_node(
    stream: &mut Stream,
    master: StreamId,
    elements: &[Vec<u8>],
    previous: &mut Option<StreamId>,
    limits: NodeLimits,
) -> Result<()> {
    let mut e = Elements {
        items: elements,
        at: 0,
    };
    let declared = e.int("node count")? + e.int("node deleted count")?;
    let master_count = e.count("master field count")?;
    let mut master_fields = Vec::with_capacity(master_count);
    for _ in 0..master_count {
        master_fields.push(e.next("master field")?);
    }
    if e.int("master terminator")? != 0 {
        return Err(bad("master terminator"));
    }
    let mut seen = 0i64;
    let mut fields: Vec<(&[u8], &[u8])> = Vec::new();
    while !e.done() {
        let flags = e.int("entry flags")?;
        let ms = e.int("entry ID")? as u64;
        let seq = e.int("entry ID")? as u64;
        // Deltas are written as signed 64-bit integers and added back with wrap-around (the
        // sequence of a later millisecond may be below the first entry's).
        let id = StreamId::new(master.ms.wrapping_add(ms), master.seq.wrapping_add(seq));
        fields.clear();
        if flags & FLAG_SAME_FIELDS != 0 {
            for name in &master_fields {
                fields.push((name, e.next("entry value")?));
            }
        } else {
            let n = e.count("entry field count")?;
            for _ in 0..n {
                let name = e.next("entry field")?;
                fields.push((name, e.next("entry value")?));
            }
        }
        e.next("entry element count")?;
        seen += 1;
        if previous.is_some_and(|p| id <= p) {
            return Err(bad("stream IDs out of order"));
        }
        *previous = Some(id);
        if flags & FLAG_DELETED == 0 {
            if fields.is_empty() {
                return Err(bad("entry without fields"));
            }
            stream
                .append(IdSpec::Exact(id), &fields, limits, 0)
                .map_err(|_| bad("entry ID"))?;
        }
    }
    if seen != declared {
        return Err(bad("node entry count"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rdb::{dump, restore, with_footer};

    fn sample() -> Stream {
        let mut s = Stream::default();
        let limits = NodeLimits::default();
        for i in 1..=250u64 {
            let value = i.to_string();
            let pairs: Vec<(&[u8], &[u8])> = if i % 7 == 0 {
                vec![(b"other", value.as_bytes()), (b"x", b"y")]
            } else {
                vec![(b"n", value.as_bytes())]
            };
            // A later millisecond with a lower sequence: negative deltas inside a node.
            let id = StreamId::new(1000 + i / 3, i % 3);
            s.append(IdSpec::Exact(id), &pairs, limits, 0).unwrap();
        }
        s.delete_ids(&[StreamId::new(1001, 1), StreamId::new(1083, 1)]);
        let mut g = Group::new(StreamId::new(1010, 1), 30);
        g.touch_consumer(b"alice", 1_700_000_000_000);
        g.touch_consumer(b"idle", 1_700_000_000_001);
        g.deliver(StreamId::new(1002, 2), b"alice", 1_700_000_000_123);
        g.deliver(StreamId::new(1003, 0), b"alice", 1_700_000_000_456);
        s.groups.insert(Key::from(&b"g1"[..]), g);
        s.groups
            .insert(Key::from(&b"g2"[..]), Group::new(StreamId::MIN, -1));
        s
    }

    type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

    fn entries(s: &Stream) -> Vec<(StreamId, Pairs)> {
        let mut v = Vec::new();
        s.walk(StreamId::MIN, StreamId::MAX, false, |e| {
            v.push((
                e.id,
                e.fields().map(|(f, x)| (f.to_vec(), x.to_vec())).collect(),
            ));
            true
        });
        v
    }

    #[test]
    fn streams_round_trip_with_groups_and_pending_entries() {
        let s = sample();
        let Value::Stream(back) = restore(&dump(&Value::Stream(Box::new(s.clone())))).unwrap()
        else {
            panic!("not a stream");
        };
        assert_eq!(entries(&back), entries(&s));
        assert_eq!(back.length, 248);
        assert_eq!(
            (
                back.last_id,
                back.first_id,
                back.max_deleted_id,
                back.entries_added
            ),
            (s.last_id, s.first_id, s.max_deleted_id, s.entries_added)
        );
        let g = &back.groups[&b"g1"[..]];
        assert_eq!((g.last_id, g.entries_read), (StreamId::new(1010, 1), 30));
        let nack = &g.pel[&StreamId::new(1003, 0)];
        assert_eq!(nack.consumer.as_slice(), b"alice");
        assert_eq!(
            (nack.delivery_time, nack.delivery_count),
            (1_700_000_000_456, 1)
        );
        assert_eq!(g.consumers[&b"alice"[..]].pel.len(), 2);
        assert_eq!(g.consumers[&b"idle"[..]].seen_time, 1_700_000_000_001);
        assert_eq!(back.groups[&b"g2"[..]].entries_read, -1);
    }

    /// The 6.x layout (type 15) lacks the 7.0 counters: as Redis, all entries there are count
    /// as added and a group's entries read is estimated from its last ID.
    #[test]
    fn the_6_x_layout_reads_with_estimated_counters() {
        let mut s = Stream::default();
        for i in 1..=6u64 {
            s.append(
                IdSpec::Exact(StreamId::new(i, 0)),
                &[(b"data", b"x")],
                NodeLimits::default(),
                0,
            )
            .unwrap();
        }
        s.delete_ids(&[StreamId::new(3, 0)]);
        s.trim(crate::engine::stream::Trim::MaxLen(2), false, 0);
        let mut body = vec![TYPE_STREAM_LISTPACKS];
        let nodes = nodes(&s);
        write_len(&mut body, nodes.len() as u64);
        for (master, lp) in &nodes {
            write_string(&mut body, &raw_id(*master));
            write_string(&mut body, lp);
        }
        write_len(&mut body, s.length);
        write_id(&mut body, s.last_id);
        write_len(&mut body, 2);
        for (name, last) in [(&b"g1"[..], StreamId::new(5, 0)), (b"g2", StreamId::MIN)] {
            write_string(&mut body, name);
            write_id(&mut body, last);
            write_len(&mut body, 0);
            write_len(&mut body, 0);
        }
        let Value::Stream(back) = restore(&with_footer(&body)).unwrap() else {
            panic!("not a stream");
        };
        assert_eq!(back.length, 2);
        assert_eq!(back.entries_added, 2);
        assert_eq!(back.max_deleted_id, StreamId::MIN);
        assert_eq!(back.first_id, StreamId::new(5, 0));
        let g1 = &back.groups[&b"g1"[..]];
        assert_eq!((g1.entries_read, back.group_lag(g1)), (1, Some(1)));
        let g2 = &back.groups[&b"g2"[..]];
        assert_eq!((g2.entries_read, back.group_lag(g2)), (0, Some(2)));
    }

    #[test]
    fn inconsistent_streams_are_refused() {
        let s = sample();
        let good = {
            let mut out = Vec::new();
            write(&mut out, &s);
            out
        };
        assert!(restore(&with_footer(&good)).is_ok());
        // A declared length that does not match the entries: the byte after the nodes.
        let mut body = vec![TYPE_STREAM_LISTPACKS_2];
        write_len(&mut body, 0);
        write_len(&mut body, 3);
        assert!(matches!(
            restore(&with_footer(&body)),
            Err(RdbError::Format(_))
        ));
        // A pending entry nobody owns.
        let mut orphan = s.clone();
        if let Some(g) = orphan.groups.get_mut(&b"g1"[..]) {
            g.consumers.clear();
        }
        let mut out = Vec::new();
        write(&mut out, &orphan);
        assert!(restore(&with_footer(&out)).is_err());
    }
}
