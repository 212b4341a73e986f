//! JSON Lines input: one JSON object per line. The columns are the keys of the first object, in
//! its order; later objects may list them in any order and leave any out (NULL), but may not
//! bring a key the first did not have. Each object becomes a COPY text-format row.

use super::convert;
use super::csj::{check_utf8, json_error};
use super::error::{DecodeError, DecodeErrorKind};
use super::json::{Collect, Cursor};
use super::lines::{LineMap, Lines, is_blank};
use crate::kind::ColumnKind;

/// The keys of the first object in `input`, in order: `Ok(None)` when its line is not complete
/// yet (and `eof` is false). Nothing is consumed: the first object is also the first row.
pub fn first_object_keys(input: &[u8], eof: bool) -> Result<Option<Vec<String>>, DecodeError> {
    let mut pos = 0;
    let mut line_no = 1;
    loop {
        let rest = input.get(pos..).unwrap_or_default();
        if rest.is_empty() {
            return if eof {
                Err(DecodeError::new(DecodeErrorKind::NoHeader, line_no)
                    .detail("no JSON object to take the columns from"))
            } else {
                Ok(None)
            };
        }
        let (line, advance) = match memchr::memchr(b'\n', rest) {
            Some(end) => (rest.get(..end).unwrap_or_default(), end + 1),
            None if eof => (rest, rest.len()),
            None => return Ok(None),
        };
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if is_blank(line) {
            pos += advance;
            line_no += 1;
            continue;
        }
        return keys_of(line, line_no).map(Some);
    }
}

fn keys_of(line: &[u8], line_no: u64) -> Result<Vec<String>, DecodeError> {
    check_utf8(line, line_no)?;
    let json = |e| json_error(e, line, line_no);
    let mut cur = Cursor::new(line);
    cur.skip_ws();
    if cur.peek() != Some(b'{') {
        return Err(DecodeError::new(DecodeErrorKind::NotAnObject, line_no).at(line, cur.pos));
    }
    cur.pos += 1;
    let mut keys: Vec<String> = Vec::new();
    cur.skip_ws();
    if cur.peek() == Some(b'}') {
        return Err(DecodeError::new(DecodeErrorKind::NoHeader, line_no)
            .at(line, cur.pos)
            .detail("the first object has no keys to take the columns from"));
    }
    let mut key = Vec::new();
    loop {
        cur.skip_ws();
        let key_at = cur.pos;
        key.clear();
        cur.string(&mut Collect(&mut key)).map_err(json)?;
        let key = String::from_utf8_lossy(&key).into_owned();
        if keys.contains(&key) {
            return Err(DecodeError::new(DecodeErrorKind::DuplicateKey, line_no)
                .at(line, key_at)
                .detail(format!("{key:?}")));
        }
        keys.push(key);
        cur.expect(b':', "':'").map_err(json)?;
        cur.skip_value(0).map_err(json)?;
        cur.skip_ws();
        match cur.peek() {
            Some(b',') => cur.pos += 1,
            Some(b'}') => break,
            _ => return Err(json(cur.error("',' or '}'"))),
        }
    }
    Ok(keys)
}

/// What an object's keys may be besides the columns'.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeyRules {
    /// Keys that are not columns are skipped (their values checked as JSON), not refused.
    pub ignore_unknown: bool,
    /// Every column must have its key in every object (else the row is refused), rather than
    /// an absent key being NULL.
    pub require_all: bool,
}

/// Decodes JSON Lines objects into COPY text rows of the given columns.
#[derive(Clone, Debug)]
pub struct JsonlDecoder {
    names: Vec<Box<[u8]>>,
    kinds: Vec<ColumnKind>,
    rules: KeyRules,
    lines: Lines,
    /// Each column's converted value in `row`, for the object being decoded.
    slots: Vec<Option<(usize, usize)>>,
    row: Vec<u8>,
    key: Vec<u8>,
}

impl JsonlDecoder {
    /// A decoder for objects with keys `names` (the columns, usually [`first_object_keys`])
    /// whose columns are of `kinds`.
    pub fn new(names: &[String], kinds: Vec<ColumnKind>) -> JsonlDecoder {
        JsonlDecoder {
            names: names.iter().map(|n| n.as_bytes().into()).collect(),
            slots: vec![None; kinds.len()],
            kinds,
            rules: KeyRules::default(),
            lines: Lines::new(1),
            row: Vec::new(),
            key: Vec::new(),
        }
    }

    /// The same decoder with other rules for keys.
    pub fn with_key_rules(mut self, rules: KeyRules) -> JsonlDecoder {
        self.rules = rules;
        self
    }

    /// Decodes the complete lines of `input` (all of it when `eof`), appending COPY text rows to
    /// `out`; returns the bytes consumed.
    pub fn decode(
        &mut self,
        input: &[u8],
        eof: bool,
        out: &mut Vec<u8>,
    ) -> Result<usize, DecodeError> {
        let JsonlDecoder {
            names,
            kinds,
            rules,
            lines,
            slots,
            row,
            key,
        } = self;
        lines.each(input, eof, |line, line_no| {
            write_row(names, kinds, *rules, slots, row, key, line, line_no, out)
        })
    }

    /// Decodes one object (`number` names it in errors: its line, or its place in an array),
    /// appending its COPY text row to `out`.
    pub fn decode_one(
        &mut self,
        object: &[u8],
        number: u64,
        out: &mut Vec<u8>,
    ) -> Result<(), DecodeError> {
        let JsonlDecoder {
            names,
            kinds,
            rules,
            slots,
            row,
            key,
            ..
        } = self;
        write_row(names, kinds, *rules, slots, row, key, object, number, out)
    }

    /// The rows decoded so far.
    pub fn rows(&self) -> u64 {
        self.lines.rows
    }

    /// Which input line each COPY row came from.
    pub fn line_map(&self) -> &LineMap {
        &self.lines.map
    }
}

/// Decodes `line` and appends its COPY text row.
#[allow(clippy::too_many_arguments)]
fn write_row(
    names: &[Box<[u8]>],
    kinds: &[ColumnKind],
    rules: KeyRules,
    slots: &mut [Option<(usize, usize)>],
    row: &mut Vec<u8>,
    key: &mut Vec<u8>,
    line: &[u8],
    line_no: u64,
    out: &mut Vec<u8>,
) -> Result<(), DecodeError> {
    decode_object(names, kinds, rules, slots, row, key, line, line_no)?;
    for (i, slot) in slots.iter().enumerate() {
        if i > 0 {
            out.push(b'\t');
        }
        match slot.and_then(|(start, end)| row.get(start..end)) {
            Some(value) => out.extend_from_slice(value),
            None => out.extend_from_slice(b"\\N"),
        }
    }
    out.push(b'\n');
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn decode_object(
    names: &[Box<[u8]>],
    kinds: &[ColumnKind],
    rules: KeyRules,
    slots: &mut [Option<(usize, usize)>],
    row: &mut Vec<u8>,
    key: &mut Vec<u8>,
    line: &[u8],
    line_no: u64,
) -> Result<(), DecodeError> {
    check_utf8(line, line_no)?;
    let json = |e| json_error(e, line, line_no);
    slots.fill(None);
    row.clear();
    let mut cur = Cursor::new(line);
    cur.skip_ws();
    if cur.peek() != Some(b'{') {
        return Err(DecodeError::new(DecodeErrorKind::NotAnObject, line_no).at(line, cur.pos));
    }
    cur.pos += 1;
    cur.skip_ws();
    if cur.peek() == Some(b'}') {
        cur.pos += 1;
    } else {
        let mut member = 0;
        loop {
            cur.skip_ws();
            let key_at = cur.pos;
            let column = read_key(&mut cur, names, member, key).map_err(json)?;
            if column.is_none() && rules.ignore_unknown {
                cur.expect(b':', "':'").map_err(json)?;
                cur.skip_value(0).map_err(json)?;
                cur.skip_ws();
                match cur.peek() {
                    Some(b',') => {
                        cur.pos += 1;
                        continue;
                    }
                    Some(b'}') => {
                        cur.pos += 1;
                        break;
                    }
                    _ => return Err(json(cur.error("',' or '}'"))),
                }
            }
            let Some(column) = column else {
                return Err(DecodeError::new(DecodeErrorKind::UnknownKey, line_no)
                    .at(line, key_at)
                    .detail(format!(
                        "{:?} is not one of the columns (the keys of the first object)",
                        String::from_utf8_lossy(key)
                    )));
            };
            let (Some(slot), Some(&kind)) = (slots.get_mut(column), kinds.get(column)) else {
                return Err(DecodeError::new(DecodeErrorKind::UnknownKey, line_no).at(line, key_at));
            };
            if slot.is_some() {
                return Err(DecodeError::new(DecodeErrorKind::DuplicateKey, line_no)
                    .at(line, key_at)
                    .detail(format!("{:?}", String::from_utf8_lossy(key))));
            }
            cur.expect(b':', "':'").map_err(json)?;
            let start = row.len();
            convert::value(&mut cur, kind, row).map_err(json)?;
            *slot = Some((start, row.len()));
            member += 1;
            cur.skip_ws();
            match cur.peek() {
                Some(b',') => cur.pos += 1,
                Some(b'}') => {
                    cur.pos += 1;
                    break;
                }
                _ => return Err(json(cur.error("',' or '}'"))),
            }
        }
    }
    cur.skip_ws();
    if !cur.at_end() {
        return Err(DecodeError::new(DecodeErrorKind::InvalidJson, line_no)
            .at(line, cur.pos)
            .detail("expected the end of the line after the object"));
    }
    if rules.require_all
        && let Some(missing) = slots.iter().position(Option::is_none)
    {
        let name = names
            .get(missing)
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .unwrap_or_default();
        return Err(
            DecodeError::new(DecodeErrorKind::MissingKey, line_no).detail(format!(
                "{name:?} is missing: every object must have the same keys"
            )),
        );
    }
    Ok(())
}

/// Reads a key and finds its column: first where the first object had it (`member`), else by
/// search. The decoded key is left in `key`.
fn read_key(
    cur: &mut Cursor<'_>,
    names: &[Box<[u8]>],
    member: usize,
    key: &mut Vec<u8>,
) -> Result<Option<usize>, super::json::JsonError> {
    key.clear();
    cur.string(&mut Collect(key))?;
    if names.get(member).is_some_and(|n| **n == **key) {
        return Ok(Some(member));
    }
    Ok(names.iter().position(|n| **n == **key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kind::Scalar;

    #[test]
    fn objects_in_any_key_order() {
        let input =
            b"{\"a\": 1, \"b\": \"x\\ny\", \"c\": {\"k\": [1]}}\n\n{\"c\": null, \"a\": 2}\r\n{}";
        let keys = first_object_keys(input, false)
            .expect("keys")
            .expect("complete");
        assert_eq!(keys, vec!["a", "b", "c"]);
        let kinds = vec![
            ColumnKind::scalar(Scalar::Number),
            ColumnKind::STRING,
            ColumnKind::scalar(Scalar::Json),
        ];
        let mut decoder = JsonlDecoder::new(&keys, kinds);
        let mut out = Vec::new();
        let used = decoder.decode(input, false, &mut out).expect("rows");
        assert_eq!(used, input.len() - 2);
        decoder
            .decode(&input[used..], true, &mut out)
            .expect("last row");
        assert_eq!(
            String::from_utf8(out).expect("UTF-8"),
            "1\tx\\ny\t{\"k\": [1]}\n2\t\\N\t\\N\n\\N\t\\N\t\\N\n"
        );
        assert_eq!(decoder.line_map().line_of(2), Some(3));
        assert_eq!(decoder.line_map().line_of(3), Some(4));
    }

    #[test]
    fn errors() {
        let keys = vec!["a".to_owned(), "b".to_owned()];
        let kinds = vec![ColumnKind::STRING; 2];
        let mut out = Vec::new();
        let e = JsonlDecoder::new(&keys, kinds.clone())
            .decode(b"{\"a\":1}\n{\"z\":1}\n", true, &mut out)
            .expect_err("unknown key");
        assert_eq!(
            (e.kind(), e.line(), e.column()),
            (DecodeErrorKind::UnknownKey, 2, Some(2))
        );
        let e = JsonlDecoder::new(&keys, kinds.clone())
            .decode(b"{\"a\":1,\"a\":2}\n", true, &mut out)
            .expect_err("duplicate");
        assert_eq!(e.kind(), DecodeErrorKind::DuplicateKey);
        let e = JsonlDecoder::new(&keys, kinds.clone())
            .decode(b"[1,2]\n", true, &mut out)
            .expect_err("array");
        assert_eq!(e.kind(), DecodeErrorKind::NotAnObject);
        let e = JsonlDecoder::new(&keys, kinds)
            .decode(b"{\"a\":1} x\n", true, &mut out)
            .expect_err("trailing");
        assert_eq!(
            (e.kind(), e.column()),
            (DecodeErrorKind::InvalidJson, Some(9))
        );
        assert_eq!(
            first_object_keys(b"{}\n", true).map_err(|e| e.kind()),
            Err(DecodeErrorKind::NoHeader)
        );
        assert_eq!(
            first_object_keys(b"{\"a\":1,\"a\":2}", true).map_err(|e| e.kind()),
            Err(DecodeErrorKind::DuplicateKey)
        );
    }
}
