//! Streams in Redis 7.0's RDB form (RDB_TYPE_STREAM_LISTPACKS_2, and the older
//! RDB_TYPE_STREAM_LISTPACKS read): the entries as listpacks keyed by their master ID, the
//! stream's counters, and each consumer group with its pending entries and consumers.
//!
//! A listpack holds a master entry (live count, deleted count, the master field names, 0) and
//! then per entry: flags, the ID as deltas from the master ID, the field count and names unless
//! they are the master's (SAMEFIELDS), the values, and the count of the entry's parts.

use super::packed::{Item, listpack, write_listpack_items};
use super::{RdbError, Reader, Result, write_len, write_string};
use crate::engine::Key;
use crate::engine::stream::{Consumer, Group, IdSpec, Nack, NodeLimits, Stream, StreamId};

const FLAG_DELETED: i64 = 1;
const FLAG_SAME_FIELDS: i64 = 2;
/// Entries and bytes per written listpack (Redis's stream-node-max-entries and -bytes defaults).
const NODE_MAX_ENTRIES: usize = 100;
const NODE_MAX_BYTES: usize = 4096;

fn raw_id(id: StreamId) -> [u8; 16] {
    let mut raw = [0u8; 16];
    raw[..8].copy_from_slice(&id.ms.to_be_bytes());
    raw[8..].copy_from_slice(&id.seq.to_be_bytes());
    raw
}

fn id_of_raw(raw: &[u8]) -> Result<StreamId> {
    let (Some(ms), Some(seq)) = (raw.get(..8), raw.get(8..16)) else {
        return Err(RdbError::Format("stream ID"));
    };
    let mut a = [0u8; 8];
    let mut b = [0u8; 8];
    a.copy_from_slice(ms);
    b.copy_from_slice(seq);
    Ok(StreamId::new(u64::from_be_bytes(a), u64::from_be_bytes(b)))
}

fn write_id(out: &mut Vec<u8>, id: StreamId) {
    write_len(out, id.ms);
    write_len(out, id.seq);
}

/// A node's master (ID and field names) and entries as one listpack, added to `nodes`.
fn finish<'a>(
    nodes: &mut Vec<(StreamId, Vec<u8>)>,
    master: &mut Option<(StreamId, Vec<&'a [u8]>)>,
    items: &mut Vec<Item<'a>>,
    entries: usize,
) {
    if let Some((id, fields)) = master.take() {
        let mut all = vec![
            Item::Int(entries as i64),
            Item::Int(0),
            Item::Int(fields.len() as i64),
        ];
        all.extend(fields.iter().map(|f| Item::Bytes(f)));
        all.push(Item::Int(0));
        all.append(items);
        nodes.push((id, write_listpack_items(&all)));
    }
}

/// The live entries of `stream` as (master ID, listpack) nodes.
fn nodes(stream: &Stream) -> Vec<(StreamId, Vec<u8>)> {
    let mut nodes = Vec::new();
    let mut items: Vec<Item<'_>> = Vec::new();
    let mut master: Option<(StreamId, Vec<&[u8]>)> = None;
    let (mut entries, mut bytes) = (0usize, 0usize);
    stream.walk(StreamId::MIN, StreamId::MAX, false, |entry| {
        if master.is_some() && (entries >= NODE_MAX_ENTRIES || bytes >= NODE_MAX_BYTES) {
            finish(&mut nodes, &mut master, &mut items, entries);
            entries = 0;
            bytes = 0;
        }
        let (master_id, master_fields) =
            master.get_or_insert_with(|| (entry.id, entry.fields().map(|(f, _)| f).collect()));
        let same = entry.len() == master_fields.len()
            && entry
                .fields()
                .zip(master_fields.iter())
                .all(|((f, _), m)| f == *m);
        items.push(Item::Int(if same { FLAG_SAME_FIELDS } else { 0 }));
        // Deltas as Redis computes them: the sequence's may be negative.
        items.push(Item::Int(entry.id.ms.wrapping_sub(master_id.ms) as i64));
        items.push(Item::Int(entry.id.seq.wrapping_sub(master_id.seq) as i64));
        let n = entry.len();
        if !same {
            items.push(Item::Int(n as i64));
        }
        for (field, value) in entry.fields() {
            if !same {
                items.push(Item::Bytes(field));
            }
            items.push(Item::Bytes(value));
            bytes += field.len() + value.len();
        }
        let parts = 3 + n + if same { 0 } else { n + 1 };
        items.push(Item::Int(parts as i64));
        entries += 1;
        true
    });
    finish(&mut nodes, &mut master, &mut items, entries);
    nodes
}

/// Writes the body of a stream value (after its type byte).
pub(super) fn write_stream(out: &mut Vec<u8>, stream: &Stream) {
    let nodes = nodes(stream);
    write_len(out, nodes.len() as u64);
    for (id, lp) in &nodes {
        write_string(out, &raw_id(*id));
        write_string(out, lp);
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
        // -1 (unknown) as Redis stores it: the length of its two's complement.
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

fn int(item: &[u8], what: &'static str) -> Result<i64> {
    crate::num::parse_i64(item).ok_or(RdbError::Format(what))
}

/// The entries of one listpack, live ones only, appended to `stream` in order.
fn read_node(stream: &mut Stream, master: StreamId, lp: &[u8]) -> Result<()> {
    let items = listpack(lp)?;
    let mut it = items.iter().map(Vec::as_slice);
    let mut next = |what: &'static str| it.next().ok_or(RdbError::Format(what));
    let live = int(next("stream master entry")?, "stream count")?;
    let deleted = int(next("stream master entry")?, "stream count")?;
    let master_fields = int(next("stream master entry")?, "stream field count")?;
    let master_fields =
        usize::try_from(master_fields).map_err(|_| RdbError::Format("stream field count"))?;
    let mut names: Vec<&[u8]> = Vec::with_capacity(master_fields.min(lp.len()));
    for _ in 0..master_fields {
        names.push(next("stream master field")?);
    }
    if int(next("stream master entry")?, "stream master terminator")? != 0 {
        return Err(RdbError::Format("stream master terminator"));
    }
    let total = live
        .checked_add(deleted)
        .filter(|t| *t > 0)
        .ok_or(RdbError::Format("stream count"))?;
    let (mut seen_live, mut seen) = (0i64, 0i64);
    let mut pairs: Vec<(&[u8], &[u8])> = Vec::new();
    while seen < total {
        let flags = int(next("stream entry")?, "stream entry flags")?;
        let ms = int(next("stream entry")?, "stream entry ID")?;
        let seq = int(next("stream entry")?, "stream entry ID")?;
        let id = StreamId::new(
            master.ms.wrapping_add(ms as u64),
            master.seq.wrapping_add(seq as u64),
        );
        let same = flags & FLAG_SAME_FIELDS != 0;
        let n = if same {
            names.len()
        } else {
            usize::try_from(int(next("stream entry")?, "stream entry fields")?)
                .map_err(|_| RdbError::Format("stream entry fields"))?
        };
        pairs.clear();
        for i in 0..n {
            let field = if same {
                names
                    .get(i)
                    .copied()
                    .ok_or(RdbError::Format("stream field"))?
            } else {
                next("stream field")?
            };
            pairs.push((field, next("stream value")?));
        }
        next("stream entry parts")?;
        seen += 1;
        if flags & FLAG_DELETED != 0 {
            continue;
        }
        seen_live += 1;
        if pairs.is_empty() {
            return Err(RdbError::Format("stream entry without fields"));
        }
        stream
            .append(IdSpec::Exact(id), &pairs, NodeLimits::default(), 0)
            .map_err(|_| RdbError::Format("stream entry IDs out of order"))?;
    }
    if seen_live != live || it.next().is_some() {
        return Err(RdbError::Format("stream listpack entries"));
    }
    Ok(())
}

impl Reader<'_> {
    fn id_pair(&mut self) -> Result<StreamId> {
        let ms = self.len()? as u64;
        let seq = self.len()? as u64;
        Ok(StreamId::new(ms, seq))
    }

    fn u64_len(&mut self) -> Result<u64> {
        Ok(self.len()? as u64)
    }

    fn millis(&mut self) -> Result<i64> {
        let mut b = [0u8; 8];
        b.copy_from_slice(self.take(8, "stream time")?);
        Ok(i64::from_le_bytes(b))
    }

    /// A stream value; `v2` for RDB_TYPE_STREAM_LISTPACKS_2 (first ID, max deleted ID, entries
    /// added and groups' entries read are stored).
    pub(super) fn stream(&mut self, v2: bool) -> Result<Stream> {
        let mut stream = Stream::default();
        let nodes = self.len()?;
        if nodes > self.remaining() {
            return Err(RdbError::Format("count past the end"));
        }
        let mut previous: Option<StreamId> = None;
        for _ in 0..nodes {
            let master = id_of_raw(&self.string()?)?;
            if previous.is_some_and(|p| p >= master) {
                return Err(RdbError::Format("stream nodes out of order"));
            }
            previous = Some(master);
            let lp = self.string()?;
            read_node(&mut stream, master, &lp)?;
        }
        let length = self.u64_len()?;
        if length != stream.length {
            return Err(RdbError::Format("stream length"));
        }
        let last_id = self.id_pair()?;
        if last_id < stream.last_id {
            return Err(RdbError::Format("stream last ID"));
        }
        stream.last_id = last_id;
        if v2 {
            // The first ID is the first live entry's, known from the entries already.
            self.id_pair()?;
            stream.max_deleted_id = self.id_pair()?;
            stream.entries_added = self.u64_len()?;
        }
        let groups = self.len()?;
        if groups > self.remaining() {
            return Err(RdbError::Format("count past the end"));
        }
        for _ in 0..groups {
            let name = Key::from(self.string()?);
            let last = self.id_pair()?;
            let entries_read = if v2 {
                self.u64_len()? as i64
            } else {
                stream.estimate_distance(last).unwrap_or(-1)
            };
            let mut group = Group::new(last, entries_read);
            let pending = self.len()?;
            if pending > self.remaining() {
                return Err(RdbError::Format("count past the end"));
            }
            let mut unowned = std::collections::BTreeMap::new();
            for _ in 0..pending {
                let id = id_of_raw(self.take(16, "stream PEL")?)?;
                let delivery_time = self.millis()?;
                let delivery_count = self.u64_len()?;
                if unowned
                    .insert(id, (delivery_time, delivery_count))
                    .is_some()
                {
                    return Err(RdbError::Format("duplicate PEL entry"));
                }
            }
            let consumers = self.len()?;
            if consumers > self.remaining() {
                return Err(RdbError::Format("count past the end"));
            }
            for _ in 0..consumers {
                let cname = Key::from(self.string()?);
                let mut consumer = Consumer {
                    seen_time: self.millis()?,
                    ..Consumer::default()
                };
                let owned = self.len()?;
                if owned > self.remaining() {
                    return Err(RdbError::Format("count past the end"));
                }
                for _ in 0..owned {
                    let id = id_of_raw(self.take(16, "stream consumer PEL")?)?;
                    let (delivery_time, delivery_count) = unowned
                        .remove(&id)
                        .ok_or(RdbError::Format("consumer PEL entry not in the group's"))?;
                    group.pel.insert(
                        id,
                        Nack {
                            consumer: cname.clone(),
                            delivery_time,
                            delivery_count,
                        },
                    );
                    consumer.pel.insert(id);
                }
                if group.consumers.insert(cname, consumer).is_some() {
                    return Err(RdbError::Format("duplicate consumer"));
                }
            }
            if !unowned.is_empty() {
                return Err(RdbError::Format("PEL entry without a consumer"));
            }
            if stream.groups.insert(name, group).is_some() {
                return Err(RdbError::Format("duplicate consumer group"));
            }
        }
        Ok(stream)
    }
}
