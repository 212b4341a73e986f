//! Row encoders: rows of PostgreSQL text-format fields (`Option<&[u8]>`, `None` for NULL) written
//! straight into one output buffer, no allocation per row or field. The caller flushes the
//! buffer to its output in large chunks.
//!
//! | format | header | a row | NULL |
//! |---|---|---|---|
//! | [`Format::Csj`] | column names as JSON strings | JSON values separated by `,` | `null` |
//! | [`Format::Csv`] | as `COPY ... (FORMAT csv, HEADER)` | byte for byte as COPY's CSV | empty |
//! | [`Format::Tsv`] | only on request, as COPY's text HEADER | byte for byte as COPY's text | `\N` |
//! | [`Format::JsonLines`] | none | one JSON object | `null` |
//! | [`Format::Json`] | `[` | objects separated by `,\n`, then `]` | `null` |
//!
//! Every line ends with `\n`. JSON objects list their columns in result order and keep duplicate
//! names as PostgreSQL's `row_to_json` does. See the crate documentation for the type mapping.

mod array;
mod csv;
pub(crate) mod json_value;
mod text;

pub use json_value::{
    escape_str as escape_json_str, is_json_number, write_str as write_json_str,
    write_string as write_json_string,
};
pub use text::{escape as escape_copy_text, write_value as write_copy_text};

use crate::kind::ColumnKind;
use std::fmt;
use std::str::FromStr;

/// An output (and, but for JSON, input) format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Comma-separated JSON: a header line of names, then a line of JSON values per row.
    Csj,
    /// CSV exactly as PostgreSQL's `COPY ... (FORMAT csv)` writes it.
    Csv,
    /// PostgreSQL's COPY text format: tab-separated, backslash escapes, `\N` for NULL.
    Tsv,
    /// JSON Lines: one JSON object per line.
    JsonLines,
    /// One JSON array of objects.
    Json,
}

impl Format {
    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Format::Csj => "csj",
            Format::Csv => "csv",
            Format::Tsv => "tsv",
            Format::JsonLines => "jsonl",
            Format::Json => "json",
        }
    }

    /// The format a file name's extension suggests (`.csj`, `.csv`, `.tsv`, `.jsonl`/`.ndjson`,
    /// `.json`).
    pub fn from_extension(path: &str) -> Option<Format> {
        let ext = path.rsplit_once('.')?.1;
        match ext.to_ascii_lowercase().as_str() {
            "csj" => Some(Format::Csj),
            "csv" => Some(Format::Csv),
            "tsv" | "txt" => Some(Format::Tsv),
            "jsonl" | "ndjson" => Some(Format::JsonLines),
            "json" => Some(Format::Json),
            _ => None,
        }
    }

    /// Whether files of this format start with a header line by default.
    pub fn header_by_default(self) -> bool {
        matches!(self, Format::Csj | Format::Csv)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not a known format.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown format {0:?}: use csj, csv, tsv, jsonl or json")]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Format, UnknownFormat> {
        match s.to_ascii_lowercase().as_str() {
            "csj" => Ok(Format::Csj),
            "csv" => Ok(Format::Csv),
            "tsv" | "text" => Ok(Format::Tsv),
            "jsonl" | "jsonlines" | "ndjson" => Ok(Format::JsonLines),
            "json" => Ok(Format::Json),
            _ => Err(UnknownFormat(s.to_owned())),
        }
    }
}

/// One output column: its name and how its values map to JSON.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnSpec {
    /// The column name (the result's, e.g. an alias).
    pub name: String,
    /// Its JSON mapping (ignored by CSV and TSV).
    pub kind: ColumnKind,
}

impl ColumnSpec {
    /// A column named `name` of kind `kind`.
    pub fn new(name: impl Into<String>, kind: ColumnKind) -> ColumnSpec {
        ColumnSpec {
            name: name.into(),
            kind,
        }
    }
}

/// Encodes rows in one format. Call [`Encoder::begin`] once, [`Encoder::row`] per row, then
/// [`Encoder::finish`]; each appends to the caller's buffer.
#[derive(Debug)]
pub struct Encoder {
    format: Format,
    header: bool,
    names: Vec<String>,
    kinds: Box<[ColumnKind]>,
    /// JSON object keys with their colon, `"name":`, one after another.
    keys: Vec<u8>,
    /// The end of each key in `keys`.
    key_ends: Box<[usize]>,
    /// Reused for array elements that need unescaping.
    scratch: Vec<u8>,
    rows: u64,
}

impl Encoder {
    /// An encoder for `columns` in `format`; `header` asks for a header line (CSJ, CSV, TSV).
    pub fn new(format: Format, columns: &[ColumnSpec], header: bool) -> Encoder {
        // Sized for the usual names (no escapes): one allocation, not a few regrowths, per
        // encoder, since a small read builds one per request.
        let mut keys = Vec::with_capacity(columns.iter().map(|c| c.name.len() + 3).sum());
        let mut key_ends = Vec::with_capacity(columns.len());
        for c in columns {
            json_value::write_string(&mut keys, c.name.as_bytes());
            keys.push(b':');
            key_ends.push(keys.len());
        }
        Encoder {
            format,
            header,
            // Only a header line needs the names themselves.
            names: if header && matches!(format, Format::Csj | Format::Csv | Format::Tsv) {
                columns.iter().map(|c| c.name.clone()).collect()
            } else {
                Vec::new()
            },
            kinds: columns.iter().map(|c| c.kind).collect(),
            keys,
            key_ends: key_ends.into(),
            scratch: Vec::new(),
            rows: 0,
        }
    }

    /// The format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The number of rows encoded so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Writes what comes before the rows: the header line, or JSON's `[`.
    pub fn begin(&mut self, out: &mut Vec<u8>) {
        match self.format {
            Format::Csj if self.header => {
                for (i, name) in self.names.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    json_value::write_string(out, name.as_bytes());
                }
                out.push(b'\n');
            }
            Format::Csv if self.header => {
                let single = self.names.len() == 1;
                for (i, name) in self.names.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    csv::write_value(out, name.as_bytes(), single);
                }
                out.push(b'\n');
            }
            Format::Tsv if self.header => {
                for (i, name) in self.names.iter().enumerate() {
                    if i > 0 {
                        out.push(b'\t');
                    }
                    text::write_value(out, name.as_bytes());
                }
                out.push(b'\n');
            }
            Format::Json => out.push(b'['),
            _ => {}
        }
    }

    /// Writes one row; `fields` are its values in column order, `None` for NULL.
    #[inline]
    pub fn row<'a, I>(&mut self, fields: I, out: &mut Vec<u8>)
    where
        I: IntoIterator<Item = Option<&'a [u8]>>,
    {
        match self.format {
            Format::Csv => csv::write_row(out, fields, self.kinds.len() == 1),
            Format::Tsv => text::write_row(out, fields),
            Format::Csj => self.csj_row(fields, out),
            Format::JsonLines => {
                self.object(fields, out);
                out.push(b'\n');
            }
            Format::Json => {
                out.extend_from_slice(if self.rows == 0 { b"\n" } else { b",\n" });
                self.object(fields, out);
            }
        }
        self.rows += 1;
    }

    /// Writes what comes after the rows: JSON's `]`.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        if self.format == Format::Json {
            out.extend_from_slice(if self.rows == 0 { b"]\n" } else { b"\n]\n" });
        }
    }

    #[inline]
    fn csj_row<'a, I>(&mut self, fields: I, out: &mut Vec<u8>)
    where
        I: IntoIterator<Item = Option<&'a [u8]>>,
    {
        for (i, (field, &kind)) in fields.into_iter().zip(self.kinds.iter()).enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_json_field(out, kind, field, &mut self.scratch);
        }
        out.push(b'\n');
    }

    #[inline]
    fn object<'a, I>(&mut self, fields: I, out: &mut Vec<u8>)
    where
        I: IntoIterator<Item = Option<&'a [u8]>>,
    {
        out.push(b'{');
        let mut key_start = 0;
        for (i, ((field, &kind), &key_end)) in fields
            .into_iter()
            .zip(self.kinds.iter())
            .zip(self.key_ends.iter())
            .enumerate()
        {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(self.keys.get(key_start..key_end).unwrap_or_default());
            key_start = key_end;
            write_json_field(out, kind, field, &mut self.scratch);
        }
        out.push(b'}');
    }
}

/// Writes one field (its text output, `None` for NULL) as a JSON value of `kind`, for callers
/// that lay out their own JSON (nested objects); `scratch` is reused for array elements.
#[inline]
pub fn write_json_value(
    out: &mut Vec<u8>,
    kind: ColumnKind,
    field: Option<&[u8]>,
    scratch: &mut Vec<u8>,
) {
    write_json_field(out, kind, field, scratch);
}

/// One field as a JSON value of its column's kind.
#[inline]
fn write_json_field(
    out: &mut Vec<u8>,
    kind: ColumnKind,
    field: Option<&[u8]>,
    scratch: &mut Vec<u8>,
) {
    match field {
        None => out.extend_from_slice(b"null"),
        Some(text) => match kind.array_delimiter {
            None => json_value::write_scalar(out, kind.scalar, text),
            Some(delimiter) => array::write_array_value(out, text, kind.scalar, delimiter, scratch),
        },
    }
}

/// Encodes whole rows into a new buffer: a convenience for tests and small results.
pub fn encode_all<'a, R, I>(
    format: Format,
    columns: &[ColumnSpec],
    header: bool,
    rows: R,
) -> Vec<u8>
where
    R: IntoIterator<Item = I>,
    I: IntoIterator<Item = Option<&'a [u8]>>,
{
    let mut encoder = Encoder::new(format, columns, header);
    let mut out = Vec::new();
    encoder.begin(&mut out);
    for row in rows {
        encoder.row(row, &mut out);
    }
    encoder.finish(&mut out);
    out
}

#[cfg(test)]
mod tests;
