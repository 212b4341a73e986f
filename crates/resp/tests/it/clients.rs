//! Real clients against an in-process Sluice: the `redis` crate (async, pipelines, blocking pops,
//! pub/sub, WATCH), raw RESP3 exchanges, AUTH, active expiry, and redis-cli.

use crate::common;

use std::time::Duration;

use common::{RawClient, Sluice, have};
use futures_util::StreamExt;
use redis::AsyncCommands;

#[tokio::test]
async fn redis_crate_strings_lists_hashes_sets_zsets() {
    let server = Sluice::start();
    let mut c = server.redis().await;
    let _: () = c.set("greeting", "hello").await.unwrap();
    let got: String = c.get("greeting").await.unwrap();
    assert_eq!(got, "hello");
    let n: i64 = c.incr("counter", 5).await.unwrap();
    assert_eq!(n, 5);
    let _: () = c.rpush("list", &["a", "b", "c"]).await.unwrap();
    let items: Vec<String> = c.lrange("list", 0, -1).await.unwrap();
    assert_eq!(items, ["a", "b", "c"]);
    let _: () = c
        .hset_multiple("hash", &[("f1", "v1"), ("f2", "v2")])
        .await
        .unwrap();
    let v: String = c.hget("hash", "f2").await.unwrap();
    assert_eq!(v, "v2");
    let added: i64 = c.sadd("set", &["x", "y", "x"]).await.unwrap();
    assert_eq!(added, 2);
    let _: () = c
        .zadd_multiple("zset", &[(2.5, "b"), (1.0, "a")])
        .await
        .unwrap();
    let ranked: Vec<(String, f64)> = c.zrange_withscores("zset", 0, -1).await.unwrap();
    assert_eq!(ranked, vec![("a".to_owned(), 1.0), ("b".to_owned(), 2.5)]);
    let err = c.get::<_, String>("list").await.unwrap_err();
    assert!(err.to_string().contains("WRONGTYPE"), "{err}");
}

#[tokio::test]
async fn redis_crate_pipeline_and_big_values() {
    let server = Sluice::start();
    let mut c = server.redis().await;
    let big = vec![b'x'; 3 * 1024 * 1024];
    let mut pipe = redis::pipe();
    for i in 0..1000 {
        pipe.set(format!("k{i}"), i).ignore();
    }
    pipe.set("big", &big[..]).ignore();
    pipe.get("k999").get("big").cmd("DBSIZE");
    let (last, back, size): (i64, Vec<u8>, i64) = pipe.query_async(&mut c).await.unwrap();
    assert_eq!(last, 999);
    assert_eq!(back.len(), big.len());
    assert_eq!(size, 1001);
}

#[tokio::test]
async fn blocking_pops_are_served_by_pushes_from_other_clients() {
    // Connection threads (one runtime each): the waiter and the pusher may live on different ones.
    let server = Sluice::start_with(sluice_resp::Config {
        io_threads: 2,
        ..Default::default()
    });
    let mut waiter = server.redis().await;
    let mut mover = server.redis().await;
    let mut pusher = server.redis().await;
    let pop = tokio::spawn(async move {
        let got: Option<(String, String)> = waiter.blpop(&["q1", "q2"], 10.0).await.unwrap();
        got
    });
    let moved = tokio::spawn(async move {
        let got: Option<String> = mover
            .blmove(
                "src",
                "dst",
                redis::Direction::Left,
                redis::Direction::Right,
                10.0,
            )
            .await
            .unwrap();
        got
    });
    // Push only once both clients are blocked, so the pushes have someone to serve.
    RawClient::connect(server.port)
        .unwrap()
        .wait_blocked(2)
        .await;
    let _: () = pusher.rpush("q2", &["first", "second"]).await.unwrap();
    let _: () = pusher.rpush("src", "element").await.unwrap();
    assert_eq!(
        pop.await.unwrap(),
        Some(("q2".to_owned(), "first".to_owned()))
    );
    assert_eq!(moved.await.unwrap(), Some("element".to_owned()));
    let rest: Vec<String> = pusher.lrange("q2", 0, -1).await.unwrap();
    assert_eq!(rest, ["second"]);
    let dst: Vec<String> = pusher.lrange("dst", 0, -1).await.unwrap();
    assert_eq!(dst, ["element"]);
    let timed_out: Option<(String, String)> = pusher.brpop("empty", 0.05).await.unwrap();
    assert_eq!(timed_out, None);
}

#[tokio::test]
async fn pub_sub_with_channels_and_patterns() {
    let server = Sluice::start_with(sluice_resp::Config {
        io_threads: 2,
        ..Default::default()
    });
    let client = redis::Client::open(server.url()).unwrap();
    let mut sub = client.get_async_pubsub().await.unwrap();
    sub.subscribe("news").await.unwrap();
    sub.psubscribe("sport.*").await.unwrap();
    let mut publisher = server.redis().await;
    let n: i64 = publisher.publish("news", "hello").await.unwrap();
    assert_eq!(n, 1);
    let n: i64 = publisher.publish("sport.tennis", "ace").await.unwrap();
    assert_eq!(n, 1);
    let n: i64 = publisher.publish("weather", "rain").await.unwrap();
    assert_eq!(n, 0);
    let mut stream = sub.on_message();
    let mut next = async || {
        tokio::time::timeout(Duration::from_secs(10), stream.next())
            .await
            .expect("message within 10 s")
            .expect("open")
    };
    let first = next().await;
    assert_eq!(
        (
            first.get_channel_name(),
            first.get_payload::<String>().unwrap()
        ),
        ("news", "hello".to_owned())
    );
    let second = next().await;
    assert_eq!(second.get_channel_name(), "sport.tennis");
    assert_eq!(second.get_pattern::<String>().unwrap(), "sport.*");
}

#[test]
fn watch_fails_exec_when_another_client_writes() {
    let server = Sluice::start();
    let mut a = RawClient::connect(server.port).unwrap();
    let mut b = RawClient::connect(server.port).unwrap();
    assert_eq!(a.call(&["SET", "k", "1"]), b"+OK\r\n");
    assert_eq!(a.call(&["WATCH", "k"]), b"+OK\r\n");
    assert_eq!(b.call(&["INCR", "k"]), b":2\r\n");
    assert_eq!(a.call(&["MULTI"]), b"+OK\r\n");
    assert_eq!(a.call(&["INCR", "k"]), b"+QUEUED\r\n");
    assert_eq!(a.call(&["EXEC"]), b"*-1\r\n");
    // Without a concurrent write the same transaction commits.
    assert_eq!(a.call(&["WATCH", "k"]), b"+OK\r\n");
    assert_eq!(a.call(&["MULTI"]), b"+OK\r\n");
    assert_eq!(a.call(&["INCR", "k"]), b"+QUEUED\r\n");
    assert_eq!(a.call(&["EXEC"]), b"*1\r\n:3\r\n");
    // A watched key that expires before EXEC fails the transaction, as in Redis 7.
    assert_eq!(a.call(&["SET", "t", "1", "PX", "30"]), b"+OK\r\n");
    assert_eq!(a.call(&["WATCH", "t"]), b"+OK\r\n");
    std::thread::sleep(Duration::from_millis(80));
    assert_eq!(a.call(&["MULTI"]), b"+OK\r\n");
    assert_eq!(a.call(&["GET", "t"]), b"+QUEUED\r\n");
    assert_eq!(a.call(&["EXEC"]), b"*-1\r\n");
}

#[test]
fn resp3_hello_map_and_push_messages() {
    let server = Sluice::start();
    let mut c = RawClient::connect(server.port).unwrap();
    let hello = c.call(&["HELLO", "3"]);
    let text = String::from_utf8_lossy(&hello);
    assert!(
        text.starts_with("%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n"),
        "{text}"
    );
    assert!(text.contains("$5\r\nproto\r\n:3\r\n"), "{text}");
    assert_eq!(
        c.call(&["HELLO", "4"]),
        b"-NOPROTO unsupported protocol version\r\n"
    );
    assert_eq!(c.call(&["GET", "missing"]), b"_\r\n");
    // INFO in RESP3 is a verbatim string with every section.
    let info = String::from_utf8_lossy(&c.call(&["INFO"])).into_owned();
    assert!(
        info.starts_with('=') && info.contains("txt:# Server"),
        "{info}"
    );
    for needle in [
        "loading:0",
        "# Memory",
        "used_memory:",
        "# Keyspace",
        "pubsub_channels:0",
    ] {
        assert!(info.contains(needle), "INFO lacks {needle}: {info}");
    }
    assert_eq!(
        c.call(&["SUBSCRIBE", "ch"]),
        b">3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n"
    );
    // RESP3 allows ordinary commands while subscribed.
    assert_eq!(c.call(&["PING"]), b"+PONG\r\n");
    let mut p = RawClient::connect(server.port).unwrap();
    assert_eq!(p.call(&["PUBLISH", "ch", "hi"]), b":1\r\n");
    assert_eq!(
        c.read_reply(),
        b">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n"
    );
}

#[test]
fn auth_with_a_configured_password() {
    let config = sluice_resp::Config {
        password: Some("s3cret".into()),
        ..Default::default()
    };
    let server = Sluice::start_with(config);
    let mut c = RawClient::connect(server.port).unwrap();
    assert_eq!(
        c.call(&["GET", "k"]),
        b"-NOAUTH Authentication required.\r\n"
    );
    assert_eq!(
        c.call(&["AUTH", "wrong"]),
        b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"
    );
    assert_eq!(c.call(&["AUTH", "s3cret"]), b"+OK\r\n");
    assert_eq!(c.call(&["GET", "k"]), b"$-1\r\n");
    let mut d = RawClient::connect(server.port).unwrap();
    let hello = d.call(&["HELLO", "3", "AUTH", "default", "s3cret", "SETNAME", "me"]);
    assert!(
        hello.starts_with(b"%7\r\n"),
        "{}",
        String::from_utf8_lossy(&hello)
    );
    assert_eq!(d.call(&["CLIENT", "GETNAME"]), b"$2\r\nme\r\n");
    // Before AUTH, requests stay small (Redis's unauthenticated limits), then the limits lift.
    let mut e = RawClient::connect(server.port).unwrap();
    let eleven: Vec<&str> = std::iter::once("DEL")
        .chain(std::iter::repeat_n("k", 10))
        .collect();
    assert_eq!(
        e.call(&eleven),
        b"-ERR Protocol error: unauthenticated multibulk length\r\n"
    );
    assert!(e.is_closed());
    let mut f = RawClient::connect(server.port).unwrap();
    assert_eq!(f.call(&["AUTH", "s3cret"]), b"+OK\r\n");
    assert_eq!(f.call(&eleven), b":0\r\n");
}

#[test]
fn active_expiry_removes_keys_nobody_reads() {
    let server = Sluice::start();
    let mut c = RawClient::connect(server.port).unwrap();
    for i in 0..50 {
        c.call(&["SET", &format!("k{i}"), "v", "PX", "20"]);
    }
    c.call(&["SET", "stays", "v"]);
    let mut size = Vec::new();
    for _ in 0..200 {
        size = c.call(&["DBSIZE"]);
        if size == b":1\r\n" {
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    assert_eq!(
        size, b":1\r\n",
        "expired keys were not removed by the active cycle"
    );
}

#[test]
fn redis_cli_talks_to_sluice() {
    if !have("redis-cli") {
        eprintln!("SKIP: redis-cli is not installed");
        return;
    }
    let server = Sluice::start();
    let port = server.port.to_string();
    let cli = |args: &[&str]| {
        let out = std::process::Command::new("redis-cli")
            .args(["-p", &port])
            .args(args)
            .output()
            .expect("redis-cli");
        String::from_utf8_lossy(&out.stdout).trim_end().to_owned()
    };
    assert_eq!(cli(&["SET", "name", "sluice"]), "OK");
    assert_eq!(cli(&["GET", "name"]), "sluice");
    assert_eq!(cli(&["RPUSH", "l", "a", "b"]), "2");
    assert_eq!(cli(&["LRANGE", "l", "0", "-1"]), "a\nb");
    assert_eq!(cli(&["-3", "HSET", "h", "f", "v"]), "1");
    assert!(cli(&["INFO", "persistence"]).contains("loading:0"));
    assert_eq!(cli(&["DBSIZE"]), "3");
    // --pipe mode sends raw protocol in bulk and reports the replies.
    let mut child = std::process::Command::new("redis-cli")
        .args(["-p", &port, "--pipe"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("redis-cli --pipe");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        for i in 0..1000 {
            stdin
                .write_all(&RawClient::encode(&["SET", &format!("p{i}"), "x"]))
                .unwrap();
        }
    }
    let out = child.wait_with_output().expect("wait");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("errors: 0, replies: 1000"), "{text}");
    assert_eq!(cli(&["DBSIZE"]), "1003");
}

#[test]
fn client_command_and_config_introspection() {
    let server = Sluice::start();
    let mut c = RawClient::connect(server.port).unwrap();
    assert_eq!(c.call(&["CLIENT", "SETNAME", "worker-1"]), b"+OK\r\n");
    assert_eq!(
        c.call(&["CLIENT", "SETINFO", "LIB-NAME", "mylib"]),
        b"+OK\r\n"
    );
    assert_eq!(
        c.call(&["CLIENT", "SETINFO", "LIB-VER", "1.2.3"]),
        b"+OK\r\n"
    );
    let list = String::from_utf8_lossy(&c.call(&["CLIENT", "LIST"])).into_owned();
    for needle in [
        "id=",
        "name=worker-1",
        "db=0",
        "lib-name=mylib",
        "lib-ver=1.2.3",
        "cmd=client",
    ] {
        assert!(list.contains(needle), "CLIENT LIST lacks {needle}: {list}");
    }
    let id = String::from_utf8_lossy(&c.call(&["CLIENT", "ID"])).into_owned();
    assert!(id.starts_with(':'), "{id}");
    let count = String::from_utf8_lossy(&c.call(&["COMMAND", "COUNT"])).into_owned();
    let n: usize = count.trim_start_matches(':').trim().parse().unwrap();
    assert!(n > 140, "{count}");
    let docs = String::from_utf8_lossy(&c.call(&["COMMAND", "DOCS", "get"])).into_owned();
    assert!(docs.starts_with("*2\r\n$3\r\nget\r\n"), "{docs}");
    let all = String::from_utf8_lossy(&c.call(&["CONFIG", "GET", "*"])).into_owned();
    for needle in [
        "maxmemory",
        "appendonly",
        "databases",
        "save",
        "requirepass",
        "proto-max-bulk-len",
    ] {
        assert!(all.contains(needle), "CONFIG GET * lacks {needle}");
    }
    assert_eq!(
        c.call(&[
            "CONFIG",
            "SET",
            "stream-node-max-entries",
            "50",
            "lua-time-limit",
            "200"
        ]),
        b"+OK\r\n"
    );
    assert_eq!(
        c.call(&["CONFIG", "GET", "stream-node-max-entries", "busy-reply*"]),
        b"*4\r\n$23\r\nstream-node-max-entries\r\n$2\r\n50\r\n$20\r\nbusy-reply-threshold\r\n$3\r\n200\r\n"
    );
    // What Sluice fixes at start is refused, not silently accepted.
    assert!(
        c.call(&["CONFIG", "SET", "appendonly", "yes"])
            .starts_with(b"-ERR CONFIG SET failed (possibly related to argument 'appendonly')")
    );
}

#[test]
fn a_subscriber_that_does_not_read_is_cut_off_at_the_output_limit() {
    let server = Sluice::start();
    let mut sub = RawClient::connect(server.port).unwrap();
    assert_eq!(
        sub.call(&["SUBSCRIBE", "firehose"]),
        b"*3\r\n$9\r\nsubscribe\r\n$8\r\nfirehose\r\n:1\r\n"
    );
    let mut publisher = RawClient::connect(server.port).unwrap();
    let payload = vec![b'x'; 1024 * 1024];
    let mut delivered = 0;
    let mut refused = false;
    for _ in 0..200 {
        let reply = publisher.call(&[&b"PUBLISH"[..], b"firehose", &payload]);
        if reply == b":0\r\n" {
            refused = true;
            break;
        }
        assert_eq!(reply, b":1\r\n");
        delivered += 1;
    }
    // The queue stops at Redis's 32 MB pub/sub limit (plus what the socket buffers hold).
    assert!(
        refused,
        "200 MB were queued for a subscriber that never reads"
    );
    // 31, not 32: each queued message also counts its framing, so 32 MiB holds 31 whole 1 MiB
    // messages when the subscriber's task has not yet moved any to its socket (a loaded machine;
    // CI once saw exactly 31).
    assert!(
        delivered >= 31,
        "only {delivered} MB were queued before the limit"
    );
    // And the server closed the subscriber, as Redis does: draining its socket ends in EOF.
    // What arrives before it may be nothing: on a loaded machine the subscriber's task may not
    // have moved any message to its socket before the limit was reached, and the queue is
    // dropped with the connection (Redis drops a closed client's output buffer too).
    let mut drained = 0usize;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        use std::io::Read;
        match sub.reader_mut().read(&mut buf) {
            Ok(0) => break,
            Ok(n) => drained += n,
            Err(e) => panic!("reading the cut-off subscriber failed after {drained} bytes: {e}"),
        }
    }
    assert!(
        drained <= 40 << 20,
        "{drained} bytes reached a subscriber limited to 32 MB"
    );
}

#[tokio::test]
async fn concurrent_clients_on_several_threads_see_atomic_commands_and_transactions() {
    let server = Sluice::start_with(sluice_resp::Config {
        io_threads: 2,
        ..Default::default()
    });
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let mut c = server.redis().await;
        tasks.push(tokio::spawn(async move {
            for _ in 0..300 {
                let _: i64 = c.incr("counter", 1).await.unwrap();
                // Two keys changed in one transaction must never be seen apart.
                let _: () = redis::pipe()
                    .atomic()
                    .incr("a", 1)
                    .ignore()
                    .incr("b", 1)
                    .ignore()
                    .query_async(&mut c)
                    .await
                    .unwrap();
            }
        }));
    }
    let mut reader = server.redis().await;
    for _ in 0..300 {
        let (a, b): (Option<i64>, Option<i64>) = redis::cmd("MGET")
            .arg("a")
            .arg("b")
            .query_async(&mut reader)
            .await
            .unwrap();
        assert_eq!(a, b, "a transaction was observed half done");
    }
    for t in tasks {
        t.await.unwrap();
    }
    let total: i64 = reader.get("counter").await.unwrap();
    assert_eq!(total, 8 * 300);
    let (a, b): (i64, i64) = redis::cmd("MGET")
        .arg("a")
        .arg("b")
        .query_async(&mut reader)
        .await
        .unwrap();
    assert_eq!((a, b), (2400, 2400));
}

/// With one connection thread (as `sluice serve` runs), a SUBSCRIBE or UNSUBSCRIBE sent before
/// another client's PUBLISH counts for it even when the subscriber does not wait for its reply
/// (both arrive in one wake-up of the thread, where the runtime would run the last first).
#[test]
fn publish_sees_subscriptions_sent_before_it() {
    let server = Sluice::start_with(sluice_resp::Config {
        io_threads: 1,
        ..sluice_resp::Config::default()
    });
    let mut publisher = RawClient::connect(server.port).expect("connect");
    let (mut subscribed_late, mut unsubscribed_late) = (0, 0);
    for round in 0..200 {
        let channel = format!("chan{round}");
        let mut sub = RawClient::connect(server.port).expect("connect");
        assert_eq!(sub.call(&["PING"]), b"+PONG\r\n");
        sub.send_raw(&RawClient::encode(&["SUBSCRIBE", &channel]));
        if publisher.call(&["PUBLISH", &channel, "hello"]) != b":1\r\n" {
            subscribed_late += 1;
        }
        let _ = sub.read_reply();
        sub.send_raw(&RawClient::encode(&["UNSUBSCRIBE"]));
        if publisher.call(&["PUBLISH", &channel, "hello"]) != b":0\r\n" {
            unsubscribed_late += 1;
        }
    }
    assert_eq!(
        (subscribed_late, unsubscribed_late),
        (0, 0),
        "PUBLISH ran before a subscription change sent earlier"
    );
}
