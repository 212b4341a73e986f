//! EVAL, EVALSHA, their _RO variants and SCRIPT: the script cache keyed by SHA-1.

use std::collections::HashMap;

use mlua::{Function, Table};

use super::runner::{Invocation, ScriptName, execute};
use super::vm::{Vm, new_vm};
use crate::cmd::{Args, Cx, unknown_subcommand};

/// A cached script: whether its shebang allows writes (its compiled function is in the
/// engine's `functions` table under the same SHA-1).
struct Script {
    /// A `#!lua` shebang without `flags=no-writes`... `None` when there is no shebang
    /// (Redis's compatibility mode, where only the commands decide).
    writes: Option<bool>,
    /// The shebang says `allow-oom`: it may start, and write, over maxmemory.
    allow_oom: bool,
}

/// The EVAL interpreter and its cache.
pub struct EvalEngine {
    vm: Vm,
    scripts: HashMap<String, Script, crate::engine::RandomState>,
    /// The compiled scripts by SHA-1, in one Lua table: a Rust handle per cached function would
    /// take a slot of mlua's reference stack each, which holds about 8,000 (a server that ran
    /// that many distinct scripts would fail); a table holds any number.
    functions: Table,
}

const SCRIPT_FLAGS: &[&str] = &[
    "no-writes",
    "allow-oom",
    "allow-stale",
    "no-cluster",
    "allow-cross-slot-keys",
];

/// Parses a `#!lua flags=a,b` first line: the shebang's length, whether writes are allowed
/// (None without a shebang) and whether it says `allow-oom`.
fn shebang(body: &[u8]) -> Result<(usize, Option<bool>, bool), String> {
    if !body.starts_with(b"#!") {
        return Ok((0, None, false));
    }
    let end = memchr::memchr(b'\n', body).unwrap_or(body.len());
    let line = String::from_utf8_lossy(&body[..end]);
    let mut parts = line.split_ascii_whitespace();
    let engine = parts.next().unwrap_or("");
    if engine != "#!lua" {
        return Err(format!("ERR Unexpected engine in script shebang: {engine}"));
    }
    let mut writes = true;
    let mut allow_oom = false;
    for part in parts {
        let Some(list) = part.strip_prefix("flags=") else {
            return Err(format!("ERR Unknown lua shebang option: {part}"));
        };
        for flag in list.split(',').filter(|f| !f.is_empty()) {
            if !SCRIPT_FLAGS.contains(&flag) {
                return Err(format!("ERR Unexpected flag in script shebang: {flag}"));
            }
            writes &= flag != "no-writes";
            allow_oom |= flag == "allow-oom";
        }
    }
    Ok((end, Some(writes), allow_oom))
}

impl EvalEngine {
    pub fn new() -> mlua::Result<Self> {
        let vm = new_vm()?;
        let functions = vm.lua.create_table()?;
        Ok(Self {
            vm,
            scripts: HashMap::default(),
            functions,
        })
    }

    /// Caps the interpreter's memory (the fuzz harness; servers leave it unbounded as Redis).
    pub fn set_memory_limit(&self, bytes: usize) {
        let _ = self.vm.lua.set_memory_limit(bytes);
    }

    /// Interpreter bytes and cached scripts.
    pub fn usage(&self) -> (usize, usize) {
        (self.vm.lua.used_memory(), self.scripts.len())
    }

    /// Compiles and caches `body`; returns its SHA-1.
    fn load(&mut self, body: &[u8]) -> Result<String, String> {
        let sha = super::sha1_hex(body);
        if self.scripts.contains_key(&sha) {
            return Ok(sha);
        }
        let (skip, writes, allow_oom) = shebang(body)?;
        // The shebang line is dropped but its newline kept, so line numbers stay the user's.
        let code = &body[skip..];
        let func = self
            .vm
            .lua
            .load(code)
            .set_name("@user_script")
            .set_mode(mlua::ChunkMode::Text)
            .set_environment(self.vm.globals.clone())
            .into_function()
            .map_err(|e| {
                format!(
                    "ERR Error compiling script (new function): {}",
                    compile_error(&e)
                )
            })?;
        self.functions
            .raw_set(sha.as_str(), func)
            .map_err(|e| format!("ERR Error caching script: {e}"))?;
        self.scripts
            .insert(sha.clone(), Script { writes, allow_oom });
        Ok(sha)
    }
}

/// A compile error as Lua words it: `user_script:1: ...`.
pub fn compile_error(e: &mlua::Error) -> String {
    match e {
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        other => super::vm::error_message(other),
    }
}

/// EVAL / EVALSHA / EVAL_RO / EVALSHA_RO (already on the script thread, store held).
pub fn eval(cx: &mut Cx<'_, '_>, args: &Args<'_>, by_sha: bool, read_only: bool) {
    let Some(numkeys) = crate::cmd::int_arg(cx.out, args.get(2)) else {
        return;
    };
    let Some(numkeys) = super::key_count(cx, numkeys, args) else {
        return;
    };
    let scripting = &cx.shared.scripting;
    let mut engine = scripting.eval.lock();
    // An EVALSHA's SHA-1, lower-cased on the stack (no allocation per call).
    let mut lower = [0u8; 40];
    let sha: std::borrow::Cow<'_, str> = if by_sha {
        let given = args.get(1);
        let known = lower
            .get_mut(..given.len())
            .map(|dst| {
                for (d, s) in dst.iter_mut().zip(given) {
                    *d = s.to_ascii_lowercase();
                }
                &*dst
            })
            .and_then(|dst| std::str::from_utf8(dst).ok())
            .filter(|sha| engine.scripts.contains_key(*sha));
        match known {
            Some(sha) => std::borrow::Cow::Borrowed(sha),
            None => {
                cx.out
                    .error("NOSCRIPT No matching script. Please use EVAL.");
                return;
            }
        }
    } else {
        match engine.load(args.get(1)) {
            Ok(sha) => std::borrow::Cow::Owned(sha),
            Err(e) => {
                cx.out.error(&e);
                return;
            }
        }
    };
    let Some(script) = engine.scripts.get(sha.as_ref()) else {
        cx.out
            .error("NOSCRIPT No matching script. Please use EVAL.");
        return;
    };
    if read_only && script.writes == Some(true) {
        cx.out
            .error("ERR Can not execute a script with write flag using *_ro command.");
        return;
    }
    if script.writes == Some(true) && super::refused_at_start(cx, script.allow_oom) {
        return;
    }
    let func: Function = match engine.functions.raw_get(sha.as_ref()) {
        Ok(func) => func,
        Err(e) => {
            cx.out
                .error(&format!("ERR Error running script {sha}: {e}"));
            return;
        }
    };
    let inv = Invocation {
        func,
        argv: *args,
        numkeys,
        eval: true,
        read_only: read_only || script.writes == Some(false),
        allow_oom: script.allow_oom,
        name: ScriptName::Sha(&sha),
        // FUNCTION STATS shows only a running function's command line.
        command: Vec::new(),
    };
    execute(cx, &engine.vm, inv);
}

/// SCRIPT LOAD | EXISTS | FLUSH | KILL | HELP.
pub fn script(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let sub = args.get(1).to_ascii_lowercase();
    let scripting = &cx.shared.scripting;
    match sub.as_slice() {
        b"load" if args.len() == 3 => match scripting.eval.lock().load(args.get(2)) {
            Ok(sha) => cx.out.bulk(sha.as_bytes()),
            Err(e) => cx.out.error(&e),
        },
        b"exists" if args.len() >= 3 => {
            let engine = scripting.eval.lock();
            cx.out.array(args.len() - 2);
            for sha in args.from(2) {
                let sha = String::from_utf8_lossy(sha).to_ascii_lowercase();
                cx.out.int(i64::from(engine.scripts.contains_key(&sha)));
            }
        }
        b"flush" if args.len() <= 3 => {
            if args.len() == 3 && !args.is(2, "sync") && !args.is(2, "async") {
                cx.out
                    .error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
                return;
            }
            match EvalEngine::new() {
                Ok(fresh) => {
                    *scripting.eval.lock() = fresh;
                    cx.out.ok();
                }
                Err(e) => cx.out.error(&format!("ERR {e}")),
            }
        }
        b"kill" if args.len() == 2 => match scripting.flags.kill(true) {
            Ok(()) => cx.out.ok(),
            Err(e) => cx.out.error(e),
        },
        b"help" if args.len() == 2 => {
            let lines = [
                "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                "EXISTS <sha1> [<sha1> ...]",
                "FLUSH [ASYNC|SYNC]",
                "KILL",
                "LOAD <script>",
                "HELP",
            ];
            cx.out.array(lines.len());
            for line in lines {
                cx.out.simple(line);
            }
        }
        b"load" | b"exists" | b"flush" | b"kill" | b"help" => {
            let full = format!("script|{}", String::from_utf8_lossy(&sub));
            crate::cmd::subcommand_arity(cx.out, &full);
        }
        _ => unknown_subcommand(cx.out, "script", args.get(1)),
    }
}
