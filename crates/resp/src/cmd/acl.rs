//! ACL: SETUSER, GETUSER, DELUSER, LIST, USERS, WHOAMI, CAT, GENPASS, DRYRUN, LOG, LOAD, SAVE;
//! the permission check before a command runs; authentication for AUTH and HELLO.

use std::io::Read as _;
use std::sync::Arc;
use std::time::Instant;

use super::{Args, Command, Cx, flags, int_arg, lookup, unknown_subcommand};
use crate::acl::{CATALOG, Context, Denied, LogEntry, Reason, User, categories};
use crate::session::Action;

/// The permission check for a user who is not allowed everything; false once the NOPERM error
/// is written (and the refusal logged).
pub(crate) fn permit(cx: &mut Cx<'_, '_>, cmd: &'static Command, args: &Args<'_>) -> bool {
    let user = cx.session.user.clone();
    if user.is_removed() {
        // Deleted while connected: the connection closes, as Redis frees the client.
        cx.session.action = Action::Close;
        return false;
    }
    match user.check(cmd, args) {
        Ok(()) => true,
        Err(denied) => {
            let context = if cx.session.multi.is_some() {
                Context::Multi
            } else {
                Context::Toplevel
            };
            log_refusal(
                cx,
                &user.name,
                denied.reason(),
                context,
                denied.object(args),
            );
            cx.flag_multi_error();
            cx.out.error(&denied.error());
            false
        }
    }
}

/// Whether the connection's user may read every key with the command being run (SORT's BY and
/// GET patterns read keys they do not name).
pub(crate) fn reads_every_key(cx: &Cx<'_, '_>, args: &Args<'_>) -> bool {
    let user = &cx.session.user;
    if user.is_unrestricted() {
        return true;
    }
    let Some(cmd) = lookup(&args.get(0).to_ascii_lowercase()) else {
        return false;
    };
    user.reads_every_key(CATALOG.resolve(cmd, args))
}

/// EXEC's check of a queued command, in case the rules changed since it was queued.
pub(crate) fn permit_queued(cx: &mut Cx<'_, '_>, cmd: &'static Command, args: &Args<'_>) -> bool {
    let user = cx.session.user.clone();
    let Err(denied) = user.check(cmd, args) else {
        return true;
    };
    log_refusal(
        cx,
        &user.name,
        denied.reason(),
        Context::Multi,
        denied.object(args),
    );
    let reason = match denied {
        Denied::Command(_) => "no permission to execute the command or subcommand",
        Denied::Key(_) => "no permission to touch the specified keys",
        Denied::Channel(_) => "no permission to access one of the channels used as arguments",
    };
    cx.out.error(&format!(
        "NOPERM ACLs rules changed between the moment the transaction was accumulated and the \
         EXEC call. This command is no longer allowed for the following reason: {reason}"
    ));
    false
}

/// A script's redis.call: the reason for the error raised in the script, when refused.
pub(crate) fn permit_in_script(
    cx: &mut Cx<'_, '_>,
    cmd: &'static Command,
    args: &Args<'_>,
) -> Result<(), &'static str> {
    let user = cx.session.user.clone();
    let Err(denied) = user.check(cmd, args) else {
        return Ok(());
    };
    log_refusal(
        cx,
        &user.name,
        denied.reason(),
        Context::Lua,
        denied.object(args),
    );
    Err(denied.script_error())
}

fn log_refusal(
    cx: &mut Cx<'_, '_>,
    username: &[u8],
    reason: Reason,
    context: Context,
    object: Vec<u8>,
) {
    let mut client_info = String::new();
    super::connection::client_line(cx.shared, &cx.session.info, 0, &mut client_info);
    let entry = LogEntry {
        count: 1,
        reason,
        context,
        object,
        username: username.to_vec(),
        at: Instant::now(),
        client_info: client_info.trim_end().to_owned(),
    };
    cx.shared.acl.log.lock().add(entry);
}

/// AUTH and HELLO AUTH: authenticates the connection as `name`, or writes WRONGPASS (and logs
/// the failure). Returns whether it succeeded.
pub(crate) fn authenticate(
    cx: &mut Cx<'_, '_>,
    name: &[u8],
    password: &[u8],
    command: &[u8],
) -> bool {
    match cx.shared.acl.authenticate(name, password) {
        Some(user) => {
            cx.session.set_user(user);
            true
        }
        None => {
            let context = if cx.session.multi.is_some() {
                Context::Multi
            } else {
                Context::Toplevel
            };
            log_refusal(cx, name, Reason::Auth, context, command.to_vec());
            cx.out
                .error("WRONGPASS invalid username-password pair or user is disabled.");
            false
        }
    }
}

/// Closes the connections of users that no longer exist (ACL DELUSER, ACL LOAD); the caller's
/// own connection closes once its reply is sent.
fn disconnect(cx: &mut Cx<'_, '_>, removed: &[Arc<User>]) {
    if removed.is_empty() {
        return;
    }
    let clients: Vec<_> = cx.shared.clients.lock().values().cloned().collect();
    for info in clients {
        let user = info.user.lock().clone();
        if removed.iter().any(|r| Arc::ptr_eq(r, &user)) {
            info.kill();
        }
    }
}

/// Closes the subscribers of `user` whose subscriptions its new rules no longer allow.
fn drop_revoked_subscribers(cx: &mut Cx<'_, '_>, user: &Arc<User>) {
    let rules = user.rules();
    if rules.selectors.iter().any(|s| s.allchannels) {
        return;
    }
    let allowed = |channel: &[u8], pattern: bool| {
        rules.selectors.iter().any(|s| {
            s.channels.iter().any(|p| {
                if pattern {
                    p.as_slice() == channel
                } else {
                    crate::glob::matches(p, channel, false)
                }
            })
        })
    };
    let mine = cx.session.id;
    if Arc::ptr_eq(&cx.session.user, user) && cx.session.subscriptions() > 0 {
        let revoked = cx.session.channels.iter().any(|c| !allowed(c, false))
            || cx.session.shard_channels.iter().any(|c| !allowed(c, false))
            || cx.session.patterns.iter().any(|c| !allowed(c, true));
        if revoked {
            cx.session.info.kill();
        }
    }
    let subscribers = cx.shared.hub.lock().subscriptions_of_clients();
    let clients: Vec<_> = cx.shared.clients.lock().values().cloned().collect();
    for info in clients {
        if info.id == mine || !Arc::ptr_eq(&info.user.lock(), user) {
            continue;
        }
        let revoked = subscribers
            .get(&info.id)
            .is_some_and(|subs| subs.iter().any(|(name, pattern)| !allowed(name, *pattern)));
        if revoked {
            info.kill();
            // Gone at once, as Redis frees it: CLIENT LIST right after no longer shows it.
            cx.shared.clients.lock().remove(&info.id);
        }
    }
}

/// CONFIG SET of the ACL parameters: requirepass (the default user's password, as given:
/// it may be binary), acl-pubsub-default, acllog-max-len.
pub(crate) fn apply_params(
    shared: &crate::shared::Shared,
    params: &crate::params::Params,
    pairs: &[(&[u8], &[u8])],
) {
    if let Some((_, password)) = pairs
        .iter()
        .rev()
        .find(|(name, _)| name.eq_ignore_ascii_case(b"requirepass"))
    {
        shared.acl.set_default_password(Some(password));
    }
    shared.acl.pubsub_allchannels.store(
        params.get("acl-pubsub-default") == Some("allchannels"),
        std::sync::atomic::Ordering::Relaxed,
    );
    if let Some(max) = params.get("acllog-max-len").and_then(|v| v.parse().ok()) {
        shared.acl.log.lock().set_max_len(max);
    }
}

/// Each subcommand's arity in Redis's table (name included; negative: at least).
const ARITY: &[(&[u8], i64)] = &[
    (b"setuser", -3),
    (b"deluser", -3),
    (b"getuser", 3),
    (b"list", 2),
    (b"users", 2),
    (b"whoami", 2),
    (b"load", 2),
    (b"save", 2),
    (b"cat", -2),
    (b"genpass", -2),
    (b"log", -2),
    (b"dryrun", -4),
    (b"help", 2),
];

/// ACL subcommand ...
pub fn acl(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let sub = args.get(1).to_ascii_lowercase();
    let n = args.len();
    let Some(&(_, arity)) = ARITY.iter().find(|(name, _)| *name == sub.as_slice()) else {
        unknown_subcommand(cx.out, "acl", args.get(1));
        return;
    };
    let argc = n as i64;
    if (arity > 0 && argc != arity) || argc < -arity {
        super::subcommand_arity(cx.out, &format!("acl|{}", String::from_utf8_lossy(&sub)));
        return;
    }
    let shared = cx.shared;
    let acl = &shared.acl;
    match (sub.as_slice(), n) {
        (b"setuser", 3..) => {
            let name = args.get(2);
            let ops: Vec<&[u8]> = args.from(3).collect();
            match acl.set_user(name, &ops) {
                Ok(user) => {
                    drop_revoked_subscribers(cx, &user);
                    cx.out.ok();
                }
                Err(e) => cx.out.error(&format!("ERR {}", e.0)),
            }
        }
        (b"deluser", 3..) => {
            let names: Vec<&[u8]> = args.from(2).collect();
            if names.contains(&b"default".as_slice()) {
                cx.out.error("ERR The 'default' user cannot be removed");
                return;
            }
            let removed = acl.delete(&names);
            disconnect(cx, &removed);
            cx.out.int(removed.len() as i64);
        }
        (b"getuser", 3) => getuser(cx, args.get(2)),
        (b"list" | b"users", 2) => {
            let users = acl.users();
            cx.out.array(users.len());
            for user in users {
                if sub == b"users" {
                    cx.out.bulk(&user.name);
                } else {
                    let mut line = b"user ".to_vec();
                    line.extend_from_slice(&user.name);
                    line.push(b' ');
                    line.extend_from_slice(&user.rules().describe());
                    cx.out.bulk(&line);
                }
            }
        }
        (b"whoami", 2) => {
            let name = cx.session.user.name.clone();
            cx.out.bulk(&name);
        }
        (b"load", 2) => match acl.load_file() {
            Ok(removed) => {
                disconnect(cx, &removed);
                cx.out.ok();
            }
            Err(e) => cx.out.error(&format!("ERR {e}")),
        },
        (b"save", 2) => match acl.save_file() {
            Ok(()) => cx.out.ok(),
            Err(e) => cx.out.error(&format!("ERR {e}")),
        },
        (b"cat", 2) => {
            cx.out.array(categories::NAMES.len());
            for (name, _) in categories::NAMES {
                cx.out.bulk(name.as_bytes());
            }
        }
        (b"cat", 3) => {
            let Some(bit) = categories::by_name(args.get(2)) else {
                let name = String::from_utf8_lossy(args.get(2));
                let name: String = name.chars().take(128).collect();
                cx.out.error(&format!("ERR Unknown category '{name}'"));
                return;
            };
            let names: Vec<&str> = CATALOG
                .commands
                .iter()
                .filter(|c| c.categories & bit != 0)
                .map(|c| c.name.as_str())
                .collect();
            cx.out.array(names.len());
            for name in names {
                cx.out.bulk(name.as_bytes());
            }
        }
        (b"genpass", 2 | 3) => genpass(cx, args),
        (b"log", 2 | 3) => log(cx, args),
        (b"dryrun", 4..) => dryrun(cx, args),
        (b"help", 2) => {
            let lines = [
                "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                "CAT [<category>]",
                "    List all commands that belong to <category>, or all command categories",
                "    when no category is specified.",
                "DELUSER <username> [<username> ...]",
                "    Delete a list of users.",
                "DRYRUN <username> <command> [<arg> ...]",
                "    Returns whether the user can execute the given command without executing the command.",
                "GETUSER <username>",
                "    Get the user's details.",
                "GENPASS [<bits>]",
                "    Generate a secure 256-bit user password. The optional `bits` argument can",
                "    be used to specify a different size.",
                "LIST",
                "    Show users details in config file format.",
                "LOAD",
                "    Reload users from the ACL file.",
                "LOG [<count> | RESET]",
                "    Show the ACL log entries.",
                "SAVE",
                "    Save the current config to the ACL file.",
                "SETUSER <username> <attribute> [<attribute> ...]",
                "    Create or modify a user with the specified attributes.",
                "USERS",
                "    List all the registered usernames.",
                "WHOAMI",
                "    Return the current connection username.",
                "HELP",
                "    Print this help.",
            ];
            cx.out.array(lines.len());
            for line in lines {
                cx.out.simple(line);
            }
        }
        // Redis's words when the arity fits but the arguments do not.
        _ => cx.out.error(&format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try ACL HELP.",
            String::from_utf8_lossy(args.get(1))
        )),
    }
}

fn getuser(cx: &mut Cx<'_, '_>, name: &[u8]) {
    let Some(user) = cx.shared.acl.user(name) else {
        cx.out.null();
        return;
    };
    let rules = user.rules();
    let out = &mut *cx.out;
    out.map(6);
    out.bulk(b"flags");
    let flags = rules.flags();
    out.set(flags.len());
    for flag in flags {
        out.bulk(flag.as_bytes());
    }
    out.bulk(b"passwords");
    out.array(rules.passwords.len());
    for p in &rules.passwords {
        out.bulk(p.as_bytes());
    }
    describe_selector(out, rules.root());
    out.bulk(b"selectors");
    out.array(rules.selectors.len() - 1);
    for selector in &rules.selectors[1..] {
        out.map(3);
        describe_selector(out, selector);
    }
}

fn describe_selector(out: &mut crate::reply::Out, selector: &crate::acl::rules::Selector) {
    out.bulk(b"commands");
    out.bulk(&selector.describe_commands());
    out.bulk(b"keys");
    out.bulk(&selector.keys_text());
    out.bulk(b"channels");
    out.bulk(&selector.channels_text());
}

/// ACL GENPASS [bits]: that many random bits (256 by default) as hex, from the OS's random
/// source.
fn genpass(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    const MAX_BITS: i64 = 4096;
    let bits = if args.len() == 3 {
        let Some(bits) = int_arg(cx.out, args.get(2)) else {
            return;
        };
        bits
    } else {
        256
    };
    if bits <= 0 || bits > MAX_BITS {
        cx.out.error(&format!(
            "ERR ACL GENPASS argument must be the number of bits for the output password, a \
             positive number up to {MAX_BITS}"
        ));
        return;
    }
    let chars = ((bits + 3) / 4) as usize;
    let mut random = vec![0u8; chars.div_ceil(2)];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut random));
    if let Err(e) = read {
        cx.out.error(&format!(
            "ERR reading random bytes from /dev/urandom failed: {e}"
        ));
        return;
    }
    let hex: Vec<u8> = random
        .iter()
        .flat_map(|b| [b >> 4, b & 15])
        .take(chars)
        .map(|d| b"0123456789abcdef"[usize::from(d)])
        .collect();
    cx.out.bulk(&hex);
}

/// ACL LOG [count | RESET].
fn log(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let mut count = 10;
    if args.len() == 3 {
        if args.is(2, "reset") {
            cx.shared.acl.log.lock().reset();
            cx.out.ok();
            return;
        }
        let Some(n) = int_arg(cx.out, args.get(2)) else {
            return;
        };
        count = usize::try_from(n).unwrap_or(0);
    }
    let entries: Vec<LogEntry> = cx.shared.acl.log.lock().newest(count).cloned().collect();
    let out = &mut *cx.out;
    out.array(entries.len());
    for e in entries {
        out.map(7);
        out.bulk(b"count");
        out.int(e.count as i64);
        out.bulk(b"reason");
        out.bulk(e.reason.name().as_bytes());
        out.bulk(b"context");
        out.bulk(e.context.name().as_bytes());
        out.bulk(b"object");
        out.bulk(&e.object);
        out.bulk(b"username");
        out.bulk(&e.username);
        out.bulk(b"age-seconds");
        out.double(e.at.elapsed().as_secs_f64());
        out.bulk(b"client-info");
        out.bulk(e.client_info.as_bytes());
    }
}

/// ACL DRYRUN user command [arg ...]: whether the user may run it, without running it.
fn dryrun(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some(user) = cx.shared.acl.user(args.get(2)) else {
        cx.out.error(&format!(
            "ERR User '{}' not found",
            String::from_utf8_lossy(args.get(2))
        ));
        return;
    };
    let call = args.skip(3);
    // Any command of Redis 7.0, whether Sluice answers it or not.
    let name = call.get(0).to_ascii_lowercase();
    let (id, no_auth) = match lookup(&name) {
        Some(cmd) => (
            Some(CATALOG.resolve(cmd, &call)),
            cmd.flags & flags::NO_AUTH != 0,
        ),
        None => (CATALOG.resolve_name(&name, &call), false),
    };
    let Some((id, entry)) = id.and_then(|id| Some((id, CATALOG.get(id)?))) else {
        cx.out.error(&format!(
            "ERR Command '{}' not found",
            String::from_utf8_lossy(call.get(0))
        ));
        return;
    };
    let argc = call.len() as i64;
    let arity = i64::from(entry.arity);
    let full_name = entry.name.as_str();
    if (arity > 0 && argc != arity) || argc < -arity {
        cx.out.error(&format!(
            "ERR wrong number of arguments for '{full_name}' command"
        ));
        return;
    }
    match user.check_id(id, no_auth, &call) {
        Ok(()) => cx.out.ok(),
        Err(denied) => {
            let text = match denied {
                Denied::Command(_) => {
                    format!("This user has no permissions to run the '{full_name}' command")
                }
                Denied::Key(pos) => format!(
                    "This user has no permissions to access the '{}' key",
                    String::from_utf8_lossy(call.get(pos))
                ),
                Denied::Channel(pos) => format!(
                    "This user has no permissions to access the '{}' channel",
                    String::from_utf8_lossy(call.get(pos))
                ),
            };
            cx.out.bulk(text.as_bytes());
        }
    }
}
