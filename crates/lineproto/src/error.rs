//! Parse errors: a kind, the line and column where it happened, and a message saying what was expected.

use std::fmt;

/// What went wrong; stable for callers that want to react to a class of error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input is not UTF-8.
    InvalidUtf8,
    /// A control character (U+0000..U+001F, U+007F) in a name or tag value.
    ControlCharacter,
    /// The line starts with a comma: no measurement name.
    MissingMeasurement,
    /// A tab before the measurement: a measurement cannot start with whitespace.
    LeadingWhitespace,
    /// A comma in the tag set is not followed by a tag key.
    MissingTagKey,
    /// A tag key is not followed by `=`.
    MissingTagEquals,
    /// A tag key is followed by `=` and no value; InfluxDB rejects empty tag values.
    EmptyTagValue,
    /// An unescaped `=` inside a tag value.
    UnescapedEquals,
    /// The line ends before a field set.
    MissingFields,
    /// A field is expected but no key is there.
    MissingFieldKey,
    /// A field key is not followed by `=`.
    MissingFieldEquals,
    /// A field key and `=` are not followed by a value.
    MissingFieldValue,
    /// The field value is of no known type.
    InvalidFieldValue,
    /// A float field value is malformed.
    InvalidFloat,
    /// A float field value is NaN or infinite, which InfluxDB rejects.
    NanOrInfinity,
    /// A float field value does not fit a 64-bit float.
    FloatOutOfRange,
    /// An integer (`i`) field value is malformed.
    InvalidInteger,
    /// An integer (`i`) field value does not fit in i64.
    IntegerOutOfRange,
    /// An unsigned (`u`) field value is malformed.
    InvalidUnsigned,
    /// An unsigned (`u`) field value does not fit in u64.
    UnsignedOutOfRange,
    /// A boolean field value is not one of the accepted spellings.
    InvalidBoolean,
    /// A string field value has no closing double quote.
    UnterminatedString,
    /// A string field value is longer than the limit.
    StringTooLong,
    /// A field value is followed by something other than `,`, a space or the end of the line.
    UnexpectedAfterValue,
    /// The timestamp is not an integer.
    InvalidTimestamp,
    /// The timestamp does not fit the range InfluxDB accepts once scaled to nanoseconds.
    TimestampOutOfRange,
    /// Something follows the timestamp.
    TrailingCharacters,
    /// The same tag key appears twice in one line.
    DuplicateTag,
    /// The series key (measurement, tags and a field key) is longer than the limit.
    KeyTooLong,
}

/// A line protocol parse error.
///
/// `line` and `column` are 1-based; `column` counts Unicode characters (not bytes) from the
/// start of the line. `offset` is the byte offset in the whole input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    line: u64,
    column: u64,
    offset: usize,
    message: String,
}

impl Error {
    pub(crate) fn new(
        kind: ErrorKind,
        line: u64,
        column: u64,
        offset: usize,
        message: String,
    ) -> Self {
        Self {
            kind,
            line,
            column,
            offset,
            message,
        }
    }

    /// The class of error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The 1-based line number.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// The 1-based column, in characters.
    pub fn column(&self) -> u64 {
        self.column
    }

    /// The byte offset in the input.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The same error for a text that started `offset` bytes and `lines` lines into the input.
    pub(crate) fn shifted(mut self, offset: usize, lines: u64) -> Self {
        self.offset += offset;
        self.line += lines;
        self
    }

    /// What was expected and what was found, without the position.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}:{}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for Error {}

/// The cheap error the scanners return: a kind, the byte offset it points at and the span of
/// the token its message quotes. Turned into an [`Error`] (line, column, message) only once,
/// on the error path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fail {
    pub kind: ErrorKind,
    /// Byte offset the error points at.
    pub at: usize,
    /// Start of the token the message quotes.
    pub quote_start: usize,
    /// End of the token the message quotes (equal to `quote_start` when there is none).
    pub quote_end: usize,
}

impl Fail {
    /// An error at `at` with nothing to quote.
    #[cold]
    #[inline(never)]
    pub fn at(kind: ErrorKind, at: usize) -> Self {
        Self::quoting(kind, at, at, at)
    }

    /// An error at the start of the token `at..end`, quoting it.
    #[cold]
    #[inline(never)]
    pub fn span(kind: ErrorKind, at: usize, end: usize) -> Self {
        Self::quoting(kind, at, at, end)
    }

    /// An error at `at` whose message quotes `quote_start..quote_end` (a key, say).
    #[cold]
    #[inline(never)]
    pub fn quoting(kind: ErrorKind, at: usize, quote_start: usize, quote_end: usize) -> Self {
        Self {
            kind,
            at,
            quote_start,
            quote_end,
        }
    }
}
