//! Pub/sub: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH, PUBSUB.

use std::sync::atomic::Ordering;

use super::{Args, Cx, unknown_subcommand};
use crate::engine::Key;

/// Replies one (un)subscribe confirmation: `[kind, name, count]` as a push.
fn confirm(cx: &mut Cx<'_, '_>, kind: &[u8], name: Option<&[u8]>) {
    let count = cx.session.subscriptions();
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
}

pub fn subscribe(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    for channel in args.from(1) {
        if cx.session.channels.insert(channel.into()) {
            cx.shared
                .hub
                .lock()
                .subscribe(channel, cx.session.id, &cx.session.push_tx);
        }
        confirm(cx, b"subscribe", Some(channel));
    }
    publish_counts(cx);
}

pub fn psubscribe(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    for pattern in args.from(1) {
        if cx.session.patterns.insert(pattern.into()) {
            cx.shared
                .hub
                .lock()
                .psubscribe(pattern, cx.session.id, &cx.session.push_tx);
        }
        confirm(cx, b"psubscribe", Some(pattern));
    }
    publish_counts(cx);
}

pub fn unsubscribe(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let names: Vec<Key> = if args.len() > 1 {
        args.from(1).map(Key::from).collect()
    } else {
        cx.session.channels.iter().cloned().collect()
    };
    if names.is_empty() {
        confirm(cx, b"unsubscribe", None);
    }
    for name in names {
        if cx.session.channels.remove(&name) {
            cx.shared.hub.lock().unsubscribe(&name, cx.session.id);
        }
        confirm(cx, b"unsubscribe", Some(&name));
    }
    publish_counts(cx);
}

pub fn punsubscribe(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let names: Vec<Key> = if args.len() > 1 {
        args.from(1).map(Key::from).collect()
    } else {
        cx.session.patterns.iter().cloned().collect()
    };
    if names.is_empty() {
        confirm(cx, b"punsubscribe", None);
    }
    for name in names {
        if cx.session.patterns.remove(&name) {
            cx.shared.hub.lock().punsubscribe(&name, cx.session.id);
        }
        confirm(cx, b"punsubscribe", Some(&name));
    }
    publish_counts(cx);
}

/// Drops every subscription without replying (RESET).
pub fn unsubscribe_all(cx: &mut Cx<'_, '_>) {
    let mut hub = cx.shared.hub.lock();
    for c in cx.session.channels.drain() {
        hub.unsubscribe(&c, cx.session.id);
    }
    for p in cx.session.patterns.drain() {
        hub.punsubscribe(&p, cx.session.id);
    }
    drop(hub);
    publish_counts(cx);
}

pub fn publish(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let n = cx.shared.hub.lock().publish(args.get(1), args.get(2));
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
    } else if args.is(1, "numpat") && args.len() == 2 {
        cx.out.int(hub.numpat() as i64);
    } else {
        unknown_subcommand(cx.out, "pubsub", args.get(1));
    }
}
