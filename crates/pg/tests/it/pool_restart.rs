//! The pool across a server restart and a server outage, on a private cluster: every request
//! either succeeds or fails with a clear error, nothing hangs, and the pool recovers by itself.
#![allow(clippy::unwrap_used)]

use sluice_embedded::{Cluster, ClusterOptions, private_cluster};
use sluice_pg::pool::{Pool, PoolError, PoolErrorKind, PoolSettings};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

fn cluster(name: &str) -> Option<Cluster> {
    private_cluster(
        name,
        ClusterOptions::temporary().tls(false).test_roles(false),
    )
}

/// What one request ended with.
enum Outcome {
    Ok,
    /// The pool gave no connection (database unavailable, or a timeout).
    Pool(PoolError),
    /// The request failed on its connection.
    Query(sluice_pg::Error),
}

async fn one_request(pool: &Pool) -> Outcome {
    let mut conn = match pool.get().await {
        Ok(conn) => conn,
        Err(e) => return Outcome::Pool(e),
    };
    match conn
        .query_one("SELECT count(*) FROM generate_series(1, $1::int)", &[&50])
        .await
    {
        Ok(row) if row.get::<i64>(0).ok() == Some(50) => Outcome::Ok,
        Ok(_) => panic!("a wrong answer"),
        Err(e) => Outcome::Query(e),
    }
}

/// Whether a failed request's error says plainly what happened: the connection was lost or the
/// server is shutting down / starting up (SQLSTATE class 57), or the database is unavailable.
fn clear_query_error(e: &sluice_pg::Error) -> bool {
    e.is_closed() || e.code().is_some_and(|c| c.starts_with("57"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_under_load_recovers_by_itself() {
    const MAX: usize = 4;
    let Some(cluster) = cluster("pool_restart_under_load") else {
        return;
    };
    let mut settings = PoolSettings::new();
    settings
        .set_max_size(MAX)
        .set_acquire_timeout(Duration::from_secs(10));
    let pool = Pool::connect(&cluster.url(), settings).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let successes = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let (pool, stop, successes) = (pool.clone(), stop.clone(), successes.clone());
        tasks.push(tokio::spawn(async move {
            let (mut lost, mut unavailable, mut other) = (0u64, 0u64, Vec::new());
            while !stop.load(Ordering::Relaxed) {
                match one_request(&pool).await {
                    Outcome::Ok => {
                        successes.fetch_add(1, Ordering::Relaxed);
                    }
                    Outcome::Query(e) if clear_query_error(&e) => lost += 1,
                    Outcome::Pool(e) if e.kind() == PoolErrorKind::Unavailable => {
                        assert!(e.to_string().starts_with("database unavailable"), "{e}");
                        unavailable += 1;
                        // A caller would answer 503 here; don't spin.
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                    Outcome::Query(e) => other.push(e.to_string()),
                    Outcome::Pool(e) => other.push(e.to_string()),
                }
            }
            (lost, unavailable, other)
        }));
    }
    while successes.load(Ordering::Relaxed) < 200 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::task::block_in_place(|| cluster.restart()).unwrap();
    let back = Instant::now();
    let before = successes.load(Ordering::Relaxed);
    while successes.load(Ordering::Relaxed) == before && back.elapsed() < Duration::from_secs(30) {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let recovered_after = back.elapsed();
    // Let the load run on the restarted server for a while.
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.store(true, Ordering::Relaxed);
    let (mut lost, mut unavailable) = (0, 0);
    for t in tasks {
        let (l, u, other) = t.await.unwrap();
        assert!(other.is_empty(), "unclear errors: {other:?}");
        lost += l;
        unavailable += u;
    }
    assert!(
        recovered_after < Duration::from_secs(2),
        "requests succeeded again {recovered_after:?} after the server was back"
    );
    // Each connection open at the restart failed at most the one request that found it broken.
    assert!(lost <= MAX as u64, "{lost} requests lost their connection");
    let status = pool.status();
    assert!(status.size <= MAX, "{status:?}");
    eprintln!(
        "restart: {lost} requests lost their connection, {unavailable} found the database \
         unavailable, recovered {recovered_after:?} after the server was back; {status:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_the_server_is_down_acquires_fail_fast() {
    let Some(cluster) = cluster("pool_server_down") else {
        return;
    };
    let mut settings = PoolSettings::new();
    settings
        .set_max_size(2)
        // A hang would show up as a timeout, which the assertions below refuse.
        .set_acquire_timeout(Duration::from_secs(60))
        .set_health_check_interval(Duration::ZERO);
    let pool = Pool::connect(&cluster.url(), settings).unwrap();
    drop(pool.get().await.unwrap());
    tokio::task::block_in_place(|| cluster.stop_server()).unwrap();
    // The idle connection is found dead before it is handed out; opening a new one fails.
    let err = pool.get().await.unwrap_err();
    assert_eq!(err.kind(), PoolErrorKind::Unavailable, "{err}");
    assert!(err.to_string().starts_with("database unavailable"), "{err}");
    assert!(err.connect_error().is_some());
    // Later acquires fail at once too, quoting the last connection error.
    for _ in 0..20 {
        let err = pool.get().await.unwrap_err();
        assert_eq!(err.kind(), PoolErrorKind::Unavailable, "{err}");
    }
    let status = pool.status();
    assert_eq!((status.size, status.timeouts), (0, 0), "{status:?}");
    assert!(status.unavailable >= 21);
    tokio::task::block_in_place(|| cluster.start_server()).unwrap();
    let mut recovered = None;
    for _ in 0..1000 {
        if let Ok(mut conn) = pool.get().await {
            recovered = Some(conn.execute("SELECT 1", &[]).await.unwrap());
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(recovered, Some(1));
}
