//! Runs one script or function atomically on the store: KEYS/ARGV, `redis.call` through the
//! command table, the time-limit hook (BUSY, SCRIPT KILL), and the reply to the caller.

use std::cell::RefCell;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mlua::{Function, HookTriggers, Lua, Table, Value, VmState};

use super::convert::{arg_into, lua_to_reply, reply_to_lua};
use super::current::CallArgs;
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
    pub(crate) fn new(cx: &Cx<'_, '_>, cmd: &'static Command, args: &Args<'_>) -> Self {
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

thread_local! {
    /// The ACL user of the script running on this thread (redis.acl_check_cmd asks for it).
    static CALLER: std::cell::RefCell<Option<Arc<crate::acl::User>>> =
        const { std::cell::RefCell::new(None) };
}

/// Whether the user running the current script may run `cmd` with `args`
/// (redis.acl_check_cmd); true outside a script.
pub(crate) fn caller_may_run(cmd: &Command, args: &Args<'_>) -> bool {
    CALLER.with_borrow(|caller| match caller {
        Some(user) => user.is_unrestricted() || user.check(cmd, args).is_ok(),
        None => true,
    })
}

/// Runs between two explicit collection steps, and their size (Redis's LUA_GC_CYCLE_PERIOD).
const GC_EVERY_RUNS: u32 = 50;
const GC_STEP_KB: i32 = 50;

/// The field of an error table whose error was counted in INFO errorstats already (a refusal
/// or a failed command inside the script); Redis's name, visible to scripts as in Redis.
const COUNTED: &str = "ignore_error_stats_update";

/// One invocation: what runs, with which keys and arguments.
pub struct Invocation<'a> {
    pub func: Function,
    /// The command's arguments: the keys from position 3, `numkeys` of them, then the script's
    /// arguments.
    pub argv: Args<'a>,
    pub numkeys: usize,
    /// EVAL (KEYS/ARGV globals) rather than FCALL (keys and args as parameters).
    pub eval: bool,
    /// Write commands are refused (EVAL_RO, FCALL_RO, `no-writes`).
    pub read_only: bool,
    /// Commands that may grow memory run even over maxmemory (the `allow-oom` flag).
    pub allow_oom: bool,
    /// How errors name the script: `f_<sha>` (an EVAL's SHA-1) or the function's name.
    pub name: ScriptName<'a>,
    /// The command that runs it, as the client sent it (FUNCTION STATS shows it).
    pub command: Vec<Vec<u8>>,
}

/// A script's name in its error texts, spelled out only when one is written.
pub enum ScriptName<'a> {
    /// An EVAL script, named `f_<sha>`.
    Sha(&'a str),
    /// A function.
    Function(String),
}

impl std::fmt::Display for ScriptName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScriptName::Sha(sha) => write!(f, "f_{sha}"),
            ScriptName::Function(name) => f.write_str(name),
        }
    }
}

/// What `redis.call` needs while a script runs.
struct CallContext<'c, 's> {
    shared: &'c Shared,
    vm: &'c Vm,
    store: &'c mut StoreSlot<'s>,
    session: Session,
    read_only: bool,
    allow_oom: bool,
    /// Buffers reused by every call of the run: the arguments and the reply.
    data: Vec<u8>,
    spans: Vec<Range<usize>>,
    reply: Vec<u8>,
}

/// Runs `inv` on `vm`, holding the store for the whole run, and writes the reply to `cx.out`.
pub fn execute(cx: &mut Cx<'_, '_>, vm: &Vm, mut inv: Invocation<'_>) {
    let shared = cx.shared;
    let run_flags = shared.scripting.flags.clone();
    cx.store.get();
    run_flags.killed.store(false, Ordering::SeqCst);
    run_flags.wrote.store(false, Ordering::SeqCst);
    run_flags.busy.store(false, Ordering::SeqCst);
    run_flags.is_eval.store(inv.eval, Ordering::SeqCst);
    // Only FUNCTION STATS reads it, and only for functions.
    if !inv.eval {
        let command = std::mem::take(&mut inv.command);
        *run_flags.current.lock() = Some((inv.name.to_string(), command, Instant::now()));
    }
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
        vm,
        store: &mut *cx.store,
        session: script_session,
        read_only: inv.read_only,
        allow_oom: inv.allow_oom,
        data: Vec::new(),
        spans: Vec::new(),
        reply: Vec::new(),
    });
    let caller = CALLER.replace(Some(cx.session.user.clone()));
    let outcome = {
        let _entered = super::current::enter(&context);
        run_lua(vm, &inv, threshold, &run_flags)
    };
    CALLER.set(caller);
    drop(context);
    match outcome {
        Ok((true, resp3, value)) => {
            // A redis.pcall error returned as the result was counted when it happened.
            if let Value::Table(t) = &value {
                cx.session.error_counted = t.raw_get::<bool>(COUNTED).unwrap_or(false);
            }
            lua_to_reply(cx.out, &value, resp3);
        }
        Ok((false, _, Value::Table(err))) => {
            cx.session.error_counted = err.raw_get::<bool>(COUNTED).unwrap_or(false);
            cx.out.error(&error_text(&err, &inv.name.to_string()));
        }
        Ok((false, _, other)) => cx.out.error(&format!(
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
    // The prelude's invoke cleared the run's fields (active, resp, KEYS, ARGV) itself.
    if run_flags.killed.load(Ordering::SeqCst) {
        let _ = vm.run.raw_set("killed", Value::Nil);
    }
    // Redis's cadence: every 50 runs, collection steps worth 50 KB of allocation, so the heap
    // stays near what is live instead of growing to twice that between cycles (Redis's test
    // "EVAL does not leak in the Lua stack" expects under 100 KB after 10,000 runs).
    let runs = vm.runs.get() + 1;
    if runs >= GC_EVERY_RUNS {
        let _ = vm.lua.gc_step_kbytes(GC_STEP_KB);
        vm.runs.set(0);
    } else {
        vm.runs.set(runs);
    }
    run_flags.running.store(false, Ordering::SeqCst);
    run_flags.busy.store(false, Ordering::SeqCst);
    if !inv.eval {
        *run_flags.current.lock() = None;
    }
    cx.store.after_command();
}

/// Whether the script asked for RESP3 replies (redis.setresp(3)).
fn script_resp3(vm: &Vm) -> bool {
    match vm.run.raw_get::<Value>(&vm.names.resp) {
        Ok(Value::Integer(n)) => n == 3,
        Ok(Value::Number(n)) => n == 3.0,
        _ => false,
    }
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

/// The keys and arguments as one Lua string: each a 4-byte little-endian length and its bytes
/// (the prelude's invoke splits them into KEYS and ARGV). One string instead of a table and a
/// string per item: each mlua handle costs a lock and a reference slot.
fn packed(vm: &Vm, items: impl Iterator<Item = impl AsRef<[u8]>>) -> mlua::Result<mlua::String> {
    let mut buf = vm.pack_buf.borrow_mut();
    buf.clear();
    for item in items {
        let item = item.as_ref();
        let len = u32::try_from(item.len())
            .map_err(|_| mlua::Error::RuntimeError("argument too long".to_owned()))?;
        buf.extend_from_slice(&len.to_le_bytes());
        buf.extend_from_slice(item);
    }
    vm.lua.create_string(&*buf)
}

fn run_lua(
    vm: &Vm,
    inv: &Invocation<'_>,
    threshold: u64,
    run_flags: &Arc<super::RunFlags>,
) -> mlua::Result<(bool, bool, Value)> {
    let lua = &vm.lua;
    let packed = packed(vm, inv.argv.from(3))?;
    let nargs = inv.argv.len().saturating_sub(3 + inv.numkeys);
    vm.clock.start(threshold);
    // The hook stays installed between runs and reads the run's clock: installing one per
    // run cost an allocation and a C call each time.
    if !vm.hooked.get() {
        let clock = vm.clock.clone();
        let hook_flags = run_flags.clone();
        let run = vm.run.clone();
        lua.set_hook(
            HookTriggers::new().every_nth_instruction(100_000),
            move |_, _| {
                let elapsed = clock.elapsed();
                let busy_after = clock.busy_after_ms.load(Ordering::Relaxed);
                if busy_after > 0 && elapsed >= Duration::from_millis(busy_after) {
                    hook_flags.busy.store(true, Ordering::SeqCst);
                }
                if elapsed >= HAND_OFF_AFTER && !clock.handed_off.swap(true, Ordering::Relaxed) {
                    hand_off_worker();
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
        vm.hooked.set(true);
    }
    vm.invoke_packed.call::<(bool, bool, Value)>((
        &inv.func,
        &vm.handler,
        inv.eval,
        packed,
        inv.numkeys,
        nargs,
    ))
}

impl super::current::Context for RefCell<CallContext<'_, '_>> {
    fn call(&self, lua: &Lua, args: CallArgs<'_>) -> mlua::Result<(Value, bool)> {
        let mut ctx = self.try_borrow_mut().map_err(|_| {
            mlua::Error::RuntimeError("redis.call cannot run inside redis.call".to_owned())
        })?;
        let vm = ctx.vm;
        redis_call(lua, vm, &mut ctx, args)
    }
}

/// How long a script runs on its connection's thread before that thread's other connections
/// move to another thread. Scripts run inline (no hand-off per script, the fast path); one that
/// runs longer than this frees the others, who then see BUSY past busy-reply-threshold and can
/// send SCRIPT KILL. Redis serves nobody before busy-reply-threshold; this is shorter so that
/// connections that do not touch the store wait less.
const HAND_OFF_AFTER: Duration = Duration::from_millis(10);

/// On a worker of a multi-thread runtime (connection threads, `sluice serve`): moves the
/// worker's other tasks to a new thread and returns once that thread runs them, so the script
/// goes on here without stalling them. Elsewhere (the blocking pool, a current-thread runtime)
/// it does nothing: those never had the script's neighbours waiting.
fn hand_off_worker() {
    if !super::can_hand_off() {
        return;
    }
    let taken_over = Arc::new(AtomicBool::new(false));
    let flag = taken_over.clone();
    // Runs once the new thread has the worker: then the hand-off cannot be undone when
    // block_in_place returns (it takes the worker back only if nobody took it).
    tokio::spawn(async move { flag.store(true, Ordering::SeqCst) });
    tokio::task::block_in_place(|| {
        let give_up = Instant::now() + Duration::from_millis(200);
        while !taken_over.load(Ordering::SeqCst) && Instant::now() < give_up {
            std::thread::sleep(Duration::from_micros(50));
        }
    });
    // The busy-poller may be parked with its waker in this thread's locals: wake it so it
    // moves along with the others.
    crate::busy_poll::note_activity();
}

/// redis.call / redis.pcall: runs one command as the script's client. Returns the reply and
/// whether redis.call must raise it.
fn redis_call(
    lua: &Lua,
    vm: &Vm,
    ctx: &mut CallContext<'_, '_>,
    args: CallArgs<'_>,
) -> mlua::Result<(Value, bool)> {
    let fail = |msg: &str| -> mlua::Result<(Value, bool)> {
        Ok((vm.error_table.call::<Value>(msg)?, true))
    };
    let argc = match args {
        CallArgs::Values(values) => values.len(),
        CallArgs::Table(n, _) => n,
    };
    if argc == 0 {
        return fail("Please specify at least one argument for this redis lib call");
    }
    let mut data = std::mem::take(&mut ctx.data);
    let mut spans = std::mem::take(&mut ctx.spans);
    data.clear();
    spans.clear();
    for i in 0..argc {
        let start = data.len();
        let fits = match args {
            CallArgs::Values(values) => values.get(i).is_some_and(|v| arg_into(v, &mut data)),
            CallArgs::Table(_, table) => arg_into(&table.raw_get::<Value>(i + 1)?, &mut data),
        };
        if !fits {
            ctx.data = data;
            ctx.spans = spans;
            return fail("Lua redis lib command arguments must be strings or integers");
        }
        spans.push(start..data.len());
    }
    let result = call_with(lua, vm, ctx, &data, &spans);
    ctx.data = data;
    ctx.spans = spans;
    result
}

/// The rest of redis.call once the arguments are in `data` / `spans`.
fn call_with(
    lua: &Lua,
    vm: &Vm,
    ctx: &mut CallContext<'_, '_>,
    data: &[u8],
    spans: &[Range<usize>],
) -> mlua::Result<(Value, bool)> {
    // A refusal here counts as Redis's scriptCall counts it (an error reply, and a rejected
    // call of the command when there is one); the table says so, so that the script's own
    // error reply does not count it again.
    let observe = &ctx.shared.observe;
    let refuse = |command: Option<&Command>, msg: &str| -> mlua::Result<(Value, bool)> {
        let table: Table = vm.error_table.call(msg)?;
        if let Ok(text) = table.raw_get::<mlua::String>("err") {
            match command {
                Some(command) => observe.rejected(command, &text.as_bytes()),
                None => observe.error_reply(&text.as_bytes()),
            }
        }
        table.raw_set(COUNTED, true)?;
        Ok((Value::Table(table), true))
    };
    let fail = |msg: &str| refuse(None, msg);
    let args = Args::new(data, spans);
    let mut lower = [0u8; 32];
    let first = args.get(0);
    let name: &[u8] = match lower.get_mut(..first.len()) {
        Some(dst) => {
            for (d, s) in dst.iter_mut().zip(first) {
                *d = s.to_ascii_lowercase();
            }
            dst
        }
        None => b"",
    };
    let Some(command) = cmd::lookup(name) else {
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
        if NOSCRIPT_ELSEWHERE.contains(&name) {
            return fail("This Redis command is not allowed from script");
        }
        return fail("Unknown Redis command called from script");
    };
    let argc = args.len() as i64;
    let arity = i64::from(command.arity);
    if (arity > 0 && argc != arity) || argc < -arity {
        return refuse(
            Some(command),
            "Wrong number of args calling Redis command from script",
        );
    }
    if command.flags & (flags::NOSCRIPT | flags::TX_CONTROL) != 0 {
        return refuse(
            Some(command),
            "This Redis command is not allowed from script",
        );
    }
    // A container's subcommand is looked up as Redis looks it up for a script: unknown, wrong
    // arity and noscript (CLUSTER RESET, CONFIG SET...) are its own.
    if command.flags & flags::CONTAINER != 0 && args.len() >= 2 {
        let sub = String::from_utf8_lossy(args.get(1)).to_ascii_lowercase();
        let Some(info) = cmd::command_info::infos().get(&format!("{}|{sub}", command.name)) else {
            return fail("Unknown Redis command called from script");
        };
        let arity = i64::from(info.arity);
        if (arity > 0 && argc != arity) || argc < -arity {
            return refuse(
                Some(command),
                "Wrong number of args calling Redis command from script",
            );
        }
        if info.has_flag("noscript") {
            return refuse(
                Some(command),
                "This Redis command is not allowed from script",
            );
        }
    }
    if !ctx.session.user.is_unrestricted() {
        let mut out = Out::new();
        let mut cx = Cx {
            shared: ctx.shared,
            session: &mut ctx.session,
            out: &mut out,
            store: &mut *ctx.store,
        };
        if let Err(reason) = cmd::acl::permit_in_script(&mut cx, command, &args) {
            return fail(reason);
        }
    }
    if command.flags & flags::WRITE != 0 {
        if ctx.read_only {
            return refuse(
                Some(command),
                "Write commands are not allowed from read-only scripts.",
            );
        }
        if ctx.shared.replica.is_some() {
            return refuse(Some(command), &format!("-{}", crate::replica::READONLY));
        }
        if ctx.shared.no_good_replicas.load(Ordering::Relaxed) {
            return refuse(Some(command), &format!("-{}", cmd::NOREPLICAS));
        }
        ctx.shared
            .scripting
            .flags
            .wrote
            .store(true, Ordering::SeqCst);
    }
    if !ctx.allow_oom && cmd::maxmemory::refused_in_script(ctx.shared, ctx.store.get(), command) {
        let oom = format!("-{}", cmd::maxmemory::OOM);
        return refuse(Some(command), &oom);
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
    let resp3 = script_resp3(vm);
    let mut reply = std::mem::take(&mut ctx.reply);
    reply.clear();
    let mut out = Out { buf: reply, resp3 };
    let mut cx = Cx {
        shared: ctx.shared,
        session: &mut ctx.session,
        out: &mut out,
        store: &mut *ctx.store,
    };
    cmd::run(&mut cx, command, &args);
    let result = reply_value(lua, &out.buf);
    ctx.reply = out.buf;
    result
}

/// A command's encoded reply as what redis.call returns, and whether it is an error to raise.
fn reply_value(lua: &Lua, reply: &[u8]) -> mlua::Result<(Value, bool)> {
    if reply.first() == Some(&b'-') {
        let text = reply.get(1..reply.len().saturating_sub(2)).unwrap_or(&[]);
        let t = lua.create_table()?;
        t.raw_set("err", lua.create_string(text)?)?;
        // The command's own run counted this error.
        t.raw_set(COUNTED, true)?;
        return Ok((Value::Table(t), true));
    }
    Ok((reply_to_lua(lua, reply)?, false))
}
