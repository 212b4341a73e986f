//! Sorted-set commands over several keys: ZUNION/ZINTER/ZDIFF (and their STORE forms),
//! ZINTERCARD, ZMPOP, and the blocking BZPOPMIN, BZPOPMAX and BZMPOP; plus ZREMRANGEBYLEX.

use tokio::sync::oneshot;

use super::common::{members_reply, value_or};
use super::{Args, Cx, SYNTAX, WRONGTYPE};
use crate::engine::{BlockOp, Db, Key, Value, ZSet};
use crate::reply::Out;
use crate::session::{Action, BlockKind, BlockWait};

#[derive(Clone, Copy, PartialEq, Eq)]
enum SetOp {
    Union,
    Inter,
    Diff,
}

#[derive(Clone, Copy)]
enum Aggregate {
    Sum,
    Min,
    Max,
}

fn aggregate(target: &mut f64, value: f64, how: Aggregate) {
    match how {
        Aggregate::Sum => {
            *target += value;
            if target.is_nan() {
                *target = 0.0;
            }
        }
        Aggregate::Min => *target = target.min(value),
        Aggregate::Max => *target = target.max(value),
    }
}

/// The members and scores of a sorted set or set (score 1) at `key`; None when missing.
fn source(d: &mut Db, key: &[u8]) -> Result<Option<Vec<(Key, f64)>>, ()> {
    match d.get(key).map(|e| &e.value) {
        None => Ok(None),
        Some(Value::ZSet(z)) => Ok(Some(z.iter().map(|(m, s)| (Key::from(m), s)).collect())),
        Some(Value::Set(s)) => Ok(Some(s.iter().map(|m| (m.clone(), 1.0)).collect())),
        Some(_) => Err(()),
    }
}

/// Parses a `numkeys` argument the way ZUNION & co. do.
fn numkeys(cx: &mut Cx<'_, '_>, args: &Args<'_>, at: usize, name: &str) -> Option<usize> {
    let n = super::int_arg(cx.out, args.get(at))?;
    if n < 1 {
        cx.out.error(&format!(
            "ERR at least 1 input key is needed for '{name}' command"
        ));
        return None;
    }
    let n = usize::try_from(n).unwrap_or(usize::MAX);
    if n > args.len() - at - 1 {
        cx.out.error(SYNTAX);
        return None;
    }
    Some(n)
}

/// ZUNION/ZINTER/ZDIFF[STORE] and ZINTERCARD. `dest` is the STORE key; `card` is ZINTERCARD.
fn setop_generic(
    cx: &mut Cx<'_, '_>,
    args: &Args<'_>,
    op: SetOp,
    store: bool,
    card: bool,
    name: &str,
) {
    let at = if store { 2 } else { 1 };
    let Some(n) = numkeys(cx, args, at, name) else {
        return;
    };
    let keys: Vec<&[u8]> = args.from(at + 1).take(n).collect();
    let db = cx.db();
    let mut sources: Vec<Option<Vec<(Key, f64)>>> = Vec::with_capacity(n);
    {
        let d = cx.store.get().db(db);
        for key in &keys {
            match source(d, key) {
                Ok(s) => sources.push(s),
                Err(()) => {
                    cx.out.error(WRONGTYPE);
                    return;
                }
            }
        }
    }
    let mut weights = vec![1.0f64; n];
    let mut how = Aggregate::Sum;
    let mut with_scores = false;
    let mut limit = 0usize;
    let mut j = at + 1 + n;
    while j < args.len() {
        let remaining = args.len() - j;
        if op != SetOp::Diff && !card && remaining > n && args.is(j, "weights") {
            for (k, w) in weights.iter_mut().enumerate() {
                match crate::num::parse_f64(args.get(j + 1 + k)) {
                    Some(v) => *w = v,
                    None => {
                        cx.out.error("ERR weight value is not a float");
                        return;
                    }
                }
            }
            j += 1 + n;
        } else if op != SetOp::Diff && !card && remaining >= 2 && args.is(j, "aggregate") {
            how = match args.get(j + 1).to_ascii_lowercase().as_slice() {
                b"sum" => Aggregate::Sum,
                b"min" => Aggregate::Min,
                b"max" => Aggregate::Max,
                _ => {
                    cx.out.error(SYNTAX);
                    return;
                }
            };
            j += 2;
        } else if !store && !card && args.is(j, "withscores") {
            with_scores = true;
            j += 1;
        } else if card && remaining >= 2 && args.is(j, "limit") {
            match crate::num::parse_i64(args.get(j + 1)) {
                Some(l) if l >= 0 => limit = usize::try_from(l).unwrap_or(usize::MAX),
                _ => {
                    cx.out.error("ERR LIMIT can't be negative");
                    return;
                }
            }
            j += 2;
        } else {
            cx.out.error(SYNTAX);
            return;
        }
    }
    let result = compute(&sources, &weights, how, op, card, limit);
    match result {
        Computed::Card(c) => cx.out.int(c as i64),
        Computed::Set(z) => {
            if store {
                let dest = args.get(1);
                let len = z.len();
                let store = cx.store.get();
                let d = store.db(db);
                if len > 0 {
                    d.set(dest, Value::ZSet(Box::new(z)));
                    store.touch(db, dest);
                } else if d.remove(dest).is_some() {
                    store.touch(db, dest);
                }
                cx.out.int(len as i64);
            } else {
                members_reply(cx.out, z.len(), z.iter(), with_scores, Out::double);
            }
        }
    }
}

enum Computed {
    Card(usize),
    Set(ZSet),
}

fn compute(
    sources: &[Option<Vec<(Key, f64)>>],
    weights: &[f64],
    how: Aggregate,
    op: SetOp,
    card: bool,
    limit: usize,
) -> Computed {
    let weighted = |s: f64, w: f64| {
        let v = s * w;
        if v.is_nan() { 0.0 } else { v }
    };
    let mut out = ZSet::default();
    match op {
        SetOp::Union => {
            let mut acc: indexmap::IndexMap<Key, f64, crate::engine::RandomState> =
                Default::default();
            for (src, w) in sources.iter().zip(weights) {
                for (m, s) in src.iter().flatten() {
                    let v = weighted(*s, *w);
                    match acc.get_mut(m) {
                        Some(t) => aggregate(t, v, how),
                        None => {
                            acc.insert(m.clone(), v);
                        }
                    }
                }
            }
            for (m, s) in acc {
                out.insert(&m, s);
            }
        }
        SetOp::Inter => {
            // Walk the smallest input, look the others up.
            let mut order: Vec<usize> = (0..sources.len()).collect();
            order.sort_by_key(|&i| sources[i].as_ref().map_or(0, Vec::len));
            let lookups: Vec<Option<std::collections::HashMap<&[u8], f64>>> = sources
                .iter()
                .map(|s| {
                    s.as_ref()
                        .map(|v| v.iter().map(|(m, s)| (&m[..], *s)).collect())
                })
                .collect();
            let first = order[0];
            let mut count = 0usize;
            for (m, s) in sources[first].iter().flatten() {
                let mut score = weighted(*s, weights[first]);
                let mut all = true;
                for &i in &order[1..] {
                    match lookups[i].as_ref().and_then(|l| l.get(&m[..])) {
                        Some(v) => aggregate(&mut score, v * weights[i], how),
                        None => {
                            all = false;
                            break;
                        }
                    }
                }
                if !all {
                    continue;
                }
                if card {
                    count += 1;
                    if limit != 0 && count >= limit {
                        break;
                    }
                } else {
                    out.insert(m, score);
                }
            }
            if card {
                return Computed::Card(count);
            }
        }
        SetOp::Diff => {
            let others: std::collections::HashSet<&[u8]> = sources[1..]
                .iter()
                .flatten()
                .flat_map(|v| v.iter().map(|(m, _)| &m[..]))
                .collect();
            for (m, s) in sources[0].iter().flatten() {
                if !others.contains(&m[..]) {
                    out.insert(m, *s);
                }
            }
        }
    }
    Computed::Set(out)
}

pub fn zunion(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    setop_generic(cx, args, SetOp::Union, false, false, "zunion");
}

pub fn zinter(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    setop_generic(cx, args, SetOp::Inter, false, false, "zinter");
}

pub fn zdiff(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    setop_generic(cx, args, SetOp::Diff, false, false, "zdiff");
}

pub fn zunionstore(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    setop_generic(cx, args, SetOp::Union, true, false, "zunionstore");
}

pub fn zinterstore(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    setop_generic(cx, args, SetOp::Inter, true, false, "zinterstore");
}

pub fn zdiffstore(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    setop_generic(cx, args, SetOp::Diff, true, false, "zdiffstore");
}

pub fn zintercard(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    setop_generic(cx, args, SetOp::Inter, false, true, "zintercard");
}

pub fn zremrangebylex(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let parse = |arg: &[u8]| -> Option<(bool, Vec<u8>, bool)> {
        match arg.split_first() {
            Some((b'-', [])) => Some((false, Vec::new(), true)),
            Some((b'+', [])) => Some((true, Vec::new(), true)),
            Some((b'[', rest)) => Some((false, rest.to_vec(), false)),
            Some((b'(', rest)) => Some((true, rest.to_vec(), false)),
            _ => None,
        }
    };
    let (Some(min), Some(max)) = (parse(args.get(2)), parse(args.get(3))) else {
        cx.out.error("ERR min or max not valid string range item");
        return;
    };
    let key = args.get(1);
    let zset = value_or!(cx, zset, key, cx.out.int(0));
    let in_range = |m: &[u8]| {
        let above = match &min {
            (false, _, true) => true,
            (true, _, true) => false,
            (false, v, false) => m >= &v[..],
            (true, v, false) => m > &v[..],
        };
        let below = match &max {
            (false, _, true) => false,
            (true, _, true) => true,
            (false, v, false) => m <= &v[..],
            (true, v, false) => m < &v[..],
        };
        above && below
    };
    let members: Vec<Vec<u8>> = zset
        .iter()
        .filter(|(m, _)| in_range(m))
        .map(|(m, _)| m.to_vec())
        .collect();
    for m in &members {
        zset.remove(m);
    }
    let db = cx.db();
    let store = cx.store.get();
    store.db(db).remove_if_empty(key);
    if !members.is_empty() {
        store.touch(db, key);
    }
    cx.out.int(members.len() as i64);
}

/// The MIN|MAX [COUNT n] tail of ZMPOP/BZMPOP and LEFT|RIGHT of LMPOP/BLMPOP: (the first
/// option, count). `sides` names the two accepted words (true for the second).
pub fn mpop_args(
    cx: &mut Cx<'_, '_>,
    args: &Args<'_>,
    numkeys_at: usize,
    sides: (&str, &str),
) -> Option<(Vec<Key>, bool, usize)> {
    let n = match crate::num::parse_i64(args.get(numkeys_at)) {
        Some(n) if n >= 1 => usize::try_from(n).unwrap_or(usize::MAX),
        _ => {
            cx.out.error("ERR numkeys should be greater than 0");
            return None;
        }
    };
    let where_at = numkeys_at.saturating_add(n).saturating_add(1);
    if where_at >= args.len() {
        cx.out.error(SYNTAX);
        return None;
    }
    let second = if args.is(where_at, sides.0) {
        false
    } else if args.is(where_at, sides.1) {
        true
    } else {
        cx.out.error(SYNTAX);
        return None;
    };
    let mut count: Option<usize> = None;
    let mut j = where_at + 1;
    while j < args.len() {
        if count.is_none() && args.is(j, "count") && j + 1 < args.len() {
            match crate::num::parse_i64(args.get(j + 1)) {
                Some(c) if c >= 1 => count = Some(usize::try_from(c).unwrap_or(usize::MAX)),
                _ => {
                    cx.out.error("ERR count should be greater than 0");
                    return None;
                }
            }
            j += 2;
        } else {
            cx.out.error(SYNTAX);
            return None;
        }
    }
    let keys = args.from(numkeys_at + 1).take(n).map(Key::from).collect();
    Some((keys, second, count.unwrap_or(1)))
}

/// Pops from the first non-empty sorted set of `keys`; None when all are empty or missing,
/// Err(()) after a WRONGTYPE reply. `count` None is the BZPOPMIN shape.
fn zpop_first(
    cx: &mut Cx<'_, '_>,
    keys: &[Key],
    max: bool,
    count: Option<usize>,
) -> Result<bool, ()> {
    let db = cx.db();
    let store = cx.store.get();
    for key in keys {
        let d = store.db(db);
        let zset = match d.zset(key) {
            Ok(Some(z)) if !z.is_empty() => z,
            Ok(_) => continue,
            Err(_) => {
                cx.out.error(WRONGTYPE);
                return Err(());
            }
        };
        match count {
            None => {
                if let Some((m, s)) = zset.pop(max) {
                    cx.out.array(3);
                    cx.out.bulk(key);
                    cx.out.bulk(&m);
                    cx.out.double(s);
                }
            }
            Some(n) => {
                let n = n.min(zset.len());
                cx.out.array(2);
                cx.out.bulk(key);
                cx.out.array(n);
                for _ in 0..n {
                    if let Some((m, s)) = zset.pop(max) {
                        cx.out.array(2);
                        cx.out.bulk(&m);
                        cx.out.double(s);
                    }
                }
            }
        }
        d.remove_if_empty(key);
        store.touch(db, key);
        return Ok(true);
    }
    Ok(false)
}

pub fn zmpop(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some((keys, max, count)) = mpop_args(cx, args, 1, ("min", "max")) else {
        return;
    };
    if let Ok(false) = zpop_first(cx, &keys, max, Some(count)) {
        cx.out.null_array();
    }
}

/// Blocks the client on `keys` with `op` (or answers the null array inside MULTI).
pub fn block_on(
    cx: &mut Cx<'_, '_>,
    keys: Vec<Key>,
    op: BlockOp,
    deadline: Option<tokio::time::Instant>,
) {
    if cx.session.in_exec {
        cx.out.null_array();
        return;
    }
    let (tx, rx) = oneshot::channel();
    let db = cx.db();
    let id = cx.store.get().blocking.block(db, keys, op, tx);
    cx.store.get().blocking.set_owner(id, cx.session.id);
    cx.session.action = Action::Block(BlockWait {
        id,
        rx,
        deadline,
        kind: BlockKind::Pop,
    });
}

fn bzpop(cx: &mut Cx<'_, '_>, args: &Args<'_>, max: bool) {
    let Some(deadline) = super::lists::timeout_arg(cx, args.get(args.len() - 1)) else {
        return;
    };
    let keys: Vec<Key> = args.from(1).take(args.len() - 2).map(Key::from).collect();
    match zpop_first(cx, &keys, max, None) {
        Ok(true) | Err(()) => {}
        Ok(false) => {
            let resp3 = cx.out.resp3;
            let op = BlockOp::ZPop {
                max,
                count: None,
                resp3,
            };
            block_on(cx, keys, op, deadline);
        }
    }
}

pub fn bzpopmin(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    bzpop(cx, args, false);
}

pub fn bzpopmax(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    bzpop(cx, args, true);
}

pub fn bzmpop(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some(deadline) = super::lists::timeout_arg(cx, args.get(1)) else {
        return;
    };
    let Some((keys, max, count)) = mpop_args(cx, args, 2, ("min", "max")) else {
        return;
    };
    if let Ok(false) = zpop_first(cx, &keys, max, Some(count)) {
        let resp3 = cx.out.resp3;
        let op = BlockOp::ZPop {
            max,
            count: Some(count),
            resp3,
        };
        block_on(cx, keys, op, deadline);
    }
}

fn lmpop_first(cx: &mut Cx<'_, '_>, keys: &[Key], left: bool, count: usize) -> Result<bool, ()> {
    let db = cx.db();
    let store = cx.store.get();
    for key in keys {
        let d = store.db(db);
        let list = match d.list(key) {
            Ok(Some(l)) if !l.is_empty() => l,
            Ok(_) => continue,
            Err(_) => {
                cx.out.error(WRONGTYPE);
                return Err(());
            }
        };
        let n = count.min(list.len());
        cx.out.array(2);
        cx.out.bulk(key);
        cx.out.array(n);
        for _ in 0..n {
            if let Some(v) = if left {
                list.pop_front()
            } else {
                list.pop_back()
            } {
                cx.out.bulk(&v);
            }
        }
        d.remove_if_empty(key);
        store.touch(db, key);
        return Ok(true);
    }
    Ok(false)
}

/// CLIENT UNBLOCK id [TIMEOUT|ERROR]: ends another client's blocking command.
pub fn client_unblock(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    if args.len() != 3 && args.len() != 4 {
        super::subcommand_arity(cx.out, "client|unblock");
        return;
    }
    let Some(id) = super::int_arg(cx.out, args.get(2)) else {
        return;
    };
    let error = if args.len() == 4 {
        if args.is(3, "timeout") {
            false
        } else if args.is(3, "error") {
            true
        } else {
            cx.out
                .error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
            return;
        }
    } else {
        false
    };
    let reply = if error {
        crate::engine::BlockedReply::Encoded(
            b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n".to_vec(),
        )
    } else {
        crate::engine::BlockedReply::TimedOut
    };
    let done = u64::try_from(id).is_ok_and(|id| cx.store.get().blocking.unblock_client(id, reply));
    cx.out.int(i64::from(done));
}

pub fn lmpop(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some((keys, right, count)) = mpop_args(cx, args, 1, ("left", "right")) else {
        return;
    };
    if let Ok(false) = lmpop_first(cx, &keys, !right, count) {
        cx.out.null_array();
    }
}

pub fn blmpop(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some(deadline) = super::lists::timeout_arg(cx, args.get(1)) else {
        return;
    };
    let Some((keys, right, count)) = mpop_args(cx, args, 2, ("left", "right")) else {
        return;
    };
    if let Ok(false) = lmpop_first(cx, &keys, !right, count) {
        let resp3 = cx.out.resp3;
        let op = BlockOp::LMPop {
            left: !right,
            count,
            resp3,
        };
        block_on(cx, keys, op, deadline);
    }
}
