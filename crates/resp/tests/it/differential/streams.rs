//! Differential stream checks: stream and consumer-group scripts, random stream workloads.

use super::{Lcg, Pair, compare_random};

/// Streams and consumer groups.
pub(super) const SCRIPTS: &str = r#"
XADD s 1-1 a 1 b 2
XADD s 1-2 a 3 b 4
XADD s 1-* a 5
XADD s 2 c 6
XADD s 1-5 x y
XADD s 0-0 x y
XADD s 3-0 f
XADD s 3-0
XADD s NOMKSTREAM 5-0 k v
XADD nostream NOMKSTREAM * k v
EXISTS nostream
XADD s bad-id k v
XADD s MAXLEN -1 * k v
XADD s MAXLEN 1 MINID 1 * k v
XADD s LIMIT 10 * k v
XADD s MAXLEN 10 LIMIT 10 * k v
XLEN s
XLEN nokey
XRANGE s - +
XRANGE s - + COUNT 2
XRANGE s - + COUNT 0
XRANGE s - + COUNT -1
XRANGE s (1-1 +
XRANGE s - (2-0
XRANGE s 1 1
XRANGE s (18446744073709551615-18446744073709551615 +
XRANGE s - (0-0
XRANGE s x +
XRANGE s - + BOGUS
XREVRANGE s + -
XREVRANGE s + - COUNT 1
XREVRANGE s (2-0 -
XDEL s 1-2 9-9
XDEL s bad
XRANGE s - +
XLEN s
XTRIM s MAXLEN 1
XTRIM s MAXLEN ~ 0
XTRIM s
XTRIM s MAXLEN 1 LIMIT 5
XRANGE s - +
XSETID s 1-0
XSETID s 10-0
XADD s 5-0 k v
XSETID s 20-0 ENTRIESADDED 0
XSETID s 20-0 ENTRIESADDED 100 MAXDELETEDID 25-0
XSETID s 20-0 ENTRIESADDED 100 MAXDELETEDID 15-0
XSETID nokey 1-0
XINFO STREAM s
XINFO STREAM s FULL
XINFO STREAM nokey
XINFO BOGUS s
SET str v
XADD str * k v
XRANGE str - +
XLEN str
XREAD STREAMS s
XREAD COUNT 1 STREAMS s 0-0
XREAD STREAMS s nokey 0 0
XREAD STREAMS s $
XREAD STREAMS s >
XREAD GROUP g c STREAMS s 0
XREAD NOACK STREAMS s 0
XREAD BLOCK -1 STREAMS s 0
XREAD BLOCK x STREAMS s 0
XREAD STREAMS str 0
XREAD BLOCK 10 STREAMS s $
MULTI
XREAD BLOCK 0 STREAMS s $
EXEC

XADD q 1-0 f 1
XADD q 2-0 f 2
XADD q 3-0 f 3
XGROUP CREATE q g 0
XGROUP CREATE q g 0
XGROUP CREATE nokey g 0
XGROUP CREATE nokey g $ MKSTREAM
XGROUP CREATE q g2 $ ENTRIESREAD -5
XGROUP CREATE q g3 bad
XGROUP CREATECONSUMER q g alice
XGROUP CREATECONSUMER q g alice
XGROUP CREATECONSUMER q nog alice
XGROUP BOGUS q
XGROUP CREATE q
XREADGROUP GROUP g bob COUNT 2 STREAMS q >
XREADGROUP GROUP g bob STREAMS q 0
XREADGROUP GROUP g bob STREAMS q 1-0
XREADGROUP GROUP nog bob STREAMS q >
XREADGROUP GROUP g bob STREAMS q $
XREADGROUP STREAMS q >
XREADGROUP GROUP g carol NOACK STREAMS q >
XREADGROUP GROUP g bob STREAMS q >
XPENDING q g
XPENDING q g - + 10 carol
XPENDING q nog
XPENDING q g - + x
XPENDING q g x + 10
XACK q g 1-0 9-0
XACK q g 1-0
XACK q g bad
XACK q nog 1-0
XPENDING q g
XINFO GROUPS q
XGROUP SETID q g 0
XGROUP SETID q g $ ENTRIESREAD 3
XGROUP SETID q nog 0
XINFO GROUPS q
XDEL q 2-0
XREADGROUP GROUP g bob STREAMS q 0
XPENDING q g
XCLAIM q g carol 0 2-0 JUSTID
XCLAIM q g carol 0 9-0
XCLAIM q g carol x 2-0
XCLAIM q g carol 0 2-0 BOGUS
XCLAIM q nog carol 0 2-0
XPENDING q g
XAUTOCLAIM q g dave 0 0 COUNT 10 JUSTID
XAUTOCLAIM q g dave 0 0 COUNT 0
XAUTOCLAIM q nog dave 0 0
XGROUP DELCONSUMER q g dave
XGROUP DELCONSUMER q g nobody
XGROUP DESTROY q g
XGROUP DESTROY q g
XINFO GROUPS q
XINFO CONSUMERS q nog
XGROUP HELP
XINFO HELP
"#;

/// Random stream workloads (appends, deletions, exact and approximate trims over small nodes,
/// ranges, consumer-group reads, acknowledgements, claims) give the same replies as
/// redis-server, byte for byte.
#[test]
fn random_stream_workloads_match_redis() {
    let Some(pair) = Pair::start() else {
        return;
    };
    let (mut theirs, mut ours) = pair.clients();
    let mut all = Vec::new();
    for seed in 1..=6u64 {
        let mut rng = Lcg(seed);
        let s = |v: &str| v.to_owned();
        let mut cmds: Vec<Vec<String>> = vec![
            vec![s("FLUSHALL")],
            vec![
                s("CONFIG"),
                s("SET"),
                s("stream-node-max-entries"),
                (2 + rng.below(6)).to_string(),
            ],
        ];
        let mut ms = 1u64;
        let id = |rng: &mut Lcg, ms: u64| format!("{}-{}", 1 + rng.below(ms + 1), rng.below(4));
        for step in 0..400 {
            let cmd: Vec<String> = match rng.below(20) {
                0..=6 => {
                    ms += rng.below(3);
                    let idarg = if rng.below(4) == 0 {
                        format!("{ms}-*")
                    } else {
                        format!("{ms}-{}", rng.below(3))
                    };
                    let mut c = vec![s("XADD"), s("st")];
                    if rng.below(8) == 0 {
                        c.extend([s("MAXLEN"), s("~"), (rng.below(30)).to_string()]);
                    }
                    c.push(idarg);
                    for f in 0..=rng.below(2) {
                        c.push(format!("f{}", if rng.below(3) == 0 { f + 1 } else { f }));
                        c.push(format!("v{step}"));
                    }
                    c
                }
                7 | 8 => vec![s("XDEL"), s("st"), id(&mut rng, ms), id(&mut rng, ms)],
                9 => {
                    let mut c = vec![s("XTRIM"), s("st")];
                    if rng.below(2) == 0 {
                        c.push(s("MAXLEN"));
                        if rng.below(2) == 0 {
                            c.push(s("~"));
                        }
                        c.push(rng.below(40).to_string());
                    } else {
                        c.push(s("MINID"));
                        c.push(id(&mut rng, ms));
                    }
                    c
                }
                10 | 11 => {
                    let (a, b) = (id(&mut rng, ms), id(&mut rng, ms));
                    let name = if rng.below(2) == 0 {
                        "XRANGE"
                    } else {
                        "XREVRANGE"
                    };
                    let mut c = vec![s(name), s("st"), a, b];
                    if rng.below(2) == 0 {
                        c.extend([s("COUNT"), rng.below(6).to_string()]);
                    }
                    c
                }
                12 => vec![s("XLEN"), s("st")],
                13 => vec![
                    s("XGROUP"),
                    s("CREATE"),
                    s("st"),
                    format!("g{}", rng.below(2)),
                    s("0"),
                    s("MKSTREAM"),
                ],
                14 | 15 => {
                    let mut c = vec![
                        s("XREADGROUP"),
                        s("GROUP"),
                        format!("g{}", rng.below(2)),
                        format!("c{}", rng.below(3)),
                        s("COUNT"),
                        (1 + rng.below(4)).to_string(),
                    ];
                    if rng.below(4) == 0 {
                        c.push(s("NOACK"));
                    }
                    c.extend([s("STREAMS"), s("st")]);
                    c.push(if rng.below(3) == 0 { s("0") } else { s(">") });
                    c
                }
                16 => vec![
                    s("XACK"),
                    s("st"),
                    format!("g{}", rng.below(2)),
                    id(&mut rng, ms),
                ],
                17 => vec![s("XPENDING"), s("st"), format!("g{}", rng.below(2))],
                18 => vec![
                    s("XAUTOCLAIM"),
                    s("st"),
                    format!("g{}", rng.below(2)),
                    format!("c{}", rng.below(3)),
                    s("0"),
                    s("0"),
                    s("COUNT"),
                    (1 + rng.below(3)).to_string(),
                    s("JUSTID"),
                ],
                _ => vec![s("XINFO"), s("GROUPS"), s("st")],
            };
            cmds.push(cmd);
        }
        cmds.push(vec![s("XRANGE"), s("st"), s("-"), s("+")]);
        all.extend(compare_random(&mut theirs, &mut ours, &cmds));
    }
    assert!(
        all.is_empty(),
        "{} replies differ from redis-server:\n{}",
        all.len(),
        all.iter().take(20).cloned().collect::<Vec<_>>().join("\n")
    );
}
