//! What each appendfsync policy guarantees: `always` acknowledges only committed writes (counted
//! in the tables after a crash without a last flush), `everysec` commits within about a second.

use std::time::{Duration, Instant};

use crate::common::{Server, q, schema, value};
use sluice_resp::durable::AppendFsync;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_acknowledged_writes_are_in_the_tables_after_a_crash() {
    let schema = schema("rs_always");
    let server = Server::start(&schema, AppendFsync::Always).await;
    let clients = 8;
    let per_client = 150;
    let mut tasks = Vec::new();
    for client in 0..clients {
        let mut c = server.client().await;
        tasks.push(tokio::spawn(async move {
            let mut acknowledged = 0;
            for i in 0..per_client {
                let key = format!("k:{client}:{i}");
                let r: redis::RedisResult<()> =
                    redis::cmd("SET").arg(&key).arg(i).query_async(&mut c).await;
                if r.is_ok() {
                    acknowledged += 1;
                }
                let r: redis::RedisResult<i64> =
                    redis::cmd("INCR").arg("shared").query_async(&mut c).await;
                if r.is_ok() {
                    acknowledged += 1;
                }
            }
            acknowledged
        }));
    }
    let mut acknowledged = 0;
    for t in tasks {
        acknowledged += t.await.unwrap();
    }
    assert_eq!(
        acknowledged,
        2 * clients * per_client,
        "every write answered"
    );
    // No last flush: what the tables hold is what was committed before each answer.
    server.crash().await;
    let keys = value(&format!(
        "SELECT count(*) FROM \"{schema}\".strings WHERE key_text LIKE 'k:%'"
    ))
    .await;
    assert_eq!(keys.as_deref(), Some(&*(clients * per_client).to_string()));
    let shared = value(&format!(
        "SELECT value_text FROM \"{schema}\".strings WHERE key_text = 'shared'"
    ))
    .await;
    assert_eq!(
        shared.as_deref(),
        Some(&*(clients * per_client).to_string())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everysec_commits_within_about_a_second_and_save_at_once() {
    let schema = schema("rs_everysec");
    let server = Server::start(&schema, AppendFsync::EverySec).await;
    let mut c = server.client().await;
    let before: i64 = q(&mut c, &["LASTSAVE"]).await;
    let _: () = q(&mut c, &["SET", "a", "1"]).await;
    let written = Instant::now();
    let count = format!("SELECT count(*) FROM \"{schema}\".keys WHERE key = 'a'");
    loop {
        if value(&count).await.as_deref() == Some("1") {
            break;
        }
        assert!(
            written.elapsed() < Duration::from_millis(2500),
            "not committed within 2.5 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // SAVE answers once the change is committed.
    let _: () = q(&mut c, &["SET", "b", "2"]).await;
    let _: String = q(&mut c, &["SAVE"]).await;
    let b = value(&format!(
        "SELECT value_text FROM \"{schema}\".strings WHERE key_text = 'b'"
    ))
    .await;
    assert_eq!(b.as_deref(), Some("2"));
    let after: i64 = q(&mut c, &["LASTSAVE"]).await;
    assert!(after >= before);
    let info: String = q(&mut c, &["INFO", "persistence"]).await;
    assert!(info.contains("aof_enabled:1"), "{info}");
    assert!(info.contains("sluice_store:postgres"), "{info}");
    assert!(info.contains("sluice_queue_keys:0"), "{info}");
    assert!(info.contains("sluice_last_commit_lsn:"), "{info}");
    let bg: String = q(&mut c, &["BGSAVE"]).await;
    assert_eq!(bg, "Background saving started");
    drop(c);
    server.stop().await;
}

/// INFO persistence's `aof_delayed_fsync`.
async fn delayed_writes(c: &mut redis::aio::MultiplexedConnection) -> u64 {
    let text: String = q(c, &["INFO", "persistence"]).await;
    text.lines()
        .find_map(|l| l.strip_prefix("aof_delayed_fsync:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("aof_delayed_fsync in INFO persistence")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everysec_writes_wait_for_a_flush_running_two_seconds() {
    let schema = schema("rs_lag");
    let server = Server::start(&schema, AppendFsync::EverySec).await;
    let mut c = server.client().await;
    let _: String = q(&mut c, &["SET", "a", "1"]).await;
    let _: String = q(&mut c, &["SAVE"]).await;
    // Another session holds the table: the writer's next flush waits on it.
    let mut blocker = sluice_pg::Connection::connect_with(&crate::common::pg_config())
        .await
        .expect("connect");
    blocker
        .batch_execute(&format!(
            "BEGIN; LOCK TABLE \"{schema}\".keys IN ACCESS EXCLUSIVE MODE"
        ))
        .await
        .expect("lock");
    let started = Instant::now();
    let _: String = q(&mut c, &["SET", "b", "1"]).await;
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "a write with the writer on time waited {:?}",
        started.elapsed()
    );
    // The flush holding b starts within a second and has run two more before c is sent.
    tokio::time::sleep(Duration::from_millis(3500)).await;
    let mut writer = server.client().await;
    let pending = tokio::spawn(async move {
        let _: String = q(&mut writer, &["SET", "c", "1"]).await;
        Instant::now()
    });
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        !pending.is_finished(),
        "a write was answered while the flush lagged"
    );
    assert_eq!(delayed_writes(&mut c).await, 1);
    let get: String = q(&mut c, &["GET", "b"]).await;
    assert_eq!(get, "1", "reads are served meanwhile");
    let released = Instant::now();
    blocker.batch_execute("COMMIT").await.expect("unlock");
    let answered = pending.await.expect("the delayed SET");
    assert!(answered >= released, "answered before the flush ended");
    let _: String = q(&mut c, &["SAVE"]).await;
    assert_eq!(
        value(&format!(
            "SELECT count(*) FROM \"{schema}\".keys WHERE key IN ('a', 'b', 'c')"
        ))
        .await
        .as_deref(),
        Some("3")
    );
    server.stop().await;
}
