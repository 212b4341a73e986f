//! Set commands: SADD/SREM, membership, SPOP/SRANDMEMBER, SMOVE, algebra and STORE forms, SSCAN.

use super::common::{
    empty_or_null, optional_count, per_member, pop_command, pop_elements, random_reply,
    remove_each, typed, value_or,
};
use super::keys::{scan_opts, scan_reply, small_scan};
use super::{Args, Cx, SYNTAX, WRONGTYPE, int_arg};
use crate::engine::{Db, Key, Set, Value, WrongType};
use crate::reply::Out;

pub fn sadd(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let db = cx.db();
    let key = args.get(1);
    let store = cx.store.get();
    let Some(set) = typed(cx.out, store.db(db).set_or_new(key)) else {
        return;
    };
    let mut added = 0;
    for member in args.from(2) {
        if !set.contains(member) {
            set.insert(member.into());
            added += 1;
        }
    }
    if added > 0 {
        store.touch_members(db, key, args.from(2));
    }
    cx.out.int(added);
}

pub fn srem(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    remove_each(cx, args, Db::set_value, |set, m| set.swap_remove(m));
}

pub fn sismember(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let set = value_or!(cx, set_value, args.get(1), cx.out.int(0));
    let found = set.contains(args.get(2));
    cx.out.int(i64::from(found));
}

pub fn smismember(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let db = cx.db();
    let Some(set) = typed(cx.out, cx.store.get().db(db).set_value(args.get(1))) else {
        return;
    };
    let found = |s: &Set, m: &[u8]| s.contains(m).then_some(());
    per_member(cx.out, args, set.as_deref(), found, |out, v| {
        out.int(i64::from(v.is_some()))
    });
}

/// Largest set Redis keeps as an intset (set-max-intset-entries).
const INTSET_MAX: usize = 512;

/// Member order as Redis replies it: a small all-integer set is an intset there, sorted by
/// value; any other set comes back in table order.
fn reply_order<'s>(members: impl Iterator<Item = &'s Key>, len: usize) -> Vec<&'s Key> {
    let mut list: Vec<&Key> = members.collect();
    if len <= INTSET_MAX {
        let ints: Option<Vec<i64>> = list.iter().map(|m| crate::num::parse_i64(m)).collect();
        if let Some(ints) = ints {
            let mut pairs: Vec<(i64, &Key)> = ints.into_iter().zip(list).collect();
            pairs.sort_unstable_by_key(|(n, _)| *n);
            list = pairs.into_iter().map(|(_, m)| m).collect();
        }
    }
    list
}

pub fn smembers(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let set = value_or!(cx, set_value, args.get(1), cx.out.set(0));
    cx.out.set(set.len());
    for m in reply_order(set.iter(), set.len()) {
        cx.out.bulk(m);
    }
}

pub fn scard(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let set = value_or!(cx, set_value, args.get(1), cx.out.int(0));
    let n = set.len();
    cx.out.int(n as i64);
}

pub fn spop(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let missing = |out: &mut Out, counted: bool| {
        if counted { out.set(0) } else { out.null() }
    };
    pop_command(
        cx,
        args,
        SYNTAX,
        Db::set_value,
        missing,
        |store, db, key, _| store.touch(db, key),
        |out, set, count| {
            let take = |s: &mut Set| s.swap_remove_index(crate::engine::random_index(s.len()));
            pop_elements(out, set, count, set.len(), Out::set, take)
        },
    );
}

pub fn srandmember(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some(count) = optional_count(cx.out, args, SYNTAX, int_arg) else {
        return;
    };
    let counted = count.is_some();
    let set = value_or!(cx, set_value, args.get(1), empty_or_null(cx.out, counted));
    if count.is_some_and(|n| n < -(i64::MAX / 2)) {
        cx.out.error("ERR value is out of range");
        return;
    }
    let entry = |i| set.get_index(i).map(|m| (&m[..], ()));
    random_reply(cx.out, count, set.len(), false, entry, |_, ()| {});
}

pub fn smove(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let db = cx.db();
    let (src, dst, member) = (args.get(1), args.get(2), args.get(3));
    let store = cx.store.get();
    let d = store.db(db);
    let src_has = match d.set_value(src) {
        Ok(s) => s.map(|s| s.contains(member)),
        Err(WrongType) => {
            cx.out.error(WRONGTYPE);
            return;
        }
    };
    if d.set_value(dst).is_err() {
        cx.out.error(WRONGTYPE);
        return;
    }
    if src_has != Some(true) {
        cx.out.int(0);
        return;
    }
    if src == dst {
        cx.out.int(1);
        return;
    }
    if let Ok(Some(s)) = d.set_value(src) {
        s.swap_remove(member);
    }
    d.remove_if_empty(src);
    // As Redis, the destination counts as modified (WATCH, events) only if the member is new.
    let added = d.set_or_new(dst).is_ok_and(|s| s.insert(member.into()));
    store.touch(db, src);
    if added {
        store.touch(db, dst);
    }
    cx.out.int(1);
}

#[derive(Clone, Copy)]
enum Algebra {
    Inter,
    Union,
    Diff,
}

/// Computes an intersection, union or difference of the sets at `keys`; Err on a wrong type.
fn compute(cx: &mut Cx<'_, '_>, keys: &[&[u8]], op: Algebra) -> Result<Set, WrongType> {
    let db = cx.db();
    let d = cx.store.get().db(db);
    let mut sets: Vec<Option<Set>> = Vec::with_capacity(keys.len());
    for key in keys {
        sets.push(d.set_value(key)?.map(|s| s.clone()));
    }
    let empty = Set::default();
    let mut iter = sets.iter().map(|s| s.as_ref().unwrap_or(&empty));
    let first = iter.next().cloned().unwrap_or_default();
    Ok(match op {
        Algebra::Union => {
            let mut acc = first;
            for s in iter {
                acc.extend(s.iter().cloned());
            }
            acc
        }
        Algebra::Inter => {
            let rest: Vec<&Set> = iter.collect();
            first
                .into_iter()
                .filter(|m| rest.iter().all(|s| s.contains(m)))
                .collect()
        }
        Algebra::Diff => {
            let rest: Vec<&Set> = iter.collect();
            first
                .into_iter()
                .filter(|m| !rest.iter().any(|s| s.contains(m)))
                .collect()
        }
    })
}

fn algebra_reply(cx: &mut Cx<'_, '_>, args: &Args<'_>, op: Algebra) {
    let keys: Vec<&[u8]> = args.from(1).collect();
    match compute(cx, &keys, op) {
        Ok(set) => {
            cx.out.set(set.len());
            for m in reply_order(set.iter(), set.len()) {
                cx.out.bulk(m);
            }
        }
        Err(WrongType) => cx.out.error(WRONGTYPE),
    }
}

fn algebra_store(cx: &mut Cx<'_, '_>, args: &Args<'_>, op: Algebra) {
    let dst = args.get(1);
    let keys: Vec<&[u8]> = args.from(2).collect();
    match compute(cx, &keys, op) {
        Ok(set) => {
            let n = set.len();
            let db = cx.db();
            let store = cx.store.get();
            if set.is_empty() {
                store.db(db).remove(dst);
            } else {
                store.db(db).set(dst, Value::Set(Box::new(set)));
            }
            store.touch(db, dst);
            cx.out.int(n as i64);
        }
        Err(WrongType) => cx.out.error(WRONGTYPE),
    }
}

pub fn sinter(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    algebra_reply(cx, args, Algebra::Inter);
}

pub fn sunion(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    algebra_reply(cx, args, Algebra::Union);
}

pub fn sdiff(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    algebra_reply(cx, args, Algebra::Diff);
}

pub fn sinterstore(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    algebra_store(cx, args, Algebra::Inter);
}

pub fn sunionstore(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    algebra_store(cx, args, Algebra::Union);
}

pub fn sdiffstore(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    algebra_store(cx, args, Algebra::Diff);
}

pub fn sintercard(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    // Redis words a bad numkeys and a bad LIMIT the same whether or not they are integers.
    let numkeys = match crate::num::parse_i64(args.get(1)) {
        Some(n) if n > 0 => n as usize,
        _ => {
            cx.out.error("ERR numkeys should be greater than 0");
            return;
        }
    };
    if numkeys > args.len() - 2 {
        cx.out
            .error("ERR Number of keys can't be greater than number of args");
        return;
    }
    let mut limit = usize::MAX;
    let mut i = 2 + numkeys;
    while i < args.len() {
        if args.is(i, "limit") && i + 1 < args.len() {
            match crate::num::parse_i64(args.get(i + 1)) {
                Some(n) if n >= 0 => limit = if n == 0 { usize::MAX } else { n as usize },
                _ => {
                    cx.out.error("ERR LIMIT can't be negative");
                    return;
                }
            }
            i += 2;
        } else {
            cx.out.error(SYNTAX);
            return;
        }
    }
    let keys: Vec<&[u8]> = args.from(2).take(numkeys).collect();
    match compute(cx, &keys, Algebra::Inter) {
        Ok(set) => cx.out.int(set.len().min(limit) as i64),
        Err(WrongType) => cx.out.error(WRONGTYPE),
    }
}

pub fn sscan(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some((cursor, opts)) = scan_opts(cx, args, 2, false) else {
        return;
    };
    let set = value_or!(cx, set_value, args.get(1), scan_reply(cx.out, 0, &[]));
    let mut items: Vec<&[u8]> = Vec::new();
    let matching = |m: &[u8]| {
        opts.pattern
            .is_none_or(|p| crate::glob::matches(p, m, false))
    };
    let next = if cursor == 0 && set.len() <= 128 {
        let ordered = reply_order(set.iter(), set.len());
        items.extend(ordered.into_iter().map(|m| &m[..]).filter(|m| matching(m)));
        0
    } else {
        small_scan(set.len(), cursor, opts.count, |i| {
            if let Some(m) = set.get_index(i)
                && matching(m)
            {
                items.push(m);
            }
        })
    };
    scan_reply(cx.out, next, &items);
}
