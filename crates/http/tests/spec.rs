//! Runs the view spec suites of tests/specs (format in tests/specs/README.md): each suite gets a
//! fresh database, its views served on 127.0.0.1:0, and its exchanges sent over real HTTP.

mod spec_format;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use sluice_http::view::ViewMount;
use sluice_http::{Router, ServerOptions};
use sluice_pg::{Connection, Pool, PoolSettings};
use spec_format::{Exchange, Expected, parse_spec};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[test]
fn specs() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let failures = runtime.block_on(run_all());
    if !failures.is_empty() {
        panic!(
            "{} spec failure(s):\n\n{}",
            failures.len(),
            failures.join("\n\n")
        );
    }
}

fn specs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/specs")
}

/// Every directory under `dir` holding a `mounts` file, sorted.
fn find_suites(dir: &Path, found: &mut Vec<PathBuf>) {
    if dir.join("mounts").is_file() {
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
        find_suites(&child, found);
    }
}

async fn run_all() -> Vec<String> {
    let mut suites = Vec::new();
    find_suites(&specs_dir(), &mut suites);
    assert!(!suites.is_empty(), "no spec suites under {:?}", specs_dir());
    let filter = std::env::var("SPEC").ok();
    let mut failures = Vec::new();
    let mut ran = 0;
    for suite in suites {
        let name = suite
            .strip_prefix(specs_dir())
            .unwrap_or(&suite)
            .to_string_lossy()
            .into_owned();
        if filter.as_deref().is_some_and(|f| !name.contains(f)) {
            continue;
        }
        ran += 1;
        if let Err(e) = run_suite(&suite, &name, &mut failures).await {
            failures.push(format!("suite {name}: {e}"));
        }
    }
    assert!(ran > 0, "no suite matches SPEC={filter:?}");
    failures
}

/// The test cluster's URL with another database (and a role to run as).
fn url_for(base: &str, dbname: &str, role: Option<&str>) -> String {
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
fn read_setup(suite: &Path) -> Result<Option<String>, String> {
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

/// One line of `mounts`.
struct MountLine {
    prefix: String,
    file: PathBuf,
    role: Option<String>,
    /// Connect to a port where no server listens (503 answers).
    unreachable: bool,
}

fn parse_mounts(suite: &Path) -> Result<Vec<MountLine>, String> {
    let text = std::fs::read_to_string(suite.join("mounts")).map_err(|e| e.to_string())?;
    let mut mounts = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = line.split_whitespace();
        let (Some(prefix), Some(file)) = (words.next(), words.next()) else {
            return Err(format!("mounts:{}: expected `/prefix file.json`", i + 1));
        };
        let mut role = None;
        let mut unreachable = false;
        for setting in words {
            match setting.split_once('=') {
                Some(("role", name)) => role = Some(name.to_owned()),
                None if setting == "unreachable" => unreachable = true,
                _ => return Err(format!("mounts:{}: unknown setting {setting:?}", i + 1)),
            }
        }
        mounts.push(MountLine {
            prefix: prefix.to_owned(),
            file: suite.join(file),
            role,
            unreachable,
        });
    }
    Ok(mounts)
}

async fn run_suite(suite: &Path, name: &str, failures: &mut Vec<String>) -> Result<(), String> {
    let base = sluice_embedded::test_database().url().to_owned();
    let dbname = format!(
        "spec_{}_{}",
        name.replace(|c: char| !c.is_ascii_alphanumeric(), "_"),
        std::process::id()
    );
    let mut admin = Connection::connect(&base)
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
    let result = serve_suite(suite, &base, &dbname, failures).await;
    let _ = admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS {dbname} WITH (FORCE)"))
        .await;
    result
}

async fn serve_suite(
    suite: &Path,
    base: &str,
    dbname: &str,
    failures: &mut Vec<String>,
) -> Result<(), String> {
    let url = url_for(base, dbname, None);
    if let Some(setup) = read_setup(suite)? {
        let mut conn = Connection::connect(&url)
            .await
            .map_err(|e| format!("connecting: {e}"))?;
        conn.batch_execute(&setup)
            .await
            .map_err(|e| format!("setup.sql: {e}"))?;
    }
    let mut router = Router::new();
    let mut pools = Vec::new();
    for line in parse_mounts(suite)? {
        let url = if line.unreachable {
            "postgres://postgres@127.0.0.1:1/nowhere?connect_timeout=2".to_owned()
        } else {
            url_for(base, dbname, line.role.as_deref())
        };
        let pool =
            Pool::connect(&url, PoolSettings::default()).map_err(|e| format!("pool: {e}"))?;
        let mount = ViewMount::load_file(&line.file, pool.clone()).map_err(|e| e.to_string())?;
        router.mount(&line.prefix, Arc::new(mount));
        pools.push(pool);
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let address = listener.local_addr().map_err(|e| e.to_string())?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(sluice_http::run(
        listener,
        router,
        ServerOptions::default(),
        async move {
            let _ = stopped.await;
        },
    ));

    let mut files: Vec<PathBuf> = std::fs::read_dir(suite)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "spec"))
        .collect();
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
        let shown = file
            .strip_prefix(Path::new(env!("CARGO_MANIFEST_DIR")))
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
    let _ = stop.send(());
    let _ = server.await;
    for pool in pools {
        pool.close().await;
    }
    Ok(())
}

/// Sends one request on a new connection and checks the answer.
async fn run_exchange(address: std::net::SocketAddr, exchange: &Exchange) -> Result<(), String> {
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
    let body = String::from_utf8_lossy(&body).into_owned();
    check(&exchange.expected, status, &headers, &body)
}

fn check(
    expected: &Expected,
    status: u16,
    headers: &http::HeaderMap,
    body: &str,
) -> Result<(), String> {
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
    if let Some(problem) = spec_format::compare_bodies(&expected.body, body) {
        problems.push(problem);
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{}\n  body: {body}", problems.join("; ")))
    }
}
