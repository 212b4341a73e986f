//! Spec files (HTTP exchanges pinned in readable files, see crates/http/tests/specs/README.md):
//! parsing them, sending each exchange to a server and comparing the answer.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use std::path::{Path, PathBuf};

/// One request and the answer expected for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    /// The line of the exchange's request, for messages.
    pub line: usize,
    /// The `###` line above it.
    pub title: String,
    /// The request's method.
    pub method: String,
    /// The request's path and query string.
    pub path: String,
    /// The request's headers.
    pub headers: Vec<(String, String)>,
    /// The request's body.
    pub body: String,
    /// What must come back.
    pub expected: Expected,
}

/// The answer an exchange expects.
#[derive(Debug, Clone, PartialEq)]
pub struct Expected {
    /// The status.
    pub status: u16,
    /// Headers that must be present with these values (others are not checked).
    pub headers: Vec<(String, String)>,
    /// `None`: not checked (`<any>`).
    pub body: Option<String>,
}

fn header_line(line: &str) -> Option<(String, String)> {
    let (name, value) = line.split_once(':')?;
    let name = name.trim();
    if name.is_empty() || name.contains(' ') {
        return None;
    }
    Some((name.to_owned(), value.trim().to_owned()))
}

/// Parses a spec file; an error gives its line (1-based) and what is wrong.
pub fn parse_spec(text: &str) -> Result<Vec<Exchange>, (usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut starts: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with("###"))
        .map(|(i, _)| i)
        .collect();
    if starts.is_empty() {
        return Err((1, "no exchange (a line starting with ###)".into()));
    }
    starts.push(lines.len());
    let mut exchanges = Vec::new();
    for pair in starts.windows(2) {
        let (start, end) = (pair[0], pair[1]);
        exchanges.push(parse_exchange(&lines, start, end)?);
    }
    Ok(exchanges)
}

fn parse_exchange(lines: &[&str], start: usize, end: usize) -> Result<Exchange, (usize, String)> {
    let title = lines[start].trim_start_matches('#').trim().to_owned();
    let mut i = start + 1;
    while i < end && (lines[i].trim().is_empty() || lines[i].starts_with('#')) {
        i += 1;
    }
    if i >= end {
        return Err((start + 1, "the exchange has no request line".into()));
    }
    let request_line = i;
    let mut words = lines[i].split_whitespace();
    let (Some(method), Some(path), None) = (words.next(), words.next(), words.next()) else {
        return Err((
            i + 1,
            format!("expected `METHOD /path`, found {:?}", lines[i]),
        ));
    };
    i += 1;
    let mut headers = Vec::new();
    while i < end && !lines[i].trim().is_empty() && !lines[i].starts_with("HTTP ") {
        headers.push(header_line(lines[i]).ok_or((
            i + 1,
            format!("expected a header `Name: value`, found {:?}", lines[i]),
        ))?);
        i += 1;
    }
    let body_start = i;
    while i < end && !lines[i].starts_with("HTTP ") {
        i += 1;
    }
    if i >= end {
        return Err((
            request_line + 1,
            "the exchange has no `HTTP <status>` line".into(),
        ));
    }
    let mut body_lines: Vec<&str> = lines[body_start..i].to_vec();
    while body_lines.first().is_some_and(|l| l.trim().is_empty()) {
        body_lines.remove(0);
    }
    while body_lines.last().is_some_and(|l| l.trim().is_empty()) {
        body_lines.pop();
    }
    let body: String = body_lines.iter().map(|l| format!("{l}\n")).collect();
    let status: u16 = lines[i]["HTTP ".len()..].trim().parse().map_err(|_| {
        (
            i + 1,
            format!("expected `HTTP <status>`, found {:?}", lines[i]),
        )
    })?;
    i += 1;
    let mut expected_headers = Vec::new();
    while i < end && !lines[i].trim().is_empty() {
        expected_headers.push(header_line(lines[i]).ok_or((
            i + 1,
            format!("expected a header `Name: value`, found {:?}", lines[i]),
        ))?);
        i += 1;
    }
    let mut expected_body: Vec<&str> = lines[i.min(end)..end].to_vec();
    while expected_body.first().is_some_and(|l| l.trim().is_empty()) {
        expected_body.remove(0);
    }
    while expected_body.last().is_some_and(|l| l.trim().is_empty()) {
        expected_body.pop();
    }
    let expected_body = expected_body.join("\n");
    Ok(Exchange {
        line: request_line + 1,
        title,
        method: method.to_owned(),
        path: path.to_owned(),
        headers,
        body,
        expected: Expected {
            status,
            headers: expected_headers,
            body: (expected_body.trim() != "<any>").then_some(expected_body),
        },
    })
}

/// Whether `actual` matches `expected`, where the string `"<any>"` matches anything.
fn json_matches(expected: &serde_json::Value, actual: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (expected, actual) {
        (Value::String(s), _) if s == "<any>" => true,
        (Value::Object(e), Value::Object(a)) => {
            e.len() == a.len()
                && e.iter()
                    .all(|(k, v)| a.get(k).is_some_and(|av| json_matches(v, av)))
        }
        (Value::Array(e), Value::Array(a)) => {
            e.len() == a.len() && e.iter().zip(a).all(|(e, a)| json_matches(e, a))
        }
        (e, a) => e == a,
    }
}

/// `None` when the bodies match (see the README), else what differs.
pub fn compare_bodies(expected: &Option<String>, actual: &str) -> Option<String> {
    let expected = expected.as_ref()?;
    if expected.is_empty() {
        return (!actual.is_empty()).then(|| "expected an empty body".to_owned());
    }
    if let (Ok(e), Ok(a)) = (
        serde_json::from_str::<serde_json::Value>(expected),
        serde_json::from_str::<serde_json::Value>(actual),
    ) {
        return (!json_matches(&e, &a))
            .then(|| format!("JSON body differs; expected:\n{expected}"));
    }
    let trim = |s: &str| s.trim_end_matches('\n').to_owned();
    (trim(expected) != trim(actual)).then(|| format!("body differs; expected:\n{expected}"))
}

/// An expected body whose first line is `<bytes>`: the lines after it, joined with `\n`, with
/// the escapes `\n`, `\r`, `\t`, `\\` and `\xHH` decoded, which the body must be byte for byte
/// (a raw answer: leading or trailing newlines, bytes that are not UTF-8). `None` for any other
/// body; an error for a bad escape.
pub fn exact_bytes(expected: &str) -> Option<Result<Vec<u8>, String>> {
    let rest = expected.strip_prefix("<bytes>")?;
    let rest = match rest.strip_prefix('\n') {
        Some(rest) => rest,
        None if rest.is_empty() => rest,
        None => return None,
    };
    let mut out = Vec::with_capacity(rest.len());
    let mut bytes = rest.bytes();
    while let Some(b) = bytes.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        match bytes.next() {
            Some(b'n') => out.push(b'\n'),
            Some(b'r') => out.push(b'\r'),
            Some(b't') => out.push(b'\t'),
            Some(b'\\') => out.push(b'\\'),
            Some(b'x') => {
                let hex = [bytes.next(), bytes.next()];
                let value = match hex {
                    [Some(h), Some(l)] => std::str::from_utf8(&[h, l])
                        .ok()
                        .and_then(|h| u8::from_str_radix(h, 16).ok()),
                    _ => None,
                };
                match value {
                    Some(value) => out.push(value),
                    None => return Some(Err("<bytes>: \\x needs two hex digits".into())),
                }
            }
            other => {
                return Some(Err(format!(
                    "<bytes>: unknown escape \\{}",
                    other.map(char::from).unwrap_or(' ')
                )));
            }
        }
    }
    Some(Ok(out))
}

/// Runs every suite under `dir` (each a directory holding a file named `marker`; only those
/// whose name contains `$SPEC` when it is set) with `run`, one after another on a two-thread
/// runtime, and panics listing every failure. `run` gets the suite's directory and name and
/// gives the failures of its exchanges, or an error that stopped the suite.
pub fn run_suites<F, Fut>(dir: &Path, marker: &str, mut run: F)
where
    F: FnMut(PathBuf, String) -> Fut,
    Fut: std::future::Future<Output = Result<Vec<String>, String>>,
{
    let mut suites = Vec::new();
    find_suites(dir, marker, &mut suites);
    assert!(!suites.is_empty(), "no spec suites under {dir:?}");
    let filter = std::env::var("SPEC").ok();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let mut failures = Vec::new();
    let mut ran = 0;
    for suite in suites {
        let name = suite
            .strip_prefix(dir)
            .unwrap_or(&suite)
            .to_string_lossy()
            .into_owned();
        if filter.as_deref().is_some_and(|f| !name.contains(f)) {
            continue;
        }
        ran += 1;
        match runtime.block_on(run(suite.clone(), name.clone())) {
            Ok(found) => failures.extend(found),
            Err(e) => failures.push(format!("suite {name}: {e}")),
        }
    }
    assert!(ran > 0, "no suite matches SPEC={filter:?}");
    if !failures.is_empty() {
        panic!(
            "{} spec failure(s):\n\n{}",
            failures.len(),
            failures.join("\n\n")
        );
    }
}

/// A database of its own for suite `name` on the cluster at `base` (dropped first if a run
/// before left it): its name.
pub async fn create_database(base: &str, prefix: &str, name: &str) -> Result<String, String> {
    let dbname = format!(
        "{prefix}_{}_{}",
        name.replace(|c: char| !c.is_ascii_alphanumeric(), "_"),
        std::process::id()
    );
    let mut admin = sluice_pg::Connection::connect(base)
        .await
        .map_err(|e| format!("connecting: {e}"))?;
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS {dbname}"))
        .await
        .map_err(|e| format!("dropping database {dbname}: {e}"))?;
    admin
        .batch_execute(&format!("CREATE DATABASE {dbname}"))
        .await
        .map_err(|e| format!("creating database {dbname}: {e}"))?;
    Ok(dbname)
}

/// Drops a suite's database, sessions and all.
pub async fn drop_database(base: &str, dbname: &str) {
    if let Ok(mut admin) = sluice_pg::Connection::connect(base).await {
        let _ = admin
            .batch_execute(&format!("DROP DATABASE IF EXISTS {dbname} WITH (FORCE)"))
            .await;
    }
}

/// Every directory under `dir` holding a file named `marker`, sorted.
pub fn find_suites(dir: &Path, marker: &str, found: &mut Vec<PathBuf>) {
    if dir.join(marker).is_file() {
        found.push(dir.to_owned());
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut children: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    children.sort();
    for child in children {
        find_suites(&child, marker, found);
    }
}

/// The test cluster's URL with another database (and a role to run as).
pub fn url_for(base: &str, dbname: &str, role: Option<&str>) -> String {
    let (without_query, query) = base.split_once('?').unwrap_or((base, ""));
    let after_scheme = without_query.find("://").map_or(0, |i| i + 3);
    let host_end = without_query[after_scheme..]
        .find('/')
        .map_or(without_query.len(), |i| after_scheme + i);
    let mut url = format!("{}/{dbname}", &without_query[..host_end]);
    let mut params: Vec<String> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect();
    if let Some(role) = role {
        params.push(format!("options=-c%20role%3D{role}"));
    }
    if !params.is_empty() {
        url.push('?');
        url.push_str(&params.join("&"));
    }
    url
}

/// `setup.sql` with each `\\i file.sql` line replaced by that file (relative to the suite).
pub fn read_setup(suite: &Path) -> Result<Option<String>, String> {
    let Ok(text) = std::fs::read_to_string(suite.join("setup.sql")) else {
        return Ok(None);
    };
    let mut sql = String::with_capacity(text.len());
    for line in text.lines() {
        match line.trim().strip_prefix("\\i ") {
            Some(file) => {
                let included = std::fs::read_to_string(suite.join(file.trim()))
                    .map_err(|e| format!("setup.sql: \\i {file}: {e}"))?;
                sql.push_str(&included);
            }
            None => sql.push_str(line),
        }
        sql.push('\n');
    }
    Ok(Some(sql))
}

/// The suite's `*.spec` files in name order.
pub fn spec_files(suite: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(suite)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "spec"))
        .collect();
    files.sort();
    Ok(files)
}

/// Runs every exchange of every spec file of `suite` against `address`; mismatches go to
/// `failures` as `file:line (title): what differed`, file paths shown relative to `root`.
pub async fn run_spec_files(
    suite: &Path,
    root: &Path,
    address: std::net::SocketAddr,
    failures: &mut Vec<String>,
) -> Result<(), String> {
    for file in spec_files(suite)? {
        let text = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
        let shown = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .display()
            .to_string();
        let exchanges = match parse_spec(&text) {
            Ok(exchanges) => exchanges,
            Err((line, message)) => {
                failures.push(format!("{shown}:{line}: {message}"));
                continue;
            }
        };
        for exchange in exchanges {
            if let Err(message) = run_exchange(address, &exchange).await {
                failures.push(format!(
                    "{shown}:{} ({}): {message}",
                    exchange.line, exchange.title
                ));
            }
        }
    }
    Ok(())
}

/// Sends one request on a new connection and checks the answer.
pub async fn run_exchange(
    address: std::net::SocketAddr,
    exchange: &Exchange,
) -> Result<(), String> {
    let stream = tokio::net::TcpStream::connect(address)
        .await
        .map_err(|e| format!("connecting: {e}"))?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .map_err(|e| format!("handshake: {e}"))?;
    tokio::spawn(connection);
    let mut request = http::Request::builder()
        .method(exchange.method.as_str())
        .uri(&exchange.path)
        .header(http::header::HOST, address.to_string());
    for (name, value) in &exchange.headers {
        request = request.header(name, value);
    }
    let request = request
        .body(Full::new(Bytes::from(exchange.body.clone())))
        .map_err(|e| format!("building the request: {e}"))?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| format!("sending: {e}"))?;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .map_err(|e| format!("reading the body (status {status}): {e}"))?;
    check(&exchange.expected, status, &headers, &body)
}

fn check(
    expected: &Expected,
    status: u16,
    headers: &http::HeaderMap,
    raw: &[u8],
) -> Result<(), String> {
    let body = String::from_utf8_lossy(raw);
    let mut problems = Vec::new();
    if status != expected.status {
        problems.push(format!("status {status}, expected {}", expected.status));
    }
    for (name, value) in &expected.headers {
        let actual: Vec<&str> = headers
            .get_all(name.as_str())
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect();
        if !actual.contains(&value.as_str()) {
            problems.push(format!("header {name}: {actual:?}, expected {value:?}"));
        }
    }
    let problem = match expected.body.as_deref().and_then(exact_bytes) {
        Some(Ok(bytes)) => {
            (bytes != raw).then(|| format!("body differs; expected \"{}\"", bytes.escape_ascii()))
        }
        Some(Err(problem)) => Some(problem),
        None => compare_bodies(&expected.body, &body),
    };
    if let Some(problem) = problem {
        problems.push(problem);
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{}\n  body: {body}", problems.join("; ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exchanges_parse_with_lines_headers_and_bodies() {
        let text = "# a comment\n### first\nPUT /a/b\nContent-Type: application/csj\n\n\"x\"\n1\n\nHTTP 200\nContent-Type: application/json\n\n{\"records\": 1}\n\n### second\nGET /a\n\nHTTP 404\n\n<any>\n";
        let exchanges = parse_spec(text).expect("parses");
        assert_eq!(exchanges.len(), 2);
        assert_eq!(exchanges[0].line, 3);
        assert_eq!(exchanges[0].method, "PUT");
        assert_eq!(exchanges[0].body, "\"x\"\n1\n");
        assert_eq!(exchanges[0].expected.status, 200);
        assert_eq!(
            exchanges[0].expected.body.as_deref(),
            Some("{\"records\": 1}")
        );
        assert_eq!(exchanges[1].body, "");
        assert_eq!(exchanges[1].expected.body, None);
    }

    #[test]
    fn bodies_compare_as_json_with_wildcards_or_as_text() {
        let some = |s: &str| Some(s.to_owned());
        assert_eq!(
            compare_bodies(&some("{\"a\": 1, \"b\": \"<any>\"}"), "{\"b\":[2],\"a\":1}"),
            None
        );
        assert!(compare_bodies(&some("{\"a\": 1}"), "{\"a\":2}").is_some());
        assert!(compare_bodies(&some("{\"a\": 1}"), "{\"a\":1,\"c\":2}").is_some());
        assert_eq!(compare_bodies(&some("\"a\"\n1"), "\"a\"\n1\n"), None);
        assert!(compare_bodies(&some("a,b"), "a,c\n").is_some());
        assert!(compare_bodies(&some(""), "x").is_some());
        assert_eq!(compare_bodies(&None, "x"), None);
    }

    #[test]
    fn exact_bodies_decode_their_escapes() {
        assert_eq!(
            exact_bytes("<bytes>\n\\nab\\x00\\xff\nc\\t\\\\\\n"),
            Some(Ok(b"\nab\x00\xff\nc\t\\\n".to_vec()))
        );
        assert_eq!(exact_bytes("<bytes>"), Some(Ok(Vec::new())));
        assert!(exact_bytes("<bytes>\n\\xg1").is_some_and(|r| r.is_err()));
        assert_eq!(exact_bytes("{\"a\": 1}"), None);
    }
}
