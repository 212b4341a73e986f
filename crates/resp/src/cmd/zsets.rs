//! Sorted-set commands: ZADD/ZINCRBY, scores, ranks, the ZRANGE family, pops and removals, ZSCAN.

use super::common::{
    empty_or_null, index_pair, members_reply, per_member, pop_command, random_count, random_reply,
    remove_each, typed, value_or,
};
use super::keys::{scan_opts, scan_reply, small_scan};
use super::lists::clamp_range;
use super::{Args, Cx, SYNTAX, WRONGTYPE, float_arg, int_arg};
use crate::engine::{Db, LexBound, ScoreBound, WrongType, ZSet};
use crate::reply::Out;

fn parse_score_bound(arg: &[u8]) -> Option<ScoreBound> {
    let (exclusive, text) = match arg.split_first() {
        Some((b'(', rest)) => (true, rest),
        _ => (false, arg),
    };
    crate::num::parse_f64(text).map(|value| ScoreBound { value, exclusive })
}

fn parse_lex_bound(arg: &[u8]) -> Option<LexBound<'_>> {
    match arg.split_first() {
        Some((b'-', [])) => Some(LexBound::NegInf),
        Some((b'+', [])) => Some(LexBound::PosInf),
        Some((b'[', rest)) => Some(LexBound::Inclusive(rest)),
        Some((b'(', rest)) => Some(LexBound::Exclusive(rest)),
        _ => None,
    }
}

fn score_bounds(cx: &mut Cx<'_, '_>, min: &[u8], max: &[u8]) -> Option<(ScoreBound, ScoreBound)> {
    match (parse_score_bound(min), parse_score_bound(max)) {
        (Some(a), Some(b)) => Some((a, b)),
        _ => {
            cx.out.error("ERR min or max is not a float");
            None
        }
    }
}

fn lex_bounds<'a>(
    cx: &mut Cx<'_, '_>,
    min: &'a [u8],
    max: &'a [u8],
) -> Option<(LexBound<'a>, LexBound<'a>)> {
    match (parse_lex_bound(min), parse_lex_bound(max)) {
        (Some(a), Some(b)) => Some((a, b)),
        _ => {
            cx.out.error("ERR min or max not valid string range item");
            None
        }
    }
}

pub fn zadd(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let (mut nx, mut xx, mut ch, mut incr, mut gt, mut lt) =
        (false, false, false, false, false, false);
    let mut i = 2;
    while i < args.len() {
        let lower = args.get(i).to_ascii_lowercase();
        match lower.as_slice() {
            b"nx" => nx = true,
            b"xx" => xx = true,
            b"ch" => ch = true,
            b"incr" => incr = true,
            b"gt" => gt = true,
            b"lt" => lt = true,
            _ => break,
        }
        i += 1;
    }
    let elements = args.len() - i;
    if elements == 0 || !elements.is_multiple_of(2) {
        cx.out.error(SYNTAX);
        return;
    }
    if nx && xx {
        cx.out
            .error("ERR XX and NX options at the same time are not compatible");
        return;
    }
    if (nx && (gt || lt)) || (gt && lt) {
        cx.out
            .error("ERR GT, LT, and/or NX options at the same time are not compatible");
        return;
    }
    if incr && elements > 2 {
        cx.out
            .error("ERR INCR option supports a single increment-element pair");
        return;
    }
    let mut pairs = Vec::with_capacity(elements / 2);
    let mut j = i;
    while j + 1 < args.len() {
        let Some(score) = float_arg(cx.out, args.get(j)) else {
            return;
        };
        pairs.push((score, args.get(j + 1)));
        j += 2;
    }
    let db = cx.db();
    let key = args.get(1);
    let store = cx.store.get();
    let d = store.db(db);
    let zset = match d.zset(key) {
        Err(WrongType) => {
            cx.out.error(WRONGTYPE);
            return;
        }
        Ok(None) if xx => {
            if incr {
                cx.out.null()
            } else {
                cx.out.int(0)
            }
            return;
        }
        Ok(_) => match d.zset_or_new(key) {
            Ok(z) => z,
            Err(WrongType) => return,
        },
    };
    let (mut added, mut changed) = (0, 0);
    let mut incr_result: Option<f64> = None;
    for &(score, member) in &pairs {
        match zset.score(member) {
            Some(current) => {
                if nx {
                    continue;
                }
                let new = if incr { current + score } else { score };
                if new.is_nan() {
                    cx.out.error("ERR resulting score is not a number (NaN)");
                    d.remove_if_empty(key);
                    return;
                }
                if (gt && new <= current) || (lt && new >= current) {
                    continue;
                }
                incr_result = Some(new);
                if new != current {
                    zset.insert(member, new);
                    changed += 1;
                }
            }
            None => {
                if xx {
                    continue;
                }
                zset.insert(member, score);
                incr_result = Some(score);
                added += 1;
            }
        }
    }
    d.remove_if_empty(key);
    if added + changed > 0 {
        store.touch_members(db, key, pairs.iter().map(|&(_, m)| m));
    }
    if incr {
        match incr_result {
            Some(s) => cx.out.double(s),
            None => cx.out.null(),
        }
    } else {
        cx.out.int(if ch { added + changed } else { added });
    }
}

pub fn zincrby(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some(delta) = float_arg(cx.out, args.get(2)) else {
        return;
    };
    let db = cx.db();
    let key = args.get(1);
    let store = cx.store.get();
    let Some(zset) = typed(cx.out, store.db(db).zset_or_new(key)) else {
        return;
    };
    let member = args.get(3);
    let new = zset.score(member).unwrap_or(0.0) + delta;
    if new.is_nan() {
        cx.out.error("ERR resulting score is not a number (NaN)");
        store.db(db).remove_if_empty(key);
        return;
    }
    zset.insert(member, new);
    store.touch_members(db, key, [member]);
    cx.out.double(new);
}

pub fn zrem(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    remove_each(cx, args, Db::zset, |zset, m| zset.remove(m).is_some());
}

pub fn zscore(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let zset = value_or!(cx, zset, args.get(1), cx.out.null());
    match zset.score(args.get(2)) {
        Some(s) => cx.out.double(s),
        None => cx.out.null(),
    }
}

pub fn zmscore(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let db = cx.db();
    let Some(zset) = typed(cx.out, cx.store.get().db(db).zset(args.get(1))) else {
        return;
    };
    let value = |out: &mut Out, v: Option<f64>| match v {
        Some(s) => out.double(s),
        None => out.null(),
    };
    per_member(cx.out, args, zset.as_deref(), |z, m| z.score(m), value);
}

pub fn zcard(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let zset = value_or!(cx, zset, args.get(1), cx.out.int(0));
    let n = zset.len();
    cx.out.int(n as i64);
}

pub fn zcount(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some((min, max)) = score_bounds(cx, args.get(2), args.get(3)) else {
        return;
    };
    let zset = value_or!(cx, zset, args.get(1), cx.out.int(0));
    let n = zset.count_by_score(min, max);
    cx.out.int(n as i64);
}

pub fn zlexcount(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some((min, max)) = lex_bounds(cx, args.get(2), args.get(3)) else {
        return;
    };
    let zset = value_or!(cx, zset, args.get(1), cx.out.int(0));
    let n = zset.range_by_lex(&min, &max, false, 0, -1).len();
    cx.out.int(n as i64);
}

/// What a ZRANGE selects, parsed before the lookup so argument errors come first.
enum Span<'a> {
    Rank(i64, i64),
    Score(ScoreBound, ScoreBound),
    Lex(LexBound<'a>, LexBound<'a>),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum By {
    Rank,
    Score,
    Lex,
}

/// Writes members (and scores) as ZRANGE replies them in the client's protocol.
fn range_reply(out: &mut Out, items: &[(&[u8], f64)], with_scores: bool) {
    members_reply(
        out,
        items.len(),
        items.iter().copied(),
        with_scores,
        Out::double,
    );
}

/// The whole ZRANGE family. `fixed` is Some for the legacy commands whose kind and direction
/// are given by the name; ZRANGE itself reads BYSCORE/BYLEX/REV from the options.
fn zrange_generic(
    cx: &mut Cx<'_, '_>,
    args: &Args<'_>,
    fixed: Option<(By, bool)>,
    store: Option<&[u8]>,
) {
    let (mut by, mut rev) = fixed.unwrap_or((By::Rank, false));
    let mut with_scores = false;
    let mut limit: Option<(i64, i64)> = None;
    let mut i = 4;
    while i < args.len() {
        let lower = args.get(i).to_ascii_lowercase();
        match lower.as_slice() {
            b"withscores" if store.is_none() && fixed.is_none_or(|(b, _)| b != By::Lex) => {
                with_scores = true
            }
            b"limit" if i + 2 < args.len() && fixed.is_none_or(|(b, _)| b != By::Rank) => {
                let Some(offset) = int_arg(cx.out, args.get(i + 1)) else {
                    return;
                };
                let Some(count) = int_arg(cx.out, args.get(i + 2)) else {
                    return;
                };
                limit = Some((offset, count));
                i += 2;
            }
            b"byscore" if fixed.is_none() => by = By::Score,
            b"bylex" if fixed.is_none() => by = By::Lex,
            b"rev" if fixed.is_none() => rev = true,
            _ => {
                cx.out.error(SYNTAX);
                return;
            }
        }
        i += 1;
    }
    if limit.is_some() && by == By::Rank {
        cx.out.error(
            "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
        );
        return;
    }
    if with_scores && by == By::Lex {
        cx.out
            .error("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
        return;
    }
    let (mut lo, mut hi) = (args.get(2), args.get(3));
    if rev && by != By::Rank {
        std::mem::swap(&mut lo, &mut hi);
    }
    let span = match by {
        By::Rank => {
            let Some(start) = int_arg(cx.out, lo) else {
                return;
            };
            let Some(stop) = int_arg(cx.out, hi) else {
                return;
            };
            Span::Rank(start, stop)
        }
        By::Score => match score_bounds(cx, lo, hi) {
            Some((min, max)) => Span::Score(min, max),
            None => return,
        },
        By::Lex => match lex_bounds(cx, lo, hi) {
            Some((min, max)) => Span::Lex(min, max),
            None => return,
        },
    };
    let zset = value_or!(cx, zset, args.get(1), {
        match store {
            Some(dest) => store_range(cx, dest, ZSet::default()),
            None => cx.out.array(0),
        }
    });
    let (offset, count) = limit.unwrap_or((0, -1));
    // A negative LIMIT offset selects nothing, as in Redis.
    let items = match (span, usize::try_from(offset)) {
        (Span::Rank(start, stop), _) => match clamp_range(start, stop, zset.len()) {
            Some((a, b)) => zset.range_by_rank(a, b, rev),
            None => Vec::new(),
        },
        (Span::Score(min, max), Ok(offset)) => zset.range_by_score(min, max, rev, offset, count),
        (Span::Lex(min, max), Ok(offset)) => zset.range_by_lex(&min, &max, rev, offset, count),
        (_, Err(_)) => Vec::new(),
    };
    match store {
        Some(dest) => {
            let mut stored = ZSet::default();
            for (member, score) in &items {
                stored.insert(member, *score);
            }
            drop(items);
            store_range(cx, dest, stored);
        }
        None => range_reply(cx.out, &items, with_scores),
    }
}

/// ZRANGESTORE's result: `dest` holds `zset` (or is deleted when it is empty); replies its size.
fn store_range(cx: &mut Cx<'_, '_>, dest: &[u8], zset: ZSet) {
    let db = cx.db();
    let store = cx.store.get();
    let d = store.db(db);
    let len = zset.len();
    if len > 0 {
        d.set(dest, crate::engine::Value::ZSet(Box::new(zset)));
        store.touch(db, dest);
    } else if d.remove(dest).is_some() {
        store.touch(db, dest);
    }
    cx.out.int(len as i64);
}

pub fn zrangestore(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let mut spans = args.spans.to_vec();
    spans.remove(1);
    let source = Args::new(args.buf, &spans);
    zrange_generic(cx, &source, None, Some(args.get(1)));
}

pub fn zrange(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    zrange_generic(cx, args, None, None);
}

pub fn zrevrange(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    zrange_generic(cx, args, Some((By::Rank, true)), None);
}

pub fn zrangebyscore(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    zrange_generic(cx, args, Some((By::Score, false)), None);
}

pub fn zrevrangebyscore(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    zrange_generic(cx, args, Some((By::Score, true)), None);
}

pub fn zrangebylex(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    zrange_generic(cx, args, Some((By::Lex, false)), None);
}

pub fn zrevrangebylex(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    zrange_generic(cx, args, Some((By::Lex, true)), None);
}

fn rank(cx: &mut Cx<'_, '_>, args: &Args<'_>, rev: bool) {
    let zset = value_or!(cx, zset, args.get(1), cx.out.null());
    match zset.rank(args.get(2), rev) {
        Some(r) => cx.out.int(r as i64),
        None => cx.out.null(),
    }
}

pub fn zrank(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    rank(cx, args, false);
}

pub fn zrevrank(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    rank(cx, args, true);
}

fn zpop(cx: &mut Cx<'_, '_>, args: &Args<'_>, max: bool) {
    let missing = |out: &mut Out, _| out.array(0);
    let mark =
        |store: &mut crate::engine::Store, db: usize, key: &[u8], _: usize| store.touch(db, key);
    pop_command(
        cx,
        args,
        SYNTAX,
        Db::zset,
        missing,
        mark,
        |out, zset, count| {
            let n = count.unwrap_or(1).min(zset.len());
            let nested = out.resp3 && count.is_some();
            out.array(if nested { n } else { n * 2 });
            for _ in 0..n {
                if let Some((m, s)) = zset.pop(max) {
                    if nested {
                        out.array(2);
                    }
                    out.bulk(&m);
                    out.double(s);
                }
            }
            n
        },
    );
}

pub fn zpopmin(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    zpop(cx, args, false);
}

pub fn zpopmax(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    zpop(cx, args, true);
}

/// Removes the given members and replies how many went.
fn remove_members(cx: &mut Cx<'_, '_>, key: &[u8], members: Vec<Vec<u8>>) {
    let db = cx.db();
    let store = cx.store.get();
    let d = store.db(db);
    if let Ok(Some(zset)) = d.zset(key) {
        for m in &members {
            zset.remove(m);
        }
    }
    d.remove_if_empty(key);
    if !members.is_empty() {
        store.touch_members(db, key, members.iter().map(Vec::as_slice));
    }
    cx.out.int(members.len() as i64);
}

pub fn zremrangebyrank(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some((start, stop)) = index_pair(cx.out, args) else {
        return;
    };
    let zset = value_or!(cx, zset, args.get(1), cx.out.int(0));
    let members = match clamp_range(start, stop, zset.len()) {
        Some((a, b)) => zset
            .range_by_rank(a, b, false)
            .into_iter()
            .map(|(m, _)| m.to_vec())
            .collect(),
        None => Vec::new(),
    };
    remove_members(cx, args.get(1), members);
}

pub fn zremrangebyscore(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some((min, max)) = score_bounds(cx, args.get(2), args.get(3)) else {
        return;
    };
    let zset = value_or!(cx, zset, args.get(1), cx.out.int(0));
    let members = zset
        .range_by_score(min, max, false, 0, -1)
        .into_iter()
        .map(|(m, _)| m.to_vec())
        .collect();
    remove_members(cx, args.get(1), members);
}

pub fn zscan(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some((cursor, opts)) = scan_opts(cx, args, 2, false) else {
        return;
    };
    let zset = value_or!(cx, zset, args.get(1), scan_reply(cx.out, 0, &[]));
    let mut items: Vec<Vec<u8>> = Vec::new();
    let small = cursor == 0 && zset.len() <= 128;
    let mut push = |m: &[u8], s: f64| {
        if opts
            .pattern
            .is_none_or(|p| crate::glob::matches(p, m, false))
        {
            items.push(m.to_vec());
            let mut text = Vec::new();
            crate::num::push_g17(&mut text, s);
            items.push(text);
        }
    };
    let next = if small {
        // Small sorted sets come back whole and in score order, as from Redis's listpack.
        zset.iter().for_each(|(m, s)| push(m, s));
        0
    } else {
        small_scan(zset.len(), cursor, opts.count, |i| {
            if let Some((m, s)) = zset.get_index(i) {
                push(m, s);
            }
        })
    };
    let refs: Vec<&[u8]> = items.iter().map(|v| &v[..]).collect();
    scan_reply(cx.out, next, &refs);
}

pub fn zrandmember(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some((count, with_scores)) = random_count(cx.out, args, "withscores") else {
        return;
    };
    let counted = count.is_some();
    let zset = value_or!(cx, zset, args.get(1), empty_or_null(cx.out, counted));
    let entry = |i| zset.get_index(i);
    random_reply(cx.out, count, zset.len(), with_scores, entry, Out::double);
}
