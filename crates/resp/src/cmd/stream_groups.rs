//! Stream consumer-group commands: XGROUP, XACK, XPENDING, XCLAIM and XAUTOCLAIM.

use super::streams::{id_arg, interval_arg};
use super::{Args, Cx, SYNTAX, WRONGTYPE, int_arg};
use crate::engine::stream::Group;
use crate::engine::stream_read::{write_entry, write_id};
use crate::engine::{Stream, StreamId, Value, now_ms};
use crate::reply::Out;

pub(super) fn text(b: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(b)
}

/// Redis's reply when a container command's subcommand has the wrong shape.
pub(super) fn subcommand_syntax(out: &mut Out, cmd: &str, sub: &[u8]) {
    out.error(&format!(
        "ERR unknown subcommand or wrong number of arguments for '{}'. Try {cmd} HELP.",
        text(sub).chars().take(128).collect::<String>()
    ));
}

pub(super) fn help(out: &mut Out, cmd: &str, lines: &[&str]) {
    out.array(lines.len() + 3);
    out.simple(&format!(
        "{cmd} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    ));
    for line in lines {
        out.simple(line);
    }
    out.simple("HELP");
    out.simple("    Prints this help.");
}

/// The stream at `key` (None when missing) or None after replying WRONGTYPE; the outer Option
/// says whether to go on.
fn stream_of<'s>(
    cx: &'s mut Cx<'_, '_>,
    key: &[u8],
) -> Option<(Option<&'s mut Stream>, &'s mut Out)> {
    let db = cx.db();
    let out = &mut *cx.out;
    match cx.store.get().db(db).get(key).map(|e| &mut e.value) {
        Some(Value::Stream(s)) => Some((Some(s), out)),
        Some(_) => {
            out.error(WRONGTYPE);
            None
        }
        None => Some((None, out)),
    }
}

pub fn xgroup(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let sub = args.get(1).to_ascii_lowercase();
    let arity_ok = match sub.as_slice() {
        b"create" | b"setid" => args.len() >= 5,
        b"destroy" => args.len() == 4,
        b"createconsumer" | b"delconsumer" => args.len() == 5,
        b"help" => args.len() == 2,
        _ => {
            super::unknown_subcommand(cx.out, "xgroup", args.get(1));
            return;
        }
    };
    if !arity_ok {
        super::subcommand_arity(cx.out, &format!("xgroup|{}", String::from_utf8_lossy(&sub)));
        return;
    }
    if sub == b"help" {
        help(
            cx.out,
            "XGROUP",
            &[
                "CREATE <key> <groupname> <id|$> [option]",
                "    Create a new consumer group. Options are:",
                "    * MKSTREAM",
                "      Create the empty stream if it does not exist.",
                "    * ENTRIESREAD entries_read",
                "      Set the group's entries_read counter (internal use).",
                "CREATECONSUMER <key> <groupname> <consumer>",
                "    Create a new consumer in the specified group.",
                "DELCONSUMER <key> <groupname> <consumer>",
                "    Remove the specified consumer.",
                "DESTROY <key> <groupname>",
                "    Remove the specified group.",
                "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
                "    Set the current group ID and entries_read counter.",
            ],
        );
        return;
    }
    let create = sub == b"create";
    let setid = sub == b"setid";
    let mut mkstream = false;
    let mut entries_read: i64 = -1;
    let mut i = 5;
    while i < args.len() {
        if create && args.is(i, "mkstream") {
            mkstream = true;
            i += 1;
        } else if (create || setid) && args.is(i, "entriesread") && i + 1 < args.len() {
            let Some(n) = int_arg(cx.out, args.get(i + 1)) else {
                return;
            };
            if n < 0 && n != -1 {
                cx.out
                    .error("ERR value for ENTRIESREAD must be positive or -1");
                return;
            }
            entries_read = n;
            i += 2;
        } else {
            subcommand_syntax(cx.out, "XGROUP", args.get(1));
            return;
        }
    }
    let key = args.get(2);
    let group = args.get(3);
    let db = cx.db();
    let Some((stream, out)) = stream_of(cx, key) else {
        return;
    };
    if stream.is_none() && !mkstream {
        out.error("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.");
        return;
    }
    if let Some(s) = &stream
        && !create
        && sub != b"destroy"
        && !s.groups.contains_key(group)
    {
        out.error(&format!(
            "NOGROUP No such consumer group '{}' for key name '{}'",
            text(group),
            text(key)
        ));
        return;
    }
    if (create && args.len() > 8) || (setid && args.len() != 5 && args.len() != 7) {
        subcommand_syntax(out, "XGROUP", args.get(1));
        return;
    }
    let now = now_ms();
    match sub.as_slice() {
        b"create" => {
            let last = stream.as_ref().map_or(StreamId::MIN, |s| s.last_id);
            let id = if args.get(4) == b"$" {
                last
            } else {
                let Some(id) = id_arg(out, args.get(4), 0, true) else {
                    return;
                };
                id
            };
            let store = cx.store.get();
            let Ok(stream) = store.db(db).stream_or_new(key) else {
                return;
            };
            if stream.groups.contains_key(group) {
                cx.out.error("BUSYGROUP Consumer Group name already exists");
                return;
            }
            stream
                .groups
                .insert(group.into(), Group::new(id, entries_read));
            store.touch(db, key);
            cx.out.ok();
        }
        b"setid" => {
            let Some(stream) = stream else {
                return;
            };
            let id = if args.get(4) == b"$" {
                stream.last_id
            } else {
                let Some(id) = id_arg(out, args.get(4), 0, false) else {
                    return;
                };
                id
            };
            if let Some(g) = stream.groups.get_mut(group) {
                g.last_id = id;
                g.entries_read = entries_read;
            }
            out.ok();
            cx.store.get().touch(db, key);
        }
        b"destroy" => {
            let removed = stream.is_some_and(|s| s.groups.remove(group).is_some());
            out.int(i64::from(removed));
            if removed {
                cx.store.get().touch(db, key);
            }
        }
        b"createconsumer" => {
            let created = stream
                .and_then(|s| s.groups.get_mut(group))
                .is_some_and(|g| {
                    !g.consumers.contains_key(args.get(4)) && g.touch_consumer(args.get(4), now)
                });
            out.int(i64::from(created));
            if created {
                cx.store.get().changed_unwatched(db, key, 1);
            }
        }
        _ => {
            let pending = stream
                .and_then(|s| s.groups.get_mut(group))
                .and_then(|g| g.delete_consumer(args.get(4)))
                .unwrap_or(0);
            out.int(pending as i64);
            cx.store.get().changed_unwatched(db, key, 1);
        }
    }
}

pub fn xack(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some((stream, out)) = stream_of(cx, args.get(1)) else {
        return;
    };
    let Some(group) = stream.and_then(|s| s.groups.get_mut(args.get(2))) else {
        out.int(0);
        return;
    };
    let mut ids = Vec::with_capacity(args.len() - 3);
    for arg in args.from(3) {
        let Some(id) = id_arg(out, arg, 0, true) else {
            return;
        };
        ids.push(id);
    }
    let acked = ids.into_iter().filter(|id| group.ack(*id)).count();
    out.int(acked as i64);
    if acked > 0 {
        let db = cx.db();
        cx.store
            .get()
            .changed_unwatched(db, args.get(1), acked as u64);
    }
}

fn nogroup(out: &mut Out, key: &[u8], group: &[u8]) {
    out.error(&format!(
        "NOGROUP No such key '{}' or consumer group '{}'",
        text(key),
        text(group)
    ));
}

pub fn xpending(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let argc = args.len();
    if argc != 3 && !(6..=9).contains(&argc) {
        cx.out.error(SYNTAX);
        return;
    }
    let mut range = None;
    if argc >= 6 {
        let mut at = 3;
        let mut min_idle = 0;
        if args.is(3, "idle") {
            let Some(n) = int_arg(cx.out, args.get(4)) else {
                return;
            };
            min_idle = n;
            if argc < 8 {
                cx.out.error(SYNTAX);
                return;
            }
            at += 2;
        }
        let Some(count) = int_arg(cx.out, args.get(at + 2)) else {
            return;
        };
        let Some(start) = interval_arg(cx.out, args.get(at), false) else {
            return;
        };
        let Some(end) = interval_arg(cx.out, args.get(at + 1), true) else {
            return;
        };
        let consumer = (at + 3 < argc).then(|| args.get(at + 3));
        range = Some((start, end, count.max(0), min_idle, consumer));
    }
    let (key, group_name) = (args.get(1), args.get(2));
    let Some((stream, out)) = stream_of(cx, key) else {
        return;
    };
    let Some(group) = stream.and_then(|s| s.groups.get(group_name)) else {
        nogroup(out, key, group_name);
        return;
    };
    let Some((start, end, count, min_idle, consumer)) = range else {
        out.array(4);
        out.int(group.pel.len() as i64);
        match (group.pel.keys().next(), group.pel.keys().next_back()) {
            (Some(&first), Some(&last)) => {
                write_id(out, first);
                write_id(out, last);
                let owners: Vec<_> = group
                    .consumers
                    .iter()
                    .filter(|(_, c)| !c.pel.is_empty())
                    .collect();
                out.array(owners.len());
                for (name, c) in owners {
                    out.array(2);
                    out.bulk(name);
                    out.bulk_int(c.pel.len() as i64);
                }
            }
            _ => {
                out.null();
                out.null();
                out.null_array();
            }
        }
        return;
    };
    let ids: Vec<StreamId> = match consumer {
        Some(name) => match group.consumers.get(name) {
            Some(c) => c.pel.range(start..=end.max(start)).copied().collect(),
            None => {
                out.array(0);
                return;
            }
        },
        None => group
            .pel
            .range(start..=end.max(start))
            .map(|(id, _)| *id)
            .collect(),
    };
    let now = now_ms();
    let mut rows = Vec::new();
    for id in ids.into_iter().filter(|id| *id <= end) {
        if rows.len() as i64 >= count {
            break;
        }
        let Some(nack) = group.pel.get(&id) else {
            continue;
        };
        if min_idle != 0 && now - nack.delivery_time < min_idle {
            continue;
        }
        rows.push((id, nack));
    }
    out.array(rows.len());
    for (id, nack) in rows {
        out.array(4);
        write_id(out, id);
        out.bulk(&nack.consumer);
        out.int((now - nack.delivery_time).max(0));
        out.int(i64::try_from(nack.delivery_count).unwrap_or(i64::MAX));
    }
}

/// Parses a non-negative-or-clamped integer with a command-specific error text.
fn ll_or(out: &mut Out, arg: &[u8], error: &str) -> Option<i64> {
    let v = crate::num::parse_i64(arg);
    if v.is_none() {
        out.error(error);
    }
    v
}

pub fn xclaim(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let (key, group_name, consumer) = (args.get(1), args.get(2), args.get(3));
    let db = cx.db();
    {
        let Some((stream, out)) = stream_of(cx, key) else {
            return;
        };
        if !stream.is_some_and(|s| s.groups.contains_key(group_name)) {
            nogroup(out, key, group_name);
            return;
        }
    }
    let Some(min_idle) = ll_or(
        cx.out,
        args.get(4),
        "ERR Invalid min-idle-time argument for XCLAIM",
    ) else {
        return;
    };
    let min_idle = min_idle.max(0);
    let mut ids = Vec::new();
    let mut j = 5;
    while j < args.len() {
        match super::streams::parse_id(args.get(j), 0, true) {
            Some(id) => ids.push(id),
            None => break,
        }
        j += 1;
    }
    let now = now_ms();
    let (mut force, mut justid) = (false, false);
    let mut delivery_time: Option<i64> = None;
    let mut retry_count: Option<i64> = None;
    let mut last_id = StreamId::MIN;
    while j < args.len() {
        let more = args.len() - 1 - j;
        if args.is(j, "force") {
            force = true;
        } else if args.is(j, "justid") {
            justid = true;
        } else if args.is(j, "idle") && more > 0 {
            j += 1;
            let Some(n) = ll_or(
                cx.out,
                args.get(j),
                "ERR Invalid IDLE option argument for XCLAIM",
            ) else {
                return;
            };
            delivery_time = Some(now - n);
        } else if args.is(j, "time") && more > 0 {
            j += 1;
            let Some(n) = ll_or(
                cx.out,
                args.get(j),
                "ERR Invalid TIME option argument for XCLAIM",
            ) else {
                return;
            };
            delivery_time = Some(n);
        } else if args.is(j, "retrycount") && more > 0 {
            j += 1;
            let Some(n) = ll_or(
                cx.out,
                args.get(j),
                "ERR Invalid RETRYCOUNT option argument for XCLAIM",
            ) else {
                return;
            };
            retry_count = Some(n);
        } else if args.is(j, "lastid") && more > 0 {
            j += 1;
            let Some(id) = id_arg(cx.out, args.get(j), 0, true) else {
                return;
            };
            last_id = id;
        } else {
            cx.out.error(&format!(
                "ERR Unrecognized XCLAIM option '{}'",
                text(args.get(j))
            ));
            return;
        }
        j += 1;
    }
    let delivery_time = match delivery_time {
        Some(t) if t >= 0 && t <= now => t,
        _ => now,
    };
    let store = cx.store.get();
    let Ok(Some(stream)) = store.db(db).stream(key) else {
        return;
    };
    let mut claimed = Vec::new();
    let mut changed = 0u64;
    {
        let exists: Vec<bool> = ids.iter().map(|id| stream.contains(*id)).collect();
        let Some(group) = stream.groups.get_mut(group_name) else {
            return;
        };
        if last_id > group.last_id {
            group.last_id = last_id;
            changed += 1;
        }
        let mut consumer_ready = false;
        for (id, exists) in ids.iter().copied().zip(exists) {
            if !exists {
                if group.ack(id) {
                    changed += 1;
                }
                continue;
            }
            let forced = force && !group.pel.contains_key(&id);
            if !forced {
                let Some(nack) = group.pel.get(&id) else {
                    continue;
                };
                if min_idle != 0 && now - nack.delivery_time < min_idle {
                    continue;
                }
            }
            if !consumer_ready {
                group.touch_consumer(consumer, now);
                consumer_ready = true;
            }
            if forced {
                group.deliver(id, consumer, delivery_time);
            }
            group.reassign(id, consumer);
            if let Some(nack) = group.pel.get_mut(&id) {
                nack.delivery_time = delivery_time;
                match retry_count {
                    Some(n) if n >= 0 => nack.delivery_count = n as u64,
                    _ if !justid => nack.delivery_count += 1,
                    _ => {}
                }
            }
            claimed.push(id);
            changed += 1;
        }
    }
    cx.out.array(claimed.len());
    for id in claimed {
        if justid {
            write_id(cx.out, id);
        } else if let Some(entry) = stream.get(id) {
            write_entry(cx.out, &entry);
        }
    }
    store.changed_unwatched(db, key, changed);
}

pub fn xautoclaim(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let (key, group_name, consumer) = (args.get(1), args.get(2), args.get(3));
    let Some(min_idle) = ll_or(
        cx.out,
        args.get(4),
        "ERR Invalid min-idle-time argument for XAUTOCLAIM",
    ) else {
        return;
    };
    let min_idle = min_idle.max(0);
    let Some(start) = interval_arg(cx.out, args.get(5), false) else {
        return;
    };
    let mut count: i64 = 100;
    let mut justid = false;
    let mut j = 6;
    while j < args.len() {
        if args.is(j, "count") && j + 1 < args.len() {
            let max = i64::MAX / 16;
            match crate::num::parse_i64(args.get(j + 1)) {
                Some(n) if (1..=max).contains(&n) => count = n,
                Some(_) => {
                    cx.out.error("ERR COUNT must be > 0");
                    return;
                }
                None => {
                    cx.out.error(super::NOT_INTEGER);
                    return;
                }
            }
            j += 1;
        } else if args.is(j, "justid") {
            justid = true;
        } else {
            cx.out.error(SYNTAX);
            return;
        }
        j += 1;
    }
    let db = cx.db();
    {
        let Some((stream, out)) = stream_of(cx, key) else {
            return;
        };
        if !stream.is_some_and(|s| s.groups.contains_key(group_name)) {
            nogroup(out, key, group_name);
            return;
        }
    }
    let store = cx.store.get();
    let Ok(Some(stream)) = store.db(db).stream(key) else {
        return;
    };
    let now = now_ms();
    let mut attempts = count.saturating_mul(10);
    let mut claimed = Vec::new();
    let mut deleted = Vec::new();
    let mut next = StreamId::MIN;
    let pending: Vec<(StreamId, i64)> = match stream.groups.get(group_name) {
        Some(g) => g
            .pel
            .range(start..)
            .map(|(id, n)| (*id, n.delivery_time))
            .collect(),
        None => return,
    };
    let exists: Vec<bool> = pending.iter().map(|(id, _)| stream.contains(*id)).collect();
    let Some(group) = stream.groups.get_mut(group_name) else {
        return;
    };
    let mut consumer_ready = false;
    let mut k = 0;
    while attempts > 0 && count > 0 && k < pending.len() {
        attempts -= 1;
        let (id, delivered) = pending[k];
        k += 1;
        if !exists[k - 1] {
            group.ack(id);
            deleted.push(id);
            count -= 1;
            continue;
        }
        if min_idle != 0 && now - delivered < min_idle {
            continue;
        }
        if !consumer_ready {
            group.touch_consumer(consumer, now);
            consumer_ready = true;
        }
        group.reassign(id, consumer);
        if let Some(nack) = group.pel.get_mut(&id) {
            nack.delivery_time = now;
            if !justid {
                nack.delivery_count += 1;
            }
        }
        claimed.push(id);
        count -= 1;
    }
    if let Some(&(id, _)) = pending.get(k) {
        next = id;
    }
    let out = &mut *cx.out;
    out.array(3);
    write_id(out, next);
    out.array(claimed.len());
    for id in &claimed {
        if justid {
            write_id(out, *id);
        } else if let Some(entry) = stream.get(*id) {
            write_entry(out, &entry);
        }
    }
    out.array(deleted.len());
    for id in &deleted {
        write_id(out, *id);
    }
    store.changed_unwatched(db, key, (claimed.len() + deleted.len()) as u64);
}
