//! PostgreSQL binary COPY encodings of the values a point carries, written straight into a buffer.

use bytes::{BufMut, BytesMut};
use sluice_formats::encode::escape_json_str;
use sluice_lineproto::{FieldValue, Tag};
use sluice_pg::types::binary::{
    JSONB_VERSION, encode_numeric_u64, encode_timestamp, pg_micros_from_unix_nanos,
};

/// The signature, flags and header extension length that start binary COPY data.
pub const COPY_HEADER: &[u8] = sluice_pg::BINARY_HEADER;

/// The trailer that ends binary COPY data.
pub const COPY_TRAILER: i16 = -1;

/// A NULL value.
#[inline]
pub fn null(buf: &mut BytesMut) {
    buf.put_i32(-1);
}

/// A `timestamptz` from nanoseconds since the Unix epoch; PostgreSQL keeps microseconds, so
/// the nanoseconds are cut (towards minus infinity, so times stay ordered).
#[inline]
pub fn timestamp(buf: &mut BytesMut, nanos: i64) {
    buf.put_i32(8);
    encode_timestamp(buf, pg_micros_from_unix_nanos(nanos));
}

/// A `text` value.
#[inline]
pub fn text(buf: &mut BytesMut, value: &str) {
    buf.put_i32(value.len() as i32);
    buf.put_slice(value.as_bytes());
}

/// A field value in the binary form of the column type it maps to.
#[inline]
pub fn field(buf: &mut BytesMut, value: &FieldValue<'_>) {
    match value {
        FieldValue::Float(v) => {
            buf.put_i32(8);
            buf.put_f64(*v);
        }
        FieldValue::Int(v) => {
            buf.put_i32(8);
            buf.put_i64(*v);
        }
        FieldValue::UInt(v) => numeric(buf, *v),
        FieldValue::String(v) => text(buf, v),
        FieldValue::Bool(v) => {
            buf.put_i32(1);
            buf.put_u8(u8::from(*v));
        }
    }
}

/// An unsigned integer as `numeric` (PostgreSQL's normal form: no trailing zero digits).
#[inline]
pub fn numeric(buf: &mut BytesMut, value: u64) {
    let at = buf.len();
    buf.put_i32(0);
    encode_numeric_u64(buf, value);
    let len = (buf.len() - at - 4) as i32;
    buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
}

/// Every tag of a point as one `jsonb` object (version byte 1, then the JSON text).
pub fn tags_jsonb(buf: &mut BytesMut, tags: &[Tag<'_>]) {
    let at = buf.len();
    buf.put_i32(0);
    buf.put_u8(JSONB_VERSION);
    buf.put_u8(b'{');
    for (i, tag) in tags.iter().enumerate() {
        if i > 0 {
            buf.put_u8(b',');
        }
        json_string(buf, &tag.key);
        buf.put_u8(b':');
        json_string(buf, &tag.value);
    }
    buf.put_u8(b'}');
    let len = (buf.len() - at - 4) as i32;
    buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
}

/// A JSON string literal, escaped by the JSON encoder every Sluice output shares.
#[inline]
fn json_string(buf: &mut BytesMut, value: &str) {
    buf.put_u8(b'"');
    escape_json_str(value, |piece| buf.put_slice(piece));
    buf.put_u8(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numeric_bytes(value: u64) -> Vec<u8> {
        let mut buf = BytesMut::new();
        numeric(&mut buf, value);
        buf.to_vec()
    }

    #[test]
    fn numeric_forms() {
        // 0: no digits.
        assert_eq!(numeric_bytes(0), [0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0]);
        // 12345 = 1|2345: two digits, weight 1.
        assert_eq!(
            numeric_bytes(12345),
            [0, 0, 0, 12, 0, 2, 0, 1, 0, 0, 0, 0, 0, 1, 0x09, 0x29]
        );
        // 10000 = 1|0000: the trailing zero digit is dropped, weight stays 1.
        assert_eq!(
            numeric_bytes(10_000),
            [0, 0, 0, 10, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1]
        );
        // u64::MAX = 1844|6744|0737|0955|1615.
        let max = numeric_bytes(u64::MAX);
        assert_eq!(&max[4..8], &[0, 5, 0, 4]);
        assert_eq!(&max[12..14], &1844i16.to_be_bytes());
    }

    #[test]
    fn timestamps_floor_to_microseconds() {
        let mut buf = BytesMut::new();
        timestamp(&mut buf, -1);
        assert_eq!(
            &buf[4..],
            &(-1 - sluice_pg::types::binary::PG_EPOCH_UNIX_MICROS).to_be_bytes()
        );
    }

    #[test]
    fn jsonb_escapes() {
        let mut buf = BytesMut::new();
        let tags = [Tag {
            key: "a\"b".into(),
            value: "c\\d".into(),
        }];
        tags_jsonb(&mut buf, &tags);
        assert_eq!(&buf[4..], b"\x01{\"a\\\"b\":\"c\\\\d\"}");
    }
}
