//! Pub/sub: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH, PUBSUB, and the sharded SSUBSCRIBE, SUNSUBSCRIBE, SPUBLISH.

use std::sync::atomic::Ordering;

use super::{Args, Cx, unknown_subcommand};
use crate::engine::Key;

/// Replies one (un)subscribe confirmation: `[kind, name, count]` as a push. The count is of
/// shard channels for the sharded kinds, else of channels and patterns (as Redis counts).
fn confirm(cx: &mut Cx<'_, '_>, kind: &[u8], name: Option<&[u8]>) {
    let count = if kind == b"ssubscribe" || kind == b"sunsubscribe" {
        cx.session.shard_channels.len()
    } else {
        cx.session.channels.len() + cx.session.patterns.len()
    };
    cx.out.push(3);
    cx.out.bulk(kind);
    match name {
        Some(n) => cx.out.bulk(n),
        None => cx.out.null(),
    }
    cx.out.int(count as i64);
}

fn publish_counts(cx: &mut Cx<'_, '_>) {
    cx.session
        .info
        .subs
        .store(cx.session.channels.len(), Ordering::Relaxed);
    cx.session
        .info
        .psubs
        .store(cx.session.patterns.len(), Ordering::Relaxed);
    cx.session
        .info
        .ssubs
        .store(cx.session.shard_channels.len(), Ordering::Relaxed);
}

/// The confirmation kind of a (un)subscribe: `name` or with a `p` before it for patterns.
fn kind(pattern: bool, name: &'static [u8], pname: &'static [u8]) -> &'static [u8] {
    if pattern { pname } else { name }
}

/// SUBSCRIBE, or PSUBSCRIBE when `pattern`.
fn subscribe_generic(cx: &mut Cx<'_, '_>, args: &Args<'_>, pattern: bool) {
    let kind = kind(pattern, b"subscribe", b"psubscribe");
    for name in args.from(1) {
        if cx.session.names(pattern).insert(name.into()) {
            cx.shared
                .hub
                .lock()
                .subscribe(pattern, name, cx.session.id, &cx.session.push_tx);
        }
        confirm(cx, kind, Some(name));
    }
    publish_counts(cx);
}

/// UNSUBSCRIBE, or PUNSUBSCRIBE when `pattern`: the names given, or all of them.
fn unsubscribe_generic(cx: &mut Cx<'_, '_>, args: &Args<'_>, pattern: bool) {
    let kind = kind(pattern, b"unsubscribe", b"punsubscribe");
    let names: Vec<Key> = if args.len() > 1 {
        args.from(1).map(Key::from).collect()
    } else {
        cx.session.names(pattern).iter().cloned().collect()
    };
    if names.is_empty() {
        confirm(cx, kind, None);
    }
    for name in names {
        if cx.session.names(pattern).remove(&name) {
            cx.shared
                .hub
                .lock()
                .unsubscribe(pattern, &name, cx.session.id);
        }
        confirm(cx, kind, Some(&name));
    }
    publish_counts(cx);
}

pub fn subscribe(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    subscribe_generic(cx, args, false);
}

pub fn psubscribe(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    subscribe_generic(cx, args, true);
}

pub fn unsubscribe(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    unsubscribe_generic(cx, args, false);
}

pub fn punsubscribe(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    unsubscribe_generic(cx, args, true);
}

/// Drops every subscription without replying (RESET).
pub fn unsubscribe_all(cx: &mut Cx<'_, '_>) {
    let session = &mut *cx.session;
    cx.shared.hub.lock().leave(
        session.id,
        &mut session.channels,
        &mut session.patterns,
        &mut session.shard_channels,
    );
    publish_counts(cx);
}

pub fn publish(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let n = cx.shared.hub.lock().publish(args.get(1), args.get(2));
    cx.out.int(n as i64);
}

pub fn ssubscribe(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    for name in args.from(1) {
        if cx.session.shard_channels.insert(name.into()) {
            cx.shared
                .hub
                .lock()
                .shard_subscribe(name, cx.session.id, &cx.session.push_tx);
        }
        confirm(cx, b"ssubscribe", Some(name));
    }
    publish_counts(cx);
}

pub fn sunsubscribe(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let names: Vec<Key> = if args.len() > 1 {
        args.from(1).map(Key::from).collect()
    } else {
        cx.session.shard_channels.iter().cloned().collect()
    };
    if names.is_empty() {
        confirm(cx, b"sunsubscribe", None);
    }
    for name in names {
        if cx.session.shard_channels.remove(&name) {
            cx.shared.hub.lock().shard_unsubscribe(&name, cx.session.id);
        }
        confirm(cx, b"sunsubscribe", Some(&name));
    }
    publish_counts(cx);
}

pub fn spublish(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let n = cx.shared.hub.lock().shard_publish(args.get(1), args.get(2));
    cx.out.int(n as i64);
}

pub fn pubsub(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let hub = cx.shared.hub.lock();
    if args.is(1, "channels") && args.len() <= 3 {
        let pattern = (args.len() == 3).then(|| args.get(2));
        let channels = hub.channels(pattern);
        cx.out.array(channels.len());
        for c in channels {
            cx.out.bulk(&c);
        }
    } else if args.is(1, "numsub") {
        cx.out.array((args.len() - 2) * 2);
        for c in args.from(2) {
            cx.out.bulk(c);
            cx.out.int(hub.numsub(c) as i64);
        }
    } else if args.is(1, "shardchannels") && args.len() <= 3 {
        let pattern = (args.len() == 3).then(|| args.get(2));
        let channels = hub.shard_channels(pattern);
        cx.out.array(channels.len());
        for c in channels {
            cx.out.bulk(&c);
        }
    } else if args.is(1, "shardnumsub") {
        cx.out.array((args.len() - 2) * 2);
        for c in args.from(2) {
            cx.out.bulk(c);
            cx.out.int(hub.shard_numsub(c) as i64);
        }
    } else if args.is(1, "numpat") && args.len() == 2 {
        cx.out.int(hub.numpat() as i64);
    } else if args.is(1, "help") && args.len() == 2 {
        const LINES: &[&str] = &[
            "PUBSUB <subcommand> [<arg> ...]. Subcommands are:",
            "CHANNELS [<pattern>]",
            "    The channels with subscribers, matching the pattern if given.",
            "NUMPAT",
            "    How many pattern subscriptions there are.",
            "NUMSUB [<channel> ...]",
            "    Each channel with its number of subscribers.",
            "SHARDCHANNELS [<pattern>]",
            "    The shard channels with subscribers, matching the pattern if given.",
            "SHARDNUMSUB [<shardchannel> ...]",
            "    Each shard channel with its number of subscribers.",
            "HELP",
            "    This list.",
        ];
        cx.out.array(LINES.len());
        for line in LINES {
            cx.out.simple(line);
        }
    } else {
        unknown_subcommand(cx.out, "pubsub", args.get(1));
    }
}
