//! Geo commands over sorted sets of 52-bit geohash scores: GEOADD, GEODIST, GEOHASH, GEOPOS,
//! GEOSEARCH, GEOSEARCHSTORE, GEORADIUS[_RO], GEORADIUSBYMEMBER[_RO].

use super::common::typed;
use super::{Args, Cx, SYNTAX, WRONGTYPE};
use crate::engine::geohash::{self, Shape};
use crate::engine::{ScoreBound, Value, ZSet};
use crate::reply::Out;

/// A coordinate as Redis's addReplyHumanLongDouble writes it: 17 decimals, zeros trimmed.
fn coord(out: &mut Out, v: f64) {
    let mut text = format!("{v:.17}");
    if text.contains('.') {
        while text.ends_with('0') {
            text.pop();
        }
        if text.ends_with('.') {
            text.pop();
        }
    }
    if out.resp3 {
        out.buf.push(b',');
        out.buf.extend_from_slice(text.as_bytes());
        out.buf.extend_from_slice(b"\r\n");
    } else {
        out.bulk(text.as_bytes());
    }
}

/// A distance with 4 decimals, rounded as llrint does.
fn distance_reply(out: &mut Out, d: f64) {
    let scaled = (d * 10_000.0).round_ties_even() as i64;
    let sign = if scaled < 0 { "-" } else { "" };
    let abs = scaled.unsigned_abs();
    out.bulk(format!("{sign}{}.{:04}", abs / 10_000, abs % 10_000).as_bytes());
}

fn lonlat(cx: &mut Cx<'_, '_>, lon: &[u8], lat: &[u8]) -> Option<(f64, f64)> {
    let lon = super::float_arg(cx.out, lon)?;
    let lat = super::float_arg(cx.out, lat)?;
    if !(geohash::LONG_MIN..=geohash::LONG_MAX).contains(&lon)
        || !(geohash::LAT_MIN..=geohash::LAT_MAX).contains(&lat)
    {
        cx.out.error(&format!(
            "ERR invalid longitude,latitude pair {lon:.6},{lat:.6}"
        ));
        return None;
    }
    Some((lon, lat))
}

fn unit(out: &mut Out, arg: &[u8]) -> Option<f64> {
    let u = arg.to_ascii_lowercase();
    Some(match u.as_slice() {
        b"m" => 1.0,
        b"km" => 1000.0,
        b"ft" => 0.3048,
        b"mi" => 1609.34,
        _ => {
            out.error("ERR unsupported unit provided. please use M, KM, FT, MI");
            return None;
        }
    })
}

fn number(out: &mut Out, arg: &[u8], error: &str) -> Option<f64> {
    let v = crate::num::parse_f64(arg);
    if v.is_none() {
        out.error(error);
    }
    v
}

pub fn geoadd(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let (mut nx, mut xx, mut ch) = (false, false, false);
    let mut at = 2;
    while at < args.len() {
        if args.is(at, "nx") {
            nx = true;
        } else if args.is(at, "xx") {
            xx = true;
        } else if args.is(at, "ch") {
            ch = true;
        } else {
            break;
        }
        at += 1;
    }
    if !(args.len() - at).is_multiple_of(3) || (nx && xx) {
        cx.out.error(SYNTAX);
        return;
    }
    let mut points = Vec::with_capacity((args.len() - at) / 3);
    let mut i = at;
    while i + 2 < args.len() {
        let Some((lon, lat)) = lonlat(cx, args.get(i), args.get(i + 1)) else {
            return;
        };
        let score = geohash::score_of(lon, lat).unwrap_or(0.0);
        points.push((score, args.get(i + 2)));
        i += 3;
    }
    let db = cx.db();
    let key = args.get(1);
    let store = cx.store.get();
    let d = store.db(db);
    if xx && !matches!(d.zset(key), Ok(Some(_))) {
        match d.zset(key) {
            Err(_) => cx.out.error(WRONGTYPE),
            Ok(_) => cx.out.int(0),
        }
        return;
    }
    let Some(zset) = typed(cx.out, d.zset_or_new(key)) else {
        return;
    };
    let (mut added, mut changed) = (0, 0);
    for (score, member) in points {
        match zset.score(member) {
            Some(old) => {
                if !nx && old != score {
                    zset.insert(member, score);
                    changed += 1;
                }
            }
            None => {
                if !xx {
                    zset.insert(member, score);
                    added += 1;
                }
            }
        }
    }
    d.remove_if_empty(key);
    if added + changed > 0 {
        store.touch(db, key);
    }
    cx.out.int(if ch { added + changed } else { added });
}

/// The sorted set at `key` for reading: Ok(None) when missing, Err after WRONGTYPE.
fn zset_at<'d>(cx: &'d mut Cx<'_, '_>, key: &[u8]) -> Result<Option<&'d mut ZSet>, ()> {
    let db = cx.db();
    match cx.store.get().db(db).get(key).map(|e| &mut e.value) {
        None => Ok(None),
        Some(Value::ZSet(z)) => Ok(Some(z)),
        Some(_) => Err(()),
    }
}

pub fn geodist(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let mut to_meter = 1.0;
    if args.len() == 5 {
        let Some(u) = unit(cx.out, args.get(4)) else {
            return;
        };
        to_meter = u;
    } else if args.len() > 5 {
        cx.out.error(SYNTAX);
        return;
    }
    let out_is = |cx: &mut Cx<'_, '_>| cx.out.null();
    let scores = match zset_at(cx, args.get(1)) {
        Err(()) => {
            cx.out.error(WRONGTYPE);
            return;
        }
        Ok(None) => None,
        Ok(Some(z)) => Some((z.score(args.get(2)), z.score(args.get(3)))),
    };
    let Some((Some(a), Some(b))) = scores else {
        out_is(cx);
        return;
    };
    match (geohash::point_of(a), geohash::point_of(b)) {
        (Some((x1, y1)), Some((x2, y2))) => {
            distance_reply(cx.out, geohash::distance(x1, y1, x2, y2) / to_meter);
        }
        _ => cx.out.null(),
    }
}

fn member_scores(cx: &mut Cx<'_, '_>, args: &Args<'_>) -> Option<Vec<Option<f64>>> {
    match zset_at(cx, args.get(1)) {
        Err(()) => {
            cx.out.error(WRONGTYPE);
            None
        }
        Ok(z) => Some(
            args.from(2)
                .map(|m| z.as_ref().and_then(|z| z.score(m)))
                .collect(),
        ),
    }
}

pub fn geohash(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some(scores) = member_scores(cx, args) else {
        return;
    };
    cx.out.array(scores.len());
    for s in scores {
        match s.and_then(geohash::hash_string) {
            Some(h) => cx.out.bulk(h.as_bytes()),
            None => cx.out.null(),
        }
    }
}

pub fn geopos(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some(scores) = member_scores(cx, args) else {
        return;
    };
    cx.out.array(scores.len());
    for s in scores {
        match s.and_then(geohash::point_of) {
            Some((lon, lat)) => {
                cx.out.array(2);
                coord(cx.out, lon);
                coord(cx.out, lat);
            }
            None => cx.out.null_array(),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Flavor {
    Radius,
    RadiusByMember,
    Search,
    SearchStore,
}

struct Found {
    member: Vec<u8>,
    score: f64,
    dist: f64,
    lon: f64,
    lat: f64,
}

fn geo_search(cx: &mut Cx<'_, '_>, args: &Args<'_>, flavor: Flavor, read_only: bool) {
    let src_at = if flavor == Flavor::SearchStore { 2 } else { 1 };
    let src = args.get(src_at);
    let exists = match zset_at(cx, src) {
        Err(()) => {
            cx.out.error(WRONGTYPE);
            return;
        }
        Ok(z) => z.is_some(),
    };
    let mut center: Option<(f64, f64)> = None;
    let mut shape: Option<Shape> = None;
    let mut conversion = 1.0;
    let base = match flavor {
        Flavor::Radius => {
            let Some(c) = lonlat(cx, args.get(2), args.get(3)) else {
                return;
            };
            center = Some(c);
            let Some(r) = number(cx.out, args.get(4), "ERR need numeric radius") else {
                return;
            };
            if r < 0.0 {
                cx.out.error("ERR radius cannot be negative");
                return;
            }
            let Some(u) = unit(cx.out, args.get(5)) else {
                return;
            };
            conversion = u;
            shape = Some(Shape::Radius(r * u));
            6
        }
        Flavor::RadiusByMember => {
            if exists {
                let score = zset_at(cx, src)
                    .ok()
                    .flatten()
                    .and_then(|z| z.score(args.get(2)));
                let Some(c) = score.and_then(geohash::point_of) else {
                    cx.out.error("ERR could not decode requested zset member");
                    return;
                };
                center = Some(c);
                let Some(r) = number(cx.out, args.get(3), "ERR need numeric radius") else {
                    return;
                };
                if r < 0.0 {
                    cx.out.error("ERR radius cannot be negative");
                    return;
                }
                let Some(u) = unit(cx.out, args.get(4)) else {
                    return;
                };
                conversion = u;
                shape = Some(Shape::Radius(r * u));
            }
            5
        }
        Flavor::Search => 2,
        Flavor::SearchStore => 3,
    };
    let is_search = matches!(flavor, Flavor::Search | Flavor::SearchStore);
    let (mut withdist, mut withhash, mut withcoord, mut any) = (false, false, false, false);
    let mut sort: Option<bool> = None; // Some(desc)
    let mut count: i64 = 0;
    let mut store: Option<&[u8]> = if flavor == Flavor::SearchStore {
        Some(args.get(1))
    } else {
        None
    };
    let mut storedist = false;
    let (mut frommember, mut fromloc, mut byradius, mut bybox) = (false, false, false, false);
    let remaining = args.len().saturating_sub(base);
    let mut i = 0;
    while i < remaining {
        let at = base + i;
        let has = |n: usize| i + n < remaining;
        if args.is(at, "withdist") {
            withdist = true;
        } else if args.is(at, "withhash") {
            withhash = true;
        } else if args.is(at, "withcoord") {
            withcoord = true;
        } else if args.is(at, "any") {
            any = true;
        } else if args.is(at, "asc") {
            sort = Some(false);
        } else if args.is(at, "desc") {
            sort = Some(true);
        } else if args.is(at, "count") && has(1) {
            let Some(n) = super::int_arg(cx.out, args.get(at + 1)) else {
                return;
            };
            if n <= 0 {
                cx.out.error("ERR COUNT must be > 0");
                return;
            }
            count = n;
            i += 1;
        } else if (args.is(at, "store") || args.is(at, "storedist"))
            && has(1)
            && !read_only
            && !is_search
        {
            store = Some(args.get(at + 1));
            storedist = args.is(at, "storedist");
            i += 1;
        } else if args.is(at, "storedist") && flavor == Flavor::SearchStore {
            storedist = true;
        } else if args.is(at, "frommember") && has(1) && is_search && !fromloc {
            frommember = true;
            if exists {
                let score = zset_at(cx, src)
                    .ok()
                    .flatten()
                    .and_then(|z| z.score(args.get(at + 1)));
                let Some(c) = score.and_then(geohash::point_of) else {
                    cx.out.error("ERR could not decode requested zset member");
                    return;
                };
                center = Some(c);
            }
            i += 1;
        } else if args.is(at, "fromlonlat") && has(2) && is_search && !frommember {
            let Some(c) = lonlat(cx, args.get(at + 1), args.get(at + 2)) else {
                return;
            };
            center = Some(c);
            fromloc = true;
            i += 2;
        } else if args.is(at, "byradius") && has(2) && is_search && !bybox {
            let Some(r) = number(cx.out, args.get(at + 1), "ERR need numeric radius") else {
                return;
            };
            if r < 0.0 {
                cx.out.error("ERR radius cannot be negative");
                return;
            }
            let Some(u) = unit(cx.out, args.get(at + 2)) else {
                return;
            };
            conversion = u;
            shape = Some(Shape::Radius(r * u));
            byradius = true;
            i += 2;
        } else if args.is(at, "bybox") && has(3) && is_search && !byradius {
            let Some(w) = number(cx.out, args.get(at + 1), "ERR need numeric width") else {
                return;
            };
            let Some(h) = number(cx.out, args.get(at + 2), "ERR need numeric height") else {
                return;
            };
            if w < 0.0 || h < 0.0 {
                cx.out.error("ERR height or width cannot be negative");
                return;
            }
            let Some(u) = unit(cx.out, args.get(at + 3)) else {
                return;
            };
            conversion = u;
            shape = Some(Shape::Box(w * u, h * u));
            bybox = true;
            i += 3;
        } else {
            cx.out.error(SYNTAX);
            return;
        }
        i += 1;
    }
    if store.is_some() && (withdist || withhash || withcoord) {
        cx.out.error(if flavor == Flavor::SearchStore {
            "ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
        } else {
            "ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
        });
        return;
    }
    let name = String::from_utf8_lossy(args.get(0)).into_owned();
    if is_search && !(frommember || fromloc) {
        cx.out.error(&format!(
            "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for {name}"
        ));
        return;
    }
    if is_search && !(byradius || bybox) {
        cx.out.error(&format!(
            "ERR exactly one of BYRADIUS and BYBOX can be specified for {name}"
        ));
        return;
    }
    if any && count == 0 {
        cx.out.error("ERR the ANY argument requires COUNT argument");
        return;
    }
    let db = cx.db();
    let (Some(center), Some(shape), true) = (center, shape, exists) else {
        // The source does not exist.
        match store {
            Some(dest) => {
                let st = cx.store.get();
                if st.db(db).remove(dest).is_some() {
                    st.touch(db, dest);
                }
                cx.out.int(0);
            }
            None => cx.out.array(0),
        }
        return;
    };
    if count != 0 && sort.is_none() && !any {
        sort = Some(false);
    }
    let limit = if any { count as usize } else { 0 };
    let mut found: Vec<Found> = Vec::new();
    if let Ok(Some(zset)) = zset_at(cx, src) {
        'ranges: for (min, max) in geohash::search_ranges(center, shape) {
            if limit != 0 && found.len() >= limit {
                break;
            }
            let lo = ScoreBound {
                value: min,
                exclusive: false,
            };
            let hi = ScoreBound {
                value: max,
                exclusive: true,
            };
            for (member, score) in zset.range_by_score(lo, hi, false, 0, -1) {
                let Some(point) = geohash::point_of(score) else {
                    continue;
                };
                if let Some(dist) = geohash::within(center, shape, point) {
                    found.push(Found {
                        member: member.to_vec(),
                        score,
                        dist,
                        lon: point.0,
                        lat: point.1,
                    });
                }
                if limit != 0 && found.len() >= limit {
                    break 'ranges;
                }
            }
        }
    }
    if let Some(desc) = sort {
        found.sort_by(|a, b| {
            let o = a
                .dist
                .partial_cmp(&b.dist)
                .unwrap_or(std::cmp::Ordering::Equal);
            if desc { o.reverse() } else { o }
        });
    }
    let returned = if count == 0 {
        found.len()
    } else {
        found.len().min(count as usize)
    };
    found.truncate(returned);
    match store {
        None => {
            let options = usize::from(withdist) + usize::from(withhash) + usize::from(withcoord);
            let out = &mut *cx.out;
            out.array(found.len());
            for f in &found {
                if options > 0 {
                    out.array(options + 1);
                }
                out.bulk(&f.member);
                if withdist {
                    distance_reply(out, f.dist / conversion);
                }
                if withhash {
                    out.int(f.score as i64);
                }
                if withcoord {
                    out.array(2);
                    coord(out, f.lon);
                    coord(out, f.lat);
                }
            }
        }
        Some(dest) => {
            let st = cx.store.get();
            let d = st.db(db);
            if found.is_empty() {
                if d.remove(dest).is_some() {
                    st.touch(db, dest);
                }
            } else {
                let mut z = ZSet::default();
                for f in &found {
                    z.insert(
                        &f.member,
                        if storedist {
                            f.dist / conversion
                        } else {
                            f.score
                        },
                    );
                }
                d.set(dest, Value::ZSet(Box::new(z)));
                st.touch(db, dest);
            }
            cx.out.int(found.len() as i64);
        }
    }
}

pub fn georadius(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    geo_search(cx, args, Flavor::Radius, false);
}

pub fn georadius_ro(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    geo_search(cx, args, Flavor::Radius, true);
}

pub fn georadiusbymember(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    geo_search(cx, args, Flavor::RadiusByMember, false);
}

pub fn georadiusbymember_ro(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    geo_search(cx, args, Flavor::RadiusByMember, true);
}

pub fn geosearch(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    geo_search(cx, args, Flavor::Search, true);
}

pub fn geosearchstore(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    geo_search(cx, args, Flavor::SearchStore, false);
}
