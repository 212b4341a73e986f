//! Hash commands: HSET/HGET and friends, counters, HRANDFIELD, HSCAN.

use super::keys::{scan_opts, scan_reply, small_scan};
use super::{Args, Cx, WRONGTYPE, float_arg, int_arg};
use crate::engine::{Hash, Key, WrongType};

/// Up to this size removals keep insertion order, as Redis's listpack-encoded hashes do.
const ORDERED_UP_TO: usize = 128;

fn remove_field(hash: &mut Hash, field: &[u8]) -> bool {
    if hash.len() <= ORDERED_UP_TO {
        hash.shift_remove(field).is_some()
    } else {
        hash.swap_remove(field).is_some()
    }
}

/// The hash at `key` for writing, created when missing; replies WRONGTYPE itself.
macro_rules! hash_or_new {
    ($cx:expr, $store:expr, $db:expr, $key:expr) => {
        match $store.db($db).hash_or_new($key) {
            Ok(h) => h,
            Err(WrongType) => {
                $cx.out.error(WRONGTYPE);
                return;
            }
        }
    };
}

/// The hash at `key` for reading; `$missing` runs when it does not exist.
macro_rules! hash_or {
    ($cx:expr, $key:expr, $missing:expr) => {{
        let db = $cx.db();
        match $cx.store.get().db(db).hash($key) {
            Ok(Some(h)) => h,
            Ok(None) => {
                $missing;
                return;
            }
            Err(WrongType) => {
                $cx.out.error(WRONGTYPE);
                return;
            }
        }
    }};
}

fn hset_generic(cx: &mut Cx<'_, '_>, args: &Args<'_>, name: &str) -> Option<i64> {
    if args.len() % 2 != 0 {
        cx.out.error(&format!(
            "ERR wrong number of arguments for '{name}' command"
        ));
        return None;
    }
    let db = cx.db();
    let key = args.get(1);
    let store = cx.store.get();
    let hash = match store.db(db).hash_or_new(key) {
        Ok(h) => h,
        Err(WrongType) => {
            cx.out.error(WRONGTYPE);
            return None;
        }
    };
    let mut added = 0;
    let mut i = 2;
    while i + 1 < args.len() {
        let (field, value) = (args.get(i), args.get(i + 1));
        match hash.get_mut(field) {
            Some(slot) => *slot = value.into(),
            None => {
                hash.insert(field.into(), value.into());
                added += 1;
            }
        }
        i += 2;
    }
    store.touch(db, key);
    Some(added)
}

pub fn hset(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    if let Some(n) = hset_generic(cx, args, "hset") {
        cx.out.int(n);
    }
}

pub fn hmset(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    if hset_generic(cx, args, "hmset").is_some() {
        cx.out.ok();
    }
}

pub fn hsetnx(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let db = cx.db();
    let key = args.get(1);
    let store = cx.store.get();
    let hash = hash_or_new!(cx, store, db, key);
    if hash.contains_key(args.get(2)) {
        cx.out.int(0);
    } else {
        hash.insert(args.get(2).into(), args.get(3).into());
        store.touch(db, key);
        cx.out.int(1);
    }
}

pub fn hget(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let hash = hash_or!(cx, args.get(1), cx.out.null());
    match hash.get(args.get(2)) {
        Some(v) => cx.out.bulk(v),
        None => cx.out.null(),
    }
}

pub fn hmget(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let n = args.len() - 2;
    let hash = hash_or!(cx, args.get(1), {
        cx.out.array(n);
        for _ in 0..n {
            cx.out.null();
        }
    });
    cx.out.array(n);
    for field in args.from(2) {
        match hash.get(field) {
            Some(v) => cx.out.bulk(v),
            None => cx.out.null(),
        }
    }
}

pub fn hdel(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let db = cx.db();
    let key = args.get(1);
    let store = cx.store.get();
    let d = store.db(db);
    let hash = match d.hash(key) {
        Ok(Some(h)) => h,
        Ok(None) => {
            cx.out.int(0);
            return;
        }
        Err(WrongType) => {
            cx.out.error(WRONGTYPE);
            return;
        }
    };
    let removed = args.from(2).filter(|f| remove_field(hash, f)).count();
    d.remove_if_empty(key);
    if removed > 0 {
        store.touch(db, key);
    }
    cx.out.int(removed as i64);
}

pub fn hexists(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let hash = hash_or!(cx, args.get(1), cx.out.int(0));
    let found = hash.contains_key(args.get(2));
    cx.out.int(i64::from(found));
}

pub fn hlen(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let hash = hash_or!(cx, args.get(1), cx.out.int(0));
    let n = hash.len();
    cx.out.int(n as i64);
}

pub fn hstrlen(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let hash = hash_or!(cx, args.get(1), cx.out.int(0));
    let n = hash.get(args.get(2)).map_or(0, |v| v.len());
    cx.out.int(n as i64);
}

pub fn hkeys(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let hash = hash_or!(cx, args.get(1), cx.out.array(0));
    cx.out.array(hash.len());
    for k in hash.keys() {
        cx.out.bulk(k);
    }
}

pub fn hvals(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let hash = hash_or!(cx, args.get(1), cx.out.array(0));
    cx.out.array(hash.len());
    for v in hash.values() {
        cx.out.bulk(v);
    }
}

pub fn hgetall(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let hash = hash_or!(cx, args.get(1), cx.out.map(0));
    cx.out.map(hash.len());
    for (k, v) in hash {
        cx.out.bulk(k);
        cx.out.bulk(v);
    }
}

pub fn hincrby(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some(delta) = int_arg(cx.out, args.get(3)) else {
        return;
    };
    let db = cx.db();
    let key = args.get(1);
    let store = cx.store.get();
    let hash = hash_or_new!(cx, store, db, key);
    let field = args.get(2);
    let current = match hash.get(field) {
        None => 0,
        Some(v) => match crate::num::parse_i64(v) {
            Some(n) => n,
            None => {
                cx.out.error("ERR hash value is not an integer");
                store.db(db).remove_if_empty(key);
                return;
            }
        },
    };
    let Some(next) = current.checked_add(delta) else {
        cx.out.error("ERR increment or decrement would overflow");
        store.db(db).remove_if_empty(key);
        return;
    };
    let text: Key = itoa::Buffer::new().format(next).as_bytes().into();
    match hash.get_mut(field) {
        Some(slot) => *slot = text,
        None => {
            hash.insert(field.into(), text);
        }
    }
    store.touch(db, key);
    cx.out.int(next);
}

pub fn hincrbyfloat(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some(delta) = float_arg(cx.out, args.get(3)) else {
        return;
    };
    let db = cx.db();
    let key = args.get(1);
    let store = cx.store.get();
    let hash = hash_or_new!(cx, store, db, key);
    let field = args.get(2);
    let current = match hash.get(field) {
        None => 0.0,
        Some(v) => match crate::num::parse_f64(v) {
            Some(n) => n,
            None => {
                cx.out.error("ERR hash value is not a float");
                store.db(db).remove_if_empty(key);
                return;
            }
        },
    };
    let next = current + delta;
    if !next.is_finite() {
        cx.out.error("ERR increment would produce NaN or Infinity");
        store.db(db).remove_if_empty(key);
        return;
    }
    let mut text = Vec::with_capacity(24);
    crate::num::push_human(&mut text, next);
    cx.out.bulk(&text);
    match hash.get_mut(field) {
        Some(slot) => *slot = text.into(),
        None => {
            hash.insert(field.into(), text.into());
        }
    }
    store.touch(db, key);
}

pub fn hrandfield(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let (count, with_values) = match args.len() {
        2 => (None, false),
        3 | 4 => {
            if args.len() == 4 && !args.is(3, "withvalues") {
                cx.out.error(super::SYNTAX);
                return;
            }
            let Some(n) = int_arg(cx.out, args.get(2)) else {
                return;
            };
            if !(-(i64::MAX / 2)..=i64::MAX / 2).contains(&n) {
                cx.out.error("ERR value is out of range");
                return;
            }
            (Some(n), args.len() == 4)
        }
        _ => {
            cx.out.error(super::SYNTAX);
            return;
        }
    };
    let resp3 = cx.out.resp3;
    let hash = hash_or!(
        cx,
        args.get(1),
        if count.is_some() {
            cx.out.array(0)
        } else {
            cx.out.null()
        }
    );
    let len = hash.len();
    let Some(count) = count else {
        if let Some((k, _)) = hash.get_index(crate::engine::random_index(len)) {
            cx.out.bulk(k);
        }
        return;
    };
    let picks: Vec<usize> = if count >= 0 {
        let n = (count as usize).min(len);
        let mut idx: Vec<usize> = (0..len).collect();
        fastrand::shuffle(&mut idx);
        idx.truncate(n);
        idx
    } else {
        (0..count.unsigned_abs())
            .map(|_| crate::engine::random_index(len))
            .collect()
    };
    if with_values && resp3 {
        cx.out.array(picks.len());
    } else {
        cx.out.array(picks.len() * if with_values { 2 } else { 1 });
    }
    for i in picks {
        if let Some((k, v)) = hash.get_index(i) {
            if with_values && resp3 {
                cx.out.array(2);
            }
            cx.out.bulk(k);
            if with_values {
                cx.out.bulk(v);
            }
        }
    }
}

pub fn hscan(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some((cursor, opts)) = scan_opts(cx, args, 2, false) else {
        return;
    };
    let hash = hash_or!(cx, args.get(1), scan_reply(cx.out, 0, &[]));
    let mut items: Vec<&[u8]> = Vec::new();
    let next = small_scan(hash.len(), cursor, opts.count, |i| {
        if let Some((k, v)) = hash.get_index(i)
            && opts
                .pattern
                .is_none_or(|p| crate::glob::matches(p, k, false))
        {
            items.push(k);
            items.push(v);
        }
    });
    scan_reply(cx.out, next, &items);
}
