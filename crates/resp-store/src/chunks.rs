//! Lists stored in chunks: a row of `list_chunks` per cell of the list's own grid, encoded
//! from memory at a flush and checked and rebuilt at load.

use std::collections::VecDeque;

use bytes::BytesMut;
use sluice_resp::engine::{Key, ListGrid, ListPart};

use crate::codec::RowWriter;

/// Positions per chunk of a list of small elements. A push writes the chunk it lands in again
/// (up to `SMALL_GRID - 1` neighbours besides the elements pushed), a pop the chunk it took a
/// position from. 16 puts a flush of 800 pushes in ~51 rows (`redis-benchmark -P 16 -t lpush`
/// as fast as with 64: the commit, not the rows, is then the cost).
pub const SMALL_GRID: i16 = 16;

/// The mean element size (bytes) up to which a list is stored in chunks of [`SMALL_GRID`];
/// a list of larger elements gets one position per row, as a neighbour rewritten costs more
/// than a row: with 4 KB elements a chunk of 16 made RPUSH at 50 clients 2x and LPOP at one
/// client 2.5x slower than one row per element. Measured under `always` (10,000 RPUSH at 50
/// clients, then LPOP at 1 and 50), chunks of 16 against a row per element were about even at
/// 128 and 256 bytes (one run each way at 256) and lost from 384 bytes on (512: 0.78 / 0.83 /
/// 0.65): 128 keeps a margin below where they start losing.
pub const SMALL_MEAN: usize = 128;

/// The grid a list written whole is stored on, from its elements: chunks of [`SMALL_GRID`]
/// when their mean size is at most [`SMALL_MEAN`], else 1. The migration to version 4 picks
/// the same from `avg(octet_length(value))`.
pub fn grid_for(list: &VecDeque<Key>) -> i16 {
    let bytes: usize = list.iter().map(|k| k.len()).sum();
    if bytes <= SMALL_MEAN.saturating_mul(list.len()) {
        SMALL_GRID
    } else {
        1
    }
}

/// What the writer remembers of a list on `grid` whose first element is stored at `base`: a
/// list on chunks whose elements outgrow [`SMALL_MEAN`] is written whole again (the engine
/// decides it from the whole list's mean, see `sluice_resp::engine::dirty`), so that its
/// grid follows its elements from small to large. A list on a grid of 1 whose elements became
/// small stays on it until a whole write picks again: one row per element costs a push or pop
/// its own row and no neighbour (version 3's layout, within noise of chunks for elements of
/// 64 bytes and more under `always`), where chunks of large elements cost 2x; and a list
/// whose mean hovers near the threshold does not go back and forth, each move a whole rewrite.
pub fn head(grid: i16, base: i64) -> ListGrid {
    ListGrid {
        chunk: i64::from(grid),
        base,
        large_mean: Some(SMALL_MEAN),
    }
}

/// The chunk holding stored position `pos` on a grid of `grid` positions (at least 1).
pub fn chunk_of(pos: i64, grid: i16) -> i64 {
    pos.div_euclid(i64::from(grid.max(1)))
}

/// Copies the rows of a whole list, its first element at position 0, on the grid its
/// elements call for; returns the rows and the grid.
pub fn encode_whole(buf: &mut BytesMut, db: i32, key: &[u8], list: &VecDeque<Key>) -> (u64, i16) {
    let grid = grid_for(list);
    let mut rows = 0;
    let mut start = 0;
    while start < list.len() {
        let end = (start + grid as usize).min(list.len());
        row(
            buf,
            db,
            key,
            grid,
            start as i64,
            list.range(start..end).map(|k| k.as_slice()),
        );
        rows += 1;
        start = end;
    }
    (rows, grid)
}

fn row<'i>(
    buf: &mut BytesMut,
    db: i32,
    key: &[u8],
    grid: i16,
    first_pos: i64,
    items: impl ExactSizeIterator<Item = &'i [u8]>,
) {
    RowWriter::start(buf, 6)
        .int4(db)
        .bytes(key)
        .int8(chunk_of(first_pos, grid))
        .int8(first_pos)
        .bytea_array(items)
        .int2(grid);
}

/// What a list written in part puts in a flush.
#[derive(Debug, Default)]
pub struct PartRows {
    /// Chunks `[lo, hi]` whose rows are deleted (only those that had rows).
    pub deletes: Vec<(i64, i64)>,
    /// Rows copied in.
    pub rows: u64,
    /// The list's grid, its first element's stored position once this commits; `None`: as
    /// it was (nothing moved: only the expiry changed, and the part says nothing of positions).
    pub head: Option<ListGrid>,
}

/// The chunks a list written in part changed: their rows deleted and copied again from the
/// elements the snapshot took of them (the engine took every element of those chunks, on
/// the list's grid: `part.grid.base` is where the list's first element was stored). The grid
/// came from what the writer knows of the list's rows, which all carry it (an int2).
pub fn encode_part(buf: &mut BytesMut, db: i32, key: &[u8], part: &ListPart) -> PartRows {
    if part.ranges.is_empty() {
        return PartRows::default();
    }
    let base = part.grid.base;
    let grid = i16::try_from(part.grid.chunk.max(1)).unwrap_or(i16::MAX);
    let chunk_of = |pos| chunk_of(pos, grid);
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
            grid,
            first,
            elements[at..end].iter().map(|(_, v)| v.as_slice()),
        );
        rows += 1;
        at = end;
    }
    PartRows {
        deletes,
        rows,
        head: Some(head(grid, base.saturating_add(part.head_shift))),
    }
}

/// Checks the chunk rows of each list as they are read in `(db, key, chunk)` order: a list
/// whose chunks do not hold contiguous positions on one grid (rows written by hand, rows of
/// different grids, a grid below 1) is to be written whole.
#[derive(Debug, Default)]
pub struct ListCheck {
    /// The list being read: database, key, its grid, the position its next element must have.
    current: Option<(usize, Vec<u8>, i16, i64)>,
    /// Whether the current list is out of shape.
    broken: bool,
}

/// What [`ListCheck::chunk`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Seen {
    /// The first chunk of a list: its grid and where its first element is stored.
    First(ListGrid),
    /// A further chunk in shape.
    Next,
    /// The list is out of shape (reported once per list).
    Broken,
    /// A further chunk of a list already reported.
    Ignored,
}

impl ListCheck {
    /// A chunk row of `count` elements from `first_pos` in chunk `chunk` of a grid of `grid`.
    pub fn chunk(
        &mut self,
        db: usize,
        key: &[u8],
        (chunk, grid): (i64, i16),
        first_pos: i64,
        count: usize,
    ) -> Seen {
        let last = first_pos.saturating_add(count as i64 - 1);
        let in_shape = grid >= 1
            && count > 0
            && chunk_of(first_pos, grid) == chunk
            && chunk_of(last, grid) == chunk;
        let next = last.saturating_add(1);
        match &mut self.current {
            Some((d, k, g, expected)) if *d == db && k.as_slice() == key => {
                if self.broken {
                    return Seen::Ignored;
                }
                if !in_shape || *g != grid || *expected != first_pos {
                    self.broken = true;
                    return Seen::Broken;
                }
                *expected = next;
                Seen::Next
            }
            _ => {
                self.current = Some((db, key.to_vec(), grid, next));
                self.broken = !in_shape;
                if self.broken {
                    Seen::Broken
                } else {
                    Seen::First(head(grid, first_pos))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: i16 = SMALL_GRID;
    const C: i64 = SMALL_GRID as i64;

    #[test]
    fn chunks_follow_the_grid_below_zero_too() {
        assert_eq!(chunk_of(0, G), 0);
        assert_eq!(chunk_of(C - 1, G), 0);
        assert_eq!(chunk_of(C, G), 1);
        assert_eq!(chunk_of(-1, G), -1);
        assert_eq!(chunk_of(-C, G), -1);
        assert_eq!(chunk_of(-C - 1, G), -2);
        assert_eq!(chunk_of(-7, 1), -7);
        assert_eq!(chunk_of(5, 0), 5, "a grid below 1 counts as 1");
    }

    #[test]
    fn small_elements_get_chunks_large_ones_a_row_each() {
        let list = |sizes: &[usize]| -> VecDeque<Key> {
            sizes
                .iter()
                .map(|&n| Key::from(&vec![b'x'; n][..]))
                .collect()
        };
        assert_eq!(grid_for(&list(&[3, 3, 3])), SMALL_GRID);
        assert_eq!(grid_for(&list(&[SMALL_MEAN])), SMALL_GRID);
        assert_eq!(grid_for(&list(&[SMALL_MEAN + 1])), 1);
        // The mean decides: one large element among small ones.
        assert_eq!(grid_for(&list(&[1000, 10, 10, 10])), 1);
        assert_eq!(grid_for(&list(&[400, 10, 10, 10])), SMALL_GRID);
        assert_eq!(grid_for(&list(&[4096; 3])), 1);
        assert_eq!(grid_for(&VecDeque::new()), SMALL_GRID);
    }

    #[test]
    fn a_list_in_shape_and_lists_out_of_shape() {
        let mut check = ListCheck::default();
        let first = |chunk, base| Seen::First(head(i16::try_from(chunk).unwrap(), base));
        assert_eq!(check.chunk(0, b"l", (-1, G), -3, 3), first(C, -3));
        assert_eq!(check.chunk(0, b"l", (0, G), 0, C as usize), Seen::Next);
        assert_eq!(check.chunk(0, b"l", (1, G), C, 1), Seen::Next);
        // A gap between chunks.
        assert_eq!(check.chunk(0, b"g", (0, G), 0, 2), first(C, 0));
        assert_eq!(check.chunk(0, b"g", (1, G), C + 1, 2), Seen::Broken);
        assert_eq!(check.chunk(0, b"g", (2, G), 2 * C, 2), Seen::Ignored);
        // Elements past their chunk's end, a chunk number off the grid, an empty chunk.
        assert_eq!(check.chunk(0, b"p", (0, G), C - 1, 2), Seen::Broken);
        assert_eq!(check.chunk(1, b"p", (3, G), 0, 2), Seen::Broken);
        assert_eq!(check.chunk(2, b"p", (0, G), 0, 0), Seen::Broken);
        assert_eq!(check.chunk(2, b"q", (0, G), 5, 1), first(C, 5));
        // One position per row.
        assert_eq!(check.chunk(2, b"r", (-2, 1), -2, 1), first(1, -2));
        assert_eq!(check.chunk(2, b"r", (-1, 1), -1, 1), Seen::Next);
        assert_eq!(check.chunk(2, b"r", (0, 1), 0, 1), Seen::Next);
        // Two elements in a row of grid 1; rows of two grids; a grid of 0.
        assert_eq!(check.chunk(2, b"s", (0, 1), 0, 2), Seen::Broken);
        assert_eq!(check.chunk(2, b"t", (0, 1), 0, 1), first(1, 0));
        assert_eq!(check.chunk(2, b"t", (0, G), 1, 1), Seen::Broken);
        assert_eq!(check.chunk(2, b"u", (0, 0), 0, 1), Seen::Broken);
        assert_eq!(check.chunk(2, b"v", (0, -16), 0, 1), Seen::Broken);
    }
}
