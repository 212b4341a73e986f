//! DUMP and RESTORE against a private redis-server 7.0: keys of every type and encoding copy
//! from redis-server to Sluice and back, streams with their consumer groups included, and both
//! then answer the same to reads; bad payloads get Redis's errors.

use crate::common;

use common::{RawClient, RedisServer, Sluice};

/// The bytes of a bulk reply.
fn bulk(reply: &[u8]) -> Vec<u8> {
    assert!(
        reply.starts_with(b"$"),
        "expected a bulk reply, got {reply:?}"
    );
    let end = reply.iter().position(|b| *b == b'\r').expect("header end");
    let len: usize = String::from_utf8_lossy(&reply[1..end])
        .parse()
        .expect("bulk length");
    reply[end + 2..end + 2 + len].to_vec()
}

fn call(c: &mut RawClient, args: &[&[u8]]) -> Vec<u8> {
    c.call(args)
}

/// Creates keys in every encoding redis-server 7.0 uses for them.
fn fill(c: &mut RawClient) {
    let long = "abc".repeat(300);
    let mut cmds: Vec<Vec<String>> = vec![
        vec!["SET".into(), "str".into(), "hello".into()],
        vec!["SET".into(), "int".into(), "-12345".into()],
        vec!["SET".into(), "lzf".into(), long.clone()],
        vec![
            "RPUSH".into(),
            "list".into(),
            "a".into(),
            "7".into(),
            "-300".into(),
            long.clone(),
        ],
        vec![
            "SADD".into(),
            "intset".into(),
            "1".into(),
            "-2".into(),
            "70000".into(),
            "5000000000".into(),
        ],
        vec![
            "SADD".into(),
            "set".into(),
            "x".into(),
            "y".into(),
            "z".into(),
        ],
        vec![
            "HSET".into(),
            "hash".into(),
            "f".into(),
            "v".into(),
            "n".into(),
            "12".into(),
        ],
        vec![
            "ZADD".into(),
            "zset".into(),
            "1.5".into(),
            "a".into(),
            "-2".into(),
            "b".into(),
            "inf".into(),
            "c".into(),
        ],
    ];
    let mut big_list = vec!["RPUSH".to_owned(), "biglist".to_owned()];
    let mut big_set = vec!["SADD".to_owned(), "bigset".to_owned()];
    let mut big_hash = vec!["HSET".to_owned(), "bighash".to_owned()];
    let mut big_zset = vec!["ZADD".to_owned(), "bigzset".to_owned()];
    for i in 0..1000 {
        big_list.push(format!("item-{i}"));
        big_set.push(format!("member-{i}"));
        big_hash.push(format!("field-{i}"));
        big_hash.push(format!("value-{}", i * 7));
        big_zset.push(format!("{}", f64::from(i) / 3.0));
        big_zset.push(format!("m{i}"));
    }
    cmds.extend([big_list, big_set, big_hash, big_zset]);
    for cmd in cmds {
        let args: Vec<&[u8]> = cmd.iter().map(|s| s.as_bytes()).collect();
        let reply = call(c, &args);
        assert!(!reply.starts_with(b"-"), "{cmd:?}: {reply:?}");
    }
}

const KEYS: [&str; 12] = [
    "str", "int", "lzf", "list", "intset", "set", "hash", "zset", "biglist", "bigset", "bighash",
    "bigzset",
];

/// A reply that shows the whole value the same way on both servers (sets and hashes sorted
/// by SORT ... ALPHA where order is not defined).
fn read_back(c: &mut RawClient, key: &str) -> Vec<u8> {
    let k = key.as_bytes();
    let kind = call(c, &[b"TYPE", k]);
    match kind.as_slice() {
        b"+string\r\n" => call(c, &[b"GET", k]),
        b"+list\r\n" => call(c, &[b"LRANGE", k, b"0", b"-1"]),
        b"+set\r\n" => call(c, &[b"SORT", k, b"ALPHA"]),
        b"+zset\r\n" => call(c, &[b"ZRANGE", k, b"0", b"-1", b"WITHSCORES"]),
        b"+hash\r\n" => {
            let mut fields = call(c, &[b"HKEYS", k]);
            let count = call(c, &[b"HLEN", k]);
            fields.extend_from_slice(&count);
            let mut pairs = Vec::new();
            let mut all = call(c, &[b"HGETALL", k]);
            pairs.append(&mut all);
            // Order differs between encodings: compare the sorted field/value lines.
            let text = String::from_utf8_lossy(&pairs).into_owned();
            let mut lines: Vec<&str> = text.split("\r\n").collect();
            lines.sort_unstable();
            lines.join("\n").into_bytes()
        }
        b"+stream\r\n" => {
            let mut out = call(c, &[b"XLEN", k]);
            out.extend(call(c, &[b"XRANGE", k, b"-", b"+"]));
            let groups = call(c, &[b"XINFO", b"GROUPS", k]);
            out.extend_from_slice(&groups);
            for group in [b"g1".as_slice(), b"g2", b"g3"] {
                out.extend(call(c, &[b"XPENDING", k, group]));
                out.extend(without_idle(&call(
                    c,
                    &[b"XPENDING", k, group, b"-", b"+", b"1000"],
                )));
            }
            // A missing group's error names the key: compare without it.
            String::from_utf8_lossy(&out)
                .replace(&format!("'{key}'"), "'KEY'")
                .into_bytes()
        }
        other => panic!("{key}: unexpected type {other:?}"),
    }
}

/// An extended XPENDING reply without each entry's idle time (it moves on while we look).
fn without_idle(reply: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(reply).into_owned();
    let lines: Vec<&str> = text.split("\r\n").collect();
    let mut kept = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        kept.push(lines[i]);
        if lines[i] == "*4" && i > 0 {
            // id header, id, consumer header, consumer, then the idle time to drop.
            kept.extend_from_slice(&lines[i + 1..(i + 5).min(lines.len())]);
            i += 6;
            continue;
        }
        i += 1;
    }
    kept.join("\r\n").into_bytes()
}

/// Streams as redis-server keeps them: entries with the master's fields and others, deleted
/// entries inside nodes, a thousand entries over several (compressed) listpacks, consumer
/// groups with pending entries, an empty stream with a group.
fn fill_streams(c: &mut RawClient) {
    let cmds: &[&[&str]] = &[
        &["XADD", "stream", "1-1", "name", "ann", "age", "30"],
        &["XADD", "stream", "1-2", "name", "bob", "age", "-7"],
        &[
            "XADD",
            "stream",
            "2-0",
            "other",
            "shape",
            "x",
            "123456789012",
        ],
        &["XADD", "stream", "2-5", "name", "cid", "age", "30"],
        &[
            "XADD",
            "stream",
            "3-0",
            "f",
            "a long value, long enough to be a string of more than sixty-four bytes",
        ],
        &["XDEL", "stream", "1-2"],
        &["XGROUP", "CREATE", "stream", "g1", "0"],
        &[
            "XREADGROUP",
            "GROUP",
            "g1",
            "alice",
            "COUNT",
            "2",
            "STREAMS",
            "stream",
            ">",
        ],
        &[
            "XREADGROUP",
            "GROUP",
            "g1",
            "bob",
            "COUNT",
            "1",
            "STREAMS",
            "stream",
            ">",
        ],
        &["XACK", "stream", "g1", "1-1"],
        &["XGROUP", "CREATE", "stream", "g2", "$"],
        &["XGROUP", "CREATECONSUMER", "stream", "g2", "carol"],
        &["XGROUP", "CREATE", "empty", "g1", "$", "MKSTREAM"],
        &["XADD", "trimmed", "5-0", "a", "1"],
        &["XDEL", "trimmed", "5-0"],
        &["XSETID", "trimmed", "9-9"],
    ];
    for cmd in cmds {
        let args: Vec<&[u8]> = cmd.iter().map(|s| s.as_bytes()).collect();
        let reply = call(c, &args);
        assert!(!reply.starts_with(b"-"), "{cmd:?}: {reply:?}");
    }
    for i in 1..=1000 {
        let id = format!("10-{i}");
        let value = format!("value number {i}");
        let reply = if i % 3 == 0 {
            call(
                c,
                &[
                    b"XADD",
                    b"bigstream",
                    id.as_bytes(),
                    b"kind",
                    b"odd",
                    b"n",
                    value.as_bytes(),
                ],
            )
        } else {
            call(
                c,
                &[b"XADD", b"bigstream", id.as_bytes(), b"v", value.as_bytes()],
            )
        };
        assert!(!reply.starts_with(b"-"), "{reply:?}");
    }
    for cmd in [
        &["XDEL", "bigstream", "10-5", "10-500", "10-1000"][..],
        &["XGROUP", "CREATE", "bigstream", "g1", "0"],
        &[
            "XREADGROUP",
            "GROUP",
            "g1",
            "c1",
            "COUNT",
            "300",
            "STREAMS",
            "bigstream",
            ">",
        ],
        &[
            "XREADGROUP",
            "GROUP",
            "g1",
            "c2",
            "COUNT",
            "300",
            "STREAMS",
            "bigstream",
            ">",
        ],
        &["XACK", "bigstream", "g1", "10-1", "10-2", "10-400"],
        &[
            "XGROUP",
            "CREATE",
            "bigstream",
            "g3",
            "10-700",
            "ENTRIESREAD",
            "690",
        ],
    ] {
        let args: Vec<&[u8]> = cmd.iter().map(|s| s.as_bytes()).collect();
        let reply = call(c, &args);
        assert!(!reply.starts_with(b"-"), "{cmd:?}: {reply:?}");
    }
}

#[test]
fn keys_copy_between_redis_server_and_sluice_both_ways() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let sluice = Sluice::start();
    let mut r = RawClient::connect(redis.port).expect("connect redis");
    let mut s = RawClient::connect(sluice.port).expect("connect sluice");
    fill(&mut r);
    for key in KEYS {
        let payload = bulk(&call(&mut r, &[b"DUMP", key.as_bytes()]));
        assert_eq!(
            call(&mut s, &[b"RESTORE", key.as_bytes(), b"0", &payload]),
            b"+OK\r\n",
            "Sluice refused redis-server's dump of {key}"
        );
        assert_eq!(
            read_back(&mut s, key),
            read_back(&mut r, key),
            "{key} after RESTORE in Sluice"
        );
        // And back: Sluice's dump restores in redis-server under another name.
        let back = bulk(&call(&mut s, &[b"DUMP", key.as_bytes()]));
        let copy = format!("{key}:copy");
        assert_eq!(
            call(&mut r, &[b"RESTORE", copy.as_bytes(), b"0", &back]),
            b"+OK\r\n",
            "redis-server refused Sluice's dump of {key}"
        );
        assert_eq!(
            read_back(&mut r, &copy),
            read_back(&mut r, key),
            "{key} back in redis-server"
        );
    }
    // Streams with their groups, both ways.
    fill_streams(&mut r);
    for key in ["stream", "bigstream", "empty", "trimmed"] {
        let payload = bulk(&call(&mut r, &[b"DUMP", key.as_bytes()]));
        assert_eq!(
            call(&mut s, &[b"RESTORE", key.as_bytes(), b"0", &payload]),
            b"+OK\r\n",
            "Sluice refused redis-server's dump of {key}"
        );
        assert_eq!(
            read_back(&mut s, key),
            read_back(&mut r, key),
            "{key} after RESTORE in Sluice"
        );
        let back = bulk(&call(&mut s, &[b"DUMP", key.as_bytes()]));
        let copy = format!("{key}:copy");
        assert_eq!(
            call(&mut r, &[b"RESTORE", copy.as_bytes(), b"0", &back]),
            b"+OK\r\n",
            "redis-server refused Sluice's dump of {key}"
        );
        assert_eq!(
            read_back(&mut r, &copy),
            read_back(&mut r, key),
            "{key} back in redis-server"
        );
    }
    // The copies keep working in both: IDs go on from the last one, groups deliver the rest.
    for c in [&mut r, &mut s] {
        assert_eq!(
            call(c, &[b"XADD", b"trimmed", b"9-9", b"a", b"1"]),
            b"-ERR The ID specified in XADD is equal or smaller than the target stream top item\r\n"
        );
        let more = call(
            c,
            &[
                b"XREADGROUP",
                b"GROUP",
                b"g1",
                b"c3",
                b"COUNT",
                b"1",
                b"STREAMS",
                b"bigstream",
                b">",
            ],
        );
        assert!(
            String::from_utf8_lossy(&more).contains("10-603"),
            "{more:?}"
        );
    }
    // What only XINFO STREAM FULL shows (delivery times, consumers' last reads, the first and
    // the highest deleted IDs, entries added) survives the trip through Sluice.
    assert_eq!(
        call(&mut r, &[b"XINFO", b"STREAM", b"stream:copy", b"FULL"]),
        call(&mut r, &[b"XINFO", b"STREAM", b"stream", b"FULL"]),
    );
    // Sluice's lists are listpack quicklists redis-server can keep working on.
    assert_eq!(
        call(&mut r, &[b"LPUSH", b"biglist:copy", b"new"]),
        b":1001\r\n"
    );
    assert_eq!(
        call(&mut r, &[b"LINDEX", b"biglist:copy", b"-1"]),
        b"$8\r\nitem-999\r\n"
    );
    assert_eq!(
        call(&mut r, &[b"LINDEX", b"biglist:copy", b"500"]),
        b"$8\r\nitem-499\r\n"
    );
}

#[test]
fn restore_options_and_errors_match_redis() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let sluice = Sluice::start();
    let mut r = RawClient::connect(redis.port).expect("connect redis");
    let mut s = RawClient::connect(sluice.port).expect("connect sluice");
    call(&mut s, &[b"SET", b"k", b"v"]);
    let payload = bulk(&call(&mut s, &[b"DUMP", b"k"]));
    let mut bad_crc = payload.clone();
    let last = bad_crc.len() - 1;
    bad_crc[last] ^= 0xff;
    let truncated = &payload[..payload.len() - 3];
    let future = 4_102_444_800_000i64.to_string();
    let cases: Vec<Vec<&[u8]>> = vec![
        vec![b"RESTORE", b"k", b"0", &payload],
        vec![b"RESTORE", b"new", b"0", &bad_crc],
        vec![b"RESTORE", b"new", b"0", truncated],
        vec![b"RESTORE", b"new", b"0", b"garbage"],
        vec![b"RESTORE", b"new", b"-1", &payload],
        vec![b"RESTORE", b"new", b"x", &payload],
        vec![b"RESTORE", b"new", b"0", &payload, b"IDLETIME", b"-1"],
        vec![b"RESTORE", b"new", b"0", &payload, b"FREQ", b"256"],
        vec![
            b"RESTORE",
            b"new",
            b"0",
            &payload,
            b"IDLETIME",
            b"1",
            b"FREQ",
            b"1",
        ],
        vec![b"RESTORE", b"new", b"0", &payload, b"BOGUS"],
        vec![b"RESTORE", b"k", b"0", &payload, b"REPLACE"],
        vec![b"RESTORE", b"t1", b"100000", &payload],
        vec![b"RESTORE", b"t2", future.as_bytes(), &payload, b"ABSTTL"],
        vec![b"RESTORE", b"t3", b"1", &payload, b"ABSTTL"],
        vec![b"EXISTS", b"t3"],
        vec![b"RESTORE", b"i", b"0", &payload, b"IDLETIME", b"100"],
        vec![b"DUMP", b"missing"],
    ];
    call(&mut r, &[b"SET", b"k", b"v"]);
    for args in cases {
        assert_eq!(
            call(&mut s, &args),
            call(&mut r, &args),
            "{:?}",
            String::from_utf8_lossy(&args.concat())
        );
    }
    for (key, low, high) in [
        ("t1", 99_000, 100_000),
        ("t2", 4_102_444_800_000 - 1, 4_102_444_800_001),
    ] {
        let query: &[u8] = if key == "t2" { b"PEXPIRETIME" } else { b"PTTL" };
        let reply = call(&mut s, &[query, key.as_bytes()]);
        let text = String::from_utf8_lossy(&reply[1..reply.len() - 2]).into_owned();
        let n: i64 = text.parse().expect("an integer reply");
        assert!((low..=high).contains(&n), "{key}: {n}");
    }
}
