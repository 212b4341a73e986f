//! Differential geo and sorted-set algebra checks: scripts, random geo/zset workloads.

use super::{Lcg, Pair, compare_random};

/// Geo commands, sorted-set algebra and (blocking) multi-key pops.
pub(super) const SCRIPTS: &str = r#"
GEOADD Sicily 13.361389 38.115556 Palermo 15.087269 37.502669 Catania
GEOADD Sicily NX 13.361389 38.115556 Palermo 12.758489 38.788135 edge1
GEOADD Sicily XX CH 13.4 38.1 Palermo 1 1 newone
GEOADD Sicily 200 100 bad
GEOADD Sicily 13 38
GEOADD Sicily NX XX 1 1 x
GEOADD Sicily 1 x y
GEODIST Sicily Palermo Catania
GEODIST Sicily Palermo Catania km
GEODIST Sicily Palermo Catania mi
GEODIST Sicily Palermo Catania parsec
GEODIST Sicily Palermo nosuch
GEODIST nokey a b
GEOHASH Sicily Palermo Catania nosuch
GEOHASH nokey a
GEOPOS Sicily Palermo Catania nosuch
GEOPOS nokey a
GEORADIUS Sicily 15 37 200 km
GEORADIUS Sicily 15 37 200 km WITHDIST WITHCOORD WITHHASH ASC
GEORADIUS Sicily 15 37 200 km WITHDIST DESC COUNT 1
GEORADIUS Sicily 15 37 200 km COUNT 1 ANY
GEORADIUS Sicily 15 37 200 km ANY
GEORADIUS Sicily 15 37 200 km COUNT 0
GEORADIUS Sicily 15 37 -1 km
GEORADIUS Sicily 15 37 x km
GEORADIUS Sicily 15 37 200 km STORE dst WITHDIST
GEORADIUS Sicily 15 37 200 km STORE dst
ZRANGE dst 0 -1 WITHSCORES
GEORADIUS Sicily 15 37 200 km STOREDIST dst
ZRANGE dst 0 -1 WITHSCORES
GEORADIUS_RO Sicily 15 37 200 km STORE dst
GEORADIUSBYMEMBER Sicily Palermo 300 km WITHDIST ASC
GEORADIUSBYMEMBER Sicily nosuch 300 km
GEORADIUSBYMEMBER nokey nosuch 300 km
GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km ASC WITHDIST
GEOSEARCH Sicily FROMMEMBER Palermo BYBOX 400 400 km DESC WITHCOORD
GEOSEARCH Sicily FROMMEMBER Palermo FROMLONLAT 1 1 BYRADIUS 1 km
GEOSEARCH Sicily BYRADIUS 1 km
GEOSEARCH Sicily FROMLONLAT 15 37
GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX -1 1 km
GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 1 km STORE x
GEOSEARCH nokey FROMLONLAT 15 37 BYRADIUS 1 km
GEOSEARCHSTORE dst Sicily FROMLONLAT 15 37 BYBOX 400 400 km ASC COUNT 2 STOREDIST
ZRANGE dst 0 -1 WITHSCORES
GEOSEARCHSTORE dst Sicily FROMLONLAT 15 37 BYBOX 400 400 km WITHDIST
GEOSEARCHSTORE dst nokey FROMLONLAT 15 37 BYBOX 400 400 km
EXISTS dst
SET str v
GEOADD str 1 1 x
GEORADIUS str 1 1 1 km
GEOPOS str a

ZADD z1 1 a 2 b 3 c
ZADD z2 10 b 20 c 30 d
SADD s1 a d e
ZUNION 2 z1 z2
ZUNION 2 z1 z2 WITHSCORES
ZUNION 3 z1 z2 s1 WEIGHTS 1 2 3 AGGREGATE MAX WITHSCORES
ZUNION 2 z1 z2 AGGREGATE MIN WITHSCORES
ZINTER 2 z1 z2 WITHSCORES
ZINTER 3 z1 z2 nokey
ZDIFF 2 z1 z2 WITHSCORES
ZDIFF 2 z1 s1
ZUNION 0 z1
ZUNION 3 z1 z2
ZUNION 2 z1 z2 WEIGHTS 1
ZUNION 2 z1 z2 WEIGHTS 1 x
ZUNION 2 z1 z2 AGGREGATE avg
ZDIFF 2 z1 z2 WEIGHTS 1 1
ZUNIONSTORE out 2 z1 z2 WEIGHTS 2 3
ZRANGE out 0 -1 WITHSCORES
ZINTERSTORE out 2 z1 z2 AGGREGATE SUM
ZRANGE out 0 -1 WITHSCORES
ZDIFFSTORE out 2 z1 z1
EXISTS out
ZINTERSTORE out 2 z1 z2 WITHSCORES
ZINTERCARD 2 z1 z2
ZINTERCARD 2 z1 z2 LIMIT 1
ZINTERCARD 2 z1 z2 LIMIT -1
ZINTERCARD 0 z1
SET str v
ZUNION 2 z1 str
ZRANGESTORE out z1 0 -1
ZRANGESTORE out z1 (1 +inf BYSCORE LIMIT 0 1
ZRANGE out 0 -1 WITHSCORES
ZRANGESTORE out z1 [c [a BYLEX REV
ZRANGESTORE out nokey 0 -1
EXISTS out
ZRANGESTORE out z1 0 -1 WITHSCORES
ZADD lex 0 a 0 b 0 c 0 d 0 e
ZREMRANGEBYLEX lex [b (d
ZRANGE lex 0 -1
ZREMRANGEBYLEX lex - +
EXISTS lex
ZREMRANGEBYLEX lex x y
ZMPOP 2 nokey z1 MIN
ZMPOP 2 nokey z2 MAX COUNT 10
ZMPOP 1 nokey MIN
ZMPOP 0 z1 MIN
ZMPOP 1 z1 BOGUS
ZMPOP 1 z1 MIN COUNT 0
ZMPOP 5 z1 MIN
BZPOPMIN nokey z1 0
BZPOPMAX z1 0
BZPOPMIN z1 -1
BZMPOP 0.01 1 nokey MIN
BZPOPMIN nokey 0.01
RPUSH l1 a b c d
LMPOP 2 nokey l1 LEFT
LMPOP 1 l1 RIGHT COUNT 2
LMPOP 1 l1 LEFT COUNT 9
LMPOP 1 l1 LEFT
LMPOP 1 l1 UP
LMPOP 0 l1 LEFT
BLMPOP 0.01 1 l1 LEFT
BLMPOP x 1 l1 LEFT
LMPOP 1 str LEFT
MULTI
BLMPOP 0 1 nokey LEFT
BZPOPMIN nokey 0
EXEC
"#;

/// Random geo searches (radius and box, from points and members, sorted, unsorted, with ANY and
/// COUNT, stored) and sorted-set algebra over random data give the same replies as
/// redis-server, order included.
#[test]
fn random_geo_and_zset_workloads_match_redis() {
    let Some(pair) = Pair::start() else {
        return;
    };
    let (mut theirs, mut ours) = pair.clients();
    let mut rng = Lcg(7);
    let s = |v: &str| v.to_owned();
    let mut cmds: Vec<Vec<String>> = vec![vec![s("FLUSHALL")]];
    let coord = |rng: &mut Lcg, span: f64, base: f64| {
        format!(
            "{:.6}",
            base + (rng.below(1_000_000) as f64 / 1_000_000.0 - 0.5) * span
        )
    };
    for i in 0..300 {
        let mut c = vec![s("GEOADD"), s("pts")];
        c.push(coord(&mut rng, 8.0, 13.0));
        c.push(coord(&mut rng, 6.0, 45.0));
        c.push(format!("m{i}"));
        cmds.push(c);
    }
    let units = ["m", "km", "mi", "ft"];
    for _ in 0..300 {
        let unit = s(units[rng.below(4) as usize]);
        let mut c = vec![s("GEOSEARCH"), s("pts")];
        if rng.below(2) == 0 {
            c.extend([s("FROMMEMBER"), format!("m{}", rng.below(300))]);
        } else {
            c.extend([
                s("FROMLONLAT"),
                coord(&mut rng, 8.0, 13.0),
                coord(&mut rng, 6.0, 45.0),
            ]);
        }
        let size = |rng: &mut Lcg| (1 + rng.below(400)).to_string();
        if rng.below(2) == 0 {
            c.extend([s("BYRADIUS"), size(&mut rng), unit]);
        } else {
            c.extend([s("BYBOX"), size(&mut rng), size(&mut rng), unit]);
        }
        match rng.below(4) {
            0 => c.push(s("ASC")),
            1 => c.push(s("DESC")),
            _ => {}
        }
        if rng.below(3) == 0 {
            c.extend([s("COUNT"), (1 + rng.below(10)).to_string()]);
            if rng.below(2) == 0 {
                c.push(s("ANY"));
            }
        }
        for opt in ["WITHDIST", "WITHCOORD", "WITHHASH"] {
            if rng.below(3) == 0 {
                c.push(s(opt));
            }
        }
        cmds.push(c);
        if rng.below(10) == 0 {
            cmds.push(vec![
                s("GEORADIUSBYMEMBER"),
                s("pts"),
                format!("m{}", rng.below(300)),
                (1 + rng.below(300)).to_string(),
                s("km"),
                s("STOREDIST"),
                s("near"),
            ]);
            cmds.push(vec![
                s("ZRANGE"),
                s("near"),
                s("0"),
                s("-1"),
                s("WITHSCORES"),
            ]);
        }
    }
    for k in 0..3 {
        for _ in 0..40 {
            cmds.push(vec![
                s("ZADD"),
                format!("z{k}"),
                (rng.below(20) as i64 - 10).to_string(),
                format!("e{}", rng.below(60)),
            ]);
        }
    }
    for _ in 0..100 {
        let op = ["ZUNION", "ZINTER", "ZDIFF"][rng.below(3) as usize];
        let n = 1 + rng.below(3);
        let mut c = vec![s(op), n.to_string()];
        for _ in 0..n {
            c.push(format!("z{}", rng.below(3)));
        }
        if op != "ZDIFF" && rng.below(2) == 0 {
            c.push(s("WEIGHTS"));
            for _ in 0..n {
                c.push((rng.below(7) as i64 - 3).to_string());
            }
        }
        if op != "ZDIFF" && rng.below(2) == 0 {
            c.extend([
                s("AGGREGATE"),
                s(["SUM", "MIN", "MAX"][rng.below(3) as usize]),
            ]);
        }
        c.push(s("WITHSCORES"));
        cmds.push(c);
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
