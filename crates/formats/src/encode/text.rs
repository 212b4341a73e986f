//! PostgreSQL's COPY text format exactly as `COPY ... TO` writes it (CopyAttributeOutText with the
//! default options): tab between values, `\N` for NULL, a backslash before `\`, and `\b` `\f` `\n`
//! `\r` `\t` `\v` for those control characters; other bytes as they are.

use crate::swar;

/// Writes one row and its `\n`.
#[inline]
pub(super) fn write_row<'a, I>(out: &mut Vec<u8>, fields: I)
where
    I: IntoIterator<Item = Option<&'a [u8]>>,
{
    for (i, field) in fields.into_iter().enumerate() {
        if i > 0 {
            out.push(b'\t');
        }
        match field {
            Some(value) => write_value(out, value),
            None => out.extend_from_slice(b"\\N"),
        }
    }
    out.push(b'\n');
}

/// Writes one non-NULL value (or a header name) in COPY's text format.
#[inline]
pub fn write_value(out: &mut Vec<u8>, value: &[u8]) {
    escape(value, |piece| out.extend_from_slice(piece));
}

/// One non-NULL value in COPY's text format, for any byte sink (a `Vec`, a `BytesMut`): calls
/// `emit` with each run of bytes kept as they are and with each escape sequence, in order.
#[inline(always)]
pub fn escape(value: &[u8], mut emit: impl FnMut(&[u8])) {
    let mut rest = value;
    while let Some(at) = swar::find_text_special(rest) {
        let (run, tail) = rest.split_at(at);
        let Some((&byte, after)) = tail.split_first() else {
            break;
        };
        let escaped = match byte {
            b'\\' => b'\\',
            0x08 => b'b',
            0x0c => b'f',
            b'\n' => b'n',
            b'\r' => b'r',
            b'\t' => b't',
            0x0b => b'v',
            // Other control characters go out as they are, with the run before them.
            _ => {
                emit(rest.get(..=at).unwrap_or_default());
                rest = after;
                continue;
            }
        };
        emit(run);
        emit(&[b'\\', escaped]);
        rest = after;
    }
    emit(rest);
}
