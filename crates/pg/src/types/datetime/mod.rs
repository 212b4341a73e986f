//! Dates and times in PostgreSQL's own representation: [`Date`], [`Time`], [`Timestamp`],
//! [`TimestampTz`] and [`Interval`], with their civil fields and both wire formats.

mod civil;
mod date;
mod format;
mod interval;
mod interval_parse;
mod parse;
mod systime;
mod time;
mod timestamp;

pub use civil::CivilDateTime;
pub use date::Date;
pub use interval::Interval;
pub use time::Time;
pub use timestamp::{Timestamp, TimestampTz};

use super::wire::preview;
use super::{ConversionError, Oid};
use parse::TextError;

/// Turns a text parse failure into a conversion error for `oid` and `rust_type`.
fn text_error(oid: Oid, rust_type: &'static str, raw: &[u8], error: TextError) -> ConversionError {
    let shown = preview(raw);
    match error {
        TextError::Syntax { offset, expected } => ConversionError::invalid(
            oid,
            rust_type,
            format!("{shown}: expected {expected} at byte offset {offset}"),
        ),
        TextError::Field(detail) => {
            ConversionError::out_of_range(oid, rust_type, format!("{shown}: {detail}"))
        }
        TextError::DateStyle(style) => ConversionError::invalid(
            oid,
            rust_type,
            format!(
                "{shown} looks like DateStyle {style} output, but only DateStyle ISO text can be \
                 read; run SET DateStyle = ISO on the connection or request binary format"
            ),
        ),
    }
}
