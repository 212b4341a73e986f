//! JSON values to COPY text-format fields, for a column of a given kind: `null` is `\N`, strings
//! their contents (the JSON text itself for json/jsonb), numbers and booleans their text, arrays
//! for array columns array literals, anything else its JSON text. COPY's escaping (`\\`, `\n`,
//! `\r`, `\t`) applies last.

use super::json::{Cursor, JsonError, JsonErrorKind, MAX_DEPTH, StrSink};
use crate::kind::{ColumnKind, Scalar};
use crate::swar;

/// Appends `bytes` escaped for COPY's text format.
#[inline]
pub(crate) fn copy_escape(out: &mut Vec<u8>, bytes: &[u8]) {
    let mut rest = bytes;
    while let Some(at) = swar::find_text_special(rest) {
        let (run, tail) = rest.split_at(at);
        out.extend_from_slice(run);
        let Some((&byte, after)) = tail.split_first() else {
            break;
        };
        match byte {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            other => out.push(other),
        }
        rest = after;
    }
    out.extend_from_slice(rest);
}

/// Appends `bytes` as the inside of a double-quoted array element (`"` and `\` backslashed),
/// then escaped for COPY's text format.
#[inline]
fn array_element_escape(out: &mut Vec<u8>, bytes: &[u8]) {
    let mut rest = bytes;
    while let Some(at) = rest
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b == b'\n' || b == b'\r' || b == b'\t')
    {
        let (run, tail) = rest.split_at(at);
        out.extend_from_slice(run);
        let Some((&byte, after)) = tail.split_first() else {
            break;
        };
        match byte {
            b'"' => out.extend_from_slice(b"\\\\\""),
            b'\\' => out.extend_from_slice(b"\\\\\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            _ => out.extend_from_slice(b"\\t"),
        }
        rest = after;
    }
    out.extend_from_slice(rest);
}

/// A decoded string written as a COPY text field.
struct CopyText<'o>(&'o mut Vec<u8>);

impl StrSink for CopyText<'_> {
    const REJECTS_NUL: bool = true;
    #[inline]
    fn run(&mut self, bytes: &[u8]) {
        copy_escape(self.0, bytes);
    }
    #[inline]
    fn char(&mut self, c: char) {
        copy_escape(self.0, c.encode_utf8(&mut [0; 4]).as_bytes());
    }
}

/// A decoded string written inside a quoted array element.
struct ArrayElement<'o>(&'o mut Vec<u8>);

impl StrSink for ArrayElement<'_> {
    const REJECTS_NUL: bool = true;
    #[inline]
    fn run(&mut self, bytes: &[u8]) {
        array_element_escape(self.0, bytes);
    }
    #[inline]
    fn char(&mut self, c: char) {
        array_element_escape(self.0, c.encode_utf8(&mut [0; 4]).as_bytes());
    }
}

/// Converts the JSON value at the cursor (after whitespace) into one COPY text field.
#[inline]
pub(crate) fn value(
    cur: &mut Cursor<'_>,
    kind: ColumnKind,
    out: &mut Vec<u8>,
) -> Result<(), JsonError> {
    cur.skip_ws();
    match cur.peek() {
        Some(b'"') => {
            if kind.scalar == Scalar::Json && !kind.is_array() {
                raw(cur, out)
            } else {
                cur.string(&mut CopyText(out))
            }
        }
        Some(b'n') => {
            cur.literal(b"null")?;
            out.extend_from_slice(b"\\N");
            Ok(())
        }
        Some(b't') => {
            cur.literal(b"true")?;
            out.extend_from_slice(b"true");
            Ok(())
        }
        Some(b'f') => {
            cur.literal(b"false")?;
            out.extend_from_slice(b"false");
            Ok(())
        }
        Some(b'-' | b'0'..=b'9') => {
            let start = cur.pos;
            cur.number()?;
            out.extend_from_slice(cur.since(start));
            Ok(())
        }
        Some(b'[') => match kind.array_delimiter {
            Some(delimiter) => array_literal(cur, kind.scalar, delimiter, out, 1),
            None => raw(cur, out),
        },
        Some(b'{') => raw(cur, out),
        _ => Err(cur.error("a JSON value")),
    }
}

/// Any value as its JSON text.
fn raw(cur: &mut Cursor<'_>, out: &mut Vec<u8>) -> Result<(), JsonError> {
    let start = cur.pos;
    cur.skip_value(0)?;
    copy_escape(out, cur.since(start));
    Ok(())
}

/// A JSON array as a PostgreSQL array literal, the cursor on its `[`.
fn array_literal(
    cur: &mut Cursor<'_>,
    element: Scalar,
    delimiter: u8,
    out: &mut Vec<u8>,
    depth: usize,
) -> Result<(), JsonError> {
    if depth > MAX_DEPTH {
        return Err(JsonError {
            offset: cur.pos,
            kind: JsonErrorKind::TooDeep,
        });
    }
    cur.pos += 1;
    out.push(b'{');
    cur.skip_ws();
    if cur.peek() == Some(b']') {
        cur.pos += 1;
        out.push(b'}');
        return Ok(());
    }
    loop {
        array_element(cur, element, delimiter, out, depth)?;
        cur.skip_ws();
        match cur.peek() {
            Some(b',') => {
                cur.pos += 1;
                out.push(delimiter);
            }
            Some(b']') => {
                cur.pos += 1;
                out.push(b'}');
                return Ok(());
            }
            _ => return Err(cur.error("',' or ']'")),
        }
    }
}

/// One element of an array literal. Nested arrays are further dimensions, except in json
/// arrays, where they (and objects) are json values.
fn array_element(
    cur: &mut Cursor<'_>,
    element: Scalar,
    delimiter: u8,
    out: &mut Vec<u8>,
    depth: usize,
) -> Result<(), JsonError> {
    cur.skip_ws();
    match cur.peek() {
        Some(b'n') => {
            cur.literal(b"null")?;
            out.extend_from_slice(b"NULL");
            Ok(())
        }
        Some(b't') => {
            cur.literal(b"true")?;
            out.extend_from_slice(b"true");
            Ok(())
        }
        Some(b'f') => {
            cur.literal(b"false")?;
            out.extend_from_slice(b"false");
            Ok(())
        }
        Some(b'-' | b'0'..=b'9') => {
            let start = cur.pos;
            cur.number()?;
            out.extend_from_slice(cur.since(start));
            Ok(())
        }
        Some(b'[') if element != Scalar::Json => {
            array_literal(cur, element, delimiter, out, depth + 1)
        }
        Some(b'"') if element != Scalar::Json => {
            out.push(b'"');
            cur.string(&mut ArrayElement(out))?;
            out.push(b'"');
            Ok(())
        }
        Some(b'"' | b'[' | b'{') => {
            let start = cur.pos;
            cur.skip_value(depth)?;
            out.push(b'"');
            array_element_escape(out, cur.since(start));
            out.push(b'"');
            Ok(())
        }
        _ => Err(cur.error("a JSON value")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn convert(json: &str, kind: ColumnKind) -> Result<String, JsonError> {
        let mut out = Vec::new();
        let mut cur = Cursor::new(json.as_bytes());
        value(&mut cur, kind, &mut out)?;
        assert!(cur.at_end(), "{json}");
        Ok(String::from_utf8(out).expect("UTF-8"))
    }

    const TEXT: ColumnKind = ColumnKind::STRING;
    const JSON: ColumnKind = ColumnKind::scalar(Scalar::Json);

    #[test]
    fn scalars() {
        assert_eq!(convert("null", TEXT).as_deref(), Ok(r"\N"));
        assert_eq!(convert("null", JSON).as_deref(), Ok(r"\N"));
        assert_eq!(
            convert(r#""a\tb\\c\nd""#, TEXT).as_deref(),
            Ok(r"a\tb\\c\nd")
        );
        assert_eq!(convert(r#""\\N""#, TEXT).as_deref(), Ok(r"\\N"));
        assert_eq!(convert(r#""x""#, JSON).as_deref(), Ok(r#""x""#));
        assert_eq!(convert(r#""a\nb""#, JSON).as_deref(), Ok(r#""a\\nb""#));
        assert_eq!(convert("-1.5e3", TEXT).as_deref(), Ok("-1.5e3"));
        assert_eq!(
            convert("true", ColumnKind::scalar(Scalar::Bool)).as_deref(),
            Ok("true")
        );
        assert_eq!(
            convert(r#"{"a": [1, "\t"]}"#, JSON).as_deref(),
            Ok(r#"{"a": [1, "\\t"]}"#)
        );
        assert_eq!(convert("[1, 2]", JSON).as_deref(), Ok("[1, 2]"));
        assert_eq!(convert("[1,2]", TEXT).as_deref(), Ok("[1,2]"));
    }

    #[test]
    fn arrays() {
        let ints = ColumnKind::array(Scalar::Number, b',');
        let texts = ColumnKind::array(Scalar::String, b',');
        let jsons = ColumnKind::array(Scalar::Json, b',');
        assert_eq!(convert("[]", ints).as_deref(), Ok("{}"));
        assert_eq!(convert("[1, null, -2]", ints).as_deref(), Ok("{1,NULL,-2}"));
        assert_eq!(
            convert("[[1,2],[3,4]]", ints).as_deref(),
            Ok("{{1,2},{3,4}}")
        );
        assert_eq!(
            convert(r#"["a b", null, "NULL", "", "q\"\\", "t\tn\n"]"#, texts).as_deref(),
            Ok(r#"{"a b",NULL,"NULL","","q\\"\\\\","t\tn\n"}"#)
        );
        assert_eq!(
            convert(r#"[{"a": "x"}, [1], "s", 2, null]"#, jsons).as_deref(),
            Ok(r#"{"{\\"a\\": \\"x\\"}","[1]","\\"s\\"",2,NULL}"#)
        );
        assert_eq!(convert(r#""{1,2}""#, ints).as_deref(), Ok("{1,2}"));
        let boxes = ColumnKind::array(Scalar::String, b';');
        assert_eq!(
            convert(r#"["(1,1),(0,0)", "(2,2),(1,1)"]"#, boxes).as_deref(),
            Ok(r#"{"(1,1),(0,0)";"(2,2),(1,1)"}"#)
        );
    }

    #[test]
    fn errors() {
        assert!(convert(r#""\u0000""#, TEXT).is_err());
        assert!(convert(r#""\u0000""#, JSON).is_ok());
        assert!(convert("[1,", ColumnKind::array(Scalar::Number, b',')).is_err());
        assert!(convert("nope", TEXT).is_err());
    }
}
