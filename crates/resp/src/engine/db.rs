//! One database of the in-memory engine: the keyspace, typed access and lazy/active expiry.

use std::collections::VecDeque;

use super::memory::{AccessMode, entry_bytes};
use super::stream::Stream;
use super::zset::ZSet;
use super::{CompactBytes, Hash, Key, Map, Set, now_ms};

/// A value of any Redis type.
#[derive(Debug, Clone)]
pub enum Value {
    /// A string; HyperLogLogs and bitmaps are strings too, as in Redis.
    Str(CompactBytes),
    // Collections are boxed so that a key's entry stays small: most keys hold strings.
    /// A list, double-ended for pushes and pops at either end.
    List(Box<VecDeque<Key>>),
    /// A hash of fields to values.
    Hash(Box<Hash>),
    /// A set of members.
    Set(Box<Set>),
    /// A sorted set.
    ZSet(Box<ZSet>),
    /// A stream (an empty one stays until deleted).
    Stream(Box<Stream>),
}

impl Value {
    /// The name TYPE replies.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Str(_) => "string",
            Value::List(_) => "list",
            Value::Hash(_) => "hash",
            Value::Set(_) => "set",
            Value::ZSet(_) => "zset",
            Value::Stream(_) => "stream",
        }
    }

    fn is_empty_collection(&self) -> bool {
        match self {
            Value::Str(_) => false,
            Value::List(l) => l.is_empty(),
            Value::Hash(h) => h.is_empty(),
            Value::Set(s) => s.is_empty(),
            Value::ZSet(z) => z.is_empty(),
            // An empty stream stays (XDEL, XTRIM and consumer groups keep it).
            Value::Stream(_) => false,
        }
    }
}

/// A key's value, its expiry time (milliseconds since the epoch, 0 for none) and what memory
/// accounting and eviction keep about it.
#[derive(Debug, Clone)]
pub struct Entry {
    /// What the key holds.
    pub value: Value,
    /// When the key expires, in milliseconds since the epoch; 0 when it has no TTL.
    pub expire_at: i64,
    /// Bytes the entry was last measured at (`memory::entry_bytes`), counted in `Db::used`;
    /// saturates at 4 GiB.
    mem: u32,
    /// The LRU clock of the last access, or the LFU word (see `memory::AccessMode`).
    pub access: u32,
}

impl Entry {
    /// An entry as stored: not yet measured, accessed as `access` says.
    pub(crate) fn new(value: Value, expire_at: i64, access: u32) -> Self {
        Self {
            value,
            expire_at,
            mem: 0,
            access,
        }
    }
}

/// The key holds a value of another type than the command works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("WRONGTYPE Operation against a key holding the wrong kind of value")]
pub struct WrongType;

/// One of the numbered databases.
#[derive(Debug, Default)]
pub struct Db {
    map: Map<Key, Entry>,
    /// Keys with a TTL, sampled by the active expiry cycle.
    expiring: Set,
    /// Keys removed because their TTL passed (INFO expired_keys).
    pub expired_count: u64,
    /// Sum of the entries' measured bytes (INFO used_memory).
    used: u64,
    /// Indexes of the entries looked up last: `Store::touch` re-measures the entry a command
    /// just wrote without hashing its key again (a ring, so MSET's keys are all found).
    recent: [usize; RECENT],
    /// Next slot of `recent` to overwrite.
    recent_at: usize,
    /// How accesses are recorded (LRU clock or LFU counter).
    pub access_mode: AccessMode,
    /// Keys that expired or were created, kept for keyspace notifications when `events` says so.
    pub(super) pending: Vec<(super::notify::Pending, Key)>,
    /// Which of those to keep (set by `Store::set_notify`).
    pub(super) events: super::notify::DbEvents,
}

/// Lookups remembered for `Db::remeasure` (MSET writes up to this many keys at no extra hash).
const RECENT: usize = 16;

macro_rules! typed_access {
    ($get:ident, $get_or_new:ident, $variant:ident, $ty:ty, $new:expr) => {
        /// The value at `key` if it exists and has this type.
        pub fn $get(&mut self, key: &[u8]) -> Result<Option<&mut $ty>, WrongType> {
            match self.get(key) {
                None => Ok(None),
                Some(Entry {
                    value: Value::$variant(v),
                    ..
                }) => Ok(Some(v)),
                Some(_) => Err(WrongType),
            }
        }

        /// The value at `key`, created empty when missing.
        pub fn $get_or_new(&mut self, key: &[u8]) -> Result<&mut $ty, WrongType> {
            let entry = self.get_or_insert_with(key, || Value::$variant($new.into()));
            match &mut entry.value {
                Value::$variant(v) => Ok(v),
                _ => Err(WrongType),
            }
        }
    };
}

impl Db {
    /// Number of keys, expired ones not yet removed included (as Redis's DBSIZE).
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when the database holds no keys.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Every key and its entry, expired ones not yet removed included (MEMORY STATS).
    pub fn entries(&self) -> impl Iterator<Item = (&Key, &Entry)> {
        self.map.iter()
    }

    /// Number of keys with a TTL.
    pub fn expiring_len(&self) -> usize {
        self.expiring.len()
    }

    fn index_live(&mut self, key: &[u8]) -> Option<usize> {
        let idx = self.map.get_index_of(key)?;
        let expire_at = self.map.get_index(idx).map_or(0, |(_, e)| e.expire_at);
        if expire_at != 0 && expire_at <= now_ms() {
            self.expire_index(idx);
            return None;
        }
        self.note_recent(idx);
        Some(idx)
    }

    /// Removes an entry whose TTL passed, keeping its key for the `expired` event if wanted.
    fn expire_index(&mut self, idx: usize) {
        if let Some((key, _)) = self.remove_index(idx) {
            self.expired_count += 1;
            if self.events.expired {
                self.pending.push((super::notify::Pending::Expired, key));
            }
        }
    }

    fn remove_index(&mut self, idx: usize) -> Option<(Key, Entry)> {
        let (key, entry) = self.map.swap_remove_index(idx)?;
        if entry.expire_at != 0 {
            self.expiring.swap_remove(&key);
        }
        self.used = self.used.saturating_sub(u64::from(entry.mem));
        Some((key, entry))
    }

    /// Records a key created now (for the `new` event, when wanted).
    fn created(&mut self, key: &[u8]) {
        if self.events.new {
            self.pending.push((super::notify::Pending::New, key.into()));
        }
    }

    /// Sets the measured size of entry `idx` to `bytes`, keeping `used` the sum.
    fn account(&mut self, idx: usize, bytes: usize) {
        if let Some((_, e)) = self.map.get_index_mut(idx) {
            let bytes = u32::try_from(bytes).unwrap_or(u32::MAX);
            self.used = self.used.saturating_sub(u64::from(e.mem)) + u64::from(bytes);
            e.mem = bytes;
        }
    }

    /// Re-measures the entry at `key` after a change (`Store::touch`).
    pub fn remeasure(&mut self, key: &[u8]) {
        // Newest first: the key a command just wrote is usually the last one looked up.
        let found = (1..=RECENT)
            .map(|back| self.recent[(self.recent_at + RECENT - back) % RECENT])
            .find(|&i| {
                self.map
                    .get_index(i)
                    .is_some_and(|(k, _)| k.as_slice() == key)
            });
        let idx = match found {
            Some(idx) => idx,
            None => match self.map.get_index_of(key) {
                Some(idx) => idx,
                None => return,
            },
        };
        if let Some((k, e)) = self.map.get_index(idx) {
            let bytes = entry_bytes(k, &e.value);
            self.account(idx, bytes);
        }
    }

    #[inline]
    fn note_recent(&mut self, idx: usize) {
        self.recent[self.recent_at] = idx;
        self.recent_at = (self.recent_at + 1) % RECENT;
    }

    /// Bytes the entries of this database hold.
    pub fn used_bytes(&self) -> u64 {
        self.used
    }

    /// The live entry at `key`; an expired one is removed on the way (lazy expiry).
    pub fn get(&mut self, key: &[u8]) -> Option<&mut Entry> {
        let idx = self.index_live(key)?;
        let mode = self.access_mode;
        self.map.get_index_mut(idx).map(|(_, e)| {
            mode.accessed(&mut e.access);
            e
        })
    }

    /// The live entry at `key` without counting as an access (TYPE, TTL, OBJECT: Redis's
    /// LOOKUP_NOTOUCH).
    pub fn peek(&mut self, key: &[u8]) -> Option<&Entry> {
        let idx = self.index_live(key)?;
        self.map.get_index(idx).map(|(_, e)| e)
    }

    /// The entry at `key`, expired or not, without removing anything (a persistence snapshot
    /// reads through a shared view and filters expiry itself).
    pub fn peek_any(&self, key: &[u8]) -> Option<&Entry> {
        self.map.get(key)
    }

    /// Whether a live key exists.
    pub fn contains(&mut self, key: &[u8]) -> bool {
        self.index_live(key).is_some()
    }

    /// Removes `key`, returning its entry if it was live.
    pub fn remove(&mut self, key: &[u8]) -> Option<Entry> {
        let idx = self.index_live(key)?;
        self.remove_index(idx).map(|(_, e)| e)
    }

    /// Sets `key` to `value` with no TTL (SET without KEEPTTL).
    pub fn set(&mut self, key: &[u8], value: Value) {
        self.set_with_expiry(key, value, 0);
    }

    /// Sets `key` to `value` expiring at `expire_at` (0 for never).
    pub fn set_with_expiry(&mut self, key: &[u8], value: Value, expire_at: i64) {
        let bytes = entry_bytes(key, &value);
        let mode = self.access_mode;
        let idx = match self.map.get_index_of(key) {
            Some(idx) => {
                let Some((k, entry)) = self.map.get_index_mut(idx) else {
                    return;
                };
                let had_ttl = entry.expire_at != 0;
                entry.value = value;
                entry.expire_at = expire_at;
                mode.accessed(&mut entry.access);
                if had_ttl && expire_at == 0 {
                    let k = k.clone();
                    self.expiring.swap_remove(&k);
                } else if !had_ttl && expire_at != 0 {
                    let k = k.clone();
                    self.expiring.insert(k);
                }
                idx
            }
            None => {
                let k: Key = key.into();
                if expire_at != 0 {
                    self.expiring.insert(k.clone());
                }
                let entry = Entry::new(value, expire_at, mode.initial());
                let idx = self.map.insert_full(k, entry).0;
                self.created(key);
                idx
            }
        };
        self.note_recent(idx);
        self.account(idx, bytes);
    }

    /// Replaces the value of a live key and keeps its TTL (KEEPTTL, SETRANGE on new keys ...).
    pub fn set_keep_ttl(&mut self, key: &[u8], value: Value) {
        match self.get(key).map(|e| e.expire_at) {
            Some(expire_at) => self.set_with_expiry(key, value, expire_at),
            None => self.set(key, value),
        }
    }

    /// The live entry at `key`, inserted with `make()` and no TTL when missing.
    pub fn get_or_insert_with(&mut self, key: &[u8], make: impl FnOnce() -> Value) -> &mut Entry {
        let mode = self.access_mode;
        let idx = match self.index_live(key) {
            Some(idx) => {
                if let Some((_, e)) = self.map.get_index_mut(idx) {
                    mode.accessed(&mut e.access);
                }
                idx
            }
            None => {
                let value = make();
                let bytes = entry_bytes(key, &value);
                let idx = self
                    .map
                    .insert_full(key.into(), Entry::new(value, 0, mode.initial()))
                    .0;
                self.created(key);
                self.account(idx, bytes);
                idx
            }
        };
        self.note_recent(idx);
        match self.map.get_index_mut(idx) {
            Some((_, e)) => e,
            None => unreachable!("index {idx} was just found or inserted"),
        }
    }

    /// Sets the expiry of a live key (0 removes it); false when the key does not exist.
    pub fn set_expire(&mut self, key: &[u8], expire_at: i64) -> bool {
        let Some(idx) = self.index_live(key) else {
            return false;
        };
        let Some((k, entry)) = self.map.get_index_mut(idx) else {
            return false;
        };
        let had_ttl = entry.expire_at != 0;
        entry.expire_at = expire_at;
        let k = k.clone();
        if had_ttl && expire_at == 0 {
            self.expiring.swap_remove(&k);
        } else if !had_ttl && expire_at != 0 {
            self.expiring.insert(k);
        }
        true
    }

    /// Removes `key` if it holds an empty collection (after a pop or a remove).
    pub fn remove_if_empty(&mut self, key: &[u8]) {
        if let Some(idx) = self.map.get_index_of(key)
            && self
                .map
                .get_index(idx)
                .is_some_and(|(_, e)| e.value.is_empty_collection())
        {
            self.remove_index(idx);
        }
    }

    /// Inserts an entry whole (RENAME, COPY, MOVE), replacing any value at `key`.
    pub fn insert_entry(&mut self, key: &[u8], mut entry: Entry) {
        self.remove(key);
        let k: Key = key.into();
        if entry.expire_at != 0 {
            self.expiring.insert(k.clone());
        }
        let bytes = entry_bytes(key, &entry.value);
        entry.mem = 0;
        let idx = self.map.insert_full(k, entry).0;
        self.created(key);
        self.account(idx, bytes);
    }

    /// A new entry (RESTORE), with the access word of a key created now.
    pub fn new_entry(&self, value: Value, expire_at: i64) -> Entry {
        Entry::new(value, expire_at, self.access_mode.initial())
    }

    /// A random live key.
    pub fn random_key(&mut self) -> Option<Key> {
        for _ in 0..100 {
            if self.map.is_empty() {
                return None;
            }
            let idx = fastrand::usize(..self.map.len());
            let key = self.map.get_index(idx).map(|(k, _)| k.clone())?;
            if self.index_live(&key).is_some() {
                return Some(key);
            }
        }
        None
    }

    /// Calls `f` for every live key; used by KEYS.
    pub fn for_each_live_key(&self, mut f: impl FnMut(&[u8], &Entry)) {
        let now = now_ms();
        for (k, e) in &self.map {
            if e.expire_at == 0 || e.expire_at > now {
                f(k, e);
            }
        }
    }

    /// One SCAN step. The cursor walks indexes downwards so that a swap-remove (which moves the
    /// last entry into the hole) never hides a key that was present for the whole scan.
    pub fn scan(&self, cursor: u64, count: usize, mut f: impl FnMut(&[u8], &Entry)) -> u64 {
        scan_indexed(self.map.len(), cursor, count, |i| {
            if let Some((k, e)) = self.map.get_index(i) {
                let now = now_ms();
                if e.expire_at == 0 || e.expire_at > now {
                    f(k, e);
                }
            }
        })
    }

    /// Removes every key.
    pub fn clear(&mut self) {
        self.map = Map::default();
        self.expiring = Set::default();
        self.used = 0;
    }

    /// Up to `n` random live keys (with a TTL when `volatile`), for the eviction pool.
    pub fn sample(&self, volatile: bool, n: usize, mut f: impl FnMut(&Key, &Entry)) {
        let now = now_ms();
        let live = |e: &Entry| e.expire_at == 0 || e.expire_at > now;
        if volatile {
            for _ in 0..n.min(self.expiring.len()) {
                let pick = fastrand::usize(..self.expiring.len());
                if let Some((k, e)) = self
                    .expiring
                    .get_index(pick)
                    .and_then(|k| self.map.get_key_value(k.as_slice()))
                    && live(e)
                {
                    f(k, e);
                }
            }
        } else {
            for _ in 0..n.min(self.map.len()) {
                let pick = fastrand::usize(..self.map.len());
                if let Some((k, e)) = self.map.get_index(pick)
                    && live(e)
                {
                    f(k, e);
                }
            }
        }
    }

    /// Whether `key` is still there and may be evicted (has a TTL when `volatile`).
    pub fn qualifies(&self, key: &[u8], volatile: bool) -> bool {
        self.map
            .get(key)
            .is_some_and(|e| !volatile || e.expire_at != 0)
    }

    /// A random key that may be evicted, for the random policies.
    pub fn random_candidate(&self, volatile: bool) -> Option<Key> {
        if volatile {
            if self.expiring.is_empty() {
                return None;
            }
            self.expiring
                .get_index(fastrand::usize(..self.expiring.len()))
                .cloned()
        } else {
            if self.map.is_empty() {
                return None;
            }
            self.map
                .get_index(fastrand::usize(..self.map.len()))
                .map(|(k, _)| k.clone())
        }
    }

    /// Active expiry: samples keys with a TTL and removes the expired ones, repeating while
    /// more than a quarter of a sample had expired. Returns how many keys were removed.
    pub fn expire_cycle(&mut self, deadline: std::time::Instant) -> usize {
        let mut removed = 0;
        loop {
            if self.expiring.is_empty() {
                return removed;
            }
            let now = now_ms();
            let mut expired_in_sample = 0;
            for _ in 0..20 {
                if self.expiring.is_empty() {
                    break;
                }
                let pick = fastrand::usize(..self.expiring.len());
                let Some(key) = self.expiring.get_index(pick).cloned() else {
                    break;
                };
                let Some(idx) = self.map.get_index_of(&key) else {
                    self.expiring.swap_remove_index(pick);
                    continue;
                };
                if self
                    .map
                    .get_index(idx)
                    .is_some_and(|(_, e)| e.expire_at != 0 && e.expire_at <= now)
                {
                    self.expire_index(idx);
                    expired_in_sample += 1;
                }
            }
            removed += expired_in_sample;
            if expired_in_sample <= 5 || std::time::Instant::now() >= deadline {
                return removed;
            }
        }
    }

    typed_access!(
        string,
        string_or_new,
        Str,
        CompactBytes,
        CompactBytes::new()
    );
    typed_access!(list, list_or_new, List, VecDeque<Key>, VecDeque::new());
    typed_access!(hash, hash_or_new, Hash, Hash, Hash::default());
    typed_access!(set_value, set_or_new, Set, Set, Set::default());
    typed_access!(zset, zset_or_new, ZSet, ZSet, ZSet::default());
    typed_access!(stream, stream_or_new, Stream, Stream, Stream::default());
}

/// Walks `count` indexes of a collection of `len` items downwards from `cursor` (0 = start);
/// returns the next cursor, 0 when done. Shared by SCAN, HSCAN, SSCAN and ZSCAN.
pub fn scan_indexed(len: usize, cursor: u64, count: usize, mut visit: impl FnMut(usize)) -> u64 {
    let mut pos = if cursor == 0 {
        len
    } else {
        usize::try_from(cursor).unwrap_or(usize::MAX).min(len)
    };
    let mut steps = count.max(1);
    while pos > 0 && steps > 0 {
        pos -= 1;
        visit(pos);
        steps -= 1;
    }
    pos as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// SCAN's guarantee: a key present from the start to the end of a full scan is returned,
        /// however many other keys are deleted or added between the steps.
        #[test]
        fn scan_returns_every_key_present_throughout(
            initial in 1usize..300,
            steps in prop::collection::vec((0usize..20, 0usize..5, 1usize..40), 1..60),
        ) {
            let mut db = Db::default();
            for i in 0..initial {
                db.set(format!("k{i}").as_bytes(), Value::Str(CompactBytes::new()));
            }
            let mut touched = std::collections::HashSet::new();
            let mut seen = std::collections::HashSet::new();
            let mut cursor = 0;
            let mut next_new = initial;
            for (deletes, inserts, count) in steps {
                cursor = db.scan(cursor, count, |k, _| {
                    seen.insert(k.to_vec());
                });
                for _ in 0..deletes {
                    if let Some(key) = db.random_key() {
                        touched.insert(key.to_vec());
                        db.remove(&key);
                    }
                }
                for _ in 0..inserts {
                    let key = format!("k{next_new}");
                    next_new += 1;
                    touched.insert(key.clone().into_bytes());
                    db.set(key.as_bytes(), Value::Str(CompactBytes::new()));
                }
                if cursor == 0 {
                    break;
                }
            }
            while cursor != 0 {
                cursor = db.scan(cursor, 10, |k, _| {
                    seen.insert(k.to_vec());
                });
            }
            for i in 0..initial {
                let key = format!("k{i}").into_bytes();
                if !touched.contains(&key) {
                    prop_assert!(seen.contains(&key), "key {} was present throughout but not returned", i);
                }
            }
        }
    }

    #[test]
    fn lazy_expiry_hides_and_removes_expired_keys() {
        let mut db = Db::default();
        db.set_with_expiry(b"old", Value::Str(b"v".into()), 1);
        db.set_with_expiry(b"new", Value::Str(b"v".into()), now_ms() + 60_000);
        assert_eq!(db.expiring_len(), 2);
        assert!(db.get(b"old").is_none());
        assert_eq!(db.len(), 1);
        assert_eq!(db.expiring_len(), 1);
        assert!(db.set_expire(b"new", 0));
        assert_eq!(db.expiring_len(), 0);
    }
}
