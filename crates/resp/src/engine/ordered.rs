//! An order-statistic sorted list: sorted chunks of bounded size, so ranks, rank ranges and
//! inserts cost O(log n + n / CHUNK) instead of the O(n) a plain B-tree needs for a rank.

/// Chunks split when they grow past twice this size (tiny in tests, to exercise splits).
#[cfg(not(test))]
const CHUNK: usize = 512;
#[cfg(test)]
const CHUNK: usize = 4;

/// A sorted multiset-free list of `T` with positional access.
#[derive(Debug, Clone)]
pub struct Ordered<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Ordered<T> {
    fn default() -> Self {
        Self {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

impl<T: Ord> Ordered<T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The chunk that holds (or would hold) `x`: the first whose last element is not below it.
    fn chunk_for(&self, x: &T) -> usize {
        let i = self
            .chunks
            .partition_point(|c| c.last().is_some_and(|l| l < x));
        i.min(self.chunks.len().saturating_sub(1))
    }

    /// Inserts `x`; false if an equal element is already present.
    pub fn insert(&mut self, x: T) -> bool {
        if self.chunks.is_empty() {
            self.chunks.push(vec![x]);
            self.len = 1;
            return true;
        }
        let ci = self.chunk_for(&x);
        let chunk = &mut self.chunks[ci];
        let pos = match chunk.binary_search(&x) {
            Ok(_) => return false,
            Err(pos) => pos,
        };
        chunk.insert(pos, x);
        self.len += 1;
        if chunk.len() > 2 * CHUNK {
            let tail = chunk.split_off(CHUNK);
            self.chunks.insert(ci + 1, tail);
        }
        true
    }

    /// Removes the element equal to `x`; false if absent.
    pub fn remove(&mut self, x: &T) -> bool {
        if self.chunks.is_empty() {
            return false;
        }
        let ci = self.chunk_for(x);
        let chunk = &mut self.chunks[ci];
        let Ok(pos) = chunk.binary_search(x) else {
            return false;
        };
        chunk.remove(pos);
        self.len -= 1;
        if chunk.is_empty() {
            self.chunks.remove(ci);
        }
        true
    }

    /// Number of leading elements for which `below` holds (`below` must be true, then false,
    /// along the order).
    pub fn count_while(&self, below: impl Fn(&T) -> bool) -> usize {
        let ci = self
            .chunks
            .partition_point(|c| c.last().is_some_and(&below));
        let before: usize = self.chunks[..ci].iter().map(Vec::len).sum();
        before + self.chunks.get(ci).map_or(0, |c| c.partition_point(&below))
    }

    /// Zero-based position of `x` (the number of smaller elements).
    pub fn rank(&self, x: &T) -> usize {
        self.count_while(|e| e < x)
    }

    /// (chunk, offset) of the element at position `r`; (chunks, 0) when `r == len`.
    fn locate(&self, mut r: usize) -> (usize, usize) {
        for (ci, c) in self.chunks.iter().enumerate() {
            if r < c.len() {
                return (ci, r);
            }
            r -= c.len();
        }
        (self.chunks.len(), 0)
    }

    /// The elements at positions `a..b`, in order (reversible).
    pub fn slice(&self, a: usize, b: usize) -> impl DoubleEndedIterator<Item = &T> {
        let b = b.min(self.len);
        let a = a.min(b);
        let (ca, oa) = self.locate(a);
        let (cb, ob) = self.locate(b);
        let empty: &[T] = &[];
        let (first, middle, last): (&[T], &[Vec<T>], &[T]) = if ca == cb {
            (
                self.chunks.get(ca).map_or(empty, |c| &c[oa..ob]),
                &[],
                empty,
            )
        } else {
            (
                self.chunks.get(ca).map_or(empty, |c| &c[oa..]),
                self.chunks.get(ca + 1..cb).unwrap_or(&[]),
                self.chunks.get(cb).map_or(empty, |c| &c[..ob]),
            )
        };
        first
            .iter()
            .chain(middle.iter().flatten())
            .chain(last.iter())
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> {
        self.chunks.iter().flatten()
    }

    pub fn pop_first(&mut self) -> Option<T> {
        let first = self.chunks.first_mut()?;
        let x = first.remove(0);
        if first.is_empty() {
            self.chunks.remove(0);
        }
        self.len -= 1;
        Some(x)
    }

    pub fn pop_last(&mut self) -> Option<T> {
        let last = self.chunks.last_mut()?;
        let x = last.pop()?;
        if last.is_empty() {
            self.chunks.pop();
        }
        self.len -= 1;
        Some(x)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn behaves_like_a_btreeset(ops in prop::collection::vec((any::<bool>(), 0u16..3000), 0..4000), a in 0usize..4000, b in 0usize..4000) {
            let mut ours = Ordered::default();
            let mut model = BTreeSet::new();
            for (insert, x) in ops {
                if insert {
                    prop_assert_eq!(ours.insert(x), model.insert(x));
                } else {
                    prop_assert_eq!(ours.remove(&x), model.remove(&x));
                }
            }
            prop_assert_eq!(ours.len(), model.len());
            let all: Vec<u16> = model.iter().copied().collect();
            prop_assert_eq!(ours.iter().copied().collect::<Vec<_>>(), all.clone());
            for probe in [0u16, 1, 1500, 2999, 5000] {
                prop_assert_eq!(ours.rank(&probe), model.range(..probe).count());
            }
            let (lo, hi) = (a.min(b), a.max(b));
            let want: Vec<u16> = all.iter().skip(lo).take(hi.saturating_sub(lo)).copied().collect();
            prop_assert_eq!(ours.slice(lo, hi).copied().collect::<Vec<_>>(), want.clone());
            let mut rev = want;
            rev.reverse();
            prop_assert_eq!(ours.slice(lo, hi).rev().copied().collect::<Vec<_>>(), rev);
            prop_assert_eq!(ours.pop_first(), model.pop_first());
            prop_assert_eq!(ours.pop_last(), model.pop_last());
        }
    }
}
