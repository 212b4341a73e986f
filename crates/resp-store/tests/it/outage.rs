//! What Redis clients read when PostgreSQL is stopped or refuses the login, on a private
//! cluster: `-MISCONF` replies, SAVE's error and INFO's `sluice_last_error` name what failed,
//! never the URL's password, PostgreSQL's host and port, the OS's error text, or a duration in
//! Rust's Debug format.
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use crate::common::{Server, q, store_config};
use sluice_embedded::{Cluster, ClusterOptions, private_cluster};
use sluice_pg::Connection;
use sluice_resp::durable::AppendFsync;

const ROLE: &str = "resp_outage";
const PASSWORD: &str = "Resp-Secret-5d0e";

async fn superuser(cluster: &Cluster, sql: &str) {
    let mut conn = Connection::connect(&cluster.url()).await.unwrap();
    conn.batch_execute(sql).await.unwrap();
}

/// Whether `text` holds a duration as Rust's Debug writes it (`5.0018s`, `481ns`, `12µs`).
fn has_debug_duration(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.windows(3).enumerate().any(|(i, w)| {
        let digit_before = |at: usize| at > 0 && bytes[at - 1].is_ascii_digit();
        (w[0].is_ascii_digit() && (w[1..] == *b"ns" || text[i + 1..].starts_with("µs")))
            || (w[0] == b'.' && w[1].is_ascii_digit() && digit_before(i) && {
                let rest = &text[i + 1..];
                let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
                rest[digits..].starts_with('s') || rest[digits..].starts_with("ms")
            })
    })
}

fn assert_clean(cluster: &Cluster, what: &str, text: &str) {
    let port = cluster.port().to_string();
    for word in [
        PASSWORD,
        port.as_str(),
        "127.0.0.1",
        "postgres://",
        "os error",
    ] {
        assert!(!text.contains(word), "{what}: {word:?} in {text}");
    }
    assert!(
        !has_debug_duration(text),
        "{what}: a Debug-formatted duration in {text}"
    );
}

async fn set(c: &mut redis::aio::MultiplexedConnection, key: &str) -> redis::RedisResult<()> {
    redis::cmd("SET").arg(key).arg("v").query_async(c).await
}

/// SETs until one is accepted (the writer retries with a back-off), for at most 20 s.
async fn until_accepted(c: &mut redis::aio::MultiplexedConnection) {
    let started = Instant::now();
    while let Err(e) = set(c, "probe").await {
        assert!(started.elapsed() < Duration::from_secs(20), "still {e}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[test]
fn the_debug_duration_check_knows_the_forms() {
    for bad in [
        "after 5.001826311s (",
        "after 481ns (",
        "after 12µs",
        "after 1.5ms",
    ] {
        assert!(has_debug_duration(bad), "{bad}");
    }
    for good in ["after 5001 ms (", "SQLSTATE 28P01", "v1.2 of", "3D000"] {
        assert!(!has_debug_duration(good), "{good}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_name_the_failure_without_internals() {
    let Some(cluster) = private_cluster(
        "resp_store_outage",
        ClusterOptions::temporary().tls(false).test_roles(false),
    ) else {
        return;
    };
    superuser(
        &cluster,
        &format!("CREATE ROLE {ROLE} LOGIN PASSWORD '{PASSWORD}'"),
    )
    .await;
    superuser(&cluster, &format!("CREATE DATABASE {ROLE} OWNER {ROLE}")).await;
    let url = format!(
        "postgres://{ROLE}:{PASSWORD}@{}:{}/{ROLE}?sslmode=disable",
        cluster.host(),
        cluster.port()
    );
    let pg = sluice_pg::Config::parse(&url).unwrap();
    let mut config = store_config("resp_outage", AppendFsync::Always);
    config.write_timeout = Duration::from_millis(1500);
    config.final_flush_wait = Duration::from_secs(2);
    let server = Server::start_on(&pg, config).await;
    let mut c = server.client().await;
    set(&mut c, "before").await.unwrap();

    cluster.stop_server().unwrap();
    let waited = set(&mut c, "unconfirmed").await.unwrap_err().to_string();
    assert!(waited.contains("MISCONF"), "{waited}");
    assert_clean(&cluster, "a write waiting for its commit", &waited);
    let refused = set(&mut c, "refused").await.unwrap_err().to_string();
    assert!(refused.contains("MISCONF"), "{refused}");
    assert_clean(&cluster, "a write refused", &refused);
    let save: redis::RedisResult<String> = redis::cmd("SAVE").query_async(&mut c).await;
    assert_clean(&cluster, "SAVE", &save.unwrap_err().to_string());
    let info: String = q(&mut c, &["INFO", "persistence"]).await;
    assert!(info.contains("aof_last_write_status:err"), "{info}");
    assert_clean(&cluster, "INFO persistence", &info);

    cluster.start_server().unwrap();
    until_accepted(&mut c).await;
    superuser(
        &cluster,
        &format!(
            "ALTER ROLE {ROLE} PASSWORD 'another-one'; \
             SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '{ROLE}'"
        ),
    )
    .await;
    let started = Instant::now();
    let refused = loop {
        if let Err(e) = set(&mut c, "after").await
            && e.to_string().contains("28P01")
        {
            break e.to_string();
        }
        assert!(started.elapsed() < Duration::from_secs(20), "never 28P01");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_clean(&cluster, "a write while the login is refused", &refused);
    let info: String = q(&mut c, &["INFO", "persistence"]).await;
    assert_clean(&cluster, "INFO persistence, login refused", &info);

    superuser(
        &cluster,
        &format!("ALTER ROLE {ROLE} PASSWORD '{PASSWORD}'"),
    )
    .await;
    until_accepted(&mut c).await;
    drop(c);
    server.stop().await;
}
