//! sluice-formats: row encoders (CSJ, CSV, TSV, JSON, JSON Lines) and body parsers (CSJ, CSV,
//! JSON Lines, COPY text) for PostgreSQL text-format data. Sans-I/O: encoders append to a
//! caller's buffer, decoders take whatever bytes the caller has and say how many they used.
//!
//! # From PostgreSQL values to JSON (CSJ, JSON Lines, JSON)
//!
//! Values arrive as the server's text output; each column's [`ColumnKind`] (from its type OID,
//! see [`kind`]) decides its JSON form:
//!
//! | PostgreSQL | JSON |
//! |---|---|
//! | NULL | `null` |
//! | int2, int4, int8, oid, float4, float8, numeric | the number's text as a JSON number; `NaN`, `Infinity`, `-Infinity` as strings |
//! | bool | `true` / `false` |
//! | json, jsonb | embedded as is (a CR or LF between tokens becomes a space, so each row stays on one line) |
//! | arrays (`{...}` text, any dimensions) | JSON arrays, elements typed by the element type, SQL NULL elements as `null`; lower bounds other than 1 are dropped |
//! | everything else: text, varchar, char, name, date, time, timestamp(tz), interval, uuid, money, inet, bytea (`\x...`), enums, ranges, composites, domains over these ... | a JSON string of the text output |
//!
//! Domains take their base type's form. Strings escape `"`, `\` and control characters
//! (`\n`, `\t`, `\u0001`, ...); invalid UTF-8 (only possible from a SQL_ASCII database) is
//! replaced by U+FFFD, so the output is always valid UTF-8 JSON. Array text that is not array
//! output (`int2vector` prints `1 2`) falls back to a string.
//!
//! # From JSON to PostgreSQL (CSJ and JSON Lines import)
//!
//! The inverse, column by column: `null` is NULL; a string is its contents (for json/jsonb
//! columns the JSON string itself); numbers and booleans go as their text; a JSON array for an
//! array column becomes an array literal (nested arrays are further dimensions, except in
//! json[]/jsonb[] where they are elements); objects, and arrays for other columns, go as their
//! JSON text. PostgreSQL's input functions then check the values.
//!
//! One value does not survive the round trip: a json/jsonb value that is JSON `null` is written
//! as `null`, which reads back as SQL NULL (as with `row_to_json`, the two look the same).
//!
//! # CSV and TSV
//!
//! Byte for byte what `COPY ... TO STDOUT (FORMAT csv, HEADER)` and `COPY ... TO STDOUT` write,
//! bytes passed through unchanged. (The values are the server's text in the session's
//! client encoding; sluice-pg always asks for UTF-8, psql for the database's encoding, so the
//! two are identical in UTF-8 databases.)

#![warn(missing_docs)]

pub mod decode;
pub mod encode;
pub mod kind;
mod swar;

pub use decode::{DecodeError, DecodeErrorKind};
pub use encode::{ColumnSpec, Encoder, Format};
pub use kind::{ColumnKind, Oid, Scalar};
