//! A read-only follower on the owner's schema: it sees every type the owner writes, refuses
//! writes with READONLY, catches up after its session is killed; an owner without followers
//! notifies nothing; followers are not exclusive.

use std::time::Duration;

use crate::common::{Server, content, pg_config, q, schema, store_config, value};
use redis::aio::MultiplexedConnection;
use sluice_resp::durable::AppendFsync;
use sluice_resp_store::{Error, PgStore, StoreConfig};

/// How long a change may take to reach a follower before a test fails.
const WAIT: Duration = Duration::from_secs(5);

async fn follower(schema: &str) -> Server {
    Server::start_with(StoreConfig {
        follow: true,
        ..store_config(schema, AppendFsync::EverySec)
    })
    .await
}

/// What a client reads of `key`, the same whatever the order a hash or set was loaded in: its
/// type, its value, and whether it has a TTL.
async fn show(c: &mut MultiplexedConnection, key: &str) -> String {
    let (kind, value) = content(c, key).await;
    let ttl: i64 = q(c, &["PTTL", key]).await;
    format!("{kind} {value} ttl:{}", if ttl > 0 { 1 } else { ttl })
}

/// Waits until the follower shows each key as the owner does (`WAIT` at most).
async fn converge(
    owner: &mut MultiplexedConnection,
    follower: &mut MultiplexedConnection,
    keys: &[&str],
) {
    let deadline = tokio::time::Instant::now() + WAIT;
    for key in keys {
        let want = show(owner, key).await;
        loop {
            let got = show(follower, key).await;
            if got == want {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{key}: the follower shows {got}, the owner {want}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Waits until `check` holds on the follower.
async fn until(c: &mut MultiplexedConnection, what: &str, args: &[&str], want: i64) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let mut cmd = redis::cmd(args[0]);
        for a in &args[1..] {
            cmd.arg(*a);
        }
        // An error (a function not there yet, say) counts as not yet.
        let got: redis::RedisResult<i64> = cmd.query_async(c).await;
        if matches!(got, Ok(n) if n == want) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: {args:?} is {got:?}, want {want}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_type_written_through_the_owner_reaches_the_follower() {
    let schema = schema("rs_follow_types");
    let owner = Server::start(&schema, AppendFsync::Always).await;
    let mut o = owner.client().await;
    // Something before the follower starts: the start-up load has it.
    let _: () = q(&mut o, &["SET", "before", "v"]).await;
    let _: () = q(&mut o, &["SAVE"]).await;
    let follower = follower(&schema).await;
    let mut f = follower.client().await;
    assert_eq!(q::<String>(&mut f, &["GET", "before"]).await, "v");

    let _: () = q(&mut o, &["SET", "s", "hello", "PX", "600000"]).await;
    let _: () = redis::cmd("SET")
        .arg("bin\x00key \u{e9}")
        .arg(&[0u8, 255, 32, 10][..])
        .query_async(&mut o)
        .await
        .expect("SET binary");
    let _: i64 = q(&mut o, &["HSET", "h", "f1", "v1", "f2", "v2", "f3", "v3"]).await;
    let items: Vec<String> = (0..40).map(|i| format!("item{i}")).collect();
    let mut rpush = vec!["RPUSH", "l"];
    rpush.extend(items.iter().map(String::as_str));
    let _: i64 = q(&mut o, &rpush).await;
    let _: i64 = q(&mut o, &["LPUSH", "l", "a", "b", "c"]).await;
    let _: i64 = q(&mut o, &["SADD", "set", "x", "y", "z"]).await;
    let _: i64 = q(&mut o, &["ZADD", "z", "1.5", "a", "-2", "b", "inf", "c"]).await;
    let _: String = q(&mut o, &["XADD", "x", "1-1", "f", "v", "g", "w"]).await;
    let _: String = q(&mut o, &["XADD", "x", "2-0", "f", "v2"]).await;
    let _: String = q(&mut o, &["XGROUP", "CREATE", "x", "workers", "0"]).await;
    let keys = ["s", "bin\x00key \u{e9}", "h", "l", "set", "z", "x"];
    converge(&mut o, &mut f, &keys).await;
    assert_eq!(show(&mut f, "l").await.matches("item").count(), 40);

    // Changes in part (a field, a chunk's worth of pops, a member) and deletes.
    let _: i64 = q(&mut o, &["HSET", "h", "f1", "new"]).await;
    let _: i64 = q(&mut o, &["HDEL", "h", "f3"]).await;
    let _: Vec<String> = q(&mut o, &["LPOP", "l", "20"]).await;
    let _: i64 = q(&mut o, &["RPUSH", "l", "tail"]).await;
    let _: i64 = q(&mut o, &["SREM", "set", "y"]).await;
    let _: String = q(&mut o, &["ZINCRBY", "z", "10", "b"]).await;
    let _: String = q(&mut o, &["XADD", "x", "3-0", "f", "v3"]).await;
    let _: i64 = q(&mut o, &["PERSIST", "s"]).await;
    let _: i64 = q(&mut o, &["DEL", "bin\x00key \u{e9}"]).await;
    converge(&mut o, &mut f, &keys).await;
    assert_eq!(q::<i64>(&mut f, &["EXISTS", "bin\x00key \u{e9}"]).await, 0);

    // A key whose TTL passes reads as missing on the follower too.
    let _: () = q(&mut o, &["SET", "short", "v", "PX", "400"]).await;
    until(&mut f, "the short-lived key", &["EXISTS", "short"], 1).await;
    until(
        &mut f,
        "the short-lived key expired",
        &["EXISTS", "short"],
        0,
    )
    .await;

    // Another database, then FLUSHDB of the first.
    let _: () = q(&mut o, &["SELECT", "3"]).await;
    let _: () = q(&mut o, &["SET", "in3", "v"]).await;
    let _: () = q(&mut o, &["SELECT", "0"]).await;
    let _: () = q(&mut o, &["FLUSHDB"]).await;
    until(&mut f, "db 0 flushed", &["DBSIZE"], 0).await;
    let _: () = q(&mut f, &["SELECT", "3"]).await;
    until(&mut f, "db 3 kept", &["DBSIZE"], 1).await;
    assert_eq!(q::<String>(&mut f, &["GET", "in3"]).await, "v");
    let _: () = q(&mut o, &["FLUSHALL"]).await;
    until(&mut f, "all flushed", &["DBSIZE"], 0).await;

    follower.stop().await;
    owner.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_to_the_follower_get_readonly_and_reach_nothing() {
    let schema = schema("rs_follow_ro");
    let owner = Server::start(&schema, AppendFsync::Always).await;
    let mut o = owner.client().await;
    let _: () = q(&mut o, &["SET", "k", "v"]).await;
    let follower = follower(&schema).await;
    let mut f = follower.client().await;
    let before = value(&format!("SELECT count(*) FROM {schema}.keys")).await;

    let readonly = "READONLY You can't write against a read only replica.";
    for args in [
        &["SET", "k", "other"][..],
        &["DEL", "k"],
        &["LPUSH", "l", "a"],
        &["HSET", "h", "f", "v"],
        &["FLUSHALL"],
        &["EXPIRE", "k", "10"],
    ] {
        let err = redis::cmd(args[0])
            .arg(&args[1..])
            .query_async::<redis::Value>(&mut f)
            .await
            .expect_err("a write on the follower");
        assert_eq!(err.code(), Some("READONLY"), "{args:?}: {err}");
        assert!(err.to_string().contains(&readonly[9..]), "{args:?}: {err}");
    }
    // A script that writes fails on its write, as on a Redis replica; one that reads works.
    let err = redis::cmd("EVAL")
        .arg("return redis.call('SET', 'k', 'script')")
        .arg(0)
        .query_async::<redis::Value>(&mut f)
        .await
        .expect_err("a writing script");
    assert_eq!(err.code(), Some("READONLY"), "{err}");
    let read: String = redis::cmd("EVAL")
        .arg("return redis.call('GET', 'k')")
        .arg(0)
        .query_async(&mut f)
        .await
        .expect("a reading script");
    assert_eq!(read, "v");
    // A script declaring it may write is refused before it runs; one declaring none runs.
    let err = redis::cmd("EVAL")
        .arg("#!lua\nreturn 1")
        .arg(0)
        .query_async::<redis::Value>(&mut f)
        .await
        .expect_err("a script with the write flag");
    assert_eq!(err.code(), Some("READONLY"), "{err}");
    let read: String = redis::cmd("EVAL")
        .arg("#!lua flags=no-writes\nreturn redis.call('GET', 'k')")
        .arg(0)
        .query_async(&mut f)
        .await
        .expect("a no-writes script");
    assert_eq!(read, "v");
    // A transaction that queued a write is aborted.
    let _: () = q(&mut f, &["MULTI"]).await;
    let queued = redis::cmd("SET")
        .arg("k")
        .arg("tx")
        .query_async::<redis::Value>(&mut f)
        .await;
    assert!(queued.is_err());
    let exec = redis::cmd("EXEC").query_async::<redis::Value>(&mut f).await;
    let exec = exec.expect_err("EXEC");
    assert_eq!(exec.code(), Some("EXECABORT"), "{exec}");

    // Reads, PUBLISH, SAVE (nothing to save), ROLE and INFO replication answer as a replica's.
    assert_eq!(q::<i64>(&mut f, &["PUBLISH", "news", "hi"]).await, 0);
    let _: () = q(&mut f, &["SAVE"]).await;
    assert_eq!(q::<String>(&mut f, &["GET", "k"]).await, "v");
    let role: redis::Value = q(&mut f, &["ROLE"]).await;
    let role = format!("{role:?}");
    assert!(
        role.contains("slave") && role.contains("connected"),
        "{role}"
    );
    let info: String = q(&mut f, &["INFO", "replication"]).await;
    assert!(info.contains("role:slave\r\n"), "{info}");
    assert!(info.contains("master_link_status:up\r\n"), "{info}");
    let info: String = q(&mut o, &["INFO", "replication"]).await;
    assert!(info.contains("role:master\r\n"), "{info}");

    // Nothing reached PostgreSQL: the owner's one key, as it wrote it.
    let _: () = q(&mut o, &["SAVE"]).await;
    assert_eq!(
        value(&format!("SELECT count(*) FROM {schema}.keys")).await,
        before
    );
    assert_eq!(
        value(&format!(
            "SELECT convert_from(value, 'UTF8') FROM {schema}.keys WHERE key = 'k'"
        ))
        .await
        .as_deref(),
        Some("v")
    );
    follower.stop().await;
    owner.stop().await;
}

/// Terminates the follower sessions of `schema` (found by the lock they hold); how many.
async fn kill_followers(schema: &str) -> i64 {
    value(&format!(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_locks \
         WHERE locktype = 'advisory' AND objsubid = 2 AND classid = {}::oid \
           AND objid = hashtext('{schema}')::oid",
        0x736c_7566
    ))
    .await
    .and_then(|n| n.parse().ok())
    .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_whose_session_is_killed_reconnects_and_catches_up() {
    let schema = schema("rs_follow_kill");
    let owner = Server::start(&schema, AppendFsync::Always).await;
    let mut o = owner.client().await;
    let _: () = q(&mut o, &["SET", "a", "1"]).await;
    let follower = follower(&schema).await;
    let mut f = follower.client().await;
    assert_eq!(q::<String>(&mut f, &["GET", "a"]).await, "1");
    // Its session is found by application name too.
    let named = value(&format!(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = '{}'",
        sluice_resp_store::FOLLOWER_APPLICATION
    ))
    .await;
    assert_ne!(named.as_deref(), Some("0"));

    assert_eq!(kill_followers(&schema).await, 1);
    // Written while the follower has no session.
    let _: () = q(&mut o, &["SET", "a", "2"]).await;
    let _: i64 = q(&mut o, &["RPUSH", "during", "x", "y"]).await;
    let _: i64 = q(&mut o, &["DEL", "gone"]).await;
    converge(&mut o, &mut f, &["a", "during"]).await;
    let info: String = q(&mut f, &["INFO", "replication"]).await;
    assert!(info.contains("master_link_status:up\r\n"), "{info}");
    assert!(!info.contains("sluice_follow_reloads:0\r\n"), "{info}");
    // And it keeps following after.
    let _: () = q(&mut o, &["SET", "after", "3"]).await;
    converge(&mut o, &mut f, &["after"]).await;
    follower.stop().await;
    owner.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_follower_the_owner_notifies_nothing() {
    let schema = schema("rs_follow_quiet");
    let owner = Server::start(&schema, AppendFsync::Always).await;
    let mut o = owner.client().await;
    // Listening without being a follower (no follower lock).
    let mut listener = sluice_pg::Connection::connect_with(&pg_config())
        .await
        .expect("connect");
    listener
        .batch_execute(&format!("LISTEN \"sluice_redis:{schema}\""))
        .await
        .expect("LISTEN");
    for i in 0..20 {
        let _: () = q(&mut o, &["SET", &format!("k{i}"), "v"]).await;
    }
    // Longer than the owner's look for followers (a second), writing all along.
    for i in 0..15 {
        let _: i64 = q(&mut o, &["INCR", "counter"]).await;
        let _: () = q(&mut o, &["SET", &format!("late{i}"), "v"]).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let heard =
        tokio::time::timeout(Duration::from_millis(500), listener.wait_for_notification()).await;
    assert!(heard.is_err(), "heard {heard:?}");

    // With a follower attached, the same listener hears the flushes.
    let follower = follower(&schema).await;
    let _: () = q(&mut o, &["SET", "now", "v"]).await;
    let heard = tokio::time::timeout(WAIT, listener.wait_for_notification())
        .await
        .expect("a notification once a follower listens")
        .expect("the listener's session");
    assert!(
        heard.payload.starts_with("hello:") || heard.payload.contains(':'),
        "{heard:?}"
    );
    follower.stop().await;
    owner.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn followers_are_not_exclusive() {
    let schema = schema("rs_follow_two");
    let owner = Server::start(&schema, AppendFsync::EverySec).await;
    let mut o = owner.client().await;
    let first = follower(&schema).await;
    let _: () = q(&mut o, &["SET", "k", "1"]).await;
    let mut f1 = first.client().await;
    converge(&mut o, &mut f1, &["k"]).await;
    // A second follower while the owner and the first run; a second owner is still refused.
    let second = follower(&schema).await;
    let mut f2 = second.client().await;
    let _: i64 = q(&mut o, &["SADD", "s", "a", "b"]).await;
    converge(&mut o, &mut f1, &["k", "s"]).await;
    converge(&mut o, &mut f2, &["k", "s"]).await;
    let refused = PgStore::open(&pg_config(), store_config(&schema, AppendFsync::EverySec)).await;
    assert!(matches!(refused, Err(Error::Locked { .. })), "{refused:?}");
    second.stop().await;
    first.stop().await;
    owner.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_needs_the_owners_schema() {
    let schema = schema("rs_follow_none");
    let err = PgStore::open(
        &pg_config(),
        StoreConfig {
            follow: true,
            ..store_config(&schema, AppendFsync::EverySec)
        },
    )
    .await
    .expect_err("no store in the schema");
    assert!(
        matches!(err, Error::NotFollowable { found: 0, .. }),
        "{err}"
    );
    // It created nothing.
    assert_eq!(
        value(&format!(
            "SELECT count(*) FROM pg_namespace WHERE nspname = '{schema}'"
        ))
        .await
        .as_deref(),
        Some("0")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn function_libraries_loaded_on_the_owner_reach_the_follower() {
    let schema = schema("rs_follow_functions");
    let owner = Server::start(&schema, AppendFsync::Always).await;
    let mut o = owner.client().await;
    let first = "#!lua name=lib1\nredis.register_function{function_name='one', callback=function() return 1 end, flags={'no-writes'}}";
    let _: String = q(&mut o, &["FUNCTION", "LOAD", first]).await;
    let f = follower(&schema).await;
    let mut c = f.client().await;
    until(
        &mut c,
        "a library loaded before the follower",
        &["FCALL_RO", "one", "0"],
        1,
    )
    .await;
    // Loaded, replaced and deleted while the follower runs.
    let second = "#!lua name=lib2\nredis.register_function{function_name='two', callback=function() return 2 end, flags={'no-writes'}}";
    let _: String = q(&mut o, &["FUNCTION", "LOAD", second]).await;
    until(
        &mut c,
        "a library loaded on the owner",
        &["FCALL_RO", "two", "0"],
        2,
    )
    .await;
    let replaced = first.replace("return 1", "return 11");
    let _: String = q(&mut o, &["FUNCTION", "LOAD", "REPLACE", &replaced]).await;
    until(
        &mut c,
        "a library replaced on the owner",
        &["FCALL_RO", "one", "0"],
        11,
    )
    .await;
    let _: () = q(&mut o, &["FUNCTION", "DELETE", "lib2"]).await;
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let listed: redis::Value = q(&mut c, &["FUNCTION", "LIST", "LIBRARYNAME", "lib2"]).await;
        if matches!(&listed, redis::Value::Array(items) if items.is_empty()) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "lib2 still on the follower: {listed:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    f.stop().await;
    owner.stop().await;
}

/// The follower's counter `name` in INFO replication.
async fn follow_count(c: &mut MultiplexedConnection, name: &str) -> u64 {
    let info: String = q(c, &["INFO", "replication"]).await;
    info.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(':')?.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {info}"))
}

/// Waits until the follower's counter `name` is past `than`.
async fn count_past(c: &mut MultiplexedConnection, name: &str, than: u64) -> u64 {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let now = follow_count(c, name).await;
        if now > than {
            return now;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{name} stayed {now}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_changed_on_the_owner_are_read_alone() {
    let schema = schema("rs_follow_part");
    let owner = Server::start(&schema, AppendFsync::Always).await;
    let mut o = owner.client().await;
    let follower = follower(&schema).await;
    let mut f = follower.client().await;
    let names: Vec<String> = (0..300).map(|i| format!("m{i}")).collect();
    let mut hset = vec!["HSET", "h"];
    let mut sadd = vec!["SADD", "s"];
    let mut zadd = vec!["ZADD", "z"];
    let scores: Vec<String> = (0..300).map(|i| i.to_string()).collect();
    for (name, score) in names.iter().zip(&scores) {
        hset.extend([name.as_str(), score.as_str()]);
        sadd.push(name);
        zadd.extend([score.as_str(), name.as_str()]);
    }
    let _: i64 = q(&mut o, &hset).await;
    let _: i64 = q(&mut o, &sadd).await;
    let _: i64 = q(&mut o, &zadd).await;
    let keys = ["h", "s", "z"];
    converge(&mut o, &mut f, &keys).await;
    let whole = follow_count(&mut f, "sluice_follow_keys_reread").await;
    let members = follow_count(&mut f, "sluice_follow_members_reread").await;

    // Fields and members set, added, removed (the empty field too), expiries set: each
    // collection keeps its other 297 members in the follower's memory.
    let _: i64 = q(
        &mut o,
        &["HSET", "h", "m1", "new", "added", "a", "", "empty"],
    )
    .await;
    let _: i64 = q(&mut o, &["HDEL", "h", "m2"]).await;
    let _: i64 = q(&mut o, &["SADD", "s", "added"]).await;
    let _: i64 = q(&mut o, &["SREM", "s", "m3"]).await;
    let _: i64 = q(&mut o, &["ZADD", "z", "42", "m5", "-1", "added"]).await;
    let _: i64 = q(&mut o, &["ZREM", "z", "m6"]).await;
    let _: i64 = q(&mut o, &["EXPIRE", "h", "1000"]).await;
    converge(&mut o, &mut f, &keys).await;
    let _: i64 = q(&mut o, &["HDEL", "h", ""]).await;
    converge(&mut o, &mut f, &keys).await;
    // Only the expiry: the key's row alone.
    let _: i64 = q(&mut o, &["PEXPIRE", "s", "900000"]).await;
    converge(&mut o, &mut f, &keys).await;
    let _: i64 = q(&mut o, &["PERSIST", "h"]).await;
    converge(&mut o, &mut f, &keys).await;
    assert!(follow_count(&mut f, "sluice_follow_members_reread").await > members);
    assert_eq!(
        follow_count(&mut f, "sluice_follow_keys_reread").await,
        whole,
        "a key written in part was read whole"
    );

    // Changed in part, then deleted or made another type: the follower reads what is there.
    let _: i64 = q(&mut o, &["HSET", "h", "m7", "x"]).await;
    let _: i64 = q(&mut o, &["DEL", "h"]).await;
    let _: i64 = q(&mut o, &["SREM", "s", "m8"]).await;
    let _: i64 = q(&mut o, &["DEL", "s"]).await;
    let _: i64 = q(&mut o, &["RPUSH", "s", "now a list"]).await;
    converge(&mut o, &mut f, &keys).await;
    count_past(&mut f, "sluice_follow_keys_reread", whole).await;
    assert_eq!(q::<i64>(&mut f, &["EXISTS", "h"]).await, 0);

    // Emptied by removals on the owner (which deletes the key): gone on the follower too.
    let _: i64 = q(&mut o, &["ZREMRANGEBYRANK", "z", "0", "-1"]).await;
    until(&mut f, "the emptied sorted set", &["EXISTS", "z"], 0).await;

    follower.stop().await;
    owner.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_changes_in_part_and_whole_converge() {
    let schema = schema("rs_follow_random");
    // Each write its own flush: most change an existing key in part.
    let owner = Server::start(&schema, AppendFsync::Always).await;
    let mut o = owner.client().await;
    let follower = follower(&schema).await;
    let mut f = follower.client().await;
    // A fixed sequence (a linear congruential generator): a failure replays.
    let mut state: u64 = 0x5eed;
    let mut next = |n: u64| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) % n
    };
    let keys = ["k0", "k1", "k2", "k3", "k4", "k5"];
    for round in 0..600 {
        let key = keys[next(keys.len() as u64) as usize];
        let member = format!("m{}", next(40));
        let value = format!("v{round}");
        let args: Vec<String> = match next(12) {
            0 | 1 => vec!["HSET".into(), key.into(), member, value],
            2 => vec!["HDEL".into(), key.into(), member],
            3 | 4 => vec!["SADD".into(), key.into(), member],
            5 => vec!["SREM".into(), key.into(), member],
            6 | 7 => vec!["ZADD".into(), key.into(), next(100).to_string(), member],
            8 => vec!["ZREM".into(), key.into(), member],
            9 => vec!["PEXPIRE".into(), key.into(), "600000".into()],
            10 => vec!["PERSIST".into(), key.into()],
            _ => vec!["DEL".into(), key.into()],
        };
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        // A command on a key of another type fails, as in Redis; that is part of the mix.
        let _: redis::RedisResult<redis::Value> = {
            let mut cmd = redis::cmd(args[0]);
            for a in &args[1..] {
                cmd.arg(*a);
            }
            cmd.query_async(&mut o).await
        };
        if round % 50 == 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    converge(&mut o, &mut f, &keys).await;
    assert!(follow_count(&mut f, "sluice_follow_members_reread").await > 0);
    follower.stop().await;
    owner.stop().await;
}
