//! Computed fields and the schema cache's reload: a function over a table's row type made
//! after the server started becomes a field of the table once the DDL trigger's notification
//! has reloaded the cache (the spec suite `computed` pins the fields' behaviour).
#![allow(clippy::unwrap_used)]

use crate::common::send;
use sluice_http::testkit::spec::{create_database, drop_database, url_for};
use sluice_http::{Router, ServerOptions};
use sluice_pg::{Connection, Pool, PoolSettings};
use sluice_rest::RestConfig;
use sluice_rest::api::{RestApi, SchemaSource};
use sluice_rest::schema::SchemaHandle;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[tokio::test]
async fn a_function_made_after_start_becomes_a_computed_field_after_the_reload() {
    let base = sluice_embedded::test_database().url().to_owned();
    let dbname = create_database(&base, "rest", "computed_reload")
        .await
        .unwrap();
    let url = url_for(&base, &dbname, None);
    let mut admin = Connection::connect(&url).await.unwrap();
    admin
        .batch_execute(
            "CREATE TABLE people (id int PRIMARY KEY, first_name text, last_name text);
             INSERT INTO people VALUES (1, 'Ada', 'Lovelace');",
        )
        .await
        .unwrap();
    sluice_rest::schema::install_ddl_trigger(&mut admin)
        .await
        .unwrap();
    let config = RestConfig::default();
    let pool = Pool::connect(&url, PoolSettings::default()).unwrap();
    let handle = SchemaHandle::load(pool.clone(), sluice_rest::schema::LoadScope::of(&config))
        .await
        .unwrap();
    handle.spawn_listeners();
    let api = RestApi::new(pool.clone(), config, SchemaSource::Handle(handle));
    let mut router = Router::new();
    router.mount("", Arc::new(api));
    let server = crate::common::Listening::serve(router, ServerOptions::default())
        .await
        .unwrap();
    let address = server.address;

    let path = "/people?select=id,full_name";
    let before = send(address, "GET", path, &[], Vec::new(), false).await;
    assert_eq!(
        before.status,
        400,
        "{}",
        String::from_utf8_lossy(&before.body)
    );
    // The DDL's notification reaches only a session already listening: wait for the
    // listener's (a fixed sleep was too short when the suite loads the machine).
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let listening: i64 = admin
            .query_one(
                "SELECT count(*) FROM pg_catalog.pg_stat_activity \
                 WHERE datname = current_database() AND query = 'LISTEN pgrst'",
                &[],
            )
            .await
            .unwrap()
            .get(0)
            .unwrap();
        if listening > 0 {
            break;
        }
        assert!(Instant::now() < deadline, "the schema cache never listened");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    admin
        .batch_execute(
            "CREATE FUNCTION full_name(people) RETURNS text LANGUAGE sql STABLE \
             AS $$ SELECT $1.first_name || ' ' || $1.last_name $$",
        )
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let after = loop {
        let answer = send(address, "GET", path, &[], Vec::new(), false).await;
        if answer.status == 200 || Instant::now() > deadline {
            break answer;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(
        after.status,
        200,
        "{}",
        String::from_utf8_lossy(&after.body)
    );
    assert_eq!(
        after.json(),
        serde_json::json!([{"id": 1, "full_name": "Ada Lovelace"}])
    );

    server.stop().await;
    pool.close().await;
    drop(admin);
    drop_database(&base, &dbname).await;
}
