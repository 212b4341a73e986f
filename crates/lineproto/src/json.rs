//! One point as one JSON object, the shape `sluice lp parse` prints.
//!
//! `{"name": "cpu", "tags": [{"key": "host", "value": "a"}], "fields": [{"key": "v",
//! "value": {"float": 1.5}}], "time": 1465839830100400200}`: tags sorted by key, fields in
//! input order, value kinds `float`, `int`, `uint`, `string`, `bool`, time in nanoseconds.

use crate::point::{FieldValue, Point};

/// Appends `point` as one JSON object (no trailing newline) to `out`.
pub fn write_point_json(point: &Point<'_, '_>, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"name\": ");
    write_json_string(point.measurement(), out);
    out.extend_from_slice(b", \"tags\": [");
    for (i, tag) in point.tags().iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b", ");
        }
        out.extend_from_slice(b"{\"key\": ");
        write_json_string(&tag.key, out);
        out.extend_from_slice(b", \"value\": ");
        write_json_string(&tag.value, out);
        out.push(b'}');
    }
    out.extend_from_slice(b"], \"fields\": [");
    for (i, field) in point.fields().iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b", ");
        }
        out.extend_from_slice(b"{\"key\": ");
        write_json_string(&field.key, out);
        out.extend_from_slice(b", \"value\": {\"");
        out.extend_from_slice(field.value.type_name().as_bytes());
        out.extend_from_slice(b"\": ");
        match &field.value {
            FieldValue::Float(v) => {
                let mut buf = ryu::Buffer::new();
                out.extend_from_slice(buf.format_finite(*v).as_bytes());
            }
            FieldValue::Int(v) => out.extend_from_slice(itoa::Buffer::new().format(*v).as_bytes()),
            FieldValue::UInt(v) => {
                out.extend_from_slice(itoa::Buffer::new().format(*v).as_bytes());
            }
            FieldValue::String(s) => write_json_string(s, out),
            FieldValue::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        }
        out.extend_from_slice(b"}}");
    }
    out.extend_from_slice(b"], \"time\": ");
    out.extend_from_slice(itoa::Buffer::new().format(point.time()).as_bytes());
    out.push(b'}');
}

/// Appends `s` as a JSON string: quotes, backslashes and control characters escaped,
/// everything else as UTF-8.
pub fn write_json_string(s: &str, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut run = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0x00..=0x1f | 0x7f => b"",
            _ => continue,
        };
        out.extend_from_slice(bytes.get(run..i).unwrap_or_default());
        if escape.is_empty() {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 0xf)]);
        } else {
            out.extend_from_slice(escape);
        }
        run = i + 1;
    }
    out.extend_from_slice(bytes.get(run..).unwrap_or_default());
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_strings() {
        let mut out = Vec::new();
        write_json_string("a\"b\\c\nd\u{1}\u{7f}é", &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#""a\"b\\c\nd\u0001\u007fé""#
        );
    }
}
