//! Number parsing and formatting with Redis's exact rules (string2ll, strtod, %.17g).

/// Parses a signed 64-bit integer as Redis's string2ll does: optional '-', no '+', no leading
/// zeros, no spaces, at most 20 characters.
pub fn parse_i64(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let (negative, digits) = match s {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, s),
    };
    match digits.first() {
        Some(b'1'..=b'9') => {}
        _ => return None,
    }
    let mut value: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    if negative {
        if value > i64::MAX as u64 + 1 {
            return None;
        }
        Some((value as i128).wrapping_neg() as i64)
    } else {
        i64::try_from(value).ok()
    }
}

/// Parses a double as Redis's getDoubleFromObject does: no leading space, no trailing bytes,
/// no NaN; "inf", "+inf" and "-inf" are accepted.
pub fn parse_f64(s: &[u8]) -> Option<f64> {
    if s.is_empty() || s.first().is_some_and(u8::is_ascii_whitespace) {
        return None;
    }
    let text = std::str::from_utf8(s).ok()?;
    let value: f64 = text.parse().ok().or_else(|| parse_hex_float(text))?;
    if value.is_nan() {
        return None;
    }
    // strtod accepts "inf"/"infinity" spelled in any case, as Rust does; it rejects "nan" above.
    Some(value)
}

/// strtod also reads C hexadecimal floats such as 0x10; only the integral form is supported here.
fn parse_hex_float(text: &str) -> Option<f64> {
    let (negative, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let hex = body
        .strip_prefix("0x")
        .or_else(|| body.strip_prefix("0X"))?;
    let value = u64::from_str_radix(hex, 16).ok()? as f64;
    Some(if negative { -value } else { value })
}

/// Appends `value` formatted like C's `%.17g` (what Redis 7.0 replies for scores).
pub fn push_g17(out: &mut Vec<u8>, value: f64) {
    if value.is_infinite() {
        out.extend_from_slice(if value > 0.0 { b"inf" } else { b"-inf" });
        return;
    }
    if value == 0.0 {
        out.extend_from_slice(if value.is_sign_negative() {
            b"-0"
        } else {
            b"0"
        });
        return;
    }
    // 17 significant digits, correctly rounded: d.dddddddddddddddde±X
    let sci = format!("{value:.16e}");
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).collect();
    if negative {
        out.push(b'-');
    }
    if (-4..17).contains(&exponent) {
        // Fixed notation with 16 - exponent decimals, then trailing zeros trimmed.
        if exponent >= 0 {
            let int_len = (exponent + 1) as usize;
            out.extend_from_slice(&digits[..int_len.min(digits.len())]);
            let frac = trim_zeros(&digits[int_len.min(digits.len())..]);
            if !frac.is_empty() {
                out.push(b'.');
                out.extend_from_slice(frac);
            }
        } else {
            out.extend_from_slice(b"0.");
            for _ in 0..(-exponent - 1) {
                out.push(b'0');
            }
            out.extend_from_slice(trim_zeros(&digits));
        }
    } else {
        out.push(digits.first().copied().unwrap_or(b'0'));
        let frac = trim_zeros(digits.get(1..).unwrap_or(&[]));
        if !frac.is_empty() {
            out.push(b'.');
            out.extend_from_slice(frac);
        }
        out.push(b'e');
        out.push(if exponent < 0 { b'-' } else { b'+' });
        let magnitude = exponent.unsigned_abs();
        if magnitude < 10 {
            out.push(b'0');
        }
        out.extend_from_slice(itoa::Buffer::new().format(magnitude).as_bytes());
    }
}

fn trim_zeros(digits: &[u8]) -> &[u8] {
    let end = digits.iter().rposition(|&d| d != b'0').map_or(0, |i| i + 1);
    &digits[..end]
}

/// Appends `value` in Redis's "human" float form (INCRBYFLOAT, HINCRBYFLOAT): plain decimal
/// notation, no exponent, trailing zeros trimmed. Redis computes in long double; this uses the
/// shortest representation that round-trips the f64.
pub fn push_human(out: &mut Vec<u8>, value: f64) {
    if value == value.trunc() && value.abs() < 1e17 {
        out.extend_from_slice(itoa::Buffer::new().format(value as i64).as_bytes());
        return;
    }
    let text = format!("{value}");
    if text.contains('e') {
        let precise = format!("{value:.17}");
        let trimmed = precise.trim_end_matches('0').trim_end_matches('.');
        out.extend_from_slice(trimmed.as_bytes());
    } else {
        out.extend_from_slice(text.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g17(v: f64) -> String {
        let mut out = Vec::new();
        push_g17(&mut out, v);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn string2ll_rules() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"-12"), Some(-12));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        for bad in [
            &b""[..],
            b"+1",
            b"01",
            b"-0",
            b" 1",
            b"1 ",
            b"9223372036854775808",
            b"1.0",
            b"-",
        ] {
            assert_eq!(parse_i64(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn doubles() {
        assert_eq!(parse_f64(b"1.5"), Some(1.5));
        assert_eq!(parse_f64(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_f64(b"+inf"), Some(f64::INFINITY));
        assert_eq!(parse_f64(b"5e3"), Some(5000.0));
        assert_eq!(parse_f64(b"nan"), None);
        assert_eq!(parse_f64(b" 1"), None);
        assert_eq!(parse_f64(b"1x"), None);
    }

    #[test]
    fn percent_g17() {
        assert_eq!(g17(1.0), "1");
        assert_eq!(g17(1.5), "1.5");
        assert_eq!(g17(1.1), "1.1000000000000001");
        assert_eq!(g17(-2.5), "-2.5");
        assert_eq!(g17(1e20), "1e+20");
        assert_eq!(g17(1.5e-7), "1.4999999999999999e-07");
        assert_eq!(g17(0.001), "0.001");
        assert_eq!(g17(123456789.0), "123456789");
        assert_eq!(g17(f64::INFINITY), "inf");
    }

    #[test]
    fn human_floats() {
        let h = |v: f64| {
            let mut out = Vec::new();
            push_human(&mut out, v);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(h(10.5), "10.5");
        assert_eq!(h(5200.0), "5200");
        assert_eq!(h(-3.25), "-3.25");
    }
}
