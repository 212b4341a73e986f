//! `serde_json::Value` ↔ json and jsonb (feature `with-serde_json-1`).

use super::text::{JSONB_VERSION, decode_str};
use super::{ConversionError, Format, FromSql, IsNull, Oid, ToSql, oid};
use bytes::{BufMut, BytesMut};
use serde_json::Value;

fn decode_json(oid: Oid, format: Format, raw: &[u8]) -> Result<Value, ConversionError> {
    if !matches!(oid, oid::JSON | oid::JSONB) {
        return Err(ConversionError::wrong_type(oid, "serde_json::Value"));
    }
    let text = decode_str(oid, format, raw, "serde_json::Value")?;
    serde_json::from_str(text)
        .map_err(|e| ConversionError::invalid(oid, "serde_json::Value", e.to_string()))
}

impl<'a> FromSql<'a> for Value {
    fn accepts(oid: Oid) -> bool {
        matches!(oid, oid::JSON | oid::JSONB)
    }

    fn from_sql(oid: Oid, format: Format, raw: &'a [u8]) -> Result<Self, ConversionError> {
        decode_json(oid, format, raw)
    }

    fn from_sql_unescaped(oid: Oid, format: Format, raw: &[u8]) -> Result<Self, ConversionError> {
        decode_json(oid, format, raw)
    }
}

fn write_json(value: &Value, out: &mut BytesMut) -> Result<(), ConversionError> {
    serde_json::to_writer(out.writer(), value)
        .map_err(|e| ConversionError::invalid(oid::JSON, "serde_json::Value", e.to_string()))
}

impl ToSql for Value {
    fn accepts_binary(&self, oid: Oid) -> bool {
        matches!(oid, oid::JSON | oid::JSONB)
    }

    fn to_sql_binary(&self, oid: Oid, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        match oid {
            oid::JSON => {}
            oid::JSONB => out.put_u8(JSONB_VERSION),
            _ => return Err(ConversionError::wrong_type(oid, "serde_json::Value")),
        }
        write_json(self, out)?;
        Ok(IsNull::No)
    }

    fn to_sql_text(&self, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        write_json(self, out)?;
        Ok(IsNull::No)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ConversionErrorKind;
    use proptest::prelude::*;
    use serde_json::json;

    // select encode(jsonb_send('{"a": [1, "x", null]}'), 'hex') -> 017b2261223a205b312c202278222c206e756c6c5d7d
    #[test]
    fn golden_jsonb() {
        let raw = b"\x01{\"a\": [1, \"x\", null]}";
        let value = json!({"a": [1, "x", null]});
        assert_eq!(
            Value::from_sql(oid::JSONB, Format::Binary, raw),
            Ok(value.clone())
        );
        assert_eq!(
            Value::from_sql(oid::JSONB, Format::Text, &raw[1..]),
            Ok(value.clone())
        );
        assert_eq!(
            Value::from_sql(oid::JSON, Format::Binary, &raw[1..]),
            Ok(value.clone())
        );
        let mut out = BytesMut::new();
        value.to_sql_binary(oid::JSONB, &mut out).unwrap();
        assert_eq!(&out[..], b"\x01{\"a\":[1,\"x\",null]}");
    }

    #[test]
    fn errors_name_line_and_column() {
        let err = Value::from_sql(oid::JSON, Format::Text, b"{\"a\":\n tru}").unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::Invalid);
        assert!(err.to_string().contains("line 2"), "{err}");
        let err = Value::from_sql(oid::TEXT, Format::Text, b"{}").unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::WrongType);
    }

    proptest! {
        #[test]
        fn round_trips_both_formats(text in "[a-z]{0,8}", number: i64, flag: bool) {
            let value = json!({ "text": text, "number": number, "list": [flag, null] });
            for oid in [oid::JSON, oid::JSONB] {
                let mut out = BytesMut::new();
                value.to_sql_binary(oid, &mut out).unwrap();
                prop_assert_eq!(Value::from_sql(oid, Format::Binary, &out), Ok(value.clone()));
                out.clear();
                value.to_sql_text(&mut out).unwrap();
                prop_assert_eq!(Value::from_sql(oid, Format::Text, &out), Ok(value.clone()));
            }
        }

        #[test]
        fn never_panics_on_arbitrary_bytes(raw: Vec<u8>) {
            for format in [Format::Binary, Format::Text] {
                let _ = Value::from_sql(oid::JSON, format, &raw);
                let _ = Value::from_sql(oid::JSONB, format, &raw);
            }
        }
    }
}
