//! redis-py and ioredis against an in-process Sluice, as installed by `scripts/clients/install.sh`
//! (missing: a failure under CI, a skip with a message elsewhere).

mod common;

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

fn run(mut cmd: Command, what: &str) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("running {what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed:\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

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
