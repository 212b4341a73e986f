//! Shared helpers of the driver's integration tests: the test database and connections to it.
#![allow(dead_code, unused_imports, clippy::unwrap_used)]

use sluice_embedded::{TestDatabase, test_database};

/// The process's test database (embedded cluster, or `DATABASE_URL`).
pub fn db() -> &'static TestDatabase {
    test_database()
}

/// A new connection as the superuser; a name unique in this process (the shared test kit).
pub use sluice_embedded::testkit::{connect, unique};

/// The text of field `i` of the first row.
pub fn text(rows: &sluice_pg::Rows, i: usize) -> Option<String> {
    rows.get(0)
        .and_then(|r| r.raw(i))
        .map(|b| String::from_utf8_lossy(b).into_owned())
}
