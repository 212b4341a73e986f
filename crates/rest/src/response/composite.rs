//! Composite (row type) values as JSON objects, as `to_json` writes them: the record's text
//! output `(x,3)` parsed field by field and each field written by its type's JSON kind.

use sluice_formats::ColumnKind;
use sluice_formats::encode::write_json_value;

/// The fields of a composite type: their names and JSON kinds (a nested composite is written
/// as its text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordLayout {
    /// Each field's name and JSON kind, in the type's order.
    pub fields: Vec<(String, ColumnKind)>,
}

impl RecordLayout {
    /// Writes the record text `text` as a JSON object into `out`; text that is not a record
    /// (or has another number of fields) is written as a JSON string.
    pub fn write(&self, out: &mut Vec<u8>, text: &[u8], scratch: &mut Vec<u8>) {
        let start = out.len();
        if self.write_object(out, text, scratch).is_none() {
            out.truncate(start);
            sluice_formats::encode::write_json_string(out, text);
        }
    }

    fn write_object(&self, out: &mut Vec<u8>, text: &[u8], scratch: &mut Vec<u8>) -> Option<()> {
        let inner = text.strip_prefix(b"(")?.strip_suffix(b")")?;
        out.push(b'{');
        let mut rest = inner;
        let mut value = Vec::new();
        for (i, (name, kind)) in self.fields.iter().enumerate() {
            if i > 0 {
                out.push(b',');
                rest = rest.strip_prefix(b",")?;
            }
            sluice_formats::encode::write_json_string(out, name.as_bytes());
            out.push(b':');
            let (field, after) = next_field(rest, &mut value)?;
            rest = after;
            match field {
                None => out.extend_from_slice(b"null"),
                Some(()) => write_json_value(out, *kind, Some(&value), scratch),
            }
        }
        if !rest.is_empty() {
            return None;
        }
        out.push(b'}');
        Some(())
    }
}

/// The next field of a record's text: `None` for NULL (nothing before the comma), else its
/// unquoted contents in `value`; and the text after it.
fn next_field<'t>(text: &'t [u8], value: &mut Vec<u8>) -> Option<(Option<()>, &'t [u8])> {
    value.clear();
    match text.first() {
        None | Some(b',') => Some((None, text)),
        Some(b'"') => {
            let mut i = 1;
            loop {
                match text.get(i)? {
                    b'"' if text.get(i + 1) == Some(&b'"') => {
                        value.push(b'"');
                        i += 2;
                    }
                    b'"' => return Some((Some(()), text.get(i + 1..)?)),
                    b'\\' => {
                        value.push(*text.get(i + 1)?);
                        i += 2;
                    }
                    &byte => {
                        value.push(byte);
                        i += 1;
                    }
                }
            }
        }
        Some(_) => {
            let end = text.iter().position(|&b| b == b',').unwrap_or(text.len());
            value.extend_from_slice(text.get(..end)?);
            Some((Some(()), text.get(end..)?))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_formats::Scalar;

    fn json(layout: &RecordLayout, text: &str) -> String {
        let mut out = Vec::new();
        layout.write(&mut out, text.as_bytes(), &mut Vec::new());
        String::from_utf8(out).unwrap_or_default()
    }

    #[test]
    fn records_become_objects() {
        let layout = RecordLayout {
            fields: vec![
                ("label".into(), ColumnKind::STRING),
                ("score".into(), ColumnKind::scalar(Scalar::Number)),
                ("tags".into(), ColumnKind::array(Scalar::String, b',')),
            ],
        };
        assert_eq!(
            json(&layout, "(x,3,{a})"),
            r#"{"label":"x","score":3,"tags":["a"]}"#
        );
        assert_eq!(
            json(&layout, "(,,)"),
            r#"{"label":null,"score":null,"tags":null}"#
        );
        assert_eq!(
            json(&layout, r#"("a ""b"", c\\d",-1,"{""x y"",z}")"#),
            r#"{"label":"a \"b\", c\\d","score":-1,"tags":["x y","z"]}"#
        );
        assert_eq!(
            json(&layout, r#"("",1,{})"#),
            r#"{"label":"","score":1,"tags":[]}"#
        );
        // Not a record of this layout: the text as a string.
        assert_eq!(json(&layout, "(1,2)"), r#""(1,2)""#);
        assert_eq!(json(&layout, "nope"), r#""nope""#);
        assert_eq!(
            json(&layout, "(\"unterminated,1,{})"),
            r#""(\"unterminated,1,{})""#
        );
    }
}
