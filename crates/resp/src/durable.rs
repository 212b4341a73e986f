//! The contract between connections and a persistence writer: generations committed, waits, state.
//!
//! The writer (a separate crate, e.g. `sluice-resp-store`) owns the sink; this crate knows only
//! this handle. A connection whose batch changed the store remembers the store's generation;
//! under `appendfsync always` it calls [`Durability::wake_writer`] and awaits
//! [`Durability::wait_committed`] before sending the batch's replies, so many clients' writes
//! share one commit (group commit). Under `everysec` and `no` replies go out at once and the
//! writer flushes on its own clock.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use tokio::sync::Notify;

use crate::engine::Store;

/// When writes are committed, with Redis's `appendfsync` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppendFsync {
    /// A write is acknowledged once the transaction holding it committed.
    Always,
    /// Writes are acknowledged at once and committed within about a second.
    EverySec,
    /// The writer commits when it sees fit (every few seconds).
    No,
}

impl AppendFsync {
    /// The name as the setting spells it.
    pub fn name(self) -> &'static str {
        match self {
            AppendFsync::Always => "always",
            AppendFsync::EverySec => "everysec",
            AppendFsync::No => "no",
        }
    }
}

/// What the last successful commit did (INFO persistence).
#[derive(Debug, Clone, Default)]
pub struct CommitInfo {
    /// The WAL position the transaction wrote at, as PostgreSQL prints it.
    pub lsn: String,
    /// Keys written or deleted by it.
    pub keys: u64,
    /// Rows copied into the tables by it.
    pub rows: u64,
    /// How long it took, in microseconds.
    pub micros: u64,
}

/// The state shared by connections and the writer.
#[derive(Debug)]
pub struct Durability {
    policy: AppendFsync,
    /// Longest wait of an `always` write for its commit before the client gets an error.
    write_timeout: Duration,
    /// Dirty keys allowed to pile up while the sink fails before writes are refused.
    max_unsaved_keys: usize,
    committed: AtomicU64,
    committed_notify: Notify,
    work: Notify,
    forced: AtomicBool,
    last_save_unix: AtomicI64,
    commits: AtomicU64,
    rows_written: AtomicU64,
    keys_written: AtomicU64,
    last_commit: RwLock<CommitInfo>,
    failure: Mutex<Option<String>>,
    failing: AtomicBool,
    /// The generation of the flush being written (0: none), and when it started, in ms since
    /// `started`.
    flushing: AtomicU64,
    flushing_since_ms: AtomicU64,
    started: std::time::Instant,
    /// Writes held back under `everysec` while a flush lagged (INFO's `aof_delayed_fsync`).
    delayed_writes: AtomicU64,
}

/// How long a flush may run under `everysec` before writes wait for it to end, as Redis holds
/// writes back when its AOF fsync has been pending for two seconds: without it a writer slower
/// than the clients would let the unsaved changes (what a crash loses) grow to many seconds.
pub const EVERYSEC_MAX_LAG: Duration = Duration::from_secs(2);

/// Why a write could not be confirmed durable.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "MISCONF the write is applied in memory but was not committed to PostgreSQL after {} ms ({reason}); it is retried",
    .waited.as_millis()
)]
pub struct NotDurable {
    /// How long the write waited for its commit.
    pub waited: Duration,
    /// Why the writer could not commit (the sink's last error, as clients may read it).
    pub reason: String,
}

impl Durability {
    /// A handle for `policy` (`appendfsync`): `always` writes wait at most `write_timeout` while
    /// the writer fails; writes are refused once `max_unsaved_keys` keys wait to be saved.
    pub fn new(policy: AppendFsync, write_timeout: Duration, max_unsaved_keys: usize) -> Self {
        Self {
            policy,
            write_timeout,
            max_unsaved_keys,
            committed: AtomicU64::new(0),
            committed_notify: Notify::new(),
            work: Notify::new(),
            forced: AtomicBool::new(false),
            last_save_unix: AtomicI64::new(crate::engine::now_ms() / 1000),
            commits: AtomicU64::new(0),
            rows_written: AtomicU64::new(0),
            keys_written: AtomicU64::new(0),
            last_commit: RwLock::new(CommitInfo::default()),
            failure: Mutex::new(None),
            failing: AtomicBool::new(false),
            flushing: AtomicU64::new(0),
            flushing_since_ms: AtomicU64::new(0),
            started: std::time::Instant::now(),
            delayed_writes: AtomicU64::new(0),
        }
    }

    /// Records that the writer took a snapshot up to `generation` and is writing it.
    pub fn set_flushing(&self, generation: u64) {
        let since = self.started.elapsed().as_millis() as u64;
        self.flushing_since_ms.store(since, Ordering::Relaxed);
        self.flushing.store(generation, Ordering::Release);
    }

    /// Under `everysec`, the generation of a flush running for longer than
    /// [`EVERYSEC_MAX_LAG`] while the writer is healthy: writes wait for it (see
    /// [`Durability::wait_lagging_flush`]).
    pub fn lagging_flush(&self) -> Option<u64> {
        if self.policy != AppendFsync::EverySec || self.is_failing() {
            return None;
        }
        let generation = self.flushing.load(Ordering::Acquire);
        if generation == 0 || self.committed() >= generation {
            return None;
        }
        let since = self.flushing_since_ms.load(Ordering::Relaxed);
        let now = self.started.elapsed().as_millis() as u64;
        (now.saturating_sub(since) >= EVERYSEC_MAX_LAG.as_millis() as u64).then_some(generation)
    }

    /// Waits until the lagging flush up to `generation` committed, the writer fails, or the
    /// write timeout passed; the write is answered after either way (it stays queued, as
    /// `everysec` promises, bounded by the unsaved-keys limit).
    pub async fn wait_lagging_flush(&self, generation: u64) {
        self.delayed_writes.fetch_add(1, Ordering::Relaxed);
        let deadline = tokio::time::Instant::now() + self.write_timeout;
        self.wait_until(deadline, || {
            self.committed() >= generation || self.is_failing()
        })
        .await;
    }

    /// Waits, woken by each commit (and by the writer failing), until `done` holds (true) or
    /// `deadline` passes (false). The wake-up is registered before `done` is checked, so a
    /// commit between the two is not missed.
    async fn wait_until(&self, deadline: tokio::time::Instant, done: impl Fn() -> bool) -> bool {
        loop {
            let notified = self.committed_notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if done() {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return done();
            }
        }
    }

    /// Writes held back so far by a lagging flush.
    pub fn delayed_writes(&self) -> u64 {
        self.delayed_writes.load(Ordering::Relaxed)
    }

    /// The `appendfsync` policy.
    pub fn policy(&self) -> AppendFsync {
        self.policy
    }

    /// Asks the writer for a flush now; `force` (SAVE, BGSAVE) also under `everysec` and `no`.
    pub fn wake_writer(&self, force: bool) {
        if force {
            self.forced.store(true, Ordering::Release);
        }
        self.work.notify_one();
    }

    /// Resolves when a connection or SAVE asked for a flush.
    pub async fn flush_requested(&self) {
        self.work.notified().await;
    }

    /// Whether SAVE or BGSAVE asked for a flush since the last call.
    pub fn take_forced(&self) -> bool {
        self.forced.swap(false, Ordering::AcqRel)
    }

    /// The last generation committed.
    pub fn committed(&self) -> u64 {
        self.committed.load(Ordering::Acquire)
    }

    /// Records a commit of everything up to `generation` and wakes the connections waiting.
    pub fn set_committed(&self, generation: u64, info: CommitInfo) {
        self.commits.fetch_add(1, Ordering::Relaxed);
        self.rows_written.fetch_add(info.rows, Ordering::Relaxed);
        self.keys_written.fetch_add(info.keys, Ordering::Relaxed);
        *self.last_commit.write() = info;
        self.last_save_unix
            .store(crate::engine::now_ms() / 1000, Ordering::Relaxed);
        self.committed.fetch_max(generation, Ordering::AcqRel);
        self.flushing.store(0, Ordering::Release);
        self.committed_notify.notify_waiters();
    }

    /// Records that there was nothing to write up to `generation`.
    pub fn set_clean(&self, generation: u64) {
        self.committed.fetch_max(generation, Ordering::AcqRel);
        self.committed_notify.notify_waiters();
    }

    /// Waits until `generation` is committed. A slow but healthy writer is waited for (a large
    /// flush may take longer than the timeout); once the writer fails, an `always` write gets
    /// the error when the write timeout has passed, a SAVE (`save`) at once.
    pub async fn wait_committed(&self, generation: u64, save: bool) -> Result<(), NotDurable> {
        let started = tokio::time::Instant::now();
        let mut deadline = started + self.write_timeout;
        loop {
            let settled = self
                .wait_until(deadline, || {
                    self.committed() >= generation || (save && self.is_failing())
                })
                .await;
            if self.committed() >= generation {
                return Ok(());
            }
            // SAVE answers a failing writer at once; a write, once its timeout passed.
            if self.is_failing() && (save || !settled) {
                return Err(NotDurable {
                    waited: started.elapsed(),
                    reason: self.failure().unwrap_or_default(),
                });
            }
            // A healthy writer that is slow: keep waiting, a timeout at a time.
            deadline += self.write_timeout;
        }
    }

    /// Records the writer's health: `Some(error)` while writes fail, `None` once one succeeds.
    /// Clients read the error (in `-MISCONF` replies and INFO), so it must say what failed
    /// without the sink's address or credentials; the sink logs the full error.
    pub fn set_failure(&self, failure: Option<String>) {
        let failing = failure.is_some();
        *self.failure.lock() = failure;
        self.failing.store(failing, Ordering::Release);
        if failing {
            self.flushing.store(0, Ordering::Release);
            // SAVE answers the error at once; `always` writes look at their deadline.
            self.committed_notify.notify_waiters();
        }
    }

    /// Whether the writer is failing (one atomic load: checked before every write command).
    pub fn is_failing(&self) -> bool {
        self.failing.load(Ordering::Acquire)
    }

    /// The writer's last error while it is failing.
    pub fn failure(&self) -> Option<String> {
        self.failure.lock().clone()
    }

    /// The error a write command gets while the sink fails with `unsaved_keys` waiting: under
    /// `always` at once (each write would wait and fail anyway), under the other policies once
    /// the bound is reached, so the queue does not grow without limit.
    pub fn write_refusal(&self, unsaved_keys: usize) -> Option<String> {
        if !self.is_failing() {
            return None;
        }
        if self.policy != AppendFsync::Always && unsaved_keys < self.max_unsaved_keys {
            return None;
        }
        let reason = self.failure().unwrap_or_default();
        Some(format!(
            "MISCONF writes are refused while PostgreSQL cannot be written ({reason}); reads still work"
        ))
    }

    /// Unix time of the last commit (LASTSAVE).
    pub fn last_save_unix(&self) -> i64 {
        self.last_save_unix.load(Ordering::Relaxed)
    }

    /// The last commit, and totals since start: (commits, keys written, rows written).
    pub fn stats(&self) -> (CommitInfo, u64, u64, u64) {
        (
            self.last_commit.read().clone(),
            self.commits.load(Ordering::Relaxed),
            self.keys_written.load(Ordering::Relaxed),
            self.rows_written.load(Ordering::Relaxed),
        )
    }
}

/// A store kept in a sink: the store (tracked, see [`Store::tracked`]) and its durability
/// handle. Given in [`crate::Config`], it replaces the gate's own in-memory store.
#[derive(Debug, Clone)]
pub struct Persistence {
    /// The store the gate serves, loaded from the sink and tracking its dirty keys.
    pub store: Arc<parking_lot::Mutex<Store>>,
    /// What connections and the writer share about commits.
    pub durability: Arc<Durability>,
    /// Name of the sink for INFO (e.g. `postgres`).
    pub sink: &'static str,
    /// The function libraries the sink kept, installed before the gate serves.
    pub functions: crate::engine::Libraries,
    /// Set when the store follows another instance's writes: the gate is then a read-only
    /// replica (writes refused with `READONLY`, ROLE and INFO replication say so).
    pub replica: Option<Arc<crate::replica::Replica>>,
}
