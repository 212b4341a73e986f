//! What Redis clients read when PostgreSQL is stopped or refuses the login, on a private
//! cluster: `-MISCONF` replies, SAVE's error and INFO's `sluice_last_error` name what failed,
//! never the URL's password, PostgreSQL's host and port, the OS's error text, or a duration in
//! Rust's Debug format.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use crate::common::{Server, q, store_config};
use sluice_embedded::testkit::outage::{OutageCluster, within_20_seconds};
use sluice_resp::durable::AppendFsync;

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

fn assert_clean(outage: &OutageCluster, what: &str, text: &str) {
    outage.assert_no_internals(what, text);
    assert!(
        !has_debug_duration(text),
        "{what}: a Debug-formatted duration in {text}"
    );
}

async fn set(c: &mut redis::aio::MultiplexedConnection, key: &str) -> redis::RedisResult<()> {
    redis::cmd("SET").arg(key).arg("v").query_async(c).await
}

/// SETs until one is accepted (the writer retries with a back-off).
async fn until_accepted(c: &redis::aio::MultiplexedConnection) {
    within_20_seconds("SET", || {
        let mut c = c.clone();
        async move { set(&mut c, "probe").await.map_err(|e| e.to_string()) }
    })
    .await;
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
    let Some(outage) =
        OutageCluster::start("resp_store_outage", "resp_outage", "Resp-Secret-5d0e").await
    else {
        return;
    };
    let pg = sluice_pg::Config::parse(&outage.own_url()).unwrap();
    let mut config = store_config("redis_store", AppendFsync::Always);
    config.write_timeout = Duration::from_millis(1500);
    config.final_flush_wait = Duration::from_secs(2);
    let server = Server::start_on(&pg, config).await;
    let mut c = server.client().await;
    set(&mut c, "before").await.unwrap();

    outage.cluster.stop_server().unwrap();
    let waited = set(&mut c, "unconfirmed").await.unwrap_err().to_string();
    assert!(waited.contains("MISCONF"), "{waited}");
    assert_clean(&outage, "a write waiting for its commit", &waited);
    let refused = set(&mut c, "refused").await.unwrap_err().to_string();
    assert!(refused.contains("MISCONF"), "{refused}");
    assert_clean(&outage, "a write refused", &refused);
    let save: redis::RedisResult<String> = redis::cmd("SAVE").query_async(&mut c).await;
    assert_clean(&outage, "SAVE", &save.unwrap_err().to_string());
    let info: String = q(&mut c, &["INFO", "persistence"]).await;
    assert!(info.contains("aof_last_write_status:err"), "{info}");
    assert_clean(&outage, "INFO persistence", &info);

    outage.cluster.start_server().unwrap();
    until_accepted(&c).await;
    outage.refuse_logins().await;
    let refused = within_20_seconds("a write while the login is refused", || {
        let mut c = c.clone();
        async move {
            match set(&mut c, "after").await {
                Err(e) if e.to_string().contains("28P01") => Ok(e.to_string()),
                other => Err(format!("{other:?}")),
            }
        }
    })
    .await;
    assert_clean(&outage, "a write while the login is refused", &refused);
    let info: String = q(&mut c, &["INFO", "persistence"]).await;
    assert_clean(&outage, "INFO persistence, login refused", &info);

    outage.accept_logins().await;
    until_accepted(&c).await;
    drop(c);
    server.stop().await;
}
