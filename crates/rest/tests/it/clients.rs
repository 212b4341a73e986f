//! Real clients, unchanged, against the REST API over the fixtures schema: Supabase's
//! postgrest-js (npm) and postgrest-py (PyPI), as installed by scripts/clients/install.sh
//! (missing: a failure under CI, a skip elsewhere).

use crate::common;

use common::{Served, fixtures};
use sluice_embedded::clients;
use sluice_rest::RestConfig;
use std::path::Path;
use std::process::Command;

fn script(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/clients")
        .join(name)
        .display()
        .to_string()
}

/// Runs `command` against a fresh fixtures database and checks it succeeds.
fn run_against(name: &str, command: Command) {
    run_with(name, &fixtures(), RestConfig::default(), command);
}

/// Runs `command` against a fresh database built by `setup`, served with `config`.
fn run_with(name: &str, setup: &str, config: RestConfig, mut command: Command) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let served = Served::start(name, setup, config)
            .await
            .expect("serving the fixtures");
        command.arg(format!("http://{}", served.address));
        let output = tokio::task::spawn_blocking(move || command.output())
            .await
            .expect("the client ran")
            .expect("the client started");
        served.finish().await;
        assert!(
            output.status.success(),
            "{name} failed:\nstdout: {}\nstderr: {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    });
}

#[test]
fn postgrest_js() {
    let Some(modules) = clients::require(clients::node_modules(), "@supabase/postgrest-js") else {
        return;
    };
    let mut command = Command::new("node");
    command
        .env("NODE_PATH", modules)
        .arg(script("postgrest_js.cjs"));
    run_against("postgrest_js", command);
}

#[test]
fn postgrest_py() {
    let Some(python) = clients::require(clients::python(), "postgrest (PyPI)") else {
        return;
    };
    let mut command = Command::new(python);
    command.arg(script("postgrest_py.py"));
    run_against("postgrest_py", command);
}

#[test]
fn postgrest_js_with_tokens_and_row_level_security() {
    let Some(modules) = clients::require(clients::node_modules(), "@supabase/postgrest-js") else {
        return;
    };
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/specs/auth");
    let setup = std::fs::read_to_string(suite.join("setup.sql")).expect("the auth suite's setup");
    let config = common::read_config(&suite).expect("the auth suite's config");
    let mut command = Command::new("node");
    command
        .env("NODE_PATH", modules)
        .arg(script("postgrest_js_auth.cjs"));
    run_with("postgrest_js_auth", &setup, config, command);
}
