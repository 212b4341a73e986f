//! PostgreSQL's array text (`{1,2,"a b",NULL}`, `{{1,2},{3,4}}`, `[0:1]={7,8}`) to a JSON array
//! whose elements are typed like the array's element type. Dimension bounds are dropped: the
//! JSON array lists the elements in order, nested per dimension.

use super::json_value::{write_scalar, write_string};
use crate::kind::Scalar;

/// PostgreSQL allows 6 dimensions (MAXDIM); a little more is tolerated, deeper text is malformed.
const MAX_DEPTH: usize = 16;

/// Writes the array `text` as a JSON array, falling back to a JSON string of the text when it is
/// not array output (e.g. `int2vector` prints `1 2`).
pub(crate) fn write_array_value(
    out: &mut Vec<u8>,
    text: &[u8],
    element: Scalar,
    delimiter: u8,
    scratch: &mut Vec<u8>,
) {
    let start = out.len();
    let mut parser = ArrayText {
        text,
        pos: 0,
        element,
        delimiter,
    };
    if parser.array(out, scratch).is_none() {
        out.truncate(start);
        write_string(out, text);
    }
}

struct ArrayText<'a> {
    text: &'a [u8],
    pos: usize,
    element: Scalar,
    delimiter: u8,
}

impl<'a> ArrayText<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn array(&mut self, out: &mut Vec<u8>, scratch: &mut Vec<u8>) -> Option<()> {
        if self.peek() == Some(b'[') {
            // Dimension decoration `[lo:hi][lo:hi]=`: the bounds are dropped.
            let eq = memchr::memchr(b'=', self.text)?;
            self.pos = eq + 1;
        }
        self.level(out, scratch, 1)?;
        (self.pos == self.text.len()).then_some(())
    }

    /// One `{...}` level, the cursor on its `{`.
    fn level(&mut self, out: &mut Vec<u8>, scratch: &mut Vec<u8>, depth: usize) -> Option<()> {
        if self.peek() != Some(b'{') || depth > MAX_DEPTH {
            return None;
        }
        self.pos += 1;
        out.push(b'[');
        if self.peek() == Some(b'}') {
            self.pos += 1;
            out.push(b']');
            return Some(());
        }
        loop {
            match self.peek()? {
                b'{' => self.level(out, scratch, depth + 1)?,
                b'"' => self.quoted(out, scratch)?,
                _ => self.unquoted(out)?,
            }
            match self.peek()? {
                b'}' => {
                    self.pos += 1;
                    out.push(b']');
                    return Some(());
                }
                b if b == self.delimiter => {
                    self.pos += 1;
                    out.push(b',');
                }
                _ => return None,
            }
        }
    }

    /// An element in double quotes: backslashes escape the next byte.
    fn quoted(&mut self, out: &mut Vec<u8>, scratch: &mut Vec<u8>) -> Option<()> {
        let body = self.text.get(self.pos + 1..)?;
        let end = memchr::memchr2(b'"', b'\\', body)?;
        let (value, consumed): (&[u8], usize) = if body.get(end) == Some(&b'"') {
            (body.get(..end)?, end + 1)
        } else {
            scratch.clear();
            let mut i = 0;
            loop {
                match *body.get(i)? {
                    b'"' => break,
                    b'\\' => {
                        scratch.push(*body.get(i + 1)?);
                        i += 2;
                    }
                    b => {
                        scratch.push(b);
                        i += 1;
                    }
                }
            }
            (scratch.as_slice(), i + 1)
        };
        write_scalar(out, self.element, value);
        self.pos += 1 + consumed;
        Some(())
    }

    /// An unquoted element, up to the next delimiter or `}`; `NULL` in any case is null.
    fn unquoted(&mut self, out: &mut Vec<u8>) -> Option<()> {
        let rest = self.text.get(self.pos..)?;
        let delimiter = self.delimiter;
        let len = rest
            .iter()
            .position(|&b| b == delimiter || b == b'}' || b == b'{' || b == b'"')?;
        let value = rest.get(..len)?;
        if value.is_empty() {
            return None;
        }
        if value.eq_ignore_ascii_case(b"NULL") {
            out.extend_from_slice(b"null");
        } else {
            write_scalar(out, self.element, value);
        }
        self.pos += len;
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str, element: Scalar, delimiter: u8) -> String {
        let mut out = Vec::new();
        write_array_value(
            &mut out,
            text.as_bytes(),
            element,
            delimiter,
            &mut Vec::new(),
        );
        String::from_utf8(out).expect("UTF-8")
    }

    #[test]
    fn typed_elements() {
        assert_eq!(json("{1,2,NULL,-3}", Scalar::Number, b','), "[1,2,null,-3]");
        assert_eq!(
            json("{NaN,Infinity,1.5}", Scalar::Number, b','),
            r#"["NaN","Infinity",1.5]"#
        );
        assert_eq!(json("{t,f,NULL}", Scalar::Bool, b','), "[true,false,null]");
        assert_eq!(
            json(r#"{"a b",NULL,"NULL","",x,"q\"\\"}"#, Scalar::String, b','),
            r#"["a b",null,"NULL","","x","q\"\\"]"#
        );
        assert_eq!(
            json(r#"{"{\"a\": 1}","[1, 2]",3,"null"}"#, Scalar::Json, b','),
            r#"[{"a": 1},[1, 2],3,null]"#
        );
    }

    #[test]
    fn dimensions_and_bounds() {
        assert_eq!(json("{}", Scalar::Number, b','), "[]");
        assert_eq!(json("{{1,2},{3,4}}", Scalar::Number, b','), "[[1,2],[3,4]]");
        assert_eq!(json("[0:1]={7,8}", Scalar::Number, b','), "[7,8]");
        assert_eq!(
            json("[1:1][2:3]={{a,b}}", Scalar::String, b','),
            r#"[["a","b"]]"#
        );
        assert_eq!(
            json("{(1,1),(0,0);(2,2),(1,1)}", Scalar::String, b';'),
            r#"["(1,1),(0,0)","(2,2),(1,1)"]"#
        );
    }

    #[test]
    fn malformed_text_becomes_a_string() {
        assert_eq!(json("1 2", Scalar::Number, b','), r#""1 2""#);
        for bad in [
            "{1,2", "{1,,2}", "{\"a}", "{1}x", "{,}", "[1:2]{1}", "{a\"b}", "{\"a\\",
        ] {
            assert_eq!(
                json(bad, Scalar::Number, b','),
                {
                    let mut out = Vec::new();
                    write_string(&mut out, bad.as_bytes());
                    String::from_utf8(out).expect("UTF-8")
                },
                "{bad}"
            );
        }
    }
}
