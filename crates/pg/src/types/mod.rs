//! Conversions between Rust values and PostgreSQL values, in both wire formats.
//!
//! Reading: a column arrives as `Option<&[u8]>` in text or binary format; [`FromSql`] turns it
//! into a Rust value, borrowing from the row's buffer where it can (`&str`, `&[u8]`).
//! Writing: a parameter is sent in binary when the server's type for it is known and
//! [`ToSql::accepts_binary`] says so, else as text of unspecified type so the server infers it.

mod error;
pub mod oid;

pub use error::{ConversionError, ConversionErrorKind};
pub use oid::Oid;

use bytes::BytesMut;

/// The two wire formats of a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i16)]
pub enum Format {
    /// PostgreSQL's text input/output syntax.
    Text = 0,
    /// PostgreSQL's `send`/`recv` binary representation.
    Binary = 1,
}

impl Format {
    /// The format code used in Bind and RowDescription messages.
    pub fn code(self) -> i16 {
        self as i16
    }

    /// Maps a wire format code; anything but 1 is text, as the server does.
    pub fn from_code(code: i16) -> Format {
        if code == 1 {
            Format::Binary
        } else {
            Format::Text
        }
    }
}

/// Whether an encoded value is SQL NULL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IsNull {
    /// The value is NULL; nothing was written.
    Yes,
    /// The value was written.
    No,
}

/// A Rust type that can be read from a PostgreSQL value.
pub trait FromSql<'a>: Sized {
    /// Whether a column of type `oid` can be read as `Self` (in either format).
    fn accepts(oid: Oid) -> bool;

    /// Decodes a non-NULL value of type `oid` sent in `format`.
    fn from_sql(oid: Oid, format: Format, raw: &'a [u8]) -> Result<Self, ConversionError>;

    /// The value for SQL NULL; an error unless `Self` can represent NULL (`Option<T>`).
    fn from_sql_null(oid: Oid) -> Result<Self, ConversionError> {
        Err(ConversionError::unexpected_null(
            oid,
            std::any::type_name::<Self>(),
        ))
    }

    /// Decodes a value that may be NULL.
    fn from_sql_nullable(
        oid: Oid,
        format: Format,
        raw: Option<&'a [u8]>,
    ) -> Result<Self, ConversionError> {
        match raw {
            Some(raw) => Self::from_sql(oid, format, raw),
            None => Self::from_sql_null(oid),
        }
    }
}

/// A Rust value that can be sent as a query parameter.
///
/// Object safe, so that parameters of mixed types can be passed as `&[&dyn ToSql]`.
pub trait ToSql: std::fmt::Debug + Sync {
    /// Whether [`ToSql::to_sql_binary`] can encode this value for a parameter of server type `oid`.
    fn accepts_binary(&self, oid: Oid) -> bool;

    /// Writes the binary encoding for server type `oid`. Only called when `accepts_binary(oid)`.
    fn to_sql_binary(&self, oid: Oid, out: &mut BytesMut) -> Result<IsNull, ConversionError>;

    /// Writes the value in PostgreSQL's text input syntax, which the server parses for whatever
    /// type the parameter has.
    fn to_sql_text(&self, out: &mut BytesMut) -> Result<IsNull, ConversionError>;

    /// The Rust type's name, for error messages.
    fn rust_type(&self) -> &'static str {
        std::any::type_name::<Self>()
    }
}
