//! The DDL event trigger that tells every Sluice on a database to reload its schema cache: it
//! notifies `pgrst` for tables made and dropped, and stays quiet for temporary ones (the staging
//! tables of bulk writes), which would otherwise reload every gateway's cache on each write.
#![allow(clippy::unwrap_used)]

use sluice_http::testkit::spec::{create_database, drop_database, url_for};
use sluice_pg::Connection;
use std::time::Duration;

async fn next_payload(listener: &mut Connection) -> String {
    tokio::time::timeout(Duration::from_secs(10), listener.wait_for_notification())
        .await
        .expect("a notification within 10 s")
        .unwrap()
        .payload
}

#[tokio::test]
async fn the_ddl_trigger_notifies_for_tables_and_not_for_temporary_ones() {
    let base = sluice_embedded::test_database().url().to_owned();
    let dbname = create_database(&base, "rest", "ddl_notify").await.unwrap();
    let url = url_for(&base, &dbname, None);
    let mut admin = Connection::connect(&url).await.unwrap();
    sluice_rest::schema::install_ddl_trigger(&mut admin)
        .await
        .unwrap();
    let mut listener = Connection::connect(&url).await.unwrap();
    listener.batch_execute("LISTEN pgrst").await.unwrap();

    // Temporary tables made and dropped (as bulk writes stage their rows): nothing, so the
    // marker sent after them is the first notification.
    admin
        .batch_execute(
            "BEGIN; CREATE TEMP TABLE stage (n int) ON COMMIT DROP; COMMIT;
             CREATE TEMP TABLE kept (n int); ALTER TABLE kept ADD COLUMN m int; DROP TABLE kept;
             NOTIFY pgrst, 'marker'",
        )
        .await
        .unwrap();
    assert_eq!(next_payload(&mut listener).await, "marker");
    // A table, a column, a drop: each notifies.
    for ddl in [
        "CREATE TABLE real_table (n int)",
        "ALTER TABLE real_table ADD COLUMN m int",
        "DROP TABLE real_table",
        "CREATE SCHEMA other",
        "CREATE FUNCTION f(n int) RETURNS int LANGUAGE sql AS $$ SELECT n $$",
    ] {
        admin.batch_execute(ddl).await.unwrap();
        assert_eq!(next_payload(&mut listener).await, "reload schema", "{ddl}");
    }
    drop(listener);
    drop(admin);
    drop_database(&base, &dbname).await;
}
