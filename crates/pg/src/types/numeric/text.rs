//! Parsing `numeric_in` syntax into the canonical decimal text `numeric_out` writes.

/// Most digits before the decimal point the storage format holds (weight 32767, 4 per digit).
pub(crate) const MAX_INTEGER_DIGITS: i64 = 131_072;
/// Most digits after the decimal point the storage format holds (the 14-bit display scale).
pub(crate) const MAX_SCALE: i64 = 0x3FFF;

/// A numeric value, split into the parts both wire formats are built from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Parts<'a> {
    NaN,
    Infinity,
    NegInfinity,
    /// `integer` has no leading zeros (empty for zero); `fraction` has exactly `dscale` digits.
    Finite {
        negative: bool,
        integer: &'a [u8],
        fraction: &'a [u8],
    },
}

/// Splits canonical text (as `numeric_out` writes it, and as [`canonicalize`] produces).
pub(crate) fn split_canonical(text: &str) -> Parts<'_> {
    match text {
        "NaN" => Parts::NaN,
        "Infinity" => Parts::Infinity,
        "-Infinity" => Parts::NegInfinity,
        _ => {
            let (negative, unsigned) = match text.strip_prefix('-') {
                Some(rest) => (true, rest),
                None => (false, text),
            };
            let (integer, fraction) = unsigned.split_once('.').unwrap_or((unsigned, ""));
            let integer = integer.trim_start_matches('0');
            Parts::Finite {
                negative,
                integer: integer.as_bytes(),
                fraction: fraction.as_bytes(),
            }
        }
    }
}

/// Splits plain decimal text (`-12.30`, `007`) without allocating; `None` for anything else
/// (exponents, spaces, special values), which [`canonicalize`] handles.
#[cfg(feature = "decimal")]
pub(crate) fn split_plain(raw: &[u8]) -> Option<Parts<'_>> {
    let (negative, unsigned) = match raw {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, raw),
    };
    let (integer, fraction) = match unsigned.iter().position(|&b| b == b'.') {
        Some(point) => (&unsigned[..point], &unsigned[point + 1..]),
        None => (unsigned, &[][..]),
    };
    let digits = |part: &[u8]| part.iter().all(u8::is_ascii_digit);
    if integer.is_empty()
        || !digits(integer)
        || !digits(fraction)
        || (fraction.is_empty() && unsigned.len() != integer.len())
    {
        return None;
    }
    let first_nonzero = integer
        .iter()
        .position(|&b| b != b'0')
        .unwrap_or(integer.len());
    Some(Parts::Finite {
        negative,
        integer: &integer[first_nonzero..],
        fraction,
    })
}

/// Why a text is not a numeric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ParseError {
    /// Not `numeric_in` syntax; the byte offset of the first unexpected byte.
    Syntax(usize),
    /// Well formed, but more digits than the storage format holds.
    Overflow,
}

/// Turns any `numeric_in` input (`' +1.50e1 '`, `.5`, `inf`, `NaN`) into canonical text: an
/// optional `-` (never on zero), the integer digits without leading zeros (at least `0`), and
/// `.` with the display-scale digits when the scale is not zero, or `NaN`/`Infinity`/`-Infinity`.
pub(crate) fn canonicalize(input: &[u8]) -> Result<String, ParseError> {
    let start = input.len() - input.trim_ascii_start().len();
    let trimmed = input.trim_ascii();
    if let Some(special) = special_value(trimmed) {
        return Ok(special.to_owned());
    }
    let syntax = |offset: usize| ParseError::Syntax(start + offset);
    let (negative, body, mut at) = match trimmed {
        [b'-', rest @ ..] => (true, rest, 1),
        [b'+', rest @ ..] => (false, rest, 1),
        _ => (false, trimmed, 0),
    };
    let integer_len = body.iter().take_while(|b| b.is_ascii_digit()).count();
    let integer = &body[..integer_len];
    let mut rest = &body[integer_len..];
    at += integer_len;
    let mut fraction: &[u8] = &[];
    if let [b'.', tail @ ..] = rest {
        let fraction_len = tail.iter().take_while(|b| b.is_ascii_digit()).count();
        fraction = &tail[..fraction_len];
        rest = &tail[fraction_len..];
        at += 1 + fraction_len;
    }
    if integer.is_empty() && fraction.is_empty() {
        return Err(syntax(at));
    }
    let mut exponent: i64 = 0;
    if let [b'e' | b'E', tail @ ..] = rest {
        let (exponent_negative, digits, sign_len) = match tail {
            [b'-', digits @ ..] => (true, digits, 1),
            [b'+', digits @ ..] => (false, digits, 1),
            _ => (false, tail, 0),
        };
        let digits_len = digits.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits_len == 0 {
            return Err(syntax(at + 1 + sign_len));
        }
        for &digit in &digits[..digits_len] {
            // Saturate: anything this large overflows the storage format below anyway.
            exponent = (exponent * 10 + i64::from(digit - b'0')).min(i64::from(u32::MAX));
        }
        if exponent_negative {
            exponent = -exponent;
        }
        rest = &digits[digits_len..];
        at += 1 + sign_len + digits_len;
    }
    if !rest.is_empty() {
        return Err(syntax(at));
    }
    build_canonical(negative, integer, fraction, exponent)
}

fn special_value(trimmed: &[u8]) -> Option<&'static str> {
    let is = |word: &[u8]| trimmed.eq_ignore_ascii_case(word);
    if is(b"nan") {
        Some("NaN")
    } else if is(b"infinity") || is(b"+infinity") || is(b"inf") || is(b"+inf") {
        Some("Infinity")
    } else if is(b"-infinity") || is(b"-inf") {
        Some("-Infinity")
    } else {
        None
    }
}

/// Writes the digits of `integer`.`fraction` × 10^`exponent` in canonical form.
fn build_canonical(
    negative: bool,
    integer: &[u8],
    fraction: &[u8],
    exponent: i64,
) -> Result<String, ParseError> {
    let digit_count = (integer.len() + fraction.len()) as i64;
    let digit_at = |index: i64| -> u8 {
        let index = usize::try_from(index).ok();
        let digit = index.and_then(|i| {
            if i < integer.len() {
                integer.get(i)
            } else {
                fraction.get(i - integer.len())
            }
        });
        digit.copied().unwrap_or(b'0')
    };
    // The decimal point falls before digit index `point` of integer ++ fraction.
    let point = integer.len() as i64 + exponent;
    let scale = (fraction.len() as i64 - exponent).max(0);
    if scale > MAX_SCALE {
        return Err(ParseError::Overflow);
    }
    let first_nonzero = (0..digit_count).find(|&i| digit_at(i) != b'0');
    let integer_start = first_nonzero.map_or(point, |first| first.min(point));
    if point - integer_start > MAX_INTEGER_DIGITS {
        return Err(ParseError::Overflow);
    }
    let is_zero = first_nonzero.is_none_or(|first| first >= point + scale);
    let mut text = String::with_capacity((point - integer_start + scale + 3).max(3) as usize);
    if negative && !is_zero {
        text.push('-');
    }
    if integer_start >= point {
        text.push('0');
    }
    for index in integer_start..point {
        text.push(char::from(digit_at(index)));
    }
    if scale > 0 {
        text.push('.');
        for index in point..point + scale {
            text.push(char::from(digit_at(index)));
        }
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(input: &str) -> String {
        canonicalize(input.as_bytes()).unwrap_or_else(|e| panic!("{input}: {e:?}"))
    }

    // Golden values from PostgreSQL 15, `select 'input'::numeric::text`.
    #[test]
    fn golden_numeric_in_forms() {
        for (input, output) in [
            (" +1.50e1 ", "15.0"),
            ("-0.00", "0.00"),
            (".5", "0.5"),
            ("5.", "5"),
            ("1.5E-3", "0.0015"),
            ("inf", "Infinity"),
            ("-INF", "-Infinity"),
            ("+infinity", "Infinity"),
            (" nan ", "NaN"),
            ("00012.30", "12.30"),
            ("1e-3", "0.001"),
            ("1.23e2", "123"),
            ("-0e5", "0"),
            ("0.0e-3", "0.0000"),
            ("0", "0"),
            ("-1.5", "-1.5"),
            ("123456789.000012345", "123456789.000012345"),
        ] {
            assert_eq!(canonical(input), output, "{input}");
        }
    }

    #[test]
    fn huge_values_within_the_storage_limits() {
        let big = canonical("1e1000");
        assert_eq!(big.len(), 1001);
        assert!(big.starts_with("10") && big.bytes().skip(1).all(|b| b == b'0'));
        let tiny = canonical("1e-1000");
        assert_eq!(tiny.len(), 1002);
        assert!(tiny.starts_with("0.000") && tiny.ends_with("01"));
        assert_eq!(canonical(&"9".repeat(131_072)).len(), 131_072);
        assert_eq!(
            canonicalize("9".repeat(131_073).as_bytes()),
            Err(ParseError::Overflow)
        );
        assert_eq!(canonicalize(b"1e-16384"), Err(ParseError::Overflow));
        assert_eq!(
            canonicalize(b"1e999999999999999999999"),
            Err(ParseError::Overflow)
        );
        assert_eq!(canonical("0e999999"), "0");
        assert_eq!(canonical("1e-16383").len(), 16385);
    }

    #[test]
    fn syntax_errors_name_the_offset() {
        assert_eq!(canonicalize(b""), Err(ParseError::Syntax(0)));
        assert_eq!(canonicalize(b"."), Err(ParseError::Syntax(1)));
        assert_eq!(canonicalize(b" 1x"), Err(ParseError::Syntax(2)));
        assert_eq!(canonicalize(b"1e"), Err(ParseError::Syntax(2)));
        assert_eq!(canonicalize(b"1e+"), Err(ParseError::Syntax(3)));
        assert_eq!(canonicalize(b"--1"), Err(ParseError::Syntax(1)));
        assert_eq!(canonicalize(b"1 2"), Err(ParseError::Syntax(1)));
    }

    #[test]
    fn canonical_text_splits_into_parts() {
        assert_eq!(
            split_canonical("-12.30"),
            Parts::Finite {
                negative: true,
                integer: b"12",
                fraction: b"30"
            }
        );
        assert_eq!(
            split_canonical("0"),
            Parts::Finite {
                negative: false,
                integer: b"",
                fraction: b""
            }
        );
        assert_eq!(split_canonical("-Infinity"), Parts::NegInfinity);
    }
}
