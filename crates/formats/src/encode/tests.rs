//! Encoder tests: each format's exact bytes, and properties (valid JSON, CSV read back equal).

use super::*;
use crate::decode::{CollectFields, CsvScanner};
use crate::kind::Scalar;
use proptest::prelude::*;

fn cols(specs: &[(&str, ColumnKind)]) -> Vec<ColumnSpec> {
    specs.iter().map(|(n, k)| ColumnSpec::new(*n, *k)).collect()
}

fn encode(
    format: Format,
    columns: &[ColumnSpec],
    header: bool,
    rows: &[Vec<Option<&str>>],
) -> String {
    let out = encode_all(
        format,
        columns,
        header,
        rows.iter().map(|r| r.iter().map(|f| f.map(str::as_bytes))),
    );
    String::from_utf8(out).expect("UTF-8")
}

fn sample() -> (Vec<ColumnSpec>, Vec<Vec<Option<&'static str>>>) {
    let columns = cols(&[
        ("id", ColumnKind::scalar(Scalar::Number)),
        ("ok", ColumnKind::scalar(Scalar::Bool)),
        ("name", ColumnKind::STRING),
        ("doc", ColumnKind::scalar(Scalar::Json)),
        ("tags", ColumnKind::array(Scalar::String, b',')),
    ]);
    let rows = vec![
        vec![
            Some("1"),
            Some("t"),
            Some("a \"b\",\nc"),
            Some("{\"k\": [1, 2]}"),
            Some("{x,\"y z\",NULL}"),
        ],
        vec![Some("NaN"), None, Some(""), None, Some("{}")],
    ];
    (columns, rows)
}

#[test]
fn csj() {
    let (columns, rows) = sample();
    assert_eq!(
        encode(Format::Csj, &columns, true, &rows),
        "\"id\",\"ok\",\"name\",\"doc\",\"tags\"\n\
         1,true,\"a \\\"b\\\",\\nc\",{\"k\": [1, 2]},[\"x\",\"y z\",null]\n\
         \"NaN\",null,\"\",null,[]\n"
    );
    assert_eq!(
        encode(Format::Csj, &columns, true, &[]),
        "\"id\",\"ok\",\"name\",\"doc\",\"tags\"\n"
    );
    assert_eq!(
        encode(Format::Csj, &columns, false, &rows[1..]),
        "\"NaN\",null,\"\",null,[]\n"
    );
}

#[test]
fn json_lines_and_json() {
    let (columns, rows) = sample();
    let second = "{\"id\":\"NaN\",\"ok\":null,\"name\":\"\",\"doc\":null,\"tags\":[]}";
    assert_eq!(
        encode(Format::JsonLines, &columns, true, &rows[1..]),
        format!("{second}\n")
    );
    assert_eq!(encode(Format::JsonLines, &columns, true, &[]), "");
    assert_eq!(encode(Format::Json, &columns, true, &[]), "[]\n");
    assert_eq!(
        encode(
            Format::Json,
            &columns,
            true,
            &[rows[1].clone(), rows[1].clone()]
        ),
        format!("[\n{second},\n{second}\n]\n")
    );
    let dup = cols(&[("a", ColumnKind::STRING), ("a", ColumnKind::STRING)]);
    assert_eq!(
        encode(Format::JsonLines, &dup, true, &[vec![Some("1"), Some("2")]]),
        "{\"a\":\"1\",\"a\":\"2\"}\n"
    );
}

#[test]
fn csv_as_copy_writes_it() {
    let columns = cols(&[
        ("a,b", ColumnKind::STRING),
        ("", ColumnKind::STRING),
        ("q\"", ColumnKind::STRING),
    ]);
    let rows = vec![
        vec![Some("plain"), Some(""), None],
        vec![Some("x\"y"), Some("line\nbreak"), Some("cr\r")],
        vec![Some("\\."), Some(" lead"), Some("é,")],
    ];
    assert_eq!(
        encode(Format::Csv, &columns, true, &rows),
        "\"a,b\",\"\",\"q\"\"\"\nplain,\"\",\nx\"\"y\",\"line\nbreak\",\"cr\r\"\n\\., lead,\"é,\"\n"
            .replace("x\"\"y\"", "\"x\"\"y\"")
    );
    let single = cols(&[("\\.", ColumnKind::STRING)]);
    assert_eq!(
        encode(
            Format::Csv,
            &single,
            true,
            &[vec![Some("\\.")], vec![None], vec![Some("\\.x")]]
        ),
        "\"\\.\"\n\"\\.\"\n\n\\.x\n"
    );
}

#[test]
fn tsv_as_copy_writes_it() {
    let columns = cols(&[("h\tx", ColumnKind::STRING), ("b", ColumnKind::STRING)]);
    let rows = vec![
        vec![Some("a\tb\\c\nd\x01e\x0bf\x08\x0c\r"), None],
        vec![Some(""), Some("\\N")],
    ];
    assert_eq!(
        encode(Format::Tsv, &columns, true, &rows),
        "h\\tx\tb\na\\tb\\\\c\\nd\x01e\\vf\\b\\f\\r\t\\N\n\t\\\\N\n"
    );
    assert_eq!(
        encode(Format::Tsv, &columns, false, &rows[1..]),
        "\t\\\\N\n"
    );
}

#[test]
fn formats_by_name_and_extension() {
    assert_eq!("JSONL".parse::<Format>(), Ok(Format::JsonLines));
    assert_eq!("csj".parse::<Format>(), Ok(Format::Csj));
    assert!("xml".parse::<Format>().is_err());
    assert_eq!(
        Format::from_extension("out/rows.ndjson"),
        Some(Format::JsonLines)
    );
    assert_eq!(Format::from_extension("a.CSV"), Some(Format::Csv));
    assert_eq!(Format::from_extension("noext"), None);
}

fn kind_strategy() -> impl Strategy<Value = ColumnKind> {
    prop_oneof![
        Just(ColumnKind::STRING),
        Just(ColumnKind::scalar(Scalar::Number)),
        Just(ColumnKind::scalar(Scalar::Bool)),
        Just(ColumnKind::scalar(Scalar::Json)),
        Just(ColumnKind::array(Scalar::String, b',')),
        Just(ColumnKind::array(Scalar::Number, b',')),
        Just(ColumnKind::array(Scalar::Json, b',')),
    ]
}

fn field_strategy() -> impl Strategy<Value = Option<Vec<u8>>> {
    prop_oneof![
        1 => Just(None),
        4 => proptest::collection::vec(any::<u8>(), 0..24).prop_map(Some),
        2 => "[ -~é\\n\\t\\r\"\\\\{},]{0,16}".prop_map(|s| Some(s.into_bytes())),
    ]
}

proptest! {
    /// Whatever the bytes and kinds (even text that is not what the type prints), CSJ, JSON
    /// Lines and JSON output is valid JSON with one row per line, except embedded json text
    /// which the server guarantees (so those columns only get valid JSON here).
    #[test]
    fn json_formats_are_always_valid(
        kinds in proptest::collection::vec(kind_strategy(), 1..5),
        rows in proptest::collection::vec(proptest::collection::vec(field_strategy(), 5), 0..6),
    ) {
        let columns: Vec<ColumnSpec> = kinds.iter().enumerate().map(|(i, k)| ColumnSpec::new(format!("c{i}\n\""), *k)).collect();
        let rows: Vec<Vec<Option<Vec<u8>>>> = rows.into_iter().map(|r| {
            r.into_iter().zip(&kinds).map(|(f, k)| {
                if k.scalar == Scalar::Json && !k.is_array() {
                    f.map(|v| serde_json::to_vec(&String::from_utf8_lossy(&v)).expect("json"))
                } else if k.scalar == Scalar::Json {
                    // A json[] element must be json: quote every element.
                    f.map(|v| {
                        let s = serde_json::to_string(&String::from_utf8_lossy(&v)).expect("json");
                        let quoted = s.replace('\\', "\\\\").replace('"', "\\\"");
                        format!("{{\"{quoted}\"}}").into_bytes()
                    })
                } else {
                    f
                }
            }).collect()
        }).collect();
        let refs = || rows.iter().map(|r| r.iter().map(|f| f.as_deref()));
        let csj = encode_all(Format::Csj, &columns, true, refs());
        let lines: Vec<&[u8]> = csj.split(|&b| b == b'\n').collect();
        prop_assert_eq!(lines.len(), rows.len() + 2);
        for line in &lines[..lines.len() - 1] {
            let wrapped = [b"[".as_slice(), line, b"]"].concat();
            let parsed: Result<serde_json::Value, _> = serde_json::from_slice(&wrapped);
            prop_assert!(parsed.is_ok(), "{}", String::from_utf8_lossy(line));
        }
        let jsonl = encode_all(Format::JsonLines, &columns, true, refs());
        for line in jsonl.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let parsed: Result<serde_json::Value, _> = serde_json::from_slice(line);
            prop_assert!(parsed.as_ref().is_ok_and(serde_json::Value::is_object), "{}", String::from_utf8_lossy(line));
        }
        let json = encode_all(Format::Json, &columns, true, refs());
        let parsed: serde_json::Value = serde_json::from_slice(&json).expect("valid JSON");
        prop_assert_eq!(parsed.as_array().map(Vec::len), Some(rows.len()));
    }

    /// Strings survive: what JSON parsers read back is the text (lossy for invalid UTF-8).
    #[test]
    fn json_strings_read_back(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let mut out = Vec::new();
        write_json_string(&mut out, &bytes);
        let back: String = serde_json::from_slice(&out).expect("valid JSON string");
        prop_assert_eq!(back, String::from_utf8_lossy(&bytes).into_owned());
    }

    /// CSV written by the encoder reads back as the same fields with PostgreSQL's CSV rules,
    /// NULL (unquoted empty) apart from the empty string.
    #[test]
    fn csv_reads_back(
        width in 1usize..4,
        rows in proptest::collection::vec(proptest::collection::vec(field_strategy(), 4), 0..8),
    ) {
        let columns: Vec<ColumnSpec> = (0..width).map(|i| ColumnSpec::new(format!("c{i}"), ColumnKind::STRING)).collect();
        let rows: Vec<Vec<Option<Vec<u8>>>> = rows.into_iter().map(|r| r.into_iter().take(width).collect()).collect();
        let csv = encode_all(Format::Csv, &columns, true, rows.iter().map(|r| r.iter().map(|f| f.as_deref())));
        let mut scanner = CsvScanner::new();
        let mut sink = CollectFields::new(None);
        scanner.scan(&csv, &mut sink).expect("valid CSV");
        scanner.finish(&mut sink).expect("valid CSV");
        prop_assert_eq!(sink.records.len(), rows.len() + 1);
        for (read, written) in sink.records[1..].iter().zip(&rows) {
            prop_assert_eq!(read, written);
        }
    }
}
