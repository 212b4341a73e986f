//! Runs the REST API's spec suites (tests/specs/*/, each with a `config` file): each suite gets
//! a fresh database built by its setup.sql, the API served on 127.0.0.1:0 over the schema cache
//! loaded from it, and its exchanges sent over real HTTP (format: crates/http/tests/specs/README.md).

mod common;

use common::{Served, read_config};
use sluice_http::testkit::spec::{find_suites, read_setup, run_spec_files};
use std::path::{Path, PathBuf};

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

async fn run_suite(suite: &Path, name: &str, failures: &mut Vec<String>) -> Result<(), String> {
    let config = read_config(suite)?;
    let setup = read_setup(suite)?.unwrap_or_default();
    let served = Served::start(name, &setup, config).await?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let result = run_spec_files(suite, root, served.address, failures).await;
    served.finish().await;
    result
}
