//! Runs the REST API's spec suites (tests/specs/*/, each with a `config` file): each suite gets
//! a fresh database built by its setup.sql, the API served on 127.0.0.1:0 over the schema cache
//! loaded from it, and its exchanges sent over real HTTP (format: crates/http/tests/specs/README.md).

use crate::common;

use common::{Served, read_config};
use sluice_http::testkit::spec::{read_setup, run_spec_files, run_suites};
use std::path::Path;

#[test]
fn specs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/specs");
    run_suites(&dir, "config", |suite, name| async move {
        let config = read_config(&suite)?;
        let setup = read_setup(&suite)?.unwrap_or_default();
        let served = Served::start(&name, &setup, config).await?;
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut failures = Vec::new();
        let result = run_spec_files(&suite, root, served.address, &mut failures).await;
        served.finish().await;
        result.map(|()| failures)
    });
}
