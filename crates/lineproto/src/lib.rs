//! InfluxDB line protocol: a sans-I/O parser that borrows names and values from its input.
//!
//! ```
//! use sluice_lineproto::{Batch, FieldValue, Options, Parser};
//!
//! let body = b"cpu,host=a,region=eu usage=0.5,count=3i 1465839830100400200\n";
//! let options = Options::new(0);
//!
//! // One point at a time, from reused buffers:
//! let mut parser = Parser::new(body, options);
//! while let Some(point) = parser.next_point() {
//!     let point = point?;
//!     assert_eq!(point.measurement(), "cpu");
//!     assert_eq!(point.fields()[1].value, FieldValue::Int(3));
//! }
//!
//! // Or a whole body at once (one bad line fails it):
//! let batch = Batch::parse(body, &options)?;
//! assert_eq!(batch.points().next().map(|p| p.time()), Some(1465839830100400200));
//! # Ok::<(), sluice_lineproto::Error>(())
//! ```
//!
//! # The grammar, as InfluxDB reads it
//!
//! `measurement[,tag_key=tag_value...] field_key=field_value[,...] [timestamp]`, one point per
//! line; lines end with `\n`, `\r\n`, or a `\r` that ends the input (a `\r` elsewhere is a
//! control character, an error). Empty lines, lines of spaces, and lines whose first non-space
//! character is `#` are skipped (so a measurement cannot start with `#`). Leading spaces are
//! skipped; a tab is not (a line starting with a tab is an error: a measurement cannot start
//! with whitespace); the sections are separated by one or more spaces; spaces after the last
//! section are allowed.
//!
//! * Escapes: in a measurement a backslash before a comma or a space stands for it; in tag
//!   keys, tag values and field keys also before `=`. Any other backslash is literal, one
//!   before another backslash and one that ends a token included, and the character after it
//!   is read as usual: `regions=\\ east` reads `\ east` (a kept backslash, then an escaped
//!   space), `two\\\ words` reads `two\\ words` (InfluxDB's reference parser,
//!   influxdata/line-protocol).
//! * Tag values may not be empty; an unescaped `=` in a tag value is an error; a tag key may
//!   appear once. Tags come out sorted by key (byte order), as InfluxDB keys a series.
//! * Field values: floats (`1`, `1.5`, `1.`, `.5`, `-1.5e-3`, `1.E+78`; NaN, infinity and
//!   values beyond f64 rejected), `i` integers (i64), `u` unsigned (u64), `"strings"` (where
//!   `\"` and `\\` are escapes, other backslashes are kept, and newlines are allowed), and
//!   booleans `t T true True TRUE f F false False FALSE`. A field key given twice keeps the
//!   last value (at the first key's position). At least one field is required.
//! * Timestamps: optional `-?[0-9]+` in the body's precision (ns, us, ms, s), scaled to
//!   nanoseconds; the result must lie in `-9223372036854775806..=9223372036854775806`.
//!   A line without one gets the default time, truncated to the precision.
//! * Validation: UTF-8; no control characters (U+0000..U+001F, U+007F) outside string
//!   values; strings at most 64 KiB; the series key (measurement and tags as written, plus
//!   4, plus a field key as written) at most 65535 bytes. `time` is an ordinary tag or field
//!   key here (InfluxDB accepts it as a tag; a consumer whose table has a `time` column maps
//!   it, as the write API does to `time_tag` / `time_field`).
//!
//! Errors carry a 1-based line, a 1-based column counted in characters, the byte offset,
//! and a message saying what was expected and what was found.
//!
//! # Where InfluxDB's docs and parsers disagree, and what this parser does
//!
//! * `\\` in names: InfluxDB's reference parser (influxdata/line-protocol) and InfluxDB
//!   1.x/2.x (Go `models`) keep both backslashes; the v2 reference's backslash table and
//!   InfluxDB 3 (the `influxdb-line-protocol` crate) read one. This parser follows the
//!   reference parser.
//! * `1.`, `.5`, `1.e+78`: accepted, as InfluxDB 1.x/2.x do and the v1 reference lists; the
//!   `influxdb-line-protocol` crate rejects them.
//! * `\r\n` line ends, and a `\r` ending the input: accepted (the Go `line-protocol` v2
//!   decoder does; `models` and the Rust crate do not).
//! * A trailing space after the field set: accepted, as in 1.x/2.x; the Rust crate rejects.
//! * Newlines inside string values: accepted, as every InfluxDB parser does (the reference
//!   says they are not supported).
//! * Duplicate tag keys, out-of-range timestamps, control characters, a trailing comma in the
//!   field set, floats beyond f64: errors here; the Rust crate accepts them (InfluxDB rejects
//!   the first two, 2.x's Go parser rejects the trailing comma and the float overflow).
//! * Leading tabs: an error, as in the reference parser (1.x's `models` skips them).
//! * A repeated field key: the last value wins, as in InfluxDB 1.x/2.x (the Rust crate keeps
//!   both).
//! * Not done: InfluxDB's Unicode check for non-printable characters beyond ASCII control
//!   characters in keys (`ValidKeyToken`), and the `_`-prefix reservation of 2.x.

#![warn(missing_docs)]

mod batch;
mod error;
mod fields;
mod json;
mod measurement;
mod message;
mod number;
mod parser;
mod point;
mod scan;
mod tags;
mod timestamp;

pub use batch::{Batch, BatchStorage};
pub use error::{Error, ErrorKind};
pub use json::write_point_json;
pub use parser::{DEFAULT_MAX_KEY_LEN, DEFAULT_MAX_STRING_LEN, Options, Parser};
pub use point::{Field, FieldValue, Point, Tag};
pub use timestamp::{MAX_TIME_NS, MIN_TIME_NS, Precision, UnknownPrecision};

/// Internals exposed for the crate's own benchmarks only; not part of the API.
#[doc(hidden)]
pub mod __bench {
    /// The float field value parser.
    pub fn parse_float(token: &str) -> Option<f64> {
        crate::number::parse_float(token, 0).ok()
    }
}
