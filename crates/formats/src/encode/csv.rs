//! CSV exactly as PostgreSQL's `COPY ... TO (FORMAT csv)` writes it (CopyAttributeOutCSV with the
//! default options): a value is quoted when it contains the delimiter `,`, the quote `"`, CR or
//! LF, when it is empty (the NULL string is empty, so an empty string must differ from NULL), and
//! when it is `\.` as the only column (the old end-of-data marker); quotes inside are doubled.
//! NULL is nothing at all. UTF-8 never embeds ASCII bytes, so bytes are scanned one by one.

use crate::swar;

/// Writes one row and its `\n`.
#[inline]
pub(super) fn write_row<'a, I>(out: &mut Vec<u8>, fields: I, single_column: bool)
where
    I: IntoIterator<Item = Option<&'a [u8]>>,
{
    for (i, field) in fields.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        if let Some(value) = field {
            write_value(out, value, single_column);
        }
    }
    out.push(b'\n');
}

/// Writes one non-NULL value (or a header name).
#[inline]
pub(super) fn write_value(out: &mut Vec<u8>, value: &[u8], single_column: bool) {
    let quote = value.is_empty()
        || (single_column && value == b"\\.")
        || swar::find_csv_special(value).is_some();
    if !quote {
        out.extend_from_slice(value);
        return;
    }
    out.push(b'"');
    let mut rest = value;
    while let Some(at) = memchr::memchr(b'"', rest) {
        let (run, tail) = rest.split_at(at + 1);
        out.extend_from_slice(run);
        out.push(b'"');
        rest = tail;
    }
    out.extend_from_slice(rest);
    out.push(b'"');
}
