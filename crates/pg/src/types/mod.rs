//! Conversions between Rust values and PostgreSQL values, in both wire formats.
//!
//! Reading: a column arrives as `Option<&[u8]>` in text or binary format; [`FromSql`] turns it
//! into a Rust value, borrowing from the row's buffer where it can (`&str`, `&[u8]`).
//! Writing: a parameter is sent in binary when the server's type for it is known and
//! [`ToSql::accepts_binary`] says so, else as text of unspecified type so the server infers it.
//!
//! | Rust | PostgreSQL (read) | binary write |
//! |------|-------------------|--------------|
//! | `bool` | bool | bool |
//! | `i16`, `i32`, `i64` | int2; int2/int4; int2/int4/int8/oid (lossless widening) | int2/int4/int8/oid, range checked |
//! | `u32` | oid | oid/int2/int4/int8, range checked |
//! | `i8` | `"char"` | `"char"` |
//! | `f32`, `f64` | float4; float4/float8 | float4/float8; float8 |
//! | [`Numeric`] (exact text) | numeric, int2/int4/int8 | numeric |
//! | `rust_decimal::Decimal` (feature `decimal`) | numeric, int2/int4/int8 | numeric |
//! | `&str`, `String`, `Cow<str>` | text, varchar, bpchar, name, unknown, `"char"`, json, jsonb | the same but `"char"` |
//! | `serde_json::Value` (feature `with-serde_json-1`) | json, jsonb | json, jsonb |
//! | `&[u8]` (binary format only), `Vec<u8>` | bytea | bytea |
//! | [`Uuid`] | uuid | uuid |
//! | [`Date`], [`Time`], [`Timestamp`], [`TimestampTz`], [`Interval`] | date, time, timestamp, timestamptz, interval | the same |
//! | `std::time::SystemTime` | timestamptz, timestamp (as UTC) | timestamptz, timestamp |
//! | `Vec<T>`, `Vec<Option<T>>` (`&[T]`, `[T; N]` to write) | one-dimensional arrays of the above | the array types |
//! | `Option<T>` | NULL as `None` | NULL |
//! | chrono, time, jiff, uuid types (features `with-*`, see [the crate docs](crate)) | date, time, timestamp, timestamptz, interval, uuid | the same |
//!
//! Every type also writes PostgreSQL text input syntax. Text-format reading expects the
//! server's defaults for output settings: DateStyle ISO (other styles give a clear error),
//! any IntervalStyle, `bytea_output` hex or escape, `extra_float_digits` 1 for exact floats.

mod array;
pub mod binary;
mod boolean;
mod bytea;
mod datetime;
#[cfg(feature = "decimal")]
mod decimal;
mod ecosystem;
mod float;
mod integer;
#[cfg(feature = "with-serde_json-1")]
mod json;
mod numeric;
mod passthrough;
mod text;
mod uuid;
mod wire;

mod error;
pub mod oid;

pub use datetime::{CivilDateTime, Date, Interval, Time, Timestamp, TimestampTz};
pub use error::{ConversionError, ConversionErrorKind};
pub use numeric::Numeric;
pub use oid::Oid;
pub use uuid::Uuid;

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

    /// Decodes a non-NULL value from a short-lived buffer rather than from the row: a text-format
    /// array element that contained quotes or backslashes and had to be unescaped first.
    ///
    /// Types that own their data forward to [`FromSql::from_sql`]. The default, right for types
    /// that borrow from the row (`&str`, `&[u8]`), reports that such a value cannot be borrowed.
    fn from_sql_unescaped(oid: Oid, format: Format, raw: &[u8]) -> Result<Self, ConversionError> {
        let _ = (format, raw);
        Err(ConversionError::new(
            ConversionErrorKind::WrongType,
            oid,
            std::any::type_name::<Self>(),
            "the value contains quotes or backslashes that had to be unescaped, so it cannot be \
             borrowed from the row; read it as an owned type (String, Vec<u8>) or use binary format",
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
