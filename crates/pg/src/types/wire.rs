//! Helpers shared by the type conversions: length checks, UTF-8 with offsets, value previews.

use super::{ConversionError, Oid};

/// The bytes of a fixed-size binary value, or an error naming the expected size.
#[inline]
pub(crate) fn fixed<const N: usize>(
    oid: Oid,
    rust_type: &'static str,
    raw: &[u8],
) -> Result<[u8; N], ConversionError> {
    match <[u8; N]>::try_from(raw) {
        Ok(bytes) => Ok(bytes),
        Err(_) => Err(wrong_size(oid, rust_type, N, raw.len())),
    }
}

#[cold]
fn wrong_size(oid: Oid, rust_type: &'static str, expected: usize, got: usize) -> ConversionError {
    ConversionError::invalid(
        oid,
        rust_type,
        format!("a binary value must be {expected} bytes long, got {got}"),
    )
}

/// `raw` as UTF-8, or an error giving the byte offset of the first bad sequence.
pub(crate) fn utf8<'a>(
    oid: Oid,
    rust_type: &'static str,
    raw: &'a [u8],
) -> Result<&'a str, ConversionError> {
    std::str::from_utf8(raw).map_err(|e| {
        ConversionError::invalid(
            oid,
            rust_type,
            format!("invalid UTF-8 at byte offset {}", e.valid_up_to()),
        )
    })
}

/// A short printable rendering of `raw` for error messages.
pub(crate) fn preview(raw: &[u8]) -> String {
    const LIMIT: usize = 64;
    let shown = &raw[..raw.len().min(LIMIT)];
    let mut text = String::from_utf8_lossy(shown).into_owned();
    if raw.len() > LIMIT {
        text.push('…');
    }
    format!("{text:?}")
}

/// An "invalid text value" error quoting the value and saying what was expected.
pub(crate) fn invalid_text(
    oid: Oid,
    rust_type: &'static str,
    raw: &[u8],
    expected: &str,
) -> ConversionError {
    ConversionError::invalid(
        oid,
        rust_type,
        format!("{} is not {expected}", preview(raw)),
    )
}

/// Parses a decimal integer: an optional sign and at least one ASCII digit, nothing else.
/// `None` when the syntax is wrong or the value overflows `i64`.
pub(crate) fn parse_i64(raw: &[u8]) -> Option<i64> {
    let (negative, digits) = match raw {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, raw),
    };
    if digits.is_empty() {
        return None;
    }
    // Accumulate negatively so that i64::MIN parses without overflow.
    let mut value: i64 = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return None;
        }
        value = value.checked_mul(10)?.checked_sub(i64::from(b - b'0'))?;
    }
    if negative {
        Some(value)
    } else {
        value.checked_neg()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_i64_limits_and_syntax() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"+12"), Some(12));
        assert_eq!(parse_i64(b"9223372036854775808"), None);
        assert_eq!(parse_i64(b"-9223372036854775809"), None);
        assert_eq!(parse_i64(b""), None);
        assert_eq!(parse_i64(b"-"), None);
        assert_eq!(parse_i64(b" 1"), None);
        assert_eq!(parse_i64(b"1a"), None);
    }

    #[test]
    fn utf8_error_names_the_offset() {
        let err = utf8(25, "&str", b"ab\xffc").unwrap_err();
        assert_eq!(err.detail(), "invalid UTF-8 at byte offset 2");
    }

    #[test]
    fn preview_truncates_long_values() {
        let long = vec![b'x'; 100];
        assert!(preview(&long).ends_with("…\""));
        assert_eq!(preview(b"ab"), "\"ab\"");
    }
}
