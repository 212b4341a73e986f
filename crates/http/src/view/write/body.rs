//! Request bodies of writes: the format from `Content-Type`, CSJ and JSON Lines rows as JSON
//! objects with their line numbers, a JSON object or array body, and parse errors with places.

use super::lines::LineSplitter;
use crate::view::error::ApiError;
use bytes::Bytes;
use http::StatusCode;
use serde_json::{Map, Value};
use std::sync::Arc;

/// How a body is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyFormat {
    /// A header line of column names, then one line of comma-separated JSON values per row.
    Csj,
    /// One JSON object per line.
    JsonLines,
    /// One JSON document: an object (one row) or an array of objects (rows).
    Json,
}

impl BodyFormat {
    /// The format `Content-Type` names: `application/json` is JSON, `application/x-ndjson` (and
    /// `application/jsonl`, `application/json-lines`) JSON Lines; CSJ otherwise (`application/csj`,
    /// `text/plain`, none).
    pub fn from_headers(headers: &http::HeaderMap) -> BodyFormat {
        let Some(value) = headers
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
        else {
            return BodyFormat::Csj;
        };
        let essence = value.split(';').next().unwrap_or("").trim();
        if essence.eq_ignore_ascii_case("application/json") {
            BodyFormat::Json
        } else if [
            "application/x-ndjson",
            "application/jsonl",
            "application/json-lines",
        ]
        .iter()
        .any(|t| essence.eq_ignore_ascii_case(t))
        {
            BodyFormat::JsonLines
        } else {
            BodyFormat::Csj
        }
    }
}

/// One row of a body: its fields and the line it came from (1-based; 0 for a JSON document).
#[derive(Debug)]
pub struct BodyRow {
    pub fields: Fields,
    pub line: u64,
}

/// The fields of a row: a JSON object, or a CSJ line's values beside the header's names (so
/// the names are not copied into every row).
#[derive(Debug)]
pub enum Fields {
    Object(Map<String, Value>),
    Csj {
        names: Arc<[String]>,
        values: Vec<Value>,
    },
}

impl Fields {
    /// The field called `name`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        match self {
            Fields::Object(map) => map.get(name),
            Fields::Csj { names, values } => names
                .iter()
                .position(|n| n == name)
                .and_then(|i| values.get(i)),
        }
    }

    /// The row as one JSON object (for a whole-row schema).
    pub fn to_object(&self) -> Value {
        match self {
            Fields::Object(map) => Value::Object(map.clone()),
            Fields::Csj { names, values } => {
                Value::Object(names.iter().cloned().zip(values.iter().cloned()).collect())
            }
        }
    }
}

/// The answer to a body that cannot be parsed: 400 naming the line and column.
pub fn parse_error(line: u64, column: u64, what: impl std::fmt::Display) -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "bad_body",
        format!("the request body cannot be parsed: line {line}, column {column}: {what}"),
    )
    .with_details(serde_json::json!({"line": line, "column": column}))
}

fn decode_error(error: &sluice_formats::DecodeError) -> ApiError {
    parse_error(error.line(), error.column().unwrap_or(1), error)
}

/// Turns the lines of a CSJ or JSON Lines body into rows, whether the body is held whole or
/// arrives in frames: the CSJ header first, blank lines skipped, rows numbered by line.
#[derive(Debug)]
struct LineRows {
    format: BodyFormat,
    /// CSJ: the header's column names, once read.
    names: Option<Arc<[String]>>,
    /// CSJ: the line wrapped in brackets so it parses as one JSON array (reused).
    scratch: Vec<u8>,
}

impl LineRows {
    /// For a CSJ or JSON Lines body (a JSON body has no lines: every line is a JSON Lines row).
    pub fn new(format: BodyFormat) -> LineRows {
        LineRows {
            format,
            names: None,
            scratch: Vec::new(),
        }
    }

    /// Whether the next line is a CSJ header still to read.
    pub fn wants_header(&self) -> bool {
        self.format == BodyFormat::Csj && self.names.is_none()
    }

    /// The row of line number `line_no` (without its `\n`); `None` for a blank line or the CSJ
    /// header.
    pub fn row(&mut self, line: &[u8], line_no: u64) -> Result<Option<BodyRow>, ApiError> {
        if self.wants_header() {
            // Blank as the CSJ decoder sees it before a header.
            if line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
                return Ok(None);
            }
            // The decoder takes the line with its `\r` (it strips one itself).
            let header = sluice_formats::decode::CsjHeader::read(line, true)
                .map_err(|e| decode_error(&e.on_line(line_no)))?
                .ok_or_else(|| parse_error(line_no, 1, "no header line"))?;
            self.names = Some(header.names.into());
            return Ok(None);
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        let fields = match &self.names {
            Some(names) => csj_row(&mut self.scratch, names, line, line_no)?,
            None => jsonl_row(line, line_no)?,
        };
        Ok(Some(BodyRow {
            fields,
            line: line_no,
        }))
    }

    /// At the end of the body, whose last line was `next_line - 1`: a CSJ body needs its header.
    pub fn end(&self, next_line: u64) -> Result<(), ApiError> {
        if !self.wants_header() {
            return Ok(());
        }
        match sluice_formats::decode::CsjHeader::read(b"", true) {
            Err(e) => Err(decode_error(&e.on_line(next_line))),
            Ok(_) => Err(parse_error(next_line, 1, "no header line")),
        }
    }
}

/// What [`FramedRows::next`] has.
#[derive(Debug)]
pub enum Next {
    Row(BodyRow),
    /// The next frame is needed (or `finish`).
    More,
    End,
}

/// The rows of a CSJ or JSON Lines body fed frame by frame (sans-I/O): a row cut by a frame
/// boundary comes when its end arrives, with the number of its line in the whole body.
#[derive(Debug)]
pub struct FramedRows {
    lines: LineSplitter,
    rows: LineRows,
}

impl FramedRows {
    pub fn new(format: BodyFormat) -> FramedRows {
        FramedRows {
            lines: LineSplitter::new(),
            rows: LineRows::new(format),
        }
    }

    /// Feeds the next frame, once `next` answered `More`.
    pub fn push(&mut self, frame: Bytes) {
        self.lines.push(frame);
    }

    /// Marks the end of the body, once `next` answered `More`.
    pub fn finish(&mut self) {
        self.lines.finish();
    }

    /// The next row of what was fed.
    pub fn next(&mut self) -> Result<Next, ApiError> {
        while let Some((line, line_no)) = self.lines.next_line() {
            if let Some(row) = self.rows.row(line, line_no)? {
                return Ok(Next::Row(row));
            }
        }
        if self.lines.finished() {
            self.rows.end(self.lines.line_number())?;
            return Ok(Next::End);
        }
        Ok(Next::More)
    }
}

/// Reads the rows of a CSJ, JSON Lines or JSON body held whole one by one, without holding
/// them all.
pub struct RowReader {
    format: BodyFormat,
    /// CSJ, JSON Lines: the body as its one frame.
    lines: FramedRows,
    /// JSON: the rows of the document, in order.
    document: std::vec::IntoIter<Value>,
    /// The 0-based index of the next row.
    index: usize,
}

impl RowReader {
    /// Starts reading `body`; a JSON document is parsed now, CSJ and JSON Lines as rows are read.
    pub fn new(body: Bytes, format: BodyFormat) -> Result<RowReader, ApiError> {
        let mut reader = RowReader {
            format,
            lines: FramedRows::new(format),
            document: Vec::new().into_iter(),
            index: 0,
        };
        match format {
            BodyFormat::Csj | BodyFormat::JsonLines => {
                reader.lines.push(body);
                reader.lines.finish();
            }
            BodyFormat::Json => {
                let value: Value = serde_json::from_slice(&body)
                    .map_err(|e| parse_error(e.line() as u64, e.column() as u64, e))?;
                reader.document = match value {
                    Value::Array(rows) => rows.into_iter(),
                    object @ Value::Object(_) => vec![object].into_iter(),
                    _ => {
                        return Err(parse_error(
                            1,
                            1,
                            "expected a JSON object or an array of objects",
                        ));
                    }
                };
            }
        }
        Ok(reader)
    }

    /// The next row, `None` after the last.
    pub fn next_row(&mut self) -> Result<Option<BodyRow>, ApiError> {
        if self.format == BodyFormat::Json {
            return match self.document.next() {
                None => Ok(None),
                Some(Value::Object(fields)) => {
                    self.index += 1;
                    Ok(Some(BodyRow {
                        fields: Fields::Object(fields),
                        line: 0,
                    }))
                }
                Some(_) => Err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "bad_body",
                    format!("row {} of the JSON array is not an object", self.index),
                )
                .with_details(serde_json::json!({"path": [self.index]}))),
            };
        }
        match self.lines.next()? {
            Next::Row(row) => {
                self.index += 1;
                Ok(Some(row))
            }
            // The whole body was fed: `More` cannot come.
            Next::End | Next::More => Ok(None),
        }
    }
}

fn csj_row(
    scratch: &mut Vec<u8>,
    names: &Arc<[String]>,
    line: &[u8],
    line_no: u64,
) -> Result<Fields, ApiError> {
    scratch.clear();
    scratch.push(b'[');
    scratch.extend_from_slice(line);
    scratch.push(b']');
    let values: Vec<Value> = serde_json::from_slice(scratch).map_err(|e| {
        // The opening bracket is not the client's: columns count from the line's start.
        parse_error(line_no, (e.column() as u64).saturating_sub(1).max(1), e)
    })?;
    if values.len() != names.len() {
        return Err(parse_error(
            line_no,
            1,
            format!(
                "the row has {} values but the header names {} columns",
                values.len(),
                names.len()
            ),
        ));
    }
    Ok(Fields::Csj {
        names: names.clone(),
        values,
    })
}

fn jsonl_row(line: &[u8], line_no: u64) -> Result<Fields, ApiError> {
    match serde_json::from_slice::<Value>(line) {
        Ok(Value::Object(fields)) => Ok(Fields::Object(fields)),
        Ok(_) => Err(parse_error(line_no, 1, "expected a JSON object")),
        Err(e) => Err(parse_error(line_no, e.column() as u64, e)),
    }
}

/// Parses a JSON object body (`return: "object"` endpoints).
pub fn object_body(body: &[u8]) -> Result<Fields, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Fields::Object(Map::new()));
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(fields)) => Ok(Fields::Object(fields)),
        Ok(_) => Err(parse_error(1, 1, "expected a JSON object")),
        Err(e) => Err(parse_error(e.line() as u64, e.column() as u64, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(body: &'static str, format: BodyFormat) -> Result<Vec<(u64, Value)>, ApiError> {
        let mut reader = RowReader::new(Bytes::from_static(body.as_bytes()), format)?;
        let mut out = Vec::new();
        while let Some(row) = reader.next_row()? {
            out.push((row.line, row.fields.to_object()));
        }
        Ok(out)
    }

    #[test]
    fn csj_rows_with_lines() {
        let got = rows(
            "\"a\",\"b\"\n1,\"x\"\n\n2 , {\"k\":[1]}\r\n",
            BodyFormat::Csj,
        )
        .expect("ok");
        assert_eq!(
            got,
            vec![
                (2, serde_json::json!({"a": 1, "b": "x"})),
                (4, serde_json::json!({"a": 2, "b": {"k": [1]}})),
            ]
        );
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = rows("\"a\",\"b\"\n1,\"x\"\n2,x\n", BodyFormat::Csj).expect_err("bad");
        assert_eq!(e.status, StatusCode::BAD_REQUEST);
        assert_eq!(e.details, Some(serde_json::json!({"line": 3, "column": 3})));
        let e = rows("\"a\",\"b\"\n1\n", BodyFormat::Csj).expect_err("short");
        assert!(e.message.contains("line 2"), "{}", e.message);
        let e = rows("{\"a\":1}\n[1]\n", BodyFormat::JsonLines).expect_err("array");
        assert!(e.message.contains("line 2"), "{}", e.message);
        let e = rows("1,2", BodyFormat::Csj).expect_err("header");
        assert_eq!(e.status, StatusCode::BAD_REQUEST);
    }

    #[test]
    fn formats_from_content_type() {
        let mut headers = http::HeaderMap::new();
        assert_eq!(BodyFormat::from_headers(&headers), BodyFormat::Csj);
        headers.insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/x-ndjson; charset=utf-8"),
        );
        assert_eq!(BodyFormat::from_headers(&headers), BodyFormat::JsonLines);
        headers.insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("text/plain"),
        );
        assert_eq!(BodyFormat::from_headers(&headers), BodyFormat::Csj);
    }
}
