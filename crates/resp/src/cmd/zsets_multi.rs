//! Sorted-set commands over several keys: ZUNION/ZINTER/ZDIFF (and their STORE forms) and
//! ZINTERCARD; plus ZREMRANGEBYLEX.

use super::common::{members_reply, value_or};
use super::{Args, Cx, SYNTAX, WRONGTYPE};
use crate::engine::{Db, Key, Value, ZSet};
use crate::reply::Out;

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
        Computed::Members(members) => {
            if store {
                let dest = args.get(1);
                let len = members.len();
                let store = cx.store.get();
                let d = store.db(db);
                if len > 0 {
                    let mut z = ZSet::default();
                    for (m, score) in &members {
                        z.insert(m, *score);
                    }
                    d.set(dest, Value::ZSet(Box::new(z)));
                    store.touch(db, dest);
                } else if d.remove(dest).is_some() {
                    store.touch(db, dest);
                }
                cx.out.int(len as i64);
            } else {
                // Replied from the computed list, so a -0 score (0 times a negative weight) is
                // shown as Redis shows it.
                let iter = members.iter().map(|(m, score)| (&m[..], *score));
                members_reply(cx.out, members.len(), iter, with_scores, Out::double);
            }
        }
    }
}

enum Computed {
    Card(usize),
    /// Members in sorted-set order: by score, then bytes.
    Members(Vec<(Key, f64)>),
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
    let mut out: Vec<(Key, f64)> = Vec::new();
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
            out.extend(acc);
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
                    out.push((m.clone(), score));
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
                    out.push((m.clone(), *s));
                }
            }
        }
    }
    out.sort_by(|a, b| {
        a.1.partial_cmp(&b.1)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| a.0.cmp(&b.0))
    });
    Computed::Members(out)
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
