//! Every data type written, the server stopped and started again on the same schema: every key,
//! value and TTL is back; deleted, expired and flushed keys are not; function libraries come back too.

use crate::common::{Server, q, rows, schema, value};
use sluice_resp::durable::AppendFsync;

type Pairs = Vec<(String, String)>;
/// XREAD's reply: per stream, its name and its entries (ID, fields and values).
type StreamsRead = Vec<(String, Vec<(String, Vec<String>)>)>;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_type_survives_a_restart() {
    let schema = schema("rs_roundtrip");
    let server = Server::start(&schema, AppendFsync::EverySec).await;
    let mut c = server.client().await;
    let _: () = q(&mut c, &["SET", "str", "hello"]).await;
    let _: () = redis::cmd("SET")
        .arg("bin\x00key")
        .arg(&[0u8, 255, 10, 13][..])
        .query_async(&mut c)
        .await
        .unwrap();
    let _: () = q(&mut c, &["SET", "ttl", "v", "PX", "600000"]).await;
    let _: () = q(&mut c, &["SET", "short", "v", "PX", "300"]).await;
    let _: i64 = q(&mut c, &["INCRBY", "counter", "41"]).await;
    let _: i64 = q(&mut c, &["INCR", "counter"]).await;
    let _: i64 = q(&mut c, &["RPUSH", "list", "a", "b", "c", "d"]).await;
    let _: String = q(&mut c, &["LPOP", "list"]).await;
    let _: i64 = q(&mut c, &["LPUSH", "list", "z"]).await;
    let _: i64 = q(
        &mut c,
        &["HSET", "hash", "f1", "v1", "f2", "v2", "f3", "v3"],
    )
    .await;
    let _: i64 = q(&mut c, &["HDEL", "hash", "f2"]).await;
    let _: i64 = q(&mut c, &["SADD", "set", "x", "y", "z"]).await;
    let _: i64 = q(&mut c, &["ZADD", "zset", "1.5", "a", "-2", "b", "inf", "c"]).await;
    let _: String = q(&mut c, &["XADD", "stream", "1-1", "f", "v", "g", "w"]).await;
    let _: String = q(&mut c, &["XADD", "stream", "2-0", "f", "v2"]).await;
    let _: String = q(&mut c, &["XADD", "stream", "5-0", "gone", "x"]).await;
    let _: i64 = q(&mut c, &["XDEL", "stream", "5-0"]).await;
    let _: String = q(&mut c, &["XGROUP", "CREATE", "stream", "workers", "0"]).await;
    // alice reads 1-1 and leaves it pending.
    let _: redis::Value = q(
        &mut c,
        &[
            "XREADGROUP",
            "GROUP",
            "workers",
            "alice",
            "COUNT",
            "1",
            "STREAMS",
            "stream",
            ">",
        ],
    )
    .await;
    let _: () = q(&mut c, &["SET", "deleted", "v"]).await;
    let _: i64 = q(&mut c, &["DEL", "deleted"]).await;
    let _: bool = q(&mut c, &["EXPIRE", "hash", "900"]).await;
    // Database 3, and database 5 flushed after its first keys.
    let _: () = q(&mut c, &["SELECT", "3"]).await;
    let _: () = q(&mut c, &["SET", "in3", "three"]).await;
    let _: () = q(&mut c, &["SELECT", "5"]).await;
    let _: () = q(&mut c, &["MSET", "old1", "1", "old2", "2"]).await;
    let _: String = q(&mut c, &["SAVE"]).await;
    let _: () = q(&mut c, &["FLUSHDB"]).await;
    let _: () = q(&mut c, &["SET", "new5", "five"]).await;
    drop(c);
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    server.stop().await;

    let server = Server::start(&schema, AppendFsync::EverySec).await;
    assert_eq!(server.store.loaded().keys, 11, "keys loaded");
    let mut c = server.client().await;
    let got: String = q(&mut c, &["GET", "str"]).await;
    assert_eq!(got, "hello");
    let got: Vec<u8> = redis::cmd("GET")
        .arg("bin\x00key")
        .query_async(&mut c)
        .await
        .unwrap();
    assert_eq!(got, [0u8, 255, 10, 13]);
    let pttl: i64 = q(&mut c, &["PTTL", "ttl"]).await;
    assert!((590_000..=600_000).contains(&pttl), "ttl back: {pttl}");
    let exists: i64 = q(&mut c, &["EXISTS", "short", "deleted"]).await;
    assert_eq!(exists, 0, "expired and deleted keys stay gone");
    let counter: i64 = q(&mut c, &["GET", "counter"]).await;
    assert_eq!(counter, 42);
    let list: Vec<String> = q(&mut c, &["LRANGE", "list", "0", "-1"]).await;
    assert_eq!(list, ["z", "b", "c", "d"]);
    let hash: Pairs = q(&mut c, &["HGETALL", "hash"]).await;
    let mut hash = hash;
    hash.sort();
    assert_eq!(
        hash,
        [("f1".into(), "v1".into()), ("f3".into(), "v3".into())]
    );
    let ttl: i64 = q(&mut c, &["TTL", "hash"]).await;
    assert!((880..=900).contains(&ttl), "hash ttl back: {ttl}");
    let mut set: Vec<String> = q(&mut c, &["SMEMBERS", "set"]).await;
    set.sort();
    assert_eq!(set, ["x", "y", "z"]);
    let zset: Vec<String> = q(&mut c, &["ZRANGE", "zset", "0", "-1", "WITHSCORES"]).await;
    assert_eq!(zset, ["b", "-2", "a", "1.5", "c", "inf"]);
    let entries: Vec<(String, Vec<String>)> = q(&mut c, &["XRANGE", "stream", "-", "+"]).await;
    assert_eq!(
        entries,
        [
            (
                "1-1".to_string(),
                vec!["f".into(), "v".into(), "g".into(), "w".into()]
            ),
            ("2-0".to_string(), vec!["f".into(), "v2".into()]),
        ]
    );
    // The stream's last ID (a deleted entry's) came back: a lower ID is refused.
    let refused: redis::RedisResult<String> = redis::cmd("XADD")
        .arg("stream")
        .arg("4-0")
        .arg("f")
        .arg("v")
        .query_async(&mut c)
        .await;
    assert!(refused.is_err(), "XADD below the last ID: {refused:?}");
    // The consumer group, its pending entry and its consumer came back.
    let pending: (i64, String, String, Vec<(String, String)>) =
        q(&mut c, &["XPENDING", "stream", "workers"]).await;
    assert_eq!(
        pending,
        (
            1,
            "1-1".into(),
            "1-1".into(),
            vec![("alice".into(), "1".into())]
        )
    );
    let next: StreamsRead = q(
        &mut c,
        &[
            "XREADGROUP",
            "GROUP",
            "workers",
            "bob",
            "STREAMS",
            "stream",
            ">",
        ],
    )
    .await;
    assert_eq!(
        next[0].1[0].0, "2-0",
        "the group's last delivered ID came back"
    );
    let _: () = q(&mut c, &["SELECT", "3"]).await;
    let got: String = q(&mut c, &["GET", "in3"]).await;
    assert_eq!(got, "three");
    let _: () = q(&mut c, &["SELECT", "5"]).await;
    let keys: Vec<String> = q(&mut c, &["KEYS", "*"]).await;
    assert_eq!(keys, ["new5"], "FLUSHDB removed the earlier rows");
    drop(c);
    server.stop().await;
    let rows = value(&format!(
        "SELECT count(*) FROM \"{schema}\".keys WHERE key IN ('short', 'deleted', 'old1')"
    ))
    .await;
    assert_eq!(rows.as_deref(), Some("0"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hot_key_written_many_times_is_written_once_per_flush() {
    let schema = schema("rs_coalesce");
    let server = Server::start(&schema, AppendFsync::No).await;
    let mut c = server.client().await;
    let mut pipe = redis::pipe();
    for _ in 0..1000 {
        pipe.cmd("INCR").arg("hot").ignore();
    }
    let _: () = pipe.query_async(&mut c).await.unwrap();
    let _: String = q(&mut c, &["SAVE"]).await;
    let info: String = q(&mut c, &["INFO", "persistence"]).await;
    assert!(info.contains("sluice_keys_written:1\r\n"), "{info}");
    assert!(info.contains("sluice_rows_written:1\r\n"), "{info}");
    assert!(info.contains("sluice_appendfsync:no\r\n"), "{info}");
    let saved = value(&format!(
        "SELECT value_text FROM \"{schema}\".strings WHERE key_text = 'hot'"
    ))
    .await;
    assert_eq!(saved.as_deref(), Some("1000"));
    drop(c);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumer_group_bookkeeping_alone_is_kept() {
    let schema = schema("rs_groups");
    let server = Server::start(&schema, AppendFsync::EverySec).await;
    let mut c = server.client().await;
    let _: String = q(&mut c, &["XADD", "jobs", "1-0", "n", "1"]).await;
    let _: String = q(&mut c, &["XADD", "jobs", "2-0", "n", "2"]).await;
    let _: String = q(&mut c, &["XGROUP", "CREATE", "jobs", "g", "0"]).await;
    let _: String = q(&mut c, &["SAVE"]).await;
    // Changes WATCH does not see (deliveries, acknowledgements) must still reach the tables.
    let _: redis::Value = q(
        &mut c,
        &["XREADGROUP", "GROUP", "g", "w", "STREAMS", "jobs", ">"],
    )
    .await;
    let _: String = q(&mut c, &["SAVE"]).await;
    let _: i64 = q(&mut c, &["XACK", "jobs", "g", "1-0"]).await;
    let _: String = q(&mut c, &["SAVE"]).await;
    drop(c);
    server.crash().await;

    let server = Server::start(&schema, AppendFsync::EverySec).await;
    let mut c = server.client().await;
    let pending: (i64, String, String, Vec<(String, String)>) =
        q(&mut c, &["XPENDING", "jobs", "g"]).await;
    assert_eq!(
        pending,
        (
            1,
            "2-0".into(),
            "2-0".into(),
            vec![("w".into(), "1".into())]
        )
    );
    drop(c);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn function_libraries_survive_a_crash_under_always() {
    let schema = schema("rs_functions");
    let lib = |name: &str, reply: &str| {
        format!(
            "#!lua name={name}\nredis.register_function('{name}_f', function() return '{reply}' end)"
        )
    };
    let server = Server::start(&schema, AppendFsync::Always).await;
    let mut c = server.client().await;
    let loaded: String = q(&mut c, &["FUNCTION", "LOAD", &lib("one", "1")]).await;
    assert_eq!(loaded, "one");
    let _: String = q(&mut c, &["FUNCTION", "LOAD", &lib("two", "2")]).await;
    let _: String = q(&mut c, &["FUNCTION", "LOAD", "REPLACE", &lib("two", "2b")]).await;
    let _: String = q(&mut c, &["FUNCTION", "LOAD", &lib("three", "3")]).await;
    let _: String = q(&mut c, &["FUNCTION", "DELETE", "three"]).await;
    // Acknowledged under always: in the table before the crash, with no flush after.
    let stored = rows(&format!(
        "SELECT library FROM \"{schema}\".functions ORDER BY library"
    ))
    .await;
    assert_eq!(
        stored,
        vec![vec![Some("one".to_owned())], vec![Some("two".to_owned())]]
    );
    drop(c);
    server.crash().await;

    let server = Server::start(&schema, AppendFsync::Always).await;
    let mut c = server.client().await;
    let one: String = q(&mut c, &["FCALL", "one_f", "0"]).await;
    let two: String = q(&mut c, &["FCALL", "two_f", "0"]).await;
    assert_eq!((one.as_str(), two.as_str()), ("1", "2b"));
    let gone: redis::RedisResult<String> = redis::cmd("FCALL")
        .arg("three_f")
        .arg(0)
        .query_async(&mut c)
        .await;
    assert!(gone.is_err(), "a deleted library came back: {gone:?}");
    // FLUSH empties the table; a RESTORE of a dump brings one back.
    let dump: Vec<u8> = q(&mut c, &["FUNCTION", "DUMP"]).await;
    let _: String = q(&mut c, &["FUNCTION", "FLUSH"]).await;
    assert_eq!(
        value(&format!("SELECT count(*) FROM \"{schema}\".functions"))
            .await
            .as_deref(),
        Some("0")
    );
    let _: String = redis::cmd("FUNCTION")
        .arg("RESTORE")
        .arg(&dump)
        .query_async(&mut c)
        .await
        .unwrap();
    assert_eq!(
        value(&format!("SELECT count(*) FROM \"{schema}\".functions"))
            .await
            .as_deref(),
        Some("2")
    );
    drop(c);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expiries_beyond_postgresql_timestamps_do_not_stop_the_writer() {
    let schema = schema("rs_far_expiry");
    let server = Server::start(&schema, AppendFsync::Always).await;
    let mut c = server.client().await;
    let _: String = q(&mut c, &["SET", "far", "1"]).await;
    let _: i64 = q(&mut c, &["HSET", "far_hash", "f", "v"]).await;
    // Unix ms past PostgreSQL's last timestamp (the year 294,276): Redis takes them.
    let set: i64 = q(&mut c, &["PEXPIREAT", "far", "92233720368547750"]).await;
    let set_hash: i64 = q(&mut c, &["PEXPIREAT", "far_hash", "9000000000000000"]).await;
    assert_eq!((set, set_hash), (1, 1));
    // Acknowledged under always: the flushes holding them committed.
    let _: String = q(&mut c, &["SET", "after", "2"]).await;
    drop(c);
    server.crash().await;

    let server = Server::start(&schema, AppendFsync::Always).await;
    let mut c = server.client().await;
    let after: String = q(&mut c, &["GET", "after"]).await;
    assert_eq!(after, "2");
    for key in ["far", "far_hash"] {
        let ttl: i64 = q(&mut c, &["TTL", key]).await;
        // Still expiring, thousands of centuries from now.
        assert!(ttl > 3_000_000_000_000, "{key}: TTL {ttl}");
    }
    server.stop().await;
}

/// Element rows of `key` in `table` of `schema`.
async fn element_rows(schema: &str, table: &str, key: &str) -> String {
    value(&format!(
        "SELECT count(*) FROM \"{schema}\".{table} WHERE key = convert_to('{key}', 'UTF8')"
    ))
    .await
    .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn collections_overwritten_by_strings_leave_no_element_rows() {
    let schema = schema("rs_retype");
    let server = Server::start(&schema, AppendFsync::Always).await;
    let mut c = server.client().await;
    // Written in this run, then overwritten.
    let _: i64 = q(&mut c, &["HSET", "h", "f", "v", "g", "w"]).await;
    let _: String = q(&mut c, &["SET", "h", "now a string"]).await;
    assert_eq!(element_rows(&schema, "hash_fields", "h").await, "0");
    // Kept for the next run: a hash, a sorted set, and a hash about to expire.
    let _: i64 = q(&mut c, &["HSET", "loaded", "f", "v"]).await;
    let _: i64 = q(&mut c, &["ZADD", "z", "1", "a", "2", "b"]).await;
    let _: i64 = q(&mut c, &["HSET", "expiring", "f", "v"]).await;
    let _: i64 = q(&mut c, &["PEXPIRE", "expiring", "300"]).await;
    let _: String = q(&mut c, &["SET", "s", "1"]).await;
    drop(c);
    server.crash().await;
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;

    // Loaded keys are known collections; the expired one is not loaded, its rows still there.
    let server = Server::start(&schema, AppendFsync::Always).await;
    let mut c = server.client().await;
    assert_eq!(element_rows(&schema, "hash_fields", "expiring").await, "1");
    let _: String = q(&mut c, &["SET", "loaded", "x"]).await;
    let _: i64 = q(&mut c, &["DEL", "z"]).await;
    let _: String = q(&mut c, &["SET", "expiring", "y"]).await;
    let _: String = q(&mut c, &["SET", "s", "2"]).await;
    assert_eq!(element_rows(&schema, "hash_fields", "loaded").await, "0");
    assert_eq!(element_rows(&schema, "zset_members", "z").await, "0");
    assert_eq!(element_rows(&schema, "hash_fields", "expiring").await, "0");
    drop(c);
    server.stop().await;

    let server = Server::start(&schema, AppendFsync::Always).await;
    let mut c = server.client().await;
    for (key, want) in [
        ("h", "now a string"),
        ("loaded", "x"),
        ("expiring", "y"),
        ("s", "2"),
    ] {
        let got: String = q(&mut c, &["GET", key]).await;
        assert_eq!(got, want, "{key}");
    }
    let z: i64 = q(&mut c, &["EXISTS", "z"]).await;
    assert_eq!(z, 0);
    server.stop().await;
}

/// A collection whose expiry was written, then removed (PERSIST) or moved later in memory
/// before the next flush, keeps its elements when that flush comes after the old expiry: the
/// sweep of expired rows spares the keys the flush writes (it took every field of the hash).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expiry_lifted_before_the_next_flush_keeps_the_elements() {
    let schema = schema("rs_persist");
    let server = Server::start(&schema, AppendFsync::No).await;
    let mut c = server.client().await;
    let _: i64 = q(&mut c, &["HSET", "h", "f", "v", "g", "w"]).await;
    let _: i64 = q(&mut c, &["RPUSH", "l", "a", "b", "c"]).await;
    let _: String = q(&mut c, &["SET", "s", "v"]).await;
    for key in ["h", "l", "s"] {
        let _: i64 = q(&mut c, &["PEXPIRE", key, "300"]).await;
    }
    let _: String = q(&mut c, &["SAVE"]).await;
    let _: i64 = q(&mut c, &["PERSIST", "h"]).await;
    let _: i64 = q(&mut c, &["PEXPIRE", "l", "600000"]).await;
    let _: i64 = q(&mut c, &["PERSIST", "s"]).await;
    // The written expiries pass before the next flush.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let _: String = q(&mut c, &["SAVE"]).await;
    assert_eq!(element_rows(&schema, "hash_fields", "h").await, "2");
    // The three elements are one chunk's row.
    assert_eq!(element_rows(&schema, "list_chunks", "l").await, "1");
    drop(c);
    server.stop().await;

    let server = Server::start(&schema, AppendFsync::No).await;
    let mut c = server.client().await;
    let fields: Vec<String> = q(&mut c, &["HGETALL", "h"]).await;
    assert_eq!(fields, ["f", "v", "g", "w"]);
    let items: Vec<String> = q(&mut c, &["LRANGE", "l", "0", "-1"]).await;
    assert_eq!(items, ["a", "b", "c"]);
    let s: Option<String> = q(&mut c, &["GET", "s"]).await;
    assert_eq!(s.as_deref(), Some("v"));
    let ttl: i64 = q(&mut c, &["TTL", "h"]).await;
    assert_eq!(ttl, -1);
    server.stop().await;
}

/// Flushes that delete nothing skip the sweep of expired rows, but it still comes within about
/// a second while strings keep being written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_rows_are_swept_while_strings_keep_coming() {
    let schema = schema("rs_sweep");
    let server = Server::start(&schema, AppendFsync::Always).await;
    let mut c = server.client().await;
    let _: String = q(&mut c, &["SET", "short", "v", "PX", "100"]).await;
    assert_eq!(element_rows(&schema, "keys", "short").await, "1");
    let started = std::time::Instant::now();
    let mut swept = false;
    for i in 0..60 {
        let _: String = q(&mut c, &["SET", "other", &i.to_string()]).await;
        if element_rows(&schema, "keys", "short").await == "0" {
            swept = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(
        swept,
        "the expired row is still there after {:?}",
        started.elapsed()
    );
    assert!(started.elapsed() < std::time::Duration::from_millis(2500));
    server.stop().await;
}
