//! Server commands: INFO, CONFIG, CLUSTER (standalone), DBSIZE, FLUSHDB, FLUSHALL, SWAPDB, TIME, FUNCTION, SCRIPT.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;

use super::connection::REDIS_VERSION;
use super::{Args, Cx, subcommand_arity, unknown_subcommand};

pub fn dbsize(cx: &mut Cx<'_, '_>, _args: &Args<'_>) {
    let db = cx.db();
    let n = cx.store.get().db(db).len();
    cx.out.int(n as i64);
}

/// Accepts the optional ASYNC/SYNC of the FLUSH commands.
fn flush_mode_ok(cx: &mut Cx<'_, '_>, args: &Args<'_>) -> bool {
    let ok = args.len() == 1 || (args.len() == 2 && (args.is(1, "async") || args.is(1, "sync")));
    if !ok {
        cx.out.error(super::SYNTAX);
    }
    ok
}

pub fn flushdb(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    if flush_mode_ok(cx, args) {
        let db = cx.db();
        cx.store.get().flush_db(db);
        cx.out.ok();
    }
}

pub fn flushall(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    if flush_mode_ok(cx, args) {
        cx.store.get().flush_all();
        cx.out.ok();
    }
}

pub fn swapdb(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some(a) = crate::num::parse_i64(args.get(1)) else {
        cx.out.error("ERR invalid first DB index");
        return;
    };
    let Some(b) = crate::num::parse_i64(args.get(2)) else {
        cx.out.error("ERR invalid second DB index");
        return;
    };
    let count = cx.shared.databases as i64;
    if !(0..count).contains(&a) || !(0..count).contains(&b) {
        cx.out.error("ERR DB index is out of range");
        return;
    }
    cx.store.get().swap_db(a as usize, b as usize);
    cx.out.ok();
}

/// CLUSTER: Sluice is a standalone server, and answers as Redis does with cluster-enabled no
/// (every subcommand; unknown ones and wrong arities are refused at dispatch).
pub fn cluster(cx: &mut Cx<'_, '_>, _args: &Args<'_>) {
    cx.out
        .error("ERR This instance has cluster support disabled");
}

/// ROLE: a primary without replicas, or a read-only follower as a Redis replica answers
/// (primary's host and port, `connected` or `connect`, offset 0).
pub fn role(cx: &mut Cx<'_, '_>, _args: &Args<'_>) {
    if let Some(replica) = &cx.shared.replica {
        cx.out.array(5);
        cx.out.bulk(b"slave");
        cx.out.bulk(replica.master_host.as_bytes());
        cx.out.int(i64::from(replica.master_port));
        let state: &[u8] = if replica.link_up() {
            b"connected"
        } else {
            b"connect"
        };
        cx.out.bulk(state);
        cx.out.int(0);
        return;
    }
    cx.out.array(3);
    cx.out.bulk(b"master");
    cx.out.int(0);
    cx.out.array(0);
}

/// LOLWUT [VERSION v]: a small drawing and the version, as Redis ends its answer.
pub fn lolwut(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    match args.len() {
        1 => {}
        3 if args.is(1, "version") => {
            if super::int_arg(cx.out, args.get(2)).is_none() {
                return;
            }
        }
        _ => {
            cx.out.error(super::SYNTAX);
            return;
        }
    }
    let text = format!(
        "  ~~~~~~~~~~~~~~~\n ~~ sluice ~~~~~~~ |\n~~~~~~~~~~~~~~~~~~~|==> PostgreSQL\n\nRedis ver. {REDIS_VERSION}\n"
    );
    cx.out.verbatim(text.as_bytes());
}

pub fn time(cx: &mut Cx<'_, '_>, _args: &Args<'_>) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    cx.out.array(2);
    cx.out.bulk_int(now.as_secs() as i64);
    cx.out.bulk_int(i64::from(now.subsec_micros()));
}

pub fn config(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let sub = args.get(1).to_ascii_lowercase();
    match sub.as_slice() {
        b"get" => {
            if args.len() < 3 {
                subcommand_arity(cx.out, "config|get");
                return;
            }
            let patterns: Vec<&[u8]> = args.from(2).collect();
            let params = cx.shared.params.read();
            let found = params.matching(&patterns);
            cx.out.map(found.len());
            for (name, value) in found {
                cx.out.bulk(name.as_bytes());
                cx.out.bulk(value.as_bytes());
            }
        }
        b"set" => {
            if args.len() < 4 {
                subcommand_arity(cx.out, "config|set");
                return;
            }
            if !args.len().is_multiple_of(2) {
                cx.out.error(super::SYNTAX);
                return;
            }
            let rest: Vec<&[u8]> = args.from(2).collect();
            let pairs: Vec<(&[u8], &[u8])> = rest.chunks_exact(2).map(|p| (p[0], p[1])).collect();
            let result = cx.shared.params.write().set_all(&pairs);
            match result {
                Ok(()) => {
                    let params = cx.shared.params.read();
                    if let Some(n) = params
                        .get("proto-max-bulk-len")
                        .and_then(|v| v.parse().ok())
                    {
                        cx.shared.bulk_max.store(n, Ordering::Relaxed);
                    }
                    cx.shared.observe.refresh(&params);
                    super::acl::apply_params(cx.shared, &params, &pairs);
                    cx.shared.refresh_replica_check(&params);
                    super::maxmemory::apply(cx.shared, &params, cx.store.get());
                    cx.out.ok();
                }
                Err(e) => cx.out.error(&e.to_string()),
            }
        }
        b"resetstat" => {
            cx.shared.observe.reset_stats();
            cx.out.ok();
        }
        b"rewrite" => cx
            .out
            .error("ERR The server is running without a config file"),
        b"help" => {
            cx.out.array(3);
            cx.out
                .simple("CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
            cx.out.simple("GET <pattern>");
            cx.out.simple("SET <directive> <value>");
        }
        _ => unknown_subcommand(cx.out, "config", args.get(1)),
    }
}

pub fn info(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let wanted: Vec<String> = args
        .from(1)
        .map(|a| String::from_utf8_lossy(a).to_ascii_lowercase())
        .collect();
    let all = wanted.is_empty()
        || wanted
            .iter()
            .any(|w| w == "all" || w == "everything" || w == "default");
    let want = |s: &str| all || wanted.iter().any(|w| w == s);
    let mut text = String::with_capacity(2048);
    let shared = cx.shared;
    let uptime = shared.started.elapsed().as_secs();
    if want("server") {
        let _ = write!(
            text,
            "# Server\r\nredis_version:{REDIS_VERSION}\r\nredis_mode:standalone\r\nsluice_version:{}\r\n\
             os:{}\r\narch_bits:64\r\nmultiplexing_api:epoll\r\nprocess_id:{}\r\ntcp_port:{}\r\n\
             uptime_in_seconds:{uptime}\r\nuptime_in_days:{}\r\nhz:10\r\nexecutable:sluice\r\n\r\n",
            env!("CARGO_PKG_VERSION"),
            std::env::consts::OS,
            std::process::id(),
            shared.port,
            uptime / 86400,
        );
    }
    if want("clients") {
        let clients = shared.clients.lock().len();
        let blocked = cx.store.get().blocking.len();
        let _ = write!(
            text,
            "# Clients\r\nconnected_clients:{clients}\r\nmaxclients:10000\r\nblocked_clients:{blocked}\r\n\r\n"
        );
    }
    if want("memory") {
        text.push_str("# Memory\r\n");
        super::maxmemory::info_lines(&mut text, shared, cx.store.get());
        text.push_str("mem_allocator:libc\r\n");
        let scripts = shared.scripting.memory();
        let _ = write!(
            text,
            "used_memory_lua:{}\r\nused_memory_vm_eval:{}\r\nused_memory_vm_functions:{}\r\n\
             number_of_cached_scripts:{}\r\nnumber_of_functions:{}\r\nnumber_of_libraries:{}\r\n\r\n",
            scripts.eval_bytes,
            scripts.eval_bytes,
            scripts.functions_bytes,
            scripts.cached_scripts,
            scripts.functions,
            scripts.libraries,
        );
    }
    if want("persistence") {
        super::persistence::info_section(cx, &mut text);
    }
    if want("stats") {
        let store = cx.store.get();
        let expired: u64 = store.dbs().iter().map(|d| d.expired_count).sum::<u64>()
            + shared.stats.expired_active.load(Ordering::Relaxed);
        let (hits, misses) = (store.hits, store.misses);
        let evicted = store.eviction.evicted;
        let (channels, patterns) = {
            let hub = shared.hub.lock();
            (hub.channels(None).len(), hub.numpat())
        };
        let _ = write!(
            text,
            "# Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\n\
             expired_keys:{expired}\r\nevicted_keys:{evicted}\r\nkeyspace_hits:{hits}\r\nkeyspace_misses:{misses}\r\n\
             pubsub_channels:{}\r\npubsub_patterns:{}\r\nmigrate_cached_sockets:0\r\n\
             total_error_replies:{}\r\n\r\n",
            shared.stats.connections.load(Ordering::Relaxed),
            shared.stats.commands.load(Ordering::Relaxed),
            channels,
            patterns,
            shared.observe.error_replies.load(Ordering::Relaxed),
        );
    }
    if want("replication") {
        match &shared.replica {
            Some(replica) => replica.info_section(&mut text),
            None => text.push_str(
                "# Replication\r\nrole:master\r\nconnected_slaves:0\r\nmaster_repl_offset:0\r\n\r\n",
            ),
        }
    }
    if want("cpu") {
        text.push_str("# CPU\r\nused_cpu_sys:0.000000\r\nused_cpu_user:0.000000\r\n\r\n");
    }
    // Neither is in the default set of sections: only asked for, or with "all"/"everything".
    let asked = |s: &str| {
        wanted
            .iter()
            .any(|w| w == s || w == "all" || w == "everything")
    };
    if asked("commandstats") {
        text.push_str("# Commandstats\r\n");
        shared.observe.write_commandstats(&mut text);
        text.push_str("\r\n");
    }
    if want("errorstats") {
        text.push_str("# Errorstats\r\n");
        shared.observe.write_errorstats(&mut text);
        text.push_str("\r\n");
    }
    if want("keyspace") {
        text.push_str("# Keyspace\r\n");
        for (i, db) in cx.store.get().dbs().iter().enumerate() {
            if !db.is_empty() {
                let _ = write!(
                    text,
                    "db{i}:keys={},expires={},avg_ttl=0\r\n",
                    db.len(),
                    db.expiring_len()
                );
            }
        }
        text.push_str("\r\n");
    }
    let trimmed = text.strip_suffix("\r\n").unwrap_or(&text);
    cx.out.verbatim(trimmed.as_bytes());
}

/// The process's resident memory from /proc (0 where unavailable).
pub(super) fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}
