//! An exhausted pool: requests beyond the waiting room are refused at once with 503 and
//! `Retry-After`, a waiter that gets no connection in time is answered 504, and the API serves
//! again as soon as connections are free.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{Served, send};
use sluice_pg::PoolSettings;
use sluice_rest::RestConfig;
use std::time::{Duration, Instant};

const SETUP: &str = "
CREATE TABLE items (id int PRIMARY KEY, name text);
INSERT INTO items VALUES (1, 'one');
CREATE FUNCTION hold(seconds float8) RETURNS int LANGUAGE sql AS 'SELECT 1 FROM pg_sleep(seconds)';
";

async fn eventually(mut cond: impl FnMut() -> bool) -> bool {
    for _ in 0..500 {
        if cond() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    cond()
}

#[tokio::test]
async fn a_full_waiting_room_is_503_at_once_and_a_long_wait_is_504() {
    let mut pool = PoolSettings::default();
    pool.set_max_size(1)
        .set_max_waiting(1)
        .set_acquire_timeout(Duration::from_millis(800));
    let served = Served::start_with(
        "overload",
        SETUP,
        RestConfig::default(),
        pool,
        sluice_http::ServerOptions::default(),
    )
    .await
    .unwrap();
    let address = served.address;
    let hold = |seconds: &'static str| {
        tokio::spawn(async move {
            send(
                address,
                "POST",
                "/rpc/hold",
                &[("content-type", "application/json")],
                format!(r#"{{"seconds":{seconds}}}"#).into_bytes(),
                false,
            )
            .await
        })
    };
    let holder = hold("2.5");
    assert!(eventually(|| served.pool.status().busy == 1).await);
    let waiter = hold("0");
    assert!(eventually(|| served.pool.status().waiting == 1).await);

    let started = Instant::now();
    let refused = send(
        address,
        "POST",
        "/rpc/hold",
        &[("content-type", "application/json")],
        br#"{"seconds":0}"#.to_vec(),
        false,
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_millis(500),
        "refused at once"
    );
    assert_eq!(
        refused.status,
        503,
        "{}",
        String::from_utf8_lossy(&refused.body)
    );
    assert_eq!(refused.json()["code"], "PGRSTX01");
    assert_eq!(refused.headers["retry-after"], "1");

    let timed_out = waiter.await.unwrap();
    assert_eq!(
        timed_out.status,
        504,
        "{}",
        String::from_utf8_lossy(&timed_out.body)
    );
    assert_eq!(timed_out.json()["code"], "PGRST003");
    assert_eq!(timed_out.headers["retry-after"], "1");

    assert_eq!(holder.await.unwrap().status, 200);
    let served_again = send(address, "GET", "/items?id=eq.1", &[], Vec::new(), false).await;
    assert_eq!(served_again.status, 200);
    assert_eq!(served_again.json()[0]["name"], "one");
    assert_eq!(served.pool.status().overloaded, 1);
    served.finish().await;
}
