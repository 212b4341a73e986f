//! Numeric and boolean field values: floats, `i` integers, `u` unsigned integers, booleans.

use crate::error::{ErrorKind, Fail};
use crate::point::FieldValue;

/// Why a run of decimal digits did not give a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DigitsError {
    /// Empty, or a byte other than `0`-`9`.
    Syntax,
    /// Digits only, but too many for 64 bits.
    Overflow,
}

/// The value of eight ASCII digits read as a little-endian word (first digit in the lowest
/// byte), or a syntax error when any byte is not `0`-`9`.
#[inline(always)]
fn eight_digits(word: u64) -> Result<u64, DigitsError> {
    const HIGH_NIBBLES: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    const THREES: u64 = 0x3030_3030_3030_3030;
    // Every byte is 0x30..=0x3F, and adding 6 keeps it there only for 0x30..=0x39 (no carry
    // crosses bytes: 0x3F + 6 < 0x100).
    if word & HIGH_NIBBLES != THREES
        || word.wrapping_add(0x0606_0606_0606_0606) & HIGH_NIBBLES != THREES
    {
        return Err(DigitsError::Syntax);
    }
    // Pairs, then quads, then the eight digits: each step multiplies the higher-order half by
    // its power of ten and adds the lower-order one, all lanes at once.
    let pairs = ((word & 0x0F0F_0F0F_0F0F_0F0F).wrapping_mul(10 << 8 | 1)) >> 8;
    let quads = ((pairs & 0x00FF_00FF_00FF_00FF).wrapping_mul(100 << 16 | 1)) >> 16;
    Ok(((quads & 0x0000_FFFF_0000_FFFF).wrapping_mul(10_000 << 32 | 1)) >> 32)
}

/// Parses `[0-9]+` into a u64.
#[inline(always)]
pub(crate) fn parse_u64_digits(digits: &[u8]) -> Result<u64, DigitsError> {
    if digits.is_empty() {
        return Err(DigitsError::Syntax);
    }
    // Up to 19 digits cannot overflow a u64: the loop then needs no overflow checks.
    if digits.len() <= 19 {
        let mut value: u64 = 0;
        let mut rest = digits;
        // Eight digits at a time: a nanosecond timestamp is 19 digits, and a digit-by-digit
        // loop is a chain of dependent multiplications.
        while let Some((chunk, tail)) = rest.split_first_chunk::<8>() {
            value = value * 100_000_000 + eight_digits(u64::from_le_bytes(*chunk))?;
            rest = tail;
        }
        for &b in rest {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return Err(DigitsError::Syntax);
            }
            value = value * 10 + u64::from(d);
        }
        return Ok(value);
    }
    let mut value: u64 = 0;
    let mut overflow = false;
    for &b in digits {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return Err(DigitsError::Syntax);
        }
        match value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(d)))
        {
            Some(v) => value = v,
            None => overflow = true,
        }
    }
    if overflow {
        Err(DigitsError::Overflow)
    } else {
        Ok(value)
    }
}

/// Parses `-?[0-9]+` into an i64.
#[inline(always)]
pub(crate) fn parse_i64(text: &[u8]) -> Result<i64, DigitsError> {
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let magnitude = parse_u64_digits(digits)?;
    if negative {
        if magnitude <= i64::MAX as u64 + 1 {
            Ok((magnitude as i64).wrapping_neg())
        } else {
            Err(DigitsError::Overflow)
        }
    } else {
        i64::try_from(magnitude).map_err(|_| DigitsError::Overflow)
    }
}

/// Parses a numeric field value token (it starts with `-`, a digit or `.`): a trailing `i`
/// makes it an integer, a trailing `u` an unsigned integer, anything else a float.
#[inline(always)]
pub(crate) fn parse_number(token: &str, at: usize) -> Result<FieldValue<'static>, Fail> {
    let bytes = token.as_bytes();
    let end = at + token.len();
    match bytes.split_last() {
        Some((b'i', body)) => match parse_i64(body) {
            Ok(v) => Ok(FieldValue::Int(v)),
            Err(DigitsError::Syntax) => Err(Fail::span(ErrorKind::InvalidInteger, at, end)),
            Err(DigitsError::Overflow) => Err(Fail::span(ErrorKind::IntegerOutOfRange, at, end)),
        },
        Some((b'u', body)) => match parse_u64_digits(body) {
            Ok(v) => Ok(FieldValue::UInt(v)),
            Err(DigitsError::Syntax) => Err(Fail::span(ErrorKind::InvalidUnsigned, at, end)),
            Err(DigitsError::Overflow) => Err(Fail::span(ErrorKind::UnsignedOutOfRange, at, end)),
        },
        _ => parse_float(token, at).map(FieldValue::Float),
    }
}

/// Parses a float: `-?(digits[.digits?]|.digits)([eE][+-]?digits)?`, as InfluxDB accepts
/// (`1`, `1.`, `.5`, `-1.5e-3`, `1.E+78`). NaN and infinity are rejected, and so is a value
/// too large for an f64 (which a float parser turns into infinity).
///
/// fast-float2 rather than the standard parser (both exact): on realistic metric values
/// (15-17 significant digits, as Telegraf prints them) it made the whole parse 6% faster on
/// a Telegraf batch and 9% on 60-float rows (A/B, medians of 3; benches/float.rs has the
/// token-level comparison). A hand-written Clinger fast path for short decimals was tried
/// and dropped: it won on 9-digit values and lost 1.6x on 17-digit ones.
#[inline(always)]
pub(crate) fn parse_float(token: &str, at: usize) -> Result<f64, Fail> {
    let end = at + token.len();
    // The token starts with `-`, a digit or `.`; the parser's grammar then differs from
    // InfluxDB's only by accepting `-inf`, `-infinity` and `-nan`, caught by is_finite
    // (tests below check the grammar against the standard parser's).
    match fast_float2::parse::<f64, _>(token) {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) if is_nan_or_inf(token) => Err(Fail::span(ErrorKind::NanOrInfinity, at, end)),
        Ok(_) => Err(Fail::span(ErrorKind::FloatOutOfRange, at, end)),
        Err(_) => Err(Fail::span(ErrorKind::InvalidFloat, at, end)),
    }
}

/// Whether a token spells NaN or infinity in any of the ways a float parser might accept.
pub(crate) fn is_nan_or_inf(token: &str) -> bool {
    let t = token.strip_prefix(['-', '+']).unwrap_or(token);
    ["nan", "inf", "infinity"]
        .iter()
        .any(|word| t.eq_ignore_ascii_case(word))
}

/// Parses a boolean token: `t T true True TRUE f F false False FALSE`.
#[inline(always)]
pub(crate) fn parse_bool(token: &str, at: usize) -> Result<bool, Fail> {
    match token {
        "t" | "T" | "true" | "True" | "TRUE" => Ok(true),
        "f" | "F" | "false" | "False" | "FALSE" => Ok(false),
        _ => Err(Fail::span(ErrorKind::InvalidBoolean, at, at + token.len())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(r: Result<FieldValue<'static>, Fail>) -> ErrorKind {
        r.unwrap_err().kind
    }

    #[test]
    fn digit_runs_agree_with_the_standard_parser() {
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        for len in 1..=20 {
            for _ in 0..200 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let digits: Vec<u8> = (0..len)
                    .map(|i| b'0' + ((seed >> (i % 16 * 4)) % 10) as u8)
                    .collect();
                let text = std::str::from_utf8(&digits).unwrap_or_default();
                assert_eq!(
                    parse_u64_digits(&digits).ok(),
                    text.parse::<u64>().ok(),
                    "{text}"
                );
                // Any byte that is not a digit, anywhere, is a syntax error.
                for bad in [b'/', b':', b'a', b' ', 0xB0, b'0' - 0x10] {
                    let mut broken = digits.clone();
                    let at = (seed as usize) % len;
                    broken[at] = bad;
                    assert_eq!(parse_u64_digits(&broken), Err(DigitsError::Syntax));
                }
            }
        }
    }

    #[test]
    fn integers() {
        assert_eq!(parse_number("1i", 0), Ok(FieldValue::Int(1)));
        assert_eq!(parse_number("-0i", 0), Ok(FieldValue::Int(0)));
        assert_eq!(parse_number("007i", 0), Ok(FieldValue::Int(7)));
        assert_eq!(
            parse_number("9223372036854775807i", 0),
            Ok(FieldValue::Int(i64::MAX))
        );
        assert_eq!(
            parse_number("-9223372036854775808i", 0),
            Ok(FieldValue::Int(i64::MIN))
        );
        assert_eq!(
            kind(parse_number("9223372036854775808i", 0)),
            ErrorKind::IntegerOutOfRange
        );
        assert_eq!(
            kind(parse_number("-9223372036854775809i", 0)),
            ErrorKind::IntegerOutOfRange
        );
        assert_eq!(
            kind(parse_number("99999999999999999999999i", 0)),
            ErrorKind::IntegerOutOfRange
        );
        for bad in ["i", "-i", "1.5i", "1e3i", "--1i", "1-i", "1ii", ".i"] {
            assert_eq!(
                kind(parse_number(bad, 0)),
                ErrorKind::InvalidInteger,
                "{bad}"
            );
        }
    }

    #[test]
    fn unsigned() {
        assert_eq!(parse_number("0u", 0), Ok(FieldValue::UInt(0)));
        assert_eq!(
            parse_number("18446744073709551615u", 0),
            Ok(FieldValue::UInt(u64::MAX))
        );
        assert_eq!(
            kind(parse_number("18446744073709551616u", 0)),
            ErrorKind::UnsignedOutOfRange
        );
        for bad in ["u", "-1u", "1.0u", "1e2u", "1uu"] {
            assert_eq!(
                kind(parse_number(bad, 0)),
                ErrorKind::InvalidUnsigned,
                "{bad}"
            );
        }
    }

    #[test]
    fn floats() {
        for (text, want) in [
            ("1", 1.0),
            ("-1", -1.0),
            ("1.5", 1.5),
            ("1.", 1.0),
            (".5", 0.5),
            ("-.5", -0.5),
            ("1e3", 1000.0),
            ("1E+3", 1000.0),
            ("1.e+78", 1e78),
            ("-1.234456e+78", -1.234456e78),
            ("2.5e-3", 0.0025),
            ("007.5", 7.5),
            ("1e-400", 0.0),
        ] {
            assert_eq!(parse_number(text, 0), Ok(FieldValue::Float(want)), "{text}");
        }
        for bad in [
            ".", "-", "-.", "1e", "1e+", "1.2.3", "1e5e5", "1x", "0x10", "1_000",
        ] {
            assert_eq!(kind(parse_number(bad, 0)), ErrorKind::InvalidFloat, "{bad}");
        }
        for bad in ["-inf", "-infinity", "-nan", "-NaN"] {
            assert_eq!(
                kind(parse_number(bad, 0)),
                ErrorKind::NanOrInfinity,
                "{bad}"
            );
        }
        assert_eq!(kind(parse_number("1e400", 0)), ErrorKind::FloatOutOfRange);
        assert_eq!(kind(parse_number("-1e309", 0)), ErrorKind::FloatOutOfRange);
    }

    #[test]
    fn floats_read_exactly_as_the_standard_parser_reads_them() {
        let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..200_000 {
            let digits = 1 + (next() % 19) as usize;
            let mut text: String = (0..digits)
                .map(|_| char::from(b'0' + (next() % 10) as u8))
                .collect();
            if next() % 4 != 0 {
                let at = (next() % (digits as u64 + 1)) as usize;
                text.insert(at, '.');
            }
            if next() % 2 == 0 {
                text.insert(0, '-');
            }
            if next() % 3 == 0 {
                let sign = ["", "+", "-"][(next() % 3) as usize];
                text.push_str(&format!("e{sign}{}", next() % 40));
            }
            let want = text.parse::<f64>().ok();
            assert_eq!(
                parse_float(&text, 0).ok().map(f64::to_bits),
                want.map(f64::to_bits),
                "{text}"
            );
        }
        for text in [
            "9007199254740993",
            "0.1",
            "-0",
            "-0.0",
            "123456789012345678.9",
            ".",
        ] {
            let want = text.parse::<f64>().ok().map(f64::to_bits);
            assert_eq!(parse_float(text, 0).ok().map(f64::to_bits), want, "{text}");
        }
    }

    #[test]
    fn booleans() {
        for t in ["t", "T", "true", "True", "TRUE"] {
            assert_eq!(parse_bool(t, 0), Ok(true));
        }
        for f in ["f", "F", "false", "False", "FALSE"] {
            assert_eq!(parse_bool(f, 0), Ok(false));
        }
        for bad in ["tRUE", "yes", "truex", "FAlse", "tr"] {
            assert_eq!(
                parse_bool(bad, 0).unwrap_err().kind,
                ErrorKind::InvalidBoolean
            );
        }
    }

    #[test]
    fn nan_and_inf_words() {
        assert!(is_nan_or_inf("NaN"));
        assert!(is_nan_or_inf("+Infinity"));
        assert!(!is_nan_or_inf("info"));
    }
}
