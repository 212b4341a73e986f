//! EVAL, FCALL and friends, SCRIPT and FUNCTION: run inline on a multi-thread runtime (or inside
//! EXEC, or on the script thread), else deferred to the blocking pool; run by `crate::script`.

use super::{Args, Command, Cx};
use crate::script::{self, ScriptJob};
use crate::session::Action;

/// Commands other clients may still run while a script is busy (Redis's `allow-busy`, less
/// those that need the store here).
pub fn allowed_while_busy(cmd: &Command, args: &Args<'_>) -> bool {
    match cmd.name {
        "auth" | "hello" | "quit" | "multi" | "discard" => true,
        "script" => args.is(1, "kill"),
        "function" => args.is(1, "kill") || args.is(1, "stats"),
        _ => false,
    }
}

/// Runs `cmd` here when this session runs scripts inline, else hands it to a script thread.
fn inline_or_defer(cx: &mut Cx<'_, '_>, args: &Args<'_>, name: &str) -> bool {
    if cx.session.inline_scripts || cx.session.in_exec {
        return true;
    }
    let Some(cmd) = super::lookup(name.as_bytes()) else {
        return true;
    };
    cx.session.action = Action::Script(Box::new(ScriptJob::new(cx, cmd, args)));
    false
}

pub fn eval(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    if inline_or_defer(cx, args, "eval") {
        script::eval::eval(cx, args, false, false);
    }
}

pub fn evalsha(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    if inline_or_defer(cx, args, "evalsha") {
        script::eval::eval(cx, args, true, false);
    }
}

pub fn eval_ro(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    if inline_or_defer(cx, args, "eval_ro") {
        script::eval::eval(cx, args, false, true);
    }
}

pub fn evalsha_ro(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    if inline_or_defer(cx, args, "evalsha_ro") {
        script::eval::eval(cx, args, true, true);
    }
}

pub fn fcall(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    if inline_or_defer(cx, args, "fcall") {
        script::functions::fcall(cx, args, false);
    }
}

pub fn fcall_ro(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    if inline_or_defer(cx, args, "fcall_ro") {
        script::functions::fcall(cx, args, true);
    }
}

pub fn script(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    script::eval::script(cx, args);
}

pub fn function(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    script::functions::function(cx, args);
}
