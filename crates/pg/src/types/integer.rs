//! Integers: `i16`/`i32`/`i64` ↔ int2/int4/int8, `u32` ↔ oid, `i8` ↔ `"char"`.

use super::wire::{fixed, invalid_text, parse_i64};
use super::{ConversionError, Format, FromSql, IsNull, Oid, ToSql, oid};
use bytes::{BufMut, BytesMut};

/// Parses a text integer for `rust_type` and narrows it, reporting values that do not fit.
#[inline]
fn parse_int<T: TryFrom<i64>>(
    oid: Oid,
    raw: &[u8],
    rust_type: &'static str,
) -> Result<T, ConversionError> {
    let Some(wide) = parse_i64(raw) else {
        return Err(invalid_text(oid, rust_type, raw, "an integer"));
    };
    T::try_from(wide).map_err(|_| {
        ConversionError::out_of_range(oid, rust_type, format!("value {wide} does not fit"))
    })
}

/// Encodes `value` as an int2/int4/int8/oid parameter, checking that it fits.
fn encode_int(
    value: i64,
    oid: Oid,
    out: &mut BytesMut,
    rust_type: &'static str,
) -> Result<IsNull, ConversionError> {
    let out_of_range = |range: &str| {
        ConversionError::out_of_range(
            oid,
            rust_type,
            format!(
                "value {value} is outside the range of {} ({range})",
                oid::type_name(oid)
            ),
        )
    };
    match oid {
        oid::INT2 => out.put_i16(i16::try_from(value).map_err(|_| out_of_range("-32768..=32767"))?),
        oid::INT4 => {
            out.put_i32(i32::try_from(value).map_err(|_| out_of_range("-2147483648..=2147483647"))?)
        }
        oid::INT8 => out.put_i64(value),
        oid::OID => out.put_u32(u32::try_from(value).map_err(|_| out_of_range("0..=4294967295"))?),
        _ => return Err(ConversionError::wrong_type(oid, rust_type)),
    }
    Ok(IsNull::No)
}

fn is_int_param(oid: Oid) -> bool {
    matches!(oid, oid::INT2 | oid::INT4 | oid::INT8 | oid::OID)
}

macro_rules! integer_conversions {
    ($($rust:ty => $name:literal, reads $($oid:path => $wire:ty)|+;)*) => {$(
        impl<'a> FromSql<'a> for $rust {
            fn accepts(oid: Oid) -> bool {
                matches!(oid, $($oid)|+)
            }

            #[inline]
            fn from_sql(oid: Oid, format: Format, raw: &'a [u8]) -> Result<Self, ConversionError> {
                match format {
                    // Each source type widens losslessly into the Rust type.
                    Format::Binary => match oid {
                        $($oid => Ok(<$rust>::from(<$wire>::from_be_bytes(fixed(oid, $name, raw)?))),)+
                        _ => Err(ConversionError::wrong_type(oid, $name)),
                    },
                    Format::Text if matches!(oid, $($oid)|+) => parse_int(oid, raw, $name),
                    Format::Text => Err(ConversionError::wrong_type(oid, $name)),
                }
            }

            fn from_sql_unescaped(
                oid: Oid,
                format: Format,
                raw: &[u8],
            ) -> Result<Self, ConversionError> {
                <$rust as FromSql<'_>>::from_sql(oid, format, raw)
            }
        }

        impl ToSql for $rust {
            fn accepts_binary(&self, oid: Oid) -> bool {
                is_int_param(oid)
            }

            fn to_sql_binary(&self, oid: Oid, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
                encode_int(i64::from(*self), oid, out, $name)
            }

            fn to_sql_text(&self, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
                out.put_slice(itoa::Buffer::new().format(*self).as_bytes());
                Ok(IsNull::No)
            }
        }
    )*};
}

integer_conversions! {
    i16 => "i16", reads oid::INT2 => i16;
    i32 => "i32", reads oid::INT2 => i16 | oid::INT4 => i32;
    i64 => "i64", reads oid::INT2 => i16 | oid::INT4 => i32 | oid::INT8 => i64 | oid::OID => u32;
    u32 => "u32", reads oid::OID => u32;
}

/// `"char"` is one byte; its text form is the byte itself, `\ooo` octal for bytes with the
/// high bit set, and the empty string for 0 (as `charout` writes and `charin` reads).
fn decode_char(oid: Oid, format: Format, raw: &[u8]) -> Result<i8, ConversionError> {
    if oid != oid::CHAR {
        return Err(ConversionError::wrong_type(oid, "i8"));
    }
    let byte = match (format, raw) {
        (Format::Binary, _) => fixed::<1>(oid, "i8", raw)?[0],
        (Format::Text, []) => 0,
        (Format::Text, [b'\\', a, b, c]) if [a, b, c].iter().all(|d| (b'0'..=b'7').contains(d)) => {
            let octal = u16::from(a - b'0') * 64 + u16::from(b - b'0') * 8 + u16::from(c - b'0');
            u8::try_from(octal)
                .map_err(|_| invalid_text(oid, "i8", raw, "a \"char\" octal escape"))?
        }
        (Format::Text, [byte]) => *byte,
        (Format::Text, _) => return Err(invalid_text(oid, "i8", raw, "a single-byte \"char\"")),
    };
    Ok(i8::from_ne_bytes([byte]))
}

impl<'a> FromSql<'a> for i8 {
    fn accepts(oid: Oid) -> bool {
        oid == oid::CHAR
    }

    fn from_sql(oid: Oid, format: Format, raw: &'a [u8]) -> Result<Self, ConversionError> {
        decode_char(oid, format, raw)
    }

    fn from_sql_unescaped(oid: Oid, format: Format, raw: &[u8]) -> Result<Self, ConversionError> {
        decode_char(oid, format, raw)
    }
}

impl ToSql for i8 {
    fn accepts_binary(&self, oid: Oid) -> bool {
        oid == oid::CHAR
    }

    fn to_sql_binary(&self, oid: Oid, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        if oid != oid::CHAR {
            return Err(ConversionError::wrong_type(oid, "i8"));
        }
        out.put_i8(*self);
        Ok(IsNull::No)
    }

    fn to_sql_text(&self, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        let [byte] = self.to_ne_bytes();
        if byte >= 0x80 {
            out.put_slice(&[
                b'\\',
                b'0' + (byte >> 6),
                b'0' + ((byte >> 3) & 7),
                b'0' + (byte & 7),
            ]);
        } else if byte != 0 {
            out.put_u8(byte);
        }
        Ok(IsNull::No)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ConversionErrorKind;
    use proptest::prelude::*;

    fn binary<T: ToSql>(value: T, oid: Oid) -> Vec<u8> {
        let mut out = BytesMut::new();
        assert_eq!(value.to_sql_binary(oid, &mut out), Ok(IsNull::No));
        out.to_vec()
    }

    fn text<T: ToSql>(value: T) -> String {
        let mut out = BytesMut::new();
        assert_eq!(value.to_sql_text(&mut out), Ok(IsNull::No));
        String::from_utf8(out.to_vec()).unwrap()
    }

    // Golden bytes from PostgreSQL 15: int2send((-32768)::int2), int4send(-2147483648),
    // int8send(-9223372036854775808), int8send(9223372036854775807), oidsend(4294967295).
    #[test]
    fn golden_extremes_binary() {
        assert_eq!(binary(i16::MIN, oid::INT2), [0x80, 0]);
        assert_eq!(binary(i32::MIN, oid::INT4), [0x80, 0, 0, 0]);
        assert_eq!(binary(i64::MIN, oid::INT8), [0x80, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(
            binary(i64::MAX, oid::INT8),
            [0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
        );
        assert_eq!(binary(u32::MAX, oid::OID), [0xff; 4]);
        assert_eq!(
            i16::from_sql(oid::INT2, Format::Binary, &[0x80, 0]),
            Ok(i16::MIN)
        );
        assert_eq!(
            i64::from_sql(oid::INT8, Format::Binary, &[0x80, 0, 0, 0, 0, 0, 0, 0]),
            Ok(i64::MIN)
        );
        assert_eq!(
            u32::from_sql(oid::OID, Format::Binary, &[0xff; 4]),
            Ok(u32::MAX)
        );
        assert_eq!(
            i64::from_sql(oid::OID, Format::Binary, &[0xff; 4]),
            Ok(4294967295)
        );
    }

    #[test]
    fn golden_extremes_text() {
        assert_eq!(
            i16::from_sql(oid::INT2, Format::Text, b"-32768"),
            Ok(i16::MIN)
        );
        assert_eq!(
            i32::from_sql(oid::INT4, Format::Text, b"2147483647"),
            Ok(i32::MAX)
        );
        assert_eq!(
            i64::from_sql(oid::INT8, Format::Text, b"-9223372036854775808"),
            Ok(i64::MIN)
        );
        assert_eq!(
            u32::from_sql(oid::OID, Format::Text, b"4294967295"),
            Ok(u32::MAX)
        );
        assert_eq!(text(i64::MIN), "-9223372036854775808");
        assert_eq!(text(u32::MAX), "4294967295");
    }

    #[test]
    fn reads_widen_losslessly() {
        assert_eq!(
            i32::from_sql(oid::INT2, Format::Binary, &[0xff, 0xfe]),
            Ok(-2)
        );
        assert_eq!(
            i64::from_sql(oid::INT4, Format::Binary, &[0x80, 0, 0, 0]),
            Ok(-2147483648)
        );
        assert_eq!(
            i64::from_sql(oid::INT2, Format::Text, b"-32768"),
            Ok(-32768)
        );
        assert!(!<i16 as FromSql<'_>>::accepts(oid::INT4));
        assert!(!<i32 as FromSql<'_>>::accepts(oid::INT8));
        let err = i16::from_sql(oid::INT4, Format::Binary, &[0, 0, 0, 1]).unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::WrongType);
    }

    #[test]
    fn writes_check_the_parameter_range() {
        assert_eq!(binary(7i64, oid::INT2), [0, 7]);
        assert_eq!(binary(-1i16, oid::INT8), [0xff; 8]);
        let mut out = BytesMut::new();
        let err = 70000i64.to_sql_binary(oid::INT2, &mut out).unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::OutOfRange);
        assert!(err.to_string().contains("70000"), "{err}");
        let err = (-1i32).to_sql_binary(oid::OID, &mut out).unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::OutOfRange);
        let err = 1i32.to_sql_binary(oid::TEXT, &mut out).unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::WrongType);
        assert!(out.is_empty());
    }

    #[test]
    fn bad_input_is_invalid() {
        for raw in [&b""[..], b"1.5", b" 1", b"--1", b"99999999999999999999"] {
            let err = i64::from_sql(oid::INT8, Format::Text, raw).unwrap_err();
            assert_eq!(err.kind(), ConversionErrorKind::Invalid, "{raw:?}");
        }
        let err = i16::from_sql(oid::INT2, Format::Text, b"40000").unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::OutOfRange);
        let err = i32::from_sql(oid::INT4, Format::Binary, &[0, 0, 1]).unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::Invalid);
        assert!(err.to_string().contains("4 bytes"), "{err}");
    }

    // Golden "char" values: charsend('a') = 61, '\310'::"char" prints \310 and sends c8,
    // ''::"char" prints the empty string and sends 00, '\'::"char" sends 5c.
    #[test]
    fn golden_char() {
        assert_eq!(i8::from_sql(oid::CHAR, Format::Binary, &[0x61]), Ok(0x61));
        assert_eq!(i8::from_sql(oid::CHAR, Format::Text, b"a"), Ok(0x61));
        assert_eq!(
            i8::from_sql(oid::CHAR, Format::Text, b"\\310"),
            Ok(0xc8u8 as i8)
        );
        assert_eq!(
            i8::from_sql(oid::CHAR, Format::Binary, &[0xc8]),
            Ok(0xc8u8 as i8)
        );
        assert_eq!(i8::from_sql(oid::CHAR, Format::Text, b""), Ok(0));
        assert_eq!(i8::from_sql(oid::CHAR, Format::Text, b"\\"), Ok(0x5c));
        assert_eq!(text(0xc8u8 as i8), "\\310");
        assert_eq!(text(0i8), "");
        assert_eq!(text(b'a' as i8), "a");
        assert_eq!(binary(0xc8u8 as i8, oid::CHAR), [0xc8]);
        assert!(i8::from_sql(oid::CHAR, Format::Text, b"ab").is_err());
        assert!(i8::from_sql(oid::CHAR, Format::Text, b"\\777").is_err());
    }

    proptest! {
        #[test]
        fn i64_round_trips_both_formats(value: i64) {
            prop_assert_eq!(i64::from_sql(oid::INT8, Format::Binary, &binary(value, oid::INT8)), Ok(value));
            prop_assert_eq!(i64::from_sql(oid::INT8, Format::Text, text(value).as_bytes()), Ok(value));
        }

        #[test]
        fn i32_round_trips_both_formats(value: i32) {
            prop_assert_eq!(i32::from_sql(oid::INT4, Format::Binary, &binary(value, oid::INT4)), Ok(value));
            prop_assert_eq!(i32::from_sql(oid::INT4, Format::Text, text(value).as_bytes()), Ok(value));
        }

        #[test]
        fn i16_round_trips_both_formats(value: i16) {
            prop_assert_eq!(i16::from_sql(oid::INT2, Format::Binary, &binary(value, oid::INT2)), Ok(value));
            prop_assert_eq!(i16::from_sql(oid::INT2, Format::Text, text(value).as_bytes()), Ok(value));
        }

        #[test]
        fn u32_round_trips_both_formats(value: u32) {
            prop_assert_eq!(u32::from_sql(oid::OID, Format::Binary, &binary(value, oid::OID)), Ok(value));
            prop_assert_eq!(u32::from_sql(oid::OID, Format::Text, text(value).as_bytes()), Ok(value));
        }

        #[test]
        fn char_round_trips_both_formats(value: i8) {
            prop_assert_eq!(i8::from_sql(oid::CHAR, Format::Binary, &binary(value, oid::CHAR)), Ok(value));
            prop_assert_eq!(i8::from_sql(oid::CHAR, Format::Text, text(value).as_bytes()), Ok(value));
        }

        #[test]
        fn narrowing_writes_match_the_range(value: i64) {
            let mut out = BytesMut::new();
            let fits = i32::try_from(value).is_ok();
            prop_assert_eq!(value.to_sql_binary(oid::INT4, &mut out).is_ok(), fits);
        }

        #[test]
        fn never_panics_on_arbitrary_bytes(raw: Vec<u8>) {
            for format in [Format::Binary, Format::Text] {
                for oid in [oid::INT2, oid::INT4, oid::INT8, oid::OID] {
                    let _ = i16::from_sql(oid, format, &raw);
                    let _ = i32::from_sql(oid, format, &raw);
                    let _ = i64::from_sql(oid, format, &raw);
                    let _ = u32::from_sql(oid, format, &raw);
                }
                let _ = i8::from_sql(oid::CHAR, format, &raw);
            }
        }
    }
}
