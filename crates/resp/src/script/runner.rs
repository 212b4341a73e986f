//! Runs one script or function atomically on the store: KEYS/ARGV, `redis.call` through the
//! command table, the time-limit hook (BUSY, SCRIPT KILL), and the reply to the caller.

use std::cell::RefCell;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use mlua::{Function, HookTriggers, Lua, Table, Value, VmState};

use super::convert::{arg_bytes, lua_to_reply, reply_to_lua};
use super::vm::Vm;
use crate::cmd::{self, Args, Command, Cx, StoreSlot, flags};
use crate::hub::PushQueue;
use crate::reply::Out;
use crate::session::{ClientInfo, Session};
use crate::shared::Shared;

/// A script command deferred off the connection's thread, so a long script never stalls the
/// other clients of that thread (they get BUSY, and SCRIPT KILL reaches the runner).
#[derive(Debug)]
pub struct ScriptJob {
    pub cmd: &'static Command,
    pub data: Vec<u8>,
    pub spans: Vec<Range<usize>>,
    pub db: usize,
    pub resp3: bool,
    pub authenticated: bool,
    pub info: Arc<ClientInfo>,
    pub push_tx: PushQueue,
}

impl ScriptJob {
    pub fn new(cx: &Cx<'_, '_>, cmd: &'static Command, args: &Args<'_>) -> Self {
        let (data, spans) = args.to_owned_parts();
        Self {
            cmd,
            data,
            spans,
            db: cx.session.db,
            resp3: cx.out.resp3,
            authenticated: cx.session.authenticated,
            info: cx.session.info.clone(),
            push_tx: cx.session.push_tx.clone(),
        }
    }
}

/// Runs a deferred script command on the calling (blocking-pool) thread; returns its reply.
pub fn run_job(shared: &Shared, job: ScriptJob) -> Vec<u8> {
    let mut session = Session::new(job.info, job.authenticated, job.push_tx);
    session.db = job.db;
    session.inline_scripts = true;
    let mut out = Out {
        buf: Vec::new(),
        resp3: job.resp3,
    };
    let mut slot = StoreSlot::new(&shared.store);
    let args = Args::new(&job.data, &job.spans);
    let mut cx = Cx {
        shared,
        session: &mut session,
        out: &mut out,
        store: &mut slot,
    };
    cmd::run(&mut cx, job.cmd, &args);
    slot.release();
    out.buf
}

/// One invocation: what runs, with which keys and arguments.
pub struct Invocation {
    pub func: Function,
    pub keys: Vec<Vec<u8>>,
    pub args: Vec<Vec<u8>>,
    /// EVAL (KEYS/ARGV globals) rather than FCALL (keys and args as parameters).
    pub eval: bool,
    /// Write commands are refused (EVAL_RO, FCALL_RO, `no-writes`).
    pub read_only: bool,
    /// How errors name the script: `f_<sha>` or the function's name.
    pub name: String,
    /// The command that runs it, as the client sent it (FUNCTION STATS shows it).
    pub command: Vec<Vec<u8>>,
}

/// What `redis.call` needs while a script runs.
struct CallContext<'c, 's> {
    shared: &'c Shared,
    store: &'c mut StoreSlot<'s>,
    session: Session,
    read_only: bool,
}

/// Runs `inv` on `vm`, holding the store for the whole run, and writes the reply to `cx.out`.
pub fn execute(cx: &mut Cx<'_, '_>, vm: &Vm, inv: Invocation) {
    let shared = cx.shared;
    let run_flags = shared.scripting.flags.clone();
    cx.store.get();
    run_flags.killed.store(false, Ordering::SeqCst);
    run_flags.wrote.store(false, Ordering::SeqCst);
    run_flags.busy.store(false, Ordering::SeqCst);
    run_flags.is_eval.store(inv.eval, Ordering::SeqCst);
    *run_flags.current.lock() = Some((inv.name.clone(), inv.command.clone(), Instant::now()));
    run_flags.running.store(true, Ordering::SeqCst);
    let threshold = {
        let params = shared.params.read();
        params
            .get("busy-reply-threshold")
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(5000)
    };
    let mut script_session = Session::new(
        cx.session.info.clone(),
        cx.session.authenticated,
        cx.session.push_tx.clone(),
    );
    script_session.db = cx.session.db;
    script_session.in_exec = true;
    script_session.inline_scripts = true;
    script_session.script_client = true;
    let context = RefCell::new(CallContext {
        shared,
        store: &mut *cx.store,
        session: script_session,
        read_only: inv.read_only,
    });
    let outcome = run_lua(vm, &context, &inv, threshold, &run_flags);
    drop(context);
    let resp3 = matches!(vm.run.raw_get::<Value>("resp"), Ok(Value::Integer(3)))
        || matches!(vm.run.raw_get::<Value>("resp"), Ok(Value::Number(n)) if n == 3.0);
    match outcome {
        Ok((true, value)) => lua_to_reply(cx.out, &value, resp3),
        Ok((false, Value::Table(err))) => cx.out.error(&error_text(&err, &inv.name)),
        Ok((false, other)) => cx.out.error(&format!(
            "ERR Error running script {}, {}",
            inv.name,
            other.type_name()
        )),
        Err(e) => cx.out.error(&format!(
            "ERR Error running script {}, {}",
            inv.name,
            super::vm::error_message(&e)
        )),
    }
    vm.lua.remove_hook();
    for field in ["active", "call", "resp", "killed"] {
        let _ = vm.run.raw_set(field, Value::Nil);
    }
    if inv.eval {
        let _ = vm.globals_raw.raw_set("KEYS", Value::Nil);
        let _ = vm.globals_raw.raw_set("ARGV", Value::Nil);
    }
    // A small GC step per run keeps Lua from pausing for a full cycle later, as Redis does.
    let _ = vm.lua.gc_step_kbytes(16);
    run_flags.running.store(false, Ordering::SeqCst);
    run_flags.busy.store(false, Ordering::SeqCst);
    *run_flags.current.lock() = None;
    cx.store.after_command();
}

/// The client's error text: the error, then where the script failed, as Redis 7.0 adds it.
fn error_text(err: &Table, name: &str) -> String {
    let msg = match err.raw_get::<Value>("err") {
        Ok(Value::String(s)) => s.to_string_lossy(),
        _ => "ERR unknown error".to_owned(),
    };
    let source = err.raw_get::<Value>("source").ok();
    let line = err.raw_get::<Value>("line").ok();
    match (source, line) {
        (Some(Value::String(source)), Some(line @ (Value::Integer(_) | Value::Number(_)))) => {
            let line = match line {
                Value::Integer(n) => n.to_string(),
                Value::Number(n) => super::lua_number_text(n),
                _ => String::new(),
            };
            format!(
                "{msg} script: {name}, on {}:{line}.",
                source.to_string_lossy()
            )
        }
        _ => msg,
    }
}

fn lua_table_of(lua: &Lua, items: &[Vec<u8>]) -> mlua::Result<Table> {
    let t = lua.create_table_with_capacity(items.len(), 0)?;
    for (i, item) in items.iter().enumerate() {
        t.raw_set(i + 1, lua.create_string(item)?)?;
    }
    Ok(t)
}

fn run_lua(
    vm: &Vm,
    context: &RefCell<CallContext<'_, '_>>,
    inv: &Invocation,
    threshold: u64,
    run_flags: &Arc<super::RunFlags>,
) -> mlua::Result<(bool, Value)> {
    let lua = &vm.lua;
    let keys = lua_table_of(lua, &inv.keys)?;
    let args = lua_table_of(lua, &inv.args)?;
    if inv.eval {
        vm.globals_raw.raw_set("KEYS", keys.clone())?;
        vm.globals_raw.raw_set("ARGV", args.clone())?;
    }
    if threshold > 0 {
        let started = Instant::now();
        let limit = Duration::from_millis(threshold);
        let hook_flags = run_flags.clone();
        let run = vm.run.clone();
        lua.set_hook(
            HookTriggers::new().every_nth_instruction(100_000),
            move |_, _| {
                if started.elapsed() >= limit {
                    hook_flags.busy.store(true, Ordering::SeqCst);
                }
                if hook_flags.killed.load(Ordering::SeqCst) {
                    let _ = run.raw_set("killed", true);
                    return Err(mlua::Error::RuntimeError(
                        "Script killed by user with SCRIPT KILL...".to_owned(),
                    ));
                }
                Ok(VmState::Continue)
            },
        )?;
    }
    lua.scope(|scope| {
        let call = scope.create_function(|lua, (n, argv): (usize, Table)| {
            let mut ctx = context.borrow_mut();
            redis_call(lua, vm, &mut ctx, n, &argv)
        })?;
        vm.run.raw_set("call", call)?;
        vm.run.raw_set("active", true)?;
        vm.run.raw_set("resp", 2)?;
        vm.invoke.call::<(bool, Value)>((
            inv.func.clone(),
            vm.handler.clone(),
            inv.eval,
            keys,
            args,
        ))
    })
}

/// redis.call / redis.pcall: runs one command as the script's client. Returns the reply and
/// whether redis.call must raise it.
fn redis_call(
    lua: &Lua,
    vm: &Vm,
    ctx: &mut CallContext<'_, '_>,
    argc: usize,
    argv: &Table,
) -> mlua::Result<(Value, bool)> {
    let fail = |msg: &str| -> mlua::Result<(Value, bool)> {
        Ok((vm.error_table.call::<Value>(msg)?, true))
    };
    if argc == 0 {
        return fail("Please specify at least one argument for this redis lib call");
    }
    let mut data = Vec::new();
    let mut spans = Vec::with_capacity(argc);
    for i in 1..=argc {
        let Some(bytes) = arg_bytes(&argv.raw_get::<Value>(i)?) else {
            return fail("Lua redis lib command arguments must be strings or integers");
        };
        let start = data.len();
        data.extend_from_slice(&bytes);
        spans.push(start..data.len());
    }
    let args = Args::new(&data, &spans);
    let name = args.get(0).to_ascii_lowercase();
    let Some(command) = cmd::lookup(&name) else {
        // Redis's commands that scripts may never run, though Sluice lacks them.
        const NOSCRIPT_ELSEWHERE: &[&[u8]] = &[
            b"cluster",
            b"acl",
            b"monitor",
            b"replicaof",
            b"slaveof",
            b"sync",
            b"psync",
            b"shutdown",
            b"debug",
            b"save",
            b"bgsave",
            b"bgrewriteaof",
        ];
        if NOSCRIPT_ELSEWHERE.contains(&name.as_slice()) {
            return fail("This Redis command is not allowed from script");
        }
        return fail("Unknown Redis command called from script");
    };
    let argc = args.len() as i64;
    let arity = i64::from(command.arity);
    if (arity > 0 && argc != arity) || argc < -arity {
        return fail("Wrong number of args calling Redis command from script");
    }
    if command.flags & (flags::NOSCRIPT | flags::TX_CONTROL) != 0 {
        return fail("This Redis command is not allowed from script");
    }
    if command.flags & flags::WRITE != 0 {
        if ctx.read_only {
            return fail("Write commands are not allowed from read-only scripts.");
        }
        ctx.shared
            .scripting
            .flags
            .wrote
            .store(true, Ordering::SeqCst);
    }
    if cmd::maxmemory::refused_in_script(ctx.shared, ctx.store.get(), command) {
        let t = lua.create_table()?;
        t.raw_set("err", cmd::maxmemory::OOM)?;
        return Ok((Value::Table(t), true));
    }
    if matches!(command.name, "xread" | "xreadgroup")
        && args.from(1).any(|a| a.eq_ignore_ascii_case(b"block"))
    {
        let t = lua.create_table()?;
        let msg = format!(
            "ERR {} command is not allowed with BLOCK option from scripts",
            command.name
        );
        t.raw_set("err", msg)?;
        return Ok((Value::Table(t), true));
    }
    let resp3 = matches!(vm.run.raw_get::<Value>("resp")?, Value::Integer(3))
        || matches!(vm.run.raw_get::<Value>("resp")?, Value::Number(n) if n == 3.0);
    let mut out = Out {
        buf: Vec::with_capacity(64),
        resp3,
    };
    let mut cx = Cx {
        shared: ctx.shared,
        session: &mut ctx.session,
        out: &mut out,
        store: &mut *ctx.store,
    };
    cmd::run(&mut cx, command, &args);
    if out.buf.first() == Some(&b'-') {
        let text = out
            .buf
            .get(1..out.buf.len().saturating_sub(2))
            .unwrap_or(&[]);
        let t = lua.create_table()?;
        t.raw_set("err", lua.create_string(text)?)?;
        return Ok((Value::Table(t), true));
    }
    Ok((reply_to_lua(lua, &out.buf)?, false))
}
