//! The in-memory engine: numbered databases, WATCH tracking and clients blocked on lists.
//!
//! This is the boundary a PostgreSQL-backed engine will sit behind. Commands (`crate::cmd`)
//! reach data only through [`Store`] (databases, change tracking for WATCH, blocked clients)
//! and [`Db`] (typed access: `string`, `list_or_new`, `hash`, `zset`, ..., expiry, SCAN);
//! they never touch sockets, and connections never touch values. A durable engine provides
//! the same surface (or a trait extracted from it) with its own storage underneath; the
//! protocol, dispatch, MULTI/WATCH bookkeeping, pub/sub and blocking logic stay as they are.

mod blocking;
mod compact;
mod db;
mod dirty;
mod follow;
pub mod geohash;
pub mod hll;
pub mod memory;
pub mod notify;
mod ordered;
pub mod rdb;
pub mod stream;
mod stream_group;
mod stream_node;
pub mod stream_read;
pub mod tracking;
pub mod usage;
mod zset;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

pub use blocking::{BlockOp, BlockedReply, Blocking, StreamWait};
pub use compact::CompactBytes;
pub use db::{Db, Entry, Value, WrongType, scan_indexed};
pub use dirty::{
    Change, DirtyKeys, Elements, Libraries, ListEdit, ListEnds, ListGrid, ListPart, Saved, Snapshot,
};
pub use memory::{AccessMode, Eviction, Policy};
pub use notify::KeyEvent;
pub use stream::{Stream, StreamId};
pub use zset::{LexBound, ScoreBound, ZSet};

/// Keys, fields, members and list elements: owned bytes, two words each.
pub type Key = CompactBytes;
/// The hasher of every table: fast, seeded per process.
pub type RandomState = foldhash::fast::RandomState;
/// An insertion-ordered hash map (indexable, for SCAN and random picks).
pub type Map<K, V> = indexmap::IndexMap<K, V, RandomState>;
/// A hash value.
pub type Hash = Map<Key, Key>;

/// Up to this size removals keep a hash's insertion order, as Redis's listpack-encoded hashes do.
const HASH_ORDERED_UP_TO: usize = 128;

/// Removes `field` from `hash` the way HDEL does (keeping the order of a small hash); whether
/// it was there.
pub fn remove_hash_field(hash: &mut Hash, field: &[u8]) -> bool {
    if hash.len() <= HASH_ORDERED_UP_TO {
        hash.shift_remove(field).is_some()
    } else {
        hash.swap_remove(field).is_some()
    }
}
/// A set value.
pub type Set = indexmap::IndexSet<Key, RandomState>;

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A uniformly random index below `len` (0 when `len` is 0, which no lookup will find).
pub fn random_index(len: usize) -> usize {
    if len == 0 { 0 } else { fastrand::usize(..len) }
}

/// A flag a WATCHing client reads at EXEC; set when a watched key changes.
pub type WatchFlag = Arc<AtomicBool>;

/// All databases and the cross-client state that changes with them.
#[derive(Debug)]
pub struct Store {
    dbs: Vec<Db>,
    /// Number of changes since start (INFO rdb_changes_since_last_save).
    pub dirty: u64,
    watchers: HashMap<(usize, Key), Vec<WatchFlag>>,
    /// Clients blocked in BLPOP, BRPOP, BLMOVE.
    pub blocking: Blocking,
    /// Lookups that found a key (INFO keyspace_hits).
    pub hits: u64,
    /// Lookups that found none (INFO keyspace_misses).
    pub misses: u64,
    /// The maxmemory policy, its eviction pool and counter (`memory`).
    pub eviction: Eviction,
    /// Keyspace notification classes published (`notify`); 0 when off.
    notify: u32,
    /// Keyspace events waiting to be published (`notify`).
    events: Vec<KeyEvent>,
    /// Keys changed by the running command, while notifications are on.
    touched: Vec<(usize, Key)>,
    /// Client-side caching: who read what, and the invalidations owed (`tracking`).
    pub tracking: tracking::Tracking,
    /// Keys changed since the last flush to a persistence sink; `None` without one.
    persist: Option<DirtyKeys>,
}

impl Store {
    /// A store with `databases` empty databases.
    pub fn new(databases: usize) -> Self {
        Self {
            dbs: (0..databases.max(1)).map(|_| Db::default()).collect(),
            dirty: 0,
            watchers: HashMap::new(),
            blocking: Blocking::default(),
            hits: 0,
            misses: 0,
            eviction: Eviction::default(),
            notify: 0,
            events: Vec::new(),
            touched: Vec::new(),
            tracking: tracking::Tracking::default(),
            persist: None,
        }
    }

    /// A store that tracks its changes for a persistence sink (see [`DirtyKeys`]).
    pub fn tracked(databases: usize) -> Self {
        let mut store = Self::new(databases);
        store.persist = Some(DirtyKeys::default());
        store
    }

    /// Whether changes are tracked for a persistence sink.
    pub fn is_tracked(&self) -> bool {
        self.persist.is_some()
    }

    /// The generation of the last tracked change (0 when untracked).
    pub fn generation(&self) -> u64 {
        self.persist.as_ref().map_or(0, DirtyKeys::generation)
    }

    /// Number of keys changed since the last flush (0 when untracked).
    pub fn dirty_len(&self) -> usize {
        self.persist.as_ref().map_or(0, DirtyKeys::len)
    }

    /// Takes the changes since the last call with what is to be written of each dirty key
    /// (cloned, so the caller writes them after releasing the lock: a key changed in part
    /// clones only the elements that changed); `None` when untracked.
    pub fn take_dirty(&mut self) -> Option<Snapshot> {
        self.take_dirty_in_chunks(|_, _| ListGrid::default())
    }

    /// [`Store::take_dirty`] for a sink that stores a list's elements in chunks: a list
    /// written in part gives the elements of every chunk it changed. `grid` says, per list,
    /// how many positions its chunks hold and where its first element is stored (the sink
    /// picks a list's chunk size when it writes the list whole; a list it does not have gets
    /// [`ListGrid::default`], as does every list of a database emptied since, whose lists
    /// start afresh and are written whole).
    pub fn take_dirty_in_chunks(
        &mut self,
        grid: impl Fn(usize, &[u8]) -> ListGrid,
    ) -> Option<Snapshot> {
        let dirty = self.persist.as_mut()?;
        let generation = dirty.generation();
        let (cleared, keys) = dirty.take();
        let functions = dirty.take_functions();
        let now = now_ms();
        let entries = keys
            .into_iter()
            .map(|(db, key, change)| {
                let entry = self
                    .dbs
                    .get(db)
                    .and_then(|d| d.peek_any(&key))
                    .filter(|e| e.expire_at == 0 || e.expire_at > now);
                let saved = match (entry, &change) {
                    (None, _) => Saved::Gone,
                    (Some(e), Change::Whole) => Saved::Whole(e.clone()),
                    (Some(e), Change::Members(m, key_row)) => dirty::saved_members(e, m, *key_row)
                        .unwrap_or_else(|| Saved::Whole(e.clone())),
                    (Some(e), Change::List(ends)) => {
                        let grid = if cleared.contains(&db) {
                            ListGrid::default()
                        } else {
                            grid(db, &key)
                        };
                        dirty::saved_list(e, ends, grid).unwrap_or_else(|| Saved::Whole(e.clone()))
                    }
                };
                (db, key, saved)
            })
            .collect();
        Some(Snapshot {
            generation,
            cleared,
            entries,
            functions,
            taken_at_ms: now,
        })
    }

    /// Records the function libraries as they are after a FUNCTION change, for the sink.
    pub fn functions_changed(&mut self, libraries: dirty::Libraries) {
        if let Some(dirty) = self.persist.as_mut() {
            dirty.functions_changed(libraries);
        }
    }

    /// Gives back a snapshot whose write failed (see [`DirtyKeys::restore`]).
    pub fn restore_dirty(&mut self, snapshot: &Snapshot) {
        if let Some(dirty) = self.persist.as_mut() {
            dirty.restore(snapshot);
        }
    }

    /// Puts a loaded key in place without marking it dirty (start-up load from the sink).
    pub fn load(&mut self, db: usize, key: &[u8], value: Value, expire_at: i64) {
        if let Some(d) = self.dbs.get_mut(db) {
            let entry = d.new_entry(value, expire_at);
            d.insert_entry(key, entry);
        }
    }

    /// Measures every key again (memory accounting) once a load has filled collections in
    /// through [`Store::loaded_mut`].
    pub fn loaded(&mut self) {
        for db in &mut self.dbs {
            let keys: Vec<Key> = db.entries().map(|(k, _)| k.clone()).collect();
            for key in keys {
                db.remeasure(&key);
            }
        }
    }

    /// Mutable access to a loaded key's value, for adding a collection's elements while loading.
    pub fn loaded_mut(&mut self, db: usize, key: &[u8]) -> Option<&mut Value> {
        self.dbs
            .get_mut(db)
            .and_then(|d| d.get(key))
            .map(|e| &mut e.value)
    }

    /// Takes a loaded key out, with its expiry (a follower moves what it read again from a
    /// scratch store into the one it serves).
    pub fn take_loaded(&mut self, db: usize, key: &[u8]) -> Option<(Value, i64)> {
        let entry = self.dbs.get_mut(db)?.remove(key)?;
        Some((entry.value, entry.expire_at))
    }

    /// Number of databases.
    pub fn db_count(&self) -> usize {
        self.dbs.len()
    }

    /// Database `i`; callers validate `i` (SELECT does), out of range falls back to the last one.
    pub fn db(&mut self, i: usize) -> &mut Db {
        let last = self.dbs.len() - 1;
        &mut self.dbs[i.min(last)]
    }

    /// Read-only view of all databases (INFO keyspace).
    pub fn dbs(&self) -> &[Db] {
        &self.dbs
    }

    /// Records that `key` changed: counts a change and fails the EXEC of clients watching it.
    /// A persistence sink writes the key whole.
    pub fn touch(&mut self, db: usize, key: &[u8]) {
        self.touch_then(db, key);
        if let Some(persist) = self.persist.as_mut() {
            persist.mark(db, key);
        }
    }

    /// [`Store::touch`] for a change of only `members` (fields of a hash, members of a set or
    /// sorted set, set or removed): a persistence sink writes just those. With no members: only
    /// the key's expiry changed.
    pub fn touch_members<'m>(
        &mut self,
        db: usize,
        key: &[u8],
        members: impl IntoIterator<Item = &'m [u8]>,
    ) {
        self.touch_then(db, key);
        if let Some(persist) = self.persist.as_mut() {
            persist.mark_members(db, key, members);
        }
    }

    /// [`Store::touch`] for pushes or pops at the ends of a list (in the order done): a
    /// persistence sink writes just the elements at the positions that changed.
    pub fn touch_list(&mut self, db: usize, key: &[u8], edits: &[ListEdit]) {
        self.touch_then(db, key);
        if let Some(persist) = self.persist.as_mut() {
            for &edit in edits {
                persist.mark_list(db, key, edit);
            }
        }
    }

    /// Marks `key` to be written whole at the next flush, with no other effect (a key loaded
    /// in a shape the sink wants rewritten).
    pub fn mark_for_rewrite(&mut self, db: usize, key: &[u8]) {
        if let Some(persist) = self.persist.as_mut() {
            persist.mark(db, key);
        }
    }

    /// What every kind of touch does but the sink's mark.
    fn touch_then(&mut self, db: usize, key: &[u8]) {
        self.dirty += 1;
        self.db(db).remeasure(key);
        if self.notify != 0 {
            self.touched.push((db, key.into()));
        }
        self.tracking_touch(key);
        // Blocked clients may care: a stream that got entries, a deleted stream that a group
        // reader waits on.
        if !self.blocking.is_empty() {
            self.blocking.signal(db, key);
        }
        if self.watchers.is_empty() {
            return;
        }
        let watched = (db, Key::from(key));
        if let Some(flags) = self.watchers.get_mut(&watched) {
            // A flag only the store holds belongs to a client that left its WATCHes without
            // the store (a refused EXEC while a script was busy): forget it here.
            flags.retain(|flag| {
                flag.store(true, Ordering::Release);
                Arc::strong_count(flag) > 1
            });
            if flags.is_empty() {
                self.watchers.remove(&watched);
            }
        }
    }

    /// Records `n` changes of `key` that Redis does not signal to WATCH (consumer-group
    /// bookkeeping: XACK, XCLAIM, XREADGROUP's deliveries): counted, and kept by a persistence
    /// sink, but no watcher fails.
    pub fn changed_unwatched(&mut self, db: usize, key: &[u8], n: u64) {
        self.dirty += n;
        if let Some(persist) = self.persist.as_mut() {
            persist.mark(db, key);
        }
    }

    /// Records that a list at `key` may have new elements for blocked clients.
    pub fn list_pushed(&mut self, db: usize, key: &[u8]) {
        self.blocking.signal(db, key);
    }

    /// Registers a WATCH of `key` by the client owning `flag`.
    pub fn watch(&mut self, db: usize, key: &[u8], flag: &WatchFlag) {
        let list = self.watchers.entry((db, key.into())).or_default();
        list.retain(|f| Arc::strong_count(f) > 1);
        if !list.iter().any(|f| Arc::ptr_eq(f, flag)) {
            list.push(flag.clone());
        }
    }

    /// Drops every WATCH of the client owning `flag` on the given keys.
    pub fn unwatch(&mut self, keys: &[(usize, Key)], flag: &WatchFlag) {
        for k in keys {
            if let Some(list) = self.watchers.get_mut(k) {
                list.retain(|f| !Arc::ptr_eq(f, flag));
                if list.is_empty() {
                    self.watchers.remove(k);
                }
            }
        }
    }

    /// Fails the EXEC of clients watching keys that exist in database `db` (FLUSHDB, SWAPDB).
    fn touch_existing_in(&mut self, db: usize) {
        let watched: Vec<Key> = self
            .watchers
            .keys()
            .filter(|(d, _)| *d == db)
            .map(|(_, k)| k.clone())
            .collect();
        for key in watched {
            if self.dbs.get_mut(db).is_some_and(|d| d.contains(&key)) {
                self.touch(db, &key);
            }
        }
    }

    /// Empties database `db`.
    pub fn flush_db(&mut self, db: usize) {
        self.tracking_flush();
        self.touch_existing_in(db);
        let removed = self.dbs.get(db).map_or(0, Db::len) as u64;
        self.dirty += removed;
        self.db(db).clear();
        if let Some(persist) = self.persist.as_mut() {
            persist.clear_db(db);
        }
        // Group readers blocked on streams of this database learn they are gone.
        self.blocking.signal_db(db);
    }

    /// Empties every database.
    pub fn flush_all(&mut self) {
        for i in 0..self.dbs.len() {
            self.flush_db(i);
        }
    }

    /// Exchanges two databases (SWAPDB); false when an index is out of range.
    pub fn swap_db(&mut self, a: usize, b: usize) -> bool {
        if a >= self.dbs.len() || b >= self.dbs.len() {
            return false;
        }
        self.touch_existing_in(a);
        self.touch_existing_in(b);
        self.dbs.swap(a, b);
        self.touch_existing_in(a);
        self.touch_existing_in(b);
        if let Some(persist) = self.persist.as_mut() {
            // Both databases are written again whole: clear their rows, mark every key.
            for db in [a, b] {
                persist.clear_db(db);
                self.dbs[db].for_each_live_key(|key, _| persist.mark(db, key));
            }
        }
        // Clients blocked on lists of either database may now find elements.
        self.blocking.signal_db(a);
        self.blocking.signal_db(b);
        self.dirty += 1;
        true
    }

    /// Hands elements to clients blocked on lists that got pushes. Call after each command
    /// outside MULTI and after EXEC.
    pub fn serve_blocked(&mut self) {
        if !self.blocking.has_ready() {
            return;
        }
        let mut ready = self.blocking.take_ready();
        while !ready.is_empty() {
            for (db, key) in ready.drain(..) {
                blocking::serve_key(self, db, &key);
            }
            ready = self.blocking.take_ready();
        }
    }

    /// One active-expiry pass over all databases, bounded by `budget`.
    pub fn expire_cycle(&mut self, budget: std::time::Duration) -> usize {
        let deadline = std::time::Instant::now() + budget;
        self.dbs
            .iter_mut()
            .map(|db| db.expire_cycle(deadline))
            .sum()
    }
}
