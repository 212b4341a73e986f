//! The measurement name: the first token of a point line, ended by a comma or a space.

use std::borrow::Cow;

use crate::error::{ErrorKind, Fail};
use crate::scan::{Cursor, MEASUREMENT_STOP};

/// Parses the measurement at the cursor (a non-blank byte that does not start a comment) and
/// leaves the cursor on the `,` or space that ends it.
#[inline(always)]
pub(crate) fn parse_measurement<'a>(c: &mut Cursor<'a>) -> Result<Cow<'a, str>, Fail> {
    let start = c.pos;
    match c.peek() {
        Some(b',') => return Err(Fail::at(ErrorKind::MissingMeasurement, start)),
        Some(b'\t') => return Err(Fail::at(ErrorKind::LeadingWhitespace, start)),
        _ => {}
    }
    let name = c.name(MEASUREMENT_STOP)?;
    match c.peek() {
        Some(b',' | b' ') if !name.is_empty() => Ok(name),
        _ => {
            let fail = c.stop_error(c.pos, ErrorKind::MissingFields);
            Err(Fail::quoting(fail.kind, fail.at, start, c.pos))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(input: &str) -> Result<(Cow<'_, str>, usize), ErrorKind> {
        let mut c = Cursor::new(input);
        parse_measurement(&mut c)
            .map(|m| (m, c.pos))
            .map_err(|f| f.kind)
    }

    #[test]
    fn ends_at_comma_or_space() {
        assert_eq!(parse("cpu,host=a v=1"), Ok((Cow::Borrowed("cpu"), 3)));
        assert_eq!(parse("cpu v=1"), Ok((Cow::Borrowed("cpu"), 3)));
    }

    #[test]
    fn escaped_comma_and_space_belong_to_the_name() {
        let (name, _) = parse(r"a\,b\ c v=1").unwrap();
        assert_eq!(name, "a,b c");
    }

    #[test]
    fn quotes_and_equals_are_ordinary() {
        let (name, _) = parse(r#""cpu"=x v=1"#).unwrap();
        assert_eq!(name, r#""cpu"=x"#);
    }

    #[test]
    fn errors() {
        assert_eq!(parse(",host=a v=1"), Err(ErrorKind::MissingMeasurement));
        assert_eq!(parse("cpu"), Err(ErrorKind::MissingFields));
        assert_eq!(parse("cpu\nnext v=1"), Err(ErrorKind::MissingFields));
        assert_eq!(parse("cpu\r\n"), Err(ErrorKind::MissingFields));
        assert_eq!(parse("c\tpu v=1"), Err(ErrorKind::ControlCharacter));
        assert_eq!(parse("cpu\r v=1"), Err(ErrorKind::ControlCharacter));
        assert_eq!(parse("\u{1}cpu v=1"), Err(ErrorKind::ControlCharacter));
    }
}
