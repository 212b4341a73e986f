//! How a sink groups a list's positions in chunks, and when a list on chunks has outgrown them.

use std::collections::VecDeque;

use super::super::Key;

/// How a sink groups list positions: in chunks of `chunk` consecutive positions
/// (`pos.div_euclid(chunk)`), counted from `base`, the stored position of the element that
/// was first at the last snapshot. `chunk` 1 is one element per row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListGrid {
    /// Positions per chunk (at least 1).
    pub chunk: i64,
    /// Where the list's first element was stored at the last snapshot.
    pub base: i64,
    /// The mean element size (bytes) past which the sink would store the list one position
    /// per row were it written whole; a list on chunks of more than one position whose
    /// elements grew past it is written whole instead of in part (see `saved_list`).
    /// `None`: the grid is kept whatever the elements.
    pub large_mean: Option<usize>,
}

impl Default for ListGrid {
    fn default() -> Self {
        Self {
            chunk: 1,
            base: 0,
            large_mean: None,
        }
    }
}

impl ListGrid {
    /// The chunk holding stored position `pos`.
    pub fn chunk_of(&self, pos: i64) -> i64 {
        pos.div_euclid(self.chunk.max(1))
    }

    /// Relative positions `[lo, hi)` (non-empty) widened to the whole chunks they touch.
    pub(super) fn widen(&self, (lo, hi): (i64, i64)) -> (i64, i64) {
        let c = self.chunk.max(1);
        let first = self.chunk_of(self.base.saturating_add(lo));
        let last = self.chunk_of(self.base.saturating_add(hi).saturating_sub(1));
        (
            first.saturating_mul(c).saturating_sub(self.base),
            last.saturating_add(1)
                .saturating_mul(c)
                .saturating_sub(self.base),
        )
    }
}

/// Lists up to this long are measured whole whenever the chunks a flush rewrites look large
/// (a few microseconds under the store lock); longer ones are first estimated.
const MEASURED_LEN: usize = 4096;
/// Elements read, evenly spaced, to estimate the mean of a longer list.
const SAMPLED: usize = 64;

/// Whether a list on chunks came to hold elements of a mean size above `mean`, as the sink
/// would find writing it whole, given `rewritten`, the elements of the chunks this flush
/// rewrites.
///
/// The mean of the whole list decides, as at a whole write: a list of a million small
/// elements pushed one large element keeps its chunks (writing it whole would pick them
/// again, at a cost of a million elements per flush), where a list of 100 small ones pushed
/// four of 4 KB moves to a row per element, its 4 KB neighbours no longer rewritten at each
/// push and pop (measured 2x slower on chunks of 16). The list is looked at only when the
/// rewritten chunks' own mean is above `mean` (their elements are what staying on chunks
/// costs; else the flush is cheap whatever the rest holds), and a long list only when an
/// estimate says so too: the rewritten elements plus [`SAMPLED`] evenly spaced ones standing
/// for the rest, O(1). The estimate only spares a scan: the move is decided on the exact mean
/// (a scan of lengths, no copy), so it agrees with the grid the whole write then picks and a
/// list never goes back and forth between writes. A list moves at most once per whole write
/// this way (one on a grid of 1 is not looked at), its rows rewritten once.
pub(super) fn outgrew(list: &VecDeque<Key>, rewritten: &[(i64, Key)], mean: usize) -> bool {
    let over = |bytes: usize, n: usize| bytes > mean.saturating_mul(n);
    let bytes: usize = rewritten.iter().map(|(_, k)| k.len()).sum();
    if rewritten.is_empty() || !over(bytes, rewritten.len()) {
        return false;
    }
    let len = list.len();
    if len > MEASURED_LEN {
        let step = len / SAMPLED;
        let sampled: usize = (0..SAMPLED)
            .filter_map(|i| list.get(i * step + step / 2))
            .map(|k| k.len())
            .sum();
        let rest = len.saturating_sub(rewritten.len());
        let estimate = bytes.saturating_add(sampled.saturating_mul(rest) / SAMPLED);
        if !over(estimate, len) {
            return false;
        }
    }
    over(list.iter().map(|k| k.len()).sum(), len)
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use super::*;

    #[test]
    fn a_list_on_chunks_is_written_whole_once_its_mean_is_large() {
        let list = |sizes: &[(usize, usize)]| -> VecDeque<Key> {
            sizes
                .iter()
                .flat_map(|&(n, size)| std::iter::repeat_n(Key::from(&vec![b'x'; size][..]), n))
                .collect()
        };
        let saved = |list: VecDeque<Key>, pushed: usize, large_mean| {
            let mut ends = ListEnds::default();
            ends.apply(ListEdit::Push {
                left: false,
                n: pushed,
            });
            let entry = Entry::new(crate::engine::Value::List(Box::new(list)), 0, 0);
            let grid = ListGrid {
                chunk: 16,
                base: 0,
                large_mean,
            };
            matches!(saved_list(&entry, &ends, grid), Some(Saved::Part { .. }))
        };
        // 100 small, then 3 of 4 KB: the mean is 122 bytes, in part; with a fourth, 160: whole.
        assert!(saved(list(&[(100, 3), (3, 4096)]), 1, Some(128)));
        assert!(!saved(list(&[(100, 3), (4, 4096)]), 1, Some(128)));
        // A sink that keeps its grids, or a list on a grid of 1, is written in part.
        assert!(saved(list(&[(100, 3), (4, 4096)]), 1, None));
        // The chunk rewritten is small (its last 4 of 100 small elements and a small push):
        // the large elements at the head are not looked at.
        assert!(saved(list(&[(10, 4096), (100, 3)]), 1, Some(128)));
        // Long lists: one large push among 100,000 small elements stays in part; 300 of 4 KB
        // after 5,000 small ones (a mean of 236 bytes) move, found by the estimate and then
        // the exact mean; 5,000 of 130 bytes then one large do too (a mean just past 128).
        assert!(saved(list(&[(100_000, 5), (1, 8192)]), 1, Some(128)));
        assert!(!saved(list(&[(5000, 5), (300, 4096)]), 300, Some(128)));
        assert!(!saved(list(&[(5000, 130), (1, 4096)]), 1, Some(128)));
        // Large at the ends only, the middle small: the estimate spares the scan, in part.
        assert!(saved(
            list(&[(20, 4096), (100_000, 3), (20, 4096)]),
            20,
            Some(128)
        ));
    }
}
