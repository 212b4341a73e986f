//! Runs the REST API's spec suites (tests/specs/*/, each with a `config` file): each suite gets
//! a fresh database built by its setup.sql, the API served on 127.0.0.1:0 over the schema cache
//! loaded from it, and its exchanges sent over real HTTP (format: crates/http/tests/specs/README.md).

use sluice_http::testkit::spec::{find_suites, read_setup, run_spec_files, url_for};
use sluice_http::{Router, ServerOptions};
use sluice_pg::{Connection, Pool, PoolSettings};
use sluice_rest::api::{RestApi, SchemaSource};
use sluice_rest::{RestConfig, TxEnd};
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

async fn run_all() -> Vec<String> {
    let mut suites = Vec::new();
    find_suites(&specs_dir(), "config", &mut suites);
    assert!(!suites.is_empty(), "no spec suites under {:?}", specs_dir());
    let filter = std::env::var("SPEC").ok();
    let mut failures = Vec::new();
    for suite in suites {
        let name = suite
            .strip_prefix(specs_dir())
            .unwrap_or(&suite)
            .to_string_lossy()
            .into_owned();
        if filter.as_deref().is_some_and(|f| !name.contains(f)) {
            continue;
        }
        if let Err(e) = run_suite(&suite, &name, &mut failures).await {
            failures.push(format!("suite {name}: {e}"));
        }
    }
    failures
}

/// The suite's `config`: `key = value` lines named like `[rest]`'s settings.
fn read_config(suite: &Path) -> Result<RestConfig, String> {
    let text = std::fs::read_to_string(suite.join("config")).map_err(|e| e.to_string())?;
    let mut config = RestConfig::default();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = line
            .split_once('=')
            .map(|(k, v)| (k.trim(), v.trim()))
            .ok_or_else(|| format!("config:{}: expected key = value", i + 1))?;
        match key {
            "schemas" => config.schemas = value.split(',').map(|s| s.trim().to_string()).collect(),
            "anon_role" => config.anon_role = Some(value.to_string()),
            "max_rows" => config.max_rows = value.parse().ok(),
            "aggregates_enabled" => config.aggregates_enabled = value == "true",
            "tx_end" => {
                config.tx_end = match value {
                    "commit" => TxEnd::Commit,
                    "commit-allow-override" => TxEnd::CommitAllowOverride,
                    "rollback" => TxEnd::Rollback,
                    "rollback-allow-override" => TxEnd::RollbackAllowOverride,
                    other => return Err(format!("config:{}: tx_end {other:?}", i + 1)),
                }
            }
            other => return Err(format!("config:{}: unknown key {other:?}", i + 1)),
        }
    }
    Ok(config)
}

async fn run_suite(suite: &Path, name: &str, failures: &mut Vec<String>) -> Result<(), String> {
    let base = sluice_embedded::test_database().url().to_owned();
    let dbname = format!(
        "rest_{}_{}",
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
    let config = read_config(suite)?;
    let url = url_for(base, dbname, None);
    let mut conn = Connection::connect(&url)
        .await
        .map_err(|e| format!("connecting: {e}"))?;
    if let Some(setup) = read_setup(suite)? {
        conn.batch_execute(&setup)
            .await
            .map_err(|e| format!("setup.sql: {e}"))?;
    }
    let cache = Arc::new(
        sluice_rest::schema::load(&mut conn, &config.schemas)
            .await
            .map_err(|e| format!("loading the schema cache: {e}"))?,
    );
    drop(conn);
    let pool = Pool::connect(&url, PoolSettings::default()).map_err(|e| format!("pool: {e}"))?;
    let api = RestApi::new(pool.clone(), config, SchemaSource::Fixed(cache));
    let mut router = Router::new();
    router.mount("", Arc::new(api));
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
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let result = run_spec_files(suite, root, address, failures).await;
    let _ = stop.send(());
    let _ = server.await;
    pool.close().await;
    result
}
