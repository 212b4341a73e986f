//! Floating point: `f32` ↔ float4, `f64` ↔ float8 (and float4, widened exactly).

use super::wire::{fixed, invalid_text};
use super::{ConversionError, Format, FromSql, IsNull, Oid, ToSql, oid};
use bytes::{BufMut, BytesMut};

/// Parses PostgreSQL's float output (`1.5`, `1e+300`, `NaN`, `Infinity`, `-Infinity`).
/// Rust's parser rounds correctly and accepts those spellings, so this is exact.
fn parse_float<F: std::str::FromStr>(raw: &[u8]) -> Option<F> {
    // Rust accepts "inf"/"infinity"/"nan" in any case, as float8in does; PostgreSQL never
    // writes surrounding spaces, and we do not accept them.
    std::str::from_utf8(raw).ok()?.parse().ok()
}

fn decode_f32(oid: Oid, format: Format, raw: &[u8]) -> Result<f32, ConversionError> {
    match (oid, format) {
        (oid::FLOAT4, Format::Binary) => Ok(f32::from_be_bytes(fixed(oid, "f32", raw)?)),
        (oid::FLOAT4, Format::Text) => {
            parse_float(raw).ok_or_else(|| invalid_text(oid, "f32", raw, "a float4"))
        }
        _ => Err(ConversionError::wrong_type(oid, "f32")),
    }
}

fn decode_f64(oid: Oid, format: Format, raw: &[u8]) -> Result<f64, ConversionError> {
    match (oid, format) {
        (oid::FLOAT8, Format::Binary) => Ok(f64::from_be_bytes(fixed(oid, "f64", raw)?)),
        (oid::FLOAT8, Format::Text) => {
            parse_float(raw).ok_or_else(|| invalid_text(oid, "f64", raw, "a float8"))
        }
        // Parse float4 as f32 first, so that text and binary give the same widened value.
        (oid::FLOAT4, _) => decode_f32(oid, format, raw).map(f64::from),
        _ => Err(ConversionError::wrong_type(oid, "f64")),
    }
}

/// `float8in`'s spelling of NaN and the infinities, or `None` for a finite value (which is
/// written as the shortest text that reads back as the same value).
fn special_text(nan: bool, infinite: bool, positive: bool) -> Option<&'static [u8]> {
    match (nan, infinite, positive) {
        (true, _, _) => Some(b"NaN"),
        (false, true, true) => Some(b"Infinity"),
        (false, true, false) => Some(b"-Infinity"),
        (false, false, _) => None,
    }
}

impl<'a> FromSql<'a> for f32 {
    fn accepts(oid: Oid) -> bool {
        oid == oid::FLOAT4
    }

    fn from_sql(oid: Oid, format: Format, raw: &'a [u8]) -> Result<Self, ConversionError> {
        decode_f32(oid, format, raw)
    }

    fn from_sql_unescaped(oid: Oid, format: Format, raw: &[u8]) -> Result<Self, ConversionError> {
        decode_f32(oid, format, raw)
    }
}

impl<'a> FromSql<'a> for f64 {
    fn accepts(oid: Oid) -> bool {
        matches!(oid, oid::FLOAT4 | oid::FLOAT8)
    }

    fn from_sql(oid: Oid, format: Format, raw: &'a [u8]) -> Result<Self, ConversionError> {
        decode_f64(oid, format, raw)
    }

    fn from_sql_unescaped(oid: Oid, format: Format, raw: &[u8]) -> Result<Self, ConversionError> {
        decode_f64(oid, format, raw)
    }
}

impl ToSql for f32 {
    /// float4, and float8 (widening is exact).
    fn accepts_binary(&self, oid: Oid) -> bool {
        matches!(oid, oid::FLOAT4 | oid::FLOAT8)
    }

    fn to_sql_binary(&self, oid: Oid, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        match oid {
            oid::FLOAT4 => out.put_f32(*self),
            oid::FLOAT8 => out.put_f64(f64::from(*self)),
            _ => return Err(ConversionError::wrong_type(oid, "f32")),
        }
        Ok(IsNull::No)
    }

    fn to_sql_text(&self, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        match special_text(self.is_nan(), self.is_infinite(), self.is_sign_positive()) {
            Some(special) => out.put_slice(special),
            None => out.put_slice(ryu::Buffer::new().format_finite(*self).as_bytes()),
        }
        Ok(IsNull::No)
    }
}

impl ToSql for f64 {
    /// float8 only: narrowing to float4 is left to the server, which rounds and range-checks.
    fn accepts_binary(&self, oid: Oid) -> bool {
        oid == oid::FLOAT8
    }

    fn to_sql_binary(&self, oid: Oid, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        if oid != oid::FLOAT8 {
            return Err(ConversionError::wrong_type(oid, "f64"));
        }
        out.put_f64(*self);
        Ok(IsNull::No)
    }

    fn to_sql_text(&self, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        match special_text(self.is_nan(), self.is_infinite(), self.is_sign_positive()) {
            Some(special) => out.put_slice(special),
            None => out.put_slice(ryu::Buffer::new().format_finite(*self).as_bytes()),
        }
        Ok(IsNull::No)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ConversionErrorKind;
    use proptest::prelude::*;

    fn text<T: ToSql>(value: T) -> String {
        let mut out = BytesMut::new();
        value.to_sql_text(&mut out).unwrap();
        String::from_utf8(out.to_vec()).unwrap()
    }

    fn hex(raw: &[u8]) -> String {
        raw.iter().map(|b| format!("{b:02x}")).collect()
    }

    // Golden pairs from PostgreSQL 15: `select v::text, encode(float8send(v), 'hex')`.
    const FLOAT8_GOLDEN: [(&str, &str); 13] = [
        ("NaN", "7ff8000000000000"),
        ("Infinity", "7ff0000000000000"),
        ("-Infinity", "fff0000000000000"),
        ("-0", "8000000000000000"),
        ("0.1", "3fb999999999999a"),
        ("1e+300", "7e37e43c8800759c"),
        ("5e-324", "0000000000000001"),
        ("1.7976931348623157e+308", "7fefffffffffffff"),
        ("1.2345678901234568e+17", "437b69b4ba630f35"),
        ("1e-05", "3ee4f8b588e368f1"),
        ("0.0001", "3f1a36e2eb1c432d"),
        ("1e+15", "430c6bf526340000"),
        ("1e+16", "4341c37937e08000"),
    ];

    // `select v::text, encode(float4send(v), 'hex')`.
    const FLOAT4_GOLDEN: [(&str, &str); 6] = [
        ("NaN", "7fc00000"),
        ("-Infinity", "ff800000"),
        ("0.1", "3dcccccd"),
        ("3.4028235e+38", "7f7fffff"),
        ("1e-45", "00000001"),
        ("-0", "80000000"),
    ];

    #[test]
    fn float8_golden_text_and_binary_agree() {
        for (text_form, binary_hex) in FLOAT8_GOLDEN {
            let from_text = f64::from_sql(oid::FLOAT8, Format::Text, text_form.as_bytes()).unwrap();
            let mut out = BytesMut::new();
            from_text.to_sql_binary(oid::FLOAT8, &mut out).unwrap();
            assert_eq!(hex(&out), binary_hex, "{text_form}");
            let bytes = u64::from_str_radix(binary_hex, 16).unwrap().to_be_bytes();
            let from_binary = f64::from_sql(oid::FLOAT8, Format::Binary, &bytes).unwrap();
            assert_eq!(from_binary.to_bits(), from_text.to_bits(), "{text_form}");
            // Our text output must read back to the same bits (server's float8in is exact too).
            let ours = text(from_binary);
            let back = f64::from_sql(oid::FLOAT8, Format::Text, ours.as_bytes()).unwrap();
            assert_eq!(back.to_bits(), from_binary.to_bits(), "{ours}");
        }
    }

    #[test]
    fn float4_golden_text_and_binary_agree() {
        for (text_form, binary_hex) in FLOAT4_GOLDEN {
            let from_text = f32::from_sql(oid::FLOAT4, Format::Text, text_form.as_bytes()).unwrap();
            let mut out = BytesMut::new();
            from_text.to_sql_binary(oid::FLOAT4, &mut out).unwrap();
            assert_eq!(hex(&out), binary_hex, "{text_form}");
            let widened = f64::from_sql(oid::FLOAT4, Format::Text, text_form.as_bytes()).unwrap();
            let bytes = u32::from_str_radix(binary_hex, 16).unwrap().to_be_bytes();
            let widened_binary = f64::from_sql(oid::FLOAT4, Format::Binary, &bytes).unwrap();
            assert_eq!(widened.to_bits(), widened_binary.to_bits(), "{text_form}");
        }
    }

    #[test]
    fn special_values_use_postgres_spellings() {
        assert_eq!(text(f64::NAN), "NaN");
        assert_eq!(text(f64::INFINITY), "Infinity");
        assert_eq!(text(f32::NEG_INFINITY), "-Infinity");
        assert_eq!(text(-0.0f64), "-0.0");
        assert_eq!(text(0.1f32), "0.1");
        assert_eq!(text(1e300f64), "1e300");
    }

    #[test]
    fn errors() {
        let err = f32::from_sql(oid::FLOAT8, Format::Binary, &[0; 8]).unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::WrongType);
        let err = f64::from_sql(oid::FLOAT8, Format::Text, b"1,5").unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::Invalid);
        let err = f64::from_sql(oid::FLOAT8, Format::Binary, &[0; 4]).unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::Invalid);
        assert!(!1.0f64.accepts_binary(oid::FLOAT4));
    }

    proptest! {
        #[test]
        fn f64_round_trips_both_formats(bits: u64) {
            let value = f64::from_bits(bits);
            let mut out = BytesMut::new();
            value.to_sql_binary(oid::FLOAT8, &mut out).unwrap();
            let back = f64::from_sql(oid::FLOAT8, Format::Binary, &out).unwrap();
            prop_assert!(back.to_bits() == bits);
            let back = f64::from_sql(oid::FLOAT8, Format::Text, text(value).as_bytes()).unwrap();
            prop_assert!(back.to_bits() == bits || (value.is_nan() && back.is_nan()));
        }

        #[test]
        fn f32_round_trips_both_formats(bits: u32) {
            let value = f32::from_bits(bits);
            let mut out = BytesMut::new();
            value.to_sql_binary(oid::FLOAT4, &mut out).unwrap();
            let back = f32::from_sql(oid::FLOAT4, Format::Binary, &out).unwrap();
            prop_assert!(back.to_bits() == bits);
            let back = f32::from_sql(oid::FLOAT4, Format::Text, text(value).as_bytes()).unwrap();
            prop_assert!(back.to_bits() == bits || (value.is_nan() && back.is_nan()));
            out.clear();
            value.to_sql_binary(oid::FLOAT8, &mut out).unwrap();
            let wide = f64::from_sql(oid::FLOAT8, Format::Binary, &out).unwrap();
            prop_assert!(wide.to_bits() == f64::from(value).to_bits());
        }

        #[test]
        fn never_panics_on_arbitrary_bytes(raw: Vec<u8>) {
            for format in [Format::Binary, Format::Text] {
                let _ = f32::from_sql(oid::FLOAT4, format, &raw);
                let _ = f64::from_sql(oid::FLOAT4, format, &raw);
                let _ = f64::from_sql(oid::FLOAT8, format, &raw);
            }
        }
    }
}
