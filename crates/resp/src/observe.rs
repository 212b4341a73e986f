//! What the server records about the commands it runs: per-command counters (INFO
//! commandstats), error replies by code (INFO errorstats), the slow log, and MONITOR feeds.

use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;

use crate::cmd::{Args, COMMANDS, Command};
use crate::params::Params;

/// Counters of one command (INFO commandstats).
#[derive(Debug, Default)]
pub struct CommandStat {
    pub calls: AtomicU64,
    pub usec: AtomicU64,
    pub rejected: AtomicU64,
    pub failed: AtomicU64,
}

/// One slow log entry, with its arguments already cut as Redis cuts them.
#[derive(Debug, Clone)]
pub struct SlowEntry {
    pub id: u64,
    pub unix_secs: i64,
    pub micros: u64,
    pub args: Vec<Vec<u8>>,
    pub addr: String,
    pub name: Vec<u8>,
}

/// The slow log: newest first, at most `slowlog-max-len` entries.
#[derive(Debug, Default)]
pub struct SlowLog {
    pub entries: VecDeque<SlowEntry>,
    pub next_id: u64,
}

/// Arguments past this are folded into "... (N more arguments)".
const SLOW_MAX_ARGS: usize = 32;
/// String arguments are cut to this, with "... (N more bytes)".
const SLOW_MAX_ARG_LEN: usize = 128;

/// Server-wide records of commands.
#[derive(Debug)]
pub struct Observe {
    /// Indexed like [`COMMANDS`].
    pub commands: Vec<CommandStat>,
    /// Error replies by their code (the first word: ERR, WRONGTYPE, ...).
    pub errors: Mutex<BTreeMap<String, u64>>,
    pub error_replies: AtomicU64,
    pub slowlog: Mutex<SlowLog>,
    /// slowlog-log-slower-than in microseconds; negative turns the log off.
    pub slower_than: AtomicI64,
    pub slowlog_max: AtomicUsize,
    /// MONITOR clients: their id and where their lines go.
    monitors: Mutex<Vec<(u64, Monitor)>>,
    /// How many MONITOR clients there are (checked before formatting anything).
    monitor_count: AtomicUsize,
}

/// Where a MONITOR client's lines go (its connection writes them out).
pub type Monitor = tokio::sync::mpsc::UnboundedSender<bytes::Bytes>;

impl Default for Observe {
    fn default() -> Self {
        Self {
            commands: COMMANDS.iter().map(|_| CommandStat::default()).collect(),
            errors: Mutex::new(BTreeMap::new()),
            error_replies: AtomicU64::new(0),
            slowlog: Mutex::new(SlowLog::default()),
            slower_than: AtomicI64::new(10_000),
            slowlog_max: AtomicUsize::new(128),
            monitors: Mutex::new(Vec::new()),
            monitor_count: AtomicUsize::new(0),
        }
    }
}

/// The code of an error reply's text: its first word.
fn error_code(text: &[u8]) -> String {
    let word = text.split(|&b| b == b' ').next().unwrap_or(b"ERR");
    String::from_utf8_lossy(word).into_owned()
}

impl Observe {
    /// Takes the parameters this module caches (after CONFIG SET).
    pub fn refresh(&self, params: &Params) {
        if let Some(v) = params
            .get("slowlog-log-slower-than")
            .and_then(|v| v.parse().ok())
        {
            self.slower_than.store(v, Ordering::Relaxed);
        }
        if let Some(v) = params.get("slowlog-max-len").and_then(|v| v.parse().ok()) {
            self.slowlog_max.store(v, Ordering::Relaxed);
            let mut log = self.slowlog.lock();
            log.entries.truncate(v);
        }
    }

    /// Counts an error reply whose text (after the `-`) starts `reply`.
    pub fn error_reply(&self, reply: &[u8]) {
        let end = memchr::memchr(b'\r', reply).unwrap_or(reply.len());
        let code = error_code(&reply[..end]);
        self.error_replies.fetch_add(1, Ordering::Relaxed);
        *self.errors.lock().entry(code).or_insert(0) += 1;
    }

    /// A command refused before it ran (arity, NOAUTH, BUSY...): Redis's rejected_calls.
    pub fn rejected(&self, cmd: &Command, reply: &[u8]) {
        if let Some(stat) = self.commands.get(cmd.index) {
            stat.rejected.fetch_add(1, Ordering::Relaxed);
        }
        self.error_reply(reply);
    }

    /// A command that ran: its time, whether it failed, and (`count_error`) its error reply in
    /// the error statistics.
    pub fn ran(&self, cmd: &Command, took: Duration, failed: Option<&[u8]>, count_error: bool) {
        let usec = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        if let Some(stat) = self.commands.get(cmd.index) {
            stat.calls.fetch_add(1, Ordering::Relaxed);
            stat.usec.fetch_add(usec, Ordering::Relaxed);
            if failed.is_some() {
                stat.failed.fetch_add(1, Ordering::Relaxed);
            }
        }
        if let Some(reply) = failed.filter(|_| count_error) {
            self.error_reply(reply);
        }
    }

    /// A blocked command (counted as a call when it blocked) that was answered with an error
    /// when it was unblocked: Redis counts the failure and the error reply then.
    pub fn failed_when_unblocked(&self, cmd_index: usize, reply: &[u8]) {
        if let Some(stat) = self.commands.get(cmd_index) {
            stat.failed.fetch_add(1, Ordering::Relaxed);
        }
        self.error_reply(reply);
    }

    /// Whether a command that took `took` goes to the slow log.
    pub fn is_slow(&self, took: Duration) -> bool {
        let limit = self.slower_than.load(Ordering::Relaxed);
        limit >= 0 && took.as_micros() >= limit.unsigned_abs() as u128
    }

    /// Adds an entry to the slow log.
    pub(crate) fn log_slow(&self, args: &Args<'_>, took: Duration, addr: &str, name: Vec<u8>) {
        let max = self.slowlog_max.load(Ordering::Relaxed);
        if max == 0 {
            return;
        }
        let mut cut = Vec::with_capacity(args.len().min(SLOW_MAX_ARGS));
        let redact = is_sensitive(args);
        for (i, arg) in args.from(0).enumerate() {
            if i == SLOW_MAX_ARGS - 1 && args.len() > SLOW_MAX_ARGS {
                let more = args.len() - i;
                cut.push(format!("... ({more} more arguments)").into_bytes());
                break;
            }
            if redact.is_some_and(|from| i >= from) {
                cut.push(b"(redacted)".to_vec());
            } else if arg.len() > SLOW_MAX_ARG_LEN {
                let mut v = arg[..SLOW_MAX_ARG_LEN].to_vec();
                let _ = write!(
                    ByteWriter(&mut v),
                    "... ({} more bytes)",
                    arg.len() - SLOW_MAX_ARG_LEN
                );
                cut.push(v);
            } else {
                cut.push(arg.to_vec());
            }
        }
        let unix_secs = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let mut log = self.slowlog.lock();
        let id = log.next_id;
        log.next_id += 1;
        log.entries.push_front(SlowEntry {
            id,
            unix_secs,
            micros: u64::try_from(took.as_micros()).unwrap_or(u64::MAX),
            args: cut,
            addr: addr.to_owned(),
            name,
        });
        log.entries.truncate(max);
    }

    /// Adds a MONITOR client.
    pub fn add_monitor(&self, id: u64, tx: Monitor) {
        let mut monitors = self.monitors.lock();
        monitors.retain(|(other, _)| *other != id);
        monitors.push((id, tx));
        self.monitor_count.store(monitors.len(), Ordering::Release);
    }

    /// Drops a MONITOR client (it left).
    pub fn remove_monitor(&self, id: u64) {
        let mut monitors = self.monitors.lock();
        monitors.retain(|(other, _)| *other != id);
        self.monitor_count.store(monitors.len(), Ordering::Release);
    }

    pub fn has_monitors(&self) -> bool {
        self.monitor_count.load(Ordering::Acquire) > 0
    }

    /// Sends a command to every MONITOR client in Redis's line format:
    /// `+<unix secs>.<micros> [<db> <addr>|lua] "arg" ...`.
    pub(crate) fn feed_monitors(&self, db: usize, from: Option<&str>, args: &Args<'_>) {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let mut line = format!(
            "+{}.{:06} [{db} {}]",
            now.as_secs(),
            now.subsec_micros(),
            from.unwrap_or("lua")
        )
        .into_bytes();
        let redact = is_sensitive(args);
        for (i, arg) in args.from(0).enumerate() {
            line.extend_from_slice(b" \"");
            if redact.is_some_and(|from| i >= from) {
                line.extend_from_slice(b"(redacted)");
            } else {
                quote_into(&mut line, arg);
            }
            line.push(b'"');
        }
        line.extend_from_slice(b"\r\n");
        let line = bytes::Bytes::from(line);
        let mut monitors = self.monitors.lock();
        monitors.retain(|(_, tx)| tx.send(line.clone()).is_ok());
        self.monitor_count.store(monitors.len(), Ordering::Release);
    }

    /// CONFIG RESETSTAT: the command and error counters start again.
    pub fn reset_stats(&self) {
        for stat in &self.commands {
            stat.calls.store(0, Ordering::Relaxed);
            stat.usec.store(0, Ordering::Relaxed);
            stat.rejected.store(0, Ordering::Relaxed);
            stat.failed.store(0, Ordering::Relaxed);
        }
        self.errors.lock().clear();
        self.error_replies.store(0, Ordering::Relaxed);
    }

    /// INFO's commandstats section body.
    pub fn write_commandstats(&self, text: &mut String) {
        for (cmd, stat) in COMMANDS.iter().zip(&self.commands) {
            let calls = stat.calls.load(Ordering::Relaxed);
            let rejected = stat.rejected.load(Ordering::Relaxed);
            let failed = stat.failed.load(Ordering::Relaxed);
            if calls == 0 && rejected == 0 && failed == 0 {
                continue;
            }
            let usec = stat.usec.load(Ordering::Relaxed);
            let per_call = if calls == 0 {
                0.0
            } else {
                usec as f64 / calls as f64
            };
            let _ = write!(
                text,
                "cmdstat_{}:calls={calls},usec={usec},usec_per_call={per_call:.2},rejected_calls={rejected},failed_calls={failed}\r\n",
                cmd.name
            );
        }
    }

    /// INFO's errorstats section body.
    pub fn write_errorstats(&self, text: &mut String) {
        for (code, count) in self.errors.lock().iter() {
            let _ = write!(text, "errorstat_{code}:count={count}\r\n");
        }
    }
}

/// Where a command's secrets start (their arguments show as "(redacted)"), as Redis hides
/// them from the slow log and MONITOR.
pub fn is_sensitive(args: &Args<'_>) -> Option<usize> {
    if args.is(0, "auth") {
        return Some(1);
    }
    // ACL SETUSER: the user's rules may hold passwords.
    if args.is(0, "acl") && args.is(1, "setuser") {
        return Some(2);
    }
    if args.is(0, "hello") {
        return args
            .from(1)
            .position(|a| a.eq_ignore_ascii_case(b"auth"))
            .map(|i| i + 2);
    }
    if args.is(0, "config")
        && args.is(1, "set")
        && args.from(2).step_by(2).any(|a| {
            a.eq_ignore_ascii_case(b"masterauth") || a.eq_ignore_ascii_case(b"requirepass")
        })
    {
        return Some(3);
    }
    None
}

/// Appends `arg` escaped as Redis shows arguments (backslash escapes, \\xHH for the rest).
fn quote_into(line: &mut Vec<u8>, arg: &[u8]) {
    for &b in arg {
        match b {
            b'\\' => line.extend_from_slice(b"\\\\"),
            b'"' => line.extend_from_slice(b"\\\""),
            b'\n' => line.extend_from_slice(b"\\n"),
            b'\r' => line.extend_from_slice(b"\\r"),
            b'\t' => line.extend_from_slice(b"\\t"),
            0x07 => line.extend_from_slice(b"\\a"),
            0x08 => line.extend_from_slice(b"\\b"),
            b' '..=b'~' => line.push(b),
            _ => {
                let _ = write!(ByteWriter(line), "\\x{b:02x}");
            }
        }
    }
}

/// Lets `write!` append to a byte vector.
struct ByteWriter<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for ByteWriter<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}
