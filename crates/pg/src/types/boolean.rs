//! `bool` ↔ PostgreSQL `bool`.

use super::wire::{fixed, invalid_text};
use super::{ConversionError, Format, FromSql, IsNull, Oid, ToSql, oid};
use bytes::{BufMut, BytesMut};

fn decode_bool(oid: Oid, format: Format, raw: &[u8]) -> Result<bool, ConversionError> {
    if oid != oid::BOOL {
        return Err(ConversionError::wrong_type(oid, "bool"));
    }
    match format {
        // boolrecv treats any non-zero byte as true.
        Format::Binary => Ok(fixed::<1>(oid, "bool", raw)?[0] != 0),
        Format::Text => {
            parse_bool_text(raw).ok_or_else(|| invalid_text(oid, "bool", raw, "a boolean (t or f)"))
        }
    }
}

/// The server's output `t`/`f`, and the other spellings `boolin` accepts in full.
fn parse_bool_text(raw: &[u8]) -> Option<bool> {
    const TRUE: [&[u8]; 5] = [b"t", b"true", b"yes", b"on", b"1"];
    const FALSE: [&[u8]; 5] = [b"f", b"false", b"no", b"off", b"0"];
    let raw = raw.trim_ascii();
    if TRUE.iter().any(|word| raw.eq_ignore_ascii_case(word)) {
        Some(true)
    } else if FALSE.iter().any(|word| raw.eq_ignore_ascii_case(word)) {
        Some(false)
    } else {
        None
    }
}

impl<'a> FromSql<'a> for bool {
    fn accepts(oid: Oid) -> bool {
        oid == oid::BOOL
    }

    fn from_sql(oid: Oid, format: Format, raw: &'a [u8]) -> Result<Self, ConversionError> {
        decode_bool(oid, format, raw)
    }

    fn from_sql_unescaped(oid: Oid, format: Format, raw: &[u8]) -> Result<Self, ConversionError> {
        decode_bool(oid, format, raw)
    }
}

impl ToSql for bool {
    fn accepts_binary(&self, oid: Oid) -> bool {
        oid == oid::BOOL
    }

    fn to_sql_binary(&self, oid: Oid, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        if oid != oid::BOOL {
            return Err(ConversionError::wrong_type(oid, "bool"));
        }
        out.put_u8(u8::from(*self));
        Ok(IsNull::No)
    }

    fn to_sql_text(&self, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        out.put_slice(if *self { b"true" } else { b"false" });
        Ok(IsNull::No)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ConversionErrorKind;
    use proptest::prelude::*;

    // Golden values from PostgreSQL 15: `select true::text, encode(boolsend(true), 'hex')`.
    #[test]
    fn golden_values_both_formats() {
        assert_eq!(bool::from_sql(oid::BOOL, Format::Text, b"t"), Ok(true));
        assert_eq!(bool::from_sql(oid::BOOL, Format::Text, b"f"), Ok(false));
        assert_eq!(bool::from_sql(oid::BOOL, Format::Binary, &[1]), Ok(true));
        assert_eq!(bool::from_sql(oid::BOOL, Format::Binary, &[0]), Ok(false));
        let mut out = BytesMut::new();
        true.to_sql_binary(oid::BOOL, &mut out).unwrap();
        false.to_sql_binary(oid::BOOL, &mut out).unwrap();
        assert_eq!(&out[..], [1, 0]);
    }

    #[test]
    fn errors_are_typed() {
        let wrong = bool::from_sql(oid::INT4, Format::Text, b"t").unwrap_err();
        assert_eq!(wrong.kind(), ConversionErrorKind::WrongType);
        let bad = bool::from_sql(oid::BOOL, Format::Text, b"maybe").unwrap_err();
        assert_eq!(bad.kind(), ConversionErrorKind::Invalid);
        assert!(bad.to_string().contains("maybe"), "{bad}");
        let short = bool::from_sql(oid::BOOL, Format::Binary, b"").unwrap_err();
        assert_eq!(short.kind(), ConversionErrorKind::Invalid);
    }

    proptest! {
        #[test]
        fn round_trips_both_formats(value: bool) {
            let mut out = BytesMut::new();
            value.to_sql_binary(oid::BOOL, &mut out).unwrap();
            prop_assert_eq!(bool::from_sql(oid::BOOL, Format::Binary, &out), Ok(value));
            out.clear();
            value.to_sql_text(&mut out).unwrap();
            prop_assert_eq!(bool::from_sql(oid::BOOL, Format::Text, &out), Ok(value));
        }

        #[test]
        fn never_panics_on_arbitrary_bytes(raw: Vec<u8>) {
            let _ = bool::from_sql(oid::BOOL, Format::Binary, &raw);
            let _ = bool::from_sql(oid::BOOL, Format::Text, &raw);
        }
    }
}
