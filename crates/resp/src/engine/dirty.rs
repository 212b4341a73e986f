//! Dirty-key tracking for a persistence sink: which keys changed since the last flush.
//!
//! A store only tracks when a sink is configured (`[resp] store = "postgres"`); otherwise
//! [`super::Store`] holds `None` and every change costs one branch. The writer takes a
//! [`Snapshot`] under the store lock (so a MULTI/EXEC or a script, which run under one lock, is
//! either wholly in it or wholly out), writes it outside the lock, and gives it back with
//! [`super::Store::restore_dirty`] when the write failed.

use super::{Entry, Key, Set};

/// Keys changed since the last snapshot, databases emptied, and a generation counter.
#[derive(Debug, Default)]
pub struct DirtyKeys {
    /// Per database, so a key already dirty is found by its bytes without allocating.
    keys: Vec<Set>,
    len: usize,
    /// Databases emptied (FLUSHDB, FLUSHALL, SWAPDB) since the last snapshot: their rows go
    /// before the dirty keys' new ones are written.
    cleared: Vec<usize>,
    /// Bumped on every change; a connection waits until the writer committed its generation.
    generation: u64,
}

/// What the writer takes from the store: the changes up to `generation`.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// The last change included.
    pub generation: u64,
    /// Databases whose rows are all deleted first.
    pub cleared: Vec<usize>,
    /// Each dirty key with its value now; `None`: the key is gone (deleted or expired).
    pub entries: Vec<(usize, Key, Option<Entry>)>,
    /// When the snapshot was taken (ms since the epoch): rows that expired by then are deleted.
    pub taken_at_ms: i64,
}

impl Snapshot {
    /// True when there is nothing to write.
    pub fn is_empty(&self) -> bool {
        self.cleared.is_empty() && self.entries.is_empty()
    }
}

impl DirtyKeys {
    /// Records a change of `key` in `db`.
    pub fn mark(&mut self, db: usize, key: &[u8]) {
        self.generation += 1;
        if self.keys.len() <= db {
            self.keys.resize_with(db + 1, Set::default);
        }
        let set = &mut self.keys[db];
        if !set.contains(key) {
            set.insert(Key::from(key));
            self.len += 1;
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
        if let Some(set) = self.keys.get_mut(db) {
            self.len -= set.len();
            *set = Set::default();
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
        self.len == 0 && self.cleared.is_empty()
    }

    /// Takes the dirty set, leaving it empty.
    pub fn take(&mut self) -> (Vec<usize>, Vec<(usize, Key)>) {
        let mut keys = Vec::with_capacity(self.len);
        for (db, set) in self.keys.iter_mut().enumerate() {
            keys.extend(std::mem::take(set).into_iter().map(|key| (db, key)));
        }
        self.len = 0;
        (std::mem::take(&mut self.cleared), keys)
    }

    /// Puts back what a failed write took: the keys are re-read from memory at the next
    /// snapshot, so later changes to them are not lost either.
    pub fn restore(&mut self, snapshot: &Snapshot) {
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
        let (cleared, mut keys) = dirty.take();
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
                (1, Key::from(&b"after-flush"[..]), None),
                (2, Key::from(&b"k"[..]), None),
            ],
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
        cleared.sort();
        assert_eq!(cleared, vec![1, 2]);
        assert_eq!(keys, vec![(1, Key::from(&b"after-flush"[..]))]);
    }
}
