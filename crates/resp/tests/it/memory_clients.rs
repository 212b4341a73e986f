//! maxmemory under each policy and keyspace notifications, through redis-py (as installed by
//! `scripts/clients/install.sh`).

use crate::common;

use common::Sluice;
use sluice_embedded::clients;

/// Runs a redis-py script against a fresh server; the script gets the port as argv[1].
fn run_python(script: &str, what: &str) {
    let Some(python) = clients::require(clients::python(), "redis-py") else {
        return;
    };
    let server = Sluice::start();
    let port = server.port.to_string();
    common::assert_python(&python, script, &[&port], &format!("redis-py ({what})"));
}

const EVICTION_SCRIPT: &str = r##"
import sys, time, redis
port = int(sys.argv[1])
r = redis.Redis(port=port, decode_responses=True)
VAL = "x" * 1000

def used():
    return int(r.info("memory")["used_memory"])

def evicted():
    return int(r.info("stats")["evicted_keys"])

def reset(policy):
    r.config_set("maxmemory", 0)
    r.flushall()
    r.config_set("maxmemory-policy", policy)

def count(prefix, n):
    return sum(r.exists(f"{prefix}:{i}") for i in range(n))

# Memory is tracked as keys come and go.
reset("noeviction")
empty = used()
for i in range(100):
    r.set(f"k:{i}", VAL)
assert used() - empty >= 100 * 1000, (empty, used())
r.delete(*[f"k:{i}" for i in range(100)])
assert used() == empty, (empty, used())
info = r.info("memory")
assert info["maxmemory"] == 0 and info["maxmemory_policy"] == "noeviction", info

# noeviction: writes that may grow memory are refused past the limit, others still run.
reset("noeviction")
for i in range(100):
    r.set(f"k:{i}", VAL)
r.config_set("maxmemory", used() + 20_000)
refused = 0
for i in range(100):
    try:
        r.set(f"more:{i}", VAL)
    except redis.exceptions.OutOfMemoryError as e:
        # redis-py picks the class from the "OOM" prefix and keeps the rest.
        assert str(e) == "command not allowed when used memory > 'maxmemory'.", e
        refused += 1
assert refused >= 70, refused
assert r.get("k:1") == VAL
# Scripts do not evict: a write inside one is refused, reads still run.
try:
    r.eval("return redis.call('set', 'from-script', '1')", 0)
    raise SystemExit("expected OOM from a script's write")
except redis.exceptions.ResponseError as e:
    assert "command not allowed when used memory > 'maxmemory'" in str(e), e
assert r.eval("return redis.call('get', 'k:2')", 0) == VAL
assert r.delete("k:1") == 1
assert r.dbsize() > 100 and evicted() == 0
# MULTI queueing is refused too while over the limit.
r.config_set("maxmemory", used() - 10_000)
p = r.pipeline(transaction=True)
p.set("t", "1")
try:
    p.execute()
    raise SystemExit("expected EXECABORT")
except (redis.exceptions.ExecAbortError, redis.exceptions.OutOfMemoryError):
    pass

for policy in ["volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"]:
    reset(policy)
    for i in range(200):
        r.set(f"plain:{i}", VAL)
    for i in range(200):
        r.set(f"vol:{i}", VAL, ex=3600)
    limit = used() + 50_000
    r.config_set("maxmemory", limit)
    for i in range(300):
        r.set(f"new:{i}", VAL, ex=3600)
    assert used() <= limit, (policy, used(), limit)
    assert count("plain", 200) == 200, policy
    assert evicted() >= 200, (policy, evicted())
    # Only keys without a TTL left to evict: writes are refused.
    r.config_set("maxmemory", 0)
    r.flushall()
    for i in range(100):
        r.set(f"plain:{i}", VAL)
    r.config_set("maxmemory", used() - 10_000)
    try:
        r.set("one-more", VAL)
        raise SystemExit(f"{policy}: expected OOM with no volatile key")
    except redis.exceptions.OutOfMemoryError:
        pass
    assert r.dbsize() == 100

for policy in ["allkeys-lru", "allkeys-lfu", "allkeys-random"]:
    reset(policy)
    for i in range(200):
        r.set(f"plain:{i}", VAL)
    limit = used() + 50_000
    r.config_set("maxmemory", limit)
    for i in range(300):
        r.set(f"new:{i}", VAL)
    assert used() <= limit, (policy, used(), limit)
    assert count("plain", 200) < 200, policy
    assert evicted() >= 200, (policy, evicted())

# allkeys-lru keeps the keys read recently: 250 hot keys read after 250 cold ones were
# written, then 200 keys evicted at once. Random eviction would keep as many of each
# (give or take 20); the margin of 80 leaves no room for a flake.
reset("allkeys-lru")
for i in range(250):
    r.set(f"cold:{i}", VAL)
    r.set(f"hot:{i}", VAL)
time.sleep(0.5)
for i in range(250):
    r.get(f"hot:{i}")
time.sleep(0.3)
r.config_set("maxmemory", used() - 200 * 1100)
hot, cold = count("hot", 250), count("cold", 250)
assert hot + cold <= 300, (hot, cold)
assert hot - cold >= 80, ("lru", hot, cold)

# allkeys-lfu keeps the keys read often (each counter grows by one per read with factor 0).
reset("allkeys-lfu")
r.config_set("lfu-log-factor", 0)
for i in range(250):
    r.set(f"cold:{i}", VAL)
    r.set(f"hot:{i}", VAL)
for _ in range(5):
    for i in range(250):
        r.get(f"hot:{i}")
r.config_set("maxmemory", used() - 200 * 1100)
hot, cold = count("hot", 250), count("cold", 250)
assert hot - cold >= 80, ("lfu", hot, cold)
r.config_set("lfu-log-factor", 10)

# volatile-ttl evicts the keys closest to expiring first.
reset("volatile-ttl")
for i in range(100):
    r.set(f"soon:{i}", VAL, ex=1000)
    r.set(f"late:{i}", VAL, ex=100000)
r.config_set("maxmemory", used() - 50 * 1100)
assert count("late", 100) >= 85, count("late", 100)

r.config_set("maxmemory-samples", 10)
assert r.config_get("maxmemory-samples") == {"maxmemory-samples": "10"}
r.config_set("maxmemory", 0)
print("eviction ok")
"##;

#[test]
fn redis_py_maxmemory_under_every_policy() {
    run_python(EVICTION_SCRIPT, "maxmemory");
}

const NOTIFY_SCRIPT: &str = r##"
import sys, time, redis
port = int(sys.argv[1])
r = redis.Redis(port=port, decode_responses=True)
r.flushall()

def drain(p, wait=0.5):
    got = []
    deadline = time.time() + wait
    while time.time() < deadline:
        m = p.get_message(timeout=0.05)
        if m and m["type"] in ("message", "pmessage"):
            got.append((m["channel"], m["data"]))
    return got

assert r.config_get("notify-keyspace-events") == {"notify-keyspace-events": ""}
p = r.pubsub()
p.psubscribe("__key*@0__:*")
p.get_message(timeout=1)
r.set("quiet", "1")
assert drain(p, 0.3) == [], "events while notifications are off"

r.config_set("notify-keyspace-events", "KEA")
assert r.config_get("notify-keyspace-events") == {"notify-keyspace-events": "AKE"}
r.set("a", "1")
got = drain(p)
assert got == [("__keyspace@0__:a", "set"), ("__keyevent@0__:set", "a")], got

# Only keyevent messages from here on, so each command gives one line per event.
r.config_set("notify-keyspace-events", "EA")
def events(action):
    action()
    return [(ch.split(":", 1)[1], key) for ch, key in drain(p, 0.3)]

assert events(lambda: r.set("a", "1", ex=100)) == [("set", "a"), ("expire", "a")]
assert events(lambda: r.expire("a", 100)) == [("expire", "a")]
assert events(lambda: r.persist("a")) == [("persist", "a")]
assert events(lambda: r.incrby("n", 5)) == [("incrby", "n")]
assert events(lambda: r.incrbyfloat("n", 1.5)) == [("incrbyfloat", "n")]
assert events(lambda: r.append("a", "x")) == [("append", "a")]
assert events(lambda: r.lpush("l", "x", "y")) == [("lpush", "l")]
assert events(lambda: r.rpush("l", "z")) == [("rpush", "l")]
assert events(lambda: r.lpop("l")) == [("lpop", "l")]
assert events(lambda: r.rpop("l", 2)) == [("rpop", "l"), ("del", "l")]
assert events(lambda: r.hset("h", "f", "v")) == [("hset", "h")]
assert events(lambda: r.hincrby("h", "n", 1)) == [("hincrby", "h")]
assert events(lambda: r.hdel("h", "f", "n")) == [("hdel", "h"), ("del", "h")]
assert events(lambda: r.sadd("s", "m")) == [("sadd", "s")]
assert events(lambda: r.smove("s", "s2", "m")) == [("srem", "s"), ("del", "s"), ("sadd", "s2")]
assert events(lambda: r.zadd("z", {"m": 1})) == [("zadd", "z")]
assert events(lambda: r.zincrby("z", 2, "m")) == [("zincr", "z")]
assert events(lambda: r.zrem("z", "m")) == [("zrem", "z"), ("del", "z")]
assert events(lambda: r.xadd("st", {"f": "v"})) == [("xadd", "st")]
assert events(lambda: r.xgroup_create("st", "g", id="0")) == [("xgroup-create", "st")]
assert events(lambda: r.xgroup_createconsumer("st", "g", "bob")) == [("xgroup-createconsumer", "st")]
assert events(lambda: r.xgroup_createconsumer("st", "g", "bob")) == []
assert events(lambda: r.xgroup_delconsumer("st", "g", "bob")) == [("xgroup-delconsumer", "st")]
assert events(lambda: r.xreadgroup("g", "alice", {"st": ">"})) == [("xgroup-createconsumer", "st")]
assert events(lambda: r.xreadgroup("g", "alice", {"st": "0"})) == []
assert events(lambda: r.rename("a", "b")) == [("rename_from", "a"), ("rename_to", "b")]
assert events(lambda: r.delete("b", "missing")) == [("del", "b")]
assert events(lambda: r.get("missing")) == []
# A blocked BLPOP served by an LPUSH: the push, the pop, the emptied list.
import threading
def blpop():
    redis.Redis(port=port).blpop("bl", timeout=5)
t = threading.Thread(target=blpop)
t.start()
for _ in range(200):
    if r.info("clients")["blocked_clients"] == 1:
        break
    time.sleep(0.01)
assert events(lambda: r.lpush("bl", "x")) == [("lpush", "bl"), ("lpop", "bl"), ("del", "bl")]
t.join()
# Nothing changed, nothing said.
assert events(lambda: r.srem("s2", "nope")) == []

# Expiry (lazy here) and new keys.
r.config_set("notify-keyspace-events", "Exn")
got = events(lambda: r.set("e", "v", px=5000))
assert got == [("new", "e")], got
r.pexpire("e", 1)
time.sleep(0.05)
# Expired lazily by the GET, or by the active cycle just before: one event either way.
assert events(lambda: r.get("e")) == [("expired", "e")]
# Active expiry finds keys nobody reads.
r.set("e2", "v", px=50)
got = drain(p, 1.5)
assert ("__keyevent@0__:expired", "e2") in got, got

# Evictions.
r.config_set("notify-keyspace-events", "Ee")
r.flushall()
for i in range(50):
    r.set(f"k:{i}", "x" * 1000)
used = int(r.info("memory")["used_memory"])
r.config_set("maxmemory-policy", "allkeys-random")
r.config_set("maxmemory", used - 5000)
got = drain(p)
assert len(got) >= 5 and all(ch == "__keyevent@0__:evicted" for ch, _ in got), got
r.config_set("maxmemory", 0)

# keymiss is not part of A.
r.config_set("notify-keyspace-events", "KEAm")
assert r.config_get("notify-keyspace-events") == {"notify-keyspace-events": "AKEm"}
try:
    r.config_set("notify-keyspace-events", "KEQ")
    raise SystemExit("expected an error")
except redis.exceptions.ResponseError as e:
    assert "Invalid event class character" in str(e), e
print("notifications ok")
"##;

#[test]
fn redis_py_keyspace_notifications() {
    run_python(NOTIFY_SCRIPT, "keyspace notifications");
}

const SHARDED_SCRIPT: &str = r##"
import sys, time, redis
port, proto = int(sys.argv[1]), int(sys.argv[2])
r = redis.Redis(port=port, protocol=proto, decode_responses=True)

def next_message(p):
    deadline = time.time() + 2
    while time.time() < deadline:
        m = p.get_message(timeout=0.1)
        if m and m["type"] in ("message", "smessage", "pmessage"):
            return m
    return None

p = r.pubsub()
p.ssubscribe("orders", "users")
p.subscribe("orders")
for _ in range(3):
    p.get_message(timeout=1)
assert r.pubsub_shardchannels() == ["orders", "users"] or sorted(r.pubsub_shardchannels()) == ["orders", "users"]
assert r.pubsub_shardchannels("u*") == ["users"]
assert r.pubsub_shardnumsub("orders", "none") == [("orders", 1), ("none", 0)]
# Shard channels are a namespace of their own.
assert r.pubsub_numsub("users") == [("users", 0)]
assert r.spublish("users", "hi") == 1
m = next_message(p)
assert m["type"] == "smessage" and m["channel"] == "users" and m["data"] == "hi", m
assert r.publish("users", "nobody") == 0
assert r.spublish("orders", "o1") == 1
m = next_message(p)
assert m["type"] == "smessage" and m["data"] == "o1", m
assert r.publish("orders", "o2") == 1
m = next_message(p)
assert m["type"] == "message" and m["data"] == "o2", m
p.sunsubscribe("users")
deadline = time.time() + 2
while r.pubsub_shardnumsub("users") != [("users", 0)] and time.time() < deadline:
    p.get_message(timeout=0.1)
assert r.spublish("users", "gone") == 0
p.close()
time.sleep(0.1)
assert r.pubsub_shardchannels() == []
print("sharded ok", proto)
"##;

#[test]
fn redis_py_sharded_pubsub_resp2_and_resp3() {
    let Some(python) = clients::require(clients::python(), "redis-py") else {
        return;
    };
    let server = Sluice::start();
    common::assert_redis_py_both_protocols(
        &python,
        SHARDED_SCRIPT,
        server.port,
        "redis-py sharded pub/sub",
    );
}

/// The exact frames: confirmations count shard channels apart from the others, and a RESP3
/// client gets `smessage` as a push.
#[test]
fn sharded_pubsub_frames() {
    let server = Sluice::start();
    let mut sub = common::RawClient::connect(server.port).expect("connect");
    let mut publisher = common::RawClient::connect(server.port).expect("connect");
    assert!(sub.call(&["HELLO", "3"]).starts_with(b"%"));
    assert_eq!(
        sub.call(&["SUBSCRIBE", "a"]),
        b">3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n"
    );
    assert_eq!(
        sub.call(&["SSUBSCRIBE", "a"]),
        b">3\r\n$10\r\nssubscribe\r\n$1\r\na\r\n:1\r\n"
    );
    assert_eq!(publisher.call(&["SPUBLISH", "a", "x"]), b":1\r\n");
    assert_eq!(
        sub.read_reply(),
        b">3\r\n$8\r\nsmessage\r\n$1\r\na\r\n$1\r\nx\r\n"
    );
    assert_eq!(
        sub.call(&["SUNSUBSCRIBE"]),
        b">3\r\n$12\r\nsunsubscribe\r\n$1\r\na\r\n:0\r\n"
    );
    assert_eq!(
        sub.call(&["SUNSUBSCRIBE"]),
        b">3\r\n$12\r\nsunsubscribe\r\n_\r\n:0\r\n"
    );
    // RESP2: a client with only shard subscriptions is in pub/sub mode too.
    let mut resp2 = common::RawClient::connect(server.port).expect("connect");
    assert_eq!(
        resp2.call(&["SSUBSCRIBE", "b"]),
        b"*3\r\n$10\r\nssubscribe\r\n$1\r\nb\r\n:1\r\n"
    );
    assert!(
        resp2
            .call(&["GET", "k"])
            .starts_with(b"-ERR Can't execute 'get'")
    );
}
