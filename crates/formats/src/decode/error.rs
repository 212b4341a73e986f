//! Decode errors: what is wrong, on which line and column of the input, and what to do about it.

use std::fmt;

/// What kind of problem a [`DecodeError`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// The input has no header line (or no first object) to take the columns from.
    NoHeader,
    /// The header line is not a list of column names.
    BadHeader,
    /// The text is not valid JSON where a value was expected.
    InvalidJson,
    /// The input holds nothing (but blanks) where a JSON array was expected.
    Empty,
    /// A line is not valid UTF-8.
    InvalidUtf8,
    /// JSON nests deeper than the decoder follows.
    TooDeep,
    /// A JSON Lines line is not an object.
    NotAnObject,
    /// An object has a key that is not one of the columns (taken from the first object).
    UnknownKey,
    /// An object has the same key twice.
    DuplicateKey,
    /// An object lacks a key the others have (where every key is required).
    MissingKey,
    /// A row has more or fewer values than there are columns.
    ColumnCount,
    /// A string holds `\u0000`, which PostgreSQL text cannot store.
    NulCharacter,
    /// A CSV quoted field is still open at the end of the input.
    UnterminatedQuote,
    /// A carriage return outside quotes in CSV whose lines end with a bare newline (or alone, in
    /// CR LF data).
    UnquotedCarriageReturn,
    /// A newline outside quotes in CSV whose lines end with CR or CR LF.
    UnquotedNewline,
    /// A line holding only `\.`, which COPY would take as the end of the data.
    EndOfDataMarker,
    /// A line longer than [`super::MAX_LINE`].
    LineTooLong,
}

impl DecodeErrorKind {
    fn describe(self) -> &'static str {
        match self {
            DecodeErrorKind::NoHeader => "no header: the input is empty",
            DecodeErrorKind::BadHeader => "the header line must list the column names",
            DecodeErrorKind::InvalidJson => "invalid JSON",
            DecodeErrorKind::Empty => "the input is empty",
            DecodeErrorKind::InvalidUtf8 => "invalid UTF-8",
            DecodeErrorKind::TooDeep => "JSON nested too deeply",
            DecodeErrorKind::NotAnObject => "expected a JSON object",
            DecodeErrorKind::UnknownKey => "unknown key",
            DecodeErrorKind::DuplicateKey => "duplicate key",
            DecodeErrorKind::MissingKey => "missing key",
            DecodeErrorKind::ColumnCount => "wrong number of values",
            DecodeErrorKind::NulCharacter => {
                "\\u0000 cannot be stored in PostgreSQL text; remove it or use a bytea column"
            }
            DecodeErrorKind::UnterminatedQuote => "unterminated CSV quoted field",
            DecodeErrorKind::UnquotedCarriageReturn => {
                "carriage return found outside quotes; quote fields that contain one"
            }
            DecodeErrorKind::UnquotedNewline => {
                "newline found outside quotes in data whose lines end with CR; quote fields that contain one"
            }
            DecodeErrorKind::EndOfDataMarker => {
                "a line holding only \\. would end the COPY data early; quote it (\"\\.\")"
            }
            DecodeErrorKind::LineTooLong => "line longer than 1 GiB",
        }
    }
}

/// A problem in the input, with its place: the 1-based line, and the 1-based column (in
/// characters) when known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    kind: DecodeErrorKind,
    line: u64,
    column: Option<u64>,
    detail: Option<Box<str>>,
}

impl DecodeError {
    pub(crate) fn new(kind: DecodeErrorKind, line: u64) -> DecodeError {
        DecodeError {
            kind,
            line,
            column: None,
            detail: None,
        }
    }

    /// Adds the column: the character position of byte `offset` in `line_text`.
    pub(crate) fn at(mut self, line_text: &[u8], offset: usize) -> DecodeError {
        let prefix = line_text.get(..offset).unwrap_or(line_text);
        let chars = prefix.iter().filter(|&&b| (b & 0xc0) != 0x80).count();
        self.column = Some(chars as u64 + 1);
        self
    }

    pub(crate) fn detail(mut self, detail: impl Into<String>) -> DecodeError {
        self.detail = Some(detail.into().into_boxed_str());
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> DecodeErrorKind {
        self.kind
    }

    /// The 1-based line.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// The 1-based column in characters, when known.
    pub fn column(&self) -> Option<u64> {
        self.column
    }

    /// More about it: what was expected, which key, how many values.
    pub fn detail_text(&self) -> Option<&str> {
        self.detail.as_deref()
    }

    /// The same error on line `line`: for a caller that parses one line of a larger input at
    /// a time (the line numbers are the caller's).
    pub fn on_line(mut self, line: u64) -> DecodeError {
        self.line = line;
        self
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}", self.line)?;
        if let Some(column) = self.column {
            write!(f, ", column {column}")?;
        }
        write!(f, ": {}", self.kind.describe())?;
        if let Some(detail) = &self.detail {
            write!(f, ": {detail}")?;
        }
        Ok(())
    }
}

impl std::error::Error for DecodeError {}
