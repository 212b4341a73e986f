//! Redis 7 functions: FUNCTION LOAD|LIST|DELETE|FLUSH|DUMP|RESTORE|STATS|KILL and FCALL(_RO).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use mlua::{Function, HookTriggers, MultiValue, Table, Value, VmState};

use super::runner::{Invocation, ScriptName, execute};
use super::vm::{Vm, new_vm};
use crate::cmd::{Args, Cx, unknown_subcommand};

const FUNCTION_FLAGS: &[&str] = &[
    "no-writes",
    "allow-oom",
    "allow-stale",
    "no-cluster",
    "allow-cross-slot-keys",
];
/// How long library code may run while FUNCTION LOAD registers it (Redis's limit).
const LOAD_TIMEOUT: Duration = Duration::from_millis(500);
const DUMP_MAGIC: &[u8] = b"SLUICEFN1";

/// A registered function; its callback lives in the engine's `callbacks` Lua table under its
/// lower-case name, not in a Rust handle: each handle takes a slot of mlua's reference stack,
/// which holds about 8,000, so a server with that many functions would fail; a table holds any
/// number.
struct Func {
    flags: Vec<&'static str>,
    description: Option<Vec<u8>>,
}

struct Library {
    code: Vec<u8>,
    functions: BTreeMap<String, Func>,
    /// Where its callbacks wait in `staged` until it is installed.
    stage: u64,
}

/// The functions interpreter and its libraries.
pub struct FunctionEngine {
    vm: Vm,
    env: Table,
    loading: Table,
    libraries: BTreeMap<String, Library>,
    /// Lower-case function name -> its library's name (FCALL finds a function in one lookup).
    owners: std::collections::HashMap<String, String>,
    /// Installed callbacks by lower-case function name.
    callbacks: Table,
    /// Callbacks of compiled libraries not yet installed: stage number -> name -> function.
    staged: Table,
    next_stage: u64,
}

fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

const BAD_NAME: &str = "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long";

/// `#!lua name=<lib>`: the engine, the library name and where the code starts.
fn metadata(code: &[u8]) -> Result<(String, usize), String> {
    if !code.starts_with(b"#!") {
        return Err("Missing library metadata".to_owned());
    }
    let Some(end) = memchr::memchr(b'\n', code) else {
        return Err("Invalid library metadata".to_owned());
    };
    let line = String::from_utf8_lossy(&code[..end]).replace('"', "");
    let mut parts = line.split_ascii_whitespace();
    let engine = parts
        .next()
        .unwrap_or("#!")
        .get(2..)
        .unwrap_or("")
        .to_owned();
    let mut name = None;
    for part in parts {
        match part.get(..5) {
            Some(prefix) if prefix.eq_ignore_ascii_case("name=") => {
                if name.is_some() {
                    return Err(
                        "Invalid metadata value, name argument was given multiple times".to_owned(),
                    );
                }
                name = Some(part[5..].to_owned());
            }
            _ => return Err(format!("Invalid metadata value given: {part}")),
        }
    }
    let Some(name) = name else {
        return Err("Library name was not given".to_owned());
    };
    if !valid_name(&name) {
        return Err(BAD_NAME.to_owned());
    }
    if !engine.eq_ignore_ascii_case("lua") {
        return Err(format!("Engine '{engine}' not found"));
    }
    Ok((name, end))
}

/// The arguments of redis.register_function, checked as Redis checks them.
fn registration(args: MultiValue) -> Result<(String, Function, Func), String> {
    let args: Vec<Value> = args.into_iter().collect();
    let (mut name, mut callback, mut flags, mut description) = (None, None, Vec::new(), None);
    match args.as_slice() {
        [Value::Table(named)] => {
            for pair in named.pairs::<Value, Value>() {
                let (key, value) = pair.map_err(|e| e.to_string())?;
                let Value::String(key) = key else {
                    return Err(
                        "named argument key given to redis.register_function is not a string"
                            .to_owned(),
                    );
                };
                match key.to_string_lossy().to_ascii_lowercase().as_str() {
                    "function_name" => match value {
                        Value::String(s) => name = Some(s.to_string_lossy()),
                        _ => return Err("function_name argument given to redis.register_function must be a string".to_owned()),
                    },
                    "description" => match value {
                        Value::String(s) => description = Some(s.as_bytes().to_vec()),
                        _ => return Err("description argument given to redis.register_function must be a string".to_owned()),
                    },
                    "callback" => match value {
                        Value::Function(f) => callback = Some(f),
                        _ => return Err("callback argument given to redis.register_function must be a function".to_owned()),
                    },
                    "flags" => {
                        let Value::Table(list) = value else {
                            return Err("flags argument to redis.register_function must be a table representing function flags".to_owned());
                        };
                        for flag in list.sequence_values::<Value>() {
                            let flag = match flag {
                                Ok(Value::String(s)) => s.to_string_lossy(),
                                _ => return Err("unknown flag given".to_owned()),
                            };
                            match FUNCTION_FLAGS.iter().find(|f| **f == flag) {
                                Some(f) => flags.push(*f),
                                None => return Err("unknown flag given".to_owned()),
                            }
                        }
                    }
                    _ => return Err("unknown argument given to redis.register_function".to_owned()),
                }
            }
            if name.is_none() {
                return Err("redis.register_function must get a function name argument".to_owned());
            }
            if callback.is_none() {
                return Err("redis.register_function must get a callback argument".to_owned());
            }
        }
        [_] => {
            return Err("calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).".to_owned());
        }
        [first, second] => {
            let Value::String(s) = first else {
                return Err("first argument to redis.register_function must be a string".to_owned());
            };
            let Value::Function(f) = second else {
                return Err(
                    "second argument to redis.register_function must be a function".to_owned(),
                );
            };
            name = Some(s.to_string_lossy());
            callback = Some(f.clone());
        }
        _ => return Err("wrong number of arguments to redis.register_function".to_owned()),
    }
    let (Some(name), Some(callback)) = (name, callback) else {
        return Err("wrong number of arguments to redis.register_function".to_owned());
    };
    Ok((name, callback, Func { flags, description }))
}

impl FunctionEngine {
    pub fn new() -> mlua::Result<Self> {
        let vm = new_vm()?;
        let loading = vm.lua.create_table()?;
        let make_env: Function = vm.prims.get("function_env")?;
        let env: Table = make_env.call(loading.clone())?;
        let callbacks = vm.lua.create_table()?;
        let staged = vm.lua.create_table()?;
        Ok(Self {
            vm,
            env,
            loading,
            libraries: BTreeMap::new(),
            owners: std::collections::HashMap::new(),
            callbacks,
            staged,
            next_stage: 0,
        })
    }

    /// Compiles `code` and runs it to collect its functions (staged, not yet installed).
    fn compile(&mut self, code: &[u8]) -> Result<(String, Library), String> {
        let (name, skip) = metadata(code)?;
        let body = &code[skip..];
        let chunk = self
            .vm
            .lua
            .load(body)
            .set_name("@user_function")
            .set_mode(mlua::ChunkMode::Text)
            .set_environment(self.env.clone())
            .into_function()
            .map_err(|e| {
                format!(
                    "Error compiling function: {}",
                    super::eval::compile_error(&e)
                )
            })?;
        let registered: RefCell<Vec<(String, Func)>> = RefCell::new(Vec::new());
        self.next_stage += 1;
        let stage = self.next_stage;
        let callbacks = self
            .vm
            .lua
            .create_table()
            .and_then(|t| self.staged.raw_set(stage, &t).map(|()| t))
            .map_err(|e| format!("Error registering functions: {e}"))?;
        let started = Instant::now();
        let _ = self.vm.lua.set_hook(
            HookTriggers::new().every_nth_instruction(100_000),
            move |_, _| {
                if started.elapsed() > LOAD_TIMEOUT {
                    return Err(mlua::Error::RuntimeError(
                        "FUNCTION LOAD timeout".to_owned(),
                    ));
                }
                Ok(VmState::Continue)
            },
        );
        let _ = self.loading.raw_set("on", true);
        let ran = self.vm.lua.scope(|scope| {
            let register = scope.create_function(|_, args: MultiValue| {
                let (fname, callback, func) = match registration(args) {
                    Ok(r) => r,
                    Err(e) => return Ok(Some(e)),
                };
                if !valid_name(&fname) {
                    return Ok(Some(BAD_NAME.to_owned()));
                }
                let mut list = registered.borrow_mut();
                if list.iter().any(|(n, _)| *n == fname) {
                    return Ok(Some("Function already exists in the library".to_owned()));
                }
                callbacks.raw_set(fname.as_str(), callback)?;
                list.push((fname, func));
                Ok(None)
            })?;
            self.vm.run.raw_set("register", register)?;
            self.vm
                .invoke
                .call::<(bool, Value)>((chunk, self.vm.handler.clone(), true))
        });
        let _ = self.vm.run.raw_set("register", Value::Nil);
        let _ = self.loading.raw_set("on", false);
        self.vm.lua.remove_hook();
        self.vm.hooked.set(false);
        if !matches!(ran, Ok((true, _))) || registered.borrow().is_empty() {
            self.unstage(stage);
        }
        match ran {
            Ok((true, _)) => {}
            Ok((false, Value::Table(err))) => {
                let msg = match err.raw_get::<Value>("err") {
                    Ok(Value::String(s)) => s.to_string_lossy(),
                    _ => "unknown error".to_owned(),
                };
                return Err(format!("Error registering functions: {msg}"));
            }
            Ok((false, _)) => return Err("Error registering functions: unknown error".to_owned()),
            Err(e) => {
                return Err(format!(
                    "Error registering functions: {}",
                    super::vm::error_message(&e)
                ));
            }
        }
        let functions: BTreeMap<String, Func> = registered.into_inner().into_iter().collect();
        if functions.is_empty() {
            return Err("No functions registered".to_owned());
        }
        Ok((
            name,
            Library {
                code: code.to_vec(),
                functions,
                stage,
            },
        ))
    }

    /// Forgets a compiled library's staged callbacks.
    fn unstage(&self, stage: u64) {
        let _ = self.staged.raw_set(stage, Value::Nil);
    }

    /// Removes an installed library and its callbacks.
    /// Compiles and installs a library kept by a persistence sink, replacing one of its name.
    pub(crate) fn load_kept(&mut self, code: &[u8]) -> Result<(), String> {
        let (name, lib) = self.compile(code)?;
        self.install(name, lib, true)
    }

    /// Every library's name and code, for a persistence sink.
    fn libraries_kept(&self) -> crate::engine::Libraries {
        self.libraries
            .iter()
            .map(|(name, lib)| (name.clone(), lib.code.clone()))
            .collect()
    }

    fn remove(&mut self, name: &str) {
        if let Some(lib) = self.libraries.remove(name) {
            for fname in lib.functions.keys() {
                let lower = fname.to_ascii_lowercase();
                self.owners.remove(&lower);
                let _ = self.callbacks.raw_set(lower, Value::Nil);
            }
        }
    }

    /// An installed function's callback, by name in any case.
    fn callback(&self, name: &str) -> Option<Function> {
        self.callbacks
            .raw_get::<Option<Function>>(name.to_ascii_lowercase())
            .ok()
            .flatten()
    }

    /// Adds a compiled library; `replace` lets it take the place of one with its name. Its
    /// staged callbacks move to `callbacks`, or are dropped when it is refused.
    fn install(&mut self, name: String, lib: Library, replace: bool) -> Result<(), String> {
        let checked = self.check_install(&name, &lib, replace);
        let moved = checked.and_then(|existing| {
            if let Some(old) = existing {
                self.remove(&old);
            }
            let staged: Table = self
                .staged
                .raw_get(lib.stage)
                .map_err(|e| format!("Error registering functions: {e}"))?;
            for fname in lib.functions.keys() {
                let lower = fname.to_ascii_lowercase();
                let callback: Function = staged
                    .raw_get(fname.as_str())
                    .map_err(|e| format!("Error registering functions: {e}"))?;
                self.callbacks
                    .raw_set(lower.as_str(), callback)
                    .map_err(|e| format!("Error registering functions: {e}"))?;
                self.owners.insert(lower, name.clone());
            }
            Ok(())
        });
        self.unstage(lib.stage);
        moved?;
        self.libraries.insert(name, lib);
        Ok(())
    }

    /// The library `lib` replaces (if any), or why it may not be installed.
    fn check_install(
        &self,
        name: &str,
        lib: &Library,
        replace: bool,
    ) -> Result<Option<String>, String> {
        let existing = self.library_named(name);
        if existing.is_some() && !replace {
            return Err(format!("Library '{name}' already exists"));
        }
        for fname in lib.functions.keys() {
            let owner = self.owners.get(&fname.to_ascii_lowercase());
            if owner.is_some_and(|o| Some(o) != existing.as_ref()) {
                return Err(format!("Function {fname} already exists"));
            }
        }
        Ok(existing)
    }

    /// Interpreter bytes, libraries and functions.
    pub fn usage(&self) -> (usize, usize, usize) {
        let functions = self.libraries.values().map(|l| l.functions.len()).sum();
        (self.vm.lua.used_memory(), self.libraries.len(), functions)
    }

    /// Function names match regardless of case, as in Redis.
    fn find(&self, name: &str) -> Option<&Func> {
        let owner = self.owners.get(&name.to_ascii_lowercase())?;
        self.libraries
            .get(owner)?
            .functions
            .iter()
            .find_map(|(n, f)| n.eq_ignore_ascii_case(name).then_some(f))
    }

    /// The stored name of a library, whatever the case of `name`.
    fn library_named(&self, name: &str) -> Option<String> {
        self.libraries
            .keys()
            .find(|n| n.eq_ignore_ascii_case(name))
            .cloned()
    }

    fn dump(&self) -> Vec<u8> {
        let mut payload = DUMP_MAGIC.to_vec();
        for lib in self.libraries.values() {
            payload.extend_from_slice(&(lib.code.len() as u64).to_le_bytes());
            payload.extend_from_slice(&lib.code);
        }
        let digest = super::sha1_hex(&payload);
        payload.extend_from_slice(&digest.as_bytes()[..16]);
        payload
    }
}

/// The library codes of a FUNCTION DUMP payload, or None if it is not one of ours or damaged.
fn undump(payload: &[u8]) -> Option<Vec<Vec<u8>>> {
    let body_len = payload.len().checked_sub(16)?;
    let (body, digest) = payload.split_at(body_len);
    if !body.starts_with(DUMP_MAGIC) || super::sha1_hex(body).as_bytes()[..16] != *digest {
        return None;
    }
    let mut rest = &body[DUMP_MAGIC.len()..];
    let mut codes = Vec::new();
    while !rest.is_empty() {
        let len = u64::from_le_bytes(rest.get(..8)?.try_into().ok()?);
        let len = usize::try_from(len).ok()?;
        codes.push(rest.get(8..8usize.checked_add(len)?)?.to_vec());
        rest = &rest[8 + len..];
    }
    Some(codes)
}

/// FCALL / FCALL_RO (already on the script thread, store held).
pub fn fcall(cx: &mut Cx<'_, '_>, args: &Args<'_>, read_only: bool) {
    let Some(numkeys) = crate::num::parse_i64(args.get(2)) else {
        cx.out.error("ERR Bad number of keys provided");
        return;
    };
    let Some(numkeys) = super::key_count(cx, numkeys, args) else {
        return;
    };
    let shared = cx.shared;
    let engine = shared.scripting.functions.lock();
    let name = String::from_utf8_lossy(args.get(1)).into_owned();
    let (Some(func), Some(callback)) = (engine.find(&name), engine.callback(&name)) else {
        cx.out.error("ERR Function not found");
        return;
    };
    let no_writes = func.flags.contains(&"no-writes");
    if read_only && !no_writes {
        cx.out
            .error("ERR Can not execute a script with write flag using *_ro command.");
        return;
    }
    let allow_oom = func.flags.contains(&"allow-oom");
    if !no_writes && super::refused_at_start(cx, allow_oom) {
        return;
    }
    let inv = Invocation {
        func: callback,
        argv: *args,
        numkeys,
        eval: false,
        read_only: read_only || no_writes,
        allow_oom,
        name: ScriptName::Function(name),
        command: args.from(0).map(<[u8]>::to_vec).collect(),
    };
    execute(cx, &engine.vm, inv);
}

/// FUNCTION and its subcommands.
pub fn function(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let sub = args.get(1).to_ascii_lowercase();
    let shared = cx.shared;
    let scripting = &shared.scripting;
    match sub.as_slice() {
        b"load" if args.len() >= 3 => {
            let replace = args.len() == 4 && args.is(2, "replace");
            if args.len() == 4 && !replace {
                cx.out.error(&format!(
                    "ERR Unknown option given: {}",
                    String::from_utf8_lossy(args.get(2))
                ));
                return;
            }
            if args.len() > 4 {
                cx.out.error(&format!(
                    "ERR Unknown option given: {}",
                    String::from_utf8_lossy(args.get(2))
                ));
                return;
            }
            let code = args.get(args.len() - 1);
            let mut engine = scripting.functions.lock();
            let result = engine
                .compile(code)
                .and_then(|(name, lib)| engine.install(name.clone(), lib, replace).map(|()| name));
            drop(engine);
            match result {
                Ok(name) => {
                    keep_libraries(cx);
                    cx.out.bulk(name.as_bytes());
                }
                Err(e) => cx.out.error(&format!("ERR {e}")),
            }
        }
        b"list" => list(cx, args),
        b"delete" if args.len() == 3 => {
            let name = String::from_utf8_lossy(args.get(2)).into_owned();
            let mut engine = scripting.functions.lock();
            match engine.library_named(&name) {
                Some(stored) => {
                    engine.remove(&stored);
                    drop(engine);
                    keep_libraries(cx);
                    cx.out.ok();
                }
                None => cx.out.error("ERR Library not found"),
            }
        }
        b"flush" if args.len() <= 3 => {
            if args.len() == 3 && !args.is(2, "sync") && !args.is(2, "async") {
                cx.out
                    .error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
                return;
            }
            match FunctionEngine::new() {
                Ok(fresh) => {
                    *scripting.functions.lock() = fresh;
                    keep_libraries(cx);
                    cx.out.ok();
                }
                Err(e) => cx.out.error(&format!("ERR {e}")),
            }
        }
        b"dump" if args.len() == 2 => {
            let payload = scripting.functions.lock().dump();
            cx.out.bulk(&payload);
        }
        b"restore" if args.len() == 3 || args.len() == 4 => restore(cx, args),
        b"restore" if args.len() > 4 => cx.out.error(
            "ERR unknown subcommand or wrong number of arguments for 'restore'. Try FUNCTION HELP.",
        ),
        b"stats" if args.len() == 2 => stats(cx),
        b"kill" if args.len() == 2 => match scripting.flags.kill(false) {
            Ok(()) => cx.out.ok(),
            Err(e) => cx.out.error(e),
        },
        b"help" if args.len() == 2 => {
            let lines = [
                "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                "LOAD [REPLACE] <FUNCTION CODE>",
                "DELETE <LIBRARY NAME>",
                "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
                "FLUSH [ASYNC|SYNC]",
                "DUMP",
                "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
                "STATS",
                "KILL",
                "HELP",
            ];
            cx.out.array(lines.len());
            for line in lines {
                cx.out.simple(line);
            }
        }
        b"load" | b"delete" | b"flush" | b"dump" | b"restore" | b"stats" | b"kill" | b"help" => {
            cx.out.error(&format!(
                "ERR unknown subcommand or wrong number of arguments for '{}'. Try FUNCTION HELP.",
                String::from_utf8_lossy(args.get(1))
            ));
        }
        _ => unknown_subcommand(cx.out, "function", args.get(1)),
    }
}

fn list(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let mut with_code = false;
    let mut pattern: Option<&[u8]> = None;
    let mut i = 2;
    while i < args.len() {
        if !with_code && args.is(i, "withcode") {
            with_code = true;
        } else if pattern.is_none() && args.is(i, "libraryname") {
            if i + 1 >= args.len() {
                cx.out.error("ERR library name argument was not given");
                return;
            }
            i += 1;
            pattern = Some(args.get(i));
        } else {
            cx.out.error(&format!(
                "ERR Unknown argument {}",
                String::from_utf8_lossy(args.get(i))
            ));
            return;
        }
        i += 1;
    }
    let shared = cx.shared;
    let engine = shared.scripting.functions.lock();
    let libs: Vec<(&String, &Library)> = engine
        .libraries
        .iter()
        .filter(|(name, _)| pattern.is_none_or(|p| crate::glob::matches(p, name.as_bytes(), true)))
        .collect();
    let out = &mut *cx.out;
    out.array(libs.len());
    for (name, lib) in libs {
        out.map(if with_code { 4 } else { 3 });
        out.bulk(b"library_name");
        out.bulk(name.as_bytes());
        out.bulk(b"engine");
        out.bulk(b"LUA");
        out.bulk(b"functions");
        out.array(lib.functions.len());
        for (fname, func) in &lib.functions {
            out.map(3);
            out.bulk(b"name");
            out.bulk(fname.as_bytes());
            out.bulk(b"description");
            match &func.description {
                Some(d) => out.bulk(d),
                None => out.null(),
            }
            out.bulk(b"flags");
            out.set(func.flags.len());
            for flag in &func.flags {
                out.bulk(flag.as_bytes());
            }
        }
        if with_code {
            out.bulk(b"library_code");
            out.bulk(&lib.code);
        }
    }
}

fn restore(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let policy = if args.len() == 4 {
        args.get(3).to_ascii_lowercase()
    } else {
        b"append".to_vec()
    };
    if !matches!(policy.as_slice(), b"flush" | b"append" | b"replace") {
        cx.out.error(
            "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.",
        );
        return;
    }
    let Some(codes) = undump(args.get(2)) else {
        cx.out
            .error("ERR DUMP payload version or checksum are wrong");
        return;
    };
    let shared = cx.shared;
    let mut guard = shared.scripting.functions.lock();
    let mut fresh = match FunctionEngine::new() {
        Ok(f) => f,
        Err(e) => {
            cx.out.error(&format!("ERR {e}"));
            return;
        }
    };
    // Build the result in a fresh interpreter: the current one is untouched on any error.
    let mut keep: Vec<Vec<u8>> = Vec::new();
    if policy != b"flush" {
        keep = guard.libraries.values().map(|l| l.code.clone()).collect();
    }
    let mut compiled = Vec::new();
    for code in keep.iter().chain(codes.iter()) {
        match fresh.compile(code) {
            Ok(c) => compiled.push(c),
            Err(e) => {
                cx.out.error(&format!("ERR {e}"));
                return;
            }
        }
    }
    let kept = if policy == b"flush" { 0 } else { keep.len() };
    for (i, (name, lib)) in compiled.into_iter().enumerate() {
        let replace = i >= kept && policy == b"replace";
        if !replace && fresh.library_named(&name).is_some() {
            cx.out.error(&format!("ERR Library {name} already exists"));
            return;
        }
        let result = fresh.install(name, lib, replace);
        if let Err(e) = result {
            cx.out.error(&format!("ERR {e}"));
            return;
        }
    }
    *guard = fresh;
    drop(guard);
    keep_libraries(cx);
    cx.out.ok();
}

/// Hands the libraries as they are now to the persistence sink, if any. The store is taken
/// first and the libraries read under it (the order FCALL takes them in), so of two FUNCTION
/// changes racing, the later one to reach the store carries both.
fn keep_libraries(cx: &mut Cx<'_, '_>) {
    if cx.shared.durability.is_none() {
        return;
    }
    let shared = cx.shared;
    let store = cx.store.get();
    let libraries = shared.scripting.functions.lock().libraries_kept();
    store.functions_changed(libraries);
}

fn stats(cx: &mut Cx<'_, '_>) {
    let shared = cx.shared;
    let flags = &shared.scripting.flags;
    let running = if flags.running.load(Ordering::SeqCst) && !flags.is_eval.load(Ordering::SeqCst) {
        flags.current.lock().clone()
    } else {
        None
    };
    let (libraries, functions) = match shared.scripting.functions.try_lock() {
        Some(engine) => (
            engine.libraries.len(),
            engine.libraries.values().map(|l| l.functions.len()).sum(),
        ),
        None => (0, 0),
    };
    let out = &mut *cx.out;
    out.map(2);
    out.bulk(b"running_script");
    if let Some((name, command, started)) = running {
        out.map(3);
        out.bulk(b"name");
        out.bulk(name.as_bytes());
        out.bulk(b"command");
        out.array(command.len());
        for arg in &command {
            out.bulk(arg);
        }
        out.bulk(b"duration_ms");
        out.int(i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX));
    } else {
        out.null();
    }
    out.bulk(b"engines");
    out.map(1);
    out.bulk(b"LUA");
    out.map(2);
    out.bulk(b"libraries_count");
    out.int(libraries as i64);
    out.bulk(b"functions_count");
    out.int(functions as i64);
}
