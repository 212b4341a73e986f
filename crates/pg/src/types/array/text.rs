//! Text arrays as `array_in` reads and `array_out` writes them: `{1,2,NULL,"a \"b\"",""}`.

use crate::types::{ConversionError, ConversionErrorKind, IsNull, Oid, ToSql};
use bytes::{BufMut, BytesMut};

/// One element of a text array.
pub(crate) enum Element<'a, 's> {
    Null,
    /// The element's text as it stands in the input (no quotes or escapes to remove).
    Raw(&'a [u8]),
    /// The element's text after removing quotes and backslash escapes.
    Unescaped(&'s [u8]),
}

/// `array_isspace`: the whitespace `array_in` skips and `array_out` quotes.
fn is_array_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Reports malformed text for an array of type `oid` at `offset`.
fn malformed(oid: Oid, rust_type: &'static str, offset: usize, what: &str) -> ConversionError {
    ConversionError::invalid(
        oid,
        rust_type,
        format!("malformed array text at byte offset {offset}: {what}"),
    )
}

fn multidimensional(oid: Oid, rust_type: &'static str) -> ConversionError {
    ConversionError::new(
        ConversionErrorKind::WrongType,
        oid,
        rust_type,
        "the array has more than one dimension; only one-dimensional arrays can be read as a Vec",
    )
}

/// Parses a one-dimensional text array and calls `visit` with each element in order.
/// Returns the number of elements.
pub(crate) fn for_each_element<'a>(
    oid: Oid,
    rust_type: &'static str,
    raw: &'a [u8],
    mut visit: impl FnMut(Element<'a, '_>) -> Result<(), ConversionError>,
) -> Result<usize, ConversionError> {
    let bad = |offset: usize, what: &str| malformed(oid, rust_type, offset, what);
    let skip_space = |mut pos: usize| {
        while raw.get(pos).is_some_and(|&b| is_array_space(b)) {
            pos += 1;
        }
        pos
    };
    let mut pos = skip_space(0);
    let declared = if raw.get(pos) == Some(&b'[') {
        let (count, after) = dimension_decoration(oid, rust_type, raw, pos)?;
        pos = skip_space(after);
        Some(count)
    } else {
        None
    };
    if raw.get(pos) != Some(&b'{') {
        return Err(bad(pos, "expected '{'"));
    }
    pos = skip_space(pos + 1);
    let mut count = 0usize;
    let mut scratch = Vec::new();
    if raw.get(pos) == Some(&b'}') {
        pos += 1;
    } else {
        loop {
            pos = skip_space(pos);
            let (element, next) = element(oid, rust_type, raw, pos, &mut scratch)?;
            match element {
                Parsed::Null => visit(Element::Null)?,
                Parsed::Raw(start, end) => visit(Element::Raw(&raw[start..end]))?,
                Parsed::Unescaped => visit(Element::Unescaped(&scratch))?,
            }
            count += 1;
            match raw.get(next) {
                Some(b',') => pos = next + 1,
                Some(b'}') => {
                    pos = next + 1;
                    break;
                }
                _ => return Err(bad(next, "expected ',' or '}' after an element")),
            }
        }
    }
    let end = skip_space(pos);
    if end != raw.len() {
        return Err(bad(end, "unexpected text after the closing '}'"));
    }
    if let Some(declared) = declared
        && declared != count
    {
        return Err(bad(
            0,
            &format!("the dimensions declare {declared} elements but there are {count}"),
        ));
    }
    Ok(count)
}

/// Reads `[lower:upper]=` (the lower bound is dropped: a Vec starts at 0); returns the
/// declared element count and the position after `=`.
fn dimension_decoration(
    oid: Oid,
    rust_type: &'static str,
    raw: &[u8],
    start: usize,
) -> Result<(usize, usize), ConversionError> {
    let bad = |offset: usize, what: &str| malformed(oid, rust_type, offset, what);
    let close = raw[start..]
        .iter()
        .position(|&b| b == b']')
        .map(|i| start + i);
    let close = close.ok_or_else(|| bad(start, "unterminated dimension '['"))?;
    let inside =
        std::str::from_utf8(&raw[start + 1..close]).map_err(|_| bad(start, "bad dimension"))?;
    let (lower, upper) = inside.split_once(':').unwrap_or(("1", inside));
    // Bounds are int4 in PostgreSQL; widen before subtracting so nothing overflows.
    let lower: i32 = lower
        .trim()
        .parse()
        .map_err(|_| bad(start + 1, "bad lower bound"))?;
    let upper: i32 = upper
        .trim()
        .parse()
        .map_err(|_| bad(start + 1, "bad upper bound"))?;
    let count = usize::try_from(i64::from(upper) - i64::from(lower) + 1)
        .map_err(|_| bad(start, "upper bound below lower bound"))?;
    let mut pos = close + 1;
    if raw.get(pos) == Some(&b'[') {
        return Err(multidimensional(oid, rust_type));
    }
    while raw.get(pos).is_some_and(|&b| is_array_space(b)) {
        pos += 1;
    }
    if raw.get(pos) != Some(&b'=') {
        return Err(bad(pos, "expected '=' after the dimensions"));
    }
    Ok((count, pos + 1))
}

/// Where an element's text is: NULL, a range of the input, or the scratch buffer.
enum Parsed {
    Null,
    Raw(usize, usize),
    Unescaped,
}

/// Reads one element starting at `start` (whitespace skipped); returns it and the position
/// of the delimiter after it.
fn element(
    oid: Oid,
    rust_type: &'static str,
    raw: &[u8],
    start: usize,
    scratch: &mut Vec<u8>,
) -> Result<(Parsed, usize), ConversionError> {
    let bad = |offset: usize, what: &str| malformed(oid, rust_type, offset, what);
    // Fast paths: a quoted element without escapes, or a plain unquoted one.
    if raw.get(start) == Some(&b'"') {
        let close = memchr::memchr2(b'"', b'\\', &raw[start + 1..]).map(|i| start + 1 + i);
        if let Some(close) = close.filter(|&c| raw[c] == b'"') {
            let mut after = close + 1;
            while raw.get(after).is_some_and(|&b| is_array_space(b)) {
                after += 1;
            }
            if matches!(raw.get(after), Some(b',' | b'}')) {
                return Ok((Parsed::Raw(start + 1, close), after));
            }
        }
    } else {
        let stop = raw[start..]
            .iter()
            .position(|&b| matches!(b, b',' | b'}' | b'"' | b'\\' | b'{'))
            .map(|i| start + i);
        match stop.map(|s| (s, raw[s])) {
            Some((_, b'{')) => return Err(multidimensional(oid, rust_type)),
            Some((stop, b',' | b'}')) => {
                let mut end = stop;
                while end > start && is_array_space(raw[end - 1]) {
                    end -= 1;
                }
                let text = &raw[start..end];
                if text.is_empty() {
                    return Err(bad(
                        start,
                        "empty unquoted element (write \"\" for an empty string)",
                    ));
                }
                let parsed = if text.eq_ignore_ascii_case(b"NULL") {
                    Parsed::Null
                } else {
                    Parsed::Raw(start, end)
                };
                return Ok((parsed, stop));
            }
            _ => {}
        }
    }
    // General case: quoted and unquoted segments, backslash escapes, trailing space trimmed.
    scratch.clear();
    let mut significant = 0;
    let mut in_quotes = false;
    let mut pos = start;
    loop {
        let Some(&byte) = raw.get(pos) else {
            return Err(bad(
                pos,
                if in_quotes {
                    "unterminated quoted element"
                } else {
                    "missing '}'"
                },
            ));
        };
        match byte {
            b'"' => in_quotes = !in_quotes,
            b'\\' => {
                let escaped = raw
                    .get(pos + 1)
                    .ok_or_else(|| bad(pos, "backslash at the end"))?;
                scratch.push(*escaped);
                significant = scratch.len();
                pos += 1;
            }
            b',' | b'}' if !in_quotes => break,
            b'{' if !in_quotes => return Err(multidimensional(oid, rust_type)),
            _ if !in_quotes && is_array_space(byte) => scratch.push(byte),
            _ => {
                scratch.push(byte);
                significant = scratch.len();
            }
        }
        pos += 1;
    }
    scratch.truncate(significant);
    Ok((Parsed::Unescaped, pos))
}

/// Writes `items` as a text array: `{` elements `,` ... `}`, quoting as `array_out` does.
pub(crate) fn encode<T: ToSql>(
    items: &[T],
    out: &mut BytesMut,
) -> Result<(), (usize, ConversionError)> {
    out.put_u8(b'{');
    let mut scratch = BytesMut::new();
    for (index, item) in items.iter().enumerate() {
        if index > 0 {
            out.put_u8(b',');
        }
        scratch.clear();
        match item.to_sql_text(&mut scratch).map_err(|e| (index, e))? {
            IsNull::Yes => out.put_slice(b"NULL"),
            IsNull::No => put_element(&scratch, out),
        }
    }
    out.put_u8(b'}');
    Ok(())
}

/// Writes one element, quoted and escaped when `array_in` would otherwise misread it.
fn put_element(text: &[u8], out: &mut BytesMut) {
    let needs_quotes = text.is_empty()
        || text.eq_ignore_ascii_case(b"NULL")
        || text
            .iter()
            .any(|&b| matches!(b, b'"' | b'\\' | b'{' | b'}' | b',') || is_array_space(b));
    if !needs_quotes {
        out.put_slice(text);
        return;
    }
    out.reserve(text.len() + 2);
    out.put_u8(b'"');
    let mut rest = text;
    while let Some(at) = memchr::memchr2(b'"', b'\\', rest) {
        out.put_slice(&rest[..at]);
        out.put_slice(&[b'\\', rest[at]]);
        rest = &rest[at + 1..];
    }
    out.put_slice(rest);
    out.put_u8(b'"');
}
