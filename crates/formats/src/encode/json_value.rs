//! JSON values from PostgreSQL text output, one writer per type family: strings (escaped, with
//! invalid UTF-8 replaced by U+FFFD), numbers (copied when the text is a JSON number, else a
//! string), booleans, and embedded json/jsonb.

use crate::kind::Scalar;
use crate::swar;

/// The UTF-8 bytes of U+FFFD REPLACEMENT CHARACTER.
const REPLACEMENT: &[u8] = "\u{FFFD}".as_bytes();

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Writes the value of a field of scalar kind `scalar`, given as its text output.
#[inline]
pub(crate) fn write_scalar(out: &mut Vec<u8>, scalar: Scalar, text: &[u8]) {
    match scalar {
        Scalar::String => write_string(out, text),
        Scalar::Number => write_number(out, text),
        Scalar::Bool => write_bool(out, text),
        Scalar::Json => write_embedded_json(out, text),
        Scalar::Timestamp => write_timestamp(out, text),
    }
}

/// A timestamp's text output (DateStyle ISO) as `to_json` writes it: `2020-01-01 10:00:00+00`
/// becomes `"2020-01-01T10:00:00+00:00"`; `infinity` and other forms stay as they are.
pub fn write_timestamp(out: &mut Vec<u8>, text: &[u8]) {
    let Some(space) = text.iter().position(|&b| b == b' ') else {
        return write_string(out, text);
    };
    let (date, time) = text.split_at(space);
    let time = time.get(1..).unwrap_or_default();
    if date.len() < 10 || !time.first().is_some_and(u8::is_ascii_digit) {
        return write_string(out, text);
    }
    out.push(b'"');
    write_string_body(out, date);
    out.push(b'T');
    // The offset starts at the last sign after the seconds; whole hours get ":00".
    let (clock, era) = match time.iter().position(|&b| b == b' ') {
        Some(at) => time.split_at(at),
        None => (time, &[][..]),
    };
    let sign = clock.iter().rposition(|&b| b == b'+' || b == b'-');
    match sign {
        Some(at) if clock.len() - at == 3 => {
            write_string_body(out, clock);
            out.extend_from_slice(b":00");
        }
        _ => write_string_body(out, clock),
    }
    write_string_body(out, era);
    out.push(b'"');
}

/// Writes `text` as a JSON string: quotes, escapes for `"`, `\` and control characters, and
/// U+FFFD for each invalid UTF-8 sequence.
#[inline]
pub fn write_string(out: &mut Vec<u8>, text: &[u8]) {
    out.reserve(text.len() + 2);
    out.push(b'"');
    write_string_body(out, text);
    out.push(b'"');
}

/// The inside of a JSON string (no quotes).
pub(crate) fn write_string_body(out: &mut Vec<u8>, mut text: &[u8]) {
    // Until the rest of `text` is known to be valid UTF-8, non-ASCII bytes stop the scan too.
    let mut valid_utf8 = false;
    loop {
        let found = if valid_utf8 {
            swar::find_json_escape(text)
        } else {
            swar::find_json_special(text)
        };
        let Some(at) = found else {
            out.extend_from_slice(text);
            return;
        };
        let (run, rest) = text.split_at(at);
        out.extend_from_slice(run);
        let Some((&byte, after)) = rest.split_first() else {
            return;
        };
        if byte >= 0x80 {
            match std::str::from_utf8(rest) {
                Ok(_) => {
                    valid_utf8 = true;
                    text = rest;
                }
                Err(e) => {
                    let (good, bad) = rest.split_at(e.valid_up_to());
                    write_string_body_valid(out, good);
                    out.extend_from_slice(REPLACEMENT);
                    let skip = e.error_len().unwrap_or(bad.len());
                    text = bad.get(skip..).unwrap_or_default();
                }
            }
            continue;
        }
        write_escape(out, byte);
        text = after;
    }
}

/// The inside of a JSON string for text known to be valid UTF-8.
#[inline]
fn write_string_body_valid(out: &mut Vec<u8>, text: &[u8]) {
    escape_valid(text, |piece| out.extend_from_slice(piece));
}

/// Writes `text` as a JSON string, quotes included; valid UTF-8 is known, so nothing is
/// checked or replaced.
#[inline]
pub fn write_str(out: &mut Vec<u8>, text: &str) {
    out.reserve(text.len() + 2);
    out.push(b'"');
    escape_valid(text.as_bytes(), |piece| out.extend_from_slice(piece));
    out.push(b'"');
}

/// The inside of a JSON string for `text`, for any byte sink (a `Vec`, a `BytesMut`): calls
/// `emit` with each run of bytes that needs no escape and with each escape sequence, in order.
/// Escapes `"`, `\` and the control characters, as [`write_str`] does.
#[inline]
pub fn escape_str(text: &str, emit: impl FnMut(&[u8])) {
    escape_valid(text.as_bytes(), emit);
}

/// [`escape_str`] for bytes known to be valid UTF-8.
#[inline(always)]
fn escape_valid(mut text: &[u8], mut emit: impl FnMut(&[u8])) {
    while let Some(at) = swar::find_json_escape(text) {
        let (run, rest) = text.split_at(at);
        emit(run);
        let Some((&byte, after)) = rest.split_first() else {
            return;
        };
        escape_byte(byte, &mut emit);
        text = after;
    }
    emit(text);
}

/// Writes the JSON escape of `"`, `\` or a control character.
#[inline]
fn write_escape(out: &mut Vec<u8>, byte: u8) {
    escape_byte(byte, |sequence| out.extend_from_slice(sequence));
}

/// Emits the JSON escape of `"`, `\` or a control character: the short forms (`\n`, `\t`,
/// ...) where JSON has one, else `\u00XX`. Each branch emits a fixed-size array, so that an
/// inlined `emit` copies a constant number of bytes.
#[inline(always)]
fn escape_byte(byte: u8, mut emit: impl FnMut(&[u8])) {
    let short = match byte {
        b'"' => b'"',
        b'\\' => b'\\',
        b'\n' => b'n',
        b'\r' => b'r',
        b'\t' => b't',
        0x08 => b'b',
        0x0c => b'f',
        _ => {
            emit(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0xf)],
            ]);
            return;
        }
    };
    emit(&[b'\\', short]);
}

/// Whether `text` is a number by JSON's grammar:
/// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
pub fn is_json_number(text: &[u8]) -> bool {
    let mut i = 0;
    let at = |i: usize| text.get(i).copied();
    if at(i) == Some(b'-') {
        i += 1;
    }
    match at(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            i += 1;
            while matches!(at(i), Some(b'0'..=b'9')) {
                i += 1;
            }
        }
        _ => return false,
    }
    if at(i) == Some(b'.') {
        i += 1;
        if !matches!(at(i), Some(b'0'..=b'9')) {
            return false;
        }
        while matches!(at(i), Some(b'0'..=b'9')) {
            i += 1;
        }
    }
    if matches!(at(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(at(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !matches!(at(i), Some(b'0'..=b'9')) {
            return false;
        }
        while matches!(at(i), Some(b'0'..=b'9')) {
            i += 1;
        }
    }
    i == text.len()
}

/// A number's text as a JSON number when it is one (PostgreSQL prints integers, floats and
/// numeric in JSON's grammar), else as a string (`NaN`, `Infinity`, `-Infinity`).
#[inline]
pub(crate) fn write_number(out: &mut Vec<u8>, text: &[u8]) {
    if is_json_number(text) {
        out.extend_from_slice(text);
    } else {
        write_string(out, text);
    }
}

/// `t` and `f` as `true` and `false`; any other text as a string.
#[inline]
pub(crate) fn write_bool(out: &mut Vec<u8>, text: &[u8]) {
    match text {
        b"t" => out.extend_from_slice(b"true"),
        b"f" => out.extend_from_slice(b"false"),
        _ => write_string(out, text),
    }
}

/// json/jsonb text as is. PostgreSQL validated it on input, so a CR or LF in it can only be
/// whitespace between tokens: each becomes a space, keeping one row per line. Invalid UTF-8 (only
/// possible inside strings, from a SQL_ASCII database) becomes U+FFFD.
pub(crate) fn write_embedded_json(out: &mut Vec<u8>, text: &[u8]) {
    if text.is_empty() {
        // Not valid json text; never produced by the server, but keep the output valid.
        out.extend_from_slice(b"null");
        return;
    }
    let start = out.len();
    match std::str::from_utf8(text) {
        Ok(_) => out.extend_from_slice(text),
        Err(_) => {
            for chunk in text.utf8_chunks() {
                out.extend_from_slice(chunk.valid().as_bytes());
                if !chunk.invalid().is_empty() {
                    out.extend_from_slice(REPLACEMENT);
                }
            }
        }
    }
    let Some(written) = out.get_mut(start..) else {
        return;
    };
    let mut from = 0;
    while let Some(at) = memchr::memchr2(b'\n', b'\r', written.get(from..).unwrap_or_default()) {
        if let Some(b) = written.get_mut(from + at) {
            *b = b' ';
        }
        from += at + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string(text: &[u8]) -> String {
        let mut out = Vec::new();
        write_string(&mut out, text);
        String::from_utf8(out).expect("valid UTF-8")
    }

    #[test]
    fn strings_escape_what_json_requires() {
        assert_eq!(string(b"plain"), r#""plain""#);
        assert_eq!(string(b"a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(
            string(b"\n\r\t\x08\x0c\x01\x1f\x7f"),
            "\"\\n\\r\\t\\b\\f\\u0001\\u001f\x7f\""
        );
        assert_eq!(string("héllo €𝄞".as_bytes()), "\"héllo €𝄞\"");
        assert_eq!(string("é\"".as_bytes()), "\"é\\\"\"");
    }

    #[test]
    fn invalid_utf8_becomes_replacement_characters() {
        assert_eq!(string(b"a\xffb"), "\"a\u{FFFD}b\"");
        assert_eq!(string(b"\xc3"), "\"\u{FFFD}\"");
        assert_eq!(
            string(
                "é\n"
                    .as_bytes()
                    .iter()
                    .chain(b"\xe2\x82")
                    .copied()
                    .collect::<Vec<_>>()
                    .as_slice()
            ),
            "\"é\\n\u{FFFD}\""
        );
        assert_eq!(string(b"\xed\xa0\x80x"), "\"\u{FFFD}\u{FFFD}\u{FFFD}x\"");
    }

    #[test]
    fn numbers() {
        for ok in [
            "0",
            "-0",
            "1",
            "-12",
            "1.5",
            "1e+308",
            "1.2345e-05",
            "12345678901234567890.000001",
        ] {
            assert!(is_json_number(ok.as_bytes()), "{ok}");
        }
        for bad in [
            "",
            "-",
            "NaN",
            "Infinity",
            "-Infinity",
            "01",
            "1.",
            ".5",
            "1e",
            "+1",
            "1 ",
            "0x1",
        ] {
            assert!(!is_json_number(bad.as_bytes()), "{bad}");
        }
        let mut out = Vec::new();
        write_number(&mut out, b"NaN");
        out.push(b' ');
        write_number(&mut out, b"-1.5e-7");
        assert_eq!(out, b"\"NaN\" -1.5e-7");
    }

    #[test]
    fn embedded_json_stays_on_one_line() {
        let mut out = Vec::new();
        write_embedded_json(&mut out, b"{\"a\":\r\n 1}");
        assert_eq!(out, b"{\"a\":   1}");
        out.clear();
        write_embedded_json(&mut out, b"[\"\xff\"]");
        assert_eq!(out, "[\"\u{FFFD}\"]".as_bytes());
    }
}

#[cfg(test)]
mod timestamp_tests {
    use super::*;

    fn ts(text: &str) -> String {
        let mut out = Vec::new();
        write_timestamp(&mut out, text.as_bytes());
        String::from_utf8(out).unwrap_or_default()
    }

    /// Each case as `to_json` writes it (PostgreSQL 15, seen with psql).
    #[test]
    fn like_to_json() {
        assert_eq!(ts("2020-01-01 10:00:00"), r#""2020-01-01T10:00:00""#);
        assert_eq!(
            ts("2020-01-01 10:00:00+00"),
            r#""2020-01-01T10:00:00+00:00""#
        );
        assert_eq!(
            ts("2020-01-01 10:00:00.5+05:30"),
            r#""2020-01-01T10:00:00.5+05:30""#
        );
        assert_eq!(
            ts("2020-01-01 10:00:00-03:30"),
            r#""2020-01-01T10:00:00-03:30""#
        );
        assert_eq!(
            ts("1900-01-01 10:00:00+00:19:32"),
            r#""1900-01-01T10:00:00+00:19:32""#
        );
        assert_eq!(ts("0044-03-15 00:00:00 BC"), r#""0044-03-15T00:00:00 BC""#);
        assert_eq!(ts("infinity"), r#""infinity""#);
        assert_eq!(ts("-infinity"), r#""-infinity""#);
        assert_eq!(
            ts("12345-01-01 00:00:00-07"),
            r#""12345-01-01T00:00:00-07:00""#
        );
    }
}
