//! Shared helpers of the driver's integration tests: the test database and connections to it.
#![allow(dead_code, unused_imports, clippy::unwrap_used)]

use sluice_embedded::{TestDatabase, test_database};

/// The process's test database (embedded cluster, or `DATABASE_URL`).
pub fn db() -> &'static TestDatabase {
    test_database()
}

/// A new connection as the superuser; a name unique in this process (the shared test kit).
pub use sluice_embedded::testkit::{connect, unique};

/// Two sessions in UTC with IntervalStyle postgres: one never prepares (parameters go as text
/// of unknown type), one prepares at once (parameters go in binary where the type allows).
pub async fn typed_sessions() -> [sluice_pg::Connection; 2] {
    let mut out = Vec::new();
    for threshold in [0, 1] {
        let mut config = sluice_pg::Config::parse(db().url()).unwrap();
        config.set_prepare_threshold(threshold);
        let mut conn = sluice_pg::Connection::connect_with(&config).await.unwrap();
        conn.batch_execute("SET TimeZone = 'UTC'; SET IntervalStyle = 'postgres'")
            .await
            .unwrap();
        out.push(conn);
    }
    out.try_into().unwrap()
}

/// The text of field `i` of the first row.
pub fn text(rows: &sluice_pg::Rows, i: usize) -> Option<String> {
    rows.get(0)
        .and_then(|r| r.raw(i))
        .map(|b| String::from_utf8_lossy(b).into_owned())
}
