//! `ReadPools` on a private primary with a streaming replica: refusal of a primary, picking,
//! lag eviction while replay is paused, a stopped replica taken out and back in, and a promoted
//! one taken out.
#![allow(clippy::unwrap_used)]

use sluice_embedded::{ClusterOptions, private_cluster};
use sluice_pg::pool::{Pool, PoolSettings, ReadPools, ReplicaError, ReplicaState};
use std::time::{Duration, Instant};

async fn one_text(pool: &Pool, sql: &str) -> String {
    let mut conn = pool.get().await.unwrap();
    let row = conn.query_one(sql, &[]).await.unwrap();
    String::from_utf8(row.raw(0).unwrap().to_vec()).unwrap()
}

/// Waits (up to 15 s) until `done` holds, checking every 100 ms.
async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{what}: still not after 15 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_go_to_a_healthy_replica_and_leave_a_lagging_or_stopped_one() {
    let Some(mut cluster) = private_cluster(
        "read_pools",
        ClusterOptions::temporary().tls(false).test_roles(false),
    ) else {
        return;
    };
    cluster.start_replicas(1).unwrap();
    let replica = &cluster.replicas()[0];
    let primary = Pool::connect(&cluster.url(), PoolSettings::new()).unwrap();

    // A primary given as a replica is refused, saying why.
    let refused = ReadPools::connect(
        primary.clone(),
        &[cluster.url()],
        PoolSettings::new(),
        Duration::from_secs(1),
    )
    .await
    .unwrap_err();
    assert!(matches!(
        refused,
        ReplicaError::NotAReplica { index: 0, .. }
    ));
    let message = refused.to_string();
    assert!(message.contains("not a replica"), "{message}");
    assert!(
        !message.contains("passfile"),
        "no URL in the message: {message}"
    );

    // A replica that does not answer is not refused: it starts out.
    let silent = ReadPools::connect(
        primary.clone(),
        &["postgres://nobody@127.0.0.1:1/none?connect_timeout=1".to_owned()],
        PoolSettings::new(),
        Duration::from_secs(1),
    )
    .await
    .unwrap();
    assert_eq!(silent.replicas()[0].state(), ReplicaState::Unreachable);
    assert!(silent.pick().is_none());
    drop(silent);

    // One connection per replica: the checks must not need it.
    let mut one = PoolSettings::new();
    one.set_max_size(1)
        .set_acquire_timeout(Duration::from_millis(500));
    let pools = ReadPools::connect(
        primary.clone(),
        &[replica.url()],
        one,
        Duration::from_secs(1),
    )
    .await
    .unwrap();
    let lease = pools.pick().expect("the replica is healthy");
    assert_eq!(lease.in_flight(), 1);
    assert_eq!(
        one_text(lease.pool(), "SELECT pg_is_in_recovery()::text").await,
        "true"
    );
    assert_eq!(
        one_text(lease.pool(), "SELECT current_setting('application_name')").await,
        "sluice-replica-0"
    );
    let served = pools.replicas()[0].clone();
    drop(lease);
    assert_eq!(served.in_flight(), 0);
    assert_eq!(served.served(), 1);

    // Its only connection busy for a while: the checks, on their own connection, keep it in.
    let busy = served.pool().get().await.unwrap();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(served.state(), ReplicaState::Healthy);
    drop(busy);

    // Replay paused and a write on the primary: out once it lags more than a second.
    one_text(lease_pool(&pools), "SELECT pg_wal_replay_pause()::text").await;
    let mut conn = primary.get().await.unwrap();
    conn.batch_execute("CREATE TABLE read_pools_t (n int); INSERT INTO read_pools_t VALUES (7)")
        .await
        .unwrap();
    drop(conn);
    eventually("taken out while replay is paused", || {
        pools.pick().is_none()
    })
    .await;
    assert_eq!(served.state(), ReplicaState::Lagging);
    assert!(served.lag() >= Duration::from_secs(1), "{:?}", served.lag());
    // Quiet primary, paused replica: it stays out.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(served.state(), ReplicaState::Lagging);

    one_text(lease_pool(&pools), "SELECT pg_wal_replay_resume()::text").await;
    eventually("back once replay resumed", || pools.pick().is_some()).await;
    assert_eq!(served.state(), ReplicaState::Healthy);
    assert_eq!(
        one_text(served.pool(), "SELECT n::text FROM read_pools_t").await,
        "7"
    );
    // Caught up and the primary quiet for longer than the allowed lag: still in.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(served.state(), ReplicaState::Healthy);

    // Stopped: out; started again: back.
    cluster.replicas()[0].stop_server().unwrap();
    eventually("taken out when stopped", || {
        served.state() == ReplicaState::Unreachable
    })
    .await;
    assert!(pools.pick().is_none());
    cluster.replicas()[0].start_server().unwrap();
    eventually("back when started", || pools.pick().is_some()).await;

    // Promoted while serving: it is a primary now, and reads leave it.
    one_text(lease_pool(&pools), "SELECT pg_promote()::text").await;
    eventually("taken out when promoted", || {
        served.state() == ReplicaState::NotInRecovery
    })
    .await;
    assert!(pools.pick().is_none());
    pools.close().await;
    primary.close().await;
}

/// The replica's pool, for statements aimed at it whatever its state.
fn lease_pool(pools: &ReadPools) -> &Pool {
    pools.replicas()[0].pool()
}
