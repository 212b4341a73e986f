//! maxmemory: applying the memory and notification parameters, evicting before commands, the OOM refusal, and INFO's memory figures.

use std::fmt::Write;
use std::sync::atomic::Ordering;

use super::{Args, Command, Cx, flags};
use crate::engine::{AccessMode, Policy, Store};
use crate::params::Params;
use crate::shared::Shared;

/// Redis's refusal of a command that may grow memory while over the limit.
pub const OOM: &str = "OOM command not allowed when used memory > 'maxmemory'.";

fn number(params: &Params, name: &str, default: u64) -> u64 {
    params
        .get(name)
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Applies maxmemory, its policy and samples, the LFU parameters and notify-keyspace-events
/// from `params` to the store (after CONFIG SET), evicting at once if now over the limit.
pub fn apply(shared: &Shared, params: &Params, store: &mut Store) {
    let limit = number(params, "maxmemory", 0);
    shared.maxmemory.store(limit, Ordering::Relaxed);
    let policy = params
        .get("maxmemory-policy")
        .and_then(Policy::parse)
        .unwrap_or_default();
    let samples = usize::try_from(number(params, "maxmemory-samples", 5)).unwrap_or(5);
    let mode = if policy.is_lfu() {
        AccessMode::Lfu {
            log_factor: u32::try_from(number(params, "lfu-log-factor", 10)).unwrap_or(10),
            decay_minutes: u32::try_from(number(params, "lfu-decay-time", 1)).unwrap_or(1),
        }
    } else {
        AccessMode::Lru
    };
    store.set_eviction(policy, samples, mode);
    let events = params
        .get("notify-keyspace-events")
        .and_then(crate::engine::notify::parse_flags)
        .unwrap_or(0);
    if events != store.notify_flags() {
        store.set_notify(events);
    }
    if limit != 0 {
        store.evict_to(limit);
        store.take_touched();
    }
}

/// Evicts down to maxmemory before `cmd` runs; false (after replying OOM) when the command
/// may not run: it may grow memory and nothing more could be evicted. Inside MULTI every
/// command but EXEC, DISCARD, QUIT and RESET counts as growing memory (the queue does), and
/// EXEC counts when it queued one that does.
pub fn admit(cx: &mut Cx<'_, '_>, cmd: &'static Command, args: &Args<'_>) -> bool {
    let limit = cx.shared.maxmemory.load(Ordering::Relaxed);
    let store = cx.store.get();
    let under = store.evict_to(limit);
    // Evicted keys are not the command's changes (their `evicted` events are queued already).
    if store.notify_flags() != 0 {
        store.take_touched();
    }
    publish_evictions(cx);
    if under {
        return true;
    }
    let grows = match &cx.session.multi {
        Some(multi) if cmd.name == "exec" => multi
            .queued
            .iter()
            .any(|q| q.cmd.flags & flags::DENYOOM != 0),
        Some(_) => !matches!(cmd.name, "discard" | "quit" | "reset"),
        None => cmd.flags & flags::DENYOOM != 0 || subcommand_denies_oom(cmd, args),
    };
    if grows {
        super::reject(cx, cmd, OOM);
        return false;
    }
    true
}

/// Whether a container's subcommand may grow memory (FUNCTION LOAD, FUNCTION RESTORE).
fn subcommand_denies_oom(cmd: &Command, args: &Args<'_>) -> bool {
    let info = super::command_info::infos();
    let has_subcommands = info
        .get(cmd.name)
        .is_some_and(|i| !i.subcommands.is_empty());
    has_subcommands && {
        let sub = String::from_utf8_lossy(args.get(1)).to_ascii_lowercase();
        info.get(&format!("{}|{sub}", cmd.name))
            .is_some_and(|i| i.has_flag("denyoom"))
    }
}

/// Publishes the `evicted` (and `expired`) events an eviction raised.
fn publish_evictions(cx: &mut Cx<'_, '_>) {
    let store = cx.store.get();
    let flags = store.notify_flags();
    if flags != 0 {
        let events = store.take_events();
        super::notify::publish_events(cx, events, flags);
    }
}

/// A script's `redis.call` of a command that may grow memory while over the limit: Redis
/// refuses it inside the script (scripts do not evict).
pub fn refused_in_script(shared: &Shared, store: &Store, cmd: &Command) -> bool {
    let limit = shared.maxmemory.load(Ordering::Relaxed);
    limit != 0 && cmd.flags & flags::DENYOOM != 0 && store.used_memory() > limit
}

/// INFO's `used_memory` ... `maxmemory_policy` lines.
pub fn info_lines(text: &mut String, shared: &Shared, store: &mut Store) {
    let used = store.used_memory();
    let peak = store.eviction.peak.max(used);
    store.eviction.peak = peak;
    let rss = super::server::resident_bytes();
    let limit = shared.maxmemory.load(Ordering::Relaxed);
    let policy = {
        let params = shared.params.read();
        params
            .get("maxmemory-policy")
            .unwrap_or("noeviction")
            .to_owned()
    };
    let dataset = used - crate::engine::memory::BASELINE_BYTES;
    let _ = write!(
        text,
        "used_memory:{used}\r\nused_memory_human:{}\r\nused_memory_rss:{rss}\r\n\
         used_memory_rss_human:{}\r\nused_memory_peak:{peak}\r\nused_memory_dataset:{dataset}\r\n\
         maxmemory:{limit}\r\nmaxmemory_human:{}\r\nmaxmemory_policy:{policy}\r\n",
        human_bytes(used),
        human_bytes(rss),
        human_bytes(limit),
    );
}

/// Bytes as Redis's `*_human` fields show them.
pub fn human_bytes(n: u64) -> String {
    let units = [("G", 1u64 << 30), ("M", 1 << 20), ("K", 1 << 10)];
    for (unit, size) in units {
        if n >= size {
            return format!("{:.2}{unit}", n as f64 / size as f64);
        }
    }
    format!("{n}B")
}
