//! Differential bitmap and HyperLogLog checks: scripts, HLL bytes, random bitmap workloads.

use super::{Lcg, Pair, compare_random};

/// Bitmaps, BITFIELD, HyperLogLogs and a RESP3 mix of them.
pub(super) const SCRIPTS: &str = r#"
SETBIT b 7 1
SETBIT b 7 0
SETBIT b 100 1
GETBIT b 100
GETBIT b 99
GETBIT b 100000
GETBIT nokey 0
SETBIT b 4294967296 1
SETBIT b 4294967295 2
SETBIT b -1 1
SETBIT b x 1
GETBIT b -1
STRLEN b
BITCOUNT b
BITCOUNT b 0 -1
BITCOUNT b 0 -1 BIT
BITCOUNT b 5 100 BIT
BITCOUNT b 1 1 BYTE
BITCOUNT b 0
BITCOUNT b 0 1 BOGUS
BITCOUNT b -1 -5
BITCOUNT nokey
SET s foobar
BITCOUNT s
BITCOUNT s 1 1
BITCOUNT s 5 30 BIT
BITPOS s 1
BITPOS s 0
BITPOS s 1 2
BITPOS s 1 2 -1 BYTE
BITPOS s 0 7 15 BIT
BITPOS s 1 7 15 BIT
BITPOS s 2
BITPOS nokey 0
BITPOS nokey 1
SET ff "\xff\xff"
BITPOS ff 0
BITPOS ff 0 0 -1
SET a abc
SET c xyz
BITOP AND dest a c
GET dest
BITOP OR dest a c nokey
GET dest
BITOP XOR dest a c
GET dest
BITOP NOT dest a
GET dest
BITOP NOT dest a c
BITOP BOGUS dest a
BITOP AND dest nokey1 nokey2
EXISTS dest
LPUSH l x
BITOP AND dest l
SETBIT l 0 1
BITCOUNT l
BITFIELD bf SET i8 0 100 GET i8 0 INCRBY i8 0 100
BITFIELD bf OVERFLOW SAT INCRBY i8 0 100 OVERFLOW FAIL INCRBY i8 0 100 OVERFLOW WRAP INCRBY i8 0 100
BITFIELD bf SET u8 #1 255 INCRBY u8 #1 10 GET u4 8
BITFIELD bf OVERFLOW SAT SET u8 16 -5 OVERFLOW FAIL SET i8 16 300 GET u8 16
BITFIELD bf SET i64 0 -1 GET u63 0 INCRBY i64 0 1
BITFIELD bf GET u64 0
BITFIELD bf GET i65 0
BITFIELD bf GET x8 0
BITFIELD bf OVERFLOW BOGUS GET i8 0
BITFIELD bf GET i8
BITFIELD bf BOGUS
BITFIELD bf GET i8 -1
BITFIELD_RO bf GET i8 0 GET u16 #2
BITFIELD_RO bf SET i8 0 1
BITFIELD nokey GET u8 0
GET bf

PFADD h a b c
PFADD h a
PFADD h
PFADD h2
PFCOUNT h
PFCOUNT h h2 nokey
PFCOUNT nokey
GET h
PFMERGE m h h2
GET m
PFCOUNT m
SET notahll abc
PFADD notahll x
PFCOUNT notahll
PFCOUNT h notahll
PFMERGE m notahll
LPUSH list x
PFADD list x
PFDEBUG ENCODING h
PFDEBUG DECODE h
PFDEBUG TODENSE h
PFDEBUG ENCODING h
PFDEBUG DECODE h
PFDEBUG TODENSE h
PFDEBUG BOGUS h
PFDEBUG ENCODING nokey
PFCOUNT h
GET h
SET corrupt "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x01"
PFCOUNT corrupt
PFADD corrupt x

HELLO 3
XADD s 1-1 a 1 b 2
XADD s 2-1 a 3
XRANGE s - +
XREAD STREAMS s 0
XREAD COUNT 1 STREAMS s nokey 0 0
XREAD STREAMS s $
XGROUP CREATE s g 0
XREADGROUP GROUP g c STREAMS s >
XREADGROUP GROUP g c STREAMS s 0
XINFO STREAM s
XINFO GROUPS s
XPENDING s g
XAUTOCLAIM s g d 0 0 JUSTID
XINFO CONSUMERS s nog
BITFIELD bf SET i8 0 1 OVERFLOW FAIL INCRBY i8 0 200
PFADD h a b
PFCOUNT h
"#;

/// HyperLogLogs built from the same elements are the same bytes on both servers (sparse, dense,
/// merged, with PFCOUNT's cached cardinality), and a value copied from one to the other keeps
/// counting there.
#[test]
fn hyperloglog_strings_match_redis() {
    let Some(pair) = Pair::start() else {
        return;
    };
    let (mut theirs, mut ours) = pair.clients();
    let mut rng = Lcg(7);
    for n in [1usize, 7, 60, 400, 1500, 5000, 30000] {
        let elements: Vec<String> = (0..n).map(|_| format!("e{}", rng.next())).collect();
        for c in [&mut theirs, &mut ours] {
            c.call(&["DEL", "h", "h2", "m"]);
            for chunk in elements.chunks(200) {
                let mut cmd = vec!["PFADD", "h"];
                cmd.extend(chunk.iter().map(String::as_str));
                c.call(&cmd);
            }
            let mut cmd = vec!["PFADD", "h2", "other"];
            cmd.extend(elements.iter().take(n / 3).map(String::as_str));
            c.call(&cmd);
        }
        for cmd in [
            &["PFCOUNT", "h"][..],
            &["GET", "h"],
            &["PFCOUNT", "h", "h2"],
            &["PFMERGE", "m", "h2", "h"],
            &["GET", "m"],
            &["PFCOUNT", "m"],
            &["GET", "m"],
        ] {
            assert_eq!(
                theirs.call(cmd),
                ours.call(cmd),
                "{cmd:?} after {n} elements"
            );
        }
        // Redis's bytes into Sluice and back.
        let body = theirs.call(&["GET", "h"]);
        let value = &body[body.iter().position(|&b| b == b'\n').unwrap() + 1..body.len() - 2];
        ours.call(&[&b"SET"[..], b"copied", value]);
        theirs.call(&[&b"SET"[..], b"copied", value]);
        for cmd in [
            &["PFADD", "copied", "one more"][..],
            &["PFCOUNT", "copied"],
            &["GET", "copied"],
        ] {
            assert_eq!(
                theirs.call(cmd),
                ours.call(cmd),
                "{cmd:?} on a copied value"
            );
        }
    }
}

/// Random bitmap workloads (SETBIT, BITCOUNT and BITPOS over BYTE and BIT ranges, BITFIELD with
/// every overflow mode, BITOP) give the same replies as redis-server.
#[test]
fn random_bitmap_workloads_match_redis() {
    let Some(pair) = Pair::start() else {
        return;
    };
    let (mut theirs, mut ours) = pair.clients();
    let mut rng = Lcg(42);
    let s = |v: &str| v.to_owned();
    let mut cmds: Vec<Vec<String>> = vec![vec![s("FLUSHALL")]];
    let signed = |rng: &mut Lcg| rng.below(200) as i64 - 100;
    for _ in 0..1500 {
        let key = format!("b{}", rng.below(3));
        let cmd = match rng.below(7) {
            0 | 1 => vec![
                s("SETBIT"),
                key,
                rng.below(300).to_string(),
                rng.below(2).to_string(),
            ],
            2 => {
                let mut c = vec![s("BITCOUNT"), key];
                if rng.below(3) != 0 {
                    c.push(signed(&mut rng).to_string());
                    c.push(signed(&mut rng).to_string());
                    if rng.below(2) == 0 {
                        c.push(if rng.below(2) == 0 {
                            s("BIT")
                        } else {
                            s("BYTE")
                        });
                    }
                }
                c
            }
            3 => {
                let mut c = vec![s("BITPOS"), key, rng.below(2).to_string()];
                for _ in 0..rng.below(3) {
                    c.push(signed(&mut rng).to_string());
                }
                if c.len() == 5 && rng.below(2) == 0 {
                    c.push(if rng.below(2) == 0 {
                        s("BIT")
                    } else {
                        s("BYTE")
                    });
                }
                c
            }
            4 | 5 => {
                let mut c = vec![s("BITFIELD"), key];
                for _ in 0..=rng.below(3) {
                    let sign = if rng.below(2) == 0 { "i" } else { "u" };
                    let bits = 1 + rng.below(if sign == "i" { 64 } else { 63 });
                    let ty = format!("{sign}{bits}");
                    let offset = if rng.below(4) == 0 {
                        format!("#{}", rng.below(5))
                    } else {
                        rng.below(200).to_string()
                    };
                    match rng.below(4) {
                        0 => c.extend([s("GET"), ty, offset]),
                        1 => c.extend([
                            s("SET"),
                            ty,
                            offset,
                            (rng.next() as i64 - (1 << 30)).to_string(),
                        ]),
                        2 => c.extend([s("INCRBY"), ty, offset, signed(&mut rng).to_string()]),
                        _ => c.extend([
                            s("OVERFLOW"),
                            s(["WRAP", "SAT", "FAIL"][rng.below(3) as usize]),
                        ]),
                    }
                }
                c
            }
            _ => {
                let op = ["AND", "OR", "XOR", "NOT"][rng.below(4) as usize];
                let mut c = vec![s("BITOP"), s(op), s("dest"), key];
                if op != "NOT" {
                    c.push(format!("b{}", rng.below(3)));
                }
                c
            }
        };
        cmds.push(cmd);
        if rng.below(25) == 0 {
            cmds.push(vec![s("GET"), format!("b{}", rng.below(3))]);
            cmds.push(vec![s("GET"), s("dest")]);
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
