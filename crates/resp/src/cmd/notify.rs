//! Keyspace notifications: the events each command fires for the keys it changed (Redis's names and classes), and publishing them through the hub.
//!
//! Handlers report every change with `Store::touch`; while notifications are on, the store
//! also lists the keys touched, and after the command this module names the event of each
//! (from the command and, for two-key commands, which argument the key was), adding `del`
//! when the change emptied the key, as Redis does.

use super::{Args, Cx};
use crate::engine::Key;
use crate::engine::notify::{
    self, GENERIC, HASH, KEYEVENT, KEYSPACE, KeyEvent, LIST, SET, STREAM, STRING, ZSET,
};

type Events = Vec<(u32, &'static [u8])>;

/// Events removing elements: when the key is gone afterwards, `del` follows them.
const EMPTYING: &[&[u8]] = &[
    b"lpop",
    b"rpop",
    b"lrem",
    b"ltrim",
    b"srem",
    b"spop",
    b"hdel",
    b"zrem",
    b"zremrangebyscore",
    b"zremrangebyrank",
    b"zremrangebylex",
    b"zpopmin",
    b"zpopmax",
];

/// Events that already say the key left.
const LEAVING: &[&[u8]] = &[b"del", b"rename_from", b"move_from"];

/// The event of a pop from `left` (`lpop`) or the right (`rpop`).
fn pop(left: bool) -> (u32, &'static [u8]) {
    (LIST, if left { b"lpop" } else { b"rpop" })
}

fn push(left: bool) -> (u32, &'static [u8]) {
    (LIST, if left { b"lpush" } else { b"rpush" })
}

/// Whether any argument from `from` on is `word` (options such as EX, INCR, STORE).
fn has_option(args: &Args<'_>, from: usize, word: &str) -> bool {
    (from..args.len()).any(|i| args.is(i, word))
}

/// The events `name` fired on `key` of database `db` (`own_db` is the client's); the
/// caller adds `del` when the change emptied the key.
fn events_for(name: &str, args: &Args<'_>, own_db: usize, db: usize, key: &[u8]) -> Events {
    let first = args.get(1) == key && db == own_db;
    let one = |class, event: &'static [u8]| vec![(class, event)];
    match name {
        "set" => {
            let mut e = one(STRING, b"set");
            if ["ex", "px", "exat", "pxat"]
                .iter()
                .any(|o| has_option(args, 3, o))
            {
                e.push((GENERIC, b"expire"));
            }
            e
        }
        "setex" | "psetex" => vec![(STRING, b"set"), (GENERIC, b"expire")],
        "setnx" | "getset" | "mset" | "msetnx" => one(STRING, b"set"),
        "getdel" | "del" | "unlink" => one(GENERIC, b"del"),
        "getex" => {
            if has_option(args, 2, "persist") {
                one(GENERIC, b"persist")
            } else {
                one(GENERIC, b"expire")
            }
        }
        "append" => one(STRING, b"append"),
        "setrange" => one(STRING, b"setrange"),
        "incr" | "decr" | "incrby" | "decrby" => one(STRING, b"incrby"),
        "incrbyfloat" => one(STRING, b"incrbyfloat"),
        "setbit" | "bitfield" => one(STRING, b"setbit"),
        "bitop" => one(STRING, b"set"),
        "pfadd" | "pfmerge" => one(STRING, b"pfadd"),
        "lpush" | "lpushx" => one(LIST, b"lpush"),
        "rpush" | "rpushx" => one(LIST, b"rpush"),
        "lpop" | "blpop" => one(LIST, b"lpop"),
        "rpop" | "brpop" => one(LIST, b"rpop"),
        "lmpop" | "blmpop" => {
            let left = (2..args.len()).any(|i| args.is(i, "left"));
            vec![pop(left)]
        }
        "linsert" => one(LIST, b"linsert"),
        "lset" => one(LIST, b"lset"),
        "lrem" => one(LIST, b"lrem"),
        "ltrim" => one(LIST, b"ltrim"),
        "rpoplpush" | "brpoplpush" => {
            if first {
                vec![pop(false)]
            } else {
                vec![push(true)]
            }
        }
        "lmove" | "blmove" => {
            // A key moved onto itself fires both.
            let mut e = Vec::new();
            if first {
                e.push(pop(args.is(3, "left")));
            }
            if args.get(2) == key {
                e.push(push(args.is(4, "left")));
            }
            e
        }
        "sadd" => one(SET, b"sadd"),
        "srem" => one(SET, b"srem"),
        "spop" => one(SET, b"spop"),
        "smove" => {
            if first {
                one(SET, b"srem")
            } else {
                one(SET, b"sadd")
            }
        }
        "sinterstore" => one(SET, b"sinterstore"),
        "sunionstore" => one(SET, b"sunionstore"),
        "sdiffstore" => one(SET, b"sdiffstore"),
        "hset" | "hsetnx" | "hmset" => one(HASH, b"hset"),
        "hincrby" => one(HASH, b"hincrby"),
        "hincrbyfloat" => one(HASH, b"hincrbyfloat"),
        "hdel" => one(HASH, b"hdel"),
        "zadd" => {
            if has_option(args, 2, "incr") {
                one(ZSET, b"zincr")
            } else {
                one(ZSET, b"zadd")
            }
        }
        "geoadd" => one(ZSET, b"zadd"),
        "zincrby" => one(ZSET, b"zincr"),
        "zrem" => one(ZSET, b"zrem"),
        "zremrangebyscore" => one(ZSET, b"zremrangebyscore"),
        "zremrangebyrank" => one(ZSET, b"zremrangebyrank"),
        "zremrangebylex" => one(ZSET, b"zremrangebylex"),
        "zpopmin" | "bzpopmin" => one(ZSET, b"zpopmin"),
        "zpopmax" | "bzpopmax" => one(ZSET, b"zpopmax"),
        "zmpop" | "bzmpop" => {
            if (2..args.len()).any(|i| args.is(i, "max")) {
                one(ZSET, b"zpopmax")
            } else {
                one(ZSET, b"zpopmin")
            }
        }
        "zunionstore" => one(ZSET, b"zunionstore"),
        "zinterstore" => one(ZSET, b"zinterstore"),
        "zdiffstore" => one(ZSET, b"zdiffstore"),
        "zrangestore" => one(ZSET, b"zrangestore"),
        "georadius" | "georadiusbymember" => one(ZSET, b"georadiusstore"),
        "geosearchstore" => one(ZSET, b"geosearchstore"),
        "xadd" => {
            let mut e = one(STREAM, b"xadd");
            if has_option(args, 2, "maxlen") || has_option(args, 2, "minid") {
                e.push((STREAM, b"xtrim"));
            }
            e
        }
        "xtrim" => one(STREAM, b"xtrim"),
        "xdel" => one(STREAM, b"xdel"),
        "xsetid" => one(STREAM, b"xsetid"),
        "xgroup" => match args.get(1).to_ascii_lowercase().as_slice() {
            b"create" => one(STREAM, b"xgroup-create"),
            b"setid" => one(STREAM, b"xgroup-setid"),
            b"destroy" => one(STREAM, b"xgroup-destroy"),
            _ => Vec::new(),
        },
        "expire" | "pexpire" | "expireat" | "pexpireat" => one(GENERIC, b"expire"),
        "persist" => one(GENERIC, b"persist"),
        "rename" | "renamenx" => {
            if first {
                one(GENERIC, b"rename_from")
            } else {
                one(GENERIC, b"rename_to")
            }
        }
        "move" => {
            if db == own_db {
                one(GENERIC, b"move_from")
            } else {
                one(GENERIC, b"move_to")
            }
        }
        "copy" => one(GENERIC, b"copy_to"),
        "restore" => one(GENERIC, b"restore"),
        "sort" => one(LIST, b"sortstore"),
        _ => Vec::new(),
    }
}

/// Queues the events of the command just run for the keys it touched.
pub fn command_events(cx: &mut Cx<'_, '_>, name: &str, args: &Args<'_>) {
    let own_db = cx.db();
    let store = cx.store.get();
    let touched = store.take_touched();
    let mut last: Option<&(usize, crate::engine::Key)> = None;
    for t in &touched {
        // A key touched twice by one command (a list refilled, MSET k v k v) fires once.
        if last == Some(t) {
            continue;
        }
        last = Some(t);
        let (db, key) = t;
        let mut events = events_for(name, args, own_db, *db, key);
        if events.is_empty() {
            continue;
        }
        if !store.db(*db).contains(key) {
            let (_, event) = events[0];
            if EMPTYING.contains(&event) {
                events.push((GENERIC, b"del"));
            } else if !LEAVING.contains(&event) {
                // Stored an empty result, or an expiry in the past: the key was deleted.
                events = vec![(GENERIC, b"del")];
            }
        }
        for (class, event) in events {
            store.key_event(*db, class, event, key);
        }
    }
}

/// Publishes the queued events through the hub.
pub fn publish_events(cx: &Cx<'_, '_>, events: Vec<KeyEvent>, flags: u32) {
    publish(&cx.shared.hub, events, flags);
}

/// Publishes `events` (also used by the expiry cron, which has no client).
pub(crate) fn publish(
    hub: &parking_lot::Mutex<crate::hub::Hub>,
    events: Vec<KeyEvent>,
    flags: u32,
) {
    if events.is_empty() || flags & (KEYSPACE | KEYEVENT) == 0 {
        return;
    }
    let hub = hub.lock();
    for event in &events {
        for (channel, message) in notify::publications(flags, event) {
            hub.publish(&channel, &message);
        }
    }
}

/// Where a group's consumer may be created (XREADGROUP, XCLAIM, XAUTOCLAIM, XGROUP
/// CREATECONSUMER) or deleted (XGROUP DELCONSUMER) by the command: each stream key with whether
/// the consumer exists before it runs, so that [`consumer_events`] can tell what changed.
/// (These commands change consumers without `Store::touch`.)
pub fn consumers_before(cx: &mut Cx<'_, '_>, name: &str, args: &Args<'_>) -> Vec<(Key, bool)> {
    let keys: Vec<&[u8]> = match name {
        "xgroup" if args.is(1, "createconsumer") || args.is(1, "delconsumer") => {
            vec![args.get(2)]
        }
        "xclaim" | "xautoclaim" => vec![args.get(1)],
        "xreadgroup" => {
            let Some(at) = (1..args.len()).find(|&i| args.is(i, "streams")) else {
                return Vec::new();
            };
            let rest: Vec<&[u8]> = args.from(at + 1).collect();
            rest[..rest.len() / 2].to_vec()
        }
        _ => return Vec::new(),
    };
    let db = cx.db();
    let store = cx.store.get();
    if !store.notifies(STREAM) {
        return Vec::new();
    }
    let (group, consumer) = group_and_consumer(name, args);
    keys.into_iter()
        .map(|key| {
            let exists = has_consumer(store.db(db), key, group, consumer);
            (Key::from(key), exists)
        })
        .collect()
}

/// The group and consumer arguments: 2 and 3 of XREADGROUP, XCLAIM and XAUTOCLAIM, 3 and 4
/// of XGROUP's subcommands.
fn group_and_consumer<'a>(name: &str, args: &Args<'a>) -> (&'a [u8], &'a [u8]) {
    let at = usize::from(name == "xgroup") + 2;
    (args.get(at), args.get(at + 1))
}

fn has_consumer(db: &mut crate::engine::Db, key: &[u8], group: &[u8], consumer: &[u8]) -> bool {
    matches!(db.stream(key), Ok(Some(s))
        if s.groups.get(group).is_some_and(|g| g.consumers.contains_key(consumer)))
}

/// Queues `xgroup-createconsumer` / `xgroup-delconsumer` for the consumers the command
/// created or deleted (see [`consumers_before`]).
pub fn consumer_events(cx: &mut Cx<'_, '_>, name: &str, args: &Args<'_>, before: Vec<(Key, bool)>) {
    if before.is_empty() {
        return;
    }
    let (group, consumer) = group_and_consumer(name, args);
    let db = cx.db();
    let store = cx.store.get();
    for (key, existed) in before {
        let exists = has_consumer(store.db(db), &key, group, consumer);
        if exists && !existed {
            store.key_event(db, STREAM, b"xgroup-createconsumer", &key);
        } else if existed && !exists {
            store.key_event(db, STREAM, b"xgroup-delconsumer", &key);
        }
    }
}
