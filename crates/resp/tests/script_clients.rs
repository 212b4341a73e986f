//! redis-py and ioredis against an in-process Sluice. redis-py is pip-installed into the target
//! directory when python3 cannot import it (a failure under CI, a skip elsewhere when pip is
//! missing); ioredis skips with a message: `npm install --prefix target/node-clients ioredis`.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::Sluice;

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

/// A directory under the target dir for client packages the tests install themselves.
fn client_dir(name: &str) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    target.join(name)
}

/// Whether `python3` with this `PYTHONPATH` can import redis-py.
fn imports_redis(python_path: &std::path::Path) -> bool {
    Command::new("python3")
        .env("PYTHONPATH", python_path)
        .args(["-c", "import redis"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Where redis-py can be imported from: the system's, else one pip installs into the target
/// directory (the issue asks the test to install it). `None` when neither works.
fn redis_py_path() -> Option<PathBuf> {
    let packages = client_dir("py-clients");
    if imports_redis(&packages) {
        return Some(packages);
    }
    let installed = Command::new("python3")
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .arg("--target")
        .arg(&packages)
        .arg("redis")
        .status()
        .is_ok_and(|s| s.success());
    (installed && imports_redis(&packages)).then_some(packages)
}

#[test]
fn redis_py() {
    let Some(packages) = redis_py_path() else {
        // CI has python3 and pip: there a missing client is a failure, not a skip.
        assert!(
            std::env::var_os("CI").is_none(),
            "redis-py could not be imported nor installed (python3 -m pip install redis)"
        );
        eprintln!("SKIP: python3 with pip (or the redis package) is missing: pip install redis");
        return;
    };
    let server = Sluice::start();
    let mut cmd = Command::new("python3");
    cmd.env("PYTHONPATH", &packages)
        .args(["-c", PYTHON_SCRIPT, &server.port.to_string()]);
    run(cmd, "the redis-py script");
}

fn node_modules() -> PathBuf {
    client_dir("node-clients/node_modules")
}

#[test]
fn ioredis() {
    let modules = node_modules();
    if !common::have("node") || !modules.join("ioredis").exists() {
        eprintln!(
            "SKIP: node or ioredis is missing (npm install --prefix target/node-clients ioredis); looked in {}",
            modules.display()
        );
        return;
    }
    let server = Sluice::start();
    let mut cmd = Command::new("node");
    cmd.env("NODE_PATH", &modules)
        .env("SLUICE_PORT", server.port.to_string())
        .args(["-e", NODE_SCRIPT]);
    run(cmd, "the ioredis script");
}
