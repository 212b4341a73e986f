//! One database of the in-memory engine: the keyspace, typed access and lazy/active expiry.

use std::collections::VecDeque;

use super::stream::Stream;
use super::zset::ZSet;
use super::{CompactBytes, Hash, Key, Map, Set, now_ms};

/// A value of any Redis type.
#[derive(Debug, Clone)]
pub enum Value {
    Str(CompactBytes),
    // Collections are boxed so that a key's entry stays small: most keys hold strings.
    List(Box<VecDeque<Key>>),
    Hash(Box<Hash>),
    Set(Box<Set>),
    ZSet(Box<ZSet>),
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

/// A key's value and its expiry time (milliseconds since the epoch, 0 for none).
#[derive(Debug, Clone)]
pub struct Entry {
    pub value: Value,
    pub expire_at: i64,
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
}

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

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Number of keys with a TTL.
    pub fn expiring_len(&self) -> usize {
        self.expiring.len()
    }

    fn index_live(&mut self, key: &[u8]) -> Option<usize> {
        let idx = self.map.get_index_of(key)?;
        let expire_at = self.map.get_index(idx).map_or(0, |(_, e)| e.expire_at);
        if expire_at != 0 && expire_at <= now_ms() {
            self.remove_index(idx);
            self.expired_count += 1;
            return None;
        }
        Some(idx)
    }

    fn remove_index(&mut self, idx: usize) -> Option<(Key, Entry)> {
        let (key, entry) = self.map.swap_remove_index(idx)?;
        if entry.expire_at != 0 {
            self.expiring.swap_remove(&key);
        }
        Some((key, entry))
    }

    /// The live entry at `key`; an expired one is removed on the way (lazy expiry).
    pub fn get(&mut self, key: &[u8]) -> Option<&mut Entry> {
        let idx = self.index_live(key)?;
        self.map.get_index_mut(idx).map(|(_, e)| e)
    }

    /// The entry at `key`, expired or not, without removing anything (a persistence snapshot
    /// reads through a shared view and filters expiry itself).
    pub fn peek(&self, key: &[u8]) -> Option<&Entry> {
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
        match self.map.get_index_of(key) {
            Some(idx) => {
                let Some((k, entry)) = self.map.get_index_mut(idx) else {
                    return;
                };
                let had_ttl = entry.expire_at != 0;
                entry.value = value;
                entry.expire_at = expire_at;
                if had_ttl && expire_at == 0 {
                    let k = k.clone();
                    self.expiring.swap_remove(&k);
                } else if !had_ttl && expire_at != 0 {
                    let k = k.clone();
                    self.expiring.insert(k);
                }
            }
            None => {
                let k: Key = key.into();
                if expire_at != 0 {
                    self.expiring.insert(k.clone());
                }
                self.map.insert(k, Entry { value, expire_at });
            }
        }
    }

    /// Replaces the value of a live key and keeps its TTL (KEEPTTL, SETRANGE on new keys ...).
    pub fn set_keep_ttl(&mut self, key: &[u8], value: Value) {
        match self.get(key) {
            Some(entry) => entry.value = value,
            None => self.set(key, value),
        }
    }

    /// The live entry at `key`, inserted with `make()` and no TTL when missing.
    pub fn get_or_insert_with(&mut self, key: &[u8], make: impl FnOnce() -> Value) -> &mut Entry {
        let idx = match self.index_live(key) {
            Some(idx) => idx,
            None => {
                self.map
                    .insert_full(
                        key.into(),
                        Entry {
                            value: make(),
                            expire_at: 0,
                        },
                    )
                    .0
            }
        };
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
    pub fn insert_entry(&mut self, key: &[u8], entry: Entry) {
        self.remove(key);
        let k: Key = key.into();
        if entry.expire_at != 0 {
            self.expiring.insert(k.clone());
        }
        self.map.insert(k, entry);
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
                    self.remove_index(idx);
                    self.expired_count += 1;
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
