//! Checks the conformance cases against the influxdb-line-protocol crate (InfluxDB 3's parser):
//! where a case is not marked `influxdb-line-protocol=differs`, both parsers must accept it
//! with the same points or both reject it; where it is marked, they must still disagree, so
//! the list of intentional differences in conformance.txt stays true.

use crate::common;

use common::{Case, Expected, cases};
use sluice_lineproto::{Batch, FieldValue};

/// A point reduced to what both parsers report.
#[derive(Debug, PartialEq)]
struct Normal {
    measurement: String,
    tags: Vec<(String, String)>,
    fields: Vec<(String, String)>,
    time: i64,
}

fn ours(case: &Case) -> Option<Vec<Normal>> {
    if let Expected::Error(_) = case.expected {
        return None;
    }
    let batch = Batch::parse(&case.input, &case.options()).ok()?;
    Some(
        batch
            .points()
            .map(|p| Normal {
                measurement: p.measurement().to_owned(),
                tags: p
                    .tags()
                    .iter()
                    .map(|t| (t.key.to_string(), t.value.to_string()))
                    .collect(),
                fields: p
                    .fields()
                    .iter()
                    .map(|f| {
                        let value = match &f.value {
                            FieldValue::Float(v) => format!("f{v:?}"),
                            FieldValue::Int(v) => format!("i{v}"),
                            FieldValue::UInt(v) => format!("u{v}"),
                            FieldValue::String(s) => format!("s{s}"),
                            FieldValue::Bool(b) => format!("b{b}"),
                        };
                        (f.key.to_string(), value)
                    })
                    .collect(),
                time: p.time(),
            })
            .collect(),
    )
}

fn theirs(case: &Case) -> Option<Vec<Normal>> {
    use influxdb_line_protocol::{FieldValue as V, parse_lines};
    let text = std::str::from_utf8(&case.input).ok()?;
    let options = case.options();
    let mut points = Vec::new();
    for line in parse_lines(text) {
        let line = line.ok()?;
        let mut tags: Vec<(String, String)> = line
            .series
            .tag_set
            .iter()
            .flatten()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        tags.sort();
        let fields = line
            .field_set
            .iter()
            .map(|(k, v)| {
                let value = match v {
                    V::F64(v) => format!("f{v:?}"),
                    V::I64(v) => format!("i{v}"),
                    V::U64(v) => format!("u{v}"),
                    V::String(s) => format!("s{s}"),
                    V::Boolean(b) => format!("b{b}"),
                };
                (k.to_string(), value)
            })
            .collect();
        let time = match line.timestamp {
            Some(t) => t.checked_mul(options.precision.nanos())?,
            None => options.precision.truncate(options.default_time),
        };
        points.push(Normal {
            measurement: line.series.measurement.to_string(),
            tags,
            fields,
            time,
        });
    }
    Some(points)
}

#[test]
fn agrees_with_influxdb_line_protocol_except_where_marked() {
    let mut wrong = Vec::new();
    let mut compared = 0;
    for case in cases() {
        if std::str::from_utf8(&case.input).is_err() {
            continue; // The crate takes &str: it cannot be handed invalid UTF-8 at all.
        }
        compared += 1;
        let ours = ours(&case);
        let theirs = theirs(&case);
        let agree = ours == theirs;
        if agree == case.differs_from_influxdb_crate {
            wrong.push(format!(
                "{} (marked differs: {}):\n  ours   {ours:?}\n  theirs {theirs:?}",
                case.name, case.differs_from_influxdb_crate
            ));
        }
    }
    assert!(compared > 60, "only {compared} cases compared");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
