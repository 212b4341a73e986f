//! Compact byte strings for keys, members and string values: short ones live inline, with no
//! allocation, so a million small keys cost a third of the memory they would as boxed slices.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

/// Longest string stored inline: the enum stays 24 bytes (tag, length, 22 bytes).
const INLINE: usize = 22;

/// An immutable-length byte string: inline up to 22 bytes, else one exact-size heap block.
#[derive(Clone)]
pub enum CompactBytes {
    /// Up to 22 bytes, stored in place.
    Inline {
        /// Number of bytes of `data` in use.
        len: u8,
        /// The bytes, zero-padded.
        data: [u8; INLINE],
    },
    /// Longer strings, in one exact-size heap block.
    Heap(Box<[u8]>),
}

impl CompactBytes {
    /// The empty string (a `const fn`, so statics can hold one).
    pub const fn new() -> CompactBytes {
        CompactBytes::Inline {
            len: 0,
            data: [0; INLINE],
        }
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        match self {
            CompactBytes::Inline { len, data } => &data[..usize::from(*len)],
            CompactBytes::Heap(bytes) => bytes,
        }
    }

    /// Replaces the contents with `bytes`.
    pub fn assign(&mut self, bytes: &[u8]) {
        *self = CompactBytes::from(bytes);
    }

    /// Appends `tail` (APPEND).
    pub fn extend_from_slice(&mut self, tail: &[u8]) {
        self.modify(|bytes| bytes.extend_from_slice(tail));
    }

    /// The bytes, writable in place (SETBIT, BITFIELD, SETRANGE within the length).
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        match self {
            CompactBytes::Inline { len, data } => &mut data[..usize::from(*len)],
            CompactBytes::Heap(bytes) => bytes,
        }
    }

    /// Grows to at least `len` bytes, padding with zeros (bit commands writing past the end).
    pub fn grow_zeroed(&mut self, len: usize) {
        if self.len() < len {
            self.modify(|bytes| bytes.resize(len, 0));
        }
    }

    /// Edits the contents as a vector (SETRANGE and friends), then stores them compactly again.
    pub fn modify<R>(&mut self, edit: impl FnOnce(&mut Vec<u8>) -> R) -> R {
        let mut bytes = match std::mem::take(self) {
            CompactBytes::Heap(boxed) => boxed.into_vec(),
            inline => inline.as_slice().to_vec(),
        };
        let result = edit(&mut bytes);
        *self = CompactBytes::from(bytes);
        result
    }
}

impl Default for CompactBytes {
    fn default() -> Self {
        CompactBytes::new()
    }
}

impl Deref for CompactBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl AsRef<[u8]> for CompactBytes {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl Borrow<[u8]> for CompactBytes {
    fn borrow(&self) -> &[u8] {
        self.as_slice()
    }
}

impl From<&[u8]> for CompactBytes {
    fn from(bytes: &[u8]) -> Self {
        if bytes.len() <= INLINE {
            let mut data = [0; INLINE];
            data[..bytes.len()].copy_from_slice(bytes);
            CompactBytes::Inline {
                // Fits: at most INLINE (22).
                len: bytes.len() as u8,
                data,
            }
        } else {
            CompactBytes::Heap(bytes.into())
        }
    }
}

impl<const N: usize> From<&[u8; N]> for CompactBytes {
    fn from(bytes: &[u8; N]) -> Self {
        CompactBytes::from(&bytes[..])
    }
}

impl From<Vec<u8>> for CompactBytes {
    fn from(bytes: Vec<u8>) -> Self {
        if bytes.len() <= INLINE {
            CompactBytes::from(bytes.as_slice())
        } else {
            CompactBytes::Heap(bytes.into_boxed_slice())
        }
    }
}

impl From<Box<[u8]>> for CompactBytes {
    fn from(bytes: Box<[u8]>) -> Self {
        if bytes.len() <= INLINE {
            CompactBytes::from(&*bytes)
        } else {
            CompactBytes::Heap(bytes)
        }
    }
}

impl From<&str> for CompactBytes {
    fn from(text: &str) -> Self {
        CompactBytes::from(text.as_bytes())
    }
}

// Hash, equality and order are the byte string's, so maps keyed by it can be queried by `&[u8]`
// (the `Borrow` contract).
impl Hash for CompactBytes {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state);
    }
}

impl PartialEq for CompactBytes {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for CompactBytes {}

impl PartialOrd for CompactBytes {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for CompactBytes {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_slice().cmp(other.as_slice())
    }
}

impl PartialEq<[u8]> for CompactBytes {
    fn eq(&self, other: &[u8]) -> bool {
        self.as_slice() == other
    }
}

impl fmt::Debug for CompactBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self.as_slice()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    #[test]
    fn stays_small() {
        assert_eq!(std::mem::size_of::<CompactBytes>(), 24);
    }

    #[test]
    fn inline_and_heap_boundary() {
        for n in [0, 1, 21, 22, 23, 100] {
            let bytes = vec![b'x'; n];
            let compact = CompactBytes::from(bytes.as_slice());
            assert_eq!(&*compact, bytes.as_slice());
            assert_eq!(matches!(compact, CompactBytes::Inline { .. }), n <= INLINE);
        }
    }

    #[test]
    fn maps_are_queried_by_slices() {
        let mut map = HashMap::new();
        map.insert(CompactBytes::from(&b"short"[..]), 1);
        map.insert(CompactBytes::from(&[b'k'; 40][..]), 2);
        assert_eq!(map.get(&b"short"[..]), Some(&1));
        assert_eq!(map.get(&[b'k'; 40][..]), Some(&2));
    }

    proptest! {
        #[test]
        fn edits_match_a_vector(start in proptest::collection::vec(any::<u8>(), 0..40),
                                tails in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..30), 0..5)) {
            let mut compact = CompactBytes::from(start.as_slice());
            let mut model = start.clone();
            for tail in &tails {
                compact.extend_from_slice(tail);
                model.extend_from_slice(tail);
                prop_assert_eq!(&*compact, model.as_slice());
            }
            compact.modify(|v| v.truncate(3));
            model.truncate(3);
            prop_assert_eq!(&*compact, model.as_slice());
        }
    }
}
