//! Word-at-a-time byte scans: find the first byte of a small set eight bytes per step, without a
//! branch per byte. The masks flag the lowest matching byte of a word exactly (bits above it may
//! be spurious, so only the lowest is used).

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// High bit set in each byte of `word` equal to `byte` (exact for the lowest).
#[inline(always)]
pub(crate) fn eq_mask(word: u64, byte: u8) -> u64 {
    let x = word ^ (LO * u64::from(byte));
    x.wrapping_sub(LO) & !x & HI
}

/// High bit set in each byte of `word` below `n` (`n` <= 128; exact for the lowest).
#[inline(always)]
pub(crate) fn lt_mask(word: u64, n: u8) -> u64 {
    word.wrapping_sub(LO * u64::from(n)) & !word & HI
}

/// High bit set in each byte of `word` that is not ASCII.
#[inline(always)]
pub(crate) fn high_mask(word: u64) -> u64 {
    word & HI
}

/// The index of the first byte of `bytes` for which `mask` flags its word and `special` holds.
/// `mask` must flag every byte `special` accepts (it works a word at a time, `special` on the
/// tail).
#[inline(always)]
pub(crate) fn find(
    bytes: &[u8],
    mask: impl Fn(u64) -> u64,
    special: impl Fn(u8) -> bool,
) -> Option<usize> {
    let mut rest = bytes;
    let mut offset = 0;
    while let Some((word, tail)) = rest.split_first_chunk::<8>() {
        let m = mask(u64::from_le_bytes(*word));
        if m != 0 {
            return Some(offset + (m.trailing_zeros() / 8) as usize);
        }
        offset += 8;
        rest = tail;
    }
    rest.iter().position(|&b| special(b)).map(|i| offset + i)
}

/// The first byte a CSV field must be quoted for: delimiter `,`, quote `"`, LF or CR.
#[inline]
pub(crate) fn find_csv_special(bytes: &[u8]) -> Option<usize> {
    find(
        bytes,
        |w| eq_mask(w, b',') | eq_mask(w, b'"') | eq_mask(w, b'\n') | eq_mask(w, b'\r'),
        |b| matches!(b, b',' | b'"' | b'\n' | b'\r'),
    )
}

/// The first byte COPY's text format escapes or must look at: a backslash or a control character.
#[inline]
pub(crate) fn find_text_special(bytes: &[u8]) -> Option<usize> {
    find(
        bytes,
        |w| eq_mask(w, b'\\') | lt_mask(w, 0x20),
        |b| b == b'\\' || b < 0x20,
    )
}

/// The first byte a JSON string must escape or check: `"`, `\`, a control character, or a
/// non-ASCII byte (to validate its UTF-8).
#[inline]
pub(crate) fn find_json_special(bytes: &[u8]) -> Option<usize> {
    find(
        bytes,
        |w| eq_mask(w, b'"') | eq_mask(w, b'\\') | lt_mask(w, 0x20) | high_mask(w),
        |b| b == b'"' || b == b'\\' || !(0x20..0x80).contains(&b),
    )
}

/// The first byte a JSON string must escape, in text already known to be valid UTF-8.
#[inline]
pub(crate) fn find_json_escape(bytes: &[u8]) -> Option<usize> {
    find(
        bytes,
        |w| eq_mask(w, b'"') | eq_mask(w, b'\\') | lt_mask(w, 0x20),
        |b| b == b'"' || b == b'\\' || b < 0x20,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn naive(bytes: &[u8], special: impl Fn(u8) -> bool) -> Option<usize> {
        bytes.iter().position(|&b| special(b))
    }

    proptest! {
        #[test]
        fn scans_agree_with_a_byte_loop(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            prop_assert_eq!(
                find_csv_special(&bytes),
                naive(&bytes, |b| matches!(b, b',' | b'"' | b'\n' | b'\r'))
            );
            prop_assert_eq!(find_text_special(&bytes), naive(&bytes, |b| b == b'\\' || b < 0x20));
            prop_assert_eq!(
                find_json_special(&bytes),
                naive(&bytes, |b| b == b'"' || b == b'\\' || !(0x20..0x80).contains(&b))
            );
            prop_assert_eq!(
                find_json_escape(&bytes),
                naive(&bytes, |b| b == b'"' || b == b'\\' || b < 0x20)
            );
        }

        #[test]
        fn scans_find_a_planted_byte(
            prefix in proptest::collection::vec(b' '..=b'~', 0..40),
            planted in prop::sample::select(vec![b',', b'"', b'\n', b'\r', b'\\', 0u8, 0x1f, 0x80, 0xff]),
        ) {
            let mut bytes = prefix;
            bytes.push(planted);
            bytes.extend_from_slice(b"abcdefghij");
            prop_assert_eq!(
                find_csv_special(&bytes),
                naive(&bytes, |b| matches!(b, b',' | b'"' | b'\n' | b'\r'))
            );
            prop_assert_eq!(find_text_special(&bytes), naive(&bytes, |b| b == b'\\' || b < 0x20));
            prop_assert_eq!(
                find_json_special(&bytes),
                naive(&bytes, |b| b == b'"' || b == b'\\' || !(0x20..0x80).contains(&b))
            );
        }
    }
}
