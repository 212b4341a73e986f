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
fn run_against(name: &str, mut command: Command) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let served = Served::start(name, &fixtures(), RestConfig::default())
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
