//! Reading streams into replies: entry ranges (XRANGE, XREAD) and group deliveries
//! (XREADGROUP's new entries and a consumer's history), shared by commands and blocked clients.

use super::stream::{EntryRef, Stream, StreamId};
use crate::reply::{Aggregate, Out};

/// Writes one entry: `[id, [field, value, ...]]`.
pub fn write_entry(out: &mut Out, entry: &EntryRef<'_>) {
    out.array(2);
    write_id(out, entry.id);
    out.array(entry.len() * 2);
    for (field, value) in entry.fields() {
        out.bulk(field);
        out.bulk(value);
    }
}

/// Writes an ID as a bulk string.
pub fn write_id(out: &mut Out, id: StreamId) {
    let mut buf = Vec::with_capacity(24);
    id.write(&mut buf);
    out.bulk(&buf);
}

/// Writes the entries in `start..=end` (at most `count`, 0 for all) as an array; returns how
/// many.
pub fn write_range(
    out: &mut Out,
    stream: &Stream,
    start: StreamId,
    end: StreamId,
    count: usize,
    rev: bool,
) -> usize {
    let deferred = out.begin_deferred(Aggregate::Array);
    let mut n = 0;
    stream.walk(start, end, rev, |entry| {
        write_entry(out, &entry);
        n += 1;
        count == 0 || n < count
    });
    out.end_deferred(deferred, n);
    n
}

/// What an XREADGROUP asks of one stream.
#[derive(Debug, Clone, Copy)]
pub struct GroupRead<'a> {
    /// The group's name.
    pub group: &'a [u8],
    /// The reading consumer's name.
    pub consumer: &'a [u8],
    /// NOACK: deliver without recording the entries as pending.
    pub noack: bool,
    /// At most this many entries (0: all).
    pub count: usize,
    /// The time of the read in milliseconds since the epoch (delivery and seen times).
    pub now: i64,
}

/// Delivers the entries after `after` to a group's consumer (the `>` of XREADGROUP): writes them
/// as an array, advances the group's last ID and entries-read, and records them as pending
/// (unless NOACK). The group and consumer must exist. Returns how many were delivered.
pub fn deliver_new(
    out: &mut Out,
    stream: &mut Stream,
    after: StreamId,
    read: GroupRead<'_>,
) -> usize {
    let Some(start) = after.next() else {
        out.array(0);
        return 0;
    };
    let deferred = out.begin_deferred(Aggregate::Array);
    let mut ids = Vec::new();
    stream.walk(start, StreamId::MAX, false, |entry| {
        write_entry(out, &entry);
        ids.push(entry.id);
        read.count == 0 || ids.len() < read.count
    });
    out.end_deferred(deferred, ids.len());
    let Some((mut last_id, mut entries_read)) = stream
        .groups
        .get(read.group)
        .map(|g| (g.last_id, g.entries_read))
    else {
        return ids.len();
    };
    for &id in &ids {
        if id > last_id {
            if entries_read != -1 && !stream.range_has_tombstones(id, StreamId::MAX) {
                entries_read += 1;
            } else if stream.entries_added > 0 {
                entries_read = stream.estimate_distance(id).unwrap_or(-1);
            }
            last_id = id;
        }
    }
    if let Some(group) = stream.groups.get_mut(read.group) {
        group.last_id = last_id;
        group.entries_read = entries_read;
        if !read.noack {
            for &id in &ids {
                group.deliver(id, read.consumer, read.now);
            }
        }
    }
    ids.len()
}

/// Replays a consumer's pending entries from `start` (XREADGROUP with an ID): each still in the
/// stream is written and its delivery count bumped; a deleted one is written as `[id, nil]`.
/// Returns how many were written.
pub fn deliver_history(
    out: &mut Out,
    stream: &mut Stream,
    start: StreamId,
    read: GroupRead<'_>,
) -> usize {
    let pending: Vec<StreamId> = stream
        .groups
        .get(read.group)
        .and_then(|g| g.consumers.get(read.consumer))
        .map(|c| {
            c.pel
                .range(start..)
                .take(if read.count == 0 {
                    usize::MAX
                } else {
                    read.count
                })
                .copied()
                .collect()
        })
        .unwrap_or_default();
    out.array(pending.len());
    let mut present = Vec::with_capacity(pending.len());
    for &id in &pending {
        match stream.get(id) {
            Some(entry) => {
                write_entry(out, &entry);
                present.push(id);
            }
            None => {
                out.array(2);
                write_id(out, id);
                out.null_array();
            }
        }
    }
    if let Some(group) = stream.groups.get_mut(read.group) {
        for id in present {
            if let Some(nack) = group.pel.get_mut(&id) {
                nack.delivery_time = read.now;
                nack.delivery_count += 1;
            }
        }
    }
    pending.len()
}
