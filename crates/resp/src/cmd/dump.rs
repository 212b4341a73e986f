//! DUMP and RESTORE: keys in Redis's serialization format (`engine::rdb`), so they copy between redis-server and Sluice.

use super::{Args, Cx, SYNTAX, int_arg};
use crate::engine::memory::lru_clock;
use crate::engine::{AccessMode, now_ms, rdb};

pub fn dump(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let db = cx.db();
    let store = cx.store.get();
    match store.db(db).get(args.get(1)) {
        None => cx.out.null(),
        Some(entry) => cx.out.bulk(&rdb::dump(&entry.value)),
    }
}

/// RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]
pub fn restore(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let (mut replace, mut absttl) = (false, false);
    let (mut idle, mut freq): (Option<i64>, Option<i64>) = (None, None);
    let mut i = 4;
    while i < args.len() {
        let has_value = i + 1 < args.len();
        if args.is(i, "replace") {
            replace = true;
        } else if args.is(i, "absttl") {
            absttl = true;
        } else if args.is(i, "idletime") && has_value && freq.is_none() {
            let Some(n) = int_arg(cx.out, args.get(i + 1)) else {
                return;
            };
            if n < 0 {
                cx.out.error("ERR Invalid IDLETIME value, must be >= 0");
                return;
            }
            idle = Some(n);
            i += 1;
        } else if args.is(i, "freq") && has_value && idle.is_none() {
            let Some(n) = int_arg(cx.out, args.get(i + 1)) else {
                return;
            };
            if !(0..=255).contains(&n) {
                cx.out
                    .error("ERR Invalid FREQ value, must be >= 0 and <= 255");
                return;
            }
            freq = Some(n);
            i += 1;
        } else {
            cx.out.error(SYNTAX);
            return;
        }
        i += 1;
    }
    let db = cx.db();
    let key = args.get(1);
    if !replace && cx.store.get().db(db).contains(key) {
        cx.out.error("BUSYKEY Target key name already exists.");
        return;
    }
    let Some(ttl) = int_arg(cx.out, args.get(2)) else {
        return;
    };
    if ttl < 0 {
        cx.out.error("ERR Invalid TTL value, must be >= 0");
        return;
    }
    let value = match rdb::restore(args.get(3)) {
        Ok(v) => v,
        Err(e) => {
            cx.out.error(&e.to_string());
            return;
        }
    };
    let store = cx.store.get();
    let deleted = replace && store.db(db).remove(key).is_some();
    let expire_at = match ttl {
        0 => 0,
        t if absttl => t,
        t => now_ms().saturating_add(t),
    };
    if expire_at != 0 && expire_at <= now_ms() {
        // Already expired: the key is gone (as Redis, which replies OK all the same).
        if deleted {
            store.touch(db, key);
            store.key_event(db, crate::engine::notify::GENERIC, b"del", key);
        }
        cx.out.ok();
        return;
    }
    let d = store.db(db);
    let mut entry = d.new_entry(value, expire_at);
    match (d.access_mode, idle, freq) {
        (AccessMode::Lru, Some(seconds), _) => {
            let ticks = seconds.saturating_mul(1000) / crate::engine::memory::LRU_TICK_MS as i64;
            entry.access = lru_clock().wrapping_sub(u32::try_from(ticks).unwrap_or(u32::MAX));
        }
        (AccessMode::Lfu { .. }, _, Some(counter)) => {
            entry.access = (entry.access & !0xff) | counter as u32;
        }
        _ => {}
    }
    d.insert_entry(key, entry);
    store.touch(db, key);
    cx.out.ok();
}
