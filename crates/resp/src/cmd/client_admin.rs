//! CLIENT subcommands that act on connections: KILL, PAUSE, UNPAUSE, REPLY, NO-EVICT.

use std::sync::atomic::Ordering;
use std::time::Duration;

use super::{Args, Cx, SYNTAX};
use crate::session::{ClientInfo, ReplyMode};

/// The type CLIENT KILL TYPE and CLIENT LIST TYPE match: pubsub when subscribed, else normal
/// (Sluice has no replicas or masters).
fn client_type(info: &ClientInfo) -> &'static str {
    if info.subs.load(Ordering::Relaxed) + info.psubs.load(Ordering::Relaxed) > 0 {
        "pubsub"
    } else {
        "normal"
    }
}

/// A CLIENT KILL filter set.
#[derive(Default)]
struct Filter<'a> {
    addr: Option<&'a [u8]>,
    laddr: Option<&'a [u8]>,
    id: Option<u64>,
    kind: Option<&'static str>,
    user: Option<&'a [u8]>,
    skipme: bool,
}

pub fn kill(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    if args.len() == 2 {
        super::subcommand_arity(cx.out, "client|kill");
        return;
    }
    let old_form = args.len() == 3;
    let mut filter = Filter {
        skipme: true,
        ..Filter::default()
    };
    if old_form {
        filter.addr = Some(args.get(2));
        // With the old form a client may kill itself.
        filter.skipme = false;
    } else if args.len() > 3 {
        let mut i = 2;
        while i < args.len() {
            let more = i + 1 < args.len();
            let value = args.get(i + 1);
            if !more {
                cx.out.error(SYNTAX);
                return;
            }
            if args.is(i, "id") {
                match crate::num::parse_i64(value) {
                    Some(id) if id >= 1 => filter.id = Some(id as u64),
                    _ => {
                        cx.out.error("ERR client-id should be greater than 0");
                        return;
                    }
                }
            } else if args.is(i, "type") {
                let lower = value.to_ascii_lowercase();
                filter.kind = Some(match lower.as_slice() {
                    b"normal" => "normal",
                    b"pubsub" => "pubsub",
                    b"slave" | b"replica" => "replica",
                    b"master" => "master",
                    _ => {
                        cx.out.error(&format!(
                            "ERR Unknown client type '{}'",
                            String::from_utf8_lossy(value)
                        ));
                        return;
                    }
                });
            } else if args.is(i, "addr") {
                filter.addr = Some(value);
            } else if args.is(i, "laddr") {
                filter.laddr = Some(value);
            } else if args.is(i, "user") {
                filter.user = Some(value);
                if cx.shared.acl.user(value).is_none() {
                    cx.out.error(&format!(
                        "ERR No such user '{}'",
                        String::from_utf8_lossy(value)
                    ));
                    return;
                }
            } else if args.is(i, "skipme") {
                if value.eq_ignore_ascii_case(b"yes") {
                    filter.skipme = true;
                } else if value.eq_ignore_ascii_case(b"no") {
                    filter.skipme = false;
                } else {
                    cx.out.error(SYNTAX);
                    return;
                }
            } else {
                cx.out.error(SYNTAX);
                return;
            }
            i += 2;
        }
    } else {
        cx.out.error(SYNTAX);
        return;
    }
    let me = cx.session.id;
    let clients: Vec<_> = cx.shared.clients.lock().values().cloned().collect();
    let mut killed = 0;
    for info in clients {
        if filter.addr.is_some_and(|a| a != info.addr.as_bytes())
            || filter.laddr.is_some_and(|a| a != info.laddr.as_bytes())
            || filter.id.is_some_and(|id| id != info.id)
            || filter.kind.is_some_and(|k| k != client_type(&info))
            || filter
                .user
                .is_some_and(|u| u != info.user.lock().name.as_slice())
            || (filter.skipme && info.id == me)
        {
            continue;
        }
        // The killer's own connection closes after this reply; others at once.
        info.kill();
        killed += 1;
    }
    if old_form {
        if killed == 0 {
            cx.out.error("ERR No such client");
        } else {
            cx.out.ok();
        }
    } else {
        cx.out.int(killed);
    }
}

/// CLIENT PAUSE timeout [WRITE|ALL].
pub fn pause(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    if args.len() > 4 {
        cx.out.error(SYNTAX);
        return;
    }
    let Some(ms) = crate::num::parse_i64(args.get(2)) else {
        cx.out
            .error("ERR timeout is not an integer or out of range");
        return;
    };
    if ms < 0 {
        cx.out.error("ERR timeout is negative");
        return;
    }
    let all = if args.len() == 4 {
        if args.is(3, "all") {
            true
        } else if args.is(3, "write") {
            false
        } else {
            cx.out.error("ERR CLIENT PAUSE mode must be WRITE or ALL");
            return;
        }
    } else {
        true
    };
    cx.shared
        .pause
        .pause(Duration::from_millis(ms.unsigned_abs()), all);
    cx.out.ok();
}

pub fn unpause(cx: &mut Cx<'_, '_>, _args: &Args<'_>) {
    cx.shared.pause.unpause();
    cx.out.ok();
}

/// CLIENT REPLY ON|OFF|SKIP: OFF and SKIP are not answered.
pub fn reply(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    if args.is(2, "on") {
        cx.session.reply_mode = ReplyMode::On;
        cx.out.ok();
    } else if args.is(2, "off") {
        cx.session.reply_mode = ReplyMode::Off;
    } else if args.is(2, "skip") {
        if cx.session.reply_mode == ReplyMode::On {
            cx.session.reply_mode = ReplyMode::SkipNext;
        }
    } else {
        cx.out.error(SYNTAX);
    }
}

/// CLIENT NO-EVICT ON|OFF: accepted (Sluice evicts no clients).
pub fn no_evict(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    if args.is(2, "on") || args.is(2, "off") {
        cx.out.ok();
    } else {
        cx.out.error(SYNTAX);
    }
}
