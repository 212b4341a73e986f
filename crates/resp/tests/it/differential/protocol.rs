//! Differential protocol checks: MULTI/WATCH, pub/sub, RESP3, malformed input, pipelines.

use super::Pair;

/// Transactions, pub/sub and RESP3 replies.
pub(super) const SCRIPTS: &str = r#"
MULTI
SET a 1
INCR a
GET a
EXEC
MULTI
MULTI
DISCARD
DISCARD
EXEC
MULTI
SET a
NOSUCH
EXEC
MULTI
SET a x
INCR a
GET a
EXEC
WATCH a
SET a changed
MULTI
GET a
EXEC
WATCH a
MULTI
WATCH b
GET a
EXEC
UNWATCH
MULTI
BLPOP nolist 0
EXEC

PUBLISH chan hello
PUBSUB CHANNELS
PUBSUB NUMSUB chan other
PUBSUB NUMPAT
PUBSUB BOGUS
UNSUBSCRIBE
PUNSUBSCRIBE
SUBSCRIBE a b
PING
PING x
GET a
UNSUBSCRIBE a
PSUBSCRIBE p*
PUNSUBSCRIBE
UNSUBSCRIBE
GET a

HELLO 3
? HELLO 3
PING
GET nokey
SET k v
GET k
HSET h a 1 b 2
HGETALL h
ZADD z 1.5 a 2 b
ZSCORE z a
ZRANGE z 0 -1 WITHSCORES
ZPOPMIN z 1
ZADD z 3 c
ZPOPMIN z
ZINCRBY z 1 c
ZMSCORE z c nope
SADD s a
SMEMBERS s
SPOP s 0
LPOP nokey 2
BLPOP nokey 0.01
HRANDFIELD h 0 WITHVALUES
CONFIG GET maxmemory
ZADD r 1 a 2 b 3 c
ZRANGE r 0 -1 REV WITHSCORES
ZRANGEBYSCORE r 1 2 WITHSCORES
ZSCAN r 0
ZRANDMEMBER nokey
ZRANDMEMBER nokey 2
ZRANDMEMBER r 0 WITHSCORES
ZRANDMEMBER r 1 BOGUS
MULTI
INCR cnt
ZSCORE r a
HGETALL h
EXEC
CLIENT GETNAME
~ CONFIG GET maxmemory hz
TYPE r
TTL r
SMISMEMBER s a b
SET f 1.5
INCRBYFLOAT f 1
SCAN 0 TYPE hash
LPOS nokey a COUNT 0
HMGET h a nope
PUBSUB NUMSUB ch
SUBSCRIBE ch
GET nokey
UNSUBSCRIBE ch
"#;

#[test]
fn protocol_errors_match_redis_and_close() {
    let Some(pair) = Pair::start() else {
        return;
    };
    let cases: &[&[u8]] = &[
        b"*1\r\n+PING\r\n",
        b"*x\r\n",
        b"*1\r\n$-5\r\n",
        b"*1\r\n$abc\r\n",
        b"*2\r\n$4\r\nECHO\r\n$999999999999\r\n",
        b"GET \"unbalanced\r\n",
    ];
    for case in cases {
        let (mut theirs, mut ours) = pair.clients();
        theirs.send_raw(case);
        ours.send_raw(case);
        let (a, b) = (theirs.read_reply(), ours.read_reply());
        assert_eq!(
            String::from_utf8_lossy(&a),
            String::from_utf8_lossy(&b),
            "for {:?}",
            String::from_utf8_lossy(case)
        );
        assert!(
            ours.is_closed(),
            "Sluice must close after {:?}",
            String::from_utf8_lossy(case)
        );
    }
    // Inline commands and pipelines: many commands in one write, answered in order.
    let (mut theirs, mut ours) = pair.clients();
    let pipeline = b"PING\r\nSET x 1\r\n*2\r\n$4\r\nINCR\r\n$1\r\nx\r\n\r\nGET x\nECHO \"a b\"\r\n";
    theirs.send_raw(pipeline);
    ours.send_raw(pipeline);
    for _ in 0..5 {
        assert_eq!(theirs.read_reply(), ours.read_reply());
    }
}
