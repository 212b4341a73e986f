//! `ReadPools` on a private primary with a streaming replica: refusal of a primary, picking,
//! lag eviction while replay is paused, a stopped replica taken out and back in, and a promoted
//! one taken out.
#![allow(clippy::unwrap_used)]

use sluice_embedded::{ClusterOptions, private_cluster};
use sluice_pg::pool::{Pool, PoolSettings, ReadPools, ReplicaError, ReplicaState};
use std::time::{Duration, Instant};

async fn one_text(pool: &Pool, sql: &str) -> String {
    let mut conn = pool.get().await.map_err(|e| e.to_string()).unwrap();
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
        .set_acquire_timeout(Duration::from_secs(5));
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_naming_a_commit_position_see_that_commit() {
    use sluice_pg::pool::LsnOutcome;
    use sluice_pg::{ErrorKind, Lsn, SyncMode};
    let Some(mut cluster) = private_cluster(
        "read_your_writes",
        ClusterOptions::temporary().tls(false).test_roles(false),
    ) else {
        return;
    };
    cluster.start_replicas(1).unwrap();
    let primary = Pool::connect(&cluster.url(), PoolSettings::new()).unwrap();
    let pools = ReadPools::connect(
        primary.clone(),
        &[cluster.replicas()[0].url()],
        PoolSettings::new(),
        Duration::from_secs(60),
    )
    .await
    .unwrap();
    pools.set_lsn_wait(Duration::from_millis(300));
    let replica = pools.replicas()[0].clone();
    let multiplexer = replica.multiplexer().unwrap().clone();
    let count = |lsn: Lsn| {
        let multiplexer = multiplexer.clone();
        async move {
            multiplexer
                .query_replayed(lsn, None, "SELECT count(*)::text FROM ryw", Vec::new())
                .await
                .map(|rows| String::from_utf8(rows.get(0).unwrap().raw(0).unwrap().to_vec()))
        }
    };
    let outcome = |which: LsnOutcome| {
        pools
            .lsn_outcomes()
            .iter()
            .find(|(o, _)| *o == which)
            .map_or(0, |(_, n)| *n)
    };

    let mut conn = primary.get().await.unwrap();
    conn.batch_execute(
        "CREATE TABLE ryw (n int); \
         CREATE TABLE ryw_deferred (n int UNIQUE DEFERRABLE INITIALLY DEFERRED); \
         CREATE ROLE ryw_plain NOLOGIN",
    )
    .await
    .unwrap();
    // The position a commit reports: at or past what the primary had before it.
    let before = Lsn::parse(
        one_text(&primary, "SELECT pg_current_wal_lsn()::text")
            .await
            .as_bytes(),
    )
    .unwrap();
    let mut tx = conn.transaction().unwrap();
    tx.execute("INSERT INTO ryw VALUES (1)", &[]).await.unwrap();
    let first = tx.commit_lsn().await.unwrap().expect("a position");
    assert!(first > before, "{first} after {before}");
    // Nothing ran, nothing committed: no position.
    let tx = conn.transaction().unwrap();
    assert_eq!(tx.commit_lsn().await.unwrap(), None);
    // A commit that fails (a deferred unique violation) or rolls back (a failed statement)
    // reports an error, never a position.
    let mut tx = conn.transaction().unwrap();
    tx.execute("INSERT INTO ryw_deferred VALUES (1), (1)", &[])
        .await
        .unwrap();
    let failed = tx.commit_lsn().await.unwrap_err();
    assert_eq!(failed.code(), Some("23505"), "{failed}");
    let mut tx = conn.transaction().unwrap();
    assert!(tx.execute("SELECT 1/0", &[]).await.is_err());
    let rolled_back = tx.commit_lsn().await.unwrap_err();
    assert_eq!(rolled_back.kind(), ErrorKind::RolledBack, "{rolled_back}");
    // Any role may read the position.
    conn.batch_execute("SET ROLE ryw_plain").await.unwrap();
    conn.transaction().unwrap();
    conn.batch_execute("BEGIN; SELECT 1").await.unwrap();
    assert!(conn.commit_lsn().await.unwrap().is_some());
    conn.batch_execute("RESET ROLE").await.unwrap();

    // The replica gets there: a read naming the position is served by it, and sees the row.
    let lease = pools.pick_replayed(first).await;
    let lease = match lease {
        Some(lease) => lease,
        // Not there within 300 ms on a loaded machine: it is, eventually.
        None => {
            eventually("the replica replays the first commit", || {
                replica.replayed() >= Some(first)
            })
            .await;
            pools.pick_replayed(first).await.unwrap()
        }
    };
    assert_eq!(lease.index(), 0);
    drop(lease);
    assert_eq!(count(first).await.unwrap().unwrap(), "1");

    // Replay paused, a commit by a pipeline (the write and, in a later group, its position):
    // the replica cannot serve a read naming it; after the wait it goes to the primary.
    one_text(replica.pool(), "SELECT pg_wal_replay_pause()::text").await;
    let mut batch = conn.pipeline(SyncMode::Groups).await.unwrap();
    batch.query("INSERT INTO ryw VALUES (2)", &[]).unwrap();
    let at = batch.commit_position().unwrap();
    let results = batch.run().await.unwrap();
    assert!(results[0].is_ok());
    let second = Lsn::from_commit_result(results.get(at)).expect("a position");
    assert!(second > first);
    let primary_before = outcome(LsnOutcome::Primary);
    assert!(pools.pick_replayed(second).await.is_none());
    assert_eq!(outcome(LsnOutcome::Primary), primary_before + 1);
    // The guard refuses a read naming it on the replica, stale rows never come back.
    let refused = count(second).await.unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::NotReplayed, "{refused}");
    assert_eq!(count(first).await.unwrap().unwrap(), "1");

    // Replay resumed while a read waits: the replica serves it once it has replayed it.
    pools.set_lsn_wait(Duration::from_secs(30));
    let waiting = {
        let pools = pools.clone();
        tokio::spawn(async move { pools.pick_replayed(second).await.map(|l| l.index()) })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    one_text(replica.pool(), "SELECT pg_wal_replay_resume()::text").await;
    assert_eq!(waiting.await.unwrap(), Some(0));
    assert!(outcome(LsnOutcome::Waited) + outcome(LsnOutcome::Replayed) >= 2);
    assert_eq!(count(second).await.unwrap().unwrap(), "2");

    // Stopped: nothing known of it, no wait, the primary.
    cluster.replicas()[0].stop_server().unwrap();
    eventually("taken out when stopped", || !replica.is_healthy()).await;
    assert_eq!(replica.replayed(), None);
    assert!(pools.pick_replayed(first).await.is_none());
    drop(conn);
    pools.close().await;
    primary.close().await;
}
