//! numeric's binary format: base-10000 digits with a weight, a sign and a display scale.
//!
//! Layout (`numeric_send`): ndigits u16, weight i16 (of the first digit, in powers of 10000),
//! sign u16, dscale u16, then ndigits digits of 0..=9999, all big-endian. Trailing and leading
//! zero digits are not sent; the display scale says how many decimals the text shows.

use super::text::{MAX_SCALE, Parts};
use crate::types::binary::encode_numeric;
use bytes::{BufMut, BytesMut};

pub(crate) const SIGN_POSITIVE: u16 = 0x0000;
pub(crate) const SIGN_NEGATIVE: u16 = 0x4000;
pub(crate) const SIGN_NAN: u16 = 0xC000;
pub(crate) const SIGN_INFINITY: u16 = 0xD000;
pub(crate) const SIGN_NEG_INFINITY: u16 = 0xF000;

/// The decoded header and digits of a binary numeric.
pub(crate) struct BinaryNumeric<'a> {
    pub(crate) weight: i16,
    pub(crate) sign: u16,
    pub(crate) dscale: u16,
    /// Big-endian u16 pairs, each checked to be at most 9999.
    digits: &'a [u8],
}

impl BinaryNumeric<'_> {
    /// Each base-10000 digit sent, with its weight (its place value is 10000^weight).
    #[cfg(feature = "decimal")]
    pub(crate) fn weighted_digits(&self) -> impl Iterator<Item = (i32, u16)> + '_ {
        let first = i32::from(self.weight);
        // At most 65535 digits, so the index fits i32.
        self.digits
            .chunks_exact(2)
            .enumerate()
            .map(move |(index, pair)| {
                (first - index as i32, u16::from_be_bytes([pair[0], pair[1]]))
            })
    }

    /// The base-10000 digit whose place value is 10000^`weight`, or 0 outside the digits.
    pub(crate) fn digit_at_weight(&self, weight: i32) -> u16 {
        let index = i32::from(self.weight) - weight;
        usize::try_from(index)
            .ok()
            .and_then(|i| self.digits.get(2 * i..2 * i + 2))
            .map_or(0, |pair| u16::from_be_bytes([pair[0], pair[1]]))
    }
}

/// Reads the header and checks the digits; `Err` says what is wrong.
pub(crate) fn parse(raw: &[u8]) -> Result<BinaryNumeric<'_>, String> {
    let [n0, n1, w0, w1, s0, s1, d0, d1, digits @ ..] = raw else {
        return Err(format!(
            "a binary numeric needs an 8-byte header, got {} bytes",
            raw.len()
        ));
    };
    let ndigits = usize::from(u16::from_be_bytes([*n0, *n1]));
    let weight = i16::from_be_bytes([*w0, *w1]);
    let sign = u16::from_be_bytes([*s0, *s1]);
    let dscale = u16::from_be_bytes([*d0, *d1]);
    if digits.len() != 2 * ndigits {
        return Err(format!(
            "the header announces {ndigits} digits ({} bytes) but {} bytes follow",
            2 * ndigits,
            digits.len()
        ));
    }
    match sign {
        SIGN_POSITIVE | SIGN_NEGATIVE => {
            if i64::from(dscale) > MAX_SCALE {
                return Err(format!("display scale {dscale} is above {MAX_SCALE}"));
            }
            if let Some(bad) = digits
                .chunks_exact(2)
                .position(|p| u16::from_be_bytes([p[0], p[1]]) > 9999)
            {
                return Err(format!("base-10000 digit {bad} is above 9999"));
            }
        }
        // The server sends no digits for these, and whatever display scale; ignore both.
        SIGN_NAN | SIGN_INFINITY | SIGN_NEG_INFINITY => {}
        _ => return Err(format!("unknown sign code {sign:#06x}")),
    }
    Ok(BinaryNumeric {
        weight,
        sign,
        dscale,
        digits,
    })
}

/// Writes the canonical text of a binary numeric, as `numeric_out` does.
pub(crate) fn decode_to_text(raw: &[u8]) -> Result<String, String> {
    let value = parse(raw)?;
    let text = match value.sign {
        SIGN_NAN => return Ok("NaN".to_owned()),
        SIGN_INFINITY => return Ok("Infinity".to_owned()),
        SIGN_NEG_INFINITY => return Ok("-Infinity".to_owned()),
        _ => value,
    };
    let weight = i32::from(text.weight);
    let dscale = usize::from(text.dscale);
    let mut out = String::with_capacity(4 * (weight.max(0) as usize + 1) + dscale + 2);
    // Integer part: the first non-zero base-10000 digit unpadded, the rest as four digits.
    let mut places = (0..=weight)
        .rev()
        .skip_while(|&place| text.digit_at_weight(place) == 0);
    match places.next() {
        Some(place) => out.push_str(itoa::Buffer::new().format(text.digit_at_weight(place))),
        None => out.push('0'),
    }
    for place in places {
        push_four(&mut out, text.digit_at_weight(place));
    }
    if dscale > 0 {
        out.push('.');
        let start = out.len();
        let mut place = -1;
        while out.len() - start < dscale {
            push_four(&mut out, text.digit_at_weight(place));
            place -= 1;
        }
        out.truncate(start + dscale);
    }
    // The sign goes only on a value that shows a non-zero digit: there is no "-0".
    if text.sign == SIGN_NEGATIVE && out.bytes().any(|b| matches!(b, b'1'..=b'9')) {
        out.insert(0, '-');
    }
    Ok(out)
}

fn push_four(out: &mut String, digit: u16) {
    let bytes = [digit / 1000, digit / 100 % 10, digit / 10 % 10, digit % 10];
    for d in bytes {
        out.push(char::from(b'0' + d as u8));
    }
}

/// Encodes numeric parts in `numeric_send`'s layout; `Err` when the value does not fit it.
pub(crate) fn encode(parts: Parts<'_>, out: &mut BytesMut) -> Result<(), String> {
    let sign = match parts {
        Parts::NaN => SIGN_NAN,
        Parts::Infinity => SIGN_INFINITY,
        Parts::NegInfinity => SIGN_NEG_INFINITY,
        Parts::Finite {
            negative,
            integer,
            fraction,
        } => {
            return encode_finite(negative, integer, fraction, out);
        }
    };
    put_special(out, sign);
    Ok(())
}

/// Writes a finite value from its `integer` digits (no leading zeros) and `fraction` digits.
fn encode_finite(
    negative: bool,
    integer: &[u8],
    fraction: &[u8],
    out: &mut BytesMut,
) -> Result<(), String> {
    let dscale = u16::try_from(fraction.len())
        .ok()
        .filter(|&s| i64::from(s) <= MAX_SCALE)
        .ok_or_else(|| {
            format!(
                "{} decimal digits is above the limit of {MAX_SCALE}",
                fraction.len()
            )
        })?;
    // Group the digits in fours around the decimal point: the integer part padded on the left,
    // the fraction padded on the right.
    let integer_groups = integer.len().div_ceil(4);
    let fraction_groups = fraction.len().div_ceil(4);
    let group = |index: usize| -> u16 {
        // Group `index` counts from the most significant integer group.
        let digit = |position: isize| -> u16 {
            // `position` is relative to the decimal point: -1 is the last integer digit.
            let byte = if position < 0 {
                let from_end = position.unsigned_abs();
                integer
                    .len()
                    .checked_sub(from_end)
                    .and_then(|i| integer.get(i))
            } else {
                fraction.get(position.unsigned_abs())
            };
            byte.map_or(0, |b| u16::from(b.wrapping_sub(b'0')))
        };
        let first = 4 * (index as isize - integer_groups as isize);
        (0..4).fold(0, |acc, k| acc * 10 + digit(first + k))
    };
    let total = integer_groups + fraction_groups;
    let first = (0..total).find(|&i| group(i) != 0);
    let last = (0..total).rev().find(|&i| group(i) != 0);
    let (Some(first), Some(last)) = (first, last) else {
        // Zero: no digits, weight 0, positive, keeping the display scale.
        encode_numeric(out, false, 0, dscale, std::iter::empty());
        return Ok(());
    };
    let weight = i16::try_from(integer_groups as isize - 1 - first as isize)
        .map_err(|_| format!("{} integer digits is above the limit", integer.len()))?;
    if u16::try_from(last - first + 1).is_err() {
        return Err("too many digits for the binary format".to_owned());
    }
    encode_numeric(out, negative, weight, dscale, (first..last + 1).map(group));
    Ok(())
}

fn put_special(out: &mut BytesMut, sign: u16) {
    out.put_u16(0);
    out.put_i16(0);
    out.put_u16(sign);
    out.put_u16(0);
}
