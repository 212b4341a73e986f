//! A follower's changes: what the followed primary holds put in place, whole or in part.

use std::sync::atomic::Ordering;

use super::{Db, Elements, Store, Value, remove_hash_field};

impl Store {
    /// Puts what the followed primary holds at `key` in place, or removes the key (`None`):
    /// WATCH, client-side caching and blocked readers see a change; nothing is marked for a
    /// sink (a follower's store is not tracked).
    pub fn follow_key(&mut self, db: usize, key: &[u8], entry: Option<(Value, i64)>) {
        let Some(d) = self.dbs.get_mut(db) else {
            return;
        };
        let had = d.remove(key).is_some();
        match entry {
            Some((value, expire_at)) => {
                let entry = d.new_entry(value, expire_at);
                d.insert_entry(key, entry);
            }
            None if !had => return,
            None => {}
        }
        self.touch_then(db, key);
    }

    /// Replaces every database by `other`'s (a follower's reload, swapped in at once while the
    /// old copy was served): every WATCH fails, client-side caches are flushed, blocked readers
    /// look again.
    pub fn replace_dbs(&mut self, other: Store) {
        self.tracking_flush();
        for flags in self.watchers.values() {
            for flag in flags {
                flag.store(true, Ordering::Release);
            }
        }
        self.watchers.clear();
        let count = self.dbs.len();
        self.dbs = other.dbs;
        self.dbs.resize_with(count.max(1), Db::default);
        for db in 0..self.dbs.len() {
            self.blocking.signal_db(db);
        }
        self.dirty += 1;
    }

    /// Applies what the followed primary changed in part at `key`, a hash, set or sorted set:
    /// the named fields or members as they are now (`None` or `false`: gone) and the key's
    /// expiry (0: none). False, changing nothing, when the key is not here as that type (the
    /// caller reads it whole) or `elements` are a list's.
    pub fn follow_part(
        &mut self,
        db: usize,
        key: &[u8],
        expire_at: i64,
        elements: &Elements,
    ) -> bool {
        let Some(d) = self.dbs.get_mut(db) else {
            return false;
        };
        let Some(entry) = d.get(key) else {
            return false;
        };
        match (&mut entry.value, elements) {
            (Value::Hash(hash), Elements::Hash(fields)) => {
                for (field, value) in fields {
                    match value {
                        Some(value) => {
                            hash.insert(field.clone(), value.clone());
                        }
                        None => {
                            remove_hash_field(hash, field);
                        }
                    }
                }
            }
            (Value::Set(set), Elements::Set(members)) => {
                for (member, present) in members {
                    if *present {
                        set.insert(member.clone());
                    } else {
                        set.swap_remove(member.as_slice());
                    }
                }
            }
            (Value::ZSet(zset), Elements::ZSet(members)) => {
                for (member, score) in members {
                    match score {
                        Some(score) => {
                            zset.insert(member, *score);
                        }
                        None => {
                            zset.remove(member);
                        }
                    }
                }
            }
            _ => return false,
        }
        d.set_expire(key, expire_at);
        // The primary deletes a collection it empties, and says so: this one was only read
        // between two of its writes.
        d.remove_if_empty(key);
        self.touch_then(db, key);
        true
    }
}
