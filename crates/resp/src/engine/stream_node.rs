//! One stream node's byte encoding: the master field names, then per entry a flags byte, the ID
//! as varint deltas from the node's first ID, and the values (field names too when they differ
//! from the master's). Only this module writes nodes, so decoding never meets foreign bytes.

use super::stream::StreamId;

/// Entry flag: the entry was deleted (XDEL, XTRIM inside a node).
pub(super) const DELETED: u8 = 1;
/// Entry flag: the entry has the node's master fields, only values are stored.
pub(super) const SAME_FIELDS: u8 = 2;

/// One node: entries delta-encoded against `first` (the B-tree key).
#[derive(Debug, Clone)]
pub(super) struct Node {
    pub(super) data: Vec<u8>,
    /// Offset of the first entry (after the master fields).
    pub(super) entries_at: u32,
    pub(super) live: u32,
    pub(super) deleted: u32,
    /// ID of the last entry written (deleted or not).
    pub(super) last: StreamId,
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a varint at `*pos`; nodes are only written by this module, so a malformed one cannot
/// occur, and a truncated read yields 0 rather than panicking.
fn get_varint(data: &[u8], pos: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    while let Some(&b) = data.get(*pos) {
        *pos += 1;
        if shift < 64 {
            v |= u64::from(b & 0x7f) << shift;
        }
        if b & 0x80 == 0 {
            break;
        }
        shift += 7;
    }
    v
}

pub(super) fn get_bytes<'a>(data: &'a [u8], pos: &mut usize) -> &'a [u8] {
    let len = usize::try_from(get_varint(data, pos)).unwrap_or(usize::MAX);
    let start = (*pos).min(data.len());
    let end = start.saturating_add(len).min(data.len());
    *pos = end;
    &data[start..end]
}

/// A decoded entry header inside a node.
#[derive(Debug, Clone, Copy)]
pub(super) struct Header {
    pub(super) at: usize,
    pub(super) flags: u8,
    pub(super) id: StreamId,
    /// Number of field/value pairs.
    pub(super) fields: usize,
    /// Offset of the first field (or value, for SAME_FIELDS).
    pub(super) body: usize,
}

impl Node {
    pub(super) fn new(first: StreamId, fields: &[&[u8]]) -> Node {
        let mut data = Vec::with_capacity(128);
        put_varint(&mut data, fields.len() as u64);
        for f in fields {
            put_varint(&mut data, f.len() as u64);
            data.extend_from_slice(f);
        }
        Node {
            entries_at: data.len() as u32,
            data,
            live: 0,
            deleted: 0,
            last: first,
        }
    }

    pub(super) fn master_fields(&self) -> impl Iterator<Item = &[u8]> + Clone + '_ {
        let mut pos = 0;
        let n = get_varint(&self.data, &mut pos);
        (0..n).map(move |_| get_bytes(&self.data, &mut pos))
    }

    pub(super) fn master_count(&self) -> usize {
        let mut pos = 0;
        usize::try_from(get_varint(&self.data, &mut pos)).unwrap_or(0)
    }

    pub(super) fn same_as_master(&self, fields: &[&[u8]]) -> bool {
        self.master_count() == fields.len()
            && self.master_fields().zip(fields).all(|(a, b)| a == *b)
    }

    pub(super) fn append(&mut self, first: StreamId, id: StreamId, pairs: &[(&[u8], &[u8])]) {
        let names: Vec<&[u8]> = pairs.iter().map(|(f, _)| *f).collect();
        let same = self.same_as_master(&names);
        self.data.push(if same { SAME_FIELDS } else { 0 });
        let ms_delta = id.ms - first.ms;
        put_varint(&mut self.data, ms_delta);
        put_varint(
            &mut self.data,
            if ms_delta == 0 {
                id.seq - first.seq
            } else {
                id.seq
            },
        );
        if !same {
            put_varint(&mut self.data, pairs.len() as u64);
        }
        for (f, v) in pairs {
            if !same {
                put_varint(&mut self.data, f.len() as u64);
                self.data.extend_from_slice(f);
            }
            put_varint(&mut self.data, v.len() as u64);
            self.data.extend_from_slice(v);
        }
        self.live += 1;
        self.last = id;
    }

    /// Decodes the entry at `at`; returns it and the offset of the next one.
    pub(super) fn header(&self, first: StreamId, at: usize) -> (Header, usize) {
        let data = &self.data;
        let flags = data.get(at).copied().unwrap_or(DELETED);
        let mut pos = at + 1;
        let ms_delta = get_varint(data, &mut pos);
        let seq = get_varint(data, &mut pos);
        let id = if ms_delta == 0 {
            StreamId::new(first.ms, first.seq.wrapping_add(seq))
        } else {
            StreamId::new(first.ms.wrapping_add(ms_delta), seq)
        };
        let same = flags & SAME_FIELDS != 0;
        let fields = if same {
            self.master_count()
        } else {
            usize::try_from(get_varint(data, &mut pos)).unwrap_or(0)
        };
        let body = pos;
        for _ in 0..fields {
            if !same {
                get_bytes(data, &mut pos);
            }
            get_bytes(data, &mut pos);
        }
        (
            Header {
                at,
                flags,
                id,
                fields,
                body,
            },
            pos,
        )
    }

    /// Offsets of every entry, in order (for reverse walks).
    pub(super) fn offsets(&self, first: StreamId) -> Vec<usize> {
        let mut v = Vec::with_capacity((self.live + self.deleted) as usize);
        let mut at = self.entries_at as usize;
        while at < self.data.len() {
            v.push(at);
            at = self.header(first, at).1;
        }
        v
    }

    pub(super) fn heap_size(&self) -> usize {
        self.data.capacity() + std::mem::size_of::<Node>()
    }
}
