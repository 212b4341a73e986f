//! Loading view files: bad files are refused with the file, the JSON path and the problem.

use sluice_http::view::{Problem, ViewError, load_file, load_slice};
use std::path::Path;

/// Loads `text` as `bad.json` and returns the error's JSON path and message.
fn refused(text: &str) -> (String, Problem, String) {
    match load_slice("views/bad.json", text.as_bytes()) {
        Ok(view) => panic!("accepted: {view:?}"),
        Err(error) => {
            let message = error.to_string();
            assert!(
                message.starts_with("views/bad.json: "),
                "the message names the file: {message}"
            );
            match error {
                ViewError::Invalid { path, problem, .. } => (path, problem, message),
                other => panic!("not an invalid-value error: {other}"),
            }
        }
    }
}

#[test]
fn unknown_keys_are_named_with_their_path() {
    let (path, problem, message) =
        refused(r#"{"sql": [{"path": [], "GET": "SELECT 1", "GTE": "SELECT 2"}]}"#);
    assert_eq!(path, "$.sql[0].GTE");
    assert!(matches!(problem, Problem::UnknownKey { ref key, .. } if key == "GTE"));
    assert!(message.contains("unknown key \"GTE\""), "{message}");

    let (path, _, _) = refused(r#"{"sql": [], "extra": 1}"#);
    assert_eq!(path, "$.extra");

    let (path, problem, _) = refused(
        r#"{"sql": [{"path": [1], "PUT": {"table": "t", "columns": {"film": {"key": true, "sorce": 1}}}}]}"#,
    );
    assert_eq!(path, "$.sql[0].PUT.columns.film.sorce");
    assert!(matches!(problem, Problem::UnknownKey { .. }));
}

#[test]
fn bad_values_are_named_with_their_path() {
    let cases: &[(&str, &str, Problem)] = &[
        (
            r#"{"sql": [{"path": [1, "/tags"], "PUT": {"table": "t", "columns": {"film": {"source": 2}}}}]}"#,
            "$.sql[0].PUT.columns.film.source",
            Problem::CaptureNotInPath(2),
        ),
        (
            r#"{"sql": [{"path": ["tags"], "GET": "SELECT 1"}]}"#,
            "$.sql[0].path[0]",
            Problem::BadPathEntry,
        ),
        (
            r#"{"sql": [{"path": [0], "GET": "SELECT 1"}]}"#,
            "$.sql[0].path[0]",
            Problem::BadPathEntry,
        ),
        (
            r#"{"sql": [{"path": [], "return": "xml", "GET": "SELECT 1"}]}"#,
            "$.sql[0].return",
            Problem::UnknownReturn("xml".into()),
        ),
        (
            r#"{"sql": [{"path": [], "GET": "SELECT 1"}, {"path": [], "precondition": ["like", 1, 2], "GET": "SELECT 1"}]}"#,
            "$.sql[1].precondition[0]",
            Problem::UnknownOperator("like".into()),
        ),
        (
            r#"{"sql": {"path": [1], "precondition": {"check": ["match", 1], "failed": 200}, "GET": "SELECT 1"}}"#,
            "$.sql.precondition.failed",
            Problem::BadStatus,
        ),
        (r#"{"sql": [{"path": []}]}"#, "$.sql[0]", Problem::NoMethod),
        (
            r#"{"sql": [{"GET": "SELECT 1"}]}"#,
            "$.sql[0]",
            Problem::MissingKey("path"),
        ),
        (
            r#"{"sql": [{"path": [], "GET": {"command": "SELECT $1", "arguments": [["body", "x"]]}}]}"#,
            "$.sql[0].GET.arguments[0]",
            Problem::BodySourceInGet,
        ),
        (
            r#"{"sql": [{"path": [], "PATCH": {"table": "t", "columns": {"a": {"insert": "maybe"}}}}]}"#,
            "$.sql[0].PATCH.columns.a.insert",
            Problem::BadInsert,
        ),
        (
            r#"{"sql": [{"path": [1], "PUT": {"table": "t", "existing": "SELECT 1", "columns": {"a": {}}}}]}"#,
            "$.sql[0].PUT",
            Problem::HalfSetReplace,
        ),
        (
            r#"{"sql": [{"path": [], "PATCH": {"table": "t", "columns": {"a": {"trim": "yes"}}}}]}"#,
            "$.sql[0].PATCH.columns.a.trim",
            Problem::WrongType {
                expected: "a boolean",
                found: "a string",
            },
        ),
        (
            r#"{"sql": [{"path": [], "DELETE": 5}]}"#,
            "$.sql[0].DELETE",
            Problem::WrongType {
                expected: "a string",
                found: "a number",
            },
        ),
        (
            r#"{"sql": [{"path": [], "POST": []}]}"#,
            "$.sql[0].POST",
            Problem::Empty,
        ),
        (
            r#"{"sql": [{"path": [], "PUT": {"table": "t", "columns": {"a": {"source": ["request", "cookies", "x"]}}}}]}"#,
            "$.sql[0].PUT.columns.a.source",
            Problem::BadSource,
        ),
        (
            r#"{"sql": [{"path": [], "PUT": {"table": "t", "columns": {"odd name": {"key": 1}}}}]}"#,
            "$.sql[0].PUT.columns[\"odd name\"].key",
            Problem::WrongType {
                expected: "a boolean",
                found: "a number",
            },
        ),
    ];
    for (text, expected_path, expected_problem) in cases {
        let (path, problem, message) = refused(text);
        assert_eq!(&path, expected_path, "{text}");
        assert_eq!(&problem, expected_problem, "{text}");
        assert!(message.contains(expected_path), "{message}");
    }
}

#[test]
fn json_schemas_must_compile() {
    let (path, problem, message) = refused(
        r#"{"sql": [{"path": [], "POST": {"table": "t", "columns": {"a": {"schema": {"type": "strang"}}}}}]}"#,
    );
    assert_eq!(path, "$.sql[0].POST.columns.a.schema");
    assert!(matches!(problem, Problem::Schema(_)), "{problem:?}");
    assert!(message.contains("invalid JSON Schema"), "{message}");

    let (path, _, _) = refused(
        r#"{"sql": [{"path": [], "POST": [{"table": "t", "columns": {"a": {}}}, {"table": "u", "columns": {"b": {}}, "schema": {"minimum": "x"}}]}]}"#,
    );
    assert_eq!(path, "$.sql[0].POST[1].schema");
}

#[test]
fn syntax_errors_give_line_and_column() {
    match load_slice("v.json", b"{\"sql\": [\n  {\"path\": [] \"GET\": 1}\n]}") {
        Err(ViewError::Syntax { line, column, .. }) => {
            assert_eq!(line, 2);
            assert!(column > 10, "{column}");
        }
        other => panic!("expected a syntax error, got {other:?}"),
    }
}

#[test]
fn a_missing_file_is_named() {
    let error = load_file("no/such/view.json").expect_err("no file");
    assert!(matches!(error, ViewError::Read { .. }));
    assert!(error.to_string().contains("no/such/view.json"), "{error}");
}

#[test]
fn good_files_load_into_the_model() {
    use sluice_http::view::model::{Expr, Failed, PathSegment, Return, Source};
    let view = load_slice(
        "good.json",
        br#"{"sql": [{
            "path": [1, "/tags"],
            "return": "object",
            "precondition": {"check": ["sql.exists", "SELECT 1 WHERE $1 = 'x'", ["match", 1]],
                             "failed": {"GET": "SELECT 'no' AS answer"}},
            "GET": {"command": "SELECT $1, $2", "arguments": [1, ["request", "headers", "X-A"]]},
            "PUT": {"table": "film_tags", "existing": "SELECT tag FROM film_tags WHERE film=$1",
                    "delete": "DELETE FROM film_tags WHERE film=$1 AND tag=$2",
                    "columns": {"tag": {"key": true}, "film": {"key": true, "source": 1}}},
            "DELETE": "DELETE FROM film_tags WHERE film=$1"
        }]}"#,
    )
    .expect("loads");
    let endpoint = &view.endpoints[0];
    assert_eq!(
        endpoint.path,
        vec![PathSegment::Capture(1), PathSegment::Literal("tags".into())]
    );
    assert_eq!(endpoint.returns, Return::Object);
    let precondition = endpoint.precondition.as_ref().expect("a precondition");
    assert!(matches!(precondition.check, Expr::SqlExists { .. }));
    let Failed::View(failed) = &precondition.failed else {
        panic!("a failed view");
    };
    assert_eq!(
        failed.get.as_ref().map(|g| g.arguments.clone()),
        Some(vec![Source::Capture(1)])
    );
    let get = endpoint.get.as_ref().expect("GET");
    assert_eq!(
        get.arguments,
        vec![Source::Capture(1), Source::Header("X-A".into())]
    );
    let put = &endpoint.put[0];
    let names: Vec<&str> = put.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, vec!["tag", "film"], "columns keep file order");
    assert_eq!(put.columns[1].source, Source::Capture(1));
    assert_eq!(put.columns[0].source, Source::Field("tag".into()));
    assert!(put.columns[0].trim);
}

#[test]
fn the_films_example_loads() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/films/films.json");
    let view = load_file(&file).expect("the films example loads");
    assert_eq!(view.endpoints.len(), 5);
}

mod arbitrary {
    use proptest::prelude::*;
    use serde_json::Value;

    /// JSON values biased towards view-file shapes: keys and strings from the format's words.
    fn value() -> impl Strategy<Value = Value> {
        let word = prop::sample::select(vec![
            "path",
            "GET",
            "PUT",
            "PATCH",
            "POST",
            "DELETE",
            "return",
            "object",
            "json-csv",
            "precondition",
            "check",
            "failed",
            "eq",
            "or",
            "and",
            "match",
            "header",
            "sql.exists",
            "table",
            "columns",
            "key",
            "source",
            "trim",
            "schema",
            "insert",
            "required",
            "body",
            "request",
            "headers",
            "/tags",
            "command",
            "arguments",
            "existing",
            "delete",
            "returning",
            "type",
            "SELECT 1",
        ])
        .prop_map(str::to_owned);
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-3i64..70000).prop_map(Value::from),
            word.clone().prop_map(Value::String),
        ];
        leaf.prop_recursive(5, 48, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::vec((word.clone(), inner), 0..5)
                    .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Whatever the file holds, loading answers Ok or a located error, never a panic.
        #[test]
        fn loading_never_panics(endpoints in value()) {
            let text = serde_json::json!({"sql": endpoints}).to_string();
            if let Err(error) = sluice_http::view::load_slice("p.json", text.as_bytes()) {
                prop_assert!(error.to_string().starts_with("p.json: "));
            }
        }

        #[test]
        fn bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
            let _ = sluice_http::view::load_slice("p.json", &bytes);
        }
    }
}
