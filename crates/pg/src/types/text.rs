//! Strings: `&str`, `String` and `Cow<str>` ↔ text, varchar, bpchar, name, unknown, `"char"`,
//! json and jsonb.

use super::wire::utf8;
use super::{ConversionError, Format, FromSql, IsNull, Oid, ToSql, oid};
use bytes::{BufMut, BytesMut};
use std::borrow::Cow;

// Binary jsonb is this version byte, then the JSON text.
pub(crate) use super::binary::JSONB_VERSION;

/// Whether a column of type `oid` holds text that reads as a Rust string.
fn is_text_type(oid: Oid) -> bool {
    matches!(
        oid,
        oid::TEXT
            | oid::VARCHAR
            | oid::BPCHAR
            | oid::NAME
            | oid::UNKNOWN
            | oid::CHAR
            | oid::JSON
            | oid::JSONB
    )
}

/// The UTF-8 text of a string-like value, borrowed from `raw`.
pub(crate) fn decode_str<'a>(
    oid: Oid,
    format: Format,
    raw: &'a [u8],
    rust_type: &'static str,
) -> Result<&'a str, ConversionError> {
    if !is_text_type(oid) {
        return Err(ConversionError::wrong_type(oid, rust_type));
    }
    let text = match (oid, format) {
        (oid::JSONB, Format::Binary) => match raw {
            [JSONB_VERSION, rest @ ..] => rest,
            [version, ..] => {
                return Err(ConversionError::invalid(
                    oid,
                    rust_type,
                    format!("unsupported binary jsonb version {version} (expected 1)"),
                ));
            }
            [] => {
                return Err(ConversionError::invalid(
                    oid,
                    rust_type,
                    "empty binary jsonb value",
                ));
            }
        },
        _ => raw,
    };
    utf8(oid, rust_type, text)
}

/// Whether `to_sql_binary` can send a string as a parameter of type `oid`.
fn accepts_text_param(oid: Oid) -> bool {
    // "char" is left out: its binary form is one byte, and the server's text input rules for
    // it (first byte, or an octal escape) apply when it is sent as text.
    is_text_type(oid) && oid != oid::CHAR
}

fn encode_str(
    value: &str,
    oid: Oid,
    out: &mut BytesMut,
    rust_type: &'static str,
) -> Result<IsNull, ConversionError> {
    if !accepts_text_param(oid) {
        return Err(ConversionError::wrong_type(oid, rust_type));
    }
    if oid == oid::JSONB {
        out.put_u8(JSONB_VERSION);
    }
    out.put_slice(value.as_bytes());
    Ok(IsNull::No)
}

impl<'a> FromSql<'a> for &'a str {
    fn accepts(oid: Oid) -> bool {
        is_text_type(oid)
    }

    fn from_sql(oid: Oid, format: Format, raw: &'a [u8]) -> Result<Self, ConversionError> {
        decode_str(oid, format, raw, "&str")
    }
}

impl<'a> FromSql<'a> for String {
    fn accepts(oid: Oid) -> bool {
        is_text_type(oid)
    }

    fn from_sql(oid: Oid, format: Format, raw: &'a [u8]) -> Result<Self, ConversionError> {
        decode_str(oid, format, raw, "String").map(str::to_owned)
    }

    fn from_sql_unescaped(oid: Oid, format: Format, raw: &[u8]) -> Result<Self, ConversionError> {
        decode_str(oid, format, raw, "String").map(str::to_owned)
    }
}

/// Borrows from the row, and owns only what had to be unescaped (text-format array elements).
impl<'a> FromSql<'a> for Cow<'a, str> {
    fn accepts(oid: Oid) -> bool {
        is_text_type(oid)
    }

    fn from_sql(oid: Oid, format: Format, raw: &'a [u8]) -> Result<Self, ConversionError> {
        decode_str(oid, format, raw, "Cow<str>").map(Cow::Borrowed)
    }

    fn from_sql_unescaped(oid: Oid, format: Format, raw: &[u8]) -> Result<Self, ConversionError> {
        decode_str(oid, format, raw, "Cow<str>").map(|text| Cow::Owned(text.to_owned()))
    }
}

impl ToSql for str {
    fn accepts_binary(&self, oid: Oid) -> bool {
        accepts_text_param(oid)
    }

    fn to_sql_binary(&self, oid: Oid, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        encode_str(self, oid, out, "&str")
    }

    fn to_sql_text(&self, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        out.put_slice(self.as_bytes());
        Ok(IsNull::No)
    }

    fn rust_type(&self) -> &'static str {
        "&str"
    }
}

impl ToSql for String {
    fn accepts_binary(&self, oid: Oid) -> bool {
        accepts_text_param(oid)
    }

    fn to_sql_binary(&self, oid: Oid, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        encode_str(self, oid, out, "String")
    }

    fn to_sql_text(&self, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        out.put_slice(self.as_bytes());
        Ok(IsNull::No)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ConversionErrorKind;
    use proptest::prelude::*;

    // Golden values from PostgreSQL 15:
    //   select encode(textsend('é'), 'hex')                  -> c3a9
    //   select encode(jsonb_send('{"a": 1}'), 'hex')         -> 017b2261223a20317d
    //   select encode(json_send('{"a":1}'), 'hex')           -> 7b2261223a317d
    //   select encode(bpcharsend('ab'::char(4)), 'hex')      -> 61622020
    #[test]
    fn golden_values() {
        assert_eq!(
            <&str>::from_sql(oid::TEXT, Format::Binary, &[0xc3, 0xa9]),
            Ok("é")
        );
        let jsonb = [0x01, 0x7b, 0x22, 0x61, 0x22, 0x3a, 0x20, 0x31, 0x7d];
        assert_eq!(
            <&str>::from_sql(oid::JSONB, Format::Binary, &jsonb),
            Ok("{\"a\": 1}")
        );
        assert_eq!(
            <&str>::from_sql(oid::JSONB, Format::Text, b"{\"a\": 1}"),
            Ok("{\"a\": 1}")
        );
        assert_eq!(
            <&str>::from_sql(oid::JSON, Format::Binary, b"{\"a\":1}"),
            Ok("{\"a\":1}")
        );
        assert_eq!(
            String::from_sql(oid::BPCHAR, Format::Binary, b"ab  "),
            Ok("ab  ".to_owned())
        );
        let mut out = BytesMut::new();
        "{\"a\": 1}".to_sql_binary(oid::JSONB, &mut out).unwrap();
        assert_eq!(&out[..], jsonb);
    }

    #[test]
    fn empty_and_unicode_strings() {
        for oid in [oid::TEXT, oid::VARCHAR, oid::NAME, oid::UNKNOWN, oid::CHAR] {
            assert_eq!(<&str>::from_sql(oid, Format::Text, b""), Ok(""));
        }
        let mut out = BytesMut::new();
        "日本語 🎉".to_sql_binary(oid::VARCHAR, &mut out).unwrap();
        assert_eq!(
            String::from_sql(oid::VARCHAR, Format::Binary, &out).unwrap(),
            "日本語 🎉"
        );
    }

    #[test]
    fn errors_are_typed_and_located() {
        let err = <&str>::from_sql(oid::TEXT, Format::Text, b"ok\xc3(").unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::Invalid);
        assert!(err.to_string().contains("byte offset 2"), "{err}");
        let err = <&str>::from_sql(oid::INT4, Format::Text, b"1").unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::WrongType);
        let err = <&str>::from_sql(oid::JSONB, Format::Binary, b"\x02{}").unwrap_err();
        assert!(err.to_string().contains("version 2"), "{err}");
        let err = <&str>::from_sql(oid::JSONB, Format::Binary, b"").unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::Invalid);
        let err = <&str>::from_sql_unescaped(oid::TEXT, Format::Text, b"x").unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::WrongType);
        assert!(!"x".accepts_binary(oid::INT4));
        assert!(!"x".accepts_binary(oid::CHAR));
    }

    #[test]
    fn cow_borrows_from_rows_and_owns_unescaped_values() {
        let raw = b"abc".to_vec();
        let borrowed = Cow::<str>::from_sql(oid::TEXT, Format::Text, &raw).unwrap();
        assert!(matches!(borrowed, Cow::Borrowed("abc")));
        let owned = Cow::<str>::from_sql_unescaped(oid::TEXT, Format::Text, b"a\"b").unwrap();
        assert!(matches!(owned, Cow::Owned(ref s) if s == "a\"b"));
    }

    proptest! {
        #[test]
        fn round_trips_both_formats(value: String) {
            for oid in [oid::TEXT, oid::JSONB, oid::NAME] {
                let mut out = BytesMut::new();
                value.to_sql_binary(oid, &mut out).unwrap();
                prop_assert_eq!(<&str>::from_sql(oid, Format::Binary, &out), Ok(value.as_str()));
            }
            let mut out = BytesMut::new();
            value.as_str().to_sql_text(&mut out).unwrap();
            prop_assert_eq!(String::from_sql(oid::TEXT, Format::Text, &out), Ok(value.clone()));
        }

        #[test]
        fn never_panics_on_arbitrary_bytes(raw: Vec<u8>) {
            for format in [Format::Binary, Format::Text] {
                for oid in [oid::TEXT, oid::JSON, oid::JSONB] {
                    let _ = <&str>::from_sql(oid, format, &raw);
                    let _ = String::from_sql(oid, format, &raw);
                }
            }
        }
    }
}
