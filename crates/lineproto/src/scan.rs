//! The cursor over the input and the byte scanners every section of a line shares.

use std::borrow::Cow;

use crate::error::{ErrorKind, Fail};

/// Byte classes, as bit flags in [`CLASS`].
pub(crate) const CTRL: u8 = 1;
pub(crate) const SPACE: u8 = 2;
pub(crate) const COMMA: u8 = 4;
pub(crate) const EQUALS: u8 = 8;
pub(crate) const BACKSLASH: u8 = 16;

/// Bytes that end a measurement name: comma, space, backslash (an escape) and control bytes.
pub(crate) const MEASUREMENT_STOP: u8 = CTRL | SPACE | COMMA | BACKSLASH;
/// Bytes that end a tag key, tag value or field key: as a measurement, plus `=`.
pub(crate) const KEY_STOP: u8 = CTRL | SPACE | COMMA | EQUALS | BACKSLASH;
/// Bytes that end an unquoted field value or a timestamp.
pub(crate) const VALUE_STOP: u8 = CTRL | SPACE | COMMA;

/// The class of every byte; one table lookup per byte in the name loops, which beats
/// `memchr` on the short tokens line protocol is made of (profiled: names are 2-20 bytes).
pub(crate) static CLASS: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = CTRL;
        b += 1;
    }
    table[0x7f] = CTRL;
    table[b' ' as usize] = SPACE;
    table[b',' as usize] = COMMA;
    table[b'=' as usize] = EQUALS;
    table[b'\\' as usize] = BACKSLASH;
    table
};

#[inline(always)]
pub(crate) fn class(b: u8) -> u8 {
    CLASS[b as usize]
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// High bit set in each byte of `x` equal to `b`. The lowest flagged byte is always a real
/// match (a borrow can only flag bytes above a real match), which is all `find_stop` uses.
#[inline(always)]
fn bytes_equal(x: u64, b: u8) -> u64 {
    let y = x ^ (ONES * u64::from(b));
    y.wrapping_sub(ONES) & !y & HIGHS
}

/// High bit set in each byte of `x` below 0x21: control bytes and space (bytes of 0x80 and
/// above, UTF-8, are never flagged). Same lowest-match guarantee as `bytes_equal`.
#[inline(always)]
fn bytes_below_0x21(x: u64) -> u64 {
    x.wrapping_sub(ONES * 0x21) & !x & HIGHS
}

/// The index of the first byte at or after `i` whose class meets `stop`, or `bytes.len()`.
/// Eight bytes at a time (SWAR), then byte by byte for the tail: names and values are 5-20
/// bytes, and the byte loop was a third of the parse time.
#[inline(always)]
pub(crate) fn find_stop(bytes: &[u8], mut i: usize, stop: u8) -> usize {
    while let Some(chunk) = bytes
        .get(i..i + 8)
        .and_then(|c| <[u8; 8]>::try_from(c).ok())
    {
        let x = u64::from_le_bytes(chunk);
        let mut hits = bytes_below_0x21(x) | bytes_equal(x, b',') | bytes_equal(x, 0x7f);
        if stop & EQUALS != 0 {
            hits |= bytes_equal(x, b'=');
        }
        if stop & BACKSLASH != 0 {
            hits |= bytes_equal(x, b'\\');
        }
        if hits != 0 {
            return i + (hits.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < bytes.len() && class(bytes[i]) & stop == 0 {
        i += 1;
    }
    i
}

/// A position in the (UTF-8 validated) input.
pub(crate) struct Cursor<'a> {
    pub text: &'a str,
    pub bytes: &'a [u8],
    pub pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(text: &'a str) -> Self {
        Self {
            text,
            bytes: text.as_bytes(),
            pos: 0,
        }
    }

    /// The byte at the cursor, if any.
    #[inline(always)]
    pub fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// A slice of the input. Every caller cuts at ASCII delimiters, so the range always falls
    /// on character boundaries; the check stays so that a bug is an error, never a panic.
    #[inline(always)]
    pub fn slice(&self, start: usize, end: usize) -> Result<&'a str, Fail> {
        match self.text.get(start..end) {
            Some(s) => Ok(s),
            None => Err(Fail::at(ErrorKind::InvalidUtf8, start)),
        }
    }

    /// Skips spaces; returns how many.
    #[inline(always)]
    pub fn skip_spaces(&mut self) -> usize {
        let start = self.pos;
        while self.bytes.get(self.pos) == Some(&b' ') {
            self.pos += 1;
        }
        self.pos - start
    }

    /// Whether the cursor is at the end of a line (`\n`, `\r\n`, a `\r` that ends the input)
    /// or of the input.
    #[inline(always)]
    pub fn at_eol(&self) -> bool {
        match self.bytes.get(self.pos) {
            None | Some(b'\n') => true,
            Some(b'\r') => matches!(self.bytes.get(self.pos + 1), None | Some(b'\n')),
            Some(_) => false,
        }
    }

    /// Scans a measurement name, tag key, tag value or field key ending at any byte of
    /// `stop`; returns it unescaped, borrowed unless an escape forced a copy.
    #[inline(always)]
    pub fn name(&mut self, stop: u8) -> Result<Cow<'a, str>, Fail> {
        let start = self.pos;
        let bytes = self.bytes;
        let i = find_stop(bytes, start, stop);
        if bytes.get(i) == Some(&b'\\') {
            return self.name_escaped(start, i, stop);
        }
        self.pos = i;
        Ok(Cow::Borrowed(self.slice(start, i)?))
    }

    /// The slow path of [`Cursor::name`]: a backslash was found at `i`. A backslash before one
    /// of the context's delimiters (comma and space; `=` too outside a measurement) stands for
    /// that character; any other backslash is kept as it is, the one before another backslash
    /// and one that ends the name included, and the character after it is read as usual (so in
    /// `\\\ ` the first two backslashes are kept and the third escapes the space), as
    /// InfluxDB's reference parser reads them.
    #[cold]
    #[inline(never)]
    fn name_escaped(&mut self, start: usize, mut i: usize, stop: u8) -> Result<Cow<'a, str>, Fail> {
        let escapable = stop & !(CTRL | BACKSLASH);
        let bytes = self.bytes;
        let mut out = String::with_capacity(i - start + 16);
        out.push_str(self.slice(start, i)?);
        while i < bytes.len() && bytes[i] == b'\\' {
            match bytes.get(i + 1) {
                Some(&next) if class(next) & escapable != 0 => {
                    out.push(char::from(next));
                    i += 2;
                }
                _ => {
                    out.push('\\');
                    i += 1;
                }
            }
            let run = i;
            i = find_stop(bytes, i, stop);
            out.push_str(self.slice(run, i)?);
        }
        self.pos = i;
        Ok(Cow::Owned(out))
    }

    /// Scans an unquoted field value or timestamp: everything up to a space, comma, control
    /// byte or the end of input. Returns the start offset and the token.
    #[inline(always)]
    pub fn token(&mut self) -> Result<(usize, &'a str), Fail> {
        let start = self.pos;
        let i = find_stop(self.bytes, start, VALUE_STOP);
        self.pos = i;
        Ok((start, self.slice(start, i)?))
    }

    /// The error for a name or value that stopped at byte `at` which its context does not
    /// allow: the end of the line becomes `eol_kind`, a control byte `ControlCharacter`.
    #[cold]
    #[inline(never)]
    pub fn stop_error(&self, at: usize, eol_kind: ErrorKind) -> Fail {
        match self.bytes.get(at) {
            None | Some(b'\n') => Fail::at(eol_kind, at),
            Some(b'\r') if matches!(self.bytes.get(at + 1), None | Some(b'\n')) => {
                Fail::at(eol_kind, at)
            }
            Some(&b) if class(b) & CTRL != 0 => Fail::at(ErrorKind::ControlCharacter, at),
            Some(_) => Fail::at(eol_kind, at),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(input: &str, stop: u8) -> Result<(Cow<'_, str>, usize), Fail> {
        let mut cursor = Cursor::new(input);
        let name = cursor.name(stop)?;
        Ok((name, cursor.pos))
    }

    #[test]
    fn plain_names_are_borrowed() {
        let (n, end) = name("cpu,host=a", MEASUREMENT_STOP).unwrap();
        assert!(matches!(n, Cow::Borrowed("cpu")));
        assert_eq!(end, 3);
        let (n, end) = name("host=a", KEY_STOP).unwrap();
        assert!(matches!(n, Cow::Borrowed("host")));
        assert_eq!(end, 4);
    }

    #[test]
    fn escapes_are_unescaped_into_an_owned_string() {
        let (n, end) = name(r"my\ cpu\,x v=1", MEASUREMENT_STOP).unwrap();
        assert!(matches!(n, Cow::Owned(_)));
        assert_eq!(n, "my cpu,x");
        assert_eq!(end, 10);
        let (n, _) = name(r"a\=b\ c\,d=1", KEY_STOP).unwrap();
        assert_eq!(n, "a=b c,d");
    }

    #[test]
    fn equals_is_not_an_escape_in_a_measurement() {
        let (n, _) = name(r"a\=b v=1", MEASUREMENT_STOP).unwrap();
        assert_eq!(n, r"a\=b");
    }

    #[test]
    fn only_delimiters_are_escaped_other_backslashes_stay() {
        let (n, _) = name(r"a\\b\xc\é v=1", MEASUREMENT_STOP).unwrap();
        assert_eq!(n, r"a\\b\xc\é");
        // Before a backslash a backslash is kept; the second one then escapes the space.
        let (n, end) = name(r"\\ east v=1", KEY_STOP).unwrap();
        assert_eq!((n.as_ref(), end), (r"\ east", 7));
        let (n, _) = name(r"two\\\ words v=42", KEY_STOP).unwrap();
        assert_eq!(n, r"two\\ words");
        let (n, _) = name(r"\e\\\ =4", KEY_STOP).unwrap();
        assert_eq!(n, r"\e\\ ");
    }

    #[test]
    fn a_backslash_may_end_a_name() {
        let (n, end) = name("cpu\\", MEASUREMENT_STOP).unwrap();
        assert_eq!((n.as_ref(), end), ("cpu\\", 4));
        let (n, end) = name("t\\\nx", KEY_STOP).unwrap();
        assert_eq!((n.as_ref(), end), ("t\\", 2));
    }

    #[test]
    fn find_stop_agrees_with_the_byte_table() {
        let alphabet = b"ab ,=\\\"\t\n\x7f\xc3\xa9\x00\x1f!~";
        let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
        for _ in 0..20_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 40) as usize;
            let bytes: Vec<u8> = (0..len)
                .map(|k| alphabet[((seed >> (k % 50)) as usize + k * 7) % alphabet.len()])
                .collect();
            for stop in [MEASUREMENT_STOP, KEY_STOP, VALUE_STOP] {
                for start in 0..=len {
                    let want = (start..len)
                        .find(|&k| class(bytes[k]) & stop != 0)
                        .unwrap_or(len);
                    assert_eq!(
                        find_stop(&bytes, start, stop),
                        want,
                        "{bytes:?} {start} {stop}"
                    );
                }
            }
        }
    }

    #[test]
    fn tokens_stop_at_space_comma_and_control_bytes() {
        let mut c = Cursor::new("1.5,b=2");
        assert_eq!(c.token().unwrap(), (0, "1.5"));
        let mut c = Cursor::new("12i\r\n");
        assert_eq!(c.token().unwrap(), (0, "12i"));
        assert!(c.at_eol());
    }
}
