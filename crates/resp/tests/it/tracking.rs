//! CLIENT TRACKING (client-side caching): invalidation pushes in RESP3, BCAST prefixes, OPTIN,
//! NOLOOP, the RESP2 redirect to a `__redis__:invalidate` subscriber, flushes; errors compared
//! with a private redis-server. (redis-py's own client-side cache refuses servers that report
//! a version below 7.4, and Sluice reports 7.0.15, so it is not driven here.)

use crate::common;

use common::{RawClient, RedisServer, Sluice};

fn invalidate(keys: &[&str]) -> Vec<u8> {
    let mut v = format!(">2\r\n$10\r\ninvalidate\r\n*{}\r\n", keys.len()).into_bytes();
    for k in keys {
        v.extend_from_slice(format!("${}\r\n{k}\r\n", k.len()).as_bytes());
    }
    v
}

/// Nothing else is queued for `c`: a PING is answered next.
fn nothing_pending(c: &mut RawClient) {
    assert_eq!(c.call(&["PING"]), b"+PONG\r\n");
}

fn resp3(port: u16) -> RawClient {
    let mut c = RawClient::connect(port).expect("connect");
    assert!(c.call(&["HELLO", "3"]).starts_with(b"%"));
    c
}

#[test]
fn invalidations_reach_tracking_clients() {
    let server = Sluice::start();
    let mut writer = RawClient::connect(server.port).expect("connect");
    let mut reader = resp3(server.port);
    assert_eq!(reader.call(&["CLIENT", "TRACKING", "ON"]), b"+OK\r\n");
    assert_eq!(reader.call(&["CLIENT", "GETREDIR"]), b":0\r\n");
    assert_eq!(reader.call(&["GET", "k"]), b"_\r\n");
    assert_eq!(reader.call(&["MGET", "a", "b"]), b"*2\r\n_\r\n_\r\n");
    writer.call(&["SET", "k", "1"]);
    assert_eq!(reader.read_reply(), invalidate(&["k"]));
    // Forgotten once invalidated: the next change says nothing until it is read again.
    writer.call(&["SET", "k", "2"]);
    nothing_pending(&mut reader);
    writer.call(&["DEL", "b"]);
    nothing_pending(&mut reader);
    writer.call(&["SET", "b", "x"]);
    assert_eq!(reader.read_reply(), invalidate(&["b"]));
    // A flush invalidates everything.
    writer.call(&["FLUSHALL"]);
    assert_eq!(reader.read_reply(), b">2\r\n$10\r\ninvalidate\r\n_\r\n");
    nothing_pending(&mut reader);

    // NOLOOP: the client's own writes are not reported back to it.
    let mut noloop = resp3(server.port);
    assert_eq!(
        noloop.call(&["CLIENT", "TRACKING", "ON", "NOLOOP"]),
        b"+OK\r\n"
    );
    noloop.call(&["GET", "n"]);
    assert_eq!(noloop.call(&["SET", "n", "1"]), b"+OK\r\n");
    nothing_pending(&mut noloop);

    // BCAST with prefixes: no reads needed, only matching keys.
    let mut bcast = resp3(server.port);
    assert_eq!(
        bcast.call(&[
            "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "user:", "PREFIX", "cfg"
        ]),
        b"+OK\r\n"
    );
    writer.call(&["SET", "user:1", "x"]);
    assert_eq!(bcast.read_reply(), invalidate(&["user:1"]));
    writer.call(&["SET", "order:1", "x"]);
    nothing_pending(&mut bcast);
    writer.call(&["MSET", "cfg", "1", "user:2", "2"]);
    assert_eq!(bcast.read_reply(), invalidate(&["cfg", "user:2"]));

    // OPTIN: only keys read right after CLIENT CACHING YES are tracked.
    let mut optin = resp3(server.port);
    assert_eq!(
        optin.call(&["CLIENT", "TRACKING", "ON", "OPTIN"]),
        b"+OK\r\n"
    );
    optin.call(&["GET", "o1"]);
    assert_eq!(optin.call(&["CLIENT", "CACHING", "YES"]), b"+OK\r\n");
    optin.call(&["GET", "o2"]);
    optin.call(&["GET", "o3"]);
    writer.call(&["MSET", "o1", "1", "o2", "2", "o3", "3"]);
    assert_eq!(optin.read_reply(), invalidate(&["o2"]));
    nothing_pending(&mut optin);

    // RESP2: invalidations go to the redirect client as `__redis__:invalidate` messages.
    let mut sink = RawClient::connect(server.port).expect("connect");
    let sink_id = String::from_utf8_lossy(&sink.call(&["CLIENT", "ID"])[1..])
        .trim()
        .to_owned();
    sink.call(&["SUBSCRIBE", "__redis__:invalidate"]);
    let mut tracked = RawClient::connect(server.port).expect("connect");
    assert_eq!(
        tracked.call(&["CLIENT", "TRACKING", "ON", "REDIRECT", &sink_id]),
        b"+OK\r\n"
    );
    assert_eq!(
        tracked.call(&["CLIENT", "GETREDIR"]),
        format!(":{sink_id}\r\n").into_bytes()
    );
    tracked.call(&["GET", "r"]);
    writer.call(&["SET", "r", "1"]);
    assert_eq!(
        sink.read_reply(),
        b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*1\r\n$1\r\nr\r\n"
    );
    // Off: nothing more.
    assert_eq!(tracked.call(&["CLIENT", "TRACKING", "OFF"]), b"+OK\r\n");
    assert_eq!(tracked.call(&["CLIENT", "GETREDIR"]), b":-1\r\n");
}

/// The same calls on redis-server and Sluice get the same replies (client IDs aside).
#[test]
fn tracking_errors_and_info_match_redis() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let sluice = Sluice::start();
    let calls: &[&[&str]] = &[
        &["CLIENT", "TRACKINGINFO"],
        &["CLIENT", "CACHING", "YES"],
        &["CLIENT", "TRACKING", "ON", "PREFIX", "a"],
        &["CLIENT", "TRACKING", "ON", "OPTIN", "OPTOUT"],
        &["CLIENT", "TRACKING", "ON", "BCAST", "OPTIN"],
        &["CLIENT", "TRACKING", "ON", "BOGUS"],
        &["CLIENT", "TRACKING", "MAYBE"],
        &["CLIENT", "TRACKING", "ON", "REDIRECT", "999999"],
        &[
            "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "ab", "PREFIX", "abc",
        ],
        &[
            "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "ab", "NOLOOP",
        ],
        &["CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "a"],
        &["CLIENT", "TRACKING", "ON"],
        &["CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "x"],
        &["CLIENT", "TRACKINGINFO"],
        &["CLIENT", "GETREDIR"],
        &["CLIENT", "CACHING", "YES"],
        &["CLIENT", "TRACKING", "OFF"],
        &["CLIENT", "TRACKING", "ON", "OPTOUT"],
        &["CLIENT", "CACHING", "YES"],
        &["CLIENT", "CACHING", "NO"],
        &["CLIENT", "TRACKINGINFO"],
        &["CLIENT", "CACHING", "MAYBE"],
        &["CLIENT", "TRACKING", "ON", "OPTIN"],
        &["CLIENT", "TRACKING", "OFF"],
        &["CLIENT", "TRACKINGINFO"],
    ];
    for proto in ["2", "3"] {
        let mut r = RawClient::connect(redis.port).expect("connect redis");
        let mut s = RawClient::connect(sluice.port).expect("connect sluice");
        r.call(&["HELLO", proto]);
        s.call(&["HELLO", proto]);
        for call in calls {
            assert_eq!(
                String::from_utf8_lossy(&s.call(call)),
                String::from_utf8_lossy(&r.call(call)),
                "RESP{proto} {call:?}"
            );
        }
    }
}

/// CLIENT REPLY OFF|SKIP|ON drop replies (not pushes) as Redis does.
#[test]
fn client_reply_off_skip_and_on() {
    let server = Sluice::start();
    let mut c = RawClient::connect(server.port).expect("connect");
    let mut publisher = RawClient::connect(server.port).expect("connect");
    // SKIP drops its own reply and the next command's; the PING after is answered.
    c.send_raw(b"CLIENT REPLY SKIP\r\nSET a 1\r\nPING\r\n");
    assert_eq!(c.read_reply(), b"+PONG\r\n");
    // OFF drops everything until ON, which answers.
    c.send_raw(b"CLIENT REPLY OFF\r\nSET b 2\r\nGET b\r\nCLIENT REPLY ON\r\n");
    assert_eq!(c.read_reply(), b"+OK\r\n");
    assert_eq!(c.call(&["MGET", "a", "b"]), b"*2\r\n$1\r\n1\r\n$1\r\n2\r\n");
    // Pushes (subscribe confirmations, messages) still arrive while replies are off.
    c.send_raw(b"CLIENT REPLY OFF\r\n");
    assert_eq!(
        c.call(&["SUBSCRIBE", "ch"]),
        b"*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n"
    );
    assert_eq!(publisher.call(&["PUBLISH", "ch", "hi"]), b":1\r\n");
    assert_eq!(
        c.read_reply(),
        b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n"
    );
}
