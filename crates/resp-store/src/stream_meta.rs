//! A stream's state beside its entries, kept in its `keys.value`: counters and consumer groups.
//!
//! Layout (big-endian): last ID (ms, seq), largest deleted ID (ms, seq), entries added — five
//! u64 — then the groups: a u32 count, and per group its name, last delivered ID, entries read
//! (i64), its consumers (name, seen time) and its pending entries (ID, consumer, delivery time,
//! delivery count). Names are a u32 length and the bytes. A consumer's own pending set is
//! rebuilt from the group's pending entries.

use std::collections::{BTreeMap, BTreeSet};

use bytes::BufMut;
use sluice_resp::engine::stream::{Consumer, Group, Nack};
use sluice_resp::engine::{Key, Stream, StreamId};

use crate::Error;

/// Encodes a stream's counters and groups.
pub fn encode(stream: &Stream) -> Vec<u8> {
    let mut out = Vec::with_capacity(44);
    for word in [
        stream.last_id.ms,
        stream.last_id.seq,
        stream.max_deleted_id.ms,
        stream.max_deleted_id.seq,
        stream.entries_added,
    ] {
        out.put_u64(word);
    }
    out.put_u32(len_u32(stream.groups.len()));
    for (name, group) in &stream.groups {
        put_bytes(&mut out, name);
        put_id(&mut out, group.last_id);
        out.put_i64(group.entries_read);
        out.put_u32(len_u32(group.consumers.len()));
        for (consumer, state) in &group.consumers {
            put_bytes(&mut out, consumer);
            out.put_i64(state.seen_time);
        }
        out.put_u32(len_u32(group.pel.len()));
        for (id, nack) in &group.pel {
            put_id(&mut out, *id);
            put_bytes(&mut out, &nack.consumer);
            out.put_i64(nack.delivery_time);
            out.put_u64(nack.delivery_count);
        }
    }
    out
}

/// An empty stream with the counters and groups of `value` (entries are appended after).
pub fn decode(value: Option<&[u8]>) -> Result<Stream, Error> {
    let mut stream = Stream::default();
    let Some(value) = value else {
        return Ok(stream);
    };
    let mut cur = Cursor(value);
    stream.last_id = cur.id()?;
    stream.max_deleted_id = cur.id()?;
    stream.entries_added = cur.u64()?;
    if cur.0.is_empty() {
        return Ok(stream);
    }
    for _ in 0..cur.u32()? {
        let name = Key::from(cur.bytes()?);
        let mut group = Group::new(cur.id()?, cur.u64()? as i64);
        for _ in 0..cur.u32()? {
            let consumer = Key::from(cur.bytes()?);
            let seen_time = cur.u64()? as i64;
            group.consumers.insert(
                consumer,
                Consumer {
                    seen_time,
                    pel: BTreeSet::new(),
                },
            );
        }
        let mut pel = BTreeMap::new();
        for _ in 0..cur.u32()? {
            let id = cur.id()?;
            let consumer = Key::from(cur.bytes()?);
            let delivery_time = cur.u64()? as i64;
            let delivery_count = cur.u64()?;
            group
                .consumers
                .entry(consumer.clone())
                .or_default()
                .pel
                .insert(id);
            pel.insert(
                id,
                Nack {
                    consumer,
                    delivery_time,
                    delivery_count,
                },
            );
        }
        group.pel = pel;
        stream.groups.insert(name, group);
    }
    if !cur.0.is_empty() {
        return Err(Error::Load("bytes left over after a stream's groups"));
    }
    Ok(stream)
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.put_u32(len_u32(bytes.len()));
    out.put_slice(bytes);
}

fn put_id(out: &mut Vec<u8>, id: StreamId) {
    out.put_u64(id.ms);
    out.put_u64(id.seq);
}

/// Keys and names are far below 4 GiB (proto-max-bulk-len caps them at 512 MB).
fn len_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Checked reads from a stream's state: malformed bytes are an error, never a panic.
struct Cursor<'a>(&'a [u8]);

const SHORT: Error = Error::Load("a stream's state ends early");

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        if self.0.len() < n {
            return Err(SHORT);
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn u64(&mut self) -> Result<u64, Error> {
        let b = self.take(8)?;
        <[u8; 8]>::try_from(b)
            .map(u64::from_be_bytes)
            .map_err(|_| SHORT)
    }

    fn u32(&mut self) -> Result<u32, Error> {
        let b = self.take(4)?;
        <[u8; 4]>::try_from(b)
            .map(u32::from_be_bytes)
            .map_err(|_| SHORT)
    }

    fn id(&mut self) -> Result<StreamId, Error> {
        Ok(StreamId::new(self.u64()?, self.u64()?))
    }

    fn bytes(&mut self) -> Result<&'a [u8], Error> {
        let n = self.u32()? as usize;
        self.take(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_and_counters_round_trip_and_truncation_is_an_error() {
        let mut stream = Stream::default();
        stream.last_id = StreamId::new(9, 2);
        stream.max_deleted_id = StreamId::new(5, 0);
        stream.entries_added = 7;
        let mut group = Group::new(StreamId::new(3, 0), 2);
        group.touch_consumer(b"alice", 1000);
        group.touch_consumer(b"idle", 500);
        group.pel.insert(
            StreamId::new(2, 0),
            Nack {
                consumer: Key::from(&b"alice"[..]),
                delivery_time: 1001,
                delivery_count: 3,
            },
        );
        stream.groups.insert(Key::from(&b"workers"[..]), group);
        let bytes = encode(&stream);
        let back = decode(Some(&bytes)).unwrap();
        assert_eq!(back.last_id, StreamId::new(9, 2));
        assert_eq!(back.max_deleted_id, StreamId::new(5, 0));
        assert_eq!(back.entries_added, 7);
        let g = &back.groups[&b"workers"[..]];
        assert_eq!((g.last_id, g.entries_read), (StreamId::new(3, 0), 2));
        assert_eq!(g.consumers.len(), 2);
        assert_eq!(g.consumers[&b"alice"[..]].pel.len(), 1);
        assert_eq!(g.consumers[&b"idle"[..]].seen_time, 500);
        assert_eq!(g.pel[&StreamId::new(2, 0)].delivery_count, 3);
        for cut in 0..bytes.len() {
            if cut == 40 {
                continue; // counters alone: a stream without groups
            }
            assert!(decode(Some(&bytes[..cut])).is_err(), "cut at {cut}");
        }
    }
}
