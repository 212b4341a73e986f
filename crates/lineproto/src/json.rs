//! One point as one JSON object, the shape `sluice lp parse` prints.
//!
//! `{"name": "cpu", "tags": [{"key": "host", "value": "a"}], "fields": [{"key": "v",
//! "value": {"float": 1.5}}], "time": 1465839830100400200}`: tags sorted by key, fields in
//! input order, value kinds `float`, `int`, `uint`, `string`, `bool`, time in nanoseconds.

use crate::point::{FieldValue, Point};
use sluice_formats::encode::write_json_str;

/// Appends `point` as one JSON object (no trailing newline) to `out`.
pub fn write_point_json(point: &Point<'_, '_>, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"name\": ");
    write_json_str(out, point.measurement());
    out.extend_from_slice(b", \"tags\": [");
    for (i, tag) in point.tags().iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b", ");
        }
        out.extend_from_slice(b"{\"key\": ");
        write_json_str(out, &tag.key);
        out.extend_from_slice(b", \"value\": ");
        write_json_str(out, &tag.value);
        out.push(b'}');
    }
    out.extend_from_slice(b"], \"fields\": [");
    for (i, field) in point.fields().iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b", ");
        }
        out.extend_from_slice(b"{\"key\": ");
        write_json_str(out, &field.key);
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
            FieldValue::String(s) => write_json_str(out, s),
            FieldValue::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        }
        out.extend_from_slice(b"}}");
    }
    out.extend_from_slice(b"], \"time\": ");
    out.extend_from_slice(itoa::Buffer::new().format(point.time()).as_bytes());
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_strings() {
        let input = "m\\,\"x,t\\ k=a\\b s=\"q\\\"\\\\\u{7f}é\" 1\n";
        let mut parser = crate::Parser::new(input.as_bytes(), crate::Options::new(0));
        let point = parser.next_point().unwrap().unwrap();
        let mut out = Vec::new();
        write_point_json(&point, &mut out);
        // DEL needs no escape in JSON; it goes out as it is, as PostgreSQL's to_json writes it.
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"name\": \"m,\\\"x\", \"tags\": [{\"key\": \"t k\", \"value\": \"a\\\\b\"}], \
             \"fields\": [{\"key\": \"s\", \"value\": {\"string\": \"q\\\"\\\\\u{7f}é\"}}], \
             \"time\": 1}"
        );
    }
}
