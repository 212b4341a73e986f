//! Looking inside the keyspace: OBJECT, MEMORY and the DEBUG subcommands Redis's tests use.

use std::sync::atomic::Ordering;
use std::time::Duration;

use super::{Args, Cx, NO_KEY, SYNTAX, int_arg, subcommand_arity, unknown_subcommand};
use crate::engine::usage::{self, EncodingLimits};
use crate::engine::{Entry, Value};

/// Replies a HELP list: the first line, then the subcommands, as status lines.
fn help(cx: &mut Cx<'_, '_>, lines: &[&str]) {
    cx.out.array(lines.len());
    for line in lines {
        cx.out.simple(line);
    }
}

/// Redis shares the integers 0..10000 between keys (refcount INT_MAX) unless an LRU or LFU
/// policy needs a clock per key.
const SHARED_INTEGERS: i64 = 10_000;
const SHARED_REFCOUNT: i64 = i32::MAX as i64;

/// The `*-max-*` thresholds, from the parameters (their old ziplist names are aliases).
fn encoding_limits(cx: &Cx<'_, '_>) -> EncodingLimits {
    let params = cx.shared.params.read();
    let get = |name: &str, default: usize| {
        params
            .get(name)
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(default)
    };
    let d = EncodingLimits::default();
    EncodingLimits {
        hash_entries: get("hash-max-listpack-entries", d.hash_entries),
        hash_value: get("hash-max-listpack-value", d.hash_value),
        set_intset_entries: get("set-max-intset-entries", d.set_intset_entries),
        zset_entries: get("zset-max-listpack-entries", d.zset_entries),
        zset_value: get("zset-max-listpack-value", d.zset_value),
    }
}

fn policy(cx: &Cx<'_, '_>) -> String {
    cx.shared
        .params
        .read()
        .get("maxmemory-policy")
        .unwrap_or("noeviction")
        .to_owned()
}

/// Whether Redis would share this value's object (small integers without an LRU/LFU policy).
fn shared_integer(value: &Value, policy: &str) -> bool {
    let Value::Str(s) = value else { return false };
    let lru_or_lfu = policy.contains("lru") || policy.contains("lfu");
    !lru_or_lfu
        && crate::num::parse_i64(s).is_some_and(|n| {
            (0..SHARED_INTEGERS).contains(&n) && n.to_string().as_bytes() == s.as_slice()
        })
}

/// The entry at `key` in the client's database, or the null reply.
fn with_entry<T>(cx: &mut Cx<'_, '_>, key: &[u8], f: impl FnOnce(&Entry) -> T) -> Option<T> {
    let db = cx.db();
    let found = cx.store.get().db(db).peek(key).map(f);
    if found.is_none() {
        cx.out.null();
    }
    found
}

pub fn object(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let sub = args.get(1).to_ascii_lowercase();
    let key = args.get(2);
    match (sub.as_slice(), args.len()) {
        (b"encoding", 3) => {
            let limits = encoding_limits(cx);
            if let Some(name) = with_entry(cx, key, |e| usage::encoding(&e.value, &limits)) {
                cx.out.bulk(name.as_bytes());
            }
        }
        (b"refcount", 3) => {
            let policy = policy(cx);
            if let Some(shared) = with_entry(cx, key, |e| shared_integer(&e.value, &policy)) {
                cx.out.int(if shared { SHARED_REFCOUNT } else { 1 });
            }
        }
        (b"idletime", 3) => {
            if policy(cx).contains("lfu") {
                cx.out.error("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.");
                return;
            }
            if let Some(idle_ms) = with_entry(cx, key, |e| crate::engine::memory::idle_ms(e.access))
            {
                cx.out
                    .int(i64::try_from(idle_ms / 1000).unwrap_or(i64::MAX));
            }
        }
        (b"freq", 3) => {
            if !policy(cx).contains("lfu") {
                cx.out.error("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.");
                return;
            }
            let db = cx.db();
            let decay = match cx.store.get().db(db).access_mode {
                crate::engine::AccessMode::Lfu { decay_minutes, .. } => decay_minutes,
                crate::engine::AccessMode::Lru => 0,
            };
            if let Some(freq) = with_entry(cx, key, |e| {
                crate::engine::memory::lfu_decayed(e.access, decay)
            }) {
                cx.out.int(i64::from(freq));
            }
        }
        (b"help", 2) => help(
            cx,
            &[
                "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                "ENCODING <key>",
                "    Return the kind of internal representation used in order to store the value",
                "    associated with a <key>.",
                "FREQ <key>",
                "    Return the access frequency index of the <key>. The returned integer is",
                "    proportional to the logarithm of the recent access frequency of the key.",
                "IDLETIME <key>",
                "    Return the idle time of the <key>, that is the approximated number of",
                "    seconds elapsed since the last access to the key.",
                "REFCOUNT <key>",
                "    Return the number of references of the value associated with the specified",
                "    <key>.",
                "HELP",
                "    Print this help.",
            ],
        ),
        (b"encoding" | b"refcount" | b"idletime" | b"freq" | b"help", _) => {
            subcommand_arity(cx.out, &format!("object|{}", String::from_utf8_lossy(&sub)));
        }
        _ => unknown_subcommand(cx.out, "object", args.get(1)),
    }
}

/// MEMORY USAGE's default sample of a collection's elements, as Redis's.
const USAGE_SAMPLES: usize = 5;

pub fn memory(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let sub = args.get(1).to_ascii_lowercase();
    match (sub.as_slice(), args.len()) {
        (b"usage", n) if n >= 3 => {
            let mut samples = USAGE_SAMPLES;
            let mut i = 3;
            while i < n {
                if args.is(i, "samples") && i + 1 < n {
                    let Some(v) = int_arg(cx.out, args.get(i + 1)) else {
                        return;
                    };
                    // Redis: 0 walks every element; negative counts are refused as syntax.
                    if v < 0 {
                        cx.out.error(SYNTAX);
                        return;
                    }
                    samples = usize::try_from(v).unwrap_or(usize::MAX);
                    i += 2;
                } else {
                    cx.out.error(SYNTAX);
                    return;
                }
            }
            let key = args.get(2);
            if let Some(bytes) = with_entry(cx, key, |e| usage::entry_bytes(key, e, samples)) {
                cx.out.int(bytes as i64);
            }
        }
        (b"stats", 2) => memory_stats(cx),
        (b"doctor", 2) => {
            let (keys, bytes) = dataset(cx);
            let text = if keys == 0 {
                "The dataset is empty: there is nothing to diagnose yet.".to_owned()
            } else {
                format!(
                    "No memory problem found: {keys} keys hold about {bytes} bytes, and Sluice \
                     keeps no fragmentation or peak figures that would point at one."
                )
            };
            cx.out.verbatim(text.as_bytes());
        }
        (b"malloc-stats", 2) => cx
            .out
            .verbatim(b"Stats not supported for the current allocator"),
        (b"purge", 2) => cx.out.ok(),
        (b"help", 2) => help(
            cx,
            &[
                "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                "DOCTOR",
                "    Return memory problems reports.",
                "MALLOC-STATS",
                "    Return internal statistics report from the memory allocator.",
                "PURGE",
                "    Attempt to purge dirty pages for reclamation by the allocator.",
                "STATS",
                "    Return information about the memory usage of the server.",
                "USAGE <key> [SAMPLES <count>]",
                "    Return memory in bytes used by <key> and its value. Nested values are",
                "    sampled up to <count> times (default: 5, 0 means sample all).",
                "HELP",
                "    Print this help.",
            ],
        ),
        (b"usage" | b"stats" | b"doctor" | b"malloc-stats" | b"purge" | b"help", _) => {
            subcommand_arity(cx.out, &format!("memory|{}", String::from_utf8_lossy(&sub)));
        }
        _ => unknown_subcommand(cx.out, "memory", args.get(1)),
    }
}

/// Keys and their estimated bytes over every database (sampled per collection).
fn dataset(cx: &mut Cx<'_, '_>) -> (usize, usize) {
    let store = cx.store.get();
    let mut keys = 0;
    let mut bytes = 0;
    for db in store.dbs() {
        for (key, entry) in db.entries() {
            keys += 1;
            bytes += usage::entry_bytes(key, entry, USAGE_SAMPLES);
        }
    }
    (keys, bytes)
}

fn memory_stats(cx: &mut Cx<'_, '_>) {
    let (keys, dataset_bytes) = dataset(cx);
    let rss = super::server::resident_bytes() as usize;
    let scripts = cx.shared.scripting.memory();
    let clients = cx.shared.clients.lock().len();
    // Each connection holds a 16 KiB read buffer at least.
    let client_bytes = clients * 16 * 1024;
    let overhead = client_bytes + scripts.eval_bytes + scripts.functions_bytes;
    let per_db: Vec<(usize, usize, usize)> = cx
        .store
        .get()
        .dbs()
        .iter()
        .enumerate()
        .filter(|(_, db)| !db.is_empty())
        .map(|(i, db)| (i, db.len(), db.expiring_len()))
        .collect();
    let pct = |part: usize, whole: usize| {
        if whole == 0 {
            0.0
        } else {
            part as f64 * 100.0 / whole as f64
        }
    };
    let out = &mut *cx.out;
    out.map(16 + per_db.len());
    let int = |out: &mut crate::reply::Out, name: &str, v: usize| {
        out.bulk(name.as_bytes());
        out.int(v as i64);
    };
    int(out, "peak.allocated", rss);
    int(out, "total.allocated", rss);
    int(out, "startup.allocated", 0);
    int(out, "replication.backlog", 0);
    int(out, "clients.slaves", 0);
    int(out, "clients.normal", client_bytes);
    int(out, "aof.buffer", 0);
    int(out, "lua.caches", scripts.eval_bytes);
    int(out, "functions.caches", scripts.functions_bytes);
    for (i, len, expiring) in per_db {
        out.bulk(format!("db.{i}").as_bytes());
        out.map(2);
        // A keyspace slot: the entry in the index map plus its hash-table index.
        int(out, "overhead.hashtable.main", len * 80);
        int(out, "overhead.hashtable.expires", expiring * 40);
    }
    int(out, "overhead.total", overhead);
    int(out, "keys.count", keys);
    int(
        out,
        "keys.bytes-per-key",
        dataset_bytes.checked_div(keys).unwrap_or(0),
    );
    int(out, "dataset.bytes", dataset_bytes);
    out.bulk(b"dataset.percentage");
    out.double(pct(dataset_bytes, rss));
    out.bulk(b"peak.percentage");
    out.double(100.0);
    int(out, "fragmentation.bytes", 0);
}

/// DEBUG: the subcommands Redis's test suite uses, where Sluice can answer truthfully.
pub fn debug(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let sub = args.get(1).to_ascii_lowercase();
    match (sub.as_slice(), args.len()) {
        (b"sleep", 3) => {
            let Some(secs) = super::float_arg(cx.out, args.get(2)) else {
                return;
            };
            // Redis sleeps with the whole server stopped: hold the store meanwhile.
            cx.store.get();
            if secs > 0.0 {
                std::thread::sleep(Duration::from_secs_f64(secs.min(3600.0)));
            }
            cx.out.ok();
        }
        (b"set-active-expire", 3) => {
            let Some(v) = int_arg(cx.out, args.get(2)) else {
                return;
            };
            cx.shared.active_expire.store(v != 0, Ordering::Relaxed);
            cx.out.ok();
        }
        (b"object", 3) => debug_object(cx, args.get(2)),
        (b"help", 2) => help(
            cx,
            &[
                "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                "OBJECT <key>",
                "    Show low level info about the key and associated value.",
                "SET-ACTIVE-EXPIRE <0|1>",
                "    Setting it to 0 disables expiring keys in background when they are not",
                "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
                "    default.",
                "SLEEP <seconds>",
                "    Stop the server for <seconds>. Decimals allowed.",
                "HELP",
                "    Print this help.",
            ],
        ),
        _ => {
            let name = String::from_utf8_lossy(args.get(1));
            let name: String = name.chars().take(128).collect();
            cx.out.error(&format!(
                "ERR unknown subcommand or wrong number of arguments for '{name}'. Try DEBUG HELP."
            ));
        }
    }
}

fn debug_object(cx: &mut Cx<'_, '_>, key: &[u8]) {
    let limits = encoding_limits(cx);
    let policy = policy(cx);
    let db = cx.db();
    let line = cx.store.get().db(db).peek(key).map(|e| {
        let encoding = usage::encoding(&e.value, &limits);
        let refcount = if shared_integer(&e.value, &policy) {
            SHARED_REFCOUNT
        } else {
            1
        };
        // The value's own bytes stand in for the length it would take in an RDB file.
        let serialized = usage::value_bytes(&e.value, 0);
        let serialized = match &e.value {
            Value::Str(s) => s.len(),
            _ => serialized,
        };
        let mut line = format!(
            "Value at:0x{:x} refcount:{refcount} encoding:{encoding} serializedlength:{serialized} lru:{} lru_seconds_idle:{}",
            std::ptr::from_ref(e) as usize,
            e.access,
            crate::engine::memory::idle_ms(e.access) / 1000
        );
        if let Value::List(list) = &e.value {
            // One quicklist node per 128 elements, the size Redis's 8 KiB nodes hold for
            // short elements.
            let nodes = list.len().div_ceil(128).max(1);
            let bytes: usize = list.iter().map(|v| v.len() + 2).sum();
            line.push_str(&format!(
                " ql_nodes:{nodes} ql_avg_node:{:.2} ql_listpack_max:-2 ql_compressed:0 ql_uncompressed_size:{bytes}",
                list.len() as f64 / nodes as f64
            ));
        }
        line
    });
    match line {
        Some(line) => cx.out.simple(&line),
        None => cx.out.error(NO_KEY),
    }
}
