//! Reads tests/conformance.txt: cases of line protocol input and the expected JSON or error.

#![allow(dead_code)]

use sluice_lineproto::{Options, Precision};

/// What a case expects.
#[derive(Debug, Clone)]
pub enum Expected {
    /// One JSON line per point.
    Points(Vec<String>),
    /// The error, as displayed.
    Error(String),
}

/// One conformance case.
#[derive(Debug, Clone)]
pub struct Case {
    pub name: String,
    pub input: Vec<u8>,
    pub precision: Precision,
    pub default_time: i64,
    /// The influxdb-line-protocol crate reads this input differently (on purpose).
    pub differs_from_influxdb_crate: bool,
    pub expected: Expected,
}

impl Case {
    pub fn options(&self) -> Options {
        Options::new(self.default_time).with_precision(self.precision)
    }
}

/// Replaces the placeholders for bytes a text file cannot show.
fn decode_line(line: &str) -> Vec<u8> {
    let mut out = line
        .replace("<CR>", "\r")
        .replace("<TAB>", "\t")
        .replace("<NUL>", "\0")
        .replace("<NL>", "\n")
        .replace("<NOEOL>", "")
        .into_bytes();
    while let Some(pos) = find(&out, b"<FF>") {
        out.splice(pos..pos + 4, [0xff]);
    }
    out
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// All cases of the file.
pub fn cases() -> Vec<Case> {
    let text = include_str!("../../conformance.txt");
    let mut cases = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let Some(name) = line.strip_prefix("=== ") else {
            assert!(
                line.is_empty() || line.starts_with('#'),
                "stray line outside a case: {line:?}"
            );
            continue;
        };
        let header = lines.next().expect("--- input after the case name");
        let options = header
            .strip_prefix("--- input")
            .unwrap_or_else(|| panic!("case {name:?}: expected '--- input', found {header:?}"));
        let mut case = Case {
            name: name.to_owned(),
            input: Vec::new(),
            precision: Precision::Nanoseconds,
            default_time: 0,
            differs_from_influxdb_crate: false,
            expected: Expected::Points(Vec::new()),
        };
        for option in options.split_whitespace() {
            match option.split_once('=') {
                Some(("precision", p)) => case.precision = p.parse().expect("precision"),
                Some(("default_time", t)) => case.default_time = t.parse().expect("default_time"),
                Some(("influxdb-line-protocol", "differs")) => {
                    case.differs_from_influxdb_crate = true;
                }
                _ => panic!("case {name:?}: unknown option {option:?}"),
            }
        }
        loop {
            let line = lines
                .next()
                .unwrap_or_else(|| panic!("case {name:?}: no expectation"));
            if line.starts_with("--- ") {
                let mut body = Vec::new();
                while let Some(next) = lines.peek() {
                    if next.is_empty() || next.starts_with("=== ") || next.starts_with("# ") {
                        break;
                    }
                    body.push(lines.next().unwrap_or_default().to_owned());
                }
                case.expected = match line {
                    "--- output" => Expected::Points(body),
                    "--- error" => Expected::Error(body.concat()),
                    other => panic!("case {name:?}: unknown section {other:?}"),
                };
                break;
            }
            case.input.extend(decode_line(line));
            if !line.ends_with("<NOEOL>") {
                case.input.push(b'\n');
            }
        }
        cases.push(case);
    }
    cases
}
