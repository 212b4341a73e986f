//! A JSON reader over one line of UTF-8 text (validated beforehand): values are checked and
//! skipped, strings decoded into a sink, numbers checked against JSON's grammar. Nothing is
//! allocated; errors carry the byte offset.

/// How deep arrays and objects may nest.
pub(crate) const MAX_DEPTH: usize = 128;

/// What went wrong, and where in the line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct JsonError {
    pub(crate) offset: usize,
    pub(crate) kind: JsonErrorKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum JsonErrorKind {
    /// Something else was expected here (the text says what).
    Expected(&'static str),
    TooDeep,
    Nul,
}

/// Receives a decoded string in pieces.
pub(crate) trait StrSink {
    /// Whether `\u0000` is refused (PostgreSQL text cannot hold it).
    const REJECTS_NUL: bool;
    /// A run of bytes copied as they are.
    fn run(&mut self, bytes: &[u8]);
    /// A character that came from an escape.
    fn char(&mut self, c: char);
}

/// Discards the string: validation only.
pub(crate) struct Discard;

impl StrSink for Discard {
    const REJECTS_NUL: bool = false;
    #[inline]
    fn run(&mut self, _: &[u8]) {}
    #[inline]
    fn char(&mut self, _: char) {}
}

/// Collects the decoded string.
pub(crate) struct Collect<'a>(pub(crate) &'a mut Vec<u8>);

impl StrSink for Collect<'_> {
    const REJECTS_NUL: bool = true;
    #[inline]
    fn run(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }
    #[inline]
    fn char(&mut self, c: char) {
        self.0
            .extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
    }
}

/// A read position in one line.
pub(crate) struct Cursor<'a> {
    pub(crate) text: &'a [u8],
    pub(crate) pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(text: &'a [u8]) -> Cursor<'a> {
        Cursor { text, pos: 0 }
    }

    #[inline]
    pub(crate) fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    #[inline]
    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.text.len()
    }

    /// The text from `start` to the current position.
    #[inline]
    pub(crate) fn since(&self, start: usize) -> &'a [u8] {
        self.text.get(start..self.pos).unwrap_or_default()
    }

    #[inline]
    pub(crate) fn error(&self, expected: &'static str) -> JsonError {
        JsonError {
            offset: self.pos,
            kind: JsonErrorKind::Expected(expected),
        }
    }

    /// Skips JSON whitespace.
    #[inline]
    pub(crate) fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.pos += 1;
        }
    }

    /// Consumes `byte` (after whitespace) or fails with `expected`.
    #[inline]
    pub(crate) fn expect(&mut self, byte: u8, expected: &'static str) -> Result<(), JsonError> {
        self.skip_ws();
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(expected))
        }
    }

    /// Consumes the literal `word` (`null`, `true`, `false`).
    #[inline]
    pub(crate) fn literal(&mut self, word: &'static [u8]) -> Result<(), JsonError> {
        if self.text.get(self.pos..self.pos + word.len()) == Some(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(self.error("a JSON value"))
        }
    }

    /// Consumes a number, checked against JSON's grammar.
    pub(crate) fn number(&mut self) -> Result<(), JsonError> {
        let digits = |c: &mut Cursor<'_>| {
            let start = c.pos;
            while matches!(c.peek(), Some(b'0'..=b'9')) {
                c.pos += 1;
            }
            c.pos > start
        };
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                digits(self);
            }
            _ => return Err(self.error("a digit")),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !digits(self) {
                return Err(self.error("a digit after the decimal point"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if !digits(self) {
                return Err(self.error("a digit in the exponent"));
            }
        }
        Ok(())
    }

    /// Consumes a string (the cursor on its opening quote), decoding its contents into `sink`.
    pub(crate) fn string<S: StrSink>(&mut self, sink: &mut S) -> Result<(), JsonError> {
        if self.peek() != Some(b'"') {
            return Err(self.error("a string"));
        }
        self.pos += 1;
        loop {
            let rest = self.text.get(self.pos..).unwrap_or_default();
            let Some(at) = crate::swar::find_json_escape(rest) else {
                self.pos = self.text.len();
                return Err(self.error("the closing quote of the string"));
            };
            sink.run(rest.get(..at).unwrap_or_default());
            self.pos += at;
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'\\') => self.escape(sink)?,
                _ => {
                    return Err(self.error("an escape (\\n, \\t, \\u00XX) for a control character"));
                }
            }
        }
    }

    /// One escape sequence, the cursor on its backslash.
    fn escape<S: StrSink>(&mut self, sink: &mut S) -> Result<(), JsonError> {
        let start = self.pos;
        self.pos += 1;
        let c = match self.peek() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                self.pos += 1;
                let high = self.hex4()?;
                let code = if (0xD800..0xDC00).contains(&high) {
                    if self.text.get(self.pos..self.pos + 2) != Some(b"\\u") {
                        return Err(self.error("the low surrogate (\\uDC00-\\uDFFF) of a pair"));
                    }
                    self.pos += 2;
                    let low = self.hex4()?;
                    if !(0xDC00..0xE000).contains(&low) {
                        return Err(self.error("the low surrogate (\\uDC00-\\uDFFF) of a pair"));
                    }
                    0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                } else {
                    high
                };
                let Some(c) = char::from_u32(code) else {
                    self.pos = start;
                    return Err(self.error("a character, not a lone surrogate"));
                };
                if c == '\0' && S::REJECTS_NUL {
                    return Err(JsonError {
                        offset: start,
                        kind: JsonErrorKind::Nul,
                    });
                }
                sink.char(c);
                return Ok(());
            }
            _ => return Err(self.error("an escape: \\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX")),
        };
        self.pos += 1;
        sink.char(c);
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let mut value = 0;
        for _ in 0..4 {
            let digit = match self.peek() {
                Some(b @ b'0'..=b'9') => b - b'0',
                Some(b @ b'a'..=b'f') => b - b'a' + 10,
                Some(b @ b'A'..=b'F') => b - b'A' + 10,
                _ => return Err(self.error("four hex digits after \\u")),
            };
            value = value * 16 + u32::from(digit);
            self.pos += 1;
        }
        Ok(value)
    }

    /// Consumes any value (whitespace first), checking it.
    pub(crate) fn skip_value(&mut self, depth: usize) -> Result<(), JsonError> {
        self.skip_ws();
        match self.peek() {
            Some(b'"') => self.string(&mut Discard),
            Some(b'n') => self.literal(b"null"),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b'[') => self.skip_array(depth + 1),
            Some(b'{') => self.skip_object(depth + 1),
            _ => Err(self.error("a JSON value")),
        }
    }

    fn check_depth(&self, depth: usize) -> Result<(), JsonError> {
        if depth > MAX_DEPTH {
            Err(JsonError {
                offset: self.pos,
                kind: JsonErrorKind::TooDeep,
            })
        } else {
            Ok(())
        }
    }

    fn skip_array(&mut self, depth: usize) -> Result<(), JsonError> {
        self.check_depth(depth)?;
        self.pos += 1;
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            self.skip_value(depth)?;
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(self.error("',' or ']'")),
            }
        }
    }

    fn skip_object(&mut self, depth: usize) -> Result<(), JsonError> {
        self.check_depth(depth)?;
        self.pos += 1;
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            self.skip_ws();
            self.string(&mut Discard)?;
            self.expect(b':', "':'")?;
            self.skip_value(depth)?;
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(self.error("',' or '}'")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(text: &str) -> Result<String, JsonError> {
        let mut out = Vec::new();
        let mut c = Cursor::new(text.as_bytes());
        c.string(&mut Collect(&mut out))?;
        assert!(c.at_end());
        Ok(String::from_utf8(out).expect("UTF-8"))
    }

    #[test]
    fn strings_decode() {
        assert_eq!(
            decode(r#""a\"b\\c\/\n\t\u00e9\ud83d\ude00""#),
            Ok("a\"b\\c/\n\té😀".into())
        );
        assert_eq!(decode(r#""""#), Ok(String::new()));
        assert!(decode(r#""\ud83d""#).is_err());
        assert!(decode(r#""\ude00""#).is_err());
        assert!(decode("\"a\tb\"").is_err());
        assert!(decode(r#""abc"#).is_err());
        assert!(decode(r#""\x""#).is_err());
        assert_eq!(
            decode(r#""\u0000""#).map_err(|e| e.kind),
            Err(JsonErrorKind::Nul)
        );
    }

    #[test]
    fn values_skip() {
        for ok in [
            "null",
            "true",
            "-0.5e+3",
            "[]",
            "[1, [2, {}]]",
            r#"{"a": [1, "x"], "b": {}}"#,
        ] {
            let mut c = Cursor::new(ok.as_bytes());
            c.skip_value(0).expect(ok);
            assert!(c.at_end(), "{ok}");
        }
        for bad in [
            "nul",
            "[1,]",
            "{\"a\" 1}",
            "{1: 2}",
            "01x",
            "[",
            "-",
            "1.",
            "1e",
        ] {
            let mut c = Cursor::new(bad.as_bytes());
            let r = c.skip_value(0);
            assert!(r.is_err() || !c.at_end(), "{bad}");
        }
        let deep = "[".repeat(MAX_DEPTH + 1);
        let mut c = Cursor::new(deep.as_bytes());
        assert_eq!(
            c.skip_value(0).map_err(|e| e.kind),
            Err(JsonErrorKind::TooDeep)
        );
    }
}
