//! A server restart is noticed as a broken connection, never a hang.
#![allow(clippy::unwrap_used)]

use sluice_embedded::{ClusterOptions, private_cluster};
use sluice_pg::Connection;
use std::time::{Duration, Instant};

#[tokio::test]
async fn restart_breaks_the_connection_and_new_ones_work() {
    let Some(cluster) = private_cluster(
        "restart_breaks_the_connection",
        ClusterOptions::temporary().tls(false).test_roles(false),
    ) else {
        return;
    };
    let url = cluster.url();
    let mut conn = Connection::connect(&url).await.unwrap();
    assert_eq!(conn.execute("SELECT 1", &[]).await.unwrap(), 1);
    cluster.restart().unwrap();
    let started = Instant::now();
    let result = tokio::time::timeout(Duration::from_secs(30), conn.execute("SELECT 1", &[])).await;
    let err = result
        .expect("a query after a restart must fail, not hang")
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(conn.is_broken(), "{err}");
    // Every later use says the connection is broken.
    let again = conn.execute("SELECT 1", &[]).await.unwrap_err();
    assert!(again.is_closed(), "{again}");
    let mut fresh = Connection::connect(&url).await.unwrap();
    assert_eq!(fresh.execute("SELECT 1", &[]).await.unwrap(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_stopped_mid_query_fails_the_query() {
    let Some(cluster) = private_cluster(
        "server_stopped_mid_query",
        ClusterOptions::temporary().tls(false).test_roles(false),
    ) else {
        return;
    };
    let mut conn = Connection::connect(&cluster.url()).await.unwrap();
    let query = tokio::spawn(async move {
        let r = conn.execute("SELECT pg_sleep(60)", &[]).await;
        (r.map_err(|e| e.to_string()), conn.is_broken())
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    tokio::task::block_in_place(|| cluster.stop_server()).unwrap();
    let (result, broken) = tokio::time::timeout(Duration::from_secs(30), query)
        .await
        .unwrap()
        .unwrap();
    assert!(result.is_err());
    assert!(broken);
    tokio::task::block_in_place(|| cluster.start_server()).unwrap();
    assert!(Connection::connect(&cluster.url()).await.is_ok());
}
