//! redis-py and ioredis against an in-process Sluice, as installed by `scripts/clients/install.sh`
//! (missing: a failure under CI, a skip with a message elsewhere).

use crate::common;

use std::process::Command;

use common::Sluice;
use sluice_embedded::clients;

const PYTHON_SCRIPT: &str = r#"
import sys, redis
port = int(sys.argv[1])
r = redis.Redis(port=port, decode_responses=True)
assert r.ping()
assert r.set("k", "v", ex=100)
assert r.get("k") == "v"
assert 0 < r.ttl("k") <= 100
assert r.incrby("n", 7) == 7
assert r.rpush("l", "a", "b", "c") == 3
assert r.lrange("l", 0, -1) == ["a", "b", "c"]
assert r.hset("h", mapping={"f1": "1", "f2": "2"}) == 2
assert r.hgetall("h") == {"f1": "1", "f2": "2"}
assert r.sadd("s", "x", "y") == 2
assert r.smembers("s") == {"x", "y"}
assert r.zadd("z", {"a": 1.5, "b": 0.5}) == 2
assert r.zrange("z", 0, -1, withscores=True) == [("b", 0.5), ("a", 1.5)]
p = r.pipeline(transaction=True)
p.incr("n").incr("n").get("n")
assert p.execute() == [8, 9, "9"]
try:
    r.lpush("k", "x")
    raise SystemExit("expected WRONGTYPE")
except redis.ResponseError as e:
    assert str(e).startswith("WRONGTYPE"), e
assert r.info("persistence")["loading"] == 0
assert r.config_get("maxmemory") == {"maxmemory": "0"}
assert r.client_setname("py") and r.client_getname() == "py"
ps = r.pubsub()
ps.subscribe("ch")
assert ps.get_message(timeout=5)["type"] == "subscribe"
assert r.publish("ch", "hello") == 1
msg = ps.get_message(timeout=5)
assert msg["type"] == "message" and msg["data"] == "hello", msg
r3 = redis.Redis(port=port, protocol=3, decode_responses=True)
assert r3.hgetall("h") == {"f1": "1", "f2": "2"}
assert r3.zscore("z", "a") == 1.5
keys = set(r.scan_iter(match="*"))
assert keys == {"k", "n", "l", "h", "s", "z"}, keys
print("redis-py ok")
"#;

/// Scripting through redis-py as applications use it: register_script (EVALSHA, falling back to
/// EVAL on NOSCRIPT), a rate limiter, errors as exceptions, functions, RESP3, and a slow script
/// killed while another client is answered BUSY.
const PYTHON_SCRIPTING: &str = r##"
import sys, threading, time, redis
port = int(sys.argv[1])
for protocol in (2, 3):
    r = redis.Redis(port=port, decode_responses=True, protocol=protocol)
    r.flushall(); r.script_flush(); r.function_flush()
    incr_by = r.register_script("return redis.call('INCRBY', KEYS[1], ARGV[1])")
    assert incr_by(keys=["n"], args=[5]) == 5
    assert incr_by(keys=["n"], args=[2]) == 7
    assert r.script_exists(incr_by.sha) == [True]
    limiter = r.register_script("""
local current = redis.call('INCR', KEYS[1])
if current == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if current > tonumber(ARGV[1]) then return 0 end
return 1
""")
    allowed = [limiter(keys=["rate:user"], args=[3, 10000]) for _ in range(5)]
    assert allowed == [1, 1, 1, 0, 0], allowed
    assert 0 < r.pttl("rate:user") <= 10000
    assert r.eval("return {1, 'two', {3}}", 0) == [1, "two", [3]]
    assert r.eval("return cjson.encode({a = ARGV[1]})", 0, "x") == '{"a":"x"}'
    try:
        r.eval("return redis.call('nosuch')", 0)
        raise SystemExit("expected an error")
    except redis.ResponseError as e:
        assert "Unknown Redis command called from script" in str(e), e
    try:
        r.evalsha("0" * 40, 0)
        raise SystemExit("expected NOSCRIPT")
    except redis.exceptions.NoScriptError:
        pass
    assert r.eval_ro("return redis.call('GET', KEYS[1])", 1, "n") == "7"
    lib = "#!lua name=lib\nredis.register_function('double', function(keys, args) return tonumber(args[1]) * 2 end)"
    assert r.function_load(lib) == "lib"
    assert r.fcall("double", 0, 21) == 42
    listed = r.function_list()
    entry = listed[0]
    if isinstance(entry, list):  # RESP2: the map comes as a flat list
        entry = dict(zip(entry[::2], entry[1::2]))
    assert entry["library_name"] == "lib", listed
    r.function_delete("lib")
    if protocol == 3:
        assert r.eval("redis.setresp(3) return redis.call('HGETALL', KEYS[1])", 1, "none") == {}
        assert r.eval("return {double = 1.5}", 0) == 1.5
r = redis.Redis(port=port, decode_responses=True)
r.config_set("busy-reply-threshold", 100)
errors = []
def slow():
    try:
        r2 = redis.Redis(port=port, decode_responses=True)
        r2.eval("while true do end", 0)
    except redis.ResponseError as e:
        errors.append(str(e))
t = threading.Thread(target=slow); t.start()
time.sleep(0.3)
other = redis.Redis(port=port, decode_responses=True)
try:
    other.get("x")
    raise SystemExit("expected BUSY")
except redis.exceptions.BusyLoadingError:
    pass
except redis.ResponseError as e:
    assert str(e).startswith("Redis is busy running a script") or "BUSY" in str(e), e
assert other.script_kill()
t.join(5)
assert errors and "killed by user" in errors[0], errors
assert other.ping()
print("redis-py scripting ok")
"##;

const NODE_SCRIPT: &str = r#"
const Redis = require("ioredis");
const assert = require("assert");
(async () => {
  const port = Number(process.env.SLUICE_PORT);
  const r = new Redis({ port, lazyConnect: false, maxRetriesPerRequest: 1 });
  assert.strictEqual(await r.ping(), "PONG");
  assert.strictEqual(await r.set("k", "v"), "OK");
  assert.strictEqual(await r.get("k"), "v");
  assert.strictEqual(await r.rpush("l", "a", "b"), 2);
  assert.deepStrictEqual(await r.lrange("l", 0, -1), ["a", "b"]);
  assert.strictEqual(await r.hset("h", "f", "v"), 1);
  assert.deepStrictEqual(await r.hgetall("h"), { f: "v" });
  const results = await r.pipeline().incr("n").incr("n").get("n").exec();
  assert.deepStrictEqual(results, [[null, 1], [null, 2], [null, "2"]]);
  const tx = await r.multi().set("a", "1").incr("a").exec();
  assert.deepStrictEqual(tx, [[null, "OK"], [null, 2]]);
  await assert.rejects(r.lpush("k", "x"), /WRONGTYPE/);
  const sub = new Redis({ port });
  await sub.subscribe("ch");
  const got = new Promise((resolve) => sub.on("message", (ch, msg) => resolve([ch, msg])));
  assert.strictEqual(await r.publish("ch", "hi"), 1);
  assert.deepStrictEqual(await got, ["ch", "hi"]);
  const waiter = new Redis({ port });
  const popped = waiter.blpop("q", 5);
  await new Promise((res) => setTimeout(res, 100));
  await r.rpush("q", "job");
  assert.deepStrictEqual(await popped, ["q", "job"]);
  sub.disconnect(); waiter.disconnect(); r.disconnect();
  console.log("ioredis ok");
})().catch((e) => { console.error(e); process.exit(1); });
"#;

use crate::common::assert_succeeds as run;

#[test]
fn redis_py() {
    let Some(python) = clients::require(clients::python(), "redis-py") else {
        return;
    };
    let server = Sluice::start();
    let mut cmd = Command::new(python);
    cmd.args(["-c", PYTHON_SCRIPT, &server.port.to_string()]);
    run(cmd, "the redis-py script");
}

#[test]
fn redis_py_scripting() {
    let Some(python) = clients::require(clients::python(), "redis-py") else {
        return;
    };
    let server = Sluice::start();
    let mut cmd = Command::new(python);
    cmd.args(["-c", PYTHON_SCRIPTING, &server.port.to_string()]);
    run(cmd, "the redis-py scripting script");
}

#[test]
fn ioredis() {
    let Some(modules) = clients::require(clients::node_modules(), "ioredis") else {
        return;
    };
    let server = Sluice::start();
    let mut cmd = Command::new("node");
    cmd.env("NODE_PATH", &modules)
        .env("SLUICE_PORT", server.port.to_string())
        .args(["-e", NODE_SCRIPT]);
    run(cmd, "the ioredis script");
}
