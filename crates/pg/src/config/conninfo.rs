//! The `key=value` conninfo syntax: parsing (with libpq's quoting rules) and quoting for rendering.

use super::error::{ConfigError, ErrorKind, Origin};
use super::keywords::{Keyword, RawSettings};

/// Whitespace as C's `isspace` sees it in the C locale, which is what libpq uses.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

/// Parses `keyword=value` pairs into `out`. Later occurrences of a keyword replace earlier ones.
///
/// Rules (as libpq's `conninfo_parse`): pairs are separated by whitespace; whitespace around `=`
/// is allowed; a value is either single-quoted (`\'` and `\\` escape inside; any `\x` is `x`) or
/// runs to the next whitespace (where `\` also escapes the next character, so `\ ` keeps a space).
pub(crate) fn parse(s: &str, out: &mut RawSettings) -> Result<(), ConfigError> {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes.get(i).copied().is_some_and(is_space) {
            i += 1;
            continue;
        }
        let name_start = i;
        while i < bytes.len() && !matches!(bytes.get(i), Some(b'=')) && !is_space_at(bytes, i) {
            i += 1;
        }
        let name = s.get(name_start..i).unwrap_or_default();
        while is_space_at(bytes, i) {
            i += 1;
        }
        if bytes.get(i) != Some(&b'=') {
            return Err(ConfigError::new(
                ErrorKind::Syntax,
                Origin::Text(i),
                format!("missing \"=\" after \"{name}\" in connection info string"),
            )
            .with_keyword(name.to_owned())
            .with_hint(
                "write keyword=value; quote values containing spaces as keyword='a value'",
            ));
        }
        i += 1;
        while is_space_at(bytes, i) {
            i += 1;
        }
        let value_start = i;
        let (value, next) = if bytes.get(i) == Some(&b'\'') {
            read_quoted(s, i + 1).ok_or_else(|| {
                ConfigError::new(
                    ErrorKind::Syntax,
                    Origin::Text(value_start),
                    "unterminated quoted string in connection info string",
                )
                .with_keyword(name.to_owned())
                .with_hint("close the value with ' (write \\' for a quote inside it)")
            })?
        } else {
            read_bare(s, i)
        };
        i = next;
        let keyword = Keyword::lookup(name, Origin::Text(name_start), |n| {
            format!("invalid connection option \"{n}\"")
        })?;
        out.set(keyword, value, Origin::Text(value_start));
    }
    Ok(())
}

fn is_space_at(bytes: &[u8], i: usize) -> bool {
    bytes.get(i).copied().is_some_and(is_space)
}

/// Reads a quoted value whose opening quote is just before `start`. Returns the value and the
/// offset after the closing quote, or `None` when the string ends first.
fn read_quoted(s: &str, start: usize) -> Option<(String, usize)> {
    let mut value = String::new();
    let mut chars = s.get(start..)?.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '\\' => {
                if let Some((_, escaped)) = chars.next() {
                    value.push(escaped);
                }
            }
            '\'' => return Some((value, start + at + 1)),
            other => value.push(other),
        }
    }
    None
}

/// Reads an unquoted value starting at `start`, up to and including the next whitespace.
fn read_bare(s: &str, start: usize) -> (String, usize) {
    let mut value = String::new();
    let rest = s.get(start..).unwrap_or_default();
    let mut chars = rest.char_indices();
    while let Some((at, c)) = chars.next() {
        if c.is_ascii() && is_space(c as u8) {
            return (value, start + at + 1);
        }
        if c == '\\' {
            if let Some((_, escaped)) = chars.next() {
                value.push(escaped);
            }
        } else {
            value.push(c);
        }
    }
    (value, s.len())
}

/// Appends `keyword='value'` to `out`, quoting so that [`parse`] reads back exactly `value`.
pub(crate) fn push_pair(out: &mut String, keyword: &str, value: &str) {
    if !out.is_empty() {
        out.push(' ');
    }
    out.push_str(keyword);
    out.push_str("='");
    for c in value.chars() {
        if c == '\'' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('\'');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(s: &str) -> RawSettings {
        let mut raw = RawSettings::default();
        parse(s, &mut raw).unwrap();
        raw
    }

    fn text(raw: &RawSettings, k: Keyword) -> Option<&str> {
        raw.get(k).map(|v| v.text.as_str())
    }

    #[test]
    fn plain_pairs_and_spaces_around_equals() {
        let raw = parsed("  host=localhost port = 5433\tdbname =\n'my db'  ");
        assert_eq!(text(&raw, Keyword::Host), Some("localhost"));
        assert_eq!(text(&raw, Keyword::Port), Some("5433"));
        assert_eq!(text(&raw, Keyword::Dbname), Some("my db"));
        assert_eq!(
            raw.get(Keyword::Port).map(|v| v.origin),
            Some(Origin::Text(24))
        );
    }

    #[test]
    fn quoted_values_unescape_quote_and_backslash() {
        let raw = parsed(r"password='it\'s a \\ secret' user=a\ b options='' ");
        assert_eq!(text(&raw, Keyword::Password), Some(r"it's a \ secret"));
        assert_eq!(text(&raw, Keyword::User), Some("a b"));
        assert_eq!(text(&raw, Keyword::Options), Some(""));
    }

    #[test]
    fn quoted_value_needs_no_space_before_next_pair() {
        let raw = parsed("user='a'dbname=b");
        assert_eq!(text(&raw, Keyword::User), Some("a"));
        assert_eq!(text(&raw, Keyword::Dbname), Some("b"));
    }

    #[test]
    fn empty_unquoted_value_at_end_and_before_next() {
        let raw = parsed("host= port=1 user=");
        // As libpq: after "host=" the blanks are skipped, so "port=1" becomes host's value.
        assert_eq!(text(&raw, Keyword::Host), Some("port=1"));
        assert_eq!(text(&raw, Keyword::User), Some(""));
    }

    #[test]
    fn last_occurrence_wins() {
        let raw = parsed("port=1 port=2");
        assert_eq!(text(&raw, Keyword::Port), Some("2"));
    }

    #[test]
    fn unicode_values_survive() {
        let raw = parsed("application_name=héllo\\ wörld dbname='日本'");
        assert_eq!(text(&raw, Keyword::ApplicationName), Some("héllo wörld"));
        assert_eq!(text(&raw, Keyword::Dbname), Some("日本"));
    }

    #[test]
    fn missing_equals_is_an_error_naming_the_keyword() {
        let mut raw = RawSettings::default();
        let e = parse("host localhost", &mut raw).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Syntax);
        assert!(
            e.to_string()
                .starts_with("missing \"=\" after \"host\" in connection info string (at byte 5"),
            "{e}"
        );
        let e = parse("dbname=x host", &mut raw).unwrap_err();
        assert_eq!(e.position(), Some(13));
    }

    #[test]
    fn unterminated_quote_is_an_error() {
        let mut raw = RawSettings::default();
        let e = parse("user='abc\\'", &mut raw).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Syntax);
        assert_eq!(e.position(), Some(5));
        assert!(
            e.to_string().starts_with("unterminated quoted string"),
            "{e}"
        );
    }

    #[test]
    fn unknown_keyword_is_named_as_libpq_does() {
        let mut raw = RawSettings::default();
        let e = parse("host=a foo=bar", &mut raw).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::UnknownOption);
        assert_eq!(e.keyword(), Some("foo"));
        assert_eq!(
            e.to_string(),
            "invalid connection option \"foo\" (at byte 7 of the connection string)"
        );
        let e = parse("=x", &mut raw).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid connection option \"\" (at byte 0 of the connection string)"
        );
    }

    #[test]
    fn rendering_quotes_what_parsing_unquotes() {
        let mut out = String::new();
        push_pair(&mut out, "password", r"a'b\c d");
        push_pair(&mut out, "user", "");
        assert_eq!(out, r"password='a\'b\\c d' user=''");
        let raw = parsed(&out);
        assert_eq!(text(&raw, Keyword::Password), Some(r"a'b\c d"));
        assert_eq!(text(&raw, Keyword::User), Some(""));
    }
}
