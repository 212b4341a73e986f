//! Memory accounting and eviction: per-key size estimates, the LRU clock, LFU counters, and the sampled eviction pool of the maxmemory policies.
//!
//! Each entry carries the bytes it was last measured at (`Entry::mem`); every change of that
//! figure goes through its database's `used` total, and every removal subtracts it, so the
//! total is always the sum over live entries and cannot drift. Entries are re-measured when
//! `Store::touch` reports a change. Collections are measured from a fixed number of sampled
//! elements (as Redis's MEMORY USAGE samples), so a measure costs the same on a big list as on
//! a small one.

use std::sync::atomic::{AtomicU32, Ordering};

use super::db::{Entry, Value};
use super::{CompactBytes, Key};

/// Elements read to estimate the average element of a collection.
const SAMPLED_ELEMENTS: usize = 8;
/// Bytes a key costs in its database beyond its own data: the slot (key and entry) and the
/// hash index cell.
const SLOT_BYTES: usize = std::mem::size_of::<(Key, Entry)>() + 16;
/// What Sluice reports as used before it holds any data (Redis starts near a megabyte too).
pub const BASELINE_BYTES: u64 = 1024 * 1024;

/// Bytes a key, value and their slot hold: the figure `used_memory` adds up.
pub fn entry_bytes(key: &[u8], value: &Value) -> usize {
    SLOT_BYTES + heap_bytes(key.len()) + value.approx_bytes()
}

/// Heap bytes of a [`CompactBytes`] of `len` bytes: none inline, else the block rounded up to
/// the allocator's 16-byte classes.
fn heap_bytes(len: usize) -> usize {
    if len <= 22 { 0 } else { len.div_ceil(16) * 16 }
}

fn compact(b: &CompactBytes) -> usize {
    heap_bytes(b.len())
}

/// `len` times the average of `per_item` over up to [`SAMPLED_ELEMENTS`] items.
fn sampled(len: usize, items: impl Iterator<Item = usize>) -> usize {
    let mut n = 0;
    let mut sum = 0;
    for bytes in items.take(SAMPLED_ELEMENTS) {
        sum += bytes;
        n += 1;
    }
    (sum * len).checked_div(n).unwrap_or(0)
}

impl Value {
    /// Approximate heap bytes the value holds beyond its inline part (an estimate from sampled
    /// elements for collections; exact for strings).
    pub fn approx_bytes(&self) -> usize {
        const KEY: usize = std::mem::size_of::<Key>();
        match self {
            Value::Str(s) => compact(s),
            Value::List(l) => {
                let sample = l.iter().map(compact);
                64 + l.capacity() * KEY + sampled(l.len(), sample)
            }
            Value::Hash(h) => {
                let sample = h.iter().map(|(f, v)| compact(f) + compact(v));
                64 + h.capacity() * (2 * KEY + 24) + sampled(h.len(), sample)
            }
            Value::Set(s) => {
                let sample = s.iter().map(compact);
                64 + s.capacity() * (KEY + 24) + sampled(s.len(), sample)
            }
            Value::ZSet(z) => {
                // The member is held twice: in the score map and in the order.
                let sample = z.iter().map(|(m, _)| 2 * heap_bytes(m.len()));
                64 + z.len() * (2 * KEY + 8 + 8 + 24 + 8) + sampled(z.len(), sample)
            }
            Value::Stream(s) => s.approx_heap_size(),
        }
    }
}

/// The LRU clock: tenths of a second since the epoch, advanced by the server's cron (and
/// read with one relaxed load on every key access).
static LRU_CLOCK: AtomicU32 = AtomicU32::new(0);
/// Milliseconds per LRU clock tick.
pub const LRU_TICK_MS: u64 = 100;

fn clock_now() -> u32 {
    let ms = u64::try_from(super::now_ms()).unwrap_or(0);
    // Wraps after 13 years; idle times are taken with wrapping subtraction.
    (ms / LRU_TICK_MS) as u32
}

/// Advances the LRU clock (called by the server's 100 ms cron).
pub fn tick_lru_clock() {
    LRU_CLOCK.store(clock_now(), Ordering::Relaxed);
}

/// The current LRU clock.
pub fn lru_clock() -> u32 {
    match LRU_CLOCK.load(Ordering::Relaxed) {
        0 => {
            let now = clock_now();
            LRU_CLOCK.store(now, Ordering::Relaxed);
            now
        }
        now => now,
    }
}

/// Minutes on the LFU's 16-bit clock.
fn lfu_minutes() -> u32 {
    (u64::from(lru_clock()) * LRU_TICK_MS / 60_000) as u32 & 0xffff
}

/// The counter a new key starts with under LFU, so it is not evicted before it has a chance.
const LFU_INIT: u32 = 5;

/// How a key's access word is kept: the LRU clock of its last access, or (LFU) the minute of
/// its last decrement in the high 16 bits and a logarithmic access counter in the low 8.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AccessMode {
    /// The LRU clock of the last access.
    #[default]
    Lru,
    /// Redis's LFU word.
    Lfu {
        /// `lfu-log-factor`: how slowly the counter grows.
        log_factor: u32,
        /// `lfu-decay-time`: minutes per decrement of an idle key's counter.
        decay_minutes: u32,
    },
}

impl AccessMode {
    /// The access word of a key created now.
    pub fn initial(self) -> u32 {
        match self {
            AccessMode::Lru => lru_clock(),
            AccessMode::Lfu { .. } => (lfu_minutes() << 8) | LFU_INIT,
        }
    }

    /// Records an access in `word`.
    #[inline]
    pub fn accessed(self, word: &mut u32) {
        match self {
            AccessMode::Lru => *word = lru_clock(),
            AccessMode::Lfu {
                log_factor,
                decay_minutes,
            } => {
                let counter = lfu_decayed(*word, decay_minutes);
                let counter = lfu_log_incr(counter, log_factor);
                *word = (lfu_minutes() << 8) | counter;
            }
        }
    }
}

/// The LFU counter of `word` after the decay for the minutes since it was last decremented.
pub fn lfu_decayed(word: u32, decay_minutes: u32) -> u32 {
    let last = (word >> 8) & 0xffff;
    let now = lfu_minutes();
    let elapsed = if now >= last {
        now - last
    } else {
        0xffff - last + now
    };
    let periods = elapsed.checked_div(decay_minutes).unwrap_or(0);
    (word & 0xff).saturating_sub(periods)
}

/// One probabilistic increment: the higher the counter, the less likely (Redis's LFU).
fn lfu_log_incr(counter: u32, log_factor: u32) -> u32 {
    if counter >= 255 {
        return 255;
    }
    let base = counter.saturating_sub(LFU_INIT) as f64;
    let p = 1.0 / (base * f64::from(log_factor) + 1.0);
    if fastrand::f64() < p {
        counter + 1
    } else {
        counter
    }
}

/// Milliseconds since the access recorded in an LRU `word`.
pub fn idle_ms(word: u32) -> u64 {
    u64::from(lru_clock().wrapping_sub(word)) * LRU_TICK_MS
}

/// Redis's `maxmemory-policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Policy {
    /// `noeviction`: writes that grow memory past the limit are refused (OOM).
    #[default]
    NoEviction,
    /// `allkeys-lru`: the least recently used of any key.
    AllKeysLru,
    /// `allkeys-lfu`: the least frequently used of any key.
    AllKeysLfu,
    /// `allkeys-random`: any key.
    AllKeysRandom,
    /// `volatile-lru`: the least recently used key with a TTL.
    VolatileLru,
    /// `volatile-lfu`: the least frequently used key with a TTL.
    VolatileLfu,
    /// `volatile-random`: any key with a TTL.
    VolatileRandom,
    /// `volatile-ttl`: the key with a TTL nearest to expiring.
    VolatileTtl,
}

impl Policy {
    /// The policy of a `maxmemory-policy` value (already checked by CONFIG SET).
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "noeviction" => Policy::NoEviction,
            "allkeys-lru" => Policy::AllKeysLru,
            "allkeys-lfu" => Policy::AllKeysLfu,
            "allkeys-random" => Policy::AllKeysRandom,
            "volatile-lru" => Policy::VolatileLru,
            "volatile-lfu" => Policy::VolatileLfu,
            "volatile-random" => Policy::VolatileRandom,
            "volatile-ttl" => Policy::VolatileTtl,
            _ => return None,
        })
    }

    /// Only keys with a TTL may be evicted.
    pub fn volatile_only(self) -> bool {
        matches!(
            self,
            Policy::VolatileLru
                | Policy::VolatileLfu
                | Policy::VolatileRandom
                | Policy::VolatileTtl
        )
    }

    /// Whether keys keep LFU counters under this policy.
    pub fn is_lfu(self) -> bool {
        matches!(self, Policy::AllKeysLfu | Policy::VolatileLfu)
    }

    fn is_random(self) -> bool {
        matches!(self, Policy::AllKeysRandom | Policy::VolatileRandom)
    }
}

/// Candidates kept between evictions (Redis's EVPOOL_SIZE).
const POOL_SIZE: usize = 16;

/// A sampled key waiting in the pool: the higher `score`, the better a victim.
#[derive(Debug, Clone)]
struct Candidate {
    score: u64,
    db: usize,
    key: Key,
}

/// The eviction settings and state of a store.
#[derive(Debug, Default)]
pub struct Eviction {
    /// `maxmemory-policy`.
    pub policy: Policy,
    /// Keys sampled per database per round (maxmemory-samples).
    pub samples: usize,
    /// Keys evicted since start (INFO evicted_keys).
    pub evicted: u64,
    /// The highest used memory INFO has reported (used_memory_peak).
    pub peak: u64,
    /// The best candidates seen so far, ascending by score.
    pool: Vec<Candidate>,
    /// Next database the random policies pick from.
    next_db: usize,
}

impl Eviction {
    /// Drops pooled candidates (their scores mean nothing under another policy).
    pub fn clear_pool(&mut self) {
        self.pool.clear();
    }
}

/// The score of an entry under `policy`: idle time, inverse frequency or closeness to expiry.
fn score(policy: Policy, entry: &Entry, decay_minutes: u32) -> u64 {
    match policy {
        Policy::AllKeysLfu | Policy::VolatileLfu => {
            255 - u64::from(lfu_decayed(entry.access, decay_minutes))
        }
        Policy::VolatileTtl => u64::MAX - u64::try_from(entry.expire_at).unwrap_or(0),
        _ => idle_ms(entry.access),
    }
}

impl super::Store {
    /// Bytes the data set holds, as INFO used_memory reports and maxmemory limits.
    pub fn used_memory(&self) -> u64 {
        BASELINE_BYTES + self.dbs().iter().map(|d| d.used_bytes()).sum::<u64>()
    }

    /// Sets the policy and its parameters; the access words of keys are kept (read under the
    /// new meaning, as Redis does).
    pub fn set_eviction(&mut self, policy: Policy, samples: usize, mode: AccessMode) {
        if policy != self.eviction.policy {
            self.eviction.clear_pool();
        }
        self.eviction.policy = policy;
        self.eviction.samples = samples.max(1);
        for i in 0..self.db_count() {
            self.db(i).access_mode = mode;
        }
    }

    /// Evicts keys under the policy until at most `limit` bytes are used; false when it could
    /// not get there (noeviction, or nothing evictable left).
    pub fn evict_to(&mut self, limit: u64) -> bool {
        while self.used_memory() > limit {
            if !self.evict_one() {
                return false;
            }
        }
        true
    }

    /// Evicts one key chosen by the policy; false when none qualifies.
    fn evict_one(&mut self) -> bool {
        let policy = self.eviction.policy;
        if policy == Policy::NoEviction {
            return false;
        }
        let volatile = policy.volatile_only();
        let victim = if policy.is_random() {
            self.random_victim(volatile)
        } else {
            self.pooled_victim(policy, volatile)
        };
        let Some((db, key)) = victim else {
            return false;
        };
        if self.db(db).remove(&key).is_none() {
            // Gone meanwhile (expired on the way): progress all the same.
            return true;
        }
        self.eviction.evicted += 1;
        self.touch(db, &key);
        self.key_event(db, super::notify::EVICTED, b"evicted", &key);
        true
    }

    fn random_victim(&mut self, volatile: bool) -> Option<(usize, Key)> {
        let n = self.db_count();
        for step in 0..n {
            let db = (self.eviction.next_db + step) % n;
            if let Some(key) = self.db(db).random_candidate(volatile) {
                self.eviction.next_db = (db + 1) % n;
                return Some((db, key));
            }
        }
        None
    }

    fn pooled_victim(&mut self, policy: Policy, volatile: bool) -> Option<(usize, Key)> {
        let samples = self.eviction.samples;
        loop {
            let mut any = false;
            for db in 0..self.db_count() {
                let decay = match self.db(db).access_mode {
                    AccessMode::Lfu { decay_minutes, .. } => decay_minutes,
                    AccessMode::Lru => 1,
                };
                let mut found = Vec::with_capacity(samples);
                self.db(db).sample(volatile, samples, |key, entry| {
                    found.push(Candidate {
                        score: score(policy, entry, decay),
                        db,
                        key: key.clone(),
                    });
                });
                any |= !found.is_empty();
                for c in found {
                    self.pool_insert(c);
                }
            }
            if !any {
                self.eviction.clear_pool();
                return None;
            }
            // Best first; a candidate deleted (or that lost its TTL) since it was pooled is
            // dropped and the next one tried.
            while let Some(c) = self.eviction.pool.pop() {
                let db = self.db(c.db);
                if db.qualifies(&c.key, volatile) {
                    return Some((c.db, c.key));
                }
            }
        }
    }

    fn pool_insert(&mut self, c: Candidate) {
        let pool = &mut self.eviction.pool;
        if pool.iter().any(|p| p.db == c.db && p.key == c.key) {
            return;
        }
        if pool.len() == POOL_SIZE {
            if pool.first().is_some_and(|worst| worst.score >= c.score) {
                return;
            }
            pool.remove(0);
        }
        let at = pool.partition_point(|p| p.score < c.score);
        pool.insert(at, c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Store;

    fn fill(store: &mut Store, n: usize, ttl: bool) {
        for i in 0..n {
            let key = format!("key:{i}");
            let expire = if ttl {
                super::super::now_ms() + 3_600_000
            } else {
                0
            };
            store
                .db(0)
                .set_with_expiry(key.as_bytes(), Value::Str(vec![b'x'; 100].into()), expire);
        }
    }

    #[test]
    fn used_memory_is_the_sum_of_live_entries() {
        let mut store = Store::new(2);
        let empty = store.used_memory();
        fill(&mut store, 100, false);
        let full = store.used_memory();
        assert!(full - empty >= 100 * 100, "{empty} -> {full}");
        store.db(0).remove(b"key:1");
        assert!(store.used_memory() < full);
        let list = store.db(1).list_or_new(b"l").unwrap();
        for _ in 0..1000 {
            list.push_back(vec![b'y'; 50].into());
        }
        store.touch(1, b"l");
        assert!(store.used_memory() - full > 50_000);
        store.flush_all();
        assert_eq!(store.used_memory(), empty);
    }

    #[test]
    fn volatile_policies_only_evict_keys_with_a_ttl() {
        let mut store = Store::new(1);
        fill(&mut store, 200, false);
        store.set_eviction(Policy::VolatileLru, 5, AccessMode::Lru);
        let before = store.used_memory();
        assert!(!store.evict_to(before - 1000));
        assert_eq!(store.db(0).len(), 200);
        store
            .db(0)
            .set_expire(b"key:7", super::super::now_ms() + 60_000);
        assert!(!store.evict_to(before - 100_000));
        assert!(!store.db(0).contains(b"key:7"));
        assert_eq!(store.db(0).len(), 199);
        assert_eq!(store.eviction.evicted, 1);
    }

    #[test]
    fn allkeys_policies_get_under_the_limit() {
        for policy in [
            Policy::AllKeysLru,
            Policy::AllKeysLfu,
            Policy::AllKeysRandom,
        ] {
            let mut store = Store::new(1);
            fill(&mut store, 500, false);
            let mode = if policy.is_lfu() {
                AccessMode::Lfu {
                    log_factor: 10,
                    decay_minutes: 1,
                }
            } else {
                AccessMode::Lru
            };
            store.set_eviction(policy, 5, mode);
            let limit = store.used_memory() - 20_000;
            assert!(store.evict_to(limit), "{policy:?}");
            assert!(store.used_memory() <= limit);
            assert!(store.db(0).len() < 500);
        }
    }

    #[test]
    fn volatile_ttl_evicts_the_nearest_expiry_first() {
        let mut store = Store::new(1);
        let now = super::super::now_ms();
        for i in 0..50i64 {
            store.db(0).set_with_expiry(
                format!("k{i}").as_bytes(),
                Value::Str(b"v".into()),
                now + 10_000 + i * 1000,
            );
        }
        // 50 samples (drawn with replacement) see most keys: the victim is the soonest to
        // expire among those seen, so one from the first half (all 50 missing the first half
        // has odds of 2^-50).
        store.set_eviction(Policy::VolatileTtl, 50, AccessMode::Lru);
        let limit = store.used_memory() - 1;
        assert!(store.evict_to(limit));
        let gone: Vec<i64> = (0..50i64)
            .filter(|i| !store.db(0).contains(format!("k{i}").as_bytes()))
            .collect();
        assert_eq!(gone.len(), 1, "{gone:?}");
        assert!(gone[0] < 25, "{gone:?}");
    }

    #[test]
    fn the_accounting_words_cost_one_word_per_key() {
        // A value (24 bytes), its expiry (8), and the measured size and access word (4 + 4).
        assert_eq!(std::mem::size_of::<Value>(), 24);
        assert_eq!(std::mem::size_of::<Entry>(), 40);
    }

    #[test]
    fn lfu_counters_grow_logarithmically_and_decay() {
        let mode = AccessMode::Lfu {
            log_factor: 10,
            decay_minutes: 1,
        };
        let mut word = mode.initial();
        assert_eq!(word & 0xff, LFU_INIT);
        for _ in 0..10_000 {
            mode.accessed(&mut word);
        }
        let counter = word & 0xff;
        // 10,000 hits with factor 10 land near 30 (Redis's table: 100 hits ~ 10, 1M hits ~ 255).
        assert!((15..=60).contains(&counter), "{counter}");
        let old = (lfu_minutes().wrapping_sub(3) & 0xffff) << 8 | 20;
        assert_eq!(lfu_decayed(old, 1), 17);
    }
}
