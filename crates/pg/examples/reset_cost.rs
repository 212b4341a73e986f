//! Scratch: what a fused session reset costs per point select, by statement set.
#![allow(clippy::unwrap_used)]
use sluice_pg::Connection;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

const SETS: &[(&str, &[&str])] = &[
    ("none", &[]),
    ("discard seq", &["DISCARD SEQUENCES"]),
    ("reset all", &["RESET ALL"]),
    ("unlisten", &["UNLISTEN *"]),
    ("close all", &["CLOSE ALL"]),
    ("session auth", &["SET SESSION AUTHORIZATION DEFAULT"]),
    ("all 7", sluice_pg::pool::SESSION_RESET),
    (
        "same auth 6",
        sluice_pg::pool::SESSION_RESET_SAME_AUTHORIZATION,
    ),
    ("simple all 7", &[]),
];

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let url = std::env::args().nth(1).unwrap();
    for round in 0..2 {
        for (name, set) in SETS {
            let stop = Arc::new(AtomicBool::new(false));
            let count = Arc::new(AtomicU64::new(0));
            let mut tasks = Vec::new();
            for t in 0..8u64 {
                let (url, stop, count, set, name) =
                    (url.clone(), stop.clone(), count.clone(), *set, *name);
                tasks.push(tokio::spawn(async move {
                    let mut c = Connection::connect(&url).await.unwrap();
                    let mut aid = t as i32 * 1000 + 1;
                    while !stop.load(Ordering::Relaxed) {
                        if name.starts_with("simple") {
                            // The same statements as one simple query in front (one message).
                            c.prepend(sluice_pg::pool::SESSION_RESET.join("; "));
                        } else if !set.is_empty() {
                            c.prepend_reset(set);
                        }
                        aid = (aid + 7919) % 2_000_000 + 1;
                        c.query_one(
                            "SELECT abalance FROM pgbench_accounts WHERE aid = $1",
                            &[&aid],
                        )
                        .await
                        .unwrap();
                        count.fetch_add(1, Ordering::Relaxed);
                    }
                }));
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
            let (c0, t0) = (count.load(Ordering::Relaxed), Instant::now());
            tokio::time::sleep(Duration::from_secs(3)).await;
            let tps = (count.load(Ordering::Relaxed) - c0) as f64 / t0.elapsed().as_secs_f64();
            stop.store(true, Ordering::Relaxed);
            for t in tasks {
                t.await.unwrap();
            }
            println!("round {round} {name:<14} {tps:>8.0} tps");
        }
    }
}
