//! Matching a request path against an endpoint's `path`, and percent-decoding captures and query
//! parameters.

use crate::view::model::PathSegment;

/// The segments of the part of a URL path after a view's prefix: an empty remainder (`""` or
/// `/`) has none; one trailing `/` is ignored (`/1/` is `/1`).
pub fn segments(rest: &str) -> impl Iterator<Item = &str> {
    let trimmed = rest.strip_prefix('/').unwrap_or(rest);
    let trimmed = trimmed.strip_suffix('/').unwrap_or(trimmed);
    let empty = trimmed.is_empty();
    trimmed.split('/').filter(move |_| !empty)
}

/// Why a path could not be matched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// A segment that is not UTF-8 once percent-decoded.
    #[error("the URL path segment {0:?} is not UTF-8 once percent-decoded")]
    NotUtf8(String),
}

/// Matches `segments` against `pattern`: on success `captures[n - 1]` holds capture `$n`
/// (percent-decoded; captures the path does not give are empty). `captures` is reused.
pub fn match_path(
    pattern: &[PathSegment],
    segments: &[&str],
    captures: &mut Vec<String>,
) -> Result<bool, PathError> {
    if pattern.len() != segments.len() {
        return Ok(false);
    }
    captures.clear();
    for (expected, &segment) in pattern.iter().zip(segments) {
        match expected {
            PathSegment::Literal(literal) => {
                let decoded = percent_decode(segment, false)
                    .map_err(|NotUtf8| PathError::NotUtf8(segment.to_owned()))?;
                if decoded != *literal {
                    return Ok(false);
                }
            }
            PathSegment::Capture(n) => {
                let index = usize::from(*n) - 1;
                if captures.len() <= index {
                    captures.resize(index + 1, String::new());
                }
                captures[index] = percent_decode(segment, false)
                    .map_err(|NotUtf8| PathError::NotUtf8(segment.to_owned()))?;
            }
        }
    }
    Ok(true)
}

/// Decodes `%XX` escapes (and `+` as a space when `plus_is_space`, for query strings); a `%` not
/// followed by two hex digits stays as it is. Fails when the result is not UTF-8.
pub fn percent_decode(text: &str, plus_is_space: bool) -> Result<String, NotUtf8> {
    if !text.contains(['%', '+']) {
        return Ok(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        match byte {
            b'%' => {
                let hex = |at: usize| bytes.get(at).and_then(|b| (*b as char).to_digit(16));
                match (hex(i + 1), hex(i + 2)) {
                    (Some(high), Some(low)) => {
                        out.push((high * 16 + low) as u8);
                        i += 3;
                        continue;
                    }
                    _ => out.push(b'%'),
                }
            }
            b'+' if plus_is_space => out.push(b' '),
            other => out.push(other),
        }
        i += 1;
    }
    String::from_utf8(out).map_err(|_| NotUtf8)
}

/// Percent-decoded text that is not UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("percent-decoded text is not UTF-8")]
pub struct NotUtf8;

/// The value of query parameter `name` (first occurrence), percent-decoded; `None` when absent
/// or not UTF-8.
pub fn query_parameter(query: Option<&str>, name: &str) -> Option<String> {
    query?.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let key = percent_decode(key, true).ok()?;
        (key == name).then(|| percent_decode(value, true).ok())?
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(rest: &str) -> Vec<&str> {
        segments(rest).collect()
    }

    #[test]
    fn empty_remainders_have_no_segments() {
        assert!(split("").is_empty());
        assert!(split("/").is_empty());
        assert_eq!(split("/1"), vec!["1"]);
        assert_eq!(split("/1/"), vec!["1"]);
        assert_eq!(split("/1/tags"), vec!["1", "tags"]);
        assert_eq!(split("/1//tags"), vec!["1", "", "tags"]);
    }

    #[test]
    fn captures_are_decoded_and_literals_compared() {
        let pattern = vec![
            PathSegment::Capture(2),
            PathSegment::Literal("tags".into()),
            PathSegment::Capture(1),
        ];
        let mut captures = Vec::new();
        assert_eq!(
            match_path(&pattern, &["a%20b", "tags", "x%2Fy"], &mut captures),
            Ok(true)
        );
        assert_eq!(captures, vec!["x/y".to_owned(), "a b".to_owned()]);
        assert_eq!(
            match_path(&pattern, &["a", "tag", "b"], &mut captures),
            Ok(false)
        );
        assert_eq!(
            match_path(&pattern, &["a", "tags"], &mut captures),
            Ok(false)
        );
        assert!(match_path(&pattern, &["%ff", "tags", "b"], &mut captures).is_err());
    }

    #[test]
    fn percent_decoding_keeps_stray_percents() {
        assert_eq!(percent_decode("100%", false), Ok("100%".to_owned()));
        assert_eq!(percent_decode("%4", false), Ok("%4".to_owned()));
        assert_eq!(percent_decode("%C3%A9+x", false), Ok("é+x".to_owned()));
        assert_eq!(percent_decode("%C3%A9+x", true), Ok("é x".to_owned()));
    }

    #[test]
    fn query_parameters() {
        assert_eq!(
            query_parameter(Some("a=1&name=J%C3%B6rg+X&b"), "name"),
            Some("Jörg X".to_owned())
        );
        assert_eq!(query_parameter(Some("b"), "b"), Some(String::new()));
        assert_eq!(query_parameter(Some("a=1"), "name"), None);
        assert_eq!(query_parameter(None, "name"), None);
    }
}
