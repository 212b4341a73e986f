//! Runs every case of tests/conformance.txt through the streaming parser and the batch parser.

use crate::common;

use common::{Expected, cases};
use sluice_lineproto::{Batch, Parser, write_point_json};

fn json_lines<'a>(points: impl Iterator<Item = sluice_lineproto::Point<'a, 'a>>) -> Vec<String> {
    points
        .map(|p| {
            let mut out = Vec::new();
            write_point_json(&p, &mut out);
            String::from_utf8(out).expect("JSON is UTF-8")
        })
        .collect()
}

fn streaming(case: &common::Case) -> Result<Vec<String>, String> {
    let mut parser = Parser::new(&case.input, case.options());
    let mut lines = Vec::new();
    while let Some(point) = parser.next_point() {
        let point = point.map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        write_point_json(&point, &mut out);
        lines.push(String::from_utf8(out).expect("JSON is UTF-8"));
    }
    Ok(lines)
}

#[test]
fn conformance_cases() {
    let cases = cases();
    assert!(cases.len() > 70, "only {} cases were read", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let batch = Batch::parse(&case.input, &case.options())
            .map(|b| json_lines(b.points()))
            .map_err(|e| e.to_string());
        let stream = streaming(case);
        let want = match &case.expected {
            Expected::Points(lines) => Ok(lines.clone()),
            Expected::Error(error) => Err(error.clone()),
        };
        if batch != want {
            failures.push(format!(
                "{} (batch):\n  want {want:?}\n  got  {batch:?}",
                case.name
            ));
        }
        if stream != want {
            failures.push(format!(
                "{} (stream):\n  want {want:?}\n  got  {stream:?}",
                case.name
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_output_line_is_json() {
    for case in cases() {
        if let Expected::Points(lines) = case.expected {
            for line in lines {
                let value: serde_json::Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("{}: {e}: {line}", case.name));
                assert!(value.get("time").is_some_and(serde_json::Value::is_i64));
            }
        }
    }
}
