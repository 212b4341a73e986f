//! Lists stored in chunks: a row of `list_chunks` per grid cell of `CHUNK` positions, encoded
//! from memory at a flush and checked and rebuilt at load.

use std::collections::VecDeque;

use bytes::BytesMut;
use sluice_resp::engine::{Key, ListPart};

use crate::codec::RowWriter;

/// Positions per chunk. A push writes the chunk it lands in again (up to `CHUNK - 1`
/// neighbours besides the elements pushed), a pop the chunk it took a position from. 16 puts a
/// flush of 800 pushes in ~51 rows (`redis-benchmark -P 16 -t lpush` as fast as with 64: the
/// commit, not the rows, is then the cost), while a pop from a list of 4 KB elements rewrites
/// at most 60 KB (64: 252 KB, LPOP at one client 2.2 times slower than at 16). The migration
/// to version 4 groups the old rows by the same number; a list found on another grid is
/// written whole.
pub const CHUNK: i64 = 16;

/// The chunk holding stored position `pos`.
pub fn chunk_of(pos: i64) -> i64 {
    pos.div_euclid(CHUNK)
}

/// Copies the rows of a whole list, its first element at position 0; returns the rows.
pub fn encode_whole(buf: &mut BytesMut, db: i32, key: &[u8], list: &VecDeque<Key>) -> u64 {
    let mut rows = 0;
    let mut start = 0;
    while start < list.len() {
        let end = (start + CHUNK as usize).min(list.len());
        row(
            buf,
            db,
            key,
            start as i64,
            list.range(start..end).map(|k| k.as_slice()),
        );
        rows += 1;
        start = end;
    }
    rows
}

fn row<'i>(
    buf: &mut BytesMut,
    db: i32,
    key: &[u8],
    first_pos: i64,
    items: impl ExactSizeIterator<Item = &'i [u8]>,
) {
    RowWriter::start(buf, 5)
        .int4(db)
        .bytes(key)
        .int8(chunk_of(first_pos))
        .int8(first_pos)
        .bytea_array(items);
}

/// What a list written in part puts in a flush.
#[derive(Debug, Default)]
pub struct PartRows {
    /// Chunks `[lo, hi]` whose rows are deleted (only those that had rows).
    pub deletes: Vec<(i64, i64)>,
    /// Rows copied in.
    pub rows: u64,
    /// Where the list's first element is stored once this commits; `None`: where it was
    /// (nothing moved: only the expiry changed, and the part says nothing of positions).
    pub head: Option<i64>,
}

/// The chunks a list written in part changed: their rows deleted and copied again from the
/// elements the snapshot took of them (the engine took every element of those chunks, on
/// the same grid: `part.grid.base` is where the list's first element was stored).
pub fn encode_part(buf: &mut BytesMut, db: i32, key: &[u8], part: &ListPart) -> PartRows {
    if part.ranges.is_empty() {
        return PartRows::default();
    }
    let base = part.grid.base;
    // Chunks that held rows: those of the old positions [base, base + old_len).
    let old = (part.old_len > 0).then(|| {
        (
            chunk_of(base),
            chunk_of(base.saturating_add(part.old_len - 1)),
        )
    });
    let mut deletes: Vec<(i64, i64)> = Vec::with_capacity(2);
    for &(lo, hi) in &part.ranges {
        let Some((old_lo, old_hi)) = old else { break };
        let lo = chunk_of(base.saturating_add(lo)).max(old_lo);
        let hi = chunk_of(base.saturating_add(hi).saturating_sub(1)).min(old_hi);
        if lo <= hi {
            deletes.push((lo, hi));
        }
    }
    let mut rows = 0;
    let mut at = 0;
    let elements = &part.elements;
    while at < elements.len() {
        let first = base.saturating_add(elements[at].0);
        let chunk = chunk_of(first);
        let end = elements[at..]
            .iter()
            .position(|(p, _)| chunk_of(base.saturating_add(*p)) != chunk)
            .map_or(elements.len(), |n| at + n);
        row(
            buf,
            db,
            key,
            first,
            elements[at..end].iter().map(|(_, v)| v.as_slice()),
        );
        rows += 1;
        at = end;
    }
    PartRows {
        deletes,
        rows,
        head: Some(base.saturating_add(part.head_shift)),
    }
}

/// Checks the chunk rows of each list as they are read in `(db, key, chunk)` order: a list
/// whose chunks do not hold contiguous positions on the grid (rows written by hand, another
/// chunk size) is to be written whole.
#[derive(Debug, Default)]
pub struct ListCheck {
    /// The list being read: database, key, the position its next element must have.
    current: Option<(usize, Vec<u8>, i64)>,
    /// Whether the current list is out of shape.
    broken: bool,
}

/// What [`ListCheck::chunk`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Seen {
    /// The first chunk of a list, whose first element is stored at this position.
    First(i64),
    /// A further chunk in shape.
    Next,
    /// The list is out of shape (reported once per list).
    Broken,
    /// A further chunk of a list already reported.
    Ignored,
}

impl ListCheck {
    /// A chunk row of `count` elements from `first_pos` in chunk `chunk`.
    pub fn chunk(
        &mut self,
        db: usize,
        key: &[u8],
        chunk: i64,
        first_pos: i64,
        count: usize,
    ) -> Seen {
        let last = first_pos.saturating_add(count as i64 - 1);
        let in_shape = count > 0 && chunk_of(first_pos) == chunk && chunk_of(last) == chunk;
        let next = last.saturating_add(1);
        match &mut self.current {
            Some((d, k, expected)) if *d == db && k.as_slice() == key => {
                if self.broken {
                    return Seen::Ignored;
                }
                if !in_shape || *expected != first_pos {
                    self.broken = true;
                    return Seen::Broken;
                }
                *expected = next;
                Seen::Next
            }
            _ => {
                self.current = Some((db, key.to_vec(), next));
                self.broken = !in_shape;
                if self.broken {
                    Seen::Broken
                } else {
                    Seen::First(first_pos)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_follow_the_grid_below_zero_too() {
        assert_eq!(chunk_of(0), 0);
        assert_eq!(chunk_of(CHUNK - 1), 0);
        assert_eq!(chunk_of(CHUNK), 1);
        assert_eq!(chunk_of(-1), -1);
        assert_eq!(chunk_of(-CHUNK), -1);
        assert_eq!(chunk_of(-CHUNK - 1), -2);
    }

    #[test]
    fn a_list_in_shape_and_lists_out_of_shape() {
        let mut check = ListCheck::default();
        assert_eq!(check.chunk(0, b"l", -1, -3, 3), Seen::First(-3));
        assert_eq!(check.chunk(0, b"l", 0, 0, CHUNK as usize), Seen::Next);
        assert_eq!(check.chunk(0, b"l", 1, CHUNK, 1), Seen::Next);
        // A gap between chunks.
        assert_eq!(check.chunk(0, b"g", 0, 0, 2), Seen::First(0));
        assert_eq!(check.chunk(0, b"g", 1, CHUNK + 1, 2), Seen::Broken);
        assert_eq!(check.chunk(0, b"g", 2, 2 * CHUNK, 2), Seen::Ignored);
        // Elements past their chunk's end, a chunk number off the grid, an empty chunk.
        assert_eq!(check.chunk(0, b"p", 0, CHUNK - 1, 2), Seen::Broken);
        assert_eq!(check.chunk(1, b"p", 3, 0, 2), Seen::Broken);
        assert_eq!(check.chunk(2, b"p", 0, 0, 0), Seen::Broken);
        assert_eq!(check.chunk(2, b"q", 0, 5, 1), Seen::First(5));
    }
}
