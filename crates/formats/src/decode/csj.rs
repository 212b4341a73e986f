//! CSJ input: a header line of column names as JSON strings, then one line of comma-separated
//! JSON values per row; each row becomes a COPY text-format row.

use super::convert;
use super::error::{DecodeError, DecodeErrorKind};
use super::json::{Collect, Cursor, JsonError, JsonErrorKind};
use super::lines::{LineMap, Lines, is_blank};
use crate::kind::ColumnKind;

/// The header of a CSJ input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsjHeader {
    /// The column names.
    pub names: Vec<String>,
    /// The bytes of input it took (with any blank lines before it).
    pub consumed: usize,
    /// The number of the line after it.
    pub next_line: u64,
}

impl CsjHeader {
    /// Reads the header from the start of `input`: `Ok(None)` when its line is not complete yet
    /// (and `eof` is false).
    pub fn read(input: &[u8], eof: bool) -> Result<Option<CsjHeader>, DecodeError> {
        let mut pos = 0;
        let mut line_no = 1;
        loop {
            let rest = input.get(pos..).unwrap_or_default();
            if rest.is_empty() {
                return if eof {
                    Err(DecodeError::new(DecodeErrorKind::NoHeader, line_no))
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
            let names = parse_names(line, line_no)?;
            return Ok(Some(CsjHeader {
                names,
                consumed: pos + advance,
                next_line: line_no + 1,
            }));
        }
    }
}

fn parse_names(line: &[u8], line_no: u64) -> Result<Vec<String>, DecodeError> {
    check_utf8(line, line_no)?;
    let mut names = Vec::new();
    let mut cur = Cursor::new(line);
    let mut name = Vec::new();
    loop {
        cur.skip_ws();
        if cur.peek() != Some(b'"') {
            return Err(DecodeError::new(DecodeErrorKind::BadHeader, line_no)
                .at(line, cur.pos)
                .detail("expected a column name as a JSON string"));
        }
        name.clear();
        cur.string(&mut Collect(&mut name))
            .map_err(|e| json_error(e, line, line_no))?;
        names.push(String::from_utf8_lossy(&name).into_owned());
        cur.skip_ws();
        match cur.peek() {
            None => return Ok(names),
            Some(b',') => cur.pos += 1,
            Some(_) => {
                return Err(DecodeError::new(DecodeErrorKind::BadHeader, line_no)
                    .at(line, cur.pos)
                    .detail("expected ',' or the end of the line after a column name"));
            }
        }
    }
}

/// Checks a line is UTF-8; the error points at the first bad byte.
pub(crate) fn check_utf8(line: &[u8], line_no: u64) -> Result<(), DecodeError> {
    match std::str::from_utf8(line) {
        Ok(_) => Ok(()),
        Err(e) => {
            Err(DecodeError::new(DecodeErrorKind::InvalidUtf8, line_no).at(line, e.valid_up_to()))
        }
    }
}

/// A JSON reader error as a decode error on line `line_no`.
pub(crate) fn json_error(e: JsonError, line: &[u8], line_no: u64) -> DecodeError {
    let error = match e.kind {
        JsonErrorKind::Expected(what) => DecodeError::new(DecodeErrorKind::InvalidJson, line_no)
            .detail(format!("expected {what}")),
        JsonErrorKind::TooDeep => DecodeError::new(DecodeErrorKind::TooDeep, line_no),
        JsonErrorKind::Nul => DecodeError::new(DecodeErrorKind::NulCharacter, line_no),
    };
    error.at(line, e.offset)
}

/// Decodes CSJ rows (after the header) into COPY text rows.
#[derive(Clone, Debug)]
pub struct CsjDecoder {
    kinds: Vec<ColumnKind>,
    lines: Lines,
}

impl CsjDecoder {
    /// A decoder for rows of columns of `kinds` (in header order), starting at line
    /// `first_line` (the header's [`CsjHeader::next_line`]).
    pub fn new(kinds: Vec<ColumnKind>, first_line: u64) -> CsjDecoder {
        CsjDecoder {
            kinds,
            lines: Lines::new(first_line),
        }
    }

    /// Decodes the complete lines of `input` (all of it when `eof`), appending COPY text rows to
    /// `out`; returns the bytes consumed. Keep the rest and call again with more after it.
    pub fn decode(
        &mut self,
        input: &[u8],
        eof: bool,
        out: &mut Vec<u8>,
    ) -> Result<usize, DecodeError> {
        let kinds = &self.kinds;
        self.lines.each(input, eof, |line, line_no| {
            decode_row(kinds, line, line_no, out)
        })
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

fn decode_row(
    kinds: &[ColumnKind],
    line: &[u8],
    line_no: u64,
    out: &mut Vec<u8>,
) -> Result<(), DecodeError> {
    check_utf8(line, line_no)?;
    let mut cur = Cursor::new(line);
    for (i, &kind) in kinds.iter().enumerate() {
        if i > 0 {
            cur.skip_ws();
            match cur.peek() {
                Some(b',') => cur.pos += 1,
                None => {
                    return Err(DecodeError::new(DecodeErrorKind::ColumnCount, line_no)
                        .at(line, cur.pos)
                        .detail(format!(
                            "{i} values, the header has {} columns",
                            kinds.len()
                        )));
                }
                Some(_) => {
                    return Err(DecodeError::new(DecodeErrorKind::InvalidJson, line_no)
                        .at(line, cur.pos)
                        .detail("expected ',' after a value"));
                }
            }
            out.push(b'\t');
        }
        convert::value(&mut cur, kind, out).map_err(|e| json_error(e, line, line_no))?;
    }
    cur.skip_ws();
    match cur.peek() {
        None => {
            out.push(b'\n');
            Ok(())
        }
        Some(b',') => Err(DecodeError::new(DecodeErrorKind::ColumnCount, line_no)
            .at(line, cur.pos)
            .detail(format!(
                "more values than the header's {} columns",
                kinds.len()
            ))),
        Some(_) => Err(DecodeError::new(DecodeErrorKind::InvalidJson, line_no)
            .at(line, cur.pos)
            .detail("expected ',' or the end of the line after a value")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kind::Scalar;

    #[test]
    fn header_then_rows() {
        let input = b"\n\"id\",\"name\",\"tags\"\r\n1,\"a\\tb\",[\"x\",null]\n\n2 , null , [] \n";
        assert_eq!(CsjHeader::read(&input[..5], false), Ok(None));
        let header = CsjHeader::read(input, false)
            .expect("header")
            .expect("complete");
        assert_eq!(header.names, vec!["id", "name", "tags"]);
        assert_eq!(header.next_line, 3);
        let kinds = vec![
            ColumnKind::scalar(Scalar::Number),
            ColumnKind::STRING,
            ColumnKind::array(Scalar::String, b','),
        ];
        let mut decoder = CsjDecoder::new(kinds, header.next_line);
        let mut out = Vec::new();
        let body = &input[header.consumed..];
        let used = decoder.decode(body, true, &mut out).expect("rows");
        assert_eq!(used, body.len());
        assert_eq!(out, b"1\ta\\tb\t{\"x\",NULL}\n2\t\\N\t{}\n");
        assert_eq!(decoder.rows(), 2);
        assert_eq!(decoder.line_map().line_of(2), Some(5));
    }

    #[test]
    fn errors_name_line_and_column() {
        let kinds = vec![ColumnKind::STRING, ColumnKind::STRING];
        let mut out = Vec::new();
        let e = CsjDecoder::new(kinds.clone(), 2)
            .decode(b"\"a\",\"b\"\n\"c\"\n", true, &mut out)
            .expect_err("short row");
        assert_eq!(
            (e.kind(), e.line(), e.column()),
            (DecodeErrorKind::ColumnCount, 3, Some(4))
        );
        let e = CsjDecoder::new(kinds.clone(), 2)
            .decode(b"\"a\",\"b\",\"c\"\n", true, &mut out)
            .expect_err("long row");
        assert_eq!((e.kind(), e.line()), (DecodeErrorKind::ColumnCount, 2));
        let e = CsjDecoder::new(kinds.clone(), 2)
            .decode("\"é\",x\n".as_bytes(), true, &mut out)
            .expect_err("bad value");
        assert_eq!(
            (e.kind(), e.column()),
            (DecodeErrorKind::InvalidJson, Some(5))
        );
        assert_eq!(
            e.to_string(),
            "line 2, column 5: invalid JSON: expected a JSON value"
        );
        let e = CsjDecoder::new(kinds, 2)
            .decode(b"\"a\xff\",1\n", true, &mut out)
            .expect_err("bad UTF-8");
        assert_eq!(
            (e.kind(), e.column()),
            (DecodeErrorKind::InvalidUtf8, Some(3))
        );
        assert_eq!(
            CsjHeader::read(b"\n \n", true).map_err(|e| e.kind()),
            Err(DecodeErrorKind::NoHeader)
        );
        assert_eq!(
            CsjHeader::read(b"", true).map_err(|e| e.kind()),
            Err(DecodeErrorKind::NoHeader)
        );
        assert_eq!(
            CsjHeader::read(b"1,2\n", true).map_err(|e| e.kind()),
            Err(DecodeErrorKind::BadHeader)
        );
    }
}
