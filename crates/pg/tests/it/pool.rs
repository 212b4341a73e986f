//! The connection pool against a real server: fairness, timeouts, expiry, clean hand-offs,
//! abandoned requests, broken connections, and no leaks under random cancellations.
#![allow(clippy::unwrap_used)]

use crate::common;

use sluice_pg::pool::{Pool, PoolErrorKind, PoolSettings, Reset};
use sluice_pg::{Config, Connection, TransactionStatus};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A pool on the test database whose connections carry a unique application_name, so the
/// server's view of them can be counted.
fn pool_with(settings: &PoolSettings) -> (Pool, String) {
    let app = common::unique("pool");
    let mut config = Config::parse(common::db().url()).unwrap();
    config.set_application_name(&app);
    (Pool::new(config, settings.clone()), app)
}

fn settings(max: usize) -> PoolSettings {
    let mut s = PoolSettings::new();
    s.set_max_size(max);
    s
}

/// Waits (bounded) until `cond` holds; false if it never did.
async fn eventually(mut cond: impl FnMut() -> bool) -> bool {
    for _ in 0..1000 {
        if cond() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    cond()
}

async fn backends_named(admin: &mut Connection, app: &str) -> i64 {
    let row = admin
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1",
            &[&app],
        )
        .await
        .unwrap();
    row.get(0).unwrap()
}

#[tokio::test]
async fn waiters_are_served_first_come_first_served() {
    let (pool, _) = pool_with(&settings(2));
    let held = [pool.get().await.unwrap(), pool.get().await.unwrap()];
    let order = Arc::new(Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for i in 0..12 {
        let (waiter, order) = (pool.clone(), order.clone());
        tasks.push(tokio::spawn(async move {
            let mut conn = waiter.get().await.unwrap();
            order.lock().unwrap().push(i);
            conn.execute("SELECT 1", &[]).await.unwrap();
        }));
        // Each waiter is queued before the next one arrives.
        while pool.status().waiting < i + 1 {
            tokio::task::yield_now().await;
        }
    }
    assert_eq!(pool.status().waiting, 12);
    drop(held);
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(*order.lock().unwrap(), (0..12).collect::<Vec<_>>());
    let status = pool.status();
    assert_eq!((status.size, status.idle, status.waiting), (2, 2, 0));
}

#[tokio::test]
async fn a_newcomer_does_not_barge_ahead_of_a_waiter() {
    let (pool, _) = pool_with(&settings(1));
    let held = pool.get().await.unwrap();
    let waiter = tokio::spawn({
        let pool = pool.clone();
        async move { pool.get().await.unwrap().process_id() }
    });
    while pool.status().waiting < 1 {
        tokio::task::yield_now().await;
    }
    let pid = held.process_id();
    drop(held);
    assert!(
        pool.try_get().is_none(),
        "the waiter was given the connection"
    );
    assert_eq!(waiter.await.unwrap(), pid);
}

#[tokio::test]
async fn acquire_timeout_names_the_pool_state() {
    let mut s = settings(1);
    s.set_acquire_timeout(Duration::from_millis(200));
    let (pool, _) = pool_with(&s);
    let held = pool.get().await.unwrap();
    let err = pool.get().await.unwrap_err();
    assert_eq!(err.kind(), PoolErrorKind::Timeout);
    let text = err.to_string();
    assert!(text.contains("timed out after"), "{text}");
    assert!(
        text.contains("1 of at most 1 connections open, 1 busy, 0 idle"),
        "{text}"
    );
    assert_eq!(pool.status().timeouts, 1);
    assert_eq!(pool.status().waiting, 0);
    // The driver's error type carries it too.
    let driver: sluice_pg::Error = err.into();
    assert_eq!(driver.kind(), sluice_pg::ErrorKind::Timeout);
    let pid = held.process_id();
    drop(held);
    assert_eq!(pool.get().await.unwrap().process_id(), pid);
    assert_eq!(pool.status().size, 1);
}

#[tokio::test]
async fn a_full_queue_of_waiters_refuses_at_once_and_the_waiters_are_served() {
    let mut s = settings(1);
    s.set_max_waiting(2)
        .set_acquire_timeout(Duration::from_secs(10));
    let (pool, _) = pool_with(&s);
    let held = pool.get().await.unwrap();
    let waiters: Vec<_> = (0..2)
        .map(|_| {
            let pool = pool.clone();
            tokio::spawn(async move { pool.get().await.map(|c| c.process_id()) })
        })
        .collect();
    assert!(eventually(|| pool.status().waiting == 2).await);
    let started = std::time::Instant::now();
    let err = pool.get().await.unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "refused at once"
    );
    assert_eq!(err.kind(), PoolErrorKind::Overloaded);
    let text = err.to_string();
    assert!(text.contains("2 callers waiting"), "{text}");
    assert_eq!(pool.status().overloaded, 1);
    let pid = held.process_id();
    drop(held);
    for waiter in waiters {
        assert_eq!(waiter.await.unwrap().unwrap(), pid);
    }
    assert_eq!(pool.status().waiting, 0);
}
#[tokio::test]
async fn an_expired_connection_is_replaced() {
    let mut s = settings(2);
    s.set_max_lifetime(Some(Duration::from_millis(300)))
        .set_health_check_interval(Duration::from_millis(50));
    let (pool, _) = pool_with(&s);
    let first = pool.get().await.unwrap().process_id();
    tokio::time::sleep(Duration::from_millis(400)).await;
    let mut conn = pool.get().await.unwrap();
    assert_ne!(conn.process_id(), first);
    assert_eq!(conn.execute("SELECT 1", &[]).await.unwrap(), 1);
    let status = pool.status();
    assert!(status.closed >= 1 && status.created >= 2, "{status:?}");
}

#[tokio::test]
async fn idle_connections_close_down_to_min_idle() {
    let mut s = settings(4);
    s.set_idle_timeout(Some(Duration::from_millis(200)))
        .set_health_check_interval(Duration::from_millis(20))
        .set_min_idle(1);
    let (pool, app) = pool_with(&s);
    // The background task opens min_idle connections without being asked.
    assert!(eventually(|| pool.status().idle == 1).await);
    let held: Vec<_> = futures_join(&pool, 3).await;
    drop(held);
    assert!(pool.status().idle >= 3);
    assert!(
        eventually(|| pool.status().idle == 1).await,
        "{:?}",
        pool.status()
    );
    let status = pool.status();
    assert_eq!(status.size, 1);
    assert_eq!(status.created - status.closed, 1);
    let mut admin = common::connect().await;
    let mut on_server = 0;
    for _ in 0..500 {
        on_server = backends_named(&mut admin, &app).await;
        if on_server == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(on_server, 1);
}

async fn futures_join(pool: &Pool, n: usize) -> Vec<sluice_pg::PooledConnection> {
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(pool.get().await.unwrap());
    }
    out
}

#[tokio::test]
async fn the_next_caller_sees_no_transaction_and_a_reset_session() {
    let mut admin = common::connect().await;
    let table = common::unique("pool_tx");
    admin
        .batch_execute(&format!("CREATE TABLE {table} (v int)"))
        .await
        .unwrap();
    let (pool, app) = pool_with(&settings(1));
    let (pid, cached) = {
        let mut conn = pool.get().await.unwrap();
        for i in 0..6 {
            conn.query_one("SELECT $1::int + 1", &[&i]).await.unwrap();
        }
        conn.batch_execute(
            "SET application_name = 'dirty'; SET work_mem = '77MB'; \
             CREATE TEMP TABLE pool_tmp (v int); LISTEN pool_chan; \
             SELECT pg_advisory_lock(424242)",
        )
        .await
        .unwrap();
        conn.batch_execute("BEGIN; DECLARE pool_cur CURSOR WITH HOLD FOR SELECT 1; COMMIT")
            .await
            .unwrap();
        conn.batch_execute(&format!("BEGIN; INSERT INTO {table} VALUES (1)"))
            .await
            .unwrap();
        assert_eq!(conn.transaction_status(), TransactionStatus::InTransaction);
        assert!(conn.cached_statements() >= 1);
        (conn.process_id(), conn.cached_statements())
    };
    let mut conn = pool.get().await.unwrap();
    assert_eq!(conn.process_id(), pid, "the same connection, reused");
    let rows = conn
        .query(
            &format!(
                "SELECT (SELECT count(*) FROM {table}), current_setting('application_name'), \
                 current_setting('work_mem'), to_regclass('pg_temp.pool_tmp') IS NULL, \
                 (SELECT count(*) FROM pg_listening_channels()), \
                 (SELECT count(*) FROM pg_cursors WHERE name = 'pool_cur')"
            ),
            &[],
        )
        .await
        .unwrap();
    let row = rows.get(0).unwrap();
    assert_eq!(
        row.get::<i64>(0).unwrap(),
        0,
        "the open insert was rolled back"
    );
    assert_eq!(row.get::<&str>(1).unwrap(), app);
    assert_ne!(row.get::<&str>(2).unwrap(), "77MB");
    assert!(row.get::<bool>(3).unwrap(), "temporary table dropped");
    assert_eq!(row.get::<i64>(4).unwrap(), 0, "no LISTEN left");
    assert_eq!(row.get::<i64>(5).unwrap(), 0, "no cursor left");
    assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
    // The advisory lock was released: another session can take it.
    let row = admin
        .query_one("SELECT pg_try_advisory_lock(424242)", &[])
        .await
        .unwrap();
    assert!(row.get::<bool>(0).unwrap());
    admin
        .execute("SELECT pg_advisory_unlock(424242)", &[])
        .await
        .unwrap();
    // Prepared statements survived the reset.
    assert_eq!(conn.cached_statements(), cached);
    conn.query_one("SELECT $1::int + 1", &[&1]).await.unwrap();
    assert_eq!(conn.cached_statements(), cached);
}

#[tokio::test]
async fn a_changed_session_authorization_is_reset_and_only_then_paid_for() {
    let mut admin = common::connect().await;
    let role = common::unique("pool_role");
    admin
        .batch_execute(&format!("CREATE ROLE {role} NOLOGIN"))
        .await
        .unwrap();
    let (pool, _) = pool_with(&settings(1));
    let (original, pid) = {
        let mut conn = pool.get().await.unwrap();
        let row = conn
            .query_one("SELECT session_user::text", &[])
            .await
            .unwrap();
        let original = row.get::<&str>(0).unwrap().to_owned();
        // A lease that leaves the authorization alone needs no `SET SESSION AUTHORIZATION`.
        assert!(!conn.session_authorization_changed());
        assert_eq!(
            Reset::Session.statements_for(&conn),
            Some(sluice_pg::pool::SESSION_RESET_SAME_AUTHORIZATION)
        );
        // Changed from inside a function, not by a SET statement the driver could see.
        conn.query_one(
            "SELECT set_config('session_authorization', $1, false)",
            &[&role.as_str()],
        )
        .await
        .unwrap();
        assert!(conn.session_authorization_changed());
        assert_eq!(
            Reset::Session.statements_for(&conn),
            Some(sluice_pg::pool::SESSION_RESET)
        );
        (original, conn.process_id())
    };
    let mut conn = pool.get().await.unwrap();
    assert_eq!(conn.process_id(), pid, "the same connection, reused");
    let row = conn
        .query_one("SELECT session_user::text, current_user::text", &[])
        .await
        .unwrap();
    assert_eq!(row.get::<&str>(0).unwrap(), original);
    assert_eq!(row.get::<&str>(1).unwrap(), original);
    assert!(!conn.session_authorization_changed());
}

#[tokio::test]
async fn a_connection_returned_unused_carries_one_reset() {
    let (pool, _) = pool_with(&settings(1));
    for _ in 0..3 {
        drop(pool.get().await.unwrap());
    }
    let mut conn = pool.get().await.unwrap();
    assert_eq!(conn.execute("SELECT 1", &[]).await.unwrap(), 1);
    assert!(conn.take_notices().is_empty());
}

#[tokio::test]
async fn transaction_only_reset_rolls_back_but_keeps_settings() {
    let mut s = settings(1);
    s.set_reset(Reset::TransactionOnly);
    let (pool, _) = pool_with(&s);
    {
        let mut conn = pool.get().await.unwrap();
        conn.batch_execute("SET work_mem = '77MB'").await.unwrap();
        conn.batch_execute("BEGIN; SELECT 1").await.unwrap();
    }
    let mut conn = pool.get().await.unwrap();
    let row = conn
        .query_one("SELECT current_setting('work_mem')", &[])
        .await
        .unwrap();
    assert_eq!(row.get::<&str>(0).unwrap(), "77MB");
    assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
}

#[tokio::test]
async fn a_future_dropped_mid_query_does_not_poison_the_pool() {
    let (pool, _) = pool_with(&settings(1));
    let mut admin = common::connect().await;
    let pid = {
        let mut conn = pool.get().await.unwrap();
        conn.batch_execute("BEGIN").await.unwrap();
        let abandoned = tokio::time::timeout(
            Duration::from_millis(100),
            conn.execute("SELECT pg_sleep(30)", &[]),
        )
        .await;
        assert!(abandoned.is_err() && conn.is_busy());
        conn.process_id()
        // Dropped here with the query running, as when a client goes away.
    };
    let mut conn = pool.get().await.unwrap();
    assert_eq!(
        conn.process_id(),
        pid,
        "cancelled and drained, not discarded"
    );
    assert!(!conn.is_busy());
    let row = conn.query_one("SELECT 7", &[]).await.unwrap();
    assert_eq!(row.get::<i32>(0).unwrap(), 7);
    assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
    let row = admin
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND query LIKE '%pg_sleep(30)%' \
             AND state = 'active'",
            &[&pid],
        )
        .await
        .unwrap();
    assert_eq!(row.get::<i64>(0).unwrap(), 0, "the sleep was cancelled");
}

/// Terminates a backend and waits until it is gone (its FATAL and end of stream are sent).
async fn terminate(admin: &mut Connection, pid: i32) {
    admin
        .execute("SELECT pg_terminate_backend($1)", &[&pid])
        .await
        .unwrap();
    for _ in 0..1000 {
        let row = admin
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE pid = $1",
                &[&pid],
            )
            .await
            .unwrap();
        if row.get::<i64>(0).unwrap() == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("backend {pid} did not exit");
}

#[tokio::test]
async fn a_terminated_idle_connection_is_replaced_without_a_failed_request() {
    let mut s = settings(2);
    s.set_health_check_interval(Duration::ZERO);
    let (pool, _) = pool_with(&s);
    let pid = pool.get().await.unwrap().process_id();
    let mut admin = common::connect().await;
    terminate(&mut admin, pid).await;
    let mut conn = pool.get().await.unwrap();
    assert_ne!(conn.process_id(), pid, "the dead connection was noticed");
    assert_eq!(conn.execute("SELECT 1", &[]).await.unwrap(), 1);
    let status = pool.status();
    assert_eq!((status.created, status.closed, status.size), (2, 1, 1));
}

#[tokio::test]
async fn a_connection_broken_in_use_fails_one_request_and_is_replaced() {
    let mut s = settings(1);
    s.set_health_check_interval(Duration::from_secs(3600));
    let (pool, _) = pool_with(&s);
    let mut conn = pool.get().await.unwrap();
    let pid = conn.process_id();
    let mut admin = common::connect().await;
    terminate(&mut admin, pid).await;
    let err = conn.execute("SELECT 1", &[]).await.unwrap_err();
    assert!(err.is_closed() || err.code() == Some("57P01"), "{err}");
    assert!(conn.is_broken());
    drop(conn);
    let mut conn = pool.get().await.unwrap();
    assert_ne!(conn.process_id(), pid);
    assert_eq!(conn.execute("SELECT 1", &[]).await.unwrap(), 1);
    let status = pool.status();
    assert_eq!((status.created, status.closed, status.size), (2, 1, 1));
}

/// A small xorshift generator, so the test needs no dependency.
struct Dice(u64);

impl Dice {
    fn roll(&mut self, sides: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % sides
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_leak_after_ten_thousand_cycles_with_random_cancellations() {
    const TASKS: u64 = 16;
    const CYCLES: u64 = 10_000 / TASKS;
    let mut s = settings(6);
    s.set_acquire_timeout(Duration::from_secs(30));
    let (pool, app) = pool_with(&s);
    let mut tasks = Vec::new();
    for t in 0..TASKS {
        let pool = pool.clone();
        tasks.push(tokio::spawn(async move {
            let mut dice = Dice(0x9e37_79b9_7f4a_7c15 ^ ((t + 1) * 7919));
            for _ in 0..CYCLES {
                let limit = Duration::from_micros(dice.roll(3000));
                match dice.roll(8) {
                    // An acquire abandoned while it waits.
                    0 => drop(tokio::time::timeout(limit, pool.get()).await),
                    // A query abandoned mid-flight: drained or cancelled on the way back.
                    1 => {
                        let mut conn = pool.get().await.unwrap();
                        let _ =
                            tokio::time::timeout(limit, conn.execute("SELECT pg_sleep(0.02)", &[]))
                                .await;
                    }
                    // Acquire and query abandoned together.
                    2 => {
                        let _ = tokio::time::timeout(limit, async {
                            let mut conn = pool.get().await?;
                            conn.execute("SELECT pg_sleep(0.001)", &[]).await?;
                            Ok::<_, sluice_pg::Error>(())
                        })
                        .await;
                    }
                    // A transaction left open.
                    3 => {
                        let mut conn = pool.get().await.unwrap();
                        conn.batch_execute("BEGIN; SELECT 1").await.unwrap();
                    }
                    _ => {
                        let mut conn = pool.get().await.unwrap();
                        let row = conn.query_one("SELECT $1::int", &[&7]).await.unwrap();
                        assert_eq!(row.get::<i32>(0).unwrap(), 7);
                    }
                }
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    // Connections being cleaned come back on their own.
    assert!(
        eventually(|| pool.status().busy == 0).await,
        "{:?}",
        pool.status()
    );
    let status = pool.status();
    assert!(status.size <= 6 && status.idle == status.size, "{status:?}");
    assert_eq!(
        status.created - status.closed,
        status.size as u64,
        "{status:?}"
    );
    assert_eq!(status.waiting, 0);
    // Every pooled connection is clean and usable.
    let mut held = Vec::new();
    for _ in 0..status.size {
        let mut conn = pool.get().await.unwrap();
        assert_eq!(conn.execute("SELECT 1", &[]).await.unwrap(), 1);
        assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
        held.push(conn);
    }
    drop(held);
    // The server sees exactly the pool's connections: none leaked.
    let mut admin = common::connect().await;
    let mut on_server = -1;
    for _ in 0..500 {
        on_server = backends_named(&mut admin, &app).await;
        if on_server == status.size as i64 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(on_server, status.size as i64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pipelining_mode_answers_each_caller() {
    let (pool, _) = pool_with(&settings(3));
    let mux = pool.multiplexer(3).unwrap();
    let mut tasks = Vec::new();
    for i in 0..300i32 {
        let mux = mux.clone();
        tasks.push(tokio::spawn(async move {
            if i % 50 == 7 {
                let err = mux.query("SELECT 1 / $1::int", vec![Box::new(0)]).await;
                return err.map(|_| 0).map_err(|e| e.code().map(str::to_owned));
            }
            let rows = mux
                .query("SELECT $1::int * 2", vec![Box::new(i)])
                .await
                .map_err(|e| Some(e.to_string()))?;
            Ok(rows.get(0).unwrap().get::<i32>(0).unwrap() - i * 2)
        }));
    }
    let mut failures = 0;
    for t in tasks {
        match t.await.unwrap() {
            Ok(diff) => assert_eq!(diff, 0),
            Err(code) => {
                assert_eq!(code.as_deref(), Some("22012"));
                failures += 1;
            }
        }
    }
    assert_eq!(failures, 6, "only the division by zero fails");
    drop(mux);
    assert!(eventually(|| pool.status().busy == 0).await);
    assert!(pool.status().size <= 3);
}

/// Requests with different transaction-local settings share round trips and connections, and
/// each statement sees its own context only; a failing context fails only its request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pipelining_mode_runs_each_statement_in_its_own_context() {
    let (pool, _) = pool_with(&settings(2));
    let mux = pool.multiplexer(2).unwrap();
    let mut tasks = Vec::new();
    for i in 0..400i32 {
        let mux = mux.clone();
        tasks.push(tokio::spawn(async move {
            if i % 40 == 3 {
                // A context that fails: its statement must not run, its error comes back.
                let result = mux
                    .query_in_context(
                        "SELECT 1 / $1::int",
                        vec![Box::new(0)],
                        "SELECT $1::int",
                        vec![Box::new(i)],
                    )
                    .await;
                return (
                    i,
                    result
                        .map_err(|e| e.code().map(str::to_owned))
                        .map(|_| None),
                );
            }
            if i % 2 == 0 {
                // No context at all: the setting of a neighbour must not leak in.
                let rows = mux
                    .query("SELECT current_setting('sluice.who', true)", Vec::new())
                    .await
                    .map_err(|e| Some(e.to_string()));
                return (
                    i,
                    rows.map(|r| r.get(0).unwrap().get::<Option<String>>(0).unwrap()),
                );
            }
            let rows = if i % 4 == 1 {
                // Text parameters, a NULL among them.
                mux.query_in_context_text(
                    "SELECT set_config('sluice.who', $1, true)",
                    vec![Some(format!("task {i}"))],
                    "SELECT coalesce($1::text, current_setting('sluice.who', true))",
                    vec![None],
                )
                .await
            } else {
                mux.query_in_context(
                    "SELECT set_config('sluice.who', $1, true)",
                    vec![Box::new(format!("task {i}"))],
                    "SELECT current_setting('sluice.who', true)",
                    Vec::new(),
                )
                .await
            }
            .map_err(|e| Some(e.to_string()));
            (
                i,
                rows.map(|r| r.get(0).unwrap().get::<Option<String>>(0).unwrap()),
            )
        }));
    }
    let mut refused = 0;
    for t in tasks {
        let (i, result) = t.await.unwrap();
        match result {
            Err(code) => {
                assert_eq!(code.as_deref(), Some("22012"), "task {i}");
                refused += 1;
            }
            Ok(seen) if i % 2 == 0 => {
                assert!(
                    seen.as_deref().is_none_or(str::is_empty),
                    "task {i} saw {seen:?}"
                );
            }
            Ok(seen) => assert_eq!(seen, Some(format!("task {i}"))),
        }
    }
    assert_eq!(refused, 10, "only the failing contexts fail");
    drop(mux);
    assert!(eventually(|| pool.status().busy == 0).await);
}

#[tokio::test]
async fn a_closed_pool_refuses_and_closes() {
    let (pool, _) = pool_with(&settings(2));
    let held = pool.get().await.unwrap();
    drop(pool.get().await.unwrap());
    pool.close().await;
    let err = pool.get().await.unwrap_err();
    assert_eq!(err.kind(), PoolErrorKind::Closed);
    drop(held);
    let status = pool.status();
    assert_eq!((status.size, status.idle), (0, 0), "{status:?}");
}
