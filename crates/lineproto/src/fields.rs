//! The field set: `key=value` pairs, their typed values and string unescaping.

use std::borrow::Cow;

use memchr::memchr2;

use crate::error::{ErrorKind, Fail};
use crate::number::{is_nan_or_inf, parse_bool, parse_number};
use crate::point::{Field, FieldValue};
use crate::scan::{CTRL, Cursor, KEY_STOP, class};

/// Parses the field set at the cursor (on its first key), appends the fields to `fields` and
/// leaves the cursor on the space or line end after the last value. A key given twice keeps
/// its first position and takes the last value. Returns the longest raw field key, in bytes,
/// for the series key length check.
#[inline(always)]
pub(crate) fn parse_fields<'a>(
    c: &mut Cursor<'a>,
    fields: &mut Vec<Field<'a>>,
    keys: &mut FieldKeys,
    max_string_len: usize,
) -> Result<usize, Fail> {
    let base = fields.len();
    keys.clear();
    let mut longest_key = 0;
    loop {
        let key_start = c.pos;
        let key = c.name(KEY_STOP)?;
        let key_end = c.pos;
        if key.is_empty() {
            return Err(c.stop_error(key_end, ErrorKind::MissingFieldKey));
        }
        if c.peek() != Some(b'=') {
            let fail = c.stop_error(key_end, ErrorKind::MissingFieldEquals);
            return Err(Fail::quoting(fail.kind, fail.at, key_start, key_end));
        }
        c.pos += 1;
        let value = parse_value(c, max_string_len)
            .map_err(|f| quote_key_if_missing(f, key_start, key_end))?;
        longest_key = longest_key.max(key_end - key_start);
        let line_fields = fields.get(base..).unwrap_or_default();
        match keys.find_or_insert(&key, line_fields) {
            Some(earlier) => {
                if let Some(earlier) = fields.get_mut(base + earlier) {
                    earlier.value = value;
                }
            }
            None => fields.push(Field { key, value }),
        }
        match c.peek() {
            Some(b',') => c.pos += 1,
            Some(b' ') => return Ok(longest_key),
            _ if c.at_eol() => return Ok(longest_key),
            _ => {
                let fail = c.stop_error(c.pos, ErrorKind::UnexpectedAfterValue);
                return Err(Fail::quoting(fail.kind, fail.at, key_start, key_end));
            }
        }
    }
}

/// A missing value's message names its key.
fn quote_key_if_missing(fail: Fail, key_start: usize, key_end: usize) -> Fail {
    if fail.kind == ErrorKind::MissingFieldValue {
        Fail::quoting(fail.kind, fail.at, key_start, key_end)
    } else {
        fail
    }
}

/// Finds a repeated field key in one line without comparing keys on the common path: a
/// 256-bit filter of key hashes, and the hashes of the line's keys, so that a filter hit is
/// confirmed on hashes before any key bytes are compared. (A 64-bit filter over first byte,
/// last byte and length saturated on wide lines: half the time went to `memcmp`.)
#[derive(Debug, Default)]
pub(crate) struct FieldKeys {
    filter: [u64; 4],
    /// The hash of each distinct key of the line, in the order of the line's fields.
    hashes: Vec<u64>,
}

impl FieldKeys {
    fn clear(&mut self) {
        self.filter = [0; 4];
        self.hashes.clear();
    }

    /// The index among `line_fields` of an earlier field named `key`; otherwise records `key`
    /// (the caller then appends its field) and returns `None`.
    #[inline(always)]
    fn find_or_insert(&mut self, key: &str, line_fields: &[Field<'_>]) -> Option<usize> {
        let hash = key_hash(key.as_bytes());
        let word = (hash >> 62) as usize;
        let bit = 1u64 << ((hash >> 56) & 63);
        if let Some(filter) = self.filter.get_mut(word) {
            if *filter & bit != 0 {
                let earlier = self.hashes.iter().enumerate().find_map(|(i, &h)| {
                    (h == hash && line_fields.get(i).is_some_and(|f| f.key == key)).then_some(i)
                });
                if earlier.is_some() {
                    return earlier;
                }
            }
            *filter |= bit;
        }
        self.hashes.push(hash);
        None
    }
}

/// A cheap 64-bit hash of a key: its length and its first and last eight bytes (two loads,
/// overlapping on short keys), mixed FxHash style. Keys that share those collide and are
/// told apart by comparing them, so the hash only has to be fast (the full-key loop was 7% of
/// the parse on integer rows).
#[inline(always)]
fn key_hash(key: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let len = key.len();
    let (head, tail) = if len >= 8 {
        let head = key.get(..8).and_then(|b| <[u8; 8]>::try_from(b).ok());
        let tail = key.get(len - 8..).and_then(|b| <[u8; 8]>::try_from(b).ok());
        (
            head.map_or(0, u64::from_le_bytes),
            tail.map_or(0, u64::from_le_bytes),
        )
    } else {
        let mut word = 0u64;
        for (i, &b) in key.iter().enumerate() {
            word |= u64::from(b) << (8 * i);
        }
        (word, 0)
    };
    let hash = ((len as u64).rotate_left(5) ^ head).wrapping_mul(K);
    (hash.rotate_left(5) ^ tail).wrapping_mul(K)
}

/// Parses a field value at the cursor (just after the `=`), by its first byte.
#[inline(always)]
fn parse_value<'a>(c: &mut Cursor<'a>, max_string_len: usize) -> Result<FieldValue<'a>, Fail> {
    match c.peek() {
        Some(b'"') => parse_string(c, max_string_len).map(FieldValue::String),
        Some(b'-' | b'0'..=b'9' | b'.') => {
            let (at, token) = c.token()?;
            parse_number(token, at)
        }
        Some(b't' | b'T' | b'f' | b'F') => {
            let (at, token) = c.token()?;
            parse_bool(token, at).map(FieldValue::Bool)
        }
        Some(b',' | b' ') | None => Err(Fail::at(ErrorKind::MissingFieldValue, c.pos)),
        Some(b) if class(b) & CTRL != 0 => Err(c.stop_error(c.pos, ErrorKind::MissingFieldValue)),
        Some(_) => {
            let (at, token) = c.token()?;
            let kind = if is_nan_or_inf(token) {
                ErrorKind::NanOrInfinity
            } else {
                ErrorKind::InvalidFieldValue
            };
            Err(Fail::span(kind, at, at + token.len()))
        }
    }
}

/// Parses a double-quoted string at the cursor. Inside, `\"` stands for `"` and `\\` for `\`;
/// a backslash before anything else is kept. Any other character, newlines included, is
/// taken as it is (InfluxDB accepts newlines in string values). Borrowed unless it had escapes.
#[inline(always)]
fn parse_string<'a>(c: &mut Cursor<'a>, max_len: usize) -> Result<Cow<'a, str>, Fail> {
    let open = c.pos;
    let start = open + 1;
    let rest = c.bytes.get(start..).unwrap_or_default();
    match memchr2(b'"', b'\\', rest) {
        Some(k) if rest.get(k) == Some(&b'"') => {
            let end = start + k;
            if k > max_len {
                return Err(Fail::at(ErrorKind::StringTooLong, open));
            }
            let s = c.slice(start, end)?;
            c.pos = end + 1;
            Ok(Cow::Borrowed(s))
        }
        Some(k) => parse_string_escaped(c, open, start + k, max_len),
        None => Err(Fail::at(ErrorKind::UnterminatedString, open)),
    }
}

/// The slow path of [`parse_string`], from the first backslash at `i`.
#[cold]
#[inline(never)]
fn parse_string_escaped<'a>(
    c: &mut Cursor<'a>,
    open: usize,
    mut i: usize,
    max_len: usize,
) -> Result<Cow<'a, str>, Fail> {
    let bytes = c.bytes;
    let mut out = String::with_capacity(i - open + 16);
    out.push_str(c.slice(open + 1, i)?);
    loop {
        match bytes.get(i) {
            Some(b'"') => break,
            Some(b'\\') => match bytes.get(i + 1) {
                Some(&next @ (b'"' | b'\\')) => {
                    out.push(char::from(next));
                    i += 2;
                }
                _ => {
                    out.push('\\');
                    i += 1;
                }
            },
            _ => return Err(Fail::at(ErrorKind::UnterminatedString, open)),
        }
        let rest = bytes.get(i..).unwrap_or_default();
        let Some(k) = memchr2(b'"', b'\\', rest) else {
            return Err(Fail::at(ErrorKind::UnterminatedString, open));
        };
        out.push_str(c.slice(i, i + k)?);
        i += k;
    }
    if out.len() > max_len {
        return Err(Fail::at(ErrorKind::StringTooLong, open));
    }
    c.pos = i + 1;
    Ok(Cow::Owned(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(input: &str) -> Result<(Vec<Field<'_>>, usize), (ErrorKind, usize)> {
        let mut c = Cursor::new(input);
        let mut fields = Vec::new();
        parse_fields(&mut c, &mut fields, &mut FieldKeys::default(), 65536)
            .map_err(|f| (f.kind, f.at))?;
        Ok((fields, c.pos))
    }

    fn values(input: &str) -> Vec<FieldValue<'_>> {
        parse(input)
            .unwrap()
            .0
            .into_iter()
            .map(|f| f.value)
            .collect()
    }

    #[test]
    fn every_type() {
        assert_eq!(
            values(r#"a=1.5,b=-2i,c=3u,d="x y",e=true,f=F"#),
            vec![
                FieldValue::Float(1.5),
                FieldValue::Int(-2),
                FieldValue::UInt(3),
                FieldValue::String(Cow::Borrowed("x y")),
                FieldValue::Bool(true),
                FieldValue::Bool(false),
            ]
        );
    }

    #[test]
    fn strings() {
        assert_eq!(values(r#"s="""#), vec![FieldValue::String("".into())]);
        assert_eq!(
            values(r#"s="a\"b\\c\d""#),
            vec![FieldValue::String(r#"a"b\c\d"#.into())]
        );
        assert_eq!(
            values("s=\"line\nbreak, and = signs\""),
            vec![FieldValue::String("line\nbreak, and = signs".into())]
        );
        assert_eq!(values(r#"s="\\""#), vec![FieldValue::String(r"\".into())]);
        assert_eq!(parse(r#"s="abc"#), Err((ErrorKind::UnterminatedString, 2)));
        assert_eq!(
            parse(r#"s="abc\""#),
            Err((ErrorKind::UnterminatedString, 2))
        );
        assert_eq!(
            parse(r#"s="a"b"#),
            Err((ErrorKind::UnexpectedAfterValue, 5))
        );
    }

    #[test]
    fn string_length_limit() {
        let mut c = Cursor::new(r#"s="abcd""#);
        let mut fields = Vec::new();
        assert_eq!(
            parse_fields(&mut c, &mut fields, &mut FieldKeys::default(), 3)
                .unwrap_err()
                .kind,
            ErrorKind::StringTooLong
        );
        let mut c = Cursor::new(r#"s="a\\b""#);
        assert!(parse_fields(&mut c, &mut fields, &mut FieldKeys::default(), 3).is_ok());
    }

    #[test]
    fn stops_at_space_or_line_end() {
        assert_eq!(parse("a=1 123").map(|(_, end)| end), Ok(3));
        assert_eq!(parse("a=1\r\nb").map(|(_, end)| end), Ok(3));
        assert_eq!(parse("a=1\n").map(|(_, end)| end), Ok(3));
    }

    #[test]
    fn duplicate_keys_keep_the_first_position_and_the_last_value() {
        let (fields, _) = parse("a=1,b=2,a=3i").unwrap();
        assert_eq!(fields.len(), 2);
        assert_eq!(fields[0].key, "a");
        assert_eq!(fields[0].value, FieldValue::Int(3));
        assert_eq!(fields[1].key, "b");
    }

    #[test]
    fn escaped_keys() {
        let (fields, _) = parse(r"a\ b\,c\=d=1").unwrap();
        assert_eq!(fields[0].key, "a b,c=d");
    }

    #[test]
    fn errors() {
        assert_eq!(parse("=1"), Err((ErrorKind::MissingFieldKey, 0)));
        assert_eq!(parse("a=1,"), Err((ErrorKind::MissingFieldKey, 4)));
        assert_eq!(parse("a=1,,b=2"), Err((ErrorKind::MissingFieldKey, 4)));
        assert_eq!(parse("a"), Err((ErrorKind::MissingFieldEquals, 1)));
        assert_eq!(parse("a 1"), Err((ErrorKind::MissingFieldEquals, 1)));
        assert_eq!(parse("a="), Err((ErrorKind::MissingFieldValue, 2)));
        assert_eq!(parse("a=,b=1"), Err((ErrorKind::MissingFieldValue, 2)));
        assert_eq!(parse("a= 1"), Err((ErrorKind::MissingFieldValue, 2)));
        assert_eq!(parse("a=\n"), Err((ErrorKind::MissingFieldValue, 2)));
        assert_eq!(parse("a=\t1"), Err((ErrorKind::ControlCharacter, 2)));
        assert_eq!(parse("a=x"), Err((ErrorKind::InvalidFieldValue, 2)));
        assert_eq!(parse("a=NaN"), Err((ErrorKind::NanOrInfinity, 2)));
        assert_eq!(parse("a=inf"), Err((ErrorKind::NanOrInfinity, 2)));
        assert_eq!(parse("a=+1"), Err((ErrorKind::InvalidFieldValue, 2)));
        assert_eq!(parse("a=1\t"), Err((ErrorKind::ControlCharacter, 3)));
        assert_eq!(parse("a=yes"), Err((ErrorKind::InvalidFieldValue, 2)));
        assert_eq!(parse("a=trueish"), Err((ErrorKind::InvalidBoolean, 2)));
        assert_eq!(parse("a\tb=1"), Err((ErrorKind::ControlCharacter, 1)));
    }
}
