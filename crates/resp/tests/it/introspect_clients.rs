//! Introspection through real clients: OBJECT, MEMORY, SLOWLOG, LATENCY, DEBUG, CLIENT KILL /
//! PAUSE / REPLY, WAIT and INFO's commandstats and errorstats, with redis-py in RESP2 and
//! RESP3 and the `redis` crate.

use crate::common;

use std::time::{Duration, Instant};

use common::{RawClient, Sluice};
use sluice_embedded::clients;

/// Run once per protocol: `proto` is 2 or 3.
const PYTHON_SCRIPT: &str = r##"
import sys, threading, time, redis
port, proto = int(sys.argv[1]), int(sys.argv[2])
r = redis.Redis(port=port, protocol=proto, decode_responses=True)
r.flushall()

def error_of(f):
    try:
        f()
    except redis.ResponseError as e:
        return str(e)
    raise SystemExit("expected an error")

# OBJECT ENCODING follows Redis 7.0's thresholds.
r.set("n", 12345)
r.set("s", "hello")
r.set("big", "x" * 100)
assert r.object("encoding", "n") == "int"
assert r.object("encoding", "s") == "embstr"
assert r.object("encoding", "big") == "raw"
r.rpush("l", "a", "b")
assert r.object("encoding", "l") == "quicklist"
r.hset("h", mapping={"f": "v"})
assert r.object("encoding", "h") == "listpack"
r.hset("h", "long", "y" * 65)
assert r.object("encoding", "h") == "hashtable"
r.sadd("ints", 1, 2, 3)
assert r.object("encoding", "ints") == "intset"
r.sadd("ints", "x")
assert r.object("encoding", "ints") == "hashtable"
r.zadd("z", {"a": 1})
assert r.object("encoding", "z") == "listpack"
r.zadd("z", {("m%d" % i): i for i in range(200)})
assert r.object("encoding", "z") == "skiplist"
r.xadd("st", {"a": 1})
assert r.object("encoding", "st") == "stream"
assert r.object("encoding", "missing") is None
assert r.object("refcount", "s") == 1
r.set("small", 123)
assert r.object("refcount", "small") == 2147483647  # a shared integer, as in Redis
assert r.object("refcount", "n") == 1
msg = error_of(lambda: r.object("freq", "s"))
assert "access frequency not tracked" in msg, msg
assert "unknown subcommand 'NOPE'" in error_of(lambda: r.execute_command("OBJECT", "NOPE", "s"))
assert len(r.execute_command("OBJECT", "HELP")) > 4

# MEMORY USAGE grows with the value.
small = r.memory_usage("s")
r.set("kb", "x" * 10000)
assert 0 < small < 200, small
assert r.memory_usage("kb") >= 10000
r.rpush("biglist", *(["y" * 100] * 1000))
assert 100000 <= r.memory_usage("biglist", samples=0) < 300000
assert r.memory_usage("missing") is None
assert "syntax error" in error_of(lambda: r.execute_command("MEMORY", "USAGE", "s", "BOGUS"))
stats = r.memory_stats()
assert stats["keys.count"] == r.dbsize(), stats
assert stats["dataset.bytes"] > 100000, stats
assert isinstance(r.execute_command("MEMORY", "DOCTOR"), str)

# SLOWLOG: everything is slow at 0 microseconds; arguments are cut as Redis cuts them.
r.config_set("slowlog-log-slower-than", 0)
r.slowlog_reset()
r.set("slow", "v" * 200)
log = r.slowlog_get(1)
args = log[0]["command"]
args = args.decode() if isinstance(args, bytes) else args
assert "SET slow " in args and "... (72 more bytes)" in args, log
assert r.slowlog_len() >= 1
r.config_set("slowlog-max-len", 2)
for i in range(5):
    r.ping()
assert r.slowlog_len() == 2
r.config_set("slowlog-log-slower-than", -1)
r.slowlog_reset()
r.ping()
assert r.slowlog_len() == 0
r.config_set("slowlog-log-slower-than", 10000)
r.config_set("slowlog-max-len", 128)
# DEBUG SLEEP is slow enough for the default threshold.
r.execute_command("DEBUG", "SLEEP", 0.02)
assert r.slowlog_get(1)[0]["duration"] >= 20000
assert "count should be greater than or equal to -1" in error_of(lambda: r.execute_command("SLOWLOG", "GET", -2))

# LATENCY has no events (its monitor is off, as in Redis by default).
assert r.execute_command("LATENCY", "LATEST") == []
assert r.execute_command("LATENCY", "HISTORY", "command") == []
assert r.execute_command("LATENCY", "RESET") == 0

# DEBUG OBJECT and the refusals.
line = r.execute_command("DEBUG", "OBJECT", "s")
assert "encoding:embstr" in str(line), line
assert "no such key" in error_of(lambda: r.execute_command("DEBUG", "OBJECT", "missing"))
assert "Try DEBUG HELP" in error_of(lambda: r.execute_command("DEBUG", "RELOAD"))

# WAIT without replicas.
assert r.execute_command("WAIT", 0, 0) == 0
assert "timeout is negative" in error_of(lambda: r.execute_command("WAIT", 0, -1))

# INFO commandstats and errorstats.
r.config_resetstat()
r.set("foo", 1)
error_of(lambda: r.execute_command("GEOADD", "foo", 0, 0, "bar"))
error_of(lambda: r.execute_command("GET"))
stats = r.info("commandstats")
assert stats["cmdstat_set"]["calls"] == 1, stats
geo = stats["cmdstat_geoadd"]
assert geo["calls"] == 1 and geo["failed_calls"] == 1 and geo["rejected_calls"] == 0, geo
assert stats["cmdstat_get"]["rejected_calls"] == 1 and stats["cmdstat_get"]["calls"] == 0, stats
errors = r.info("errorstats")
assert errors["errorstat_WRONGTYPE"]["count"] == 1 and errors["errorstat_ERR"]["count"] == 1, errors
assert r.info("stats")["total_error_replies"] == 2

# CLIENT KILL: by id, by address (old form), filters, and the errors.
def ids():
    time.sleep(0.05)
    return [str(c["id"]) for c in r.client_list()]
victim = redis.Redis(port=port, protocol=proto, decode_responses=True, single_connection_client=True)
vid = victim.client_id()
assert r.client_kill_filter(_id=vid) == 1
assert str(vid) not in ids()
victim = redis.Redis(port=port, protocol=proto, decode_responses=True, single_connection_client=True)
vid = victim.client_id()
addr = [c["addr"] for c in r.client_list() if str(c["id"]) == str(vid)][0]
assert r.execute_command("CLIENT", "KILL", addr)
assert str(vid) not in ids()
assert "No such client" in error_of(lambda: r.execute_command("CLIENT", "KILL", "1.2.3.4:5"))
assert "client-id should be greater than 0" in error_of(lambda: r.execute_command("CLIENT", "KILL", "ID", "x"))
assert "Unknown client type" in error_of(lambda: r.execute_command("CLIENT", "KILL", "TYPE", "nope"))
assert "No such user" in error_of(lambda: r.execute_command("CLIENT", "KILL", "USER", "nobody"))
assert "syntax error" in error_of(lambda: r.execute_command("CLIENT", "KILL", "ID", 5, "SKIPME"))
assert r.execute_command("CLIENT", "KILL", "ID", 999999) == 0
# SKIPME yes (the default) spares the caller.
assert r.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes") >= 0
assert r.ping()

# CLIENT PAUSE WRITE holds writes, not reads, until it ends.
other = redis.Redis(port=port, protocol=proto, decode_responses=True)
r.client_pause(300, all=False)
started = time.time()
assert other.get("foo") == "1" and time.time() - started < 0.2
other.set("foo", 2)
assert time.time() - started >= 0.25, time.time() - started
# CLIENT UNPAUSE lifts a pause early.
# (connected before the pause: under ALL even a new client's handshake waits, as in Redis)
unpauser = redis.Redis(port=port, protocol=proto, single_connection_client=True)
unpauser.ping()
r.client_pause(10000)
def unpause():
    time.sleep(0.2)
    unpauser.client_unpause()
t = threading.Thread(target=unpause)
t.start()
started = time.time()
other.get("foo")
assert 0.15 <= time.time() - started < 5, time.time() - started
t.join()
assert "mode must be WRITE or ALL" in error_of(lambda: r.execute_command("CLIENT", "PAUSE", 10, "SOME"))
assert "timeout is negative" in error_of(lambda: r.execute_command("CLIENT", "PAUSE", -1))
assert r.execute_command("CLIENT", "NO-EVICT", "on")
print("redis-py ok", proto)
"##;

#[test]
fn redis_py_introspection_resp2_and_resp3() {
    let Some(python) = clients::require(clients::python(), "redis-py") else {
        return;
    };
    let server = Sluice::start();
    common::assert_redis_py_both_protocols(&python, PYTHON_SCRIPT, server.port, "redis-py");
}

#[test]
fn client_reply_off_and_skip_drop_replies() {
    let server = Sluice::start();
    let mut c = RawClient::connect(server.port).expect("connect");
    // SKIP: no reply to itself nor to the next command; then replies again.
    c.send_raw(&RawClient::encode(&["CLIENT", "REPLY", "SKIP"]));
    c.send_raw(&RawClient::encode(&["SET", "a", "1"]));
    assert_eq!(c.call(&["GET", "a"]), b"$1\r\n1\r\n");
    // OFF until ON, whose OK is sent.
    c.send_raw(&RawClient::encode(&["CLIENT", "REPLY", "OFF"]));
    c.send_raw(&RawClient::encode(&["SET", "a", "2"]));
    c.send_raw(&RawClient::encode(&["GET", "a"]));
    assert_eq!(c.call(&["CLIENT", "REPLY", "ON"]), b"+OK\r\n");
    assert_eq!(c.call(&["GET", "a"]), b"$1\r\n2\r\n");
}

#[tokio::test]
async fn redis_crate_object_memory_and_client_pause_all() {
    let server = Sluice::start();
    let client = redis::Client::open(server.url()).expect("client");
    let mut con = client
        .get_multiplexed_async_connection()
        .await
        .expect("connect");
    let _: () = redis::cmd("SET")
        .arg("k")
        .arg("v")
        .query_async(&mut con)
        .await
        .expect("set");
    let enc: String = redis::cmd("OBJECT")
        .arg("ENCODING")
        .arg("k")
        .query_async(&mut con)
        .await
        .expect("object encoding");
    assert_eq!(enc, "embstr");
    let bytes: i64 = redis::cmd("MEMORY")
        .arg("USAGE")
        .arg("k")
        .query_async(&mut con)
        .await
        .expect("memory usage");
    assert!(bytes > 0);
    // PAUSE ALL holds reads too (the other client connects first: its handshake would wait).
    let mut other = client
        .get_multiplexed_async_connection()
        .await
        .expect("connect");
    let _: () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(300)
        .arg("ALL")
        .query_async(&mut con)
        .await
        .expect("pause");
    let started = Instant::now();
    let got: String = redis::cmd("GET")
        .arg("k")
        .query_async(&mut other)
        .await
        .expect("get");
    assert_eq!(got, "v");
    assert!(
        started.elapsed() >= Duration::from_millis(250),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn monitor_streams_commands_in_redis_format() {
    let server = Sluice::start();
    let mut monitor = RawClient::connect(server.port).expect("connect");
    assert_eq!(monitor.call(&["MONITOR"]), b"+OK\r\n");
    let mut c = RawClient::connect(server.port).expect("connect");
    assert_eq!(c.call(&["set", "foo", "b\"ar\n"]), b"+OK\r\n");
    c.call(&["eval", "return redis.call('get', KEYS[1])", "1", "foo"]);
    c.call(&["auth", "secret"]);
    c.call(&["multi"]);
    c.call(&["incr", "n"]);
    c.call(&["exec"]);
    let lines: Vec<String> = (0..7)
        .map(|_| String::from_utf8_lossy(&monitor.read_reply()).into_owned())
        .collect();
    let set = &lines[0];
    assert!(
        set.starts_with('+') && set.contains(" [0 127.0.0.1:"),
        "{set}"
    );
    assert!(set.ends_with("\"set\" \"foo\" \"b\\\"ar\\n\"\r\n"), "{set}");
    assert!(lines[1].contains("\"eval\""), "{lines:?}");
    assert!(lines[2].contains("[0 lua] \"get\" \"foo\""), "{lines:?}");
    assert!(lines[3].contains("\"auth\" \"(redacted)\""), "{lines:?}");
    assert!(lines[4].contains("\"multi\""), "{lines:?}");
    assert!(lines[5].contains("\"incr\" \"n\""), "{lines:?}");
    assert!(lines[6].contains("\"exec\""), "{lines:?}");
}

#[test]
fn object_idletime_counts_from_the_last_access() {
    let server = Sluice::start();
    let mut c = RawClient::connect(server.port).expect("connect");
    assert_eq!(c.call(&["SET", "foo", "bar"]), b"+OK\r\n");
    assert_eq!(c.call(&["SET", "other", "x"]), b"+OK\r\n");
    std::thread::sleep(Duration::from_millis(2300));
    // TTL, TYPE, EXISTS and OBJECT itself do not count as accesses; GET and TOUCH do.
    c.call(&["TTL", "foo"]);
    c.call(&["TYPE", "foo"]);
    c.call(&["EXISTS", "foo"]);
    // The clock counts whole seconds, so 2.3 s reads as 2 or 3.
    let idle = c.call(&["OBJECT", "IDLETIME", "foo"]);
    assert!(idle == b":2\r\n" || idle == b":3\r\n", "{idle:?}");
    assert_eq!(c.call(&["TOUCH", "foo", "missing"]), b":1\r\n");
    assert_eq!(c.call(&["OBJECT", "IDLETIME", "foo"]), b":0\r\n");
    c.call(&["GET", "other"]);
    assert_eq!(c.call(&["OBJECT", "IDLETIME", "other"]), b":0\r\n");
    assert_eq!(c.call(&["OBJECT", "IDLETIME", "missing"]), b"$-1\r\n");
}
