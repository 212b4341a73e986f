//! One Lua 5.1 interpreter set up as Redis sets up its own: the libraries Redis ships, the
//! `redis` table, the sandbox and read-only globals (see `prelude.lua`).

use mlua::{Function, Lua, LuaOptions, MultiValue, StdLib, Table, Value};

use super::libs;

const PRELUDE: &str = include_str!("prelude.lua");

/// Libraries scripts see read-only, as Redis protects them.
const PROTECTED_LIBS: &[&str] = &[
    "redis",
    "string",
    "table",
    "math",
    "coroutine",
    "cjson",
    "bit",
    "struct",
    "cmsgpack",
];

/// An interpreter and the handles the runner uses on every call.
pub struct Vm {
    pub lua: Lua,
    /// Per-run state the prelude reads: `active`, `call`, `resp`, `killed`.
    pub run: Table,
    /// The read-only view of the globals that scripts get as their environment.
    pub globals: Table,
    pub invoke: Function,
    /// Runs a script or function with its keys and arguments packed in one string, setting up
    /// and clearing the run's state (see `prelude.lua`).
    pub invoke_packed: Function,
    /// The buffer the keys and arguments are packed into, reused by every run.
    pub pack_buf: std::cell::RefCell<Vec<u8>>,
    /// Runs since the last explicit collection step.
    pub runs: std::cell::Cell<u32>,
    pub handler: Function,
    pub error_table: Function,
    /// The prelude's helpers (FUNCTION builds its environment from them).
    pub prims: Table,
    /// The running script's clock, read by the time-limit hook.
    pub clock: std::sync::Arc<RunClock>,
    /// Whether the time-limit hook is installed (it stays between runs; FUNCTION LOAD swaps
    /// in its own and clears this).
    pub hooked: std::cell::Cell<bool>,
    /// Field names read on every call, interned once.
    pub names: RunNames,
}

/// Lua strings for the fields read on every call.
pub struct RunNames {
    pub resp: mlua::String,
}

/// When the running script started and when it turns busy, for the hook installed once.
#[derive(Debug)]
pub struct RunClock {
    base: std::time::Instant,
    /// Nanoseconds from `base` to the start of the running script.
    started: std::sync::atomic::AtomicU64,
    /// busy-reply-threshold in milliseconds; 0 never turns busy.
    pub busy_after_ms: std::sync::atomic::AtomicU64,
    /// The connection thread's other connections were handed off during this run.
    pub handed_off: std::sync::atomic::AtomicBool,
}

impl RunClock {
    fn new() -> Self {
        Self {
            base: std::time::Instant::now(),
            started: std::sync::atomic::AtomicU64::new(0),
            busy_after_ms: std::sync::atomic::AtomicU64::new(0),
            handed_off: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Marks the start of a run.
    pub fn start(&self, busy_after_ms: u64) {
        use std::sync::atomic::Ordering::Relaxed;
        let now = u64::try_from(self.base.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.started.store(now, Relaxed);
        self.busy_after_ms.store(busy_after_ms, Relaxed);
        self.handed_off.store(false, Relaxed);
    }

    /// How long the running script has run.
    pub fn elapsed(&self) -> std::time::Duration {
        let now = u64::try_from(self.base.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let started = self.started.load(std::sync::atomic::Ordering::Relaxed);
        std::time::Duration::from_nanos(now.saturating_sub(started))
    }
}

/// Builds an interpreter; fails only if Lua cannot allocate.
pub fn new_vm() -> mlua::Result<Vm> {
    let lua = Lua::new_with(
        StdLib::TABLE | StdLib::STRING | StdLib::MATH,
        LuaOptions::default(),
    )?;
    let prims = lua.create_table()?;
    let run = lua.create_table()?;
    prims.set("run", run.clone())?;
    prims.set(
        "sha1hex",
        lua.create_function(|_, args: MultiValue| {
            if args.len() != 1 {
                return Err(mlua::Error::RuntimeError(
                    "wrong number of arguments".to_owned(),
                ));
            }
            let bytes = match args.front() {
                Some(Value::String(s)) => s.as_bytes().to_vec(),
                Some(Value::Integer(n)) => n.to_string().into_bytes(),
                Some(Value::Number(n)) => super::convert::lua_number_text(*n).into_bytes(),
                _ => Vec::new(),
            };
            Ok(super::sha1_hex(&bytes))
        })?,
    )?;
    prims.set("log", lua.create_function(log)?)?;
    prims.set(
        "acl_check_cmd",
        lua.create_function(|_, args: MultiValue| {
            // The command and its arguments, checked against the calling user's ACL.
            let mut data = Vec::new();
            let mut spans = Vec::with_capacity(args.len());
            for arg in &args {
                let start = data.len();
                if !super::convert::arg_into(arg, &mut data) {
                    return Err(mlua::Error::RuntimeError(
                        "Lua redis lib command arguments must be strings or integers".to_owned(),
                    ));
                }
                spans.push(start..data.len());
            }
            let call = crate::cmd::Args::new(&data, &spans);
            let lower = call.get(0).to_ascii_lowercase();
            match crate::cmd::lookup(&lower) {
                Some(cmd) => Ok(super::runner::caller_may_run(cmd, &call)),
                None => Err(mlua::Error::RuntimeError(
                    "Invalid command passed to redis.acl_check_cmd()".to_owned(),
                )),
            }
        })?,
    )?;
    // redis.call's way into Rust, made once: it finds the running script's context through
    // `current` (not a function created per run with `Lua::scope`).
    let call = lua.create_function(|lua, args: MultiValue| {
        super::current::with_current(|c| c.call(lua, super::current::CallArgs::Values(&args)))
            .unwrap_or_else(|| {
                Err(mlua::Error::RuntimeError(
                    "redis.call/pcall can only be called inside a script invocation".to_owned(),
                ))
            })
    })?;
    run.raw_set("call", call)?;
    let call_many = lua.create_function(|lua, (argc, argv): (usize, Table)| {
        let args = super::current::CallArgs::Table(argc, &argv);
        super::current::with_current(|c| c.call(lua, args)).unwrap_or_else(|| {
            Err(mlua::Error::RuntimeError(
                "redis.call/pcall can only be called inside a script invocation".to_owned(),
            ))
        })
    })?;
    run.raw_set("call_many", call_many)?;
    let globals_raw = lua.globals();
    libs::install(&lua, &globals_raw)?;
    lua.load(PRELUDE)
        .set_name("@sluice_prelude")
        .call::<()>(prims.clone())?;
    let redis: Table = prims.get("redis")?;
    globals_raw.raw_set("redis", redis.clone())?;
    let wrap: Function = prims.get("wrap_libraries")?;
    wrap.call::<()>(PROTECTED_LIBS.to_vec())?;
    let handler = lua.create_function(error_handler)?;

    Ok(Vm {
        run,
        globals: prims.get("globals")?,
        invoke: prims.get("invoke")?,
        invoke_packed: prims.get("invoke_packed")?,
        pack_buf: std::cell::RefCell::new(Vec::new()),
        runs: std::cell::Cell::new(0),
        error_table: prims.get("error_table")?,
        handler,
        prims,
        names: RunNames {
            resp: lua.create_string("resp")?,
        },
        lua,
        clock: std::sync::Arc::new(RunClock::new()),
        hooked: std::cell::Cell::new(false),
    })
}

/// redis.log(level, ...): to Sluice's log at the matching level.
fn log(_: &Lua, args: MultiValue) -> mlua::Result<()> {
    let fail = |msg: &str| Err(mlua::Error::RuntimeError(msg.to_owned()));
    if args.len() < 2 {
        return fail("redis.log() requires two arguments or more.");
    }
    let level = match args.front() {
        Some(Value::Integer(n)) => *n as f64,
        Some(Value::Number(n)) => *n,
        _ => return fail("First argument must be a number (log level)."),
    };
    if !(0.0..=3.0).contains(&level) {
        return fail("Invalid debug level.");
    }
    let mut text = String::new();
    for (i, v) in args.iter().skip(1).enumerate() {
        let piece = match v {
            Value::String(s) => s.to_string_lossy(),
            Value::Integer(n) => n.to_string(),
            Value::Number(n) => super::convert::lua_number_text(*n),
            _ => continue,
        };
        if i > 0 {
            text.push(' ');
        }
        text.push_str(&piece);
    }
    match level as i64 {
        0 => tracing::debug!(target: "sluice_resp::lua", "{text}"),
        1 => tracing::debug!(target: "sluice_resp::lua", "{text}"),
        2 => tracing::info!(target: "sluice_resp::lua", "{text}"),
        _ => tracing::warn!(target: "sluice_resp::lua", "{text}"),
    }
    Ok(())
}

/// The message of an error raised by a Rust callback (mlua wraps it).
pub fn error_message(e: &mlua::Error) -> String {
    match e {
        mlua::Error::RuntimeError(msg) => msg.clone(),
        mlua::Error::CallbackError { cause, .. } => error_message(cause),
        mlua::Error::WithContext { cause, .. } => error_message(cause),
        mlua::Error::MemoryError(_) => "not enough memory".to_owned(),
        other => other.to_string(),
    }
}

/// The xpcall handler: turns any error into Redis's `{err=..., source=..., line=...}` table,
/// naming the innermost frame of the user's script.
fn error_handler(lua: &Lua, err: Value) -> mlua::Result<Table> {
    let table = match err {
        Value::Table(t) if matches!(t.raw_get::<Value>("err")?, Value::String(_)) => t,
        other => {
            let text = match other {
                Value::String(s) => s.to_string_lossy(),
                Value::Error(e) => error_message(&e),
                Value::Integer(n) => n.to_string(),
                Value::Number(n) => super::convert::lua_number_text(n),
                Value::Nil => "nil".to_owned(),
                v => v.type_name().to_owned(),
            };
            let t = lua.create_table()?;
            t.raw_set("err", format!("ERR {text}"))?;
            t
        }
    };
    for level in 1..64 {
        let Some(frame) = lua.inspect_stack(level, |d| {
            let source = d.source().source.map(|s| s.into_owned());
            (source, d.current_line())
        }) else {
            break;
        };
        if let (Some(source), Some(line)) = frame
            && source.starts_with("@user_")
        {
            table.raw_set("source", source)?;
            table.raw_set("line", line)?;
            break;
        }
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_fires_in_invoked_scripts() {
        let vm = new_vm().expect("vm");
        let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = count.clone();
        vm.lua
            .set_hook(
                mlua::HookTriggers::new().every_nth_instruction(1000),
                move |_, _| {
                    if seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst) > 10 {
                        return Err(mlua::Error::RuntimeError("stop".into()));
                    }
                    Ok(mlua::VmState::Continue)
                },
            )
            .expect("hook");
        let f = vm
            .lua
            .load("while true do end")
            .set_environment(vm.globals.clone())
            .into_function()
            .expect("compile");
        let r = vm
            .invoke
            .call::<(bool, Value)>((f, vm.handler.clone(), true));
        assert!(
            count.load(std::sync::atomic::Ordering::SeqCst) > 10,
            "{r:?}"
        );
    }
}
