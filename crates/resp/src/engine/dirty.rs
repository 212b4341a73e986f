//! Dirty-key tracking for a persistence sink: which keys changed since the last flush.
//!
//! A store only tracks when a sink is configured (`[resp] store = "postgres"`); otherwise
//! [`super::Store`] holds `None` and every change costs one branch. The writer takes a
//! [`Snapshot`] under the store lock (so a MULTI/EXEC or a script, which run under one lock, is
//! either wholly in it or wholly out), writes it outside the lock, and gives it back with
//! [`super::Store::restore_dirty`] when the write failed.

use std::collections::HashSet;

use super::{Entry, Key, RandomState};

/// Keys changed since the last snapshot, databases emptied, and a generation counter.
#[derive(Debug, Default)]
pub struct DirtyKeys {
    keys: HashSet<(usize, Key), RandomState>,
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
        self.keys.insert((db, Key::from(key)));
    }

    /// Records that database `db` was emptied: its dirty keys are moot, its rows all go.
    pub fn clear_db(&mut self, db: usize) {
        self.generation += 1;
        self.keys.retain(|(d, _)| *d != db);
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
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty() && self.cleared.is_empty()
    }

    /// Takes the dirty set, leaving it empty.
    pub fn take(&mut self) -> (Vec<usize>, Vec<(usize, Key)>) {
        let keys = std::mem::take(&mut self.keys).into_iter().collect();
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
                self.keys.insert((*db, key.clone()));
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
}
