//! `scripts/gateways-behind-haproxy` as part of the suite: two `sluice serve` against one
//! database behind HAProxy, one killed under load, the other carrying on, no acknowledged write
//! lost, a schema change reaching both through NOTIFY. Skipped (saying so) only where HAProxy is
//! missing and cannot be installed (not root); `scripts/clients/install.sh` installs it.
#![allow(clippy::unwrap_used)]

use sluice_embedded::{ClusterOptions, private_cluster};
use std::path::Path;
use std::process::Command;

#[test]
fn two_gateways_behind_haproxy_lose_no_acknowledged_write() {
    let Some(cluster) = private_cluster(
        "gateways",
        ClusterOptions::temporary().tls(false).test_roles(false),
    ) else {
        return;
    };
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/gateways-behind-haproxy");
    let mut command = Command::new("bash");
    command.arg(&script);
    for (name, _) in std::env::vars() {
        if name == "DATABASE_URL" || name.starts_with("SLUICE_") {
            command.env_remove(name);
        }
    }
    let output = command
        .env("SLUICE_BIN", env!("CARGO_BIN_EXE_sluice"))
        .env("DATABASE_URL", cluster.url())
        .env("SLUICE_LOG", "warn")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.status.code() == Some(77) {
        eprintln!("skipped: {stderr}");
        return;
    }
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("gateways-behind-haproxy: ok:"), "{stdout}");
    eprintln!("{stdout}");
}
