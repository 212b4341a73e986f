//! Stream values: entries packed into delta-encoded byte nodes keyed by their first ID (Redis's
//! radix tree of listpacks, as a B-tree of compact nodes), and the stream's counters.
//!
//! A node holds up to `stream-node-max-entries` entries (deleted ones included) in one byte
//! buffer: a header with the "master" field names (those of the node's first entry), then per
//! entry a flags byte, the ID as varint deltas from the node's first ID, and the values (the
//! field names too when they differ from the master's). A deletion flips a flag bit in place;
//! a node goes once its last live entry does.

use std::collections::BTreeMap;

use super::Key;
pub use super::stream_group::{Consumer, Group, Nack};
use super::stream_node::{DELETED, Header, Node, SAME_FIELDS, get_bytes};

/// A stream entry ID: milliseconds and a sequence number.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId {
    /// Milliseconds part, usually the Unix time the entry was added.
    pub ms: u64,
    /// Sequence number among the entries of the same millisecond.
    pub seq: u64,
}

impl StreamId {
    /// The smallest ID, `0-0` (XRANGE's `-`).
    pub const MIN: StreamId = StreamId { ms: 0, seq: 0 };
    /// The largest ID (XRANGE's `+`).
    pub const MAX: StreamId = StreamId {
        ms: u64::MAX,
        seq: u64::MAX,
    };

    /// The ID `ms-seq`.
    pub const fn new(ms: u64, seq: u64) -> Self {
        Self { ms, seq }
    }

    /// True for `0-0`, which no entry may have.
    pub fn is_zero(&self) -> bool {
        self.ms == 0 && self.seq == 0
    }

    /// The next ID, or None past the last possible one.
    pub fn next(self) -> Option<StreamId> {
        if self.seq == u64::MAX {
            if self.ms == u64::MAX {
                None
            } else {
                Some(StreamId::new(self.ms + 1, 0))
            }
        } else {
            Some(StreamId::new(self.ms, self.seq + 1))
        }
    }

    /// The previous ID, or None before 0-0.
    pub fn prev(self) -> Option<StreamId> {
        if self.seq == 0 {
            if self.ms == 0 {
                None
            } else {
                Some(StreamId::new(self.ms - 1, u64::MAX))
            }
        } else {
            Some(StreamId::new(self.ms, self.seq - 1))
        }
    }

    /// `ms-seq` as Redis writes it.
    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(itoa::Buffer::new().format(self.ms).as_bytes());
        out.push(b'-');
        out.extend_from_slice(itoa::Buffer::new().format(self.seq).as_bytes());
    }

    /// `ms-seq` as an owned byte string.
    pub fn to_bytes(self) -> Vec<u8> {
        let mut v = Vec::with_capacity(24);
        self.write(&mut v);
        v
    }
}

/// Why an append failed, worded by the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppendError {
    /// The ID is not above the stream's last ID.
    NotGreater,
    /// `ms-*` with the last ID at `ms-18446744073709551615` (Redis words it as "too large").
    SeqExhausted,
}

/// How XADD names the new entry's ID.
#[derive(Debug, Clone, Copy)]
pub enum IdSpec {
    /// `*`: from the clock.
    Auto,
    /// `ms-*`: the sequence is generated.
    Ms(u64),
    /// `ms-seq`.
    Exact(StreamId),
}

/// Node size limits (stream-node-max-bytes and stream-node-max-entries; 0 means no limit).
#[derive(Debug, Clone, Copy)]
pub struct NodeLimits {
    /// Most bytes of entry data in one node (stream-node-max-bytes).
    pub max_bytes: usize,
    /// Most entries in one node (stream-node-max-entries).
    pub max_entries: usize,
}

impl Default for NodeLimits {
    fn default() -> Self {
        Self {
            max_bytes: 4096,
            max_entries: 100,
        }
    }
}

/// A trimming strategy of XADD/XTRIM.
#[derive(Debug, Clone, Copy)]
pub enum Trim {
    /// MAXLEN: keep at most this many entries, the newest.
    MaxLen(u64),
    /// MINID: remove the entries below this ID.
    MinId(StreamId),
}

/// A live entry seen while walking a stream.
#[derive(Debug, Clone, Copy)]
pub struct EntryRef<'a> {
    /// The entry's ID.
    pub id: StreamId,
    node: &'a Node,
    header: Header,
}

impl<'a> EntryRef<'a> {
    /// Number of field/value pairs.
    pub fn len(&self) -> usize {
        self.header.fields
    }

    /// True when the entry has no field/value pairs (XADD always adds at least one).
    pub fn is_empty(&self) -> bool {
        self.header.fields == 0
    }

    /// The field/value pairs, in the order they were added.
    pub fn fields(&self) -> impl Iterator<Item = (&'a [u8], &'a [u8])> + 'a {
        let data: &'a [u8] = &self.node.data;
        let same = self.header.flags & SAME_FIELDS != 0;
        let mut pos = self.header.body;
        let mut names = self.node.master_fields();
        (0..self.header.fields).map(move |_| {
            let name = if same {
                names.next().unwrap_or(&[])
            } else {
                get_bytes(data, &mut pos)
            };
            (name, get_bytes(data, &mut pos))
        })
    }
}

/// A stream.
#[derive(Debug, Clone, Default)]
pub struct Stream {
    nodes: BTreeMap<StreamId, Node>,
    /// Live entries.
    pub length: u64,
    /// The highest ID given out or set by XSETID, even if that entry is deleted: new IDs must
    /// be above it.
    pub last_id: StreamId,
    /// The first live entry's ID (0-0 when empty).
    pub first_id: StreamId,
    /// The highest ID ever deleted (XINFO max-deleted-entry-id).
    pub max_deleted_id: StreamId,
    /// Entries ever added (XINFO entries-added).
    pub entries_added: u64,
    /// Consumer groups by name.
    pub groups: BTreeMap<Key, Group>,
    /// The last live entry's ID (0-0 when empty), kept so readers need not walk back to it.
    last_live: StreamId,
}

impl Stream {
    /// Number of live entries.
    pub fn len(&self) -> u64 {
        self.length
    }

    /// True when no live entries remain (the key stays, as in Redis).
    pub fn is_empty(&self) -> bool {
        self.length == 0
    }

    /// Number of nodes (XINFO radix-tree-keys).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// The ID the next append would get, or the error it would meet.
    pub fn next_id(&self, spec: IdSpec, now_ms: u64) -> Result<StreamId, AppendError> {
        let id = match spec {
            IdSpec::Auto => {
                if now_ms > self.last_id.ms {
                    StreamId::new(now_ms, 0)
                } else {
                    self.last_id.next().ok_or(AppendError::NotGreater)?
                }
            }
            IdSpec::Ms(ms) => {
                if ms == self.last_id.ms {
                    if self.last_id.seq == u64::MAX {
                        return Err(AppendError::SeqExhausted);
                    }
                    StreamId::new(ms, self.last_id.seq + 1)
                } else {
                    StreamId::new(ms, 0)
                }
            }
            IdSpec::Exact(id) => id,
        };
        if id <= self.last_id {
            return Err(AppendError::NotGreater);
        }
        Ok(id)
    }

    /// Appends an entry with the ID `spec` gives.
    pub fn append(
        &mut self,
        spec: IdSpec,
        pairs: &[(&[u8], &[u8])],
        limits: NodeLimits,
        now_ms: u64,
    ) -> Result<StreamId, AppendError> {
        let id = self.next_id(spec, now_ms)?;
        let payload: usize = pairs.iter().map(|(f, v)| f.len() + v.len()).sum();
        let max_bytes = if limits.max_bytes == 0 {
            1 << 30
        } else {
            limits.max_bytes
        };
        let tail_fits = self.nodes.last_key_value().is_some_and(|(_, node)| {
            node.data.len() + payload < max_bytes
                && (limits.max_entries == 0
                    || ((node.live + node.deleted) as usize) < limits.max_entries)
        });
        if !tail_fits {
            if let Some(mut tail) = self.nodes.last_entry() {
                tail.get_mut().data.shrink_to_fit();
            }
            let names: Vec<&[u8]> = pairs.iter().map(|(f, _)| *f).collect();
            self.nodes.insert(id, Node::new(id, &names));
        }
        if let Some(mut tail) = self.nodes.last_entry() {
            let first = *tail.key();
            tail.get_mut().append(first, id, pairs);
        }
        self.length += 1;
        self.entries_added += 1;
        self.last_id = id;
        self.last_live = id;
        if self.length == 1 {
            self.first_id = id;
        }
        Ok(id)
    }

    /// Calls `visit` for each live entry with an ID in `start..=end`, ascending (descending when
    /// `rev`), until it returns false.
    pub fn walk<'a>(
        &'a self,
        start: StreamId,
        end: StreamId,
        rev: bool,
        mut visit: impl FnMut(EntryRef<'a>) -> bool,
    ) {
        if start > end {
            return;
        }
        if !rev {
            // The node holding `start` is the last one whose first ID is <= start.
            let from = self
                .nodes
                .range(..=start)
                .next_back()
                .map_or(StreamId::MIN, |(k, _)| *k);
            for (first, node) in self.nodes.range(from..) {
                if *first > end {
                    return;
                }
                if node.last < start {
                    continue;
                }
                let mut at = node.entries_at as usize;
                while at < node.data.len() {
                    let (header, next) = node.header(*first, at);
                    at = next;
                    if header.flags & DELETED != 0 || header.id < start {
                        continue;
                    }
                    if header.id > end {
                        return;
                    }
                    let entry = EntryRef {
                        id: header.id,
                        node,
                        header,
                    };
                    if !visit(entry) {
                        return;
                    }
                }
            }
        } else {
            for (first, node) in self.nodes.range(..=end).rev() {
                if node.last < start {
                    return;
                }
                for at in node.offsets(*first).into_iter().rev() {
                    let (header, _) = node.header(*first, at);
                    if header.flags & DELETED != 0 || header.id > end {
                        continue;
                    }
                    if header.id < start {
                        return;
                    }
                    let entry = EntryRef {
                        id: header.id,
                        node,
                        header,
                    };
                    if !visit(entry) {
                        return;
                    }
                }
            }
        }
    }

    /// The live entry with ID `id`.
    pub fn get(&self, id: StreamId) -> Option<EntryRef<'_>> {
        let mut found = None;
        self.walk(id, id, false, |e| {
            found = Some(e);
            false
        });
        found
    }

    /// True when a live entry has this ID.
    pub fn contains(&self, id: StreamId) -> bool {
        self.get(id).is_some()
    }

    /// The last live entry's ID, without a walk.
    pub fn last_live_id(&self) -> Option<StreamId> {
        (self.length > 0).then_some(self.last_live)
    }

    /// The first (or last, when `last`) live entry's ID.
    pub fn edge_id(&self, last: bool) -> Option<StreamId> {
        let mut found = None;
        self.walk(StreamId::MIN, StreamId::MAX, last, |e| {
            found = Some(e.id);
            false
        });
        found
    }

    /// Marks entry `id` deleted; false if there is no such live entry.
    pub fn delete(&mut self, id: StreamId) -> bool {
        let Some((&first, node)) = self.nodes.range_mut(..=id).next_back() else {
            return false;
        };
        let mut at = node.entries_at as usize;
        while at < node.data.len() {
            let (header, next) = node.header(first, at);
            if header.id == id {
                if header.flags & DELETED != 0 {
                    return false;
                }
                node.live -= 1;
                node.deleted += 1;
                if node.live == 0 {
                    self.nodes.remove(&first);
                } else if let Some(flags) = node.data.get_mut(header.at) {
                    *flags |= DELETED;
                }
                self.length -= 1;
                return true;
            }
            if header.id > id {
                return false;
            }
            at = next;
        }
        false
    }

    /// XDEL: deletes the given IDs, keeping first_id and max_deleted_id; returns how many went.
    pub fn delete_ids(&mut self, ids: &[StreamId]) -> u64 {
        let mut deleted = 0;
        let mut first_gone = false;
        let mut last_gone = false;
        for &id in ids {
            if self.delete(id) {
                if id == self.first_id {
                    first_gone = true;
                }
                if id == self.last_live {
                    last_gone = true;
                }
                if id > self.max_deleted_id {
                    self.max_deleted_id = id;
                }
                deleted += 1;
            }
        }
        if deleted > 0 {
            if self.length == 0 {
                self.first_id = StreamId::MIN;
                self.last_live = StreamId::MIN;
            } else {
                if first_gone {
                    self.first_id = self.edge_id(false).unwrap_or_default();
                }
                if last_gone {
                    self.last_live = self.edge_id(true).unwrap_or_default();
                }
            }
        }
        deleted
    }

    /// Trims from the head (XTRIM, XADD MAXLEN/MINID); `approx` removes whole nodes only, `limit`
    /// (0: none) caps the entries removed. Returns how many were removed.
    pub fn trim(&mut self, trim: Trim, approx: bool, limit: u64) -> u64 {
        let mut deleted = 0u64;
        while let Some(mut head) = self.nodes.first_entry() {
            if let Trim::MaxLen(max) = trim
                && self.length <= max
            {
                break;
            }
            let first = *head.key();
            let node = head.get_mut();
            let entries = u64::from(node.live);
            if limit != 0 && deleted + entries > limit {
                break;
            }
            let whole = match trim {
                Trim::MaxLen(max) => self.length - entries >= max,
                Trim::MinId(min) => node.last < min,
            };
            if whole {
                head.remove();
                self.length -= entries;
                deleted += entries;
                continue;
            }
            if approx {
                break;
            }
            let mut at = node.entries_at as usize;
            let mut removed_here = 0u32;
            while at < node.data.len() {
                let (header, next) = node.header(first, at);
                let stop = match trim {
                    Trim::MaxLen(max) => self.length <= max,
                    Trim::MinId(min) => header.id >= min,
                };
                if stop {
                    break;
                }
                if header.flags & DELETED == 0 {
                    if let Some(flags) = node.data.get_mut(header.at) {
                        *flags |= DELETED;
                    }
                    removed_here += 1;
                    self.length -= 1;
                }
                at = next;
            }
            node.live -= removed_here;
            node.deleted += removed_here;
            deleted += u64::from(removed_here);
            if node.live == 0 {
                head.remove();
            }
            break;
        }
        if self.length == 0 {
            self.first_id = StreamId::MIN;
            self.last_live = StreamId::MIN;
        } else if deleted > 0 {
            self.first_id = self.edge_id(false).unwrap_or_default();
        }
        deleted
    }

    /// Whether entries between `start` and `end` may have been deleted (so counting entries by
    /// IDs is unreliable): Redis's streamRangeHasTombstones.
    pub fn range_has_tombstones(&self, start: StreamId, end: StreamId) -> bool {
        if self.length == 0 || self.max_deleted_id.is_zero() {
            return false;
        }
        if self.first_id > self.max_deleted_id {
            return false;
        }
        start <= self.max_deleted_id && self.max_deleted_id <= end
    }

    /// How many entries were added up to `id` (the group's entries-read), if it can be known.
    pub fn estimate_distance(&self, id: StreamId) -> Option<i64> {
        let added = i64::try_from(self.entries_added).unwrap_or(i64::MAX);
        if self.entries_added == 0 {
            return Some(0);
        }
        if self.length == 0 && id <= self.last_id {
            return Some(added);
        }
        if id == self.last_id {
            return Some(added);
        }
        if id > self.last_id {
            return None;
        }
        let length = i64::try_from(self.length).unwrap_or(i64::MAX);
        if self.max_deleted_id.is_zero() || self.max_deleted_id < self.first_id {
            if id < self.first_id {
                return Some(added - length);
            }
            if id == self.first_id {
                return Some(added - length + 1);
            }
        }
        None
    }

    /// A group's lag (entries not yet delivered to it), if it can be known.
    pub fn group_lag(&self, group: &Group) -> Option<i64> {
        let added = i64::try_from(self.entries_added).unwrap_or(i64::MAX);
        if self.entries_added == 0 {
            return Some(0);
        }
        if group.entries_read >= 0 && !self.range_has_tombstones(group.last_id, StreamId::MAX) {
            return Some(added - group.entries_read);
        }
        self.estimate_distance(group.last_id)
            .map(|read| added - read)
    }

    /// Bytes held by the stream's nodes and groups (MEMORY USAGE, INFO used_memory).
    pub fn heap_size(&self) -> usize {
        // A B-tree entry costs its key and value plus about a third of slack in its node.
        let nodes: usize = self
            .nodes
            .values()
            .map(|n| n.heap_size() + std::mem::size_of::<StreamId>() + 24)
            .sum();
        let groups: usize = self
            .groups
            .iter()
            .map(|(k, g)| k.len() + g.heap_size())
            .sum();
        std::mem::size_of::<Stream>() + nodes + groups
    }

    /// [`Stream::heap_size`] estimated from the last nodes and groups (the first ones are
    /// full like them), in constant time: memory accounting measures after every XADD.
    pub fn approx_heap_size(&self) -> usize {
        const SAMPLED: usize = 4;
        let per_node = |n: &Node| n.heap_size() + std::mem::size_of::<StreamId>() + 24;
        let count = self.nodes.len();
        let sampled: usize = self.nodes.values().rev().take(SAMPLED).map(per_node).sum();
        let nodes = sampled * count / SAMPLED.min(count).max(1);
        let groups: usize = self
            .groups
            .iter()
            .take(SAMPLED)
            .map(|(k, g)| k.len() + g.heap_size())
            .sum::<usize>()
            * self.groups.len()
            / SAMPLED.min(self.groups.len()).max(1);
        std::mem::size_of::<Stream>() + nodes + groups
    }

    /// The encoding name OBJECT ENCODING reports.
    pub fn encoding_name(&self) -> &'static str {
        "stream"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ids(s: &Stream, start: StreamId, end: StreamId, rev: bool) -> Vec<StreamId> {
        let mut v = Vec::new();
        s.walk(start, end, rev, |e| {
            v.push(e.id);
            true
        });
        v
    }

    #[test]
    fn fields_round_trip_with_and_without_master_fields() {
        let mut s = Stream::default();
        let limits = NodeLimits::default();
        s.append(
            IdSpec::Exact(StreamId::new(1, 0)),
            &[(b"a", b"1"), (b"b", b"2")],
            limits,
            0,
        )
        .unwrap();
        s.append(
            IdSpec::Exact(StreamId::new(1, 5)),
            &[(b"a", b"3"), (b"b", b"4")],
            limits,
            0,
        )
        .unwrap();
        s.append(IdSpec::Ms(1), &[(b"x", b"")], limits, 0).unwrap();
        let mut seen = Vec::new();
        s.walk(StreamId::MIN, StreamId::MAX, false, |e| {
            let f: Vec<(Vec<u8>, Vec<u8>)> =
                e.fields().map(|(a, b)| (a.to_vec(), b.to_vec())).collect();
            seen.push((e.id, f));
            true
        });
        assert_eq!(seen.len(), 3);
        assert_eq!(seen[1].0, StreamId::new(1, 5));
        assert_eq!(seen[1].1[1], (b"b".to_vec(), b"4".to_vec()));
        assert_eq!(seen[2].0, StreamId::new(1, 6));
        assert_eq!(seen[2].1, vec![(b"x".to_vec(), Vec::new())]);
        assert_eq!(
            s.append(
                IdSpec::Exact(StreamId::new(1, 6)),
                &[(b"a", b"1")],
                limits,
                0
            ),
            Err(AppendError::NotGreater)
        );
    }

    proptest! {
        /// Appends, deletions, trims and range walks agree with a sorted vector.
        #[test]
        fn behaves_like_a_sorted_vector(
            steps in prop::collection::vec((0u8..4, 0u64..50, 0u64..4), 1..300),
            max_entries in 1usize..6,
            lo in 0u64..60, hi in 0u64..60,
        ) {
            let limits = NodeLimits { max_bytes: 4096, max_entries };
            let mut s = Stream::default();
            let mut model: Vec<StreamId> = Vec::new();
            let mut ms = 0u64;
            for (op, a, b) in steps {
                match op {
                    0 | 1 => {
                        ms += a % 3;
                        let id = s.append(IdSpec::Ms(ms), &[(b"f", b"v")], limits, 0).unwrap();
                        model.push(id);
                    }
                    2 => {
                        if let Some(&id) = model.get(a as usize) {
                            prop_assert!(s.delete_ids(&[id]) == 1);
                            model.retain(|x| *x != id);
                        }
                    }
                    _ => {
                        let before = s.len();
                        let removed = s.trim(Trim::MaxLen(a), b == 0, 0);
                        prop_assert_eq!(before - removed, s.len());
                        let keep = s.len() as usize;
                        model.drain(..model.len() - keep);
                    }
                }
                prop_assert_eq!(s.len() as usize, model.len());
            }
            let (start, end) = (StreamId::new(lo.min(hi), 0), StreamId::new(lo.max(hi), u64::MAX));
            let want: Vec<StreamId> = model.iter().copied().filter(|id| *id >= start && *id <= end).collect();
            prop_assert_eq!(ids(&s, start, end, false), want.clone());
            let mut rev = want;
            rev.reverse();
            prop_assert_eq!(ids(&s, start, end, true), rev);
            prop_assert_eq!(s.first_id, model.first().copied().unwrap_or_default());
            prop_assert_eq!(s.last_live_id(), model.last().copied());
            prop_assert_eq!(s.edge_id(true), model.last().copied());
        }
    }
}
