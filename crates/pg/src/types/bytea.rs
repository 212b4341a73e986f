//! Byte strings: `&[u8]` (binary format) and `Vec<u8>` (both formats) ↔ bytea.

use super::{ConversionError, ConversionErrorKind, Format, FromSql, IsNull, Oid, ToSql, oid};
use bytes::{BufMut, BytesMut};

/// Decodes bytea text output: hex (`\x0aff`, the default) or the legacy escape format
/// (`a\\b\000`, with `bytea_output = escape`).
fn decode_bytea_text(oid: Oid, raw: &[u8]) -> Result<Vec<u8>, ConversionError> {
    match raw {
        [b'\\', b'x', hex @ ..] => decode_hex(oid, raw, hex),
        _ => decode_escape(oid, raw),
    }
}

fn hex_value(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        b'A'..=b'F' => Some(digit - b'A' + 10),
        _ => None,
    }
}

fn decode_hex(oid: Oid, raw: &[u8], hex: &[u8]) -> Result<Vec<u8>, ConversionError> {
    let mut bytes = Vec::with_capacity(hex.len() / 2);
    let mut position = 2;
    let mut rest = hex;
    loop {
        // byteain allows whitespace between hex digit pairs.
        while let [b' ' | b'\t' | b'\n' | b'\r', tail @ ..] = rest {
            rest = tail;
            position += 1;
        }
        match rest {
            [] => return Ok(bytes),
            [high, low, tail @ ..] => {
                let byte = hex_value(*high)
                    .zip(hex_value(*low))
                    .map(|(h, l)| h << 4 | l);
                let byte = byte.ok_or_else(|| {
                    bad_bytea(oid, raw, position, "is not a pair of hexadecimal digits")
                })?;
                bytes.push(byte);
                rest = tail;
                position += 2;
            }
            [_] => {
                return Err(bad_bytea(
                    oid,
                    raw,
                    position,
                    "is an odd number of hexadecimal digits",
                ));
            }
        }
    }
}

fn decode_escape(oid: Oid, raw: &[u8]) -> Result<Vec<u8>, ConversionError> {
    let mut bytes = Vec::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(backslash) = memchr::memchr(b'\\', rest) {
        let (literal, escape) = rest.split_at(backslash);
        bytes.extend_from_slice(literal);
        let position = raw.len() - escape.len();
        match escape {
            [_, b'\\', tail @ ..] => {
                bytes.push(b'\\');
                rest = tail;
            }
            [
                _,
                a @ b'0'..=b'3',
                b @ b'0'..=b'7',
                c @ b'0'..=b'7',
                tail @ ..,
            ] => {
                bytes.push((a - b'0') << 6 | (b - b'0') << 3 | (c - b'0'));
                rest = tail;
            }
            _ => {
                return Err(bad_bytea(
                    oid,
                    raw,
                    position,
                    "is not \\\\ or a \\ooo octal escape",
                ));
            }
        }
    }
    bytes.extend_from_slice(rest);
    Ok(bytes)
}

fn bad_bytea(oid: Oid, raw: &[u8], position: usize, what: &str) -> ConversionError {
    let at = raw.get(position..).unwrap_or_default();
    let at = &at[..at.len().min(4)];
    ConversionError::invalid(
        oid,
        "Vec<u8>",
        format!(
            "bytea text at byte offset {position} ({}) {what}",
            String::from_utf8_lossy(at)
        ),
    )
}

fn decode_owned(oid: Oid, format: Format, raw: &[u8]) -> Result<Vec<u8>, ConversionError> {
    match (oid, format) {
        (oid::BYTEA, Format::Binary) => Ok(raw.to_vec()),
        (oid::BYTEA, Format::Text) => decode_bytea_text(oid, raw),
        _ => Err(ConversionError::wrong_type(oid, "Vec<u8>")),
    }
}

impl<'a> FromSql<'a> for &'a [u8] {
    fn accepts(oid: Oid) -> bool {
        oid == oid::BYTEA
    }

    /// Binary format only: text-format bytea must be decoded, so read it as `Vec<u8>`.
    fn from_sql(oid: Oid, format: Format, raw: &'a [u8]) -> Result<Self, ConversionError> {
        match (oid, format) {
            (oid::BYTEA, Format::Binary) => Ok(raw),
            (oid::BYTEA, Format::Text) => Err(ConversionError::new(
                ConversionErrorKind::WrongType,
                oid,
                "&[u8]",
                "a text-format bytea is hex-encoded and cannot be borrowed; \
                 read it as Vec<u8> or request binary format",
            )),
            _ => Err(ConversionError::wrong_type(oid, "&[u8]")),
        }
    }
}

impl<'a> FromSql<'a> for Vec<u8> {
    fn accepts(oid: Oid) -> bool {
        oid == oid::BYTEA
    }

    fn from_sql(oid: Oid, format: Format, raw: &'a [u8]) -> Result<Self, ConversionError> {
        decode_owned(oid, format, raw)
    }

    fn from_sql_unescaped(oid: Oid, format: Format, raw: &[u8]) -> Result<Self, ConversionError> {
        decode_owned(oid, format, raw)
    }
}

/// A fixed-size byte array is a bytea, like `&[u8]`.
impl<const N: usize> ToSql for [u8; N] {
    fn accepts_binary(&self, oid: Oid) -> bool {
        oid == oid::BYTEA
    }

    fn to_sql_binary(&self, oid: Oid, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        self.as_slice().to_sql_binary(oid, out)
    }

    fn to_sql_text(&self, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        encode_hex_text(self, out);
        Ok(IsNull::No)
    }
}

const HEX_DIGITS: &[u8; 16] = b"0123456789abcdef";

/// Writes `\x` and two lowercase hex digits per byte: bytea's input syntax in any setting.
fn encode_hex_text(value: &[u8], out: &mut BytesMut) {
    out.reserve(2 + value.len() * 2);
    out.put_slice(b"\\x");
    for &byte in value {
        out.put_slice(&[
            HEX_DIGITS[usize::from(byte >> 4)],
            HEX_DIGITS[usize::from(byte & 15)],
        ]);
    }
}

impl ToSql for [u8] {
    fn accepts_binary(&self, oid: Oid) -> bool {
        oid == oid::BYTEA
    }

    fn to_sql_binary(&self, oid: Oid, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        if oid != oid::BYTEA {
            return Err(ConversionError::wrong_type(oid, "&[u8]"));
        }
        out.put_slice(self);
        Ok(IsNull::No)
    }

    fn to_sql_text(&self, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        encode_hex_text(self, out);
        Ok(IsNull::No)
    }

    fn rust_type(&self) -> &'static str {
        "&[u8]"
    }
}

impl ToSql for Vec<u8> {
    fn accepts_binary(&self, oid: Oid) -> bool {
        oid == oid::BYTEA
    }

    fn to_sql_binary(&self, oid: Oid, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        self.as_slice().to_sql_binary(oid, out)
    }

    fn to_sql_text(&self, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        encode_hex_text(self, out);
        Ok(IsNull::No)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn text(value: &[u8]) -> String {
        let mut out = BytesMut::new();
        value.to_sql_text(&mut out).unwrap();
        String::from_utf8(out.to_vec()).unwrap()
    }

    // Golden values from PostgreSQL 15: '\x00ff5c'::bytea::text is \x00ff5c; with
    // bytea_output = escape, '\x00ff5c27410a'::bytea::text is \000\377\\'A\012.
    #[test]
    fn golden_text_forms() {
        let value = [0x00, 0xff, 0x5c];
        assert_eq!(text(&value), "\\x00ff5c");
        assert_eq!(
            Vec::<u8>::from_sql(oid::BYTEA, Format::Text, b"\\x00ff5c"),
            Ok(value.to_vec())
        );
        assert_eq!(
            Vec::<u8>::from_sql(oid::BYTEA, Format::Text, b"\\x00FF 5c"),
            Ok(value.to_vec())
        );
        assert_eq!(
            Vec::<u8>::from_sql(oid::BYTEA, Format::Text, b"\\000\\377\\\\'A\\012"),
            Ok(vec![0x00, 0xff, 0x5c, 0x27, 0x41, 0x0a])
        );
        assert_eq!(
            Vec::<u8>::from_sql(oid::BYTEA, Format::Text, b"\\x"),
            Ok(vec![])
        );
        assert_eq!(
            Vec::<u8>::from_sql(oid::BYTEA, Format::Text, b""),
            Ok(vec![])
        );
        assert_eq!(text(&[]), "\\x");
        let mut out = BytesMut::new();
        [0xabu8, 0x01].to_sql_text(&mut out).unwrap();
        assert_eq!(&out[..], b"\\xab01");
    }

    #[test]
    fn binary_is_the_bytes_and_borrows() {
        let raw = [1u8, 2, 3];
        assert_eq!(
            <&[u8]>::from_sql(oid::BYTEA, Format::Binary, &raw),
            Ok(&raw[..])
        );
        let mut out = BytesMut::new();
        raw.to_vec().to_sql_binary(oid::BYTEA, &mut out).unwrap();
        assert_eq!(&out[..], raw);
        let err = <&[u8]>::from_sql(oid::BYTEA, Format::Text, b"\\x01").unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::WrongType);
        assert!(err.to_string().contains("Vec<u8>"), "{err}");
    }

    #[test]
    fn bad_text_names_the_offset() {
        let err = Vec::<u8>::from_sql(oid::BYTEA, Format::Text, b"\\x0g").unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::Invalid);
        assert!(err.to_string().contains("offset 2"), "{err}");
        let err = Vec::<u8>::from_sql(oid::BYTEA, Format::Text, b"\\x012").unwrap_err();
        assert!(err.to_string().contains("odd"), "{err}");
        let err = Vec::<u8>::from_sql(oid::BYTEA, Format::Text, b"ab\\9").unwrap_err();
        assert!(err.to_string().contains("offset 2"), "{err}");
        let err = Vec::<u8>::from_sql(oid::BYTEA, Format::Text, b"ab\\").unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::Invalid);
    }

    proptest! {
        #[test]
        fn round_trips_both_formats(value: Vec<u8>) {
            let mut out = BytesMut::new();
            value.to_sql_binary(oid::BYTEA, &mut out).unwrap();
            prop_assert_eq!(Vec::<u8>::from_sql(oid::BYTEA, Format::Binary, &out), Ok(value.clone()));
            prop_assert_eq!(
                Vec::<u8>::from_sql(oid::BYTEA, Format::Text, text(&value).as_bytes()),
                Ok(value)
            );
        }

        #[test]
        fn escape_format_round_trips(value: Vec<u8>) {
            // Write the legacy escape format the way byteaout does, and read it back.
            let mut escaped = Vec::new();
            for &b in &value {
                match b {
                    b'\\' => escaped.extend_from_slice(b"\\\\"),
                    0x20..=0x7e => escaped.push(b),
                    _ => escaped.extend_from_slice(format!("\\{b:03o}").as_bytes()),
                }
            }
            prop_assert_eq!(Vec::<u8>::from_sql(oid::BYTEA, Format::Text, &escaped), Ok(value));
        }

        #[test]
        fn never_panics_on_arbitrary_bytes(raw: Vec<u8>) {
            for format in [Format::Binary, Format::Text] {
                let _ = Vec::<u8>::from_sql(oid::BYTEA, format, &raw);
                let _ = <&[u8]>::from_sql(oid::BYTEA, format, &raw);
            }
            let mut hex = b"\\x".to_vec();
            hex.extend_from_slice(&raw);
            let _ = Vec::<u8>::from_sql(oid::BYTEA, Format::Text, &hex);
        }
    }
}
