//! String commands: GET, SET and its variants, MGET/MSET, APPEND, ranges, counters.

use super::common::typed;
use super::{Args, Cx, NOT_INTEGER, SYNTAX, WRONGTYPE, float_arg, int_arg};
use crate::engine::{Entry, Value, WrongType, now_ms};

/// Largest string SETRANGE/APPEND may build (Redis's proto-max-bulk-len default).
const MAX_STRING: usize = 512 * 1024 * 1024;

pub fn get(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let db = cx.db();
    let store = cx.store.get();
    match store.db(db).string(args.get(1)) {
        Ok(Some(v)) => {
            cx.out.bulk(v);
            store.hits += 1;
        }
        Ok(None) => {
            cx.out.null();
            store.misses += 1;
            store.key_event(db, crate::engine::notify::KEY_MISS, b"keymiss", args.get(1));
        }
        Err(WrongType) => cx.out.error(WRONGTYPE),
    }
}

/// Writes a string value, reusing the old buffer when the key already holds a string.
fn store_string(cx: &mut Cx<'_, '_>, key: &[u8], value: &[u8], expire_at: Option<i64>) {
    let db = cx.db();
    let store = cx.store.get();
    let d = store.db(db);
    match d.get(key) {
        Some(Entry {
            value: Value::Str(old),
            expire_at: current,
            ..
        }) => {
            old.assign(value);
            let current = *current;
            if let Some(at) = expire_at
                && at != current
            {
                d.set_expire(key, at);
            }
        }
        Some(entry) => {
            entry.value = Value::Str(value.into());
            if let Some(at) = expire_at {
                d.set_expire(key, at);
            }
        }
        None => d.set_with_expiry(key, Value::Str(value.into()), expire_at.unwrap_or(0)),
    }
    store.touch(db, key);
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Cond {
    Always,
    Nx,
    Xx,
}

/// Parses EX/PX/EXAT/PXAT `n` into an absolute time; replies the error on failure.
fn parse_expiry(cx: &mut Cx<'_, '_>, unit: &[u8], n: &[u8], cmd: &str) -> Option<i64> {
    let amount = int_arg(cx.out, n)?;
    let unit = unit.to_ascii_lowercase();
    let (ms, absolute) = match unit.as_slice() {
        b"ex" => (amount.checked_mul(1000), false),
        b"px" => (Some(amount), false),
        b"exat" => (amount.checked_mul(1000), true),
        _ => (Some(amount), true),
    };
    let at = match ms {
        Some(ms) if amount > 0 => {
            if absolute {
                Some(ms)
            } else {
                ms.checked_add(now_ms())
            }
        }
        _ => None,
    };
    if at.is_none() {
        cx.out
            .error(&format!("ERR invalid expire time in '{cmd}' command"));
    }
    at
}

pub fn set(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let (key, value) = (args.get(1), args.get(2));
    let mut cond = Cond::Always;
    let mut get = false;
    let mut keep_ttl = false;
    let mut expiry: Option<(&[u8], &[u8])> = None;
    let mut i = 3;
    while i < args.len() {
        let opt = args.get(i);
        let next = (i + 1 < args.len()).then(|| args.get(i + 1));
        let lower = opt.to_ascii_lowercase();
        match lower.as_slice() {
            b"nx" if cond == Cond::Always => cond = Cond::Nx,
            b"xx" if cond == Cond::Always => cond = Cond::Xx,
            b"get" => get = true,
            b"keepttl" if expiry.is_none() => keep_ttl = true,
            b"ex" | b"px" | b"exat" | b"pxat"
                if expiry.is_none() && !keep_ttl && next.is_some() =>
            {
                expiry = next.map(|n| (opt, n));
                i += 1;
            }
            _ => {
                cx.out.error(SYNTAX);
                return;
            }
        }
        i += 1;
    }
    let expire_at = match expiry {
        Some((unit, n)) => match parse_expiry(cx, unit, n, "set") {
            Some(at) => Some(at),
            None => return,
        },
        None if keep_ttl => None,
        None => Some(0),
    };
    let db = cx.db();
    let d = cx.store.get().db(db);
    let old = match d.get(key) {
        None => None,
        Some(Entry {
            value: Value::Str(v),
            ..
        }) => Some(get.then(|| v.clone())),
        Some(_) if get => {
            cx.out.error(WRONGTYPE);
            return;
        }
        Some(_) => Some(None),
    };
    let exists = old.is_some();
    let proceed = match cond {
        Cond::Always => true,
        Cond::Nx => !exists,
        Cond::Xx => exists,
    };
    if proceed {
        if expire_at.is_some_and(|at| at != 0 && at <= now_ms()) {
            // An absolute time in the past: the key is set and expires at once.
            d.remove(key);
            cx.store.get().touch(db, key);
        } else {
            store_string(cx, key, value, expire_at);
        }
    }
    if get {
        match old.flatten() {
            Some(v) => cx.out.bulk(&v),
            None => cx.out.null(),
        }
    } else if proceed {
        cx.out.ok();
    } else {
        cx.out.null();
    }
}

pub fn setnx(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let db = cx.db();
    if cx.store.get().db(db).contains(args.get(1)) {
        cx.out.int(0);
    } else {
        store_string(cx, args.get(1), args.get(2), Some(0));
        cx.out.int(1);
    }
}

fn setex_generic(cx: &mut Cx<'_, '_>, args: &Args<'_>, unit: &[u8], name: &str) {
    if let Some(at) = parse_expiry(cx, unit, args.get(2), name) {
        store_string(cx, args.get(1), args.get(3), Some(at));
        cx.out.ok();
    }
}

pub fn setex(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    setex_generic(cx, args, b"ex", "setex");
}

pub fn psetex(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    setex_generic(cx, args, b"px", "psetex");
}

/// The current string at `key` (copied), None when missing; replies WRONGTYPE on Err.
fn current_string(cx: &mut Cx<'_, '_>, key: &[u8]) -> Result<Option<Vec<u8>>, WrongType> {
    let db = cx.db();
    let r = cx
        .store
        .get()
        .db(db)
        .string(key)
        .map(|v| v.map(|v| v.to_vec()));
    if r.is_err() {
        cx.out.error(WRONGTYPE);
    }
    r
}

fn bulk_or_null(cx: &mut Cx<'_, '_>, v: Option<&[u8]>) {
    match v {
        Some(v) => cx.out.bulk(v),
        None => cx.out.null(),
    }
}

pub fn getset(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Ok(old) = current_string(cx, args.get(1)) else {
        return;
    };
    store_string(cx, args.get(1), args.get(2), Some(0));
    bulk_or_null(cx, old.as_deref());
}

pub fn getdel(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Ok(old) = current_string(cx, args.get(1)) else {
        return;
    };
    if old.is_some() {
        let db = cx.db();
        let store = cx.store.get();
        store.db(db).remove(args.get(1));
        store.touch(db, args.get(1));
    }
    bulk_or_null(cx, old.as_deref());
}

pub fn getex(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let key = args.get(1);
    let mut new_expiry: Option<i64> = None;
    let mut i = 2;
    while i < args.len() {
        let lower = args.get(i).to_ascii_lowercase();
        match lower.as_slice() {
            b"persist" if new_expiry.is_none() => new_expiry = Some(0),
            b"ex" | b"px" | b"exat" | b"pxat" if new_expiry.is_none() && i + 1 < args.len() => {
                let Some(at) = parse_expiry(cx, &lower, args.get(i + 1), "getex") else {
                    return;
                };
                new_expiry = Some(at);
                i += 1;
            }
            _ => {
                cx.out.error(SYNTAX);
                return;
            }
        }
        i += 1;
    }
    let Ok(value) = current_string(cx, key) else {
        return;
    };
    if value.is_some()
        && let Some(at) = new_expiry
    {
        let db = cx.db();
        let store = cx.store.get();
        if at != 0 && at <= now_ms() {
            store.db(db).remove(key);
        } else {
            store.db(db).set_expire(key, at);
        }
        store.touch(db, key);
    }
    bulk_or_null(cx, value.as_deref());
}

pub fn mget(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let db = cx.db();
    let d = cx.store.get().db(db);
    cx.out.array(args.len() - 1);
    for key in args.from(1) {
        match d.string(key) {
            Ok(Some(v)) => cx.out.bulk(v),
            _ => cx.out.null(),
        }
    }
}

fn mset_generic(cx: &mut Cx<'_, '_>, args: &Args<'_>, nx: bool) {
    if args.len().is_multiple_of(2) {
        let name = if nx { "msetnx" } else { "mset" };
        cx.out.error(&format!(
            "ERR wrong number of arguments for '{name}' command"
        ));
        return;
    }
    let db = cx.db();
    if nx {
        let d = cx.store.get().db(db);
        if args.from(1).step_by(2).any(|k| d.contains(k)) {
            cx.out.int(0);
            return;
        }
    }
    let mut i = 1;
    while i + 1 < args.len() {
        store_string(cx, args.get(i), args.get(i + 1), Some(0));
        i += 2;
    }
    if nx { cx.out.int(1) } else { cx.out.ok() }
}

pub fn mset(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    mset_generic(cx, args, false);
}

pub fn msetnx(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    mset_generic(cx, args, true);
}

pub fn append(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let db = cx.db();
    let (key, tail) = (args.get(1), args.get(2));
    let store = cx.store.get();
    match store.db(db).string(key) {
        Err(WrongType) => {
            cx.out.error(WRONGTYPE);
            return;
        }
        Ok(Some(v)) => {
            if v.len() + tail.len() > MAX_STRING {
                cx.out
                    .error("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
                return;
            }
            v.extend_from_slice(tail);
            let n = v.len();
            cx.out.int(n as i64);
        }
        Ok(None) => {
            store.db(db).set(key, Value::Str(tail.into()));
            cx.out.int(tail.len() as i64);
        }
    }
    store.touch(db, key);
}

pub fn strlen(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let db = cx.db();
    match cx.store.get().db(db).string(args.get(1)) {
        Ok(v) => cx.out.int(v.map_or(0, |v| v.len()) as i64),
        Err(WrongType) => cx.out.error(WRONGTYPE),
    }
}

pub fn getrange(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some(start) = int_arg(cx.out, args.get(2)) else {
        return;
    };
    let Some(end) = int_arg(cx.out, args.get(3)) else {
        return;
    };
    let db = cx.db();
    let value = match cx.store.get().db(db).string(args.get(1)) {
        Ok(Some(v)) => v,
        Ok(None) => {
            cx.out.bulk(b"");
            return;
        }
        Err(WrongType) => {
            cx.out.error(WRONGTYPE);
            return;
        }
    };
    let len = value.len() as i64;
    if start < 0 && end < 0 && start > end {
        cx.out.bulk(b"");
        return;
    }
    let start = if start < 0 {
        (len + start).max(0)
    } else {
        start
    };
    let end = if end < 0 {
        (len + end).max(0)
    } else {
        end.min(len - 1)
    };
    if start > end || len == 0 {
        cx.out.bulk(b"");
        return;
    }
    cx.out
        .bulk(value.get(start as usize..=end as usize).unwrap_or(&[]));
}

pub fn setrange(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some(offset) = int_arg(cx.out, args.get(2)) else {
        return;
    };
    if offset < 0 {
        cx.out.error("ERR offset is out of range");
        return;
    }
    let (key, patch) = (args.get(1), args.get(3));
    let offset = offset as usize;
    let db = cx.db();
    let store = cx.store.get();
    let Some(exists) = typed(cx.out, store.db(db).string(key)) else {
        return;
    };
    let exists = exists.map(|v| v.len());
    if patch.is_empty() {
        cx.out.int(exists.unwrap_or(0) as i64);
        return;
    }
    if offset.saturating_add(patch.len()) > MAX_STRING {
        cx.out
            .error("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
        return;
    }
    let Ok(v) = store.db(db).string_or_new(key) else {
        return;
    };
    let n = v.modify(|v| {
        if v.len() < offset + patch.len() {
            v.resize(offset + patch.len(), 0);
        }
        v[offset..offset + patch.len()].copy_from_slice(patch);
        v.len()
    });
    store.touch(db, key);
    cx.out.int(n as i64);
}

/// Adds `delta` to the integer at `key` in place, formatting back into the same buffer.
fn incr_by(cx: &mut Cx<'_, '_>, key: &[u8], delta: i64) {
    let db = cx.db();
    let store = cx.store.get();
    let d = store.db(db);
    let next = match d.get(key) {
        Some(Entry {
            value: Value::Str(v),
            ..
        }) => {
            let Some(current) = crate::num::parse_i64(v) else {
                cx.out.error(NOT_INTEGER);
                return;
            };
            let Some(next) = current.checked_add(delta) else {
                cx.out.error("ERR increment or decrement would overflow");
                return;
            };
            v.assign(itoa::Buffer::new().format(next).as_bytes());
            next
        }
        Some(_) => {
            cx.out.error(WRONGTYPE);
            return;
        }
        None => {
            d.set(
                key,
                Value::Str(itoa::Buffer::new().format(delta).as_bytes().into()),
            );
            delta
        }
    };
    store.touch(db, key);
    cx.out.int(next);
}

pub fn incr(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    incr_by(cx, args.get(1), 1);
}

pub fn decr(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    incr_by(cx, args.get(1), -1);
}

pub fn incrby(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    if let Some(n) = int_arg(cx.out, args.get(2)) {
        incr_by(cx, args.get(1), n);
    }
}

pub fn decrby(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some(n) = int_arg(cx.out, args.get(2)) else {
        return;
    };
    match n.checked_neg() {
        Some(neg) => incr_by(cx, args.get(1), neg),
        None => cx.out.error("ERR decrement would overflow"),
    }
}

pub fn incrbyfloat(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some(delta) = float_arg(cx.out, args.get(2)) else {
        return;
    };
    let key = args.get(1);
    let db = cx.db();
    let store = cx.store.get();
    let Some(current) = typed(cx.out, store.db(db).string(key)) else {
        return;
    };
    let Some(current) = current.map_or(Some(0.0), |v| crate::num::parse_f64(v)) else {
        cx.out.error(super::NOT_FLOAT);
        return;
    };
    let next = current + delta;
    if !next.is_finite() {
        cx.out.error("ERR increment would produce NaN or Infinity");
        return;
    }
    let mut text = Vec::with_capacity(24);
    crate::num::push_human(&mut text, next);
    cx.out.bulk(&text);
    store.db(db).set_keep_ttl(key, Value::Str(text.into()));
    store.touch(db, key);
}
