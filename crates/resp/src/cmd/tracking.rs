//! Client-side caching: CLIENT TRACKING, CACHING, GETREDIR and TRACKINGINFO, remembering the keys tracking clients read, and delivering invalidations.

use std::sync::atomic::Ordering;

use bytes::Bytes;

use super::{Args, Command, Cx, SYNTAX, flags};
use crate::engine::Key;
use crate::engine::tracking::TrackOptions;
use crate::hub::PushMsg;

const OVERLAP_NOTE: &str = "Prefixes for a single client must not overlap.";

/// CLIENT TRACKING|CACHING|GETREDIR|TRACKINGINFO (`sub` lower-cased).
pub fn client(cx: &mut Cx<'_, '_>, args: &Args<'_>, sub: &[u8]) {
    match (sub, args.len()) {
        (b"tracking", n) if n >= 3 => tracking(cx, args),
        (b"caching", n) if n >= 3 => caching(cx, args),
        (b"getredir", 2) => {
            let redirect = current(cx).map_or(-1, |o| o.redirect as i64);
            cx.out.int(redirect);
        }
        (b"trackinginfo", 2) => tracking_info(cx),
        _ => super::subcommand_arity(cx.out, &format!("client|{}", String::from_utf8_lossy(sub))),
    }
}

/// The options of this client when it tracks.
fn current(cx: &mut Cx<'_, '_>) -> Option<TrackOptions> {
    if !cx.session.tracking {
        return None;
    }
    let id = cx.session.id;
    cx.store.get().tracking.options(id).cloned()
}

fn tracking(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let mut wanted = TrackOptions::default();
    let mut redirect_given = false;
    let mut i = 3;
    while i < args.len() {
        let more = i + 1 < args.len();
        if args.is(i, "redirect") && more {
            i += 1;
            if redirect_given {
                cx.out
                    .error("ERR A client can only redirect to a single other client");
                return;
            }
            let Some(id) = super::int_arg(cx.out, args.get(i)) else {
                return;
            };
            let exists =
                u64::try_from(id).is_ok_and(|id| cx.shared.clients.lock().contains_key(&id));
            if !exists {
                cx.out
                    .error("ERR The client ID you want redirect to does not exist");
                return;
            }
            wanted.redirect = id as u64;
            redirect_given = true;
        } else if args.is(i, "bcast") {
            wanted.bcast = true;
        } else if args.is(i, "optin") {
            wanted.optin = true;
        } else if args.is(i, "optout") {
            wanted.optout = true;
        } else if args.is(i, "noloop") {
            wanted.noloop = true;
        } else if args.is(i, "prefix") && more {
            i += 1;
            wanted.prefixes.push(Key::from(args.get(i)));
        } else {
            cx.out.error(SYNTAX);
            return;
        }
        i += 1;
    }
    if args.is(2, "off") {
        if cx.session.tracking {
            let id = cx.session.id;
            cx.store.get().tracking.disable(id);
            cx.session.tracking = false;
            cx.session.caching = None;
        }
        cx.out.ok();
        return;
    }
    if !args.is(2, "on") {
        cx.out.error(SYNTAX);
        return;
    }
    let old = current(cx);
    let refusal = if !wanted.bcast && !wanted.prefixes.is_empty() {
        Some("ERR PREFIX option requires BCAST mode to be enabled")
    } else if old.as_ref().is_some_and(|o| o.bcast != wanted.bcast) {
        Some(
            "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.",
        )
    } else if wanted.bcast && (wanted.optin || wanted.optout) {
        Some("ERR OPTIN and OPTOUT are not compatible with BCAST")
    } else if wanted.optin && wanted.optout {
        Some("ERR You can't specify both OPTIN mode and OPTOUT mode")
    } else if old
        .as_ref()
        .is_some_and(|o| (wanted.optin && o.optout) || (wanted.optout && o.optin))
    {
        Some(
            "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.",
        )
    } else {
        None
    };
    if let Some(error) = refusal {
        cx.out.error(error);
        return;
    }
    let existing = old.as_ref().map_or(&[][..], |o| o.prefixes.as_slice());
    if wanted.bcast
        && let Some(error) = prefix_overlap(existing, &wanted.prefixes)
    {
        cx.out.error(&error);
        return;
    }
    // Re-enabling adds prefixes to those already registered.
    let mut prefixes = existing.to_vec();
    for p in wanted.prefixes.drain(..) {
        if !prefixes.contains(&p) {
            prefixes.push(p);
        }
    }
    wanted.prefixes = prefixes;
    let id = cx.session.id;
    cx.store.get().tracking.enable(id, wanted);
    cx.session.tracking = true;
    cx.out.ok();
}

/// Redis's refusal of prefixes where one starts another, among the new ones or against
/// those the client registered before.
fn prefix_overlap(existing: &[Key], new: &[Key]) -> Option<String> {
    let overlaps = |a: &[u8], b: &[u8]| a.starts_with(b) || b.starts_with(a);
    for (i, p) in new.iter().enumerate() {
        if let Some(old) = existing
            .iter()
            .find(|o| overlaps(o, p) && o.as_slice() != p.as_slice())
        {
            return Some(format!(
                "ERR Prefix '{}' overlaps with an existing prefix '{}'. {OVERLAP_NOTE}",
                String::from_utf8_lossy(p),
                String::from_utf8_lossy(old)
            ));
        }
        if let Some(other) = new[i + 1..].iter().find(|o| overlaps(o, p)) {
            return Some(format!(
                "ERR Prefix '{}' overlaps with another provided prefix '{}'. {OVERLAP_NOTE}",
                String::from_utf8_lossy(p),
                String::from_utf8_lossy(other)
            ));
        }
    }
    None
}

fn caching(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some(opts) = current(cx) else {
        cx.out.error(
            "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled",
        );
        return;
    };
    if args.is(2, "yes") {
        if !opts.optin {
            cx.out.error(
                "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.",
            );
            return;
        }
        cx.session.caching = Some(true);
    } else if args.is(2, "no") {
        if !opts.optout {
            cx.out.error(
                "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.",
            );
            return;
        }
        cx.session.caching = Some(false);
    } else {
        cx.out.error(SYNTAX);
        return;
    }
    cx.out.ok();
}

fn tracking_info(cx: &mut Cx<'_, '_>) {
    let opts = current(cx);
    let mut flags: Vec<&str> = vec![if opts.is_some() { "on" } else { "off" }];
    if let Some(o) = &opts {
        if o.bcast {
            flags.push("bcast");
        }
        if o.optin {
            flags.push("optin");
            if cx.session.caching == Some(true) {
                flags.push("caching-yes");
            }
        }
        if o.optout {
            flags.push("optout");
            if cx.session.caching == Some(false) {
                flags.push("caching-no");
            }
        }
        if o.noloop {
            flags.push("noloop");
        }
        if o.redirect != 0 && !cx.shared.clients.lock().contains_key(&o.redirect) {
            flags.push("broken_redirect");
        }
    }
    cx.out.map(3);
    cx.out.bulk(b"flags");
    cx.out.set(flags.len());
    for f in flags {
        cx.out.bulk(f.as_bytes());
    }
    cx.out.bulk(b"redirect");
    cx.out.int(opts.as_ref().map_or(-1, |o| o.redirect as i64));
    cx.out.bulk(b"prefixes");
    let prefixes = opts.map(|o| o.prefixes).unwrap_or_default();
    cx.out.array(prefixes.len());
    for p in prefixes {
        cx.out.bulk(&p);
    }
}

/// Turns tracking off (RESET).
pub fn off(cx: &mut Cx<'_, '_>) {
    if cx.session.tracking {
        let id = cx.session.id;
        cx.store.get().tracking.disable(id);
        cx.session.tracking = false;
        cx.session.caching = None;
    }
}

/// Before a command: names the client running it (for NOLOOP).
#[inline]
pub fn before_command(cx: &mut Cx<'_, '_>) {
    if cx.store.held() {
        let id = cx.session.id;
        let store = cx.store.get();
        if store.tracking.active() {
            store.tracking.current = id;
        }
    }
}

/// After a command: remembers the keys a tracking client read, ends a CLIENT CACHING
/// window, and delivers the invalidations the command's writes owe.
pub fn after_command(cx: &mut Cx<'_, '_>, cmd: &Command, args: &Args<'_>) {
    if !cx.store.held() {
        return;
    }
    if cx.session.tracking {
        remember_reads(cx, cmd, args);
        if !(cmd.name == "client" && args.is(1, "caching")) {
            cx.session.caching = None;
        }
    }
    if cx.store.get().tracking.has_pending() {
        deliver(cx);
    }
}

fn remember_reads(cx: &mut Cx<'_, '_>, cmd: &Command, args: &Args<'_>) {
    if cmd.flags & flags::READONLY == 0 {
        return;
    }
    let id = cx.session.id;
    let caching = cx.session.caching;
    let store = cx.store.get();
    let Some(opts) = store.tracking.options(id) else {
        return;
    };
    if opts.bcast
        || (opts.optin && caching != Some(true))
        || (opts.optout && caching == Some(false))
    {
        return;
    }
    let argv: Vec<&[u8]> = args.from(0).collect();
    let Ok(positions) = super::getkeys::key_positions(&argv) else {
        return;
    };
    for i in positions {
        store.tracking.remember(id, args.get(i));
    }
}

/// Sends the invalidations owed: to each client itself (RESP3) or to the client it
/// redirects to, as a push (RESP3) or a `__redis__:invalidate` message (RESP2, subscribed).
fn deliver(cx: &mut Cx<'_, '_>) {
    let store = cx.store.get();
    let owed = store.tracking.take_pending();
    let targets: Vec<(u64, u64)> = owed
        .iter()
        .map(|(c, _)| {
            let redirect = store.tracking.options(*c).map_or(0, |o| o.redirect);
            (*c, redirect)
        })
        .collect();
    let clients = cx.shared.clients.lock();
    for ((client, keys), (_, redirect)) in owed.into_iter().zip(targets) {
        let target = if redirect == 0 { client } else { redirect };
        let Some(info) = clients.get(&target) else {
            continue;
        };
        let Some(queue) = info.push.get() else {
            continue;
        };
        let resp3 = info.resp.load(Ordering::Relaxed) >= 3;
        if !resp3
            && (redirect == 0
                || !cx
                    .shared
                    .hub
                    .lock()
                    .is_subscribed(b"__redis__:invalidate", target))
        {
            continue;
        }
        let keys = if keys.iter().any(Option::is_none) {
            None
        } else {
            Some(
                keys.into_iter()
                    .flatten()
                    .map(|k| Bytes::copy_from_slice(&k))
                    .collect(),
            )
        };
        queue.send(PushMsg::invalidate(keys));
    }
}
