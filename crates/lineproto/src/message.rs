//! The words of an error: what was expected, and what was found instead.

use crate::error::{ErrorKind, Fail};
use crate::scan::{CTRL, class};
use crate::timestamp::{MAX_TIME_NS, MIN_TIME_NS, Precision};

/// The limits and precision a message may mention.
pub(crate) struct MessageContext {
    pub precision: Precision,
    pub max_string_len: usize,
    pub max_key_len: usize,
}

/// Describes the byte at `at`: "end of input", "end of line", "a space", "control character
/// U+0009" or the character in quotes.
fn found(text: &str, at: usize) -> String {
    let bytes = text.as_bytes();
    match bytes.get(at) {
        None => "end of input".to_owned(),
        Some(b'\n') => "end of line".to_owned(),
        Some(b'\r') if bytes.get(at + 1) == Some(&b'\n') => "end of line".to_owned(),
        Some(b' ') => "a space".to_owned(),
        Some(&b) if class(b) & CTRL != 0 => format!("control character U+{b:04X}"),
        Some(_) => match text.get(at..).and_then(|rest| rest.chars().next()) {
            Some(ch) => format!("'{ch}'"),
            None => "an invalid character".to_owned(),
        },
    }
}

/// The quoted token, shortened when long so that a message stays readable.
fn quote(text: &str, start: usize, end: usize) -> String {
    const MAX_CHARS: usize = 64;
    let token = text.get(start..end).unwrap_or_default();
    if token.chars().count() <= MAX_CHARS {
        format!("{token:?}")
    } else {
        let short: String = token.chars().take(MAX_CHARS).collect();
        format!("{:?}…", short)
    }
}

/// The message for a failure: what was expected, what was found.
pub(crate) fn message(fail: &Fail, text: &str, ctx: &MessageContext) -> String {
    let found = found(text, fail.at);
    let q = quote(text, fail.quote_start, fail.quote_end);
    match fail.kind {
        ErrorKind::InvalidUtf8 => "invalid UTF-8: line protocol must be UTF-8 text".to_owned(),
        ErrorKind::ControlCharacter => format!(
            "unexpected {found}: control characters are allowed only inside string field values"
        ),
        ErrorKind::MissingMeasurement => {
            format!("expected a measurement name at the start of the line, found {found}")
        }
        ErrorKind::LeadingWhitespace => {
            "a tab before the measurement: a measurement cannot start with whitespace".to_owned()
        }
        ErrorKind::MissingTagKey => format!("expected a tag key after ',', found {found}"),
        ErrorKind::MissingTagEquals => format!("expected '=' after tag key {q}, found {found}"),
        ErrorKind::EmptyTagValue => format!(
            "expected a value for tag {q}, found {found} (tag values cannot be empty: leave the tag out)"
        ),
        ErrorKind::UnescapedEquals => {
            format!(r"unexpected '=' in the value of tag {q}: write it as '\='")
        }
        ErrorKind::MissingFields => {
            format!("expected a space and a field set (key=value) after {q}, found {found}")
        }
        ErrorKind::MissingFieldKey => format!("expected a field key, found {found}"),
        ErrorKind::MissingFieldEquals => format!("expected '=' after field key {q}, found {found}"),
        ErrorKind::MissingFieldValue => format!("expected a value for field {q}, found {found}"),
        ErrorKind::InvalidFieldValue => format!(
            "invalid field value {q}: expected a float (1.5), an integer (1i), an unsigned integer (1u), a \"string\" or a boolean (true, false)"
        ),
        ErrorKind::InvalidFloat => format!(
            "invalid float {q}: expected digits with an optional '-', decimal point and exponent, such as -1.5e3"
        ),
        ErrorKind::NanOrInfinity => {
            format!("unsupported float {q}: NaN and infinity are not accepted")
        }
        ErrorKind::FloatOutOfRange => format!("float {q} is out of range for a 64-bit float"),
        ErrorKind::InvalidInteger => format!(
            "invalid integer {q}: expected an optional '-' and digits followed by 'i', such as -42i"
        ),
        ErrorKind::IntegerOutOfRange => format!(
            "integer {q} is out of range: expected -9223372036854775808i to 9223372036854775807i"
        ),
        ErrorKind::InvalidUnsigned => {
            format!("invalid unsigned integer {q}: expected digits followed by 'u', such as 42u")
        }
        ErrorKind::UnsignedOutOfRange => {
            format!("unsigned integer {q} is out of range: expected 0u to 18446744073709551615u")
        }
        ErrorKind::InvalidBoolean => format!(
            "invalid boolean {q}: expected t, T, true, True, TRUE, f, F, false, False or FALSE"
        ),
        ErrorKind::UnterminatedString => {
            "string field value has no closing '\"': expected '\"' before the end of input"
                .to_owned()
        }
        ErrorKind::StringTooLong => format!(
            "string field value is longer than the limit of {} bytes",
            ctx.max_string_len
        ),
        ErrorKind::UnexpectedAfterValue => format!(
            "expected ',', a space or the end of the line after the value of field {q}, found {found}"
        ),
        ErrorKind::InvalidTimestamp => format!(
            "invalid timestamp {q}: expected an integer count of {} since the Unix epoch",
            unit_name(ctx.precision)
        ),
        ErrorKind::TimestampOutOfRange => format!(
            "timestamp {q} ({}) is out of range: expected {MIN_TIME_NS} to {MAX_TIME_NS} once in nanoseconds",
            unit_name(ctx.precision)
        ),
        ErrorKind::TrailingCharacters => {
            format!("expected the end of the line after the timestamp, found {found}")
        }
        ErrorKind::DuplicateTag => {
            format!("duplicate tag key {q}: a tag key may appear only once per line")
        }
        ErrorKind::KeyTooLong => format!(
            "series key too long: the measurement, tag set and a field key take {} bytes, the limit is {}",
            fail.quote_end.saturating_sub(fail.quote_start),
            ctx.max_key_len
        ),
    }
}

fn unit_name(precision: Precision) -> &'static str {
    match precision {
        Precision::Nanoseconds => "nanoseconds",
        Precision::Microseconds => "microseconds",
        Precision::Milliseconds => "milliseconds",
        Precision::Seconds => "seconds",
    }
}
