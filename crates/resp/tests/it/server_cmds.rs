//! SHUTDOWN, ROLE and LOLWUT as Redis 7.0 answers them: SHUTDOWN's flags checked, refused inside
//! MULTI, then the gate stops and the client's connection closes without a reply; redis-py's
//! role(), migrate() and shutdown() in RESP2 and RESP3.

use std::time::Duration;

use crate::common::{self, RawClient, Sluice};
use sluice_embedded::clients;

fn text(reply: &[u8]) -> String {
    String::from_utf8_lossy(reply).into_owned()
}

#[test]
fn role_is_a_primary_without_replicas() {
    let server = Sluice::start();
    let mut c = RawClient::connect(server.port).expect("connect");
    assert_eq!(
        text(&c.call(&["ROLE"])),
        "*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n"
    );
    assert!(text(&c.call(&["ROLE", "x"])).starts_with("-ERR wrong number of arguments"));
}

#[test]
fn lolwut_ends_with_the_version() {
    let server = Sluice::start();
    let mut c = RawClient::connect(server.port).expect("connect");
    let reply = text(&c.call(&["LOLWUT"]));
    assert!(reply.ends_with("Redis ver. 7.0.15\n\r\n"), "{reply:?}");
    assert!(text(&c.call(&["LOLWUT", "VERSION", "5"])).contains("Redis ver. 7.0.15"));
    assert!(text(&c.call(&["LOLWUT", "VERSION", "x"])).starts_with("-ERR value is not an integer"));
    assert_eq!(text(&c.call(&["LOLWUT", "x"])), "-ERR syntax error\r\n");
}

#[test]
fn shutdown_checks_its_flags_then_stops_the_gate() {
    let server = Sluice::start();
    let mut c = RawClient::connect(server.port).expect("connect");
    for bad in [
        &["SHUTDOWN", "SAVE", "NOSAVE"][..],
        &["SHUTDOWN", "ABORT", "NOW"],
        &["SHUTDOWN", "LATER"],
    ] {
        assert_eq!(text(&c.call(bad)), "-ERR syntax error\r\n", "{bad:?}");
    }
    assert_eq!(
        text(&c.call(&["SHUTDOWN", "ABORT"])),
        "-ERR No shutdown in progress.\r\n"
    );
    assert_eq!(c.call(&["MULTI"]), b"+OK\r\n");
    assert!(
        text(&c.call(&["SHUTDOWN"])).starts_with("-ERR Command not allowed inside a transaction")
    );
    assert_eq!(c.call(&["DISCARD"]), b"+OK\r\n");
    assert!(
        !server.stops_within(Duration::from_millis(100)),
        "stopped before SHUTDOWN"
    );
    assert_eq!(c.call(&["SET", "k", "v"]), b"+OK\r\n");
    c.send_raw(&RawClient::encode(&["SHUTDOWN", "NOSAVE", "NOW", "FORCE"]));
    assert!(c.is_closed(), "SHUTDOWN answered instead of closing");
    assert!(
        server.stops_within(Duration::from_secs(10)),
        "the gate did not stop"
    );
    assert!(RawClient::connect(server.port).is_err(), "still accepting");
}

/// Run once per protocol with the ports of a source, a target and a server to shut down.
const PYTHON_SCRIPT: &str = r##"
import sys, redis
source, target, doomed, proto = (int(a) for a in sys.argv[1:5])
r = redis.Redis(port=source, protocol=proto, decode_responses=True)
t = redis.Redis(port=target, protocol=proto, decode_responses=True)
assert r.role() == ["master", 0, []], r.role()
r.flushall(); t.flushall()
r.set("a", "1", ex=100)
r.hset("h", mapping={"f": "v"})
assert r.migrate("127.0.0.1", target, ["a", "h"], 0, 5000) in (True, "OK", b"OK")
assert r.exists("a", "h") == 0
assert t.get("a") == "1" and 90 < t.ttl("a") <= 100
assert t.hgetall("h") == {"f": "v"}
r.set("c", "2")
assert r.migrate("127.0.0.1", target, "c", 0, 5000, copy=True) in (True, "OK", b"OK")
assert r.get("c") == "2" and t.get("c") == "2"
try:
    r.migrate("127.0.0.1", target, "c", 0, 5000)
    raise SystemExit("expected BUSYKEY from the target")
except redis.ResponseError as e:
    assert "BUSYKEY" in str(e), e
d = redis.Redis(port=doomed, protocol=proto)
d.set("x", "y")
assert d.shutdown(nosave=True) is None
try:
    redis.Redis(port=doomed, protocol=proto, socket_connect_timeout=1).ping()
    raise SystemExit("still serving after SHUTDOWN")
except redis.ConnectionError:
    pass
print("redis-py ok", proto)
"##;

#[test]
fn redis_py_role_migrate_and_shutdown_resp2_and_resp3() {
    let Some(python) = clients::require(clients::python(), "redis-py") else {
        return;
    };
    let (source, target) = (Sluice::start(), Sluice::start());
    for proto in ["2", "3"] {
        let doomed = Sluice::start();
        let ports = [&source, &target, &doomed].map(|s| s.port.to_string());
        common::assert_python(
            &python,
            PYTHON_SCRIPT,
            &[&ports[0], &ports[1], &ports[2], proto],
            &format!("redis-py (RESP{proto})"),
        );
        assert!(doomed.stops_within(Duration::from_secs(10)));
    }
}
