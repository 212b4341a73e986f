//! Runs the real `sluice lp parse` binary on standard input and checks its output, errors and
//! exit status.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn lp_parse(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .arg("lp")
        .arg("parse")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sluice starts");
    let written = child.stdin.take().expect("stdin is piped").write_all(stdin);
    // A usage error exits before reading standard input: the pipe may then be closed.
    if let Err(e) = written {
        assert_eq!(
            e.kind(),
            std::io::ErrorKind::BrokenPipe,
            "writing stdin: {e}"
        );
    }
    child.wait_with_output().expect("sluice finishes")
}

fn text(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).expect("UTF-8 output")
}

#[test]
fn prints_one_json_object_per_point() {
    let out = lp_parse(
        &[],
        b"cpu,host=a v=1.5 1465839830100400200\n# comment\n\nmem,z=1,a=2 used=3i,free=4u,ok=t,s=\"x\\\"y\" 7\n",
    );
    assert_eq!(text(&out.stderr), "");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stdout),
        concat!(
            r#"{"name": "cpu", "tags": [{"key": "host", "value": "a"}], "fields": [{"key": "v", "value": {"float": 1.5}}], "time": 1465839830100400200}"#,
            "\n",
            r#"{"name": "mem", "tags": [{"key": "a", "value": "2"}, {"key": "z", "value": "1"}], "fields": [{"key": "used", "value": {"int": 3}}, {"key": "free", "value": {"uint": 4}}, {"key": "ok", "value": {"bool": true}}, {"key": "s", "value": {"string": "x\"y"}}], "time": 7}"#,
            "\n",
        )
    );
}

#[test]
fn default_time_is_truncated_to_the_precision() {
    let out = lp_parse(
        &["--precision", "s", "--default-time", "1465839830100400200"],
        b"cpu v=1\ncpu v=2 10\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines: Vec<&str> = text(&out.stdout).lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(
        lines[0].ends_with(r#""time": 1465839830000000000}"#),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].ends_with(r#""time": 10000000000}"#),
        "{}",
        lines[1]
    );
}

#[test]
fn negative_default_time_and_ms_precision() {
    let out = lp_parse(&["--precision=ms", "--default-time", "-1"], b"cpu v=1\n");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).ends_with("\"time\": -1000000}\n"));
}

#[test]
fn without_default_time_uses_the_clock() {
    let out = lp_parse(&["--precision", "s"], b"cpu v=1\n");
    assert_eq!(out.status.code(), Some(0));
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let time = value["time"].as_i64().expect("time is an integer");
    assert!(time > 1_600_000_000_000_000_000, "{time}");
    assert_eq!(time % 1_000_000_000, 0);
}

#[test]
fn a_bad_line_prints_nothing_on_stdout_and_exits_1() {
    let out = lp_parse(&[], b"cpu v=1\ncpu v=2\ncpu,host= v=3\ncpu v=4\n");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "");
    assert_eq!(
        text(&out.stderr),
        "line 3:10: expected a value for tag \"host\", found a space (tag values cannot be empty: leave the tag out)\n"
    );
}

#[test]
fn invalid_utf8_is_reported_with_its_position() {
    let out = lp_parse(&[], b"cpu v=1\ncpu,h=\xff v=1\n");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "");
    assert_eq!(
        text(&out.stderr),
        "line 2:7: invalid UTF-8: line protocol must be UTF-8 text\n"
    );
}

#[test]
fn empty_input_prints_nothing_and_succeeds() {
    let out = lp_parse(&[], b"");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(out.stdout, b"");
}

#[test]
fn unknown_precision_is_a_usage_error() {
    let out = lp_parse(&["--precision", "h"], b"cpu v=1\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("expected ns, us, ms or s"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(out.stdout, b"");
}
