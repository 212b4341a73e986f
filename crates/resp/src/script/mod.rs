//! Lua scripting (EVAL, FUNCTION): the interpreters, the script cache, the run state other
//! clients see (BUSY, SCRIPT KILL), and the runner shared by EVAL and FCALL.

mod convert;
mod current;
pub mod eval;
pub mod functions;
pub mod harness;
mod libs;
mod runner;
mod vm;

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;

pub use convert::lua_number_text;
pub use runner::{ScriptJob, run_job};

/// What other clients can see of the script running now.
#[derive(Debug, Default)]
pub struct RunFlags {
    pub running: AtomicBool,
    /// Running longer than busy-reply-threshold: other clients get BUSY.
    pub busy: AtomicBool,
    /// SCRIPT KILL / FUNCTION KILL asked it to stop.
    pub killed: AtomicBool,
    /// It ran a write command (then it cannot be killed).
    pub wrote: AtomicBool,
    /// EVAL rather than FCALL (decides which KILL applies and the BUSY text).
    pub is_eval: AtomicBool,
    /// The running script's name, command line and start (FUNCTION STATS).
    pub current: Mutex<Option<Running>>,
}

/// The running script's name, command line and start.
pub type Running = (String, Vec<Vec<u8>>, std::time::Instant);

impl RunFlags {
    /// The BUSY error other clients get while a script runs too long.
    pub fn busy_error(&self) -> &'static str {
        if self.is_eval.load(Ordering::Relaxed) {
            "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
        } else {
            "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
        }
    }

    /// SCRIPT KILL (`eval`) or FUNCTION KILL: the reply, as Redis words it.
    pub fn kill(&self, eval: bool) -> Result<(), &'static str> {
        if !self.running.load(Ordering::SeqCst) {
            return Err("NOTBUSY No scripts in execution right now.");
        }
        if self.wrote.load(Ordering::SeqCst) {
            return Err(
                "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.",
            );
        }
        let running_eval = self.is_eval.load(Ordering::SeqCst);
        if eval != running_eval {
            return Err(self.busy_error());
        }
        self.killed.store(true, Ordering::SeqCst);
        Ok(())
    }
}

/// A script that declared its flags (a shebang, a function) and may write is refused, as Redis
/// refuses a write command, over maxmemory unless it says `allow-oom` (OOM), on a read-only
/// replica (READONLY) or without enough good replicas (NOREPLICAS); true once the error is
/// written.
fn refused_at_start(cx: &mut crate::cmd::Cx<'_, '_>, allow_oom: bool) -> bool {
    let limit = cx.shared.maxmemory.load(Ordering::Relaxed);
    if !allow_oom && limit != 0 && cx.store.get().used_memory() > limit {
        cx.out.error(crate::cmd::maxmemory::OOM);
        return true;
    }
    if cx.shared.replica.is_some() {
        // Redis's words for a script with the write flag on a read-only replica.
        cx.out
            .error("READONLY Can not run script with write flag on readonly replica");
        return true;
    }
    if cx.shared.no_good_replicas.load(Ordering::Relaxed) {
        cx.out.error(crate::cmd::NOREPLICAS);
        return true;
    }
    false
}

/// The scripting state of a server.
pub struct Scripting {
    pub eval: Mutex<eval::EvalEngine>,
    pub functions: Mutex<functions::FunctionEngine>,
    pub flags: Arc<RunFlags>,
}

impl fmt::Debug for Scripting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scripting")
            .field("flags", &self.flags)
            .finish()
    }
}

/// Why the scripting engine could not start (Lua out of memory).
#[derive(Debug, thiserror::Error)]
#[error("starting the Lua interpreter failed: {0}")]
pub struct StartError(String);

impl Scripting {
    pub fn new() -> Result<Self, StartError> {
        let start = |e: mlua::Error| StartError(e.to_string());
        Ok(Self {
            eval: Mutex::new(eval::EvalEngine::new().map_err(start)?),
            functions: Mutex::new(functions::FunctionEngine::new().map_err(start)?),
            flags: Arc::new(RunFlags::default()),
        })
    }

    /// Installs function libraries kept by a persistence sink (at start, before any client).
    pub fn load_libraries(&self, libraries: &crate::engine::Libraries) -> Result<(), StartError> {
        *self.functions.lock() =
            compiled(libraries).map_err(|e| StartError(format!("the stored function {e}")))?;
        Ok(())
    }

    /// Replaces the function libraries with `libraries` (a follower's, as its primary's
    /// changed), compiled before the engine is swapped; a library that does not compile leaves
    /// the engine as it was.
    pub async fn replace_libraries(
        &self,
        libraries: &crate::engine::Libraries,
    ) -> Result<(), String> {
        let fresh = compiled(libraries)?;
        // A function running holds the engine: wait for it without blocking the runtime.
        loop {
            if let Some(mut engine) = self.functions.try_lock() {
                *engine = fresh;
                return Ok(());
            }
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
    }
}

/// A function engine holding `libraries`; the error names the library that does not load.
fn compiled(libraries: &crate::engine::Libraries) -> Result<functions::FunctionEngine, String> {
    let mut engine = functions::FunctionEngine::new().map_err(|e| e.to_string())?;
    for (name, code) in libraries {
        engine
            .load_kept(code)
            .map_err(|e| format!("library {name:?} does not load: {e}"))?;
    }
    Ok(engine)
}

/// What INFO memory reports of scripting (zeros while a script holds an interpreter).
#[derive(Debug, Default)]
pub struct ScriptMemory {
    pub eval_bytes: usize,
    pub functions_bytes: usize,
    pub cached_scripts: usize,
    pub functions: usize,
    pub libraries: usize,
}

impl Scripting {
    pub fn memory(&self) -> ScriptMemory {
        let mut m = ScriptMemory::default();
        if let Some(eval) = self.eval.try_lock() {
            (m.eval_bytes, m.cached_scripts) = eval.usage();
        }
        if let Some(functions) = self.functions.try_lock() {
            (m.functions_bytes, m.libraries, m.functions) = functions.usage();
        }
        m
    }
}

/// True on a worker of a multi-thread tokio runtime, where a long script can hand the worker's
/// other tasks to a new thread (`tokio::task::block_in_place`) and so may run inline.
pub fn can_hand_off() -> bool {
    matches!(
        tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()),
        Ok(tokio::runtime::RuntimeFlavor::MultiThread)
    )
}

/// SHA-1 of `data` in lower-case hex (script ids, redis.sha1hex).
pub fn sha1_hex(data: &[u8]) -> String {
    use sha1::{Digest, Sha1};
    let digest = Sha1::digest(data);
    let mut hex = String::with_capacity(40);
    for byte in digest {
        hex.push(char::from(b"0123456789abcdef"[usize::from(byte >> 4)]));
        hex.push(char::from(b"0123456789abcdef"[usize::from(byte & 15)]));
    }
    hex
}

/// The `numkeys` of EVAL and FCALL (`CMD name numkeys key... arg...`) checked against the
/// arguments given, with Redis's errors; `None` once the error is written.
fn key_count(
    cx: &mut crate::cmd::Cx<'_, '_>,
    numkeys: i64,
    args: &crate::cmd::Args<'_>,
) -> Option<usize> {
    if numkeys < 0 {
        cx.out.error("ERR Number of keys can't be negative");
        return None;
    }
    let numkeys = numkeys as usize;
    if numkeys > args.len() - 3 {
        cx.out
            .error("ERR Number of keys can't be greater than number of args");
        return None;
    }
    Some(numkeys)
}
