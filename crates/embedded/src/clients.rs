//! Where the real client programs that test suites drive live (`scripts/clients/install.sh`).

use std::path::PathBuf;

/// Overrides where the installed clients are looked for (default `<target dir>/clients`).
pub const CLIENTS_DIR_ENV: &str = "SLUICE_CLIENTS_DIR";

fn clients_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(CLIENTS_DIR_ENV) {
        return PathBuf::from(dir);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    target.join("clients")
}

/// The Python interpreter of the clients' virtual environment (redis-py, postgrest-py,
/// influxdb-client, influxdb), when installed.
pub fn python() -> Option<PathBuf> {
    let python = clients_dir().join("venv/bin/python");
    python.is_file().then_some(python)
}

/// The `node_modules` directory holding the JavaScript clients (postgrest-js, ioredis), for
/// `NODE_PATH`, when installed.
pub fn node_modules() -> Option<PathBuf> {
    let modules = clients_dir().join("node/node_modules");
    modules.is_dir().then_some(modules)
}

/// Whether a client that is missing should fail the test (under CI, where the test command
/// installs every client) rather than skip it with a message.
pub fn missing_client_fails() -> bool {
    std::env::var_os("CI").is_some()
}

/// `found`, or, when the client is missing: a panic under CI, else a `SKIP` line on stderr and
/// `None`. `what` names the client for the message.
pub fn require<T>(found: Option<T>, what: &str) -> Option<T> {
    if found.is_some() {
        return found;
    }
    let hint = "run scripts/clients/install.sh (the README's test command does)";
    assert!(!missing_client_fails(), "{what} is not installed: {hint}");
    eprintln!("SKIP: {what} is not installed: {hint}");
    None
}
