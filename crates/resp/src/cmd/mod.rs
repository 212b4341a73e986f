//! Command dispatch: lookup without allocating, arity/auth/pub-sub/MULTI checks, then the handler.

pub(crate) mod acl;
mod bitmaps;
mod client_admin;
mod command;
pub(crate) mod command_info;
mod common;
mod connection;
mod dump;
mod geo;
mod getkeys;
mod hashes;
mod hyperloglog;
mod introspect;
pub(crate) mod key_specs;
mod keys;
mod lcs;
mod lists;
pub(crate) mod maxmemory;
mod migrate;
mod monitoring;
pub(crate) mod notify;
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
mod tracking;
mod tx;
mod zsets;
mod zsets_multi;

use std::ops::Range;
use std::sync::atomic::Ordering;

use parking_lot::MutexGuard;

pub(crate) use getkeys::key_positions;
pub use table::{COMMANDS, Command, flags, lookup};

use crate::engine::Store;
use crate::reply::Out;
use crate::session::Session;
use crate::shared::Shared;

/// The arguments of one command: spans of a buffer (the read buffer, the inline scratch or a
/// queued MULTI command), so nothing is copied to dispatch.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Args<'a> {
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

    /// Argument `i`, or empty when out of range (arity is checked before handlers run).
    pub fn get(&self, i: usize) -> &'a [u8] {
        self.spans
            .get(i)
            .and_then(|r| self.buf.get(r.clone()))
            .unwrap_or(&[])
    }

    /// The arguments from `n` on, as a call of their own (ACL DRYRUN's command).
    pub fn skip(&self, n: usize) -> Args<'a> {
        Args {
            buf: self.buf,
            spans: self.spans.get(n..).unwrap_or(&[]),
        }
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
    pub fn to_owned_parts(self) -> (Vec<u8>, Vec<Range<usize>>) {
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
pub(crate) struct StoreSlot<'s> {
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
pub(crate) struct Cx<'a, 's> {
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
pub(crate) type Handler = fn(&mut Cx<'_, '_>, &Args<'_>);

// Redis's error replies word for word: clients and test suites match on the text.
pub(crate) const WRONGTYPE: &str =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
pub(crate) const NOT_INTEGER: &str = "ERR value is not an integer or out of range";
pub(crate) const NOT_FLOAT: &str = "ERR value is not a valid float";
pub(crate) const SYNTAX: &str = "ERR syntax error";
pub(crate) const NO_KEY: &str = "ERR no such key";
pub(crate) const OUT_OF_RANGE: &str = "ERR index out of range";
pub(crate) const NOREPLICAS: &str = "NOREPLICAS Not enough good replicas to write.";

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

/// Whether `name` (un)subscribes: their confirmations are pushes, sent even under CLIENT REPLY
/// OFF or SKIP, as Redis sends them.
pub(crate) fn is_subscription_command(name: &[u8]) -> bool {
    const NAMES: [&[u8]; 6] = [
        b"subscribe",
        b"psubscribe",
        b"ssubscribe",
        b"unsubscribe",
        b"punsubscribe",
        b"sunsubscribe",
    ];
    NAMES.iter().any(|n| name.eq_ignore_ascii_case(n))
}

/// Runs one command: lookup, checks, MULTI queueing, handler.
pub(crate) fn dispatch(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let mark = cx.out.buf.len();
    let name = args.get(0);
    let mut lower = [0u8; 32];
    let Some(cmd) = lowercase(name, &mut lower).and_then(lookup) else {
        unknown_command(cx, args);
        cx.shared.observe.error_reply(b"ERR");
        return;
    };
    if !checked(cx, cmd, args) {
        if let Some(reply) = cx.out.buf.get(mark + 1..) {
            cx.shared.observe.rejected(cmd, reply);
        }
        return;
    }
    if cx.store.held()
        && cx.shared.maxmemory.load(Ordering::Relaxed) != 0
        && !maxmemory::admit(cx, cmd, args)
    {
        return;
    }
    let shared = cx.shared;
    // A read-only follower refuses what writes, as Redis's replica-read-only does (EXEC of a
    // transaction that queued a write too).
    if shared.replica.is_some() && writes(cx, cmd) {
        reject(cx, cmd, crate::replica::READONLY);
        return;
    }
    if shared.no_good_replicas.load(Ordering::Relaxed) && writes(cx, cmd) {
        reject(cx, cmd, NOREPLICAS);
        return;
    }
    if cmd.flags & flags::WRITE != 0
        && let Some(durability) = shared.durability.as_ref()
        && durability.is_failing()
        && let Some(refusal) = durability.write_refusal(cx.store.get().dirty_len())
    {
        reject(cx, cmd, &refusal);
        return;
    }
    if cx.session.multi.is_some() && cmd.flags & flags::TX_CONTROL == 0 {
        tx::queue(cx, cmd, args);
        return;
    }
    run(cx, cmd, args);
}

/// Whether `cmd` writes: its flag, or for EXEC a queued command's.
fn writes(cx: &Cx<'_, '_>, cmd: &Command) -> bool {
    match &cx.session.multi {
        Some(multi) if cmd.name == "exec" => {
            multi.queued.iter().any(|q| q.cmd.flags & flags::WRITE != 0)
        }
        _ => cmd.flags & flags::WRITE != 0,
    }
}

/// The checks before a command runs or is queued; false once the error is written.
fn checked(cx: &mut Cx<'_, '_>, cmd: &'static Command, args: &Args<'_>) -> bool {
    let argc = args.len() as i64;
    let arity = i64::from(cmd.arity);
    if (arity > 0 && argc != arity) || argc < -arity {
        reject(
            cx,
            cmd,
            &format!("ERR wrong number of arguments for '{}' command", cmd.name),
        );
        return false;
    }
    if cmd.flags & flags::CONTAINER != 0 && !subcommand_checked(cx, cmd, args) {
        return false;
    }
    if !cx.session.authenticated && cmd.flags & flags::NO_AUTH == 0 {
        reject(cx, cmd, "NOAUTH Authentication required.");
        return false;
    }
    if cmd.flags & flags::NO_MULTI != 0 && cx.session.multi.is_some() {
        reject(cx, cmd, "ERR Command not allowed inside a transaction");
        return false;
    }
    // One atomic load for a user allowed everything (the default user as it starts).
    if !cx.session.user.is_unrestricted() && !acl::permit(cx, cmd, args) {
        return false;
    }
    if cx.session.subscriptions() > 0 && !cx.out.resp3 && cmd.flags & flags::SUBSCRIBED_OK == 0 {
        reject(
            cx,
            cmd,
            &format!(
                "ERR Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context",
                cmd.name
            ),
        );
        return false;
    }
    if !cx.store.held() && !scripting::allowed_while_busy(cmd, args) {
        let run = &cx.shared.scripting.flags;
        if !cx.store.acquire_unless(|| run.busy.load(Ordering::SeqCst)) {
            reject(cx, cmd, run.busy_error());
            return false;
        }
    }
    true
}

/// A container's subcommand exists and has its arity (Redis checks both before anything else);
/// false once the error is written. A container alone (CONFIG) is left to its handler.
fn subcommand_checked(cx: &mut Cx<'_, '_>, cmd: &'static Command, args: &Args<'_>) -> bool {
    if args.len() < 2 {
        return true;
    }
    let sub = String::from_utf8_lossy(args.get(1)).to_ascii_lowercase();
    let full = format!("{}|{sub}", cmd.name);
    match command_info::infos().get(&full) {
        None => {
            let sub = String::from_utf8_lossy(args.get(1));
            let sub: String = sub.chars().take(128).collect();
            let error = format!(
                "ERR unknown subcommand '{sub}'. Try {} HELP.",
                cmd.name.to_ascii_uppercase()
            );
            reject(cx, cmd, &error);
            false
        }
        Some(info) => {
            let argc = args.len() as i64;
            let arity = i64::from(info.arity);
            if (arity > 0 && argc != arity) || argc < -arity {
                let error = format!("ERR wrong number of arguments for '{full}' command");
                reject(cx, cmd, &error);
                return false;
            }
            true
        }
    }
}

/// Refuses a command before it runs, as Redis's rejectCommand: an open transaction is marked
/// failed, and a refused EXEC discards it, its error prefixed with EXECABORT.
pub(crate) fn reject(cx: &mut Cx<'_, '_>, cmd: &'static Command, error: &str) {
    cx.flag_multi_error();
    if cmd.name == "exec" {
        tx::discard_transaction(cx);
        cx.out.error(&format!(
            "EXECABORT Transaction discarded because of: {error}"
        ));
    } else {
        cx.out.error(error);
    }
}

/// Runs a command that passed the checks (also used by EXEC for queued commands).
pub(crate) fn run(cx: &mut Cx<'_, '_>, cmd: &'static Command, args: &Args<'_>) {
    cx.session
        .info
        .last_command
        .store(cmd.index, Ordering::Relaxed);
    cx.session.commands_run += 1;
    if cmd.flags & flags::CONTAINER != 0 {
        let mut sub = cx.session.info.last_subcommand.lock();
        sub.clear();
        sub.extend(args.get(1).iter().map(u8::to_ascii_lowercase));
    }
    let mark = cx.out.buf.len();
    let monitored = cx.shared.observe.has_monitors() && cmd.flags & flags::ADMIN == 0;
    // Scripts show before the commands they run; the rest once they ran (so EXEC follows its
    // queue). A script about to be deferred shows when it runs.
    let script = matches!(
        cmd.name,
        "eval" | "evalsha" | "eval_ro" | "evalsha_ro" | "fcall" | "fcall_ro"
    );
    if monitored && script && (cx.session.inline_scripts || cx.session.in_exec) {
        feed_monitors(cx, args);
    }
    tracking::before_command(cx);
    let notifying = cx.store.held() && cx.store.get().notify_flags() != 0;
    let consumers = if notifying && cmd.name.starts_with('x') {
        notify::consumers_before(cx, cmd.name, args)
    } else {
        Vec::new()
    };
    let began = std::time::Instant::now();
    (cmd.handler)(cx, args);
    let took = began.elapsed();
    if notifying {
        let flags = cx.store.get().notify_flags();
        if flags != 0 {
            notify::consumer_events(cx, cmd.name, args, consumers);
            notify::command_events(cx, cmd.name, args);
            let events = cx.store.get().take_events();
            notify::publish_events(cx, events, flags);
        }
    }
    if monitored && !script {
        feed_monitors(cx, args);
    }
    // A script handed to the blocking pool is counted when it runs there.
    if !matches!(cx.session.action, crate::session::Action::Script(_)) {
        record(cx, cmd, args, mark, took);
    }
    if cx.session.multi.is_none() && !cx.session.in_exec {
        cx.store.after_command();
        if cx.store.held() {
            // Serving blocked clients raised its own events (engine::blocking).
            let store = cx.store.get();
            let flags = store.notify_flags();
            if flags != 0 {
                store.take_touched();
                let events = store.take_events();
                notify::publish_events(cx, events, flags);
            }
        }
    }
    tracking::after_command(cx, cmd, args);
}

fn feed_monitors(cx: &Cx<'_, '_>, args: &Args<'_>) {
    let from = (!cx.session.script_client).then_some(cx.session.info.addr.as_str());
    cx.shared.observe.feed_monitors(cx.session.db, from, args);
}

/// Counts a command that ran (INFO commandstats, errorstats) and logs it if it was slow.
fn record(
    cx: &mut Cx<'_, '_>,
    cmd: &'static Command,
    args: &Args<'_>,
    mark: usize,
    took: std::time::Duration,
) {
    let observe = &cx.shared.observe;
    let failed = match cx.out.buf.get(mark) {
        Some(b'-') => cx.out.buf.get(mark + 1..),
        _ => None,
    };
    // A script's error that a command inside it counted already is not counted again.
    let counted = std::mem::take(&mut cx.session.error_counted);
    observe.ran(cmd, took, failed, !counted);
    if observe.is_slow(took) && cmd.name != "exec" {
        let name = cx.session.info.name.lock().clone().unwrap_or_default();
        observe.log_slow(args, took, &cx.session.info.addr, name);
    }
}

/// When CLIENT PAUSE holds back the command in `args` now: the instant the pause ends.
pub(crate) fn held_by_pause(
    shared: &Shared,
    session: &Session,
    args: &Args<'_>,
) -> Option<std::time::Instant> {
    if !shared.pause.is_on() || session.script_client {
        return None;
    }
    let mut lower = [0u8; 32];
    let cmd = lowercase(args.get(0), &mut lower).and_then(lookup)?;
    // Inside MULTI commands are only queued; EXEC is what waits.
    if session.multi.is_some() && cmd.name != "exec" {
        return None;
    }
    shared.pause.holds(cmd, args)
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
