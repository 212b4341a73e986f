//! Property tests: random valid points rendered to line protocol (with escaping) parse back
//! equal; arbitrary bytes never make the parser panic; the streaming and batch parsers agree.

use proptest::prelude::*;
use sluice_lineproto::{Batch, FieldValue, MAX_TIME_NS, MIN_TIME_NS, Options, Parser};

#[derive(Debug, Clone)]
enum Value {
    Float(f64),
    Int(i64),
    UInt(u64),
    Str(String),
    Bool(bool, usize),
}

#[derive(Debug, Clone)]
struct GenPoint {
    measurement: String,
    tags: Vec<(String, String)>,
    fields: Vec<(String, Value)>,
    time: Option<i64>,
    gap: usize,
    crlf: bool,
}

/// Characters names are drawn from: plain ones, every delimiter line protocol escapes, quotes,
/// `#`, and multi-byte UTF-8.
fn name_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => prop::char::range('a', 'z'),
        1 => prop::sample::select(vec![',', ' ', '=', '\\', '"', '\'', '#', '_', '.', 'é', '🚀', '9']),
    ]
}

fn name() -> impl Strategy<Value = String> {
    prop::collection::vec(name_char(), 1..12)
        .prop_map(|chars| chars.into_iter().collect::<String>())
        // A name ending with a backslash cannot be written: the backslash would escape the
        // delimiter after it.
        .prop_filter("valid name", |s| !s.ends_with('\\'))
}

fn measurement() -> impl Strategy<Value = String> {
    name().prop_filter("not a comment", |s| !s.starts_with('#'))
}

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<f64>()
            .prop_filter("finite", |v| v.is_finite())
            .prop_map(Value::Float),
        (-1e6f64..1e6).prop_map(Value::Float),
        any::<i64>().prop_map(Value::Int),
        any::<u64>().prop_map(Value::UInt),
        // Strings may hold anything, control characters and newlines included.
        ".{0,20}".prop_map(Value::Str),
        prop::collection::vec(
            prop::sample::select(vec!['"', '\\', '\n', '\t', ',', ' ', '=', 'x']),
            0..8
        )
        .prop_map(|c| Value::Str(c.into_iter().collect())),
        (any::<bool>(), 0usize..5).prop_map(|(b, spelling)| Value::Bool(b, spelling)),
    ]
}

fn point() -> impl Strategy<Value = GenPoint> {
    (
        measurement(),
        prop::collection::btree_map(name(), name(), 0..5),
        prop::collection::vec((name(), value()), 1..6),
        prop::option::of(MIN_TIME_NS..=MAX_TIME_NS),
        1usize..4,
        any::<bool>(),
    )
        .prop_map(|(measurement, tags, fields, time, gap, crlf)| {
            // Field keys unique: the parser merges repeated keys, tested elsewhere.
            let mut seen = std::collections::BTreeSet::new();
            let fields = fields
                .into_iter()
                .filter(|(k, _)| seen.insert(k.clone()))
                .collect();
            // Shuffle-free but unsorted: reverse the tags so the parser has to sort them.
            let tags = tags.into_iter().rev().collect();
            GenPoint {
                measurement,
                tags,
                fields,
                time,
                gap,
                crlf,
            }
        })
}

/// Escapes the delimiters of a context; backslashes stay as they are (InfluxDB's reference
/// parser keeps a backslash that does not precede a delimiter, one before another included).
fn escape(s: &str, special: &[char]) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if special.contains(&c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn render(p: &GenPoint) -> String {
    const BOOLS: [[&str; 5]; 2] = [
        ["f", "F", "false", "False", "FALSE"],
        ["t", "T", "true", "True", "TRUE"],
    ];
    let key_special = [',', '=', ' '];
    let mut line = escape(&p.measurement, &[',', ' ']);
    for (k, v) in &p.tags {
        line.push(',');
        line.push_str(&escape(k, &key_special));
        line.push('=');
        line.push_str(&escape(v, &key_special));
    }
    line.push_str(&" ".repeat(p.gap));
    for (i, (k, v)) in p.fields.iter().enumerate() {
        if i > 0 {
            line.push(',');
        }
        line.push_str(&escape(k, &key_special));
        line.push('=');
        match v {
            Value::Float(f) => line.push_str(&format!("{f:?}")),
            Value::Int(n) => line.push_str(&format!("{n}i")),
            Value::UInt(n) => line.push_str(&format!("{n}u")),
            Value::Str(s) => {
                line.push('"');
                line.push_str(&s.replace('\\', "\\\\").replace('"', "\\\""));
                line.push('"');
            }
            Value::Bool(b, spelling) => line.push_str(BOOLS[usize::from(*b)][*spelling]),
        }
    }
    if let Some(t) = p.time {
        line.push_str(&" ".repeat(p.gap));
        line.push_str(&t.to_string());
    }
    line.push_str(if p.crlf { "\r\n" } else { "\n" });
    line
}

fn same_value(got: &FieldValue<'_>, want: &Value) -> bool {
    match (got, want) {
        (FieldValue::Float(a), Value::Float(b)) => a.to_bits() == b.to_bits(),
        (FieldValue::Int(a), Value::Int(b)) => a == b,
        (FieldValue::UInt(a), Value::UInt(b)) => a == b,
        (FieldValue::String(a), Value::Str(b)) => a == b,
        (FieldValue::Bool(a), Value::Bool(b, _)) => a == b,
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn rendered_points_parse_back_equal(points in prop::collection::vec(point(), 1..6)) {
        let body: String = points.iter().map(render).collect();
        let default_time = 42;
        let batch = Batch::parse(body.as_bytes(), &Options::new(default_time))
            .map_err(|e| TestCaseError::fail(format!("{e}\n{body:?}")))?;
        prop_assert_eq!(batch.len(), points.len());
        for (got, want) in batch.points().zip(&points) {
            prop_assert_eq!(got.measurement(), want.measurement.as_str());
            let mut tags = want.tags.clone();
            tags.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            let got_tags: Vec<(String, String)> = got
                .tags()
                .iter()
                .map(|t| (t.key.to_string(), t.value.to_string()))
                .collect();
            prop_assert_eq!(got_tags, tags);
            prop_assert_eq!(got.fields().len(), want.fields.len());
            for (f, (k, v)) in got.fields().iter().zip(&want.fields) {
                prop_assert_eq!(f.key.as_ref(), k.as_str());
                prop_assert!(same_value(&f.value, v), "{:?} != {:?}", f.value, v);
            }
            prop_assert_eq!(got.time(), want.time.unwrap_or(default_time));
            prop_assert_eq!(got.time_given(), want.time.is_some());
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(input in prop::collection::vec(any::<u8>(), 0..300)) {
        check_both_parsers_agree(&input)?;
    }

    #[test]
    fn line_protocol_like_bytes_never_panic(
        input in prop::collection::vec(
            prop::sample::select(b"ab ,=\\\"\n\r\t#-.0123456789eEiutTfF\xff\xc3\xa9".to_vec()),
            0..200,
        )
    ) {
        check_both_parsers_agree(&input)?;
    }
}

/// Lines that never parse, whatever surrounds them (none holds a line feed or a quote).
const BAD_LINES: &[&[u8]] = &[
    b"bad",
    b"m v=",
    b"m,t v=1",
    b"m v=1 x",
    b",m v=1",
    b"m v=1,",
    b"m v=\xff",
    b"m,t=\\ v=1",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn partial_parse_keeps_every_good_point_and_names_every_bad_line(
        lines in prop::collection::vec(
            prop_oneof![
                3 => point().prop_map(Ok),
                1 => prop::sample::select(BAD_LINES).prop_map(Err),
            ],
            1..8,
        )
    ) {
        let mut body = Vec::new();
        let mut good = String::new();
        let mut bad_lines = Vec::new();
        for line in &lines {
            match line {
                Ok(point) => {
                    let text = render(point);
                    good.push_str(&text);
                    body.extend_from_slice(text.as_bytes());
                }
                Err(bad) => {
                    if !body.is_empty() && !body.ends_with(b"\n") {
                        body.push(b'\n');
                    }
                    let line = 1 + body.iter().filter(|&&b| b == b'\n').count() as u64;
                    bad_lines.push(line);
                    body.extend_from_slice(bad);
                    body.push(b'\n');
                }
            }
        }
        let options = Options::new(42);
        let want = Batch::parse(good.as_bytes(), &options)
            .map_err(|e| TestCaseError::fail(format!("{e}\n{good:?}")))?;
        let mut errors = Vec::new();
        let (got, failed) = Batch::parse_partial_reusing(
            &body, &options, &mut Default::default(), &mut errors, usize::MAX,
        );
        let want: Vec<String> = want.points().map(|p| format!("{p:?}")).collect();
        let got: Vec<String> = got.points().map(|p| format!("{p:?}")).collect();
        prop_assert_eq!(got, want);
        prop_assert_eq!(failed, bad_lines.len());
        let lines: Vec<u64> = errors.iter().map(|e| e.line()).collect();
        prop_assert_eq!(lines, bad_lines);
    }
}

/// The streaming parser and the batch parser give the same points or the same error, and an
/// error's position lies within the input; the partial parser gives the same points when the
/// whole input parses, and never more than one error per line otherwise.
fn check_both_parsers_agree(input: &[u8]) -> Result<(), TestCaseError> {
    let options = Options::new(0);
    let mut errors = Vec::new();
    let (partial, failed) =
        Batch::parse_partial_reusing(input, &options, &mut Default::default(), &mut errors, 5);
    prop_assert!(errors.len() == failed.min(5));
    for error in &errors {
        prop_assert!(error.offset() <= input.len());
    }
    let lines = 1 + input.iter().filter(|&&b| b == b'\n').count();
    prop_assert!(failed + partial.len() <= lines);
    if let Ok(whole) = Batch::parse(input, &options) {
        prop_assert_eq!(failed, 0);
        let a: Vec<String> = whole.points().map(|p| format!("{p:?}")).collect();
        let b: Vec<String> = partial.points().map(|p| format!("{p:?}")).collect();
        prop_assert_eq!(a, b);
    }
    let batch = Batch::parse(input, &options);
    let mut parser = Parser::new(input, options);
    let mut streamed = Vec::new();
    let mut stream_error = None;
    while let Some(point) = parser.next_point() {
        match point {
            Ok(p) => streamed.push(format!("{p:?}")),
            Err(e) => stream_error = Some(e),
        }
    }
    match (batch, stream_error) {
        (Ok(batch), None) => {
            let batched: Vec<String> = batch.points().map(|p| format!("{p:?}")).collect();
            prop_assert_eq!(batched, streamed);
        }
        (Err(a), Some(b)) => {
            prop_assert_eq!(&a, &b);
            prop_assert!(a.offset() <= input.len());
            prop_assert!(a.line() >= 1 && a.column() >= 1);
            let lines = 1 + input.iter().filter(|&&b| b == b'\n').count() as u64;
            prop_assert!(a.line() <= lines);
        }
        (a, b) => prop_assert!(false, "batch {:?} but stream error {:?}", a.err(), b),
    }
    Ok(())
}

#[test]
fn repeated_field_keys_merge_last_value_wins() {
    let batch = Batch::parse(b"m a=1,b=2,c=3,a=4,b=\"x\",a=t", &Options::new(0)).unwrap();
    let point = batch.points().next().unwrap();
    let fields: Vec<(&str, &FieldValue<'_>)> = point
        .fields()
        .iter()
        .map(|f| (f.key.as_ref(), &f.value))
        .collect();
    assert_eq!(
        fields,
        vec![
            ("a", &FieldValue::Bool(true)),
            ("b", &FieldValue::String("x".into())),
            ("c", &FieldValue::Float(3.0)),
        ]
    );
}

#[test]
fn many_distinct_field_keys_are_all_kept() {
    let body: String = (0..200).map(|i| format!("k{i}={i}i,")).collect();
    let line = format!("m {}", body.trim_end_matches(','));
    let batch = Batch::parse(line.as_bytes(), &Options::new(0)).unwrap();
    let point = batch.points().next().unwrap();
    assert_eq!(point.fields().len(), 200);
    for (i, f) in point.fields().iter().enumerate() {
        assert_eq!(f.key, format!("k{i}"));
        assert_eq!(f.value, FieldValue::Int(i as i64));
    }
}
