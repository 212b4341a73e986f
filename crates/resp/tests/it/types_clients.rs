//! Streams, bitmaps, HyperLogLog, geo, SORT, sorted-set algebra and LCS through real clients:
//! redis-py in RESP2 and RESP3 (as installed by `scripts/clients/install.sh`) and the `redis`
//! crate, blocking reads included.

use crate::common;

use std::time::Duration;

use common::{RawClient, Sluice};
use redis::AsyncCommands;
use redis::streams::{StreamReadOptions, StreamReadReply};
use sluice_embedded::clients;

/// Run once per protocol: `proto` is 2 or 3.
const PYTHON_SCRIPT: &str = r##"
import sys, threading, time, redis
port, proto = int(sys.argv[1]), int(sys.argv[2])
r = redis.Redis(port=port, protocol=proto, decode_responses=True)
r.flushall()

# Streams
assert r.xadd("s", {"a": "1"}, id="1-1") == "1-1"
assert r.xadd("s", {"a": "2", "b": "x"}, id="1-2") == "1-2"
assert r.xlen("s") == 2
assert r.xrange("s") == [("1-1", {"a": "1"}), ("1-2", {"a": "2", "b": "x"})]
assert r.xrevrange("s", count=1) == [("1-2", {"a": "2", "b": "x"})]
try:
    r.xadd("s", {"a": "0"}, id="1-1")
    raise SystemExit("expected an error for an ID going backwards")
except redis.ResponseError as e:
    assert "equal or smaller" in str(e), e
got = r.xread({"s": "0-0"}, count=5)
entries = got["s"][0] if proto == 3 else got[0][1]
assert [e[0] for e in entries] == ["1-1", "1-2"], got
r.xgroup_create("s", "g", id="0")
got = r.xreadgroup("g", "alice", {"s": ">"}, count=1)
entries = got["s"][0] if proto == 3 else got[0][1]
assert entries == [("1-1", {"a": "1"})], got
p = r.xpending("s", "g")
assert p["pending"] == 1 and p["min"] == "1-1" and p["consumers"] == [{"name": "alice", "pending": 1}], p
assert r.xack("s", "g", "1-1") == 1
claimed = r.xautoclaim("s", "g", "bob", 0, "0-0", justid=True)
assert claimed == [] or claimed[1] == [], claimed
info = r.xinfo_stream("s")
assert info["length"] == 2 and info["groups"] == 1 and info["last-generated-id"] == "1-2", info
groups = r.xinfo_groups("s")
assert groups[0]["name"] == "g" and groups[0]["last-delivered-id"] == "1-1", groups

# A blocked XREADGROUP is served by an XADD from another client.
result = []
def reader():
    c = redis.Redis(port=port, protocol=proto, decode_responses=True)
    result.append(c.xreadgroup("g", "carol", {"s": ">"}, block=5000, count=10))
t = threading.Thread(target=reader)
t.start()
for _ in range(200):
    if r.info("clients")["blocked_clients"] == 1:
        break
    time.sleep(0.01)
# 1-2 is still undelivered, so the reader is served at once or by this add.
r.xadd("s", {"late": "yes"}, id="5-0")
t.join(10)
entries = result[0]["s"][0] if proto == 3 else result[0][0][1]
assert entries[0][0] in ("1-2", "5-0"), result
assert r.xread({"s": "$"}, block=50) in (None, {}, []), "a timed-out XREAD is empty"
assert r.xtrim("s", maxlen=1, approximate=False) == 2 and r.xlen("s") == 1

# Bitmaps
assert r.setbit("b", 7, 1) == 0 and r.getbit("b", 7) == 1
assert r.bitcount("b") == 1 and r.bitpos("b", 1) == 7
r.set("x", "foobar")
assert r.bitcount("x", 1, 1) == 6
assert r.bitop("and", "dest", "x", "b") == 6
bf = r.bitfield("bf").set("i8", 0, 100).incrby("i8", 0, 100).overflow("FAIL").incrby("i8", 0, -100).execute()
assert bf == [0, -56, None], bf
try:
    r.setbit("b", 2**32, 1)
    raise SystemExit("expected an offset error")
except redis.ResponseError as e:
    assert "bit offset is not an integer or out of range" in str(e), e

# HyperLogLog
assert r.pfadd("h", *[f"e{i}" for i in range(1000)]) == 1
assert 990 <= r.pfcount("h") <= 1010, r.pfcount("h")
assert r.pfadd("h2", "e1", "zzz") == 1
assert r.pfmerge("m", "h", "h2")
assert abs(r.pfcount("m") - 1001) <= 12
raw = redis.Redis(port=port, protocol=proto)
assert raw.get("h").startswith(b"HYLL")

# Geo
assert r.geoadd("Sicily", (13.361389, 38.115556, "Palermo", 15.087269, 37.502669, "Catania")) == 2
assert r.geodist("Sicily", "Palermo", "Catania") == 166274.1516
assert r.geohash("Sicily", "Palermo", "nosuch") == ["sqc8b49rny0", None]
lon, lat = r.geopos("Sicily", "Palermo")[0]
assert abs(lon - 13.361389) < 1e-5 and abs(lat - 38.115556) < 1e-5, (lon, lat)
near = r.geosearch("Sicily", longitude=15, latitude=37, radius=200, unit="km", sort="ASC", withdist=True)
assert [n[0] for n in near] == ["Catania", "Palermo"] and near[0][1] == 56.4413, near
assert r.geosearchstore("near", "Sicily", longitude=15, latitude=37, radius=100, unit="km") == 1
assert r.georadius("Sicily", 15, 37, 200, unit="km", sort="DESC") == ["Palermo", "Catania"]

# Sorted-set algebra, multi-key pops, SORT, LCS
r.zadd("za", {"a": 1, "b": 2})
r.zadd("zb", {"b": 10, "c": 20})
# redis-py shapes some replies differently per protocol: compare the values.
assert [tuple(x) for x in r.zunion(["za", "zb"], withscores=True)] == [("a", 1.0), ("b", 12.0), ("c", 20.0)]
assert r.zinter(["za", "zb"], aggregate="MAX") == ["b"]
assert r.zdiff(["za", "zb"]) == ["a"]
assert r.zunionstore("zu", {"za": 2, "zb": 1}) == 3
assert r.zintercard(2, ["za", "zb"]) == 1
assert r.zrangestore("zr", "zu", 0, 1) == 2
popped = r.zmpop(1, ["zu"], max=True)
assert popped[0] == "zu" and popped[1][0][0] == "c" and float(popped[1][0][1]) == 20.0, popped
assert tuple(r.bzpopmin("zu", 1)) == ("zu", "a", 2.0)
r.rpush("nums", 3, 1, 2)
assert r.lmpop(1, "nums", direction="LEFT", count=2) == ["nums", ["3", "1"]]
r.rpush("ids", 3, 1, 2)
r.mset({"w_1": 30, "w_2": 20, "w_3": 10})
assert r.sort("ids") == ["1", "2", "3"]
assert r.sort("ids", by="w_*") == ["3", "2", "1"]
assert r.sort("ids", by="w_*", get=["#", "w_*"]) == ["3", "10", "2", "20", "1", "30"]
assert r.sort_ro("ids", desc=True) == ["3", "2", "1"]
r.mset({"s1": "ohmytext", "s2": "mynewtext"})
assert r.lcs("s1", "s2") == "mytext"
assert r.lcs("s1", "s2", len=True) == 6
print("redis-py ok", proto)
"##;

#[test]
fn redis_py_streams_bitmaps_hyperloglog_resp2_and_resp3() {
    let Some(python) = clients::require(clients::python(), "redis-py") else {
        return;
    };
    let server = Sluice::start();
    common::assert_redis_py_both_protocols(&python, PYTHON_SCRIPT, server.port, "redis-py");
}

#[tokio::test]
async fn redis_crate_streams_and_blocking_reads() {
    let server = Sluice::start_with(sluice_resp::Config {
        io_threads: 2,
        ..Default::default()
    });
    let mut c = server.redis().await;
    let id: String = c.xadd("jobs", "1-0", &[("task", "a")]).await.unwrap();
    assert_eq!(id, "1-0");
    let _: String = c.xadd("jobs", "*", &[("task", "b")]).await.unwrap();
    let len: usize = c.xlen("jobs").await.unwrap();
    assert_eq!(len, 2);
    let _: () = c.xgroup_create("jobs", "workers", "0").await.unwrap();
    let opts = StreamReadOptions::default().group("workers", "w1").count(1);
    let reply: StreamReadReply = c.xread_options(&["jobs"], &[">"], &opts).await.unwrap();
    assert_eq!(reply.keys[0].ids[0].id, "1-0");
    let acked: i64 = c.xack("jobs", "workers", &["1-0"]).await.unwrap();
    assert_eq!(acked, 1);

    // XREAD BLOCK on one connection, XADD on another (different connection threads).
    let mut waiter = server.redis().await;
    let blocked = tokio::spawn(async move {
        let opts = StreamReadOptions::default().block(10_000);
        let reply: StreamReadReply = waiter
            .xread_options(&["events"], &["$"], &opts)
            .await
            .unwrap();
        reply
    });
    RawClient::connect(server.port)
        .unwrap()
        .wait_blocked(1)
        .await;
    let _: String = c.xadd("events", "7-7", &[("k", "v")]).await.unwrap();
    let reply = blocked.await.unwrap();
    assert_eq!(reply.keys[0].key, "events");
    assert_eq!(reply.keys[0].ids[0].id, "7-7");

    // Bitmaps and HyperLogLog.
    let old: bool = c.setbit("bits", 10, true).await.unwrap();
    assert!(!old);
    let n: usize = c.bitcount("bits").await.unwrap();
    assert_eq!(n, 1);
    let added: bool = c.pfadd("visitors", &["a", "b", "c"]).await.unwrap();
    assert!(added);
    let count: usize = c.pfcount("visitors").await.unwrap();
    assert_eq!(count, 3);
    let err = redis::cmd("XADD")
        .arg("jobs")
        .arg("0-1")
        .arg("x")
        .arg("y")
        .query_async::<String>(&mut c)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("equal or smaller"), "{err}");
}

/// CLIENT UNBLOCK ends a blocked BZPOPMIN with an error, a blocked BLMPOP as a timeout, and
/// answers 0 for a client that is not blocked; a ZADD from another client serves BZMPOP.
#[test]
fn client_unblock_and_served_zset_pops() {
    let server = Sluice::start();
    let mut waiter = RawClient::connect(server.port).unwrap();
    let mut other = RawClient::connect(server.port).unwrap();
    let id_reply = waiter.call(&["CLIENT", "ID"]);
    let id = String::from_utf8_lossy(&id_reply[1..id_reply.len() - 2]).into_owned();
    assert_eq!(other.call(&["CLIENT", "UNBLOCK", &id]), b":0\r\n");
    let wait_blocked = |c: &mut RawClient| {
        for _ in 0..500 {
            if c.blocked_clients_are(1) {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        panic!("the client never blocked");
    };
    waiter.send_raw(&RawClient::encode(&["BZPOPMIN", "z", "0"]));
    wait_blocked(&mut other);
    assert_eq!(other.call(&["CLIENT", "UNBLOCK", &id, "ERROR"]), b":1\r\n");
    assert_eq!(
        waiter.read_reply(),
        b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"
    );
    waiter.send_raw(&RawClient::encode(&["BLMPOP", "0", "1", "l", "LEFT"]));
    wait_blocked(&mut other);
    assert_eq!(
        other.call(&["CLIENT", "UNBLOCK", &id, "TIMEOUT"]),
        b":1\r\n"
    );
    assert_eq!(waiter.read_reply(), b"*-1\r\n");
    assert_eq!(
        other.call(&["CLIENT", "UNBLOCK", &id, "MAYBE"]),
        b"-ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR\r\n"
    );
    waiter.send_raw(&RawClient::encode(&[
        "BZMPOP", "0", "2", "a", "z", "MAX", "COUNT", "5",
    ]));
    wait_blocked(&mut other);
    assert_eq!(other.call(&["ZADD", "z", "1", "x", "2", "y"]), b":2\r\n");
    assert_eq!(
        waiter.read_reply(),
        b"*2\r\n$1\r\nz\r\n*2\r\n*2\r\n$1\r\ny\r\n$1\r\n2\r\n*2\r\n$1\r\nx\r\n$1\r\n1\r\n"
    );
    assert_eq!(other.call(&["EXISTS", "z"]), b":0\r\n");
}

#[tokio::test]
async fn redis_crate_geo_sort_and_zset_algebra() {
    let server = Sluice::start();
    let mut c = server.redis().await;
    let added: i64 = redis::cmd("GEOADD")
        .arg("Sicily")
        .arg(13.361389)
        .arg(38.115556)
        .arg("Palermo")
        .arg(15.087269)
        .arg(37.502669)
        .arg("Catania")
        .query_async(&mut c)
        .await
        .unwrap();
    assert_eq!(added, 2);
    let dist: f64 = redis::cmd("GEODIST")
        .arg("Sicily")
        .arg("Palermo")
        .arg("Catania")
        .arg("km")
        .query_async(&mut c)
        .await
        .unwrap();
    assert_eq!(dist, 166.2742);
    let found: Vec<String> = redis::cmd("GEOSEARCH")
        .arg("Sicily")
        .arg("FROMMEMBER")
        .arg("Palermo")
        .arg("BYBOX")
        .arg(400)
        .arg(400)
        .arg("km")
        .arg("ASC")
        .query_async(&mut c)
        .await
        .unwrap();
    assert_eq!(found, ["Palermo", "Catania"]);
    let _: () = c.rpush("ids", &[3, 1, 2]).await.unwrap();
    let sorted: Vec<i64> = redis::cmd("SORT")
        .arg("ids")
        .arg("DESC")
        .query_async(&mut c)
        .await
        .unwrap();
    assert_eq!(sorted, [3, 2, 1]);
    let _: () = c.zadd_multiple("a", &[(1, "x"), (2, "y")]).await.unwrap();
    let _: () = c.zadd_multiple("b", &[(5, "y")]).await.unwrap();
    let n: i64 = redis::cmd("ZINTERSTORE")
        .arg("both")
        .arg(2)
        .arg("a")
        .arg("b")
        .query_async(&mut c)
        .await
        .unwrap();
    assert_eq!(n, 1);
    let score: f64 = c.zscore("both", "y").await.unwrap();
    assert_eq!(score, 7.0);
}
