//! Generic key commands: DEL, EXISTS, TYPE, KEYS, SCAN, RENAME, COPY, MOVE, expiry and TTLs.

use super::{Args, Cx, NO_KEY, SYNTAX, int_arg};
use crate::engine::{Entry, Store, Value, now_ms};
use crate::reply::Aggregate;

pub fn del(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let db = cx.db();
    let store = cx.store.get();
    let mut removed = 0;
    for key in args.from(1) {
        if store.db(db).remove(key).is_some() {
            store.touch(db, key);
            removed += 1;
        }
    }
    cx.out.int(removed);
}

/// EXISTS and TOUCH: how many of the keys exist (repeats counted).
pub fn exists(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let db = cx.db();
    let d = cx.store.get().db(db);
    let n = args.from(1).filter(|k| d.contains(k)).count();
    cx.out.int(n as i64);
}

/// TOUCH: counts the keys that exist and marks them accessed.
pub fn touch(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let db = cx.db();
    let d = cx.store.get().db(db);
    let n = args.from(1).filter(|k| d.get(k).is_some()).count();
    cx.out.int(n as i64);
}

pub fn type_(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let db = cx.db();
    let name = cx
        .store
        .get()
        .db(db)
        .peek(args.get(1))
        .map_or("none", |e| e.value.type_name());
    cx.out.simple(name);
}

pub fn keys(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let db = cx.db();
    let pattern = args.get(1);
    let all = pattern == b"*";
    let out = &mut *cx.out;
    let deferred = out.begin_deferred(Aggregate::Array);
    let mut n = 0;
    cx.store.get().db(db).for_each_live_key(|k, _| {
        if all || crate::glob::matches(pattern, k, false) {
            out.bulk(k);
            n += 1;
        }
    });
    out.end_deferred(deferred, n);
}

/// Options shared by the SCAN family: MATCH, COUNT and (for SCAN) TYPE.
pub struct ScanOpts<'a> {
    pub pattern: Option<&'a [u8]>,
    pub count: usize,
    pub type_name: Option<String>,
}

/// Parses a cursor and the options after it; replies the error and returns None on failure.
pub fn scan_opts<'a>(
    cx: &mut Cx<'_, '_>,
    args: &Args<'a>,
    cursor_at: usize,
    allow_type: bool,
) -> Option<(u64, ScanOpts<'a>)> {
    let Some(cursor) = std::str::from_utf8(args.get(cursor_at))
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
    else {
        cx.out.error("ERR invalid cursor");
        return None;
    };
    let mut opts = ScanOpts {
        pattern: None,
        count: 10,
        type_name: None,
    };
    let mut i = cursor_at + 1;
    while i < args.len() {
        let has_value = i + 1 < args.len();
        if args.is(i, "match") && has_value {
            let p = args.get(i + 1);
            opts.pattern = (p != b"*").then_some(p);
        } else if args.is(i, "count") && has_value {
            let n = int_arg(cx.out, args.get(i + 1))?;
            if n < 1 {
                cx.out.error(SYNTAX);
                return None;
            }
            opts.count = usize::try_from(n).unwrap_or(usize::MAX);
        } else if allow_type && args.is(i, "type") && has_value {
            opts.type_name = Some(String::from_utf8_lossy(args.get(i + 1)).to_ascii_lowercase());
        } else {
            cx.out.error(SYNTAX);
            return None;
        }
        i += 2;
    }
    Some((cursor, opts))
}

/// Writes a SCAN reply: the next cursor and the elements.
pub fn scan_reply(out: &mut crate::reply::Out, next: u64, items: &[&[u8]]) {
    out.array(2);
    out.bulk_int(next as i64);
    out.array(items.len());
    for item in items {
        out.bulk(item);
    }
}

/// SCAN over a collection: a small one (as Redis's compact encodings) comes back whole and in
/// order in one call; a larger one walks [`crate::engine::scan_indexed`].
pub fn small_scan(len: usize, cursor: u64, count: usize, visit: impl FnMut(usize)) -> u64 {
    if cursor == 0 && len <= 128 {
        (0..len).for_each(visit);
        return 0;
    }
    crate::engine::scan_indexed(len, cursor, count, visit)
}

pub fn scan(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some((cursor, opts)) = scan_opts(cx, args, 1, true) else {
        return;
    };
    let db = cx.db();
    let d = cx.store.get().db(db);
    let mut found: Vec<Box<[u8]>> = Vec::new();
    let next = d.scan(cursor, opts.count, |k, e| {
        let type_ok = opts
            .type_name
            .as_deref()
            .is_none_or(|t| t == e.value.type_name());
        if type_ok
            && opts
                .pattern
                .is_none_or(|p| crate::glob::matches(p, k, false))
        {
            found.push(k.into());
        }
    });
    let refs: Vec<&[u8]> = found.iter().map(|k| &k[..]).collect();
    scan_reply(cx.out, next, &refs);
}

/// Moves the entry at `from` (database, key) to `to` (RENAME, MOVE), with its expiry; a moved
/// list wakes clients blocked on its new name.
fn transfer(store: &mut Store, from: (usize, &[u8]), to: (usize, &[u8])) {
    let Some(entry) = store.db(from.0).remove(from.1) else {
        return;
    };
    let is_list = matches!(entry.value, Value::List(_));
    store.db(to.0).insert_entry(to.1, entry);
    store.touch(from.0, from.1);
    store.touch(to.0, to.1);
    if is_list {
        store.list_pushed(to.0, to.1);
    }
}

fn rename_impl(cx: &mut Cx<'_, '_>, args: &Args<'_>, nx: bool) {
    let db = cx.db();
    let (src, dst) = (args.get(1), args.get(2));
    let store = cx.store.get();
    if !store.db(db).contains(src) {
        cx.out.error(NO_KEY);
        return;
    }
    if src == dst {
        if nx {
            cx.out.int(0)
        } else {
            cx.out.ok()
        }
        return;
    }
    if nx && store.db(db).contains(dst) {
        cx.out.int(0);
        return;
    }
    transfer(store, (db, src), (db, dst));
    if nx { cx.out.int(1) } else { cx.out.ok() }
}

pub fn rename(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    rename_impl(cx, args, false);
}

pub fn renamenx(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    rename_impl(cx, args, true);
}

pub fn copy(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let db = cx.db();
    let (src, dst) = (args.get(1), args.get(2));
    let mut target = db;
    let mut replace = false;
    let mut i = 3;
    while i < args.len() {
        if args.is(i, "replace") {
            replace = true;
            i += 1;
        } else if args.is(i, "db") && i + 1 < args.len() {
            let Some(n) = int_arg(cx.out, args.get(i + 1)) else {
                return;
            };
            match usize::try_from(n) {
                Ok(n) if n < cx.shared.databases => target = n,
                _ => {
                    cx.out.error("ERR DB index is out of range");
                    return;
                }
            }
            i += 2;
        } else {
            cx.out.error(SYNTAX);
            return;
        }
    }
    if src == dst && db == target {
        cx.out
            .error("ERR source and destination objects are the same");
        return;
    }
    let store = cx.store.get();
    let Some(entry) = store.db(db).get(src).cloned() else {
        cx.out.int(0);
        return;
    };
    if store.db(target).contains(dst) {
        if !replace {
            cx.out.int(0);
            return;
        }
        store.db(target).remove(dst);
    }
    let is_list = matches!(entry.value, Value::List(_));
    store.db(target).insert_entry(dst, entry);
    store.touch(target, dst);
    if is_list {
        store.list_pushed(target, dst);
    }
    cx.out.int(1);
}

pub fn move_(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let db = cx.db();
    let key = args.get(1);
    let target = match crate::num::parse_i64(args.get(2)).map(usize::try_from) {
        Some(Ok(n)) if n < cx.shared.databases => n,
        Some(_) => {
            cx.out.error("ERR DB index is out of range");
            return;
        }
        None => {
            cx.out.error(super::NOT_INTEGER);
            return;
        }
    };
    if target == db {
        cx.out
            .error("ERR source and destination objects are the same");
        return;
    }
    let store = cx.store.get();
    if !store.db(db).contains(key) || store.db(target).contains(key) {
        cx.out.int(0);
        return;
    }
    transfer(store, (db, key), (target, key));
    cx.out.int(1);
}

/// Shared body of EXPIRE, PEXPIRE, EXPIREAT and PEXPIREAT.
fn expire_generic(cx: &mut Cx<'_, '_>, args: &Args<'_>, name: &str, unit_ms: i64, absolute: bool) {
    let Some(amount) = int_arg(cx.out, args.get(2)) else {
        return;
    };
    let (mut nx, mut xx, mut gt, mut lt) = (false, false, false, false);
    for opt in args.from(3) {
        match opt.to_ascii_lowercase().as_slice() {
            b"nx" => nx = true,
            b"xx" => xx = true,
            b"gt" => gt = true,
            b"lt" => lt = true,
            _ => {
                cx.out.error(&format!(
                    "ERR Unsupported option {}",
                    String::from_utf8_lossy(opt)
                ));
                return;
            }
        }
    }
    if nx && (xx || gt || lt) {
        cx.out
            .error("ERR NX and XX, GT or LT options at the same time are not compatible");
        return;
    }
    if gt && lt {
        cx.out
            .error("ERR GT and LT options at the same time are not compatible");
        return;
    }
    let now = now_ms();
    let when = amount.checked_mul(unit_ms).and_then(|ms| {
        if absolute {
            Some(ms)
        } else {
            ms.checked_add(now)
        }
    });
    let Some(when) = when else {
        cx.out
            .error(&format!("ERR invalid expire time in '{name}' command"));
        return;
    };
    let db = cx.db();
    let key = args.get(1);
    let store = cx.store.get();
    let Some(entry) = store.db(db).get(key) else {
        cx.out.int(0);
        return;
    };
    let current = entry.expire_at;
    let allowed = if nx {
        current == 0
    } else if xx {
        current != 0 && (!gt || when > current) && (!lt || when < current)
    } else if gt {
        current != 0 && when > current
    } else if lt {
        current == 0 || when < current
    } else {
        true
    };
    if !allowed {
        cx.out.int(0);
        return;
    }
    if when <= now {
        store.db(db).remove(key);
        store.touch(db, key);
    } else {
        store.db(db).set_expire(key, when.max(1));
        // Only the key's row changes.
        store.touch_members(db, key, []);
    }
    cx.out.int(1);
}

pub fn expire(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    expire_generic(cx, args, "expire", 1000, false);
}

pub fn pexpire(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    expire_generic(cx, args, "pexpire", 1, false);
}

pub fn expireat(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    expire_generic(cx, args, "expireat", 1000, true);
}

pub fn pexpireat(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    expire_generic(cx, args, "pexpireat", 1, true);
}

/// The expiry of a key: None when missing, Some(0) when it has none.
fn expiry_of(cx: &mut Cx<'_, '_>, key: &[u8]) -> Option<i64> {
    let db = cx.db();
    cx.store.get().db(db).peek(key).map(|e: &Entry| e.expire_at)
}

fn ttl_generic(cx: &mut Cx<'_, '_>, args: &Args<'_>, ms: bool, absolute: bool) {
    let reply = match expiry_of(cx, args.get(1)) {
        None => -2,
        Some(0) => -1,
        Some(at) if absolute => {
            if ms {
                at
            } else {
                (at + 500) / 1000
            }
        }
        Some(at) => {
            let left = (at - now_ms()).max(0);
            if ms { left } else { (left + 500) / 1000 }
        }
    };
    cx.out.int(reply);
}

pub fn ttl(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    ttl_generic(cx, args, false, false);
}

pub fn pttl(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    ttl_generic(cx, args, true, false);
}

pub fn expiretime(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    ttl_generic(cx, args, false, true);
}

pub fn pexpiretime(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    ttl_generic(cx, args, true, true);
}

pub fn persist(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let db = cx.db();
    let key = args.get(1);
    let store = cx.store.get();
    let had = store.db(db).get(key).is_some_and(|e| e.expire_at != 0);
    if had {
        store.db(db).set_expire(key, 0);
        store.touch_members(db, key, []);
    }
    cx.out.int(i64::from(had));
}

pub fn randomkey(cx: &mut Cx<'_, '_>, _args: &Args<'_>) {
    let db = cx.db();
    match cx.store.get().db(db).random_key() {
        Some(k) => cx.out.bulk(&k),
        None => cx.out.null(),
    }
}
