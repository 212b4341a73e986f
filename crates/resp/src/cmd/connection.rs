//! Connection commands: PING, ECHO, QUIT, HELLO, AUTH, CLIENT, SELECT, RESET.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;

use super::{Args, COMMANDS, Cx, int_arg, subcommand_arity, unknown_subcommand};
use crate::session::{Action, ClientInfo};
use crate::shared::Shared;

/// Version reported by HELLO and INFO: the Redis release whose behaviour Sluice follows.
pub const REDIS_VERSION: &str = "7.0.15";

pub fn ping(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    if args.len() > 2 {
        cx.out
            .error("ERR wrong number of arguments for 'ping' command");
        return;
    }
    if cx.session.subscriptions() > 0 && !cx.out.resp3 {
        cx.out.array(2);
        cx.out.bulk(b"pong");
        cx.out.bulk(args.get(1));
    } else if args.len() == 2 {
        cx.out.bulk(args.get(1));
    } else {
        cx.out.simple("PONG");
    }
}

pub fn echo(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    cx.out.bulk(args.get(1));
}

pub fn quit(cx: &mut Cx<'_, '_>, _args: &Args<'_>) {
    cx.out.ok();
    cx.session.action = Action::Close;
}

/// AUTH [user] password: the one-argument form authenticates as `default`.
pub fn auth(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    if args.len() > 3 {
        cx.out.error(super::SYNTAX);
        return;
    }
    let default_nopass = cx.shared.acl.default_user().rules().nopass;
    if args.len() == 2 && default_nopass {
        cx.out.error(
            "ERR AUTH <password> called without any password configured for the default user. \
             Are you sure your configuration is correct?",
        );
        return;
    }
    let (user, password): (&[u8], &[u8]) = if args.len() == 3 {
        (args.get(1), args.get(2))
    } else {
        (b"default", args.get(1))
    };
    if super::acl::authenticate(cx, user, password, args.get(0)) {
        cx.out.ok();
    }
}

pub fn hello(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let mut version = if cx.out.resp3 { 3 } else { 2 };
    if args.len() >= 2 {
        let Some(v) = crate::num::parse_i64(args.get(1)) else {
            cx.out
                .error("ERR Protocol version is not an integer or out of range");
            return;
        };
        if !(2..=3).contains(&v) {
            cx.out.error("NOPROTO unsupported protocol version");
            return;
        }
        version = v;
    }
    let mut i = 2;
    let mut auth: Option<(&[u8], &[u8])> = None;
    let mut name: Option<&[u8]> = None;
    while i < args.len() {
        let more = args.len() - i - 1;
        if args.is(i, "auth") && more >= 2 {
            auth = Some((args.get(i + 1), args.get(i + 2)));
            i += 3;
        } else if args.is(i, "setname") && more >= 1 {
            name = Some(args.get(i + 1));
            i += 2;
        } else {
            let opt = String::from_utf8_lossy(args.get(i)).into_owned();
            cx.out
                .error(&format!("ERR Syntax error in HELLO option '{opt}'"));
            return;
        }
    }
    if let Some((user, password)) = auth
        && !super::acl::authenticate(cx, user, password, args.get(0))
    {
        return;
    }
    if !cx.session.authenticated {
        cx.out.error(
            "NOAUTH HELLO must be called with the client already authenticated, otherwise the \
             HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and \
             select the RESP protocol version at the same time",
        );
        return;
    }
    if let Some(name) = name {
        if !valid_name(name) {
            cx.out.error(BAD_NAME);
            return;
        }
        *cx.session.info.name.lock() = (!name.is_empty()).then(|| name.to_vec());
    }
    cx.out.resp3 = version == 3;
    cx.session.info.resp.store(version as u8, Ordering::Relaxed);
    let out = &mut *cx.out;
    out.map(7);
    out.bulk(b"server");
    out.bulk(b"redis");
    out.bulk(b"version");
    out.bulk(REDIS_VERSION.as_bytes());
    out.bulk(b"proto");
    out.int(version);
    out.bulk(b"id");
    out.int(cx.session.id as i64);
    out.bulk(b"mode");
    out.bulk(b"standalone");
    out.bulk(b"role");
    out.bulk(b"master");
    out.bulk(b"modules");
    out.array(0);
}

const BAD_NAME: &str = "ERR Client names cannot contain spaces, newlines or special characters.";

fn valid_name(name: &[u8]) -> bool {
    name.iter().all(|&c| (b'!'..=b'~').contains(&c))
}

pub fn select(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some(index) = int_arg(cx.out, args.get(1)) else {
        return;
    };
    let count = cx.shared.databases;
    match usize::try_from(index) {
        Ok(i) if i < count => {
            cx.session.db = i;
            cx.session.info.db.store(i, Ordering::Relaxed);
            cx.out.ok();
        }
        _ => cx.out.error("ERR DB index is out of range"),
    }
}

pub fn reset(cx: &mut Cx<'_, '_>, _args: &Args<'_>) {
    cx.session.multi = None;
    cx.session.info.multi.store(-1, Ordering::Relaxed);
    super::tx::unwatch_all(cx);
    super::pubsub::unsubscribe_all(cx);
    super::tracking::off(cx);
    cx.session.reply_mode = crate::session::ReplyMode::On;
    cx.session.db = 0;
    cx.session.info.db.store(0, Ordering::Relaxed);
    cx.out.resp3 = false;
    cx.session.info.resp.store(2, Ordering::Relaxed);
    *cx.session.info.name.lock() = None;
    // Back to the default user, authenticated only if it needs no password.
    let default = cx.shared.acl.default_user();
    cx.session.set_user(default);
    cx.session.authenticated = cx.shared.acl.default_authenticates();
    cx.out.simple("RESET");
}

pub fn client(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let sub = args.get(1);
    let n = args.len();
    let lower = sub.to_ascii_lowercase();
    match (lower.as_slice(), n) {
        (b"id", 2) => cx.out.int(cx.session.id as i64),
        (b"unblock", _) => super::pops::client_unblock(cx, args),
        (b"tracking" | b"caching" | b"getredir" | b"trackinginfo", _) => {
            super::tracking::client(cx, args, &lower);
        }
        (b"getname", 2) => match cx.session.info.name.lock().as_deref() {
            Some(name) => cx.out.bulk(name),
            None => cx.out.null(),
        },
        (b"setname", 3) => {
            let name = args.get(2);
            if !valid_name(name) {
                cx.out.error(BAD_NAME);
                return;
            }
            *cx.session.info.name.lock() = (!name.is_empty()).then(|| name.to_vec());
            cx.out.ok();
        }
        (b"setinfo", 4) => {
            let value = args.get(3);
            if !valid_name(value) && !value.is_empty() {
                cx.out.error(&format!(
                    "ERR {} cannot contain spaces, newlines or special characters.",
                    String::from_utf8_lossy(&args.get(2).to_ascii_uppercase())
                ));
                return;
            }
            let slot = if args.is(2, "lib-name") {
                &cx.session.info.lib_name
            } else if args.is(2, "lib-ver") {
                &cx.session.info.lib_ver
            } else {
                let attr = String::from_utf8_lossy(args.get(2)).into_owned();
                cx.out.error(&format!("ERR Unrecognized option '{attr}'"));
                return;
            };
            *slot.lock() = (!value.is_empty()).then(|| value.to_vec());
            cx.out.ok();
        }
        (b"list", _) => {
            let mut text = String::new();
            let clients: Vec<_> = cx.shared.clients.lock().values().cloned().collect();
            for info in clients {
                if n >= 4 && args.is(2, "id") {
                    let wanted = args
                        .from(3)
                        .any(|a| crate::num::parse_i64(a) == Some(info.id as i64));
                    if !wanted {
                        continue;
                    }
                }
                let qbuf = if info.id == cx.session.id {
                    request_len(args)
                } else {
                    0
                };
                client_line(cx.shared, &info, qbuf, &mut text);
            }
            cx.out.verbatim(text.as_bytes());
        }
        (b"info", 2) => {
            let mut text = String::new();
            client_line(cx.shared, &cx.session.info, request_len(args), &mut text);
            cx.out.verbatim(text.as_bytes());
        }
        (b"kill", _) => super::client_admin::kill(cx, args),
        (b"pause", 3 | 4) => super::client_admin::pause(cx, args),
        (b"unpause", 2) => super::client_admin::unpause(cx, args),
        (b"reply", 3) => super::client_admin::reply(cx, args),
        (b"no-evict", 3) => super::client_admin::no_evict(cx, args),
        (b"help", 2) => {
            let lines = [
                "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                "GETNAME",
                "ID",
                "INFO",
                "KILL <ip:port>",
                "KILL <option> <value> [<option> <value> [...]]",
                "    Kill connections; options: ID <client-id>, TYPE <normal|pubsub>, USER <username>,",
                "    ADDR <ip:port>, LADDR <ip:port>, SKIPME (YES|NO).",
                "LIST [TYPE <type>] [ID <id> [<id> ...]]",
                "NO-EVICT (ON|OFF)",
                "PAUSE <timeout> [WRITE|ALL]",
                "REPLY (ON|OFF|SKIP)",
                "UNPAUSE",
                "SETNAME <name>",
                "SETINFO <LIB-NAME|LIB-VER> <value>",
                "HELP",
            ];
            cx.out.array(lines.len());
            for l in lines {
                cx.out.simple(l);
            }
        }
        (
            b"id" | b"getname" | b"setname" | b"setinfo" | b"info" | b"no-evict" | b"help"
            | b"pause" | b"unpause" | b"reply",
            _,
        ) => {
            subcommand_arity(
                cx.out,
                &format!("client|{}", String::from_utf8_lossy(&lower)),
            );
        }
        _ => unknown_subcommand(cx.out, "client", sub),
    }
}

/// The bytes of the request being answered, as it sat in the query buffer (CLIENT LIST's
/// `qbuf` for the caller: the command is still there while it runs).
fn request_len(args: &Args<'_>) -> usize {
    let digits = |n: usize| n.to_string().len();
    3 + digits(args.len())
        + args
            .from(0)
            .map(|a| 1 + digits(a.len()) + 2 + a.len() + 2)
            .sum::<usize>()
}

/// One CLIENT LIST line in Redis's field order; `qbuf` is the client's unread request bytes.
pub(super) fn client_line(shared: &Shared, info: &ClientInfo, qbuf: usize, text: &mut String) {
    let now = shared.uptime_ms();
    let age = info.created.elapsed().as_secs();
    let idle = now.saturating_sub(info.last_active_ms.load(Ordering::Relaxed)) / 1000;
    let name = info.name.lock().clone().unwrap_or_default();
    let lib_name = info.lib_name.lock().clone().unwrap_or_default();
    let lib_ver = info.lib_ver.lock().clone().unwrap_or_default();
    let cmd = match COMMANDS.get(info.last_command.load(Ordering::Relaxed)) {
        Some(c) if c.flags & super::flags::CONTAINER != 0 => {
            let sub = info.last_subcommand.lock();
            if sub.is_empty() {
                c.name.to_owned()
            } else {
                format!("{}|{}", c.name, String::from_utf8_lossy(&sub))
            }
        }
        Some(c) => c.name.to_owned(),
        None => "NULL".to_owned(),
    };
    let subs = info.subs.load(Ordering::Relaxed);
    let psubs = info.psubs.load(Ordering::Relaxed);
    let ssubs = info.ssubs.load(Ordering::Relaxed);
    let flags = if subs + psubs + ssubs > 0 {
        "P"
    } else if info.multi.load(Ordering::Relaxed) >= 0 {
        "x"
    } else {
        "N"
    };
    let _ = writeln!(
        text,
        "id={} addr={} laddr={} fd=0 name={} age={age} idle={idle} flags={flags} db={} sub={subs} psub={psubs} \
         ssub={ssubs} multi={} qbuf={qbuf} qbuf-free=0 argv-mem=0 multi-mem=0 rbs=16384 rbp=0 obl=0 oll=0 omem=0 \
         tot-mem=0 events=r cmd={cmd} user={} redir=-1 resp={} lib-name={} lib-ver={}",
        info.id,
        info.addr,
        info.laddr,
        String::from_utf8_lossy(&name),
        info.db.load(Ordering::Relaxed),
        info.multi.load(Ordering::Relaxed),
        info.user.lock().name_text(),
        info.resp.load(Ordering::Relaxed),
        String::from_utf8_lossy(&lib_name),
        String::from_utf8_lossy(&lib_ver),
    );
}
