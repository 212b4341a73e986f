//! Property tests across the public API: rows encoded to CSJ / JSON Lines and decoded back give
//! the COPY text rows PostgreSQL would take for the same values; decoders never panic on any
//! bytes and give the same result however the input is split into chunks.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use sluice_formats::decode::{
    CollectFields, CsjDecoder, CsjHeader, CsvScanner, JsonlDecoder, SkipFields, TsvScanner,
    first_object_keys,
};
use sluice_formats::{ColumnKind, ColumnSpec, DecodeError, Format, Scalar, encode::encode_all};

/// A value of a column, as PostgreSQL's text output would give it, and the COPY text field the
/// import must produce for it.
#[derive(Clone, Debug)]
struct Value {
    text: Option<String>,
    copy: String,
}

fn copy_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out
}

fn text_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        "\\PC{0,12}",
        "[a-z \"\\\\,{}\\[\\]\\n\\r\\t\u{1}\u{1f}é€😀]{0,12}",
        Just(String::new()),
        Just("NULL".to_owned()),
        Just("\\N".to_owned()),
    ]
    .prop_map(|s| s.replace('\0', ""))
}

fn number_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| format!("{f:e}")),
        Just("-0".to_owned()),
        Just("12345678901234567890.000000000001".to_owned()),
    ]
}

fn json_strategy() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        any::<i32>().prop_map(serde_json::Value::from),
        text_strategy().prop_map(serde_json::Value::String),
    ];
    leaf.prop_recursive(3, 12, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::Array),
            proptest::collection::btree_map("[a-z\"]{0,4}", inner, 0..4)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

/// PostgreSQL array text with every element quoted, as the import writes it.
fn array_text(elements: &[Option<String>]) -> String {
    let mut s = String::from("{");
    for (i, e) in elements.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        match e {
            None => s.push_str("NULL"),
            Some(v) => {
                s.push('"');
                s.push_str(&v.replace('\\', "\\\\").replace('"', "\\\""));
                s.push('"');
            }
        }
    }
    s.push('}');
    s
}

fn column_strategy() -> impl Strategy<Value = (ColumnKind, Vec<Value>)> {
    let rows = 0..6usize;
    (0..6u8, rows).prop_flat_map(|(which, n)| {
        let values: BoxedStrategy<Vec<Value>> = match which {
            0 => proptest::collection::vec(proptest::option::weighted(0.8, text_strategy()), n)
                .prop_map(|v| {
                    v.into_iter()
                        .map(|t| value(t.clone(), t.map(|s| copy_escape(&s))))
                        .collect()
                })
                .boxed(),
            1 => proptest::collection::vec(proptest::option::weighted(0.8, number_strategy()), n)
                .prop_map(|v| v.into_iter().map(|t| value(t.clone(), t)).collect())
                .boxed(),
            2 => proptest::collection::vec(proptest::option::weighted(0.8, any::<bool>()), n)
                .prop_map(|v| {
                    v.into_iter()
                        .map(|b| {
                            value(
                                b.map(|b| if b { "t" } else { "f" }.to_owned()),
                                b.map(|b| b.to_string()),
                            )
                        })
                        .collect()
                })
                .boxed(),
            3 => proptest::collection::vec(proptest::option::weighted(0.8, json_strategy()), n)
                .prop_map(|v| {
                    v.into_iter()
                        .map(|j| {
                            // A json value that is JSON null reads back as SQL NULL: the
                            // formats cannot tell them apart.
                            let text = j.map(|j| j.to_string());
                            let copy = text.as_deref().filter(|t| *t != "null").map(copy_escape);
                            value(text, copy)
                        })
                        .collect()
                })
                .boxed(),
            _ => proptest::collection::vec(
                proptest::option::weighted(
                    0.8,
                    proptest::collection::vec(
                        proptest::option::weighted(0.8, text_strategy()),
                        0..4,
                    ),
                ),
                n,
            )
            .prop_map(|v| {
                v.into_iter()
                    .map(|a| {
                        let text = a.map(|a| array_text(&a));
                        value(text.clone(), text.map(|t| copy_escape(&t)))
                    })
                    .collect()
            })
            .boxed(),
        };
        let kind = match which {
            0 => ColumnKind::STRING,
            1 => ColumnKind::scalar(Scalar::Number),
            2 => ColumnKind::scalar(Scalar::Bool),
            3 => ColumnKind::scalar(Scalar::Json),
            _ => ColumnKind::array(Scalar::String, b','),
        };
        values.prop_map(move |v| (kind, v))
    })
}

fn value(text: Option<String>, copy: Option<String>) -> Value {
    Value {
        text,
        copy: copy.unwrap_or_else(|| "\\N".to_owned()),
    }
}

/// A table: columns with kinds, and rows (all columns cut to the shortest).
fn table_strategy() -> impl Strategy<Value = (Vec<ColumnSpec>, Vec<Vec<Value>>)> {
    proptest::collection::vec(column_strategy(), 1..5).prop_map(|cols| {
        let rows = cols.iter().map(|(_, v)| v.len()).min().unwrap_or(0);
        let specs = cols
            .iter()
            .enumerate()
            .map(|(i, (k, _))| ColumnSpec::new(format!("col {i} \"é\""), *k))
            .collect();
        let table = (0..rows)
            .map(|r| cols.iter().map(|(_, v)| v[r].clone()).collect())
            .collect();
        (specs, table)
    })
}

fn encode(format: Format, specs: &[ColumnSpec], rows: &[Vec<Value>]) -> Vec<u8> {
    encode_all(
        format,
        specs,
        true,
        rows.iter()
            .map(|r| r.iter().map(|v| v.text.as_deref().map(str::as_bytes))),
    )
}

fn expected_copy(rows: &[Vec<Value>]) -> String {
    rows.iter()
        .map(|r| {
            r.iter()
                .map(|v| v.copy.as_str())
                .collect::<Vec<_>>()
                .join("\t")
                + "\n"
        })
        .collect()
}

/// Feeds `input` to `decode` in two pieces split at `split`, keeping unconsumed bytes as a
/// caller would.
fn decode_split(
    input: &[u8],
    split: usize,
    mut decode: impl FnMut(&[u8], bool, &mut Vec<u8>) -> Result<usize, DecodeError>,
) -> Result<Vec<u8>, DecodeError> {
    let split = split.min(input.len());
    let mut out = Vec::new();
    let used = decode(&input[..split], false, &mut out)?;
    let mut rest = input[used..split].to_vec();
    rest.extend_from_slice(&input[split..]);
    let used2 = decode(&rest, true, &mut out)?;
    assert_eq!(used2, rest.len());
    Ok(out)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn csj_round_trip((specs, rows) in table_strategy(), split in any::<prop::sample::Index>()) {
        let csj = encode(Format::Csj, &specs, &rows);
        let header = CsjHeader::read(&csj, true).unwrap().unwrap();
        let names: Vec<String> = specs.iter().map(|s| s.name.clone()).collect();
        prop_assert_eq!(&header.names, &names);
        let body = &csj[header.consumed..];
        let mut decoder = CsjDecoder::new(specs.iter().map(|s| s.kind).collect(), header.next_line);
        let out = decode_split(body, split.index(body.len() + 1), |i, eof, o| decoder.decode(i, eof, o)).unwrap();
        prop_assert_eq!(String::from_utf8(out).unwrap(), expected_copy(&rows));
        prop_assert_eq!(decoder.rows(), rows.len() as u64);
        if !rows.is_empty() {
            prop_assert_eq!(decoder.line_map().line_of(rows.len() as u64), Some(rows.len() as u64 + 1));
        }
    }

    #[test]
    fn jsonl_round_trip((specs, rows) in table_strategy(), split in any::<prop::sample::Index>()) {
        let jsonl = encode(Format::JsonLines, &specs, &rows);
        let names: Vec<String> = specs.iter().map(|s| s.name.clone()).collect();
        match first_object_keys(&jsonl, true) {
            Ok(Some(keys)) => prop_assert_eq!(&keys, &names),
            other => prop_assert!(rows.is_empty(), "{other:?}"),
        }
        let mut decoder = JsonlDecoder::new(&names, specs.iter().map(|s| s.kind).collect());
        let out = decode_split(&jsonl, split.index(jsonl.len() + 1), |i, eof, o| decoder.decode(i, eof, o)).unwrap();
        prop_assert_eq!(String::from_utf8(out).unwrap(), expected_copy(&rows));
    }

    /// Any bytes: no panic, and the same output or error whatever the split.
    #[test]
    fn decoders_take_any_bytes(
        input in proptest::collection::vec(prop_oneof![any::<u8>(), prop::sample::select(b"{}[]\",:\n\r\\ 0-tnu".to_vec())], 0..200),
        split in any::<prop::sample::Index>(),
    ) {
        let split = split.index(input.len() + 1);
        let kinds = vec![ColumnKind::STRING, ColumnKind::scalar(Scalar::Json), ColumnKind::array(Scalar::Number, b',')];
        let _ = CsjHeader::read(&input, true);
        let _ = first_object_keys(&input, true);
        let mut decoder = CsjDecoder::new(kinds.clone(), 1);
        let whole = decode_split(&input, input.len(), |i, eof, o| decoder.decode(i, eof, o));
        let mut decoder = CsjDecoder::new(kinds.clone(), 1);
        let parts = decode_split(&input, split, |i, eof, o| decoder.decode(i, eof, o));
        prop_assert_eq!(whole.map_err(|e| e.to_string()), parts.map_err(|e| e.to_string()));
        let names = vec!["a".to_owned(), "b".to_owned(), "c".to_owned()];
        let mut decoder = JsonlDecoder::new(&names, kinds.clone());
        let whole = decode_split(&input, input.len(), |i, eof, o| decoder.decode(i, eof, o));
        let mut decoder = JsonlDecoder::new(&names, kinds.clone());
        let parts = decode_split(&input, split, |i, eof, o| decoder.decode(i, eof, o));
        prop_assert_eq!(whole.map_err(|e| e.to_string()), parts.map_err(|e| e.to_string()));

        let csv = |pieces: &[&[u8]]| -> Result<Vec<Vec<Option<Vec<u8>>>>, String> {
            let mut scanner = CsvScanner::new();
            let mut sink = CollectFields::new(None);
            for p in pieces {
                scanner.scan(p, &mut sink).map_err(|e| e.to_string())?;
            }
            scanner.finish(&mut sink).map_err(|e| e.to_string())?;
            Ok(sink.records)
        };
        prop_assert_eq!(csv(&[&input]), csv(&[&input[..split], &input[split..]]));
        let mut counting = CsvScanner::new();
        let counted = counting.scan(&input, &mut SkipFields).and_then(|_| counting.finish(&mut SkipFields));
        prop_assert_eq!(counted.is_ok(), csv(&[&input]).is_ok());

        let tsv = |pieces: &[&[u8]]| -> Result<u64, String> {
            let mut scanner = TsvScanner::new(1);
            for p in pieces {
                scanner.scan(p).map_err(|e| e.to_string())?;
            }
            scanner.finish().map_err(|e| e.to_string())?;
            Ok(scanner.line())
        };
        prop_assert_eq!(tsv(&[&input]), tsv(&[&input[..split], &input[split..]]));
    }
}
