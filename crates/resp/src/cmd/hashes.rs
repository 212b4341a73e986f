//! Hash commands: HSET/HGET and friends, counters, HRANDFIELD, HSCAN.

use super::common::{
    empty_or_null, per_member, random_count, random_reply, remove_each, typed, value_or,
};
use super::keys::{scan_opts, scan_reply, small_scan};
use super::{Args, Cx, float_arg, int_arg};
use crate::engine::{Db, Key};
use crate::reply::Out;

fn hset_generic(cx: &mut Cx<'_, '_>, args: &Args<'_>, name: &str) -> Option<i64> {
    if !args.len().is_multiple_of(2) {
        cx.out.error(&format!(
            "ERR wrong number of arguments for '{name}' command"
        ));
        return None;
    }
    let db = cx.db();
    let key = args.get(1);
    let store = cx.store.get();
    let hash = typed(cx.out, store.db(db).hash_or_new(key))?;
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
    store.touch_members(db, key, args.from(2).step_by(2));
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
    let Some(hash) = typed(cx.out, store.db(db).hash_or_new(key)) else {
        return;
    };
    if hash.contains_key(args.get(2)) {
        cx.out.int(0);
    } else {
        hash.insert(args.get(2).into(), args.get(3).into());
        store.touch_members(db, key, [args.get(2)]);
        cx.out.int(1);
    }
}

pub fn hget(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let hash = value_or!(cx, hash, args.get(1), cx.out.null());
    match hash.get(args.get(2)) {
        Some(v) => cx.out.bulk(v),
        None => cx.out.null(),
    }
}

pub fn hmget(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let db = cx.db();
    let Some(hash) = typed(cx.out, cx.store.get().db(db).hash(args.get(1))) else {
        return;
    };
    let value = |out: &mut Out, v: Option<&Key>| match v {
        Some(v) => out.bulk(v),
        None => out.null(),
    };
    per_member(cx.out, args, hash.as_deref(), |h, f| h.get(f), value);
}

pub fn hdel(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    remove_each(cx, args, Db::hash, crate::engine::remove_hash_field);
}

pub fn hexists(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let hash = value_or!(cx, hash, args.get(1), cx.out.int(0));
    let found = hash.contains_key(args.get(2));
    cx.out.int(i64::from(found));
}

pub fn hlen(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let hash = value_or!(cx, hash, args.get(1), cx.out.int(0));
    let n = hash.len();
    cx.out.int(n as i64);
}

pub fn hstrlen(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let hash = value_or!(cx, hash, args.get(1), cx.out.int(0));
    let n = hash.get(args.get(2)).map_or(0, |v| v.len());
    cx.out.int(n as i64);
}

pub fn hkeys(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let hash = value_or!(cx, hash, args.get(1), cx.out.array(0));
    cx.out.array(hash.len());
    for k in hash.keys() {
        cx.out.bulk(k);
    }
}

pub fn hvals(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let hash = value_or!(cx, hash, args.get(1), cx.out.array(0));
    cx.out.array(hash.len());
    for v in hash.values() {
        cx.out.bulk(v);
    }
}

pub fn hgetall(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let hash = value_or!(cx, hash, args.get(1), cx.out.map(0));
    cx.out.map(hash.len());
    for (k, v) in hash {
        cx.out.bulk(k);
        cx.out.bulk(v);
    }
}

/// How HINCRBY or HINCRBYFLOAT reads a field and words a field it cannot read.
struct Number<T> {
    parse: fn(&[u8]) -> Option<T>,
    not_number: &'static str,
}

/// HINCRBY and HINCRBYFLOAT on field `args[2]`: `step` turns the field's current value (zero
/// when unset) into the new value's text and what `reply` answers with, or the error to reply.
fn incr_field<T: Default, R>(
    cx: &mut Cx<'_, '_>,
    args: &Args<'_>,
    number: Number<T>,
    step: impl FnOnce(T) -> Result<(Key, R), &'static str>,
    reply: fn(&mut Out, &Key, R),
) {
    let db = cx.db();
    let key = args.get(1);
    let store = cx.store.get();
    let Some(hash) = typed(cx.out, store.db(db).hash_or_new(key)) else {
        return;
    };
    let field = args.get(2);
    let current = match hash.get(field) {
        None => Ok(T::default()),
        Some(v) => (number.parse)(v).ok_or(number.not_number),
    };
    let (text, answer) = match current.and_then(step) {
        Ok(next) => next,
        Err(message) => {
            cx.out.error(message);
            store.db(db).remove_if_empty(key);
            return;
        }
    };
    reply(cx.out, &text, answer);
    match hash.get_mut(field) {
        Some(slot) => *slot = text,
        None => {
            hash.insert(field.into(), text);
        }
    }
    store.touch_members(db, key, [field]);
}

pub fn hincrby(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some(delta) = int_arg(cx.out, args.get(3)) else {
        return;
    };
    let number = Number {
        parse: crate::num::parse_i64,
        not_number: "ERR hash value is not an integer",
    };
    let step = |current: i64| {
        let next = current
            .checked_add(delta)
            .ok_or("ERR increment or decrement would overflow")?;
        Ok((itoa::Buffer::new().format(next).as_bytes().into(), next))
    };
    incr_field(cx, args, number, step, |out, _, next| out.int(next));
}

pub fn hincrbyfloat(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some(delta) = float_arg(cx.out, args.get(3)) else {
        return;
    };
    if !delta.is_finite() {
        cx.out.error("ERR value is NaN or Infinity");
        return;
    }
    let number = Number {
        parse: crate::num::parse_f64,
        not_number: "ERR hash value is not a float",
    };
    let step = |current: f64| {
        let next = current + delta;
        if !next.is_finite() {
            return Err("ERR increment would produce NaN or Infinity");
        }
        let mut text = Vec::with_capacity(24);
        crate::num::push_human(&mut text, next);
        Ok((text.into(), ()))
    };
    incr_field(cx, args, number, step, |out, text, ()| out.bulk(text));
}

pub fn hrandfield(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some((count, with_values)) = random_count(cx.out, args, "withvalues") else {
        return;
    };
    let counted = count.is_some();
    let hash = value_or!(cx, hash, args.get(1), empty_or_null(cx.out, counted));
    let entry = |i| hash.get_index(i).map(|(k, v)| (&k[..], v));
    random_reply(cx.out, count, hash.len(), with_values, entry, |out, v| {
        out.bulk(v)
    });
}

pub fn hscan(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some((cursor, opts)) = scan_opts(cx, args, 2, false) else {
        return;
    };
    let hash = value_or!(cx, hash, args.get(1), scan_reply(cx.out, 0, &[]));
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
