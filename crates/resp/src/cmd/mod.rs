//! Command dispatch: lookup without allocating, arity/auth/pub-sub/MULTI checks, then the handler.

mod bitmaps;
mod common;
mod connection;
mod geo;
mod getkeys;
mod hashes;
mod hyperloglog;
mod keys;
mod lcs;
mod lists;
mod persistence;
mod pops;
mod pubsub;
mod scripting;
mod server;
mod sets;
mod sort;
mod stream_groups;
mod stream_info;
mod streams;
mod strings;
mod table;
mod tx;
mod zsets;
mod zsets_multi;

use std::ops::Range;
use std::sync::atomic::Ordering;

use parking_lot::MutexGuard;

pub use table::{COMMANDS, Command, flags, lookup};

use crate::engine::Store;
use crate::reply::Out;
use crate::session::Session;
use crate::shared::Shared;

/// The arguments of one command: spans of a buffer (the read buffer, the inline scratch or a
/// queued MULTI command), so nothing is copied to dispatch.
#[derive(Debug, Clone, Copy)]
pub struct Args<'a> {
    buf: &'a [u8],
    spans: &'a [Range<usize>],
}

impl<'a> Args<'a> {
    pub fn new(buf: &'a [u8], spans: &'a [Range<usize>]) -> Self {
        Self { buf, spans }
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Argument `i`, or empty when out of range (arity is checked before handlers run).
    pub fn get(&self, i: usize) -> &'a [u8] {
        self.spans
            .get(i)
            .and_then(|r| self.buf.get(r.clone()))
            .unwrap_or(&[])
    }

    /// Arguments from `i` on.
    pub fn from(
        &self,
        i: usize,
    ) -> impl ExactSizeIterator<Item = &'a [u8]> + DoubleEndedIterator + 'a {
        let buf = self.buf;
        self.spans
            .get(i..)
            .unwrap_or(&[])
            .iter()
            .map(move |r| buf.get(r.clone()).unwrap_or(&[]))
    }

    /// Argument `i` compared case-insensitively with an ASCII option name.
    pub fn is(&self, i: usize, option: &str) -> bool {
        self.get(i).eq_ignore_ascii_case(option.as_bytes())
    }

    /// Copies the arguments into an owned buffer (MULTI queues them).
    pub fn to_owned_parts(&self) -> (Vec<u8>, Vec<Range<usize>>) {
        let mut data = Vec::with_capacity(self.spans.iter().map(|r| r.len()).sum());
        let mut spans = Vec::with_capacity(self.spans.len());
        for arg in self.from(0) {
            let start = data.len();
            data.extend_from_slice(arg);
            spans.push(start..data.len());
        }
        (data, spans)
    }
}

/// The store lock, taken on first use and held until the read batch is answered, so a pipeline
/// of commands costs one lock, and EXEC runs its queue atomically.
pub struct StoreSlot<'s> {
    mutex: &'s parking_lot::Mutex<Store>,
    guard: Option<MutexGuard<'s, Store>>,
    /// The store's change generation when the lock was taken (always 0 when untracked).
    generation_at_lock: u64,
    /// The generation after the last change made while this slot held the lock.
    wrote: Option<u64>,
}

impl<'s> StoreSlot<'s> {
    pub fn new(mutex: &'s parking_lot::Mutex<Store>) -> Self {
        Self {
            mutex,
            guard: None,
            generation_at_lock: 0,
            wrote: None,
        }
    }

    pub fn get(&mut self) -> &mut Store {
        if self.guard.is_none() {
            let guard = self.mutex.lock();
            self.generation_at_lock = guard.generation();
            self.guard = Some(guard);
        }
        match self.guard.as_mut() {
            Some(guard) => guard,
            None => unreachable!("the guard was just set"),
        }
    }

    /// Notes whether the store changed while held, before the lock goes.
    fn note_changes(&mut self) {
        if let Some(store) = self.guard.as_ref() {
            let now = store.generation();
            if now != self.generation_at_lock {
                self.wrote = Some(now);
            }
        }
    }

    /// Releases the store; returns the generation of the last change made through this slot, if
    /// any (what a connection waits for under `appendfsync always`).
    pub fn finish(mut self) -> Option<u64> {
        self.release();
        self.wrote
    }

    /// Serves blocked clients if the last command pushed to a list they wait on.
    pub fn after_command(&mut self) {
        if let Some(store) = self.guard.as_mut()
            && !store.blocking.is_empty()
        {
            store.serve_blocked();
        }
    }

    /// True when this slot holds the store.
    pub fn held(&self) -> bool {
        self.guard.is_some()
    }

    /// Takes the store, waiting while it is busy, unless `give_up` turns true first (a script
    /// running past busy-reply-threshold). False when it gave up.
    pub fn acquire_unless(&mut self, give_up: impl Fn() -> bool) -> bool {
        while self.guard.is_none() {
            match self.mutex.try_lock_for(std::time::Duration::from_millis(2)) {
                Some(guard) => {
                    self.generation_at_lock = guard.generation();
                    self.guard = Some(guard);
                }
                None if give_up() => return false,
                None => {}
            }
        }
        true
    }

    pub fn release(&mut self) {
        self.note_changes();
        self.guard = None;
    }
}

/// Everything a handler may touch.
pub struct Cx<'a, 's> {
    pub shared: &'a Shared,
    pub session: &'a mut Session,
    pub out: &'a mut Out,
    pub store: &'a mut StoreSlot<'s>,
}

impl Cx<'_, '_> {
    /// The selected database index.
    pub fn db(&self) -> usize {
        self.session.db
    }
}

/// A command handler.
pub type Handler = fn(&mut Cx<'_, '_>, &Args<'_>);

pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
pub const NOT_INTEGER: &str = "ERR value is not an integer or out of range";
pub const NOT_FLOAT: &str = "ERR value is not a valid float";
pub const SYNTAX: &str = "ERR syntax error";
pub const NO_KEY: &str = "ERR no such key";
pub const OUT_OF_RANGE: &str = "ERR index out of range";

/// Parses an integer argument or replies with Redis's error.
pub fn int_arg(out: &mut Out, arg: &[u8]) -> Option<i64> {
    let v = crate::num::parse_i64(arg);
    if v.is_none() {
        out.error(NOT_INTEGER);
    }
    v
}

/// Parses a float argument or replies with Redis's error.
pub fn float_arg(out: &mut Out, arg: &[u8]) -> Option<f64> {
    let v = crate::num::parse_f64(arg);
    if v.is_none() {
        out.error(NOT_FLOAT);
    }
    v
}

/// Parses a non-negative count (LPOP, SPOP, ZPOPMIN counts); anything else is worded "must be
/// positive", as Redis does.
pub fn positive_arg(out: &mut Out, arg: &[u8]) -> Option<usize> {
    match crate::num::parse_i64(arg) {
        Some(n) if n >= 0 => usize::try_from(n).ok(),
        _ => {
            out.error("ERR value is out of range, must be positive");
            None
        }
    }
}

/// Lower-cases a command name into `buf` without allocating; None when too long to be one.
fn lowercase<'b>(name: &[u8], buf: &'b mut [u8; 32]) -> Option<&'b [u8]> {
    let dst = buf.get_mut(..name.len())?;
    for (d, s) in dst.iter_mut().zip(name) {
        *d = s.to_ascii_lowercase();
    }
    Some(dst)
}

/// Runs one command: lookup, checks, MULTI queueing, handler.
pub fn dispatch(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let name = args.get(0);
    let mut lower = [0u8; 32];
    let Some(cmd) = lowercase(name, &mut lower).and_then(lookup) else {
        unknown_command(cx, args);
        return;
    };
    let argc = args.len() as i64;
    let arity = i64::from(cmd.arity);
    if (arity > 0 && argc != arity) || argc < -arity {
        cx.flag_multi_error();
        cx.out.error(&format!(
            "ERR wrong number of arguments for '{}' command",
            cmd.name
        ));
        return;
    }
    if !cx.session.authenticated && cmd.flags & flags::NO_AUTH == 0 {
        cx.flag_multi_error();
        cx.out.error("NOAUTH Authentication required.");
        return;
    }
    if cx.session.subscriptions() > 0 && !cx.out.resp3 && cmd.flags & flags::SUBSCRIBED_OK == 0 {
        cx.out.error(&format!(
            "ERR Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context",
            cmd.name
        ));
        return;
    }
    if !cx.store.held() && !scripting::allowed_while_busy(cmd, args) {
        let run = &cx.shared.scripting.flags;
        if !cx.store.acquire_unless(|| run.busy.load(Ordering::SeqCst)) {
            cx.flag_multi_error();
            cx.out.error(run.busy_error());
            return;
        }
    }
    let shared = cx.shared;
    if cmd.flags & flags::WRITE != 0
        && let Some(durability) = shared.durability.as_ref()
        && durability.is_failing()
        && let Some(refusal) = durability.write_refusal(cx.store.get().dirty_len())
    {
        cx.flag_multi_error();
        cx.out.error(&refusal);
        return;
    }
    if cx.session.multi.is_some() && cmd.flags & flags::TX_CONTROL == 0 {
        tx::queue(cx, cmd, args);
        return;
    }
    run(cx, cmd, args);
}

/// Runs a command that passed the checks (also used by EXEC for queued commands).
pub fn run(cx: &mut Cx<'_, '_>, cmd: &'static Command, args: &Args<'_>) {
    cx.session
        .info
        .last_command
        .store(cmd.index, Ordering::Relaxed);
    cx.session.commands_run += 1;
    (cmd.handler)(cx, args);
    if cx.session.multi.is_none() && !cx.session.in_exec {
        cx.store.after_command();
    }
}

impl Cx<'_, '_> {
    /// Marks the open transaction as failed (an error while queueing).
    pub fn flag_multi_error(&mut self) {
        if let Some(multi) = self.session.multi.as_mut() {
            multi.error = true;
        }
    }
}

fn unknown_command(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    cx.flag_multi_error();
    let mut listed = String::new();
    for arg in args.from(1) {
        if listed.len() >= 128 {
            break;
        }
        let room = 128 - listed.len();
        let text = String::from_utf8_lossy(arg);
        let cut: String = text.chars().take(room).collect();
        listed.push('\'');
        listed.push_str(&cut);
        listed.push_str("' ");
    }
    let name = String::from_utf8_lossy(args.get(0));
    let name: String = name.chars().take(128).collect();
    cx.out.error(&format!(
        "ERR unknown command '{name}', with args beginning with: {listed}"
    ));
}

/// Replies Redis's error for an unknown subcommand of `cmd`.
pub fn unknown_subcommand(out: &mut Out, cmd: &str, sub: &[u8]) {
    let sub = String::from_utf8_lossy(sub);
    let sub: String = sub.chars().take(128).collect();
    out.error(&format!(
        "ERR unknown subcommand '{sub}'. Try {} HELP.",
        cmd.to_ascii_uppercase()
    ));
}

/// Replies Redis's arity error for a subcommand such as `config|get`.
pub fn subcommand_arity(out: &mut Out, full_name: &str) {
    out.error(&format!(
        "ERR wrong number of arguments for '{full_name}' command"
    ));
}
