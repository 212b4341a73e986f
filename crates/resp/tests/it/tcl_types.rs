//! Behaviour Redis's Tcl suite (data-type units) found missing or different, each pinned with the
//! exact reply Redis 7.0 gives, through a raw RESP client.

use crate::common;

use common::{RawClient, Sluice};

fn client(server: &Sluice) -> RawClient {
    RawClient::connect(server.port).expect("connect")
}

/// The error text of an error reply.
fn error_of(reply: &[u8]) -> String {
    assert!(reply.starts_with(b"-"), "expected an error, got {reply:?}");
    String::from_utf8_lossy(&reply[1..reply.len() - 2]).into_owned()
}

#[test]
fn encoding_thresholds_and_save_are_settable() {
    let server = Sluice::start();
    let mut c = client(&server);
    assert_eq!(
        c.call(&["CONFIG", "SET", "zset-max-ziplist-entries", "1"]),
        b"+OK\r\n"
    );
    assert_eq!(
        c.call(&["CONFIG", "GET", "zset-max-listpack-entries"]),
        b"*2\r\n$25\r\nzset-max-listpack-entries\r\n$1\r\n1\r\n"
    );
    c.call(&["ZADD", "z", "1", "a"]);
    assert_eq!(c.call(&["OBJECT", "ENCODING", "z"]), b"$8\r\nlistpack\r\n");
    c.call(&["ZADD", "z", "2", "b"]);
    assert_eq!(c.call(&["OBJECT", "ENCODING", "z"]), b"$8\r\nskiplist\r\n");
    for (name, value) in [
        ("hash-max-ziplist-value", "16"),
        ("set-max-intset-entries", "3"),
        ("list-max-ziplist-size", "1"),
        ("list-compress-depth", "2"),
        ("save", ""),
    ] {
        assert_eq!(
            c.call(&["CONFIG", "SET", name, value]),
            b"+OK\r\n",
            "{name}"
        );
    }
    assert_eq!(
        error_of(&c.call(&["CONFIG", "SET", "save", "100"])),
        "ERR CONFIG SET failed (possibly related to argument 'save') - Invalid save parameters"
    );
}

#[test]
fn hincrbyfloat_refuses_an_infinite_increment_before_creating_the_key() {
    let server = Sluice::start();
    let mut c = client(&server);
    assert_eq!(
        error_of(&c.call(&["HINCRBYFLOAT", "h", "f", "+inf"])),
        "ERR value is NaN or Infinity"
    );
    assert_eq!(c.call(&["EXISTS", "h"]), b":0\r\n");
    assert_eq!(
        error_of(&c.call(&["HINCRBYFLOAT", "h", "f", "nan"])),
        "ERR value is not a valid float"
    );
}

#[test]
fn sintercard_words_bad_numkeys_and_limit_as_redis() {
    let server = Sluice::start();
    let mut c = client(&server);
    c.call(&["SADD", "s", "a", "b"]);
    for numkeys in ["0", "a", "-1"] {
        assert_eq!(
            error_of(&c.call(&["SINTERCARD", numkeys, "s"])),
            "ERR numkeys should be greater than 0"
        );
    }
    for limit in ["-1", "a"] {
        assert_eq!(
            error_of(&c.call(&["SINTERCARD", "1", "s", "LIMIT", limit])),
            "ERR LIMIT can't be negative"
        );
    }
    assert_eq!(c.call(&["SINTERCARD", "1", "s", "LIMIT", "1"]), b":1\r\n");
}

#[test]
fn smove_of_a_member_the_destination_has_leaves_its_watchers_alone() {
    let server = Sluice::start();
    let mut c = client(&server);
    let mut other = client(&server);
    c.call(&["SADD", "src", "a", "b"]);
    c.call(&["SADD", "dst", "a"]);
    c.call(&["WATCH", "dst"]);
    c.call(&["MULTI"]);
    c.call(&["SADD", "dst", "c"]);
    assert_eq!(other.call(&["SMOVE", "src", "dst", "a"]), b":1\r\n");
    assert_eq!(c.call(&["EXEC"]), b"*1\r\n:1\r\n");
    assert_eq!(c.call(&["SCARD", "dst"]), b":2\r\n");
    assert_eq!(c.call(&["SISMEMBER", "src", "a"]), b":0\r\n");
    // A member new to the destination does touch it.
    c.call(&["WATCH", "dst"]);
    c.call(&["MULTI"]);
    c.call(&["SCARD", "dst"]);
    assert_eq!(other.call(&["SMOVE", "src", "dst", "b"]), b":1\r\n");
    assert_eq!(c.call(&["EXEC"]), b"*-1\r\n");
}

/// Reads INFO `section` as text.
fn info(c: &mut RawClient, section: &str) -> String {
    String::from_utf8_lossy(&c.call(&["INFO", section])).into_owned()
}

fn wait_blocked(c: &mut RawClient, n: usize) {
    for _ in 0..500 {
        if c.blocked_clients_are(n) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("{n} clients never blocked");
}

#[test]
fn a_group_reader_unblocked_with_an_error_counts_as_a_failed_call() {
    let server = Sluice::start();
    let mut c = client(&server);
    let mut reader = client(&server);
    c.call(&["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]);
    c.call(&["CONFIG", "RESETSTAT"]);
    reader.send_raw(&RawClient::encode(&[
        "XREADGROUP",
        "GROUP",
        "g",
        "alice",
        "BLOCK",
        "0",
        "STREAMS",
        "s",
        ">",
    ]));
    wait_blocked(&mut c, 1);
    assert_eq!(c.call(&["XGROUP", "DESTROY", "s", "g"]), b":1\r\n");
    assert!(
        error_of(&reader.read_reply()).starts_with("NOGROUP "),
        "a destroyed group unblocks its readers with NOGROUP"
    );
    let errors = info(&mut c, "errorstats");
    assert!(errors.contains("errorstat_NOGROUP:count=1\r\n"), "{errors}");
    let commands = info(&mut c, "commandstats");
    let line = commands
        .lines()
        .find(|l| l.starts_with("cmdstat_xreadgroup:"))
        .expect("xreadgroup stats");
    assert!(line.starts_with("cmdstat_xreadgroup:calls=1,"), "{line}");
    assert!(line.ends_with("rejected_calls=0,failed_calls=1"), "{line}");
    assert!(info(&mut c, "stats").contains("total_error_replies:1\r\n"));
}

/// Two connections on one connection thread: a blocking read sent first, then (without waiting
/// for it to block) a delete from another client. Redis serves them in the order they arrived,
/// so the reader is always unblocked by the delete; before Sluice kept that order, about one
/// round in five ran the delete first.
#[test]
fn commands_from_two_connections_run_in_the_order_they_arrived() {
    let server = Sluice::start_with(sluice_resp::Config {
        io_threads: 1,
        ..sluice_resp::Config::default()
    });
    let mut c = client(&server);
    for round in 0..100 {
        c.call(&["DEL", "s"]);
        c.call(&["XADD", "s", "1-1", "f", "v"]);
        c.call(&["XGROUP", "CREATE", "s", "g", "$"]);
        let mut reader = client(&server);
        assert_eq!(reader.call(&["PING"]), b"+PONG\r\n");
        // Long enough for the connection thread to stop polling and sleep in the kernel, so
        // that both requests can land before it wakes (as between the Tcl suite's commands).
        std::thread::sleep(std::time::Duration::from_millis(2));
        reader.send_raw(&RawClient::encode(&[
            "XREADGROUP",
            "GROUP",
            "g",
            "alice",
            "BLOCK",
            "0",
            "STREAMS",
            "s",
            ">",
        ]));
        assert_eq!(c.call(&["DEL", "s"]), b":1\r\n");
        assert_eq!(
            error_of(&reader.read_reply()),
            "UNBLOCKED the stream key no longer exists",
            "round {round}"
        );
    }
}

/// A flat field/value reply without the named fields (those that differ by design between the
/// two servers: the radix tree's shape, idle times).
fn without(reply: &[u8], dropped: &[&str]) -> Vec<Vec<u8>> {
    let (_, elements) = common::split_aggregate(reply).expect("an aggregate reply");
    let mut kept = Vec::new();
    for pair in elements.chunks(2) {
        let name = String::from_utf8_lossy(&pair[0]);
        if !dropped
            .iter()
            .any(|d| name.contains(&format!("\r\n{d}\r\n")))
        {
            kept.extend(pair.iter().cloned());
        }
    }
    kept
}

/// What both servers must answer alike about stream `key`.
fn stream_view(c: &mut RawClient, key: &str) -> Vec<Vec<u8>> {
    let mut view = vec![
        c.call(&["XRANGE", key, "-", "+"]),
        c.call(&["XINFO", "GROUPS", key]),
        c.call(&["XPENDING", key, "g1"]),
    ];
    view.extend(without(
        &c.call(&["XINFO", "STREAM", key]),
        &["radix-tree-keys", "radix-tree-nodes"],
    ));
    let (_, consumers) =
        common::split_aggregate(&c.call(&["XINFO", "CONSUMERS", key, "g1"])).expect("consumers");
    for consumer in consumers {
        view.extend(without(&consumer, &["idle"]));
    }
    view
}

/// A bulk reply's bytes.
fn bulk(reply: &[u8]) -> Vec<u8> {
    assert!(
        reply.starts_with(b"$"),
        "expected a bulk reply, got {reply:?}"
    );
    let end = reply.iter().position(|b| *b == b'\r').expect("header end");
    reply[end + 2..reply.len() - 2].to_vec()
}

#[test]
fn streams_dump_and_restore_between_redis_server_and_sluice() {
    let Some(redis) = common::RedisServer::start() else {
        return;
    };
    let server = Sluice::start();
    let mut r = RawClient::connect(redis.port).expect("connect redis");
    let mut s = client(&server);
    for i in 1..=300 {
        let id = format!("{}-{}", 1000 + i / 3, i % 3);
        let reply = if i % 11 == 0 {
            r.call(&["XADD", "st", &id, "other", &i.to_string(), "x", "y"])
        } else {
            r.call(&["XADD", "st", &id, "n", &i.to_string()])
        };
        assert!(reply.starts_with(b"$"), "{reply:?}");
    }
    r.call(&["XDEL", "st", "1005-0", "1050-2"]);
    r.call(&["XGROUP", "CREATE", "st", "g1", "0"]);
    r.call(&["XGROUP", "CREATE", "st", "g2", "$"]);
    r.call(&["XGROUP", "CREATECONSUMER", "st", "g1", "idle"]);
    r.call(&[
        "XREADGROUP",
        "GROUP",
        "g1",
        "alice",
        "COUNT",
        "5",
        "STREAMS",
        "st",
        ">",
    ]);
    r.call(&[
        "XREADGROUP",
        "GROUP",
        "g1",
        "bob",
        "COUNT",
        "3",
        "STREAMS",
        "st",
        ">",
    ]);
    r.call(&["XACK", "st", "g1", "1000-2"]);
    let payload = bulk(&r.call(&["DUMP", "st"]));
    assert_eq!(
        s.call(&[b"RESTORE".as_slice(), b"st", b"0", &payload]),
        b"+OK\r\n"
    );
    let view = stream_view(&mut s, "st");
    assert!(view[0].starts_with(b"*298\r\n"), "all live entries");
    assert!(
        view[2].starts_with(b"*4\r\n:7\r\n$6\r\n1000-1\r\n"),
        "{:?}",
        view[2]
    );
    assert_eq!(view, stream_view(&mut r, "st"));
    // And back: Sluice's dump restores in redis-server, which goes on serving the group.
    let back = bulk(&s.call(&["DUMP", "st"]));
    assert_eq!(
        r.call(&[b"RESTORE".as_slice(), b"copy", b"0", &back]),
        b"+OK\r\n"
    );
    assert_eq!(stream_view(&mut r, "copy"), stream_view(&mut r, "st"));
    for c in [&mut r, &mut s] {
        c.call(&["XADD", "st", "2000-0", "n", "new"]);
    }
    r.call(&["XADD", "copy", "2000-0", "n", "new"]);
    let next = r.call(&["XREADGROUP", "GROUP", "g2", "carol", "STREAMS", "copy", ">"]);
    assert!(
        String::from_utf8_lossy(&next).contains("2000-0"),
        "{next:?}"
    );
    assert_eq!(
        s.call(&["XREADGROUP", "GROUP", "g2", "carol", "STREAMS", "st", ">"]),
        r.call(&["XREADGROUP", "GROUP", "g2", "carol", "STREAMS", "st", ">"])
    );
}
