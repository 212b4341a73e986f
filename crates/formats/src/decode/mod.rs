//! Body parsers: CSJ, JSON Lines, CSV and COPY text input turned into what `COPY ... FROM STDIN`
//! takes, sans-I/O and streaming: the caller feeds whatever bytes it has (rows may span chunks),
//! the decoder consumes the complete lines and appends COPY text-format rows to an output buffer.
//!
//! - CSJ and JSON Lines become COPY text rows, each JSON value converted for its column: `null`
//!   is `\N`; strings are their contents (json/jsonb columns take the JSON text itself); numbers
//!   and booleans their text; a JSON array for an array column becomes an array literal
//!   (`[1,[2]]` is not valid there, nested arrays are dimensions); objects, and arrays for other
//!   columns, become their JSON text.
//! - CSV goes to `COPY ... (FORMAT csv, HEADER)` as it is: [`CsvScanner`] only finds the header,
//!   checks every record has as many fields as the header and that no unquoted `\.` line would
//!   end the data early, with the physical line of any problem.
//! - COPY text (TSV) goes as it is too: [`TsvScanner`] reads the optional header and checks for
//!   `\.` lines.

mod convert;
mod csj;
mod csv;
mod error;
mod json;
mod jsonarray;
mod jsonl;
mod lines;
mod tsv;

pub use csj::{CsjDecoder, CsjHeader};
pub use csv::{CollectFields, CsvScanner, CsvSink, SkipFields};
pub use error::{DecodeError, DecodeErrorKind};
pub use jsonarray::{FirstElementKeys, JsonArrayDecoder, first_element_keys};
pub use jsonl::{JsonlDecoder, KeyRules, first_object_keys};
pub use lines::LineMap;
pub use tsv::{TsvScanner, parse_text_header};

/// The longest line (or CSV record) a decoder accepts: PostgreSQL's own limit for a field value
/// is 1 GB, so a longer line cannot load anyway.
pub const MAX_LINE: usize = 1 << 30;
