//! Shared helpers of the driver's integration tests: the test database and connections to it.
#![allow(dead_code, clippy::unwrap_used)]

use sluice_embedded::{TestDatabase, test_database};
use sluice_pg::Connection;
use std::sync::atomic::{AtomicU32, Ordering};

/// The process's test database (embedded cluster, or `DATABASE_URL`).
pub fn db() -> &'static TestDatabase {
    test_database()
}

/// A new connection as the superuser.
pub async fn connect() -> Connection {
    Connection::connect(db().url()).await.expect("connect to the test database")
}

/// A table name unique in this process, so tests running in parallel do not collide.
pub fn unique(prefix: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!("{prefix}_{}_{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// The text of field `i` of the first row.
pub fn text(rows: &sluice_pg::Rows, i: usize) -> Option<String> {
    rows.get(0).and_then(|r| r.raw(i)).map(|b| String::from_utf8_lossy(b).into_owned())
}
