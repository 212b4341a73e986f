//! Integration tests: streaming replicas of a temporary cluster (start, replay, stop with it).

use crate::common;

use common::psql;
use sluice_embedded::{Cluster, ClusterOptions, process_alive};

#[test]
fn replicas_stream_the_primarys_writes_and_go_with_it() {
    if !common::can_start_clusters("replicas_stream_the_primarys_writes_and_go_with_it") {
        return;
    }
    let mut primary = Cluster::start(ClusterOptions::temporary()).expect("start a primary");
    psql(
        &primary,
        &primary.url(),
        None,
        "CREATE TABLE before_replicas (n int); INSERT INTO before_replicas VALUES (1)",
    )
    .expect("write on the primary");
    primary.start_replicas(2).expect("start two replicas");
    assert!(!primary.is_replica());
    let replicas = primary.replicas();
    assert_eq!(replicas.len(), 2);
    assert_ne!(replicas[0].port(), replicas[1].port());
    assert_ne!(replicas[0].port(), primary.port());
    assert_ne!(replicas[0].socket_dir(), primary.socket_dir());
    for replica in replicas {
        assert!(replica.is_replica());
        assert_eq!(
            psql(replica, &replica.url(), None, "SELECT pg_is_in_recovery()"),
            Ok("t".into())
        );
        // What was written before the base backup is there at once.
        assert_eq!(
            psql(
                replica,
                &replica.url(),
                None,
                "SELECT n FROM before_replicas"
            ),
            Ok("1".into())
        );
        // The unix socket works too, with the same password.
        assert_eq!(
            psql(replica, &replica.socket_url(), None, "SELECT 1"),
            Ok("1".into())
        );
        // A standby refuses writes.
        let refused = psql(
            replica,
            &replica.url(),
            None,
            "INSERT INTO before_replicas VALUES (2)",
        )
        .expect_err("a replica is read-only");
        assert!(refused.contains("read-only"), "{refused}");
    }
    assert_eq!(
        psql(
            &primary,
            &primary.url(),
            None,
            "SELECT string_agg(slot_name || ':' || active, ',' ORDER BY slot_name) \
             FROM pg_replication_slots"
        ),
        Ok("sluice_replica_0:true,sluice_replica_1:true".into())
    );

    // A write after the start streams over.
    psql(
        &primary,
        &primary.url(),
        None,
        "CREATE TABLE after_replicas (word text); INSERT INTO after_replicas VALUES ('streamed')",
    )
    .expect("write on the primary");
    for replica in primary.replicas() {
        let mut seen = Err(String::new());
        for _ in 0..200 {
            seen = psql(
                replica,
                &replica.url(),
                None,
                "SELECT word FROM after_replicas",
            );
            if seen.as_deref() == Ok("streamed") {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert_eq!(seen, Ok("streamed".into()), "replayed on the replica");
    }

    // Stopping the replicas removes them and their slots; the primary keeps running.
    let dirs: Vec<_> = primary
        .replicas()
        .iter()
        .map(|r| {
            (
                r.data_dir().parent().expect("root").to_path_buf(),
                r.server_pid().expect("running"),
            )
        })
        .collect();
    primary.stop_replicas().expect("stop the replicas");
    assert!(primary.replicas().is_empty());
    for (root, pid) in &dirs {
        assert!(!root.exists(), "{} removed", root.display());
        assert!(!process_alive(*pid), "replica server {pid} stopped");
    }
    assert_eq!(
        psql(
            &primary,
            &primary.url(),
            None,
            "SELECT count(*) FROM pg_replication_slots"
        ),
        Ok("0".into())
    );

    // Replicas started again go with the primary when it stops.
    primary.start_replicas(1).expect("start a replica again");
    let root = primary.replicas()[0]
        .data_dir()
        .parent()
        .expect("root")
        .to_path_buf();
    let pid = primary.replicas()[0].server_pid().expect("running");
    primary.stop().expect("stop the primary and its replica");
    assert!(!root.exists());
    assert!(!process_alive(pid));
}
