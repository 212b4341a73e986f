//! A JSON array of objects (`[{...}, {...}]`, a REST bulk body) decoded as it arrives: each
//! element, once complete, becomes a COPY text row through the JSON Lines object decoder. Errors
//! name the element (1-based, as the "line") and the column within it.

use super::error::{DecodeError, DecodeErrorKind};
use super::jsonl::{JsonlDecoder, KeyRules};
use crate::kind::ColumnKind;

/// Where the scan is in the array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Before the opening `[`.
    Start,
    /// After `[` or `,`: an element (or, right after `[`, the closing `]`).
    Element { first: bool },
    /// After an element: `,` or `]`.
    Separator,
    /// After the closing `]`: only whitespace may follow.
    Done,
}

/// Decodes the objects of a JSON array into COPY text rows of the given columns.
#[derive(Clone, Debug)]
pub struct JsonArrayDecoder {
    objects: JsonlDecoder,
    state: State,
    /// Elements decoded so far.
    elements: u64,
    /// How far the scan of an element that has not ended yet got.
    scan: ObjectScan,
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

impl JsonArrayDecoder {
    /// A decoder for objects with keys `names` whose columns are of `kinds`.
    pub fn new(names: &[String], kinds: Vec<ColumnKind>) -> JsonArrayDecoder {
        JsonArrayDecoder {
            objects: JsonlDecoder::new(names, kinds),
            state: State::Start,
            elements: 0,
            scan: ObjectScan::default(),
        }
    }

    /// The same decoder with other rules for keys.
    pub fn with_key_rules(mut self, rules: KeyRules) -> JsonArrayDecoder {
        self.objects = self.objects.with_key_rules(rules);
        self
    }

    /// The objects decoded so far.
    pub fn rows(&self) -> u64 {
        self.elements
    }

    /// Decodes the complete elements of `input`, appending COPY rows to `out`; returns the bytes
    /// consumed (the caller keeps the rest and appends more). With `eof`, the array must end.
    pub fn decode(
        &mut self,
        input: &[u8],
        eof: bool,
        out: &mut Vec<u8>,
    ) -> Result<usize, DecodeError> {
        let mut pos = 0;
        loop {
            while input.get(pos).copied().is_some_and(is_ws) {
                pos += 1;
            }
            let Some(&byte) = input.get(pos) else {
                if eof && self.state != State::Done {
                    return Err(self.error(DecodeErrorKind::InvalidJson, "the array is not closed"));
                }
                return Ok(pos);
            };
            match (self.state, byte) {
                (State::Start, b'[') => {
                    pos += 1;
                    self.state = State::Element { first: true };
                }
                (State::Element { first: true }, b']') | (State::Separator, b']') => {
                    pos += 1;
                    self.state = State::Done;
                }
                (State::Separator, b',') => {
                    pos += 1;
                    self.state = State::Element { first: false };
                }
                (State::Element { .. }, b'{') => {
                    let rest = input.get(pos..).unwrap_or_default();
                    let Some(length) = self.scan.length(rest) else {
                        if eof {
                            return Err(self
                                .error(DecodeErrorKind::InvalidJson, "the object is not closed"));
                        }
                        return Ok(pos);
                    };
                    let number = self.elements + 1;
                    let object = rest.get(..length).unwrap_or_default();
                    self.objects.decode_one(object, number, out)?;
                    self.elements = number;
                    pos += length;
                    self.state = State::Separator;
                }
                (State::Element { .. }, _) => {
                    return Err(self.error(DecodeErrorKind::NotAnObject, "expected an object"));
                }
                (State::Start, _) => {
                    return Err(DecodeError::new(DecodeErrorKind::InvalidJson, 1)
                        .detail("expected a JSON array '['"));
                }
                (State::Separator, _) => {
                    return Err(self.error(DecodeErrorKind::InvalidJson, "expected ',' or ']'"));
                }
                (State::Done, _) => {
                    return Err(self.error(
                        DecodeErrorKind::InvalidJson,
                        "expected the end of the body after the array",
                    ));
                }
            }
        }
    }

    fn error(&self, kind: DecodeErrorKind, detail: &str) -> DecodeError {
        DecodeError::new(kind, self.elements + 1).detail(detail)
    }
}

/// The scan for the end of an object, kept between calls: an object that has not ended in the
/// input so far is scanned again from where the scan stopped, not from its first byte, so an
/// element arriving in many pieces costs its length once (it cost its length for every piece).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct ObjectScan {
    /// Bytes of the object scanned.
    at: usize,
    /// Brackets and braces open at `at`.
    depth: usize,
    /// Whether `at` is inside a string.
    in_string: bool,
}

impl ObjectScan {
    /// The length of the object starting at `text[0] == b'{'` up to its closing brace; `None`
    /// when it does not end in `text`, and the next call, given the same object with more of it,
    /// goes on where this one stopped. Strings (with escapes) are skipped; the object's own
    /// validity is the object decoder's to check.
    fn length(&mut self, text: &[u8]) -> Option<usize> {
        let mut i = self.at;
        while let Some(&b) = text.get(i) {
            if self.in_string {
                let rest = text.get(i..).unwrap_or_default();
                let Some(k) = memchr::memchr2(b'"', b'\\', rest) else {
                    i = text.len();
                    break;
                };
                i += k;
                if rest.get(k) == Some(&b'"') {
                    self.in_string = false;
                    i += 1;
                } else if i + 1 < text.len() {
                    i += 2;
                } else {
                    // The escaped byte has not arrived: the scan resumes at the backslash.
                    break;
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        *self = ObjectScan::default();
                        return Some(i + 1);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        self.at = i;
        None
    }
}

/// The keys of the array's first object, in order: `Ok(None)` when it is not complete yet, an
/// empty list for an empty array.
pub fn first_element_keys(input: &[u8], eof: bool) -> Result<Option<Vec<String>>, DecodeError> {
    FirstElementKeys::default().find(input, eof)
}

/// [`first_element_keys`] of a body arriving in pieces: each call is given the body from its
/// first byte with more of it, and goes on where the last one stopped (the whitespace skipped,
/// the first object's scan), so a large first object costs its length once.
#[derive(Clone, Copy, Debug, Default)]
pub struct FirstElementKeys {
    /// Bytes of the body skipped already: up to the first object (or what follows `[`).
    skipped: usize,
    /// Whether the `[` was read.
    opened: bool,
    /// The scan of the first object.
    scan: ObjectScan,
}

impl FirstElementKeys {
    /// The keys of the array's first object in `input` (the body so far, from its first byte).
    pub fn find(&mut self, input: &[u8], eof: bool) -> Result<Option<Vec<String>>, DecodeError> {
        let mut pos = self.skipped;
        let skip = |pos: &mut usize| {
            while input.get(*pos).copied().is_some_and(is_ws) {
                *pos += 1;
            }
        };
        if !self.opened {
            skip(&mut pos);
            self.skipped = pos;
            match input.get(pos) {
                None if eof => return Err(DecodeError::new(DecodeErrorKind::Empty, 1)),
                None => return Ok(None),
                Some(b'[') => {
                    pos += 1;
                    self.opened = true;
                }
                Some(_) => {
                    return Err(DecodeError::new(DecodeErrorKind::InvalidJson, 1)
                        .detail("expected a JSON array '['"));
                }
            }
        }
        skip(&mut pos);
        self.skipped = pos;
        match input.get(pos) {
            None if eof => {
                Err(DecodeError::new(DecodeErrorKind::InvalidJson, 1)
                    .detail("the array is not closed"))
            }
            None => Ok(None),
            Some(b']') => Ok(Some(Vec::new())),
            Some(b'{') => {
                let rest = input.get(pos..).unwrap_or_default();
                match self.scan.length(rest) {
                    Some(length) => {
                        let object = rest.get(..length).unwrap_or_default();
                        super::jsonl::first_object_keys(object, true)
                    }
                    None if eof => Err(DecodeError::new(DecodeErrorKind::InvalidJson, 1)
                        .detail("the object is not closed")),
                    None => Ok(None),
                }
            }
            Some(_) => Err(DecodeError::new(DecodeErrorKind::NotAnObject, 1)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kind::Scalar;
    use proptest::prelude::*;

    fn decoder() -> JsonArrayDecoder {
        JsonArrayDecoder::new(
            &["a".to_string(), "b".to_string()],
            vec![ColumnKind::scalar(Scalar::Number), ColumnKind::STRING],
        )
    }

    fn all(input: &[u8]) -> Result<String, DecodeError> {
        let mut out = Vec::new();
        let used = decoder().decode(input, true, &mut out)?;
        assert_eq!(used, input.len());
        Ok(String::from_utf8(out).unwrap_or_default())
    }

    #[test]
    fn arrays_of_objects() {
        assert_eq!(
            all(br#" [ {"a": 1, "b": "x,\"}]"}, {"b": null, "a": 2} ,{} ] "#).unwrap(),
            "1\tx,\"}]\n2\t\\N\n\\N\t\\N\n"
        );
        assert_eq!(all(b"[]").unwrap(), "");
    }

    #[test]
    fn first_keys_and_key_rules() {
        assert_eq!(
            first_element_keys(b" [ {\"b\": 1, \"a\": {\"x\": 2}}, {", false).unwrap(),
            Some(vec!["b".to_string(), "a".to_string()])
        );
        assert_eq!(first_element_keys(b"[ {\"b\": ", false).unwrap(), None);
        assert_eq!(first_element_keys(b"[]", true).unwrap(), Some(vec![]));
        assert!(first_element_keys(b"{}", true).is_err());
        let strict = KeyRules {
            ignore_unknown: true,
            require_all: true,
        };
        let mut out = Vec::new();
        let mut d = decoder().with_key_rules(strict);
        d.decode(
            br#"[{"a": 1, "b": "x", "z": [1, {"q": 2}]}]"#,
            true,
            &mut out,
        )
        .unwrap();
        assert_eq!(String::from_utf8(out.clone()).unwrap(), "1\tx\n");
        let e = decoder()
            .with_key_rules(strict)
            .decode(br#"[{"a": 1}]"#, true, &mut out)
            .unwrap_err();
        assert_eq!(e.kind(), DecodeErrorKind::MissingKey);
    }

    #[test]
    fn errors_name_the_element() {
        let e = all(br#"[{"a": 1}, {"a": 2, "z": 3}]"#).unwrap_err();
        assert_eq!((e.kind(), e.line()), (DecodeErrorKind::UnknownKey, 2));
        let e = all(br#"[{"a": 1}, 7]"#).unwrap_err();
        assert_eq!((e.kind(), e.line()), (DecodeErrorKind::NotAnObject, 2));
        let e = all(br#"[{"a": 1} {"a": 2}]"#).unwrap_err();
        assert_eq!(e.kind(), DecodeErrorKind::InvalidJson);
        let e = all(br#"[{"a": 1}"#).unwrap_err();
        assert_eq!(e.kind(), DecodeErrorKind::InvalidJson);
        let e = all(br#"{"a": 1}"#).unwrap_err();
        assert_eq!(e.kind(), DecodeErrorKind::InvalidJson);
        let e = all(br#"[{"a": 1}] x"#).unwrap_err();
        assert_eq!(e.kind(), DecodeErrorKind::InvalidJson);
        let e = all(br#"[{"a": "unterminated}]"#).unwrap_err();
        assert_eq!(e.kind(), DecodeErrorKind::InvalidJson);
    }

    #[test]
    fn an_unfinished_object_is_scanned_from_where_the_scan_stopped() {
        // A large element arriving in pieces: each call goes on at the end of the last one's
        // input (less a backslash whose escaped byte has not arrived), never at the start.
        let object = format!(
            r#"{{"s": "{}\"}}", "t": [1, {{"u": "]"}}], "v": "\\"}}"#,
            "x".repeat(50_000)
        );
        let bytes = object.as_bytes();
        let mut scan = ObjectScan::default();
        for end in (1..bytes.len()).step_by(331).chain([bytes.len() - 1]) {
            assert_eq!(scan.length(&bytes[..end]), None);
            assert!(scan.at + 1 >= end && scan.at <= end, "{} of {end}", scan.at);
        }
        assert_eq!(scan.length(bytes), Some(bytes.len()));
        assert_eq!(scan, ObjectScan::default());
        // The keys of a first object arriving in pieces, likewise.
        let body = format!("  [ {object}, {{}}]");
        let mut keys = FirstElementKeys::default();
        for end in (1..object.len()).step_by(331) {
            assert_eq!(keys.find(&body.as_bytes()[..end], false).unwrap(), None);
            assert!(
                keys.scan.at + 1 >= end.saturating_sub(4),
                "{}",
                keys.scan.at
            );
        }
        assert_eq!(
            keys.find(body.as_bytes(), false).unwrap(),
            Some(vec!["s".to_string(), "t".to_string(), "v".to_string()])
        );
    }

    proptest! {
        /// Split anywhere (after a backslash, inside a string, between brackets), an object is
        /// found to end where it ends whole.
        #[test]
        fn any_split_finds_the_same_end(
            value in proptest::collection::vec("[ -~]{0,8}", 0..6),
            cuts in proptest::collection::vec(0usize..120, 0..6),
        ) {
            let object = serde_json::to_vec(&serde_json::json!({"a": value, "b": {"c": value}}))
                .unwrap_or_default();
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(object.len())).collect();
            cuts.sort_unstable();
            let mut scan = ObjectScan::default();
            for cut in cuts {
                if cut == object.len() {
                    prop_assert_eq!(scan.length(&object), Some(object.len()));
                } else {
                    prop_assert_eq!(scan.length(&object[..cut]), None);
                }
            }
            prop_assert_eq!(scan.length(&object), Some(object.len()));
        }

        /// Any split of the body into chunks gives the same rows as the whole body at once.
        #[test]
        fn any_split_gives_the_same_rows(
            rows in proptest::collection::vec((any::<i32>(), "[ -~]{0,12}"), 0..20),
            cuts in proptest::collection::vec(0usize..400, 0..8),
        ) {
            let body = serde_json::to_vec(&rows.iter().map(|(a, b)| {
                serde_json::json!({"a": a, "b": b})
            }).collect::<Vec<_>>()).unwrap_or_default();
            let whole = all(&body).unwrap();
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(body.len())).collect();
            cuts.sort_unstable();
            let mut d = decoder();
            let mut out = Vec::new();
            let mut pending: Vec<u8> = Vec::new();
            let mut last = 0;
            for cut in cuts.into_iter().chain([body.len()]) {
                pending.extend_from_slice(&body[last..cut]);
                last = cut;
                let eof = cut == body.len();
                let used = d.decode(&pending, eof, &mut out).unwrap();
                pending.drain(..used);
            }
            prop_assert_eq!(String::from_utf8(out).unwrap_or_default(), whole);
            prop_assert_eq!(d.rows(), rows.len() as u64);
        }

        /// Nothing panics on arbitrary bytes, split anywhere.
        #[test]
        fn never_panics(body in proptest::collection::vec(any::<u8>(), 0..200), cut in 0usize..200) {
            let mut d = decoder();
            let mut out = Vec::new();
            let cut = cut.min(body.len());
            if let Ok(used) = d.decode(&body[..cut], false, &mut out) {
                let mut rest = body[used..].to_vec();
                rest.truncate(body.len() - used);
                let _ = d.decode(&rest, true, &mut out);
            }
        }
    }
}
