//! MIGRATE between two Sluices and with a private redis-server both ways: keys moved (or copied)
//! with their values and TTLs, KEYS, AUTH2, REPLACE, and Redis's answers for a missing key, a
//! busy target key and an unreachable target.

use crate::common;

use common::{RawClient, RedisServer, Sluice, free_port};

fn text(reply: &[u8]) -> String {
    String::from_utf8_lossy(reply).into_owned()
}

fn pttl(c: &mut RawClient, key: &str) -> i64 {
    let reply = text(&c.call(&["PTTL", key]));
    reply
        .trim_start_matches(':')
        .trim_end()
        .parse()
        .expect("PTTL")
}

#[test]
fn keys_move_between_two_sluices() {
    let source = Sluice::start();
    let target = Sluice::start_with(sluice_resp::Config {
        users: vec!["mover on >secret ~* +@all".to_owned()],
        ..sluice_resp::Config::default()
    });
    let mut s = RawClient::connect(source.port).expect("connect");
    let mut t = RawClient::connect(target.port).expect("connect");
    let port = target.port.to_string();
    assert_eq!(s.call(&["SET", "str", "hello", "PX", "600000"]), b"+OK\r\n");
    assert_eq!(s.call(&["HSET", "h", "f", "v", "g", "w"]), b":2\r\n");
    assert_eq!(s.call(&["RPUSH", "l", "a", "b", "c"]), b":3\r\n");
    // One key, with the default user of the target (nopass).
    assert_eq!(
        s.call(&["MIGRATE", "127.0.0.1", &port, "str", "0", "5000"]),
        b"+OK\r\n"
    );
    assert_eq!(s.call(&["EXISTS", "str"]), b":0\r\n", "moved, not copied");
    assert_eq!(t.call(&["GET", "str"]), b"$5\r\nhello\r\n");
    let ttl = pttl(&mut t, "str");
    assert!((590_000..=600_000).contains(&ttl), "TTL {ttl}");
    // Several keys into database 2, COPY keeps them here; AUTH2 as a user of the target.
    assert_eq!(
        s.call(&[
            "MIGRATE",
            "127.0.0.1",
            &port,
            "",
            "2",
            "5000",
            "COPY",
            "AUTH2",
            "mover",
            "secret",
            "KEYS",
            "h",
            "l",
            "absent",
        ]),
        b"+OK\r\n"
    );
    assert_eq!(s.call(&["EXISTS", "h", "l"]), b":2\r\n");
    assert_eq!(t.call(&["SELECT", "2"]), b"+OK\r\n");
    assert_eq!(t.call(&["HGET", "h", "g"]), b"$1\r\nw\r\n");
    assert_eq!(
        t.call(&["LRANGE", "l", "0", "-1"]),
        b"*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"
    );
    assert_eq!(pttl(&mut t, "l"), -1, "no expiry stays no expiry");
    // The target key exists: Redis's error, and the source keeps its key; REPLACE overwrites.
    assert_eq!(s.call(&["RPUSH", "l", "d"]), b":4\r\n");
    assert_eq!(
        text(&s.call(&[
            "MIGRATE",
            "127.0.0.1",
            &port,
            "l",
            "2",
            "5000",
            "AUTH2",
            "mover",
            "secret"
        ])),
        "-ERR Target instance replied with error: BUSYKEY Target key name already exists.\r\n"
    );
    assert_eq!(s.call(&["EXISTS", "l"]), b":1\r\n");
    assert_eq!(
        s.call(&[
            "MIGRATE",
            "127.0.0.1",
            &port,
            "l",
            "2",
            "5000",
            "REPLACE",
            "AUTH2",
            "mover",
            "secret"
        ]),
        b"+OK\r\n"
    );
    assert_eq!(t.call(&["LLEN", "l"]), b":4\r\n");
    // A wrong password, a missing key, bad arguments, nobody listening.
    assert!(
        text(&s.call(&[
            "MIGRATE",
            "127.0.0.1",
            &port,
            "h",
            "0",
            "5000",
            "AUTH2",
            "mover",
            "nope"
        ]))
        .starts_with("-ERR Target instance replied with error: WRONGPASS"),
    );
    assert_eq!(
        s.call(&["MIGRATE", "127.0.0.1", &port, "absent", "0", "5000"]),
        b"+NOKEY\r\n"
    );
    assert!(
        text(&s.call(&["MIGRATE", "127.0.0.1", &port, "h", "0", "5000", "KEYS", "h"])).starts_with(
            "-ERR When using MIGRATE KEYS option, the key argument must be set to the empty string"
        ),
    );
    assert_eq!(
        text(&s.call(&["MIGRATE", "127.0.0.1", &port, "h", "0", "5000", "LATER"])),
        "-ERR syntax error\r\n"
    );
    let closed = free_port().to_string();
    assert_eq!(
        text(&s.call(&["MIGRATE", "127.0.0.1", &closed, "h", "0", "500"])),
        "-IOERR error or timeout connecting to the client\r\n"
    );
    assert_eq!(s.call(&["EXISTS", "h"]), b":1\r\n");
    // COMMAND GETKEYS knows both forms.
    assert_eq!(
        s.call(&[
            "COMMAND", "GETKEYS", "MIGRATE", "h", "1", "", "0", "5", "KEYS", "a", "b"
        ]),
        b"*2\r\n$1\r\na\r\n$1\r\nb\r\n"
    );
}

#[test]
fn keys_move_between_sluice_and_redis_server() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let sluice = Sluice::start();
    let mut s = RawClient::connect(sluice.port).expect("connect");
    let mut r = RawClient::connect(redis.port).expect("connect");
    assert_eq!(s.call(&["ZADD", "z", "1", "a", "2.5", "b"]), b":2\r\n");
    assert_eq!(s.call(&["SET", "n", "42", "EX", "1000"]), b"+OK\r\n");
    let redis_port = redis.port.to_string();
    assert_eq!(
        s.call(&[
            "MIGRATE",
            "127.0.0.1",
            &redis_port,
            "",
            "0",
            "5000",
            "KEYS",
            "z",
            "n"
        ]),
        b"+OK\r\n"
    );
    assert_eq!(s.call(&["DBSIZE"]), b":0\r\n");
    assert_eq!(r.call(&["ZSCORE", "z", "b"]), b"$3\r\n2.5\r\n");
    assert_eq!(r.call(&["GET", "n"]), b"$2\r\n42\r\n");
    assert!(pttl(&mut r, "n") > 990_000);
    // And back: redis-server's MIGRATE into Sluice (SELECT then RESTORE, as Redis sends them).
    assert_eq!(r.call(&["SADD", "s", "x", "y"]), b":2\r\n");
    let sluice_port = sluice.port.to_string();
    assert_eq!(
        r.call(&[
            "MIGRATE",
            "127.0.0.1",
            &sluice_port,
            "",
            "0",
            "5000",
            "KEYS",
            "s",
            "z",
            "n"
        ]),
        b"+OK\r\n"
    );
    assert_eq!(r.call(&["DBSIZE"]), b":0\r\n");
    assert_eq!(s.call(&["SCARD", "s"]), b":2\r\n");
    assert_eq!(s.call(&["ZSCORE", "z", "a"]), b"$1\r\n1\r\n");
    assert!(pttl(&mut s, "n") > 980_000);
}
