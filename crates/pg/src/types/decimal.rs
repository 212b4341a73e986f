//! `rust_decimal::Decimal` ↔ numeric (feature `decimal`): exact, or `OutOfRange`.

use super::numeric::{
    Numeric, Parts, SIGN_INFINITY, SIGN_NAN, SIGN_NEG_INFINITY, SIGN_NEGATIVE, encode_parts,
    parse_binary, split_plain,
};
use super::wire::preview;
use super::{ConversionError, Format, FromSql, IsNull, Oid, ToSql, oid};
use bytes::BytesMut;
use rust_decimal::Decimal;

/// The most decimal places a `Decimal` holds.
const MAX_DECIMAL_SCALE: u32 = 28;

fn out_of_range(oid: Oid, detail: String) -> ConversionError {
    ConversionError::out_of_range(oid, "Decimal", detail)
}

/// A `Decimal` from decimal parts; `Err` says why it does not fit.
fn from_parts(parts: Parts<'_>) -> Result<Decimal, String> {
    let (negative, integer, fraction) = match parts {
        Parts::NaN => return Err("NaN has no Decimal value".into()),
        Parts::Infinity | Parts::NegInfinity => return Err("infinity has no Decimal value".into()),
        Parts::Finite {
            negative,
            integer,
            fraction,
        } => (negative, integer, fraction),
    };
    // Decimals beyond 28 places fit only if they are all zeros.
    let kept = fraction.len().min(MAX_DECIMAL_SCALE as usize);
    if fraction[kept..].iter().any(|&d| d != b'0') {
        return Err(format!(
            "{} decimal places exceed the {MAX_DECIMAL_SCALE} a Decimal holds",
            fraction.len()
        ));
    }
    let mut mantissa: i128 = 0;
    for &digit in integer.iter().chain(&fraction[..kept]) {
        mantissa = mantissa
            .checked_mul(10)
            .and_then(|m| m.checked_add(i128::from(digit - b'0')))
            .ok_or("the value exceeds Decimal's 96-bit range")?;
    }
    if negative {
        mantissa = -mantissa;
    }
    // `kept` is at most 28.
    Decimal::try_from_i128_with_scale(mantissa, kept as u32)
        .map_err(|_| "the value exceeds Decimal's 96-bit range".to_owned())
}

/// A `Decimal` straight from binary numeric digits, without building text.
fn from_binary(oid: Oid, raw: &[u8]) -> Result<Decimal, ConversionError> {
    let value =
        parse_binary(raw).map_err(|detail| ConversionError::invalid(oid, "Decimal", detail))?;
    let special = match value.sign {
        SIGN_NAN => Some("NaN"),
        SIGN_INFINITY => Some("Infinity"),
        SIGN_NEG_INFINITY => Some("-Infinity"),
        _ => None,
    };
    if let Some(special) = special {
        return Err(out_of_range(oid, format!("{special} has no Decimal value")));
    }
    let scale = u32::from(value.dscale).min(MAX_DECIMAL_SCALE);
    let too_big = || out_of_range(oid, "the value exceeds Decimal's 96-bit range".into());
    // The lowest weight with a non-zero digit; none means zero.
    let Some((lowest, _)) = value.weighted_digits().filter(|&(_, d)| d != 0).last() else {
        return Decimal::try_from_i128_with_scale(0, scale).map_err(|_| too_big());
    };
    // The digits' value is digits × 10^(4 × lowest): gather them in one integer.
    let mut digits: i128 = 0;
    for (_, digit) in value
        .weighted_digits()
        .take_while(|&(weight, _)| weight >= lowest)
    {
        digits = digits
            .checked_mul(10_000)
            .and_then(|d| d.checked_add(i128::from(digit)))
            .ok_or_else(too_big)?;
    }
    let power = |exponent: u64| {
        u32::try_from(exponent)
            .ok()
            .and_then(|e| 10i128.checked_pow(e))
    };
    // In units of 10^-scale the value is digits × 10^exponent.
    let exponent = 4 * i64::from(lowest) + i64::from(scale);
    let mut mantissa = if exponent >= 0 {
        power(exponent.unsigned_abs())
            .and_then(|p| digits.checked_mul(p))
            .ok_or_else(too_big)?
    } else {
        let dropped = exponent.unsigned_abs();
        let (kept, rest) = match power(dropped) {
            Some(p) => (digits / p, digits % p),
            None => (0, digits),
        };
        // Dropped places that the display scale shows must be zeros; places below the
        // display scale are not shown by numeric_out either, and are truncated alike.
        let shown = (u64::from(value.dscale) - u64::from(scale)).min(dropped);
        let shown_rest = match power(dropped - shown) {
            Some(p) => rest / p,
            None => 0,
        };
        if shown_rest != 0 {
            return Err(out_of_range(
                oid,
                format!(
                    "{} decimal places exceed the {MAX_DECIMAL_SCALE} a Decimal holds",
                    value.dscale
                ),
            ));
        }
        kept
    };
    if value.sign == SIGN_NEGATIVE {
        mantissa = -mantissa;
    }
    Decimal::try_from_i128_with_scale(mantissa, scale).map_err(|_| too_big())
}

fn decode_decimal(oid: Oid, format: Format, raw: &[u8]) -> Result<Decimal, ConversionError> {
    match (oid, format) {
        (oid::NUMERIC, Format::Binary) => from_binary(oid, raw),
        (oid::INT2 | oid::INT4 | oid::INT8, Format::Binary) => {
            i64::from_sql(oid, format, raw).map(Decimal::from)
        }
        (oid::NUMERIC | oid::INT2 | oid::INT4 | oid::INT8, Format::Text) => {
            let result = match split_plain(raw) {
                Some(parts) => from_parts(parts),
                None => from_parts(Numeric::parse_for(oid, "Decimal", raw)?.parts()),
            };
            result.map_err(|detail| out_of_range(oid, format!("{}: {detail}", preview(raw))))
        }
        _ => Err(ConversionError::wrong_type(oid, "Decimal")),
    }
}

/// Reads numeric (and the integer types); values with more than 28 significant decimal
/// places, beyond 96 bits, NaN or infinite are `OutOfRange`.
impl<'a> FromSql<'a> for Decimal {
    fn accepts(oid: Oid) -> bool {
        matches!(oid, oid::NUMERIC | oid::INT2 | oid::INT4 | oid::INT8)
    }

    fn from_sql(oid: Oid, format: Format, raw: &'a [u8]) -> Result<Self, ConversionError> {
        decode_decimal(oid, format, raw)
    }

    fn from_sql_unescaped(oid: Oid, format: Format, raw: &[u8]) -> Result<Self, ConversionError> {
        decode_decimal(oid, format, raw)
    }
}

impl ToSql for Decimal {
    fn accepts_binary(&self, oid: Oid) -> bool {
        oid == oid::NUMERIC
    }

    fn to_sql_binary(&self, oid: Oid, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        if oid != oid::NUMERIC {
            return Err(ConversionError::wrong_type(oid, "Decimal"));
        }
        let mut digits = itoa::Buffer::new();
        let digits = digits.format(self.mantissa().unsigned_abs()).as_bytes();
        // At most 29 digits and a scale of at most 28: pad on the left to show the scale.
        let scale = self.scale() as usize;
        let mut padded = [b'0'; 64];
        let width = digits.len().max(scale + 1);
        padded[width - digits.len()..width].copy_from_slice(digits);
        let (integer, fraction) = padded[..width].split_at(width - scale);
        let first_nonzero = integer
            .iter()
            .position(|&d| d != b'0')
            .unwrap_or(integer.len());
        let parts = Parts::Finite {
            negative: self.is_sign_negative() && !self.is_zero(),
            integer: &integer[first_nonzero..],
            fraction,
        };
        encode_parts(parts, out).map_err(|detail| out_of_range(oid, detail))?;
        Ok(IsNull::No)
    }

    fn to_sql_text(&self, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        use std::fmt::Write as _;
        write!(out, "{self}")
            .map_err(|_| ConversionError::invalid(oid::NUMERIC, "Decimal", "could not format"))?;
        Ok(IsNull::No)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ConversionErrorKind;
    use proptest::prelude::*;
    use std::str::FromStr;

    fn unhex(hex: &str) -> Vec<u8> {
        (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect()
    }

    fn dec(text: &str) -> Decimal {
        Decimal::from_str(text).unwrap()
    }

    // `select encode(numeric_send(v), 'hex'), v::text` on PostgreSQL 15.
    const GOLDEN: [(&str, &str); 9] = [
        ("0000000000000000", "0"),
        ("0000000000000002", "0.00"),
        ("000200004000000100011388", "-1.5"),
        (
            "0006000200000009000109291a85000004d21388",
            "123456789.000012345",
        ),
        ("0001fffd0000000a0064", "0.0000000001"),
        ("00010001000000000001", "10000"),
        ("0001fffe4000000804ce", "-0.00001230"),
        ("0002000000000002000103e8", "1.10"),
        ("0001fffb400000140001", "-0.00000000000000000001"),
    ];

    #[test]
    fn golden_values_both_formats() {
        for (hex, text) in GOLDEN {
            let expected = dec(text);
            let from_binary = Decimal::from_sql(oid::NUMERIC, Format::Binary, &unhex(hex)).unwrap();
            assert_eq!(from_binary, expected, "{hex}");
            assert_eq!(from_binary.scale(), expected.scale(), "{hex}");
            assert_eq!(
                Decimal::from_sql(oid::NUMERIC, Format::Text, text.as_bytes()),
                Ok(expected)
            );
            let mut out = BytesMut::new();
            expected.to_sql_binary(oid::NUMERIC, &mut out).unwrap();
            assert_eq!(&out[..], unhex(hex), "{text}");
            out.clear();
            expected.to_sql_text(&mut out).unwrap();
            assert_eq!(&out[..], text.as_bytes());
        }
    }

    #[test]
    fn limits() {
        let max = Decimal::MAX.to_string();
        assert_eq!(
            Decimal::from_sql(oid::NUMERIC, Format::Text, max.as_bytes()),
            Ok(Decimal::MAX)
        );
        let over = "79228162514264337593543950336";
        let err = Decimal::from_sql(oid::NUMERIC, Format::Text, over.as_bytes()).unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::OutOfRange);
        assert!(err.to_string().contains(over), "{err}");
        let mut out = BytesMut::new();
        Numeric::from_str(over)
            .unwrap()
            .to_sql_binary(oid::NUMERIC, &mut out)
            .unwrap();
        assert!(Decimal::from_sql(oid::NUMERIC, Format::Binary, &out).is_err());
        // 1e1000 and 1e-1000 (numeric_send) do not fit; NaN and infinities neither.
        for hex in [
            "000100fa000000000001",
            "0001ff06000003e80001",
            "00000000c0000000",
            "00000000d0000020",
        ] {
            let err = Decimal::from_sql(oid::NUMERIC, Format::Binary, &unhex(hex)).unwrap_err();
            assert_eq!(err.kind(), ConversionErrorKind::OutOfRange, "{hex}");
        }
        // Zeros beyond 28 places are dropped exactly; other digits are out of range.
        let thirty = format!("1.{}", "0".repeat(30));
        out.clear();
        Numeric::from_str(&thirty)
            .unwrap()
            .to_sql_binary(oid::NUMERIC, &mut out)
            .unwrap();
        assert_eq!(
            Decimal::from_sql(oid::NUMERIC, Format::Binary, &out),
            Ok(Decimal::ONE)
        );
        assert_eq!(
            Decimal::from_sql(oid::NUMERIC, Format::Text, thirty.as_bytes()),
            Ok(Decimal::ONE)
        );
        let fine = format!("0.{}1", "0".repeat(29));
        assert!(Decimal::from_sql(oid::NUMERIC, Format::Text, fine.as_bytes()).is_err());
        out.clear();
        Numeric::from_str(&fine)
            .unwrap()
            .to_sql_binary(oid::NUMERIC, &mut out)
            .unwrap();
        assert!(Decimal::from_sql(oid::NUMERIC, Format::Binary, &out).is_err());
        assert_eq!(
            Decimal::from_sql(oid::NUMERIC, Format::Text, b" 1.5e2 "),
            Ok(dec("150"))
        );
        assert_eq!(
            Decimal::from_sql(oid::INT8, Format::Binary, &i64::MIN.to_be_bytes()),
            Ok(Decimal::from(i64::MIN))
        );
    }

    fn any_decimal() -> impl Strategy<Value = Decimal> {
        (any::<i128>(), 0u32..=28).prop_map(|(m, scale)| {
            Decimal::from_i128_with_scale(m % 79_228_162_514_264_337_593_543_950_335, scale)
        })
    }

    proptest! {
        #[test]
        fn round_trips_both_formats(value in any_decimal()) {
            let mut out = BytesMut::new();
            value.to_sql_binary(oid::NUMERIC, &mut out).unwrap();
            let back = Decimal::from_sql(oid::NUMERIC, Format::Binary, &out).unwrap();
            prop_assert_eq!(back, value);
            prop_assert_eq!(back.scale(), value.scale());
            // The binary form equals Numeric's for the same text.
            let numeric = Numeric::from_sql(oid::NUMERIC, Format::Binary, &out).unwrap();
            prop_assert_eq!(numeric.as_str(), numeric_text(value));
            out.clear();
            value.to_sql_text(&mut out).unwrap();
            prop_assert_eq!(Decimal::from_sql(oid::NUMERIC, Format::Text, &out), Ok(value));
        }

        #[test]
        fn never_panics_on_arbitrary_bytes(raw: Vec<u8>) {
            let _ = Decimal::from_sql(oid::NUMERIC, Format::Binary, &raw);
            let _ = Decimal::from_sql(oid::NUMERIC, Format::Text, &raw);
        }
    }

    /// The text PostgreSQL prints for a Decimal's value and scale (no negative zero).
    fn numeric_text(value: Decimal) -> String {
        if value.is_zero() {
            value.abs().to_string()
        } else {
            value.to_string()
        }
    }
}
