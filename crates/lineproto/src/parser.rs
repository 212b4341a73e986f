//! The line driver: options, blank and comment lines, one point line end to end, and the
//! streaming [`Parser`] that yields points one at a time from reused buffers.

use std::borrow::Cow;

use crate::error::{Error, ErrorKind, Fail};
use crate::fields::{FieldKeys, parse_fields};
use crate::measurement::parse_measurement;
use crate::message::{MessageContext, message};
use crate::point::{Field, Point, Tag};
use crate::scan::Cursor;
use crate::tags::parse_tags;
use crate::timestamp::{Precision, parse_timestamp};

/// The longest string field value InfluxDB accepts, in bytes (64 KiB).
pub const DEFAULT_MAX_STRING_LEN: usize = 64 * 1024;
/// The longest series key InfluxDB accepts, in bytes: the measurement and tag set as written,
/// plus 4, plus a field key as written.
pub const DEFAULT_MAX_KEY_LEN: usize = 65_535;

/// How to read a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// The unit of the timestamps in the body.
    pub precision: Precision,
    /// The time, in nanoseconds since the epoch, of lines without a timestamp; truncated to
    /// `precision` before use (as InfluxDB does with its server time).
    pub default_time: i64,
    /// The longest string field value, in bytes after unescaping.
    pub max_string_len: usize,
    /// The longest series key (see [`DEFAULT_MAX_KEY_LEN`]).
    pub max_key_len: usize,
}

impl Options {
    /// Nanosecond precision, the given default time and InfluxDB's limits.
    pub fn new(default_time: i64) -> Self {
        Self {
            precision: Precision::Nanoseconds,
            default_time,
            max_string_len: DEFAULT_MAX_STRING_LEN,
            max_key_len: DEFAULT_MAX_KEY_LEN,
        }
    }

    /// As [`Options::new`], with the current system time as the default time.
    pub fn now() -> Self {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        Self::new(now)
    }

    /// Sets the precision.
    pub fn with_precision(mut self, precision: Precision) -> Self {
        self.precision = precision;
        self
    }
}

/// The input once checked for UTF-8: the valid prefix is parsed; an invalid byte, if any,
/// fails the line it is on.
pub(crate) struct Source<'a> {
    pub text: &'a str,
    pub utf8_error_at: Option<usize>,
}

impl<'a> Source<'a> {
    pub fn new(input: &'a [u8]) -> Self {
        match std::str::from_utf8(input) {
            Ok(text) => Self {
                text,
                utf8_error_at: None,
            },
            Err(e) => {
                let valid = e.valid_up_to();
                let text = input
                    .get(..valid)
                    .and_then(|prefix| std::str::from_utf8(prefix).ok())
                    .unwrap_or_default();
                Self {
                    text,
                    utf8_error_at: Some(valid),
                }
            }
        }
    }

    /// Turns a failure into an error with line, column and message. A failure on the line
    /// that holds invalid UTF-8 becomes the UTF-8 error: the text after it was never seen.
    #[cold]
    #[inline(never)]
    pub fn error(&self, fail: Fail, options: &Options) -> Error {
        let bytes = self.text.as_bytes();
        let fail = match self.utf8_error_at {
            Some(bad)
                if fail.at <= bad
                    && memchr::memchr(b'\n', bytes.get(fail.at..bad).unwrap_or_default())
                        .is_none() =>
            {
                Fail::at(ErrorKind::InvalidUtf8, bad)
            }
            _ => fail,
        };
        let at = fail.at.min(bytes.len());
        let before = bytes.get(..at).unwrap_or_default();
        let line = 1 + memchr::memchr_iter(b'\n', before).count() as u64;
        let line_start = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
        let column = 1 + self
            .text
            .get(line_start..at)
            .map_or(at - line_start, |s| s.chars().count()) as u64;
        let ctx = MessageContext {
            precision: options.precision,
            max_string_len: options.max_string_len,
            max_key_len: options.max_key_len,
        };
        Error::new(
            fail.kind,
            line,
            column,
            fail.at,
            message(&fail, self.text, &ctx),
        )
    }
}

/// Skips empty lines, lines of spaces and tabs, and `#` comment lines (leading spaces
/// allowed). Leaves the cursor on a tab that comes before anything else: a measurement cannot
/// start with whitespace, as in InfluxDB's reference parser, and the line is an error.
/// Returns false at the end of the input.
#[inline(always)]
pub(crate) fn skip_blank_lines(c: &mut Cursor<'_>) -> bool {
    loop {
        while let Some(b' ') = c.peek() {
            c.pos += 1;
        }
        if c.peek() == Some(b'\t') {
            let blank = c.bytes.get(c.pos..).unwrap_or_default();
            let end = blank
                .iter()
                .position(|&b| b != b' ' && b != b'\t')
                .unwrap_or(blank.len());
            let rest = blank.get(end..).unwrap_or_default();
            if !matches!(rest, [] | [b'\n', ..] | [b'\r'] | [b'\r', b'\n', ..]) {
                return true;
            }
            c.pos += end;
        }
        match c.peek() {
            None => return false,
            Some(b'\n') => c.pos += 1,
            Some(b'\r') if c.bytes.get(c.pos + 1) == Some(&b'\n') => c.pos += 2,
            Some(b'\r') if c.pos + 1 == c.bytes.len() => c.pos += 1,
            Some(b'#') => match memchr::memchr(b'\n', c.bytes.get(c.pos..).unwrap_or_default()) {
                Some(k) => c.pos += k + 1,
                None => c.pos = c.bytes.len(),
            },
            Some(_) => return true,
        }
    }
}

/// What a point line gives besides its tags and fields.
pub(crate) struct LineHead<'a> {
    pub measurement: Cow<'a, str>,
    pub time: i64,
    pub time_given: bool,
}

/// Parses one point line at the cursor (placed by [`skip_blank_lines`]), appending its tags
/// and fields, and consumes the line end. `default_time` is already truncated.
#[inline(always)]
pub(crate) fn parse_line<'a>(
    c: &mut Cursor<'a>,
    options: &Options,
    default_time: i64,
    tags: &mut Vec<Tag<'a>>,
    fields: &mut Vec<Field<'a>>,
    keys: &mut FieldKeys,
) -> Result<LineHead<'a>, Fail> {
    let line_start = c.pos;
    let measurement = parse_measurement(c)?;
    parse_tags(c, tags).map_err(|fail| {
        // The message quotes the whole series (measurement and tags) the fields should follow.
        if fail.kind == ErrorKind::MissingFields {
            Fail::quoting(fail.kind, fail.at, line_start, fail.quote_end)
        } else {
            fail
        }
    })?;
    let series_len = c.pos - line_start;
    c.skip_spaces();
    if c.at_eol() {
        let fail = c.stop_error(c.pos, ErrorKind::MissingFields);
        return Err(Fail::quoting(
            fail.kind,
            fail.at,
            line_start,
            line_start + series_len,
        ));
    }
    let longest_field_key = parse_fields(c, fields, keys, options.max_string_len)?;
    let key_len = series_len + 4 + longest_field_key;
    if key_len > options.max_key_len {
        return Err(Fail::quoting(
            ErrorKind::KeyTooLong,
            line_start,
            line_start,
            line_start + key_len,
        ));
    }
    let mut time = default_time;
    let mut time_given = false;
    if c.skip_spaces() > 0 && !c.at_eol() {
        let (at, token) = c.token()?;
        time = parse_timestamp(token, at, options.precision)?;
        time_given = true;
        c.skip_spaces();
        if !c.at_eol() {
            return Err(c.stop_error(c.pos, ErrorKind::TrailingCharacters));
        }
    }
    match c.peek() {
        Some(b'\n') => c.pos += 1,
        Some(b'\r') => c.pos += 2,
        _ => {}
    }
    Ok(LineHead {
        measurement,
        time,
        time_given,
    })
}

/// Parses a body one point at a time, reusing its buffers: after the first lines no line
/// allocates, unless an escape forces a name or string to be copied.
///
/// This is a lending iterator (each point borrows the parser's buffers until the next call),
/// so it is driven with `while let Some(point) = parser.next_point()` rather than `for`.
/// Parsing stops at the first error. For a std [`Iterator`] over a whole body, parse it into
/// a [`crate::Batch`].
pub struct Parser<'a> {
    source: Source<'a>,
    cursor: Cursor<'a>,
    options: Options,
    default_time: i64,
    measurement: Cow<'a, str>,
    tags: Vec<Tag<'a>>,
    fields: Vec<Field<'a>>,
    keys: FieldKeys,
    time: i64,
    time_given: bool,
    failed: bool,
}

impl<'a> Parser<'a> {
    /// A parser over `input` (one or more lines).
    pub fn new(input: &'a [u8], options: Options) -> Self {
        let source = Source::new(input);
        Self {
            cursor: Cursor::new(source.text),
            source,
            options,
            default_time: options.precision.truncate(options.default_time),
            measurement: Cow::Borrowed(""),
            tags: Vec::with_capacity(16),
            fields: Vec::with_capacity(16),
            keys: FieldKeys::default(),
            time: 0,
            time_given: false,
            failed: false,
        }
    }

    /// The next point, `None` at the end of the input or after an error.
    #[allow(clippy::should_implement_trait)]
    pub fn next_point(&mut self) -> Option<Result<Point<'a, '_>, Error>> {
        if self.failed {
            return None;
        }
        match self.advance() {
            Ok(true) => Some(Ok(Point {
                measurement: &self.measurement,
                tags: &self.tags,
                fields: &self.fields,
                time: self.time,
                time_given: self.time_given,
            })),
            Ok(false) => None,
            Err(fail) => {
                self.failed = true;
                Some(Err(self.source.error(fail, &self.options)))
            }
        }
    }

    fn advance(&mut self) -> Result<bool, Fail> {
        self.tags.clear();
        self.fields.clear();
        if !skip_blank_lines(&mut self.cursor) {
            return match self.source.utf8_error_at {
                Some(bad) => Err(Fail::at(ErrorKind::InvalidUtf8, bad)),
                None => Ok(false),
            };
        }
        let head = parse_line(
            &mut self.cursor,
            &self.options,
            self.default_time,
            &mut self.tags,
            &mut self.fields,
            &mut self.keys,
        )?;
        if let Some(bad) = self.source.utf8_error_at
            && self.cursor.pos >= self.cursor.bytes.len()
            && !self.cursor.text.ends_with('\n')
        {
            return Err(Fail::at(ErrorKind::InvalidUtf8, bad));
        }
        self.measurement = head.measurement;
        self.time = head.time;
        self.time_given = head.time_given;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_error(input: &[u8], options: Options) -> Error {
        let mut parser = Parser::new(input, options);
        loop {
            match parser.next_point() {
                Some(Ok(_)) => {}
                Some(Err(e)) => return e,
                None => panic!("no error in {input:?}"),
            }
        }
    }

    #[test]
    fn string_limit_is_64_kib_by_default() {
        let ok = format!("m s=\"{}\"", "x".repeat(DEFAULT_MAX_STRING_LEN));
        assert!(
            Parser::new(ok.as_bytes(), Options::new(0))
                .next_point()
                .is_some_and(|p| p.is_ok())
        );
        let long = format!("m s=\"{}\"", "x".repeat(DEFAULT_MAX_STRING_LEN + 1));
        let e = first_error(long.as_bytes(), Options::new(0));
        assert_eq!(e.kind(), ErrorKind::StringTooLong);
        assert_eq!((e.line(), e.column()), (1, 5));
        assert_eq!(
            e.message(),
            "string field value is longer than the limit of 65536 bytes"
        );
    }

    #[test]
    fn series_key_limit_counts_measurement_tags_and_field_key() {
        // 65535 = series (measurement and tags as written) + 4 + field key.
        let series = format!("m,t={}", "v".repeat(65_535 - 4 - 1 - 4));
        let ok = format!("{series} f=1");
        assert!(
            Parser::new(ok.as_bytes(), Options::new(0))
                .next_point()
                .is_some_and(|p| p.is_ok())
        );
        let long = format!("{series} ff=1");
        let e = first_error(long.as_bytes(), Options::new(0));
        assert_eq!(e.kind(), ErrorKind::KeyTooLong);
        assert_eq!((e.line(), e.column()), (1, 1));
        assert!(
            e.message().contains("65536 bytes, the limit is 65535"),
            "{}",
            e.message()
        );
    }

    #[test]
    fn the_parser_stops_after_an_error() {
        let mut parser = Parser::new(b"m v=1\nm v=\nm v=2\n", Options::new(0));
        assert!(matches!(parser.next_point(), Some(Ok(_))));
        assert!(matches!(parser.next_point(), Some(Err(_))));
        assert!(parser.next_point().is_none());
    }

    #[test]
    fn errors_count_lines_across_crlf_and_columns_in_characters() {
        let e = first_error(
            "a v=1\r\n\r\n# x\r\nb,é=ü v=?\r\n".as_bytes(),
            Options::new(0),
        );
        assert_eq!((e.line(), e.column(), e.offset()), (4, 9, 24));
        assert_eq!(e.kind(), ErrorKind::InvalidFieldValue);
    }

    #[test]
    fn invalid_utf8_fails_its_own_line_only_after_earlier_lines() {
        let mut parser = Parser::new(b"a v=1\nb v=\"\xe2\x82\" 1\n", Options::new(0));
        assert!(matches!(parser.next_point(), Some(Ok(_))));
        let e = parser.next_point().and_then(Result::err).expect("an error");
        assert_eq!(e.kind(), ErrorKind::InvalidUtf8);
        assert_eq!((e.line(), e.column(), e.offset()), (2, 6, 11));
    }

    #[test]
    fn time_given_is_reported() {
        let batch = crate::Batch::parse(b"m v=1 5\nm v=1\n", &Options::new(100)).unwrap();
        let given: Vec<(bool, i64)> = batch.points().map(|p| (p.time_given(), p.time())).collect();
        assert_eq!(given, vec![(true, 5), (false, 100)]);
    }

    #[test]
    fn borrowed_unless_escaped() {
        let body = b"cpu,host=a\\ b v=1,s=\"plain\",e=\"esc\\\"aped\"";
        let mut parser = Parser::new(body, Options::new(0));
        let point = parser.next_point().unwrap().unwrap();
        assert!(matches!(point.measurement_cow(), Cow::Borrowed("cpu")));
        assert!(matches!(point.tags()[0].key, Cow::Borrowed("host")));
        assert!(matches!(point.tags()[0].value, Cow::Owned(_)));
        use crate::FieldValue::String as S;
        assert!(matches!(
            &point.fields()[1].value,
            S(Cow::Borrowed("plain"))
        ));
        assert!(matches!(&point.fields()[2].value, S(Cow::Owned(s)) if s == "esc\"aped"));
    }
}
