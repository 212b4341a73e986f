//! Differential SORT, COMMAND/CLUSTER, CONFIG and LCS checks: scripts, random SORT/LCS/pops.

use super::{Lcg, Pair, compare_random};

/// SORT, COMMAND GETKEYS/INFO/LIST, CLUSTER, CONFIG parameters and LCS.
pub(super) const SCRIPTS: &str = r#"
RPUSH l 3 1 2 10
SORT l
SORT l DESC
SORT l ALPHA
SORT l LIMIT 1 2
SORT l LIMIT 1 x
SORT l BY nosort
SORT l BY nosort DESC LIMIT 0 2
MSET w_3 30 w_1 10 w_2 20 w_10 0
HSET h_1 f 9 n one
HSET h_3 f 1 n three
SORT l BY w_*
SORT l BY w_* GET # GET h_*->n
SORT l BY h_*->f GET h_*->n
SORT l BY h_*->f ALPHA GET h_*->n
SORT l GET nosuch_*
SORT l STORE dst
LRANGE dst 0 -1
SORT l BY w_* GET h_*->n STORE dst
LRANGE dst 0 -1
SORT nokey STORE dst
EXISTS dst
SORT_RO l STORE dst
SORT l BOGUS
RPUSH bad 1 x
SORT bad
SORT bad ALPHA
SADD sset c a b
SORT sset ALPHA
SORT sset BY nosort STORE dst
LRANGE dst 0 -1
ZADD zs 3 c 1 a 2 b
SORT zs BY nosort
SORT zs BY nosort DESC
SORT zs ALPHA DESC LIMIT 0 2
SET str v
SORT str
COMMAND GETKEYS SORT abc STORE def
COMMAND GETKEYS XREAD COUNT 1 STREAMS a b 0 0
COMMAND GETKEYS ZUNIONSTORE d 2 a b
COMMAND GETKEYS GET
COMMAND GETKEYS NOSUCH a
COMMAND GETKEYS PING
COMMAND GETKEYS PING x
COMMAND GETKEYS GET a b
COMMAND GETKEYSANDFLAGS set k1 v1
COMMAND GETKEYSANDFLAGS set k1 v1 get
COMMAND GETKEYSANDFLAGS mset k1 v1 k2 v2
COMMAND GETKEYSANDFLAGS LMOVE k1 k2 left right
COMMAND GETKEYSANDFLAGS sort k1 store k2
COMMAND GETKEYSANDFLAGS sort_ro k1 by x get y
COMMAND GETKEYSANDFLAGS bitfield k get u8 0
COMMAND GETKEYSANDFLAGS bitfield k get u8 0 set u8 0 1
COMMAND GETKEYSANDFLAGS georadius k 0 0 1 km store dst
COMMAND GETKEYSANDFLAGS xreadgroup group g c streams s1 s2 > >
COMMAND GETKEYSANDFLAGS lmpop 2 a b left
COMMAND GETKEYSANDFLAGS fcall f 2 a b x
COMMAND GETKEYSANDFLAGS get
COMMAND GETKEYS memory usage key
COMMAND GETKEYS memory nosuch key
COMMAND GETKEYS xgroup create key g $
COMMAND GETKEYS eval "return 1" 1 key
COMMAND GETKEYS eval "return 1" 0
COMMAND GETKEYS eval "return 1" 5 key
COMMAND GETKEYS lcs k1 k2
COMMAND GETKEYS ZUNIONSTORE d 5 a
COMMAND GETKEYS ZUNIONSTORE d -1 a
COMMAND GETKEYS OBJECT FREQ k
COMMAND INFO get lmove xread xreadgroup georadius mset zunionstore
COMMAND INFO config|get client|list object|freq xinfo|stream get|key config|get|key nosuch
COMMAND INFO ping subscribe publish blpop exec watch
COMMAND COUNT x
COMMAND LIST bad_arg
COMMAND LIST filterby bad_arg
COMMAND LIST filterby bad_arg bad_arg2
COMMAND LIST filterby module nosuch
COMMAND LIST filterby aclcat nosuch
COMMAND LIST filterby pattern set
COMMAND LIST filterby pattern non_exists*
CLUSTER INFO
CLUSTER HELP
CLUSTER NODES
CLUSTER NOSUCH
CLUSTER
CLUSTER GETKEYSINSLOT 1
EVAL "return redis.pcall('cluster','reset')" 0
EVAL "return redis.pcall('cluster','info')" 0
EVAL "return redis.pcall('object','nosuch','k')" 0
EVAL "return redis.pcall('xinfo','stream')" 0
EVAL "return redis.pcall('pubsub','numpat')" 0
~ COMMAND LIST filterby pattern cl*help
~ COMMAND LIST filterby pattern config|*re*
~ COMMAND LIST filterby aclcat hyperloglog
~ COMMAND LIST filterby pattern x*
MULTI
SET a 1
SAVE
EXEC
GET a

CONFIG SET maxmemory-clients 200%
CONFIG SET maxmemory-clients 10%
CONFIG GET maxmemory-clients
CONFIG SET maxmemory-clients 0
CONFIG SET maxmemory-clients x
CONFIG SET save "100 10"
CONFIG GET save
CONFIG SET save "0 10"
CONFIG SET save "100"
CONFIG SET save ""
CONFIG SET client-output-buffer-limit "pubsub 1mb 0 0"
CONFIG GET client-output-buffer-limit
CONFIG SET client-output-buffer-limit "master 1 1 1"
CONFIG SET client-output-buffer-limit "pubsub 1 1"
CONFIG SET client-output-buffer-limit "pubsub 1 1 x"
CONFIG SET client-output-buffer-limit "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
CONFIG SET shutdown-on-sigterm "now nosave"
CONFIG GET shutdown-on-sigterm
CONFIG SET shutdown-on-sigterm "save nosave"
CONFIG SET shutdown-on-sigterm "save bogus"
CONFIG SET shutdown-on-sigterm default
CONFIG SET oom-score-adj relative
CONFIG GET oom-score-adj
CONFIG SET oom-score-adj no
CONFIG SET oom-score-adj-values "1 2"
CONFIG SET oom-score-adj-values "0 200 9000"
CONFIG SET hash-max-listpack-entries -1
CONFIG SET hash-max-ziplist-entries 100
CONFIG GET hash-max-listpack-entries
CONFIG SET hash-max-listpack-entries 512
CONFIG SET activedefrag maybe
CONFIG SET loglevel nope
CONFIG SET maxclients 0
CONFIG SET repl-backlog-size 0
CONFIG SET repl-backlog-size 10000002
CONFIG GET repl-backlog-size
CONFIG SET repl-backlog-size 1mb
CONFIG SET unixsocketperm 777
CONFIG SET replicaof "no one"
CONFIG GET key-load-delay
CONFIG GET KEY-load-delay
CONFIG SET latency-tracking-info-percentiles "50 99.90 100"
CONFIG GET latency-tracking-info-percentiles
CONFIG SET latency-tracking-info-percentiles "101"
CONFIG SET latency-tracking-info-percentiles "x"
CONFIG SET latency-tracking-info-percentiles "50 99 99.9"
CONFIG SET maxmemory 1 hz
CONFIG SET maxmemory 10mb maxmemory 1mb
CONFIG SET timeout -1
CONFIG SET slave-read-only nope
~ CONFIG GET *-max-*-entries
~ CONFIG GET slave* replica*
~ CONFIG GET maxmemory maxmemory* bind

SET a ohmytext
SET b mynewtext
LCS a b
LCS a b LEN
LCS a b IDX
LCS a b IDX MINMATCHLEN 4 WITHMATCHLEN
LCS a b LEN IDX
LCS a nokey
LCS nokey1 nokey2 IDX
LCS a b BOGUS
RPUSH l x
LCS a l
"#;

/// Random SORT (BY, GET with hash fields, LIMIT, ALPHA, DESC, STORE), LCS and multi-key pops give
/// the same replies as redis-server.
#[test]
fn random_sort_lcs_and_pop_workloads_match_redis() {
    let Some(pair) = Pair::start() else {
        return;
    };
    let (mut theirs, mut ours) = pair.clients();
    let mut rng = Lcg(99);
    let s = |v: &str| v.to_owned();
    let mut cmds: Vec<Vec<String>> = vec![vec![s("FLUSHALL")]];
    for i in 0..40 {
        cmds.push(vec![
            s("RPUSH"),
            s("l"),
            (rng.below(30) as i64 - 10).to_string(),
        ]);
        cmds.push(vec![
            s("SET"),
            format!("w_{i}"),
            (rng.below(50)).to_string(),
        ]);
        cmds.push(vec![
            s("HSET"),
            format!("h_{}", rng.below(30)),
            s("f"),
            rng.below(9).to_string(),
        ]);
        cmds.push(vec![
            s("ZADD"),
            s("z"),
            rng.below(10).to_string(),
            format!("{}", rng.below(40)),
        ]);
    }
    for _ in 0..300 {
        let cmd = match rng.below(5) {
            0 | 1 => {
                let mut c = vec![s(if rng.below(4) == 0 { "SORT_RO" } else { "SORT" })];
                c.push(s(["l", "z", "nokey"][rng.below(3) as usize]));
                if rng.below(2) == 0 {
                    c.extend([
                        s("BY"),
                        s(["w_*", "h_*->f", "nosort", "w_*->x"][rng.below(4) as usize]),
                    ]);
                }
                if rng.below(3) == 0 {
                    c.extend([
                        s("LIMIT"),
                        (rng.below(8) as i64 - 2).to_string(),
                        (rng.below(8) as i64 - 2).to_string(),
                    ]);
                }
                for _ in 0..rng.below(3) {
                    c.extend([
                        s("GET"),
                        s(["#", "w_*", "h_*->f", "nope_*"][rng.below(4) as usize]),
                    ]);
                }
                if rng.below(2) == 0 {
                    c.push(s("DESC"));
                }
                if rng.below(2) == 0 {
                    c.push(s("ALPHA"));
                }
                if c[0] == "SORT" && rng.below(4) == 0 {
                    c.extend([s("STORE"), s("dst")]);
                }
                c
            }
            2 => {
                let word = |rng: &mut Lcg| {
                    (0..rng.below(12))
                        .map(|_| (b'a' + rng.below(4) as u8) as char)
                        .collect::<String>()
                };
                let (a, b) = (word(&mut rng), word(&mut rng));
                cmds.push(vec![s("MSET"), s("la"), a, s("lb"), b]);
                let mut c = vec![s("LCS"), s("la"), s("lb")];
                match rng.below(4) {
                    0 => c.push(s("LEN")),
                    1 => c.push(s("IDX")),
                    2 => c.extend([
                        s("IDX"),
                        s("MINMATCHLEN"),
                        rng.below(3).to_string(),
                        s("WITHMATCHLEN"),
                    ]),
                    _ => {}
                }
                c
            }
            3 => vec![
                s("LMPOP"),
                s("2"),
                s("nokey"),
                s("l"),
                s(if rng.below(2) == 0 { "LEFT" } else { "RIGHT" }),
                s("COUNT"),
                (1 + rng.below(3)).to_string(),
            ],
            _ => vec![
                s("ZMPOP"),
                s("1"),
                s("z"),
                s(if rng.below(2) == 0 { "MIN" } else { "MAX" }),
                s("COUNT"),
                (1 + rng.below(3)).to_string(),
            ],
        };
        cmds.push(cmd);
        if rng.below(10) == 0 {
            cmds.push(vec![s("LRANGE"), s("dst"), s("0"), s("-1")]);
            cmds.push(vec![s("RPUSH"), s("l"), rng.below(20).to_string(), s("x")]);
            cmds.push(vec![
                s("ZADD"),
                s("z"),
                rng.below(10).to_string(),
                rng.below(40).to_string(),
            ]);
        }
    }
    let mismatches = compare_random(&mut theirs, &mut ours, &cmds);
    assert!(
        mismatches.is_empty(),
        "{} replies differ from redis-server:\n{}",
        mismatches.len(),
        mismatches
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
