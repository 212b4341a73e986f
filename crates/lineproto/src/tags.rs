//! The tag set: `,key=value` pairs after the measurement, sorted by key, duplicates rejected.

use crate::error::{ErrorKind, Fail};
use crate::point::Tag;
use crate::scan::{Cursor, KEY_STOP};

/// Parses the tags at the cursor (on a `,` or the space that starts the field set), appends
/// them to `tags`, sorts the appended ones by key and rejects a repeated key. Leaves the
/// cursor on the space that ends the tag set.
#[inline(always)]
pub(crate) fn parse_tags<'a>(c: &mut Cursor<'a>, tags: &mut Vec<Tag<'a>>) -> Result<(), Fail> {
    let base = tags.len();
    let section = c.pos;
    // Tags usually come sorted (InfluxDB asks writers to sort them): while they are, each key
    // is compared with the previous one only, which also finds duplicates.
    let mut sorted = true;
    while c.peek() == Some(b',') {
        c.pos += 1;
        let key_start = c.pos;
        let key = c.name(KEY_STOP)?;
        let key_end = c.pos;
        if key.is_empty() {
            return Err(c.stop_error(key_end, ErrorKind::MissingTagKey));
        }
        if c.peek() != Some(b'=') {
            let fail = c.stop_error(key_end, ErrorKind::MissingTagEquals);
            return Err(Fail::quoting(fail.kind, fail.at, key_start, key_end));
        }
        c.pos += 1;
        let value_start = c.pos;
        let value = c.name(KEY_STOP)?;
        if value.is_empty() {
            let fail = c.stop_error(value_start, ErrorKind::EmptyTagValue);
            return Err(Fail::quoting(fail.kind, fail.at, key_start, key_end));
        }
        match c.peek() {
            Some(b',' | b' ') => {}
            Some(b'=') => {
                return Err(Fail::quoting(
                    ErrorKind::UnescapedEquals,
                    c.pos,
                    key_start,
                    key_end,
                ));
            }
            _ => {
                let fail = c.stop_error(c.pos, ErrorKind::MissingFields);
                return Err(Fail::quoting(fail.kind, fail.at, section, c.pos));
            }
        }
        if sorted && let Some(previous) = tags.get(base..).and_then(<[Tag<'a>]>::last) {
            match previous.key.as_bytes().cmp(key.as_bytes()) {
                std::cmp::Ordering::Less => {}
                std::cmp::Ordering::Equal => {
                    return Err(Fail::span(ErrorKind::DuplicateTag, key_start, key_end));
                }
                std::cmp::Ordering::Greater => sorted = false,
            }
        }
        tags.push(Tag { key, value });
    }
    if !sorted && let Some(appended) = tags.get_mut(base..) {
        appended.sort_unstable_by(|a, b| a.key.as_bytes().cmp(b.key.as_bytes()));
        if let Some(pair) = appended.windows(2).find(|w| w[0].key == w[1].key) {
            return Err(locate_duplicate(c, section, &pair[0].key));
        }
    }
    Ok(())
}

/// Finds the second occurrence of `key` in the tag section starting at `section`, to point the
/// error at it. Only runs on the error path, over a section already parsed successfully.
#[cold]
#[inline(never)]
fn locate_duplicate(c: &Cursor<'_>, section: usize, key: &str) -> Fail {
    let mut walk = Cursor::new(c.text);
    walk.pos = section;
    let mut seen = false;
    while walk.peek() == Some(b',') {
        walk.pos += 1;
        let start = walk.pos;
        let Ok(name) = walk.name(KEY_STOP) else { break };
        if name == key {
            if seen {
                return Fail::span(ErrorKind::DuplicateTag, start, walk.pos);
            }
            seen = true;
        }
        walk.pos += 1;
        if walk.name(KEY_STOP).is_err() {
            break;
        }
    }
    Fail::at(ErrorKind::DuplicateTag, section)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(input: &str) -> Result<Vec<(String, String)>, (ErrorKind, usize)> {
        let mut c = Cursor::new(input);
        let mut tags = Vec::new();
        parse_tags(&mut c, &mut tags).map_err(|f| (f.kind, f.at))?;
        Ok(tags
            .into_iter()
            .map(|t| (t.key.into_owned(), t.value.into_owned()))
            .collect())
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn sorted_by_key() {
        assert_eq!(
            parse(",b=2,a=1,c=3 v=1"),
            Ok(pairs(&[("a", "1"), ("b", "2"), ("c", "3")]))
        );
        assert_eq!(parse(" v=1"), Ok(vec![]));
    }

    #[test]
    fn escapes() {
        assert_eq!(
            parse(r",a\ b=c\,d,e\=f=g\=h v=1"),
            Ok(pairs(&[("a b", "c,d"), ("e=f", "g=h")]))
        );
    }

    #[test]
    fn duplicates_are_rejected_at_the_second_key() {
        assert_eq!(parse(",a=1,a=2 v=1"), Err((ErrorKind::DuplicateTag, 5)));
        assert_eq!(parse(",b=1,a=1,b=2 v=1"), Err((ErrorKind::DuplicateTag, 9)));
        assert_eq!(parse(r",a\ =1,a=2 v=1").map(|v| v.len()), Ok(2));
    }

    #[test]
    fn errors() {
        assert_eq!(parse(", a=1 v=1"), Err((ErrorKind::MissingTagKey, 1)));
        assert_eq!(parse(",=1 v=1"), Err((ErrorKind::MissingTagKey, 1)));
        assert_eq!(parse(",a v=1"), Err((ErrorKind::MissingTagEquals, 2)));
        assert_eq!(parse(",a,b=1 v=1"), Err((ErrorKind::MissingTagEquals, 2)));
        assert_eq!(parse(",a= v=1"), Err((ErrorKind::EmptyTagValue, 3)));
        assert_eq!(parse(",a=,b=1 v=1"), Err((ErrorKind::EmptyTagValue, 3)));
        assert_eq!(parse(",a=b=c v=1"), Err((ErrorKind::UnescapedEquals, 4)));
        assert_eq!(parse(",a=1"), Err((ErrorKind::MissingFields, 4)));
        assert_eq!(parse(",a=1\n"), Err((ErrorKind::MissingFields, 4)));
        assert_eq!(parse(",a=1,"), Err((ErrorKind::MissingTagKey, 5)));
        assert_eq!(parse(",a=x\ty v=1"), Err((ErrorKind::ControlCharacter, 4)));
        // `time` is an ordinary tag key here (the write API stores it as `time_tag`).
        assert_eq!(parse(",time=1 v=1"), Ok(vec![("time".into(), "1".into())]));
        assert_eq!(parse(r",a=b\ v=1"), Err((ErrorKind::UnescapedEquals, 7)));
        assert_eq!(parse(r",a=b\ v"), Err((ErrorKind::MissingFields, 7)));
    }
}
