//! What a key costs and how Redis would encode it: MEMORY USAGE's byte estimate and OBJECT
//! ENCODING's name, from the engine's own layout (inline or boxed strings, index maps, chunks).

use std::mem::size_of;

use super::db::{Entry, Value};
use super::{CompactBytes, Key};

/// Bytes malloc hands out for a request of `n` (glibc: 8 bytes of header, 16-byte steps, at
/// least 32), so small heap strings are not counted as free.
fn alloc(n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    (n + 8).div_ceil(16).max(2) * 16
}

/// Heap bytes a compact string holds beyond its own 24 bytes (none when inline).
fn heap_of(bytes: &CompactBytes) -> usize {
    match bytes {
        CompactBytes::Inline { .. } => 0,
        CompactBytes::Heap(b) => alloc(b.len()),
    }
}

/// One slot of an index map: the entry (hash, key, value) plus its index in the hash table
/// (a word and a control byte, at a load of 7/8).
const fn map_slot(entry: usize) -> usize {
    8 + entry + (9usize * 8).div_ceil(7)
}

/// Mean heap bytes per element over the first `samples` elements (all when 0), times `len`:
/// MEMORY USAGE's SAMPLES, as Redis samples big collections instead of walking them.
fn sampled<'a, I>(items: I, len: usize, samples: usize) -> usize
where
    I: Iterator<Item = usize> + 'a,
{
    if len == 0 {
        return 0;
    }
    let take = if samples == 0 { len } else { samples.min(len) };
    let seen: usize = items.take(take).sum();
    if take == len {
        seen
    } else {
        seen * len / take.max(1)
    }
}

/// Estimated bytes held for `key` and its entry: the keyspace slot, the key, the value's
/// structure and its elements. `samples` bounds how many elements are looked at (0: all).
pub fn entry_bytes(key: &[u8], entry: &Entry, samples: usize) -> usize {
    let key_heap = if key.len() > 22 { alloc(key.len()) } else { 0 };
    let slot = map_slot(size_of::<Key>() + size_of::<Entry>()) + key_heap;
    slot + value_bytes(&entry.value, samples)
}

/// Heap bytes of a value beyond its slot in the keyspace.
pub fn value_bytes(value: &Value, samples: usize) -> usize {
    match value {
        Value::Str(s) => heap_of(s),
        Value::List(list) => {
            let header = alloc(size_of::<std::collections::VecDeque<Key>>());
            let slots = alloc(list.capacity() * size_of::<Key>());
            header + slots + sampled(list.iter().map(heap_of), list.len(), samples)
        }
        Value::Hash(hash) => {
            let header = alloc(size_of::<super::Hash>());
            let slots = hash.capacity() * map_slot(2 * size_of::<Key>());
            let items = hash.iter().map(|(f, v)| heap_of(f) + heap_of(v));
            header + slots + sampled(items, hash.len(), samples)
        }
        Value::Set(set) => {
            let header = alloc(size_of::<super::Set>());
            let slots = set.capacity() * map_slot(size_of::<Key>());
            header + slots + sampled(set.iter().map(heap_of), set.len(), samples)
        }
        Value::ZSet(zset) => {
            // A member lives twice: in the score map and in the rank order (with a quarter of
            // slack in the order's chunks).
            let header = alloc(size_of::<super::ZSet>());
            let per_member = map_slot(size_of::<Key>() + 8) + (8 + size_of::<Key>()) * 5 / 4;
            let items = zset
                .iter()
                .map(|(m, _)| 2 * if m.len() > 22 { alloc(m.len()) } else { 0 });
            header + zset.len() * per_member + sampled(items, zset.len(), samples)
        }
        Value::Stream(stream) => alloc(stream.heap_size()),
    }
}

/// The thresholds under which Redis keeps a collection compact (its `*-max-*` parameters).
#[derive(Debug, Clone, Copy)]
pub struct EncodingLimits {
    /// `hash-max-listpack-entries`.
    pub hash_entries: usize,
    /// `hash-max-listpack-value`.
    pub hash_value: usize,
    /// `set-max-intset-entries`.
    pub set_intset_entries: usize,
    /// `zset-max-listpack-entries`.
    pub zset_entries: usize,
    /// `zset-max-listpack-value`.
    pub zset_value: usize,
}

impl Default for EncodingLimits {
    fn default() -> Self {
        Self {
            hash_entries: 512,
            hash_value: 64,
            set_intset_entries: 512,
            zset_entries: 128,
            zset_value: 64,
        }
    }
}

/// Whether Redis would store `bytes` as an integer (a canonical i64 of at most 20 characters).
fn is_int(bytes: &[u8]) -> bool {
    bytes.len() <= 20
        && crate::num::parse_i64(bytes).is_some_and(|n| n.to_string().as_bytes() == bytes)
}

/// The name OBJECT ENCODING gives the value: the encoding Redis 7.0 would use for a value of
/// this type and size. Sluice keeps one layout per type, so this reports the shape, not a
/// conversion history (Redis never converts a big encoding back; this does once it shrinks).
pub fn encoding(value: &Value, limits: &EncodingLimits) -> &'static str {
    match value {
        Value::Str(s) if is_int(s) => "int",
        Value::Str(s) if s.len() <= 44 => "embstr",
        Value::Str(_) => "raw",
        // Redis 7.0 keeps every list in a quicklist (the listpack encoding came in 7.2).
        Value::List(_) => "quicklist",
        Value::Hash(h) => {
            let small = h.len() <= limits.hash_entries
                && h.iter()
                    .all(|(f, v)| f.len() <= limits.hash_value && v.len() <= limits.hash_value);
            if small { "listpack" } else { "hashtable" }
        }
        Value::Set(s) => {
            if s.len() <= limits.set_intset_entries && s.iter().all(|m| is_int(m)) {
                "intset"
            } else {
                "hashtable"
            }
        }
        Value::ZSet(z) => {
            let small = z.len() <= limits.zset_entries
                && z.iter().all(|(m, _)| m.len() <= limits.zset_value);
            if small { "listpack" } else { "skiplist" }
        }
        Value::Stream(s) => s.encoding_name(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string(bytes: &[u8]) -> Value {
        Value::Str(CompactBytes::from(bytes))
    }

    #[test]
    fn strings_are_named_as_redis_names_them() {
        let limits = EncodingLimits::default();
        assert_eq!(encoding(&string(b"12345"), &limits), "int");
        assert_eq!(encoding(&string(b"-7"), &limits), "int");
        assert_eq!(encoding(&string(b"007"), &limits), "embstr");
        assert_eq!(encoding(&string(&[b'a'; 44]), &limits), "embstr");
        assert_eq!(encoding(&string(&[b'a'; 45]), &limits), "raw");
    }

    #[test]
    fn sets_leave_intset_past_the_limit_or_on_a_non_integer() {
        let limits = EncodingLimits {
            set_intset_entries: 3,
            ..EncodingLimits::default()
        };
        let mut set = super::super::Set::default();
        for m in ["1", "2", "3"] {
            set.insert(Key::from(m.as_bytes()));
        }
        assert_eq!(
            encoding(&Value::Set(Box::new(set.clone())), &limits),
            "intset"
        );
        set.insert(Key::from(&b"4"[..]));
        assert_eq!(
            encoding(&Value::Set(Box::new(set.clone())), &limits),
            "hashtable"
        );
        set.shift_remove(&b"4"[..]);
        set.insert(Key::from(&b"x"[..]));
        assert_eq!(encoding(&Value::Set(Box::new(set)), &limits), "hashtable");
    }

    #[test]
    fn usage_grows_with_the_value() {
        let entry = |value| Entry::new(value, 0, 0);
        let small = entry_bytes(b"k", &entry(string(b"v")), 5);
        let big = entry_bytes(b"k", &entry(string(&[b'x'; 1000])), 5);
        assert!(small > 24 && small < 200, "{small}");
        assert!(big >= small + 1000, "{small} {big}");
        let mut list = std::collections::VecDeque::new();
        for _ in 0..1000 {
            list.push_back(Key::from(&[b'y'; 100][..]));
        }
        let list = entry_bytes(b"k", &entry(Value::List(Box::new(list))), 5);
        assert!(list > 100_000 && list < 200_000, "{list}");
    }
}
