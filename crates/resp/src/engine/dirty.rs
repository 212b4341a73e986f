//! Dirty-key tracking for a persistence sink: which keys changed since the last flush, and how.
//!
//! A store only tracks when a sink is configured (`[resp] store = "postgres"`); otherwise
//! [`super::Store`] holds `None` and every change costs one branch. The writer takes a
//! [`Snapshot`] under the store lock (so a MULTI/EXEC or a script, which run under one lock, is
//! either wholly in it or wholly out), writes it outside the lock, and gives it back with
//! [`super::Store::restore_dirty`] when the write failed. A key is written whole unless every
//! change to it since the last snapshot said which elements it touched ([`Change`]): then only
//! those are copied into the snapshot and written.

use super::{Entry, Key, Map, Set};

mod grid;

pub use grid::ListGrid;
use grid::outgrew;

/// How a dirty key changed since the last snapshot.
#[derive(Debug, Clone)]
pub enum Change {
    /// Anything: the key is written whole (or deleted).
    Whole,
    /// These fields (hash) or members (set, sorted set) were set or removed (none: only the
    /// expiry changed); true: the key's row (its expiry) is written too.
    Members(Set, bool),
    /// Elements were pushed or popped at a list's ends (and the expiry may have changed).
    List(ListEnds),
}

/// A list's pushes and pops since the last snapshot, as moves of its two ends. Positions are
/// counted from where the first element was at the last snapshot and never shift: a push at
/// the head takes the position before the first one, a pop at the head gives its position up.
/// The extremes each end reached bound the positions whose element may differ from before.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ListEnds {
    /// The key's row (its expiry) changed too.
    expiry: bool,
    head: i64,
    head_min: i64,
    head_max: i64,
    /// Moves of the end past the last element, relative to where it was.
    tail: i64,
    tail_min: i64,
    tail_max: i64,
}

/// One push or pop at a list end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListEdit {
    /// `n` elements pushed at the head (`left`) or the tail.
    Push {
        /// At the head.
        left: bool,
        /// How many.
        n: usize,
    },
    /// `n` elements popped from the head (`left`) or the tail.
    Pop {
        /// At the head.
        left: bool,
        /// How many.
        n: usize,
    },
}

impl ListEnds {
    fn apply(&mut self, edit: ListEdit) {
        let (left, by) = match edit {
            ListEdit::Push { left: true, n } => (true, -(n as i64)),
            ListEdit::Pop { left: true, n } => (true, n as i64),
            ListEdit::Push { left: false, n } => (false, n as i64),
            ListEdit::Pop { left: false, n } => (false, -(n as i64)),
        };
        let (at, min, max) = if left {
            (&mut self.head, &mut self.head_min, &mut self.head_max)
        } else {
            (&mut self.tail, &mut self.tail_min, &mut self.tail_max)
        };
        *at += by;
        *min = (*min).min(*at);
        *max = (*max).max(*at);
    }

    /// The part of a list of `len` elements to write, or `None` when writing it whole is as
    /// cheap (or the moves do not fit the length: then whole is the safe answer). The elements
    /// given are those of every chunk of `grid` that a changed position falls in (a sink
    /// storing a chunk's elements together rewrites the whole chunk), in position order.
    pub fn part<'l>(
        &self,
        list: impl Fn(usize) -> Option<&'l Key>,
        len: usize,
        grid: ListGrid,
    ) -> Option<ListPart> {
        let len = len as i64;
        // Where the list's first element was at the last snapshot is position 0; it now
        // spans [head, head + len), and it had `old_len` elements then.
        let old_len = len - self.tail + self.head;
        if old_len < 0 {
            return None;
        }
        let mut ranges: Vec<(i64, i64)> = Vec::with_capacity(2);
        if self.head_min < self.head_max {
            ranges.push((self.head_min, self.head_max));
        }
        if self.tail_min < self.tail_max {
            let right = (old_len + self.tail_min, old_len + self.tail_max);
            match ranges.first_mut() {
                Some(left) if right.0 <= left.1 && left.0 <= right.1 => {
                    *left = (left.0.min(right.0), left.1.max(right.1));
                }
                _ => ranges.push(right),
            }
        }
        let now = (self.head, self.head + len);
        // As many changed elements as the list holds: whole is no dearer. This also catches a
        // list emptied (the key deleted) and filled again since, whose key row must be
        // written again: every element it holds was pushed after it emptied.
        let changed: i64 = ranges
            .iter()
            .map(|&(lo, hi)| (hi.min(now.1) - lo.max(now.0)).max(0))
            .sum();
        if len > 0 && changed >= len {
            return None;
        }
        let mut spans: Vec<(i64, i64)> = ranges.iter().map(|&r| grid.widen(r)).collect();
        spans.sort_unstable();
        // Two ranges whose chunks meet give each element once.
        if let [a, b] = spans[..]
            && b.0 <= a.1
        {
            spans = vec![(a.0, a.1.max(b.1))];
        }
        let mut elements = Vec::new();
        for &(lo, hi) in &spans {
            for at in lo.max(now.0)..hi.min(now.1) {
                elements.push((at, list((at - self.head) as usize)?.clone()));
            }
        }
        Some(ListPart {
            head_shift: self.head,
            old_len,
            ranges,
            elements,
            grid,
        })
    }
}

/// The changed part of a list: positions relative to where its first element was at the last
/// write (the writer adds that position).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ListPart {
    /// How far the first element's position moved.
    pub head_shift: i64,
    /// How many elements the list had: rows were at positions `[0, old_len)`, so a range
    /// outside them (pushes only) has no rows to delete.
    pub old_len: i64,
    /// Ranges `[lo, hi)` of positions whose rows are replaced.
    pub ranges: Vec<(i64, i64)>,
    /// The elements now at positions within the chunks of `grid` those ranges touch, in
    /// position order.
    pub elements: Vec<(i64, Key)>,
    /// The grid the elements were taken for (its `base` is the list's stored first position).
    pub grid: ListGrid,
}

/// The changed elements of a key written in part.
#[derive(Debug, Clone, PartialEq)]
pub enum Elements {
    /// Hash fields with their values now; `None`: the field is gone.
    Hash(Vec<(Key, Option<Key>)>),
    /// Set members; false: the member is gone.
    Set(Vec<(Key, bool)>),
    /// Sorted-set members with their scores now; `None`: the member is gone.
    ZSet(Vec<(Key, Option<f64>)>),
    /// The changed positions of a list.
    List(ListPart),
}

/// What a snapshot holds of one dirty key.
#[derive(Debug, Clone)]
pub enum Saved {
    /// Deleted or expired: its rows go.
    Gone,
    /// Its whole value now: its rows are replaced.
    Whole(Entry),
    /// Its type and expiry now, and only the elements that changed.
    Part {
        /// Whether the key's row is written (its expiry changed); else it stays as it is.
        key_row: bool,
        /// The key's type (`list`, `hash`, `set`, `zset`).
        type_name: &'static str,
        /// Its expiry (ms since the epoch), 0 for none.
        expire_at: i64,
        /// What changed.
        elements: Elements,
    },
}

/// Keys changed since the last snapshot, databases emptied, and a generation counter.
#[derive(Debug, Default)]
pub struct DirtyKeys {
    /// Per database, so a key already dirty is found by its bytes without allocating.
    keys: Vec<Map<Key, Change>>,
    len: usize,
    /// Databases emptied (FLUSHDB, FLUSHALL, SWAPDB) since the last snapshot: their rows go
    /// before the dirty keys' new ones are written.
    cleared: Vec<usize>,
    /// Bumped on every change; a connection waits until the writer committed its generation.
    generation: u64,
    /// Every function library (name, code) after the last FUNCTION change not yet written.
    functions: Option<Libraries>,
}

/// Function libraries by name, with their code.
pub type Libraries = Vec<(String, Vec<u8>)>;

/// What the writer takes from the store: the changes up to `generation`.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// The last change included.
    pub generation: u64,
    /// Databases whose rows are all deleted first.
    pub cleared: Vec<usize>,
    /// Each dirty key with what is to be written of it.
    pub entries: Vec<(usize, Key, Saved)>,
    /// The function libraries as they are now, when they changed: they replace the stored ones.
    pub functions: Option<Libraries>,
    /// When the snapshot was taken (ms since the epoch): rows that expired by then are deleted.
    pub taken_at_ms: i64,
}

impl Snapshot {
    /// True when there is nothing to write.
    pub fn is_empty(&self) -> bool {
        self.cleared.is_empty() && self.entries.is_empty() && self.functions.is_none()
    }
}

impl DirtyKeys {
    /// The change recorded for `key` (a new one from `fresh` when it was clean).
    fn slot(&mut self, db: usize, key: &[u8], fresh: impl FnOnce() -> Change) -> &mut Change {
        self.generation += 1;
        if self.keys.len() <= db {
            self.keys.resize_with(db + 1, Map::default);
        }
        let map = &mut self.keys[db];
        let at = match map.get_index_of(key) {
            Some(at) => at,
            None => {
                self.len += 1;
                map.insert_full(Key::from(key), fresh()).0
            }
        };
        &mut map[at]
    }

    /// Records a change of `key` in `db` that rewrites it whole.
    pub fn mark(&mut self, db: usize, key: &[u8]) {
        *self.slot(db, key, || Change::Whole) = Change::Whole;
    }

    /// Records that only `members` (fields of a hash, members of a set or sorted set) of `key`
    /// changed, or with none, only its expiry.
    pub fn mark_members<'m>(
        &mut self,
        db: usize,
        key: &[u8],
        members: impl IntoIterator<Item = &'m [u8]>,
    ) {
        let slot = self.slot(db, key, || Change::Members(Set::default(), false));
        let mut members = members.into_iter().peekable();
        let expiry = members.peek().is_none();
        match slot {
            Change::Members(set, key_row) => {
                *key_row |= expiry;
                for member in members {
                    if !set.contains(member) {
                        set.insert(Key::from(member));
                    }
                }
            }
            Change::List(ends) => {
                if expiry {
                    ends.expiry = true;
                } else {
                    *slot = Change::Whole;
                }
            }
            Change::Whole => {}
        }
    }

    /// Records a push or pop at an end of the list at `key`.
    pub fn mark_list(&mut self, db: usize, key: &[u8], edit: ListEdit) {
        let slot = self.slot(db, key, || Change::List(ListEnds::default()));
        match slot {
            Change::List(ends) => ends.apply(edit),
            Change::Members(set, key_row) if set.is_empty() => {
                let mut ends = ListEnds {
                    expiry: *key_row,
                    ..ListEnds::default()
                };
                ends.apply(edit);
                *slot = Change::List(ends);
            }
            _ => *slot = Change::Whole,
        }
    }

    /// Marks without counting a change (a key given back is not a new change).
    fn mark_quietly(&mut self, db: usize, key: &[u8]) {
        let generation = self.generation;
        self.mark(db, key);
        self.generation = generation;
    }

    /// Records that database `db` was emptied: its dirty keys are moot, its rows all go.
    pub fn clear_db(&mut self, db: usize) {
        self.generation += 1;
        if let Some(map) = self.keys.get_mut(db) {
            self.len -= map.len();
            *map = Map::default();
        }
        if !self.cleared.contains(&db) {
            self.cleared.push(db);
        }
    }

    /// The last change's generation.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Number of dirty keys (INFO persistence's queue length).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing waits to be saved (no key, no flushed database).
    pub fn is_empty(&self) -> bool {
        self.len == 0 && self.cleared.is_empty() && self.functions.is_none()
    }

    /// Records that the function libraries are now `libraries` (FUNCTION LOAD, DELETE, FLUSH,
    /// RESTORE): the next snapshot replaces the stored ones with them.
    pub fn functions_changed(&mut self, libraries: Libraries) {
        self.generation += 1;
        self.functions = Some(libraries);
    }

    /// The libraries changed since the last snapshot, taken.
    pub fn take_functions(&mut self) -> Option<Libraries> {
        self.functions.take()
    }

    /// Takes the dirty set, leaving it empty.
    pub fn take(&mut self) -> (Vec<usize>, Vec<(usize, Key, Change)>) {
        let mut keys = Vec::with_capacity(self.len);
        for (db, map) in self.keys.iter_mut().enumerate() {
            keys.extend(
                std::mem::take(map)
                    .into_iter()
                    .map(|(key, change)| (db, key, change)),
            );
        }
        self.len = 0;
        (std::mem::take(&mut self.cleared), keys)
    }

    /// Puts back what a failed write took: the keys are re-read from memory at the next
    /// snapshot, whole (what was written of them is not known), so later changes to them are
    /// not lost either.
    pub fn restore(&mut self, snapshot: &Snapshot) {
        // Libraries changed again since are newer than the snapshot's.
        if self.functions.is_none() {
            self.functions.clone_from(&snapshot.functions);
        }
        for &db in &snapshot.cleared {
            if !self.cleared.contains(&db) {
                self.cleared.push(db);
            }
        }
        for (db, key, _) in &snapshot.entries {
            // A database emptied since holds none of the old keys: the clear covers them.
            if !self.cleared.contains(db) || snapshot.cleared.contains(db) {
                self.mark_quietly(*db, key);
            }
        }
    }
}

/// The elements of `changed` as `entry` holds them now, or `None` when the key is better
/// written whole (a string or stream, or as many changes as elements).
pub fn saved_members(entry: &Entry, changed: &Set, key_row: bool) -> Option<Saved> {
    use super::Value;
    let len = match &entry.value {
        Value::Hash(h) => h.len(),
        Value::Set(s) => s.len(),
        Value::ZSet(z) => z.len(),
        Value::List(l) if changed.is_empty() => l.len(),
        _ => return None,
    };
    if !changed.is_empty() && changed.len() >= len {
        return None;
    }
    let elements = match &entry.value {
        Value::Hash(h) => Elements::Hash(
            changed
                .iter()
                .map(|f| (f.clone(), h.get(f.as_slice()).cloned()))
                .collect(),
        ),
        Value::Set(s) => Elements::Set(
            changed
                .iter()
                .map(|m| (m.clone(), s.contains(m.as_slice())))
                .collect(),
        ),
        Value::ZSet(z) => Elements::ZSet(
            changed
                .iter()
                .map(|m| (m.clone(), z.score(m.as_slice())))
                .collect(),
        ),
        // Only the expiry changed: no range, so the grid is not looked at.
        _ => Elements::List(ListPart::default()),
    };
    Some(Saved::Part {
        key_row,
        type_name: entry.value.type_name(),
        expire_at: entry.expire_at,
        elements,
    })
}

/// What to save of `entry` after `ends` moved (elements of whole chunks of `grid`), or `None`
/// when whole is better: as many changes as elements, or a list on chunks whose elements
/// became large for the sink ([`outgrew`]), written whole so that the sink picks its grid again.
pub fn saved_list(entry: &Entry, ends: &ListEnds, grid: ListGrid) -> Option<Saved> {
    let super::Value::List(list) = &entry.value else {
        return None;
    };
    let part = ends.part(|i| list.get(i), list.len(), grid)?;
    if let Some(mean) = grid.large_mean
        && grid.chunk > 1
        && outgrew(list, &part.elements, mean)
    {
        return None;
    }
    Some(Saved::Part {
        key_row: ends.expiry,
        type_name: "list",
        expire_at: entry.expire_at,
        elements: Elements::List(part),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_coalesce_and_a_clear_drops_the_database_keys() {
        let mut dirty = DirtyKeys::default();
        for _ in 0..1000 {
            dirty.mark(0, b"hot");
        }
        dirty.mark(1, b"other");
        assert_eq!(dirty.len(), 2);
        assert_eq!(dirty.generation(), 1001);
        dirty.clear_db(0);
        dirty.mark(0, b"after");
        let (cleared, keys) = dirty.take();
        let mut keys: Vec<(usize, Key)> = keys.into_iter().map(|(d, k, _)| (d, k)).collect();
        keys.sort();
        assert_eq!(cleared, vec![0]);
        assert_eq!(
            keys,
            vec![(0, Key::from(&b"after"[..])), (1, Key::from(&b"other"[..]))]
        );
        assert!(dirty.is_empty());
        assert_eq!(dirty.generation(), 1003);
    }

    #[test]
    fn a_failed_snapshot_given_back_keeps_the_order_of_clears_and_writes() {
        let mut dirty = DirtyKeys::default();
        let failed = Snapshot {
            generation: 5,
            cleared: vec![1],
            entries: vec![
                (1, Key::from(&b"after-flush"[..]), Saved::Gone),
                (2, Key::from(&b"k"[..]), Saved::Gone),
            ],
            functions: None,
            taken_at_ms: 0,
        };
        // Database 2 was flushed after the snapshot: its old key is covered by that clear.
        dirty.clear_db(2);
        let generation = dirty.generation();
        dirty.restore(&failed);
        assert_eq!(
            dirty.generation(),
            generation,
            "giving back is not a change"
        );
        let (mut cleared, keys) = dirty.take();
        let keys: Vec<(usize, Key)> = keys.into_iter().map(|(d, k, _)| (d, k)).collect();
        cleared.sort();
        assert_eq!(cleared, vec![1, 2]);
        assert_eq!(keys, vec![(1, Key::from(&b"after-flush"[..]))]);
    }

    #[test]
    fn function_libraries_are_a_change_and_come_back_when_their_write_failed() {
        let mut dirty = DirtyKeys::default();
        dirty.functions_changed(vec![("lib".into(), b"code".to_vec())]);
        assert!(!dirty.is_empty());
        assert_eq!(
            dirty.generation(),
            1,
            "a FUNCTION change is waited for under always"
        );
        let failed = Snapshot {
            generation: 1,
            functions: dirty.take_functions(),
            ..Snapshot::default()
        };
        assert!(dirty.is_empty());
        dirty.restore(&failed);
        assert_eq!(dirty.take_functions(), failed.functions);
        // Libraries changed again after the snapshot are newer: they stay.
        dirty.functions_changed(Vec::new());
        dirty.restore(&failed);
        assert_eq!(dirty.take_functions(), Some(Vec::new()));
    }

    /// Applies `edits` to `old` as the list commands do and checks that replacing the rows of
    /// the part's ranges with its elements turns the old rows into the new list.
    fn check_list(old: &[&str], edits: &[(ListEdit, &[&str])]) {
        let mut list: std::collections::VecDeque<Key> =
            old.iter().map(|e| Key::from(e.as_bytes())).collect();
        let mut ends = ListEnds::default();
        for (edit, values) in edits {
            match *edit {
                ListEdit::Push { left, .. } => {
                    for v in *values {
                        if left {
                            list.push_front(Key::from(v.as_bytes()));
                        } else {
                            list.push_back(Key::from(v.as_bytes()));
                        }
                    }
                    ends.apply(ListEdit::Push {
                        left,
                        n: values.len(),
                    });
                }
                ListEdit::Pop { left, n } => {
                    for _ in 0..n {
                        if left {
                            list.pop_front();
                        } else {
                            list.pop_back();
                        }
                    }
                    ends.apply(*edit);
                }
            }
        }
        let expected: Vec<Key> = list.iter().cloned().collect();
        // Rows as the last write left them, from any start, one element per row or in chunks
        // (a chunk's positions are replaced together).
        for (chunk, base) in [(1, 7), (1, -3), (2, 7), (3, -4), (4, 0), (4, -9), (64, 61)] {
            let grid = ListGrid {
                chunk,
                base,
                large_mean: None,
            };
            let mut rows: std::collections::BTreeMap<i64, Key> = old
                .iter()
                .enumerate()
                .map(|(i, e)| (base + i as i64, Key::from(e.as_bytes())))
                .collect();
            // None: written whole, as many elements changed as the list holds.
            let Some(part) = ends.part(|i| list.get(i), list.len(), grid) else {
                continue;
            };
            assert_eq!(part.grid, grid);
            for (lo, hi) in &part.ranges {
                let chunks = grid.chunk_of(base + lo)..=grid.chunk_of(base + hi - 1);
                rows.retain(|p, _| !chunks.contains(&grid.chunk_of(*p)));
            }
            let mut last = None;
            for (at, v) in part.elements {
                assert!(last < Some(at), "elements out of order");
                last = Some(at);
                assert!(rows.insert(base + at, v).is_none(), "a row written twice");
            }
            let got: Vec<Key> = rows.values().cloned().collect();
            assert_eq!(got, expected, "{old:?} {edits:?} {grid:?}");
            // Rows are contiguous from the new head.
            let first = rows
                .keys()
                .next()
                .copied()
                .unwrap_or(base + part.head_shift);
            assert_eq!(first, base + part.head_shift);
            assert_eq!(
                rows.keys().last().map_or(0, |l| l - first + 1),
                list.len() as i64
            );
        }
    }

    #[test]
    fn list_parts_replay_pushes_and_pops_at_both_ends() {
        let push = |left, n| ListEdit::Push { left, n };
        let pop = |left, n| ListEdit::Pop { left, n };
        let old = ["a", "b", "c", "d", "e", "f"];
        check_list(&old, &[(push(true, 2), &["x", "y"])]);
        check_list(&old, &[(push(false, 1), &["x"])]);
        check_list(&old, &[(pop(true, 2), &[]), (push(true, 1), &["x"])]);
        check_list(&old, &[(pop(false, 1), &[]), (push(false, 2), &["x", "y"])]);
        check_list(&old, &[(push(false, 1), &["q"]), (pop(true, 1), &[])]);
        check_list(
            &old,
            &[
                (push(true, 1), &["l"]),
                (push(false, 1), &["r"]),
                (pop(true, 2), &[]),
                (pop(false, 2), &[]),
            ],
        );
        // Left pops eating into what was pushed on the right.
        check_list(
            &["a"],
            &[(push(false, 2), &["b", "c"]), (pop(true, 2), &[])],
        );
        // Emptied and filled again.
        check_list(&["a", "b"], &[(pop(true, 2), &[]), (push(true, 1), &["z"])]);
        let mut ends = ListEnds::default();
        ends.apply(push(true, 3));
        let list: Vec<Key> = ["x", "y", "z", "a"]
            .iter()
            .map(|e| Key::from(e.as_bytes()))
            .collect();
        let part = ends
            .part(|i| list.get(i), list.len(), ListGrid::default())
            .unwrap();
        assert_eq!(part.head_shift, -3);
        assert_eq!(part.ranges, vec![(-3, 0)]);
        assert_eq!(part.elements.len(), 3);
        // In chunks of 4 from stored position 5: the pushes took 2..=4, chunks 0 and 1 (0..8),
        // which hold all four elements.
        let grid = ListGrid {
            chunk: 4,
            base: 5,
            large_mean: None,
        };
        let part = ends.part(|i| list.get(i), list.len(), grid).unwrap();
        assert_eq!(part.ranges, vec![(-3, 0)]);
        let at: Vec<i64> = part.elements.iter().map(|(at, _)| *at).collect();
        assert_eq!(at, [-3, -2, -1, 0]);
    }

    #[test]
    fn list_parts_in_chunks_replay_long_lists() {
        let push = |left, n| ListEdit::Push { left, n };
        let pop = |left, n| ListEdit::Pop { left, n };
        let old: Vec<String> = (0..150).map(|i| format!("e{i}")).collect();
        let old: Vec<&str> = old.iter().map(String::as_str).collect();
        let many: Vec<String> = (0..70).map(|i| format!("n{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        check_list(&old, &[(push(true, 70), &many)]);
        check_list(&old, &[(push(false, 70), &many)]);
        check_list(&old, &[(pop(true, 65), &[]), (pop(false, 65), &[])]);
        check_list(&old, &[(pop(true, 3), &[]), (push(false, 2), &["x", "y"])]);
        check_list(&old, &[(pop(false, 140), &[]), (push(true, 1), &["h"])]);
    }
}
