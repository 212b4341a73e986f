//! The writer's statements keep finding rows by index as the tables grow from empty: plans
//! cached at the first flushes must not scan the whole `keys` table at every later one.

use std::time::{Duration, Instant};

use crate::common::{Server, q, schema, value};
use sluice_resp::durable::AppendFsync;

/// `pg_stat_user_tables` columns of the schema's `keys` table, once `inserted` rows show there
/// (the writer's statistics are reported by its backend when idle or gone).
async fn keys_stats(schema: &str, inserted: u64) -> (u64, u64) {
    let sql = format!(
        "SELECT n_tup_ins || ' ' || seq_scan FROM pg_stat_user_tables \
         WHERE schemaname = '{schema}' AND relname = 'keys'"
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let text = value(&sql).await.unwrap_or_default();
        let mut parts = text.split(' ').map(|n| n.parse::<u64>().unwrap_or(0));
        let (ins, seq) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
        if ins >= inserted || Instant::now() > deadline {
            return (ins, seq);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flushes_into_a_growing_keyspace_use_indexes() {
    let schema = schema("rs_plans");
    let server = Server::start(&schema, AppendFsync::Always).await;
    let mut c = server.client().await;
    // Under always each acknowledged SET of one client is a flush of its own.
    let flushes = 60u64;
    for round in 0..flushes {
        let mut cmd = redis::cmd("MSET");
        for i in 0..50 {
            cmd.arg(format!("k:{round}:{i}")).arg("v");
        }
        let () = cmd.query_async(&mut c).await.expect("MSET");
    }
    let _: String = q(&mut c, &["SET", "ttl", "v", "EX", "100"]).await;
    server.stop().await;
    let (inserted, seq_scans) = keys_stats(&schema, flushes * 50 + 1).await;
    assert_eq!(inserted, flushes * 50 + 1, "rows copied into keys");
    // The start-up load reads the table whole once; a flush never should.
    assert!(
        seq_scans < 5,
        "{seq_scans} sequential scans of keys over {flushes} flushes"
    );
}
