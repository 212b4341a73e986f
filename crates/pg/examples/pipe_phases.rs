//! Scratch: where the time of a 1,000-statement pipeline goes.
#![allow(clippy::unwrap_used)]
use sluice_pg::{Connection, SyncMode};
use std::time::Instant;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let url = std::env::args().nth(1).unwrap();
    let mut c = Connection::connect(&url).await.unwrap();
    let sql = "SELECT abalance FROM pgbench_accounts WHERE aid = $1";
    for _ in 0..10 {
        c.query_one(sql, &[&1i32]).await.unwrap();
    }
    for _ in 0..5 {
        let t0 = Instant::now();
        let mut p = c.pipeline(SyncMode::Once).await.unwrap();
        let aids: Vec<i32> = (1..=1000).map(|i| i * 1999).collect();
        for a in &aids {
            p.query(sql, &[a]).unwrap();
        }
        let t1 = Instant::now();
        let r = p.run().await.unwrap();
        let t2 = Instant::now();
        let n: usize = r.iter().map(|r| r.as_ref().unwrap().len()).sum();
        drop(r);
        let t3 = Instant::now();
        println!(
            "build {:?} run {:?} drop {:?} rows {n}",
            t1 - t0,
            t2 - t1,
            t3 - t2
        );
    }
}
