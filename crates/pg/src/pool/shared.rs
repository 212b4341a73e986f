//! The pool's shared state: idle connections, the FIFO of waiters, counters, and the rules for
//! giving a connection back, retiring it, or passing its place to the next waiter.
//!
//! One mutex guards it all and is only ever held for O(1) work (a push, a pop, a counter), never
//! across an await or a system call. A connection coming back goes straight to the oldest waiter,
//! so nobody barges ahead of the queue.

// Connections are boxed on purpose: acquiring and giving back moves one pointer, and a
// `PooledConnection` stays two words however large a `Connection` grows.
#![allow(clippy::vec_box)]

use super::error::{PoolError, PoolErrorKind, PoolStatus};
use super::settings::PoolSettings;
use crate::config::Config;
use crate::conn::Connection;
use crate::error::Error;
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::hash::BuildHasher;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// A pooled connection and the pool's notes about it. Boxed once when opened, so handing it
/// around moves one pointer.
#[derive(Debug)]
pub(crate) struct Slot {
    pub(crate) conn: Connection,
    /// When it must be closed (max lifetime, with jitter).
    expires_at: Option<Instant>,
    /// When it last came back to the pool.
    idle_since: Instant,
}

impl Slot {
    fn expired(&self, now: Instant) -> bool {
        self.expires_at.is_some_and(|t| now >= t)
    }
}

/// What a waiter is handed.
#[derive(Debug)]
pub(crate) enum Grant {
    /// A clean connection.
    Conn(Box<Slot>),
    /// A place: the waiter may open a new connection (one was closed, or failed to open).
    Place,
}

/// The database could not be reached: the last failed attempt.
#[derive(Debug)]
struct Down {
    error: Arc<Error>,
    last_attempt: Instant,
}

#[derive(Debug, Default)]
struct Counters {
    created: u64,
    closed: u64,
    timeouts: u64,
    unavailable: u64,
    overloaded: u64,
}

#[derive(Debug)]
pub(crate) struct State {
    /// A stack: the most recently used connection on top, so unused ones age at the bottom and
    /// the idle timeout can shrink the pool.
    idle: Vec<Box<Slot>>,
    waiters: VecDeque<oneshot::Sender<Grant>>,
    /// Open connections, plus places taken by connections being opened or cleaned.
    size: usize,
    waiting: usize,
    counters: Counters,
    down: Option<Down>,
    closed: bool,
}

/// What an acquire does next, decided under the lock.
pub(crate) enum Step {
    Got(Box<Slot>),
    Open,
    Wait(oneshot::Receiver<Grant>),
    Fail(PoolError),
}

/// Everything the handles of one pool share.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) config: Config,
    pub(crate) settings: PoolSettings,
    state: Mutex<State>,
    maintenance_started: AtomicBool,
    jitter: std::hash::RandomState,
}

impl Shared {
    pub(crate) fn new(config: Config, settings: PoolSettings) -> Shared {
        Shared {
            config,
            state: Mutex::new(State {
                idle: Vec::with_capacity(settings.max_size()),
                waiters: VecDeque::new(),
                size: 0,
                waiting: 0,
                counters: Counters::default(),
                down: None,
                closed: false,
            }),
            settings,
            maintenance_started: AtomicBool::new(false),
            jitter: std::hash::RandomState::new(),
        }
    }

    /// The fast path: the most recently returned idle connection, if any.
    #[inline]
    pub(crate) fn pop_idle(&self) -> Option<Box<Slot>> {
        self.state.lock().idle.pop()
    }

    /// Whether an idle connection may be handed out: not expired, and alive when it sat idle
    /// long enough to be worth a look. A failing one is closed; its place is kept by the caller.
    #[inline]
    pub(crate) fn vet(&self, mut slot: Box<Slot>) -> Result<Box<Slot>, ()> {
        let now = Instant::now();
        let stale =
            now.saturating_duration_since(slot.idle_since) >= self.settings.health_check_interval();
        if slot.expired(now) || (stale && !slot.conn.check_idle()) {
            self.close_connection(slot.conn);
            return Err(());
        }
        Ok(slot)
    }

    /// Decides how an acquire that found no idle connection proceeds.
    pub(crate) fn plan_acquire(&self) -> Step {
        let mut st = self.state.lock();
        if st.closed {
            return Step::Fail(self.error_locked(&st, PoolErrorKind::Closed, Duration::ZERO));
        }
        if let Some(slot) = st.idle.pop() {
            return Step::Got(slot);
        }
        if st.size < self.settings.max_size() {
            st.size += 1;
            return Step::Open;
        }
        let now = Instant::now();
        if st
            .down
            .as_ref()
            .is_some_and(|d| now - d.last_attempt < self.settings.retry_interval())
        {
            // Waiting on connections that are likely broken would only delay the same answer.
            st.counters.unavailable += 1;
            return Step::Fail(self.error_locked(&st, PoolErrorKind::Unavailable, Duration::ZERO));
        }
        while st.waiters.front().is_some_and(|w| w.is_closed()) {
            st.waiters.pop_front();
        }
        if st.waiting >= self.settings.max_waiting() {
            st.counters.overloaded += 1;
            return Step::Fail(self.error_locked(&st, PoolErrorKind::Overloaded, Duration::ZERO));
        }
        let (tx, rx) = oneshot::channel();
        st.waiters.push_back(tx);
        st.waiting += 1;
        Step::Wait(rx)
    }

    /// A waiter stops waiting (served, timed out, or dropped).
    pub(crate) fn stop_waiting(&self) {
        let mut st = self.state.lock();
        st.waiting = st.waiting.saturating_sub(1);
    }

    /// Before opening a connection with a place in hand: fails at once while the database is
    /// known to be unreachable and another attempt was made within the retry interval;
    /// otherwise records this attempt so that concurrent ones fail fast instead of piling up.
    pub(crate) fn begin_attempt(&self) -> Result<(), PoolError> {
        let mut st = self.state.lock();
        if st.closed {
            return Err(self.error_locked(&st, PoolErrorKind::Closed, Duration::ZERO));
        }
        let now = Instant::now();
        let retry = self.settings.retry_interval();
        match &mut st.down {
            Some(d) if now - d.last_attempt < retry => {
                st.counters.unavailable += 1;
                Err(self.error_locked(&st, PoolErrorKind::Unavailable, Duration::ZERO))
            }
            Some(d) => {
                d.last_attempt = now;
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// A connection was opened into a place already counted in `size`.
    pub(crate) fn opened(&self, conn: Connection) -> Box<Slot> {
        let now = Instant::now();
        let mut st = self.state.lock();
        st.down = None;
        st.counters.created += 1;
        let n = st.counters.created;
        drop(st);
        let expires_at = self.settings.max_lifetime().map(|life| {
            // Between 90% and 100% of the lifetime, so a batch opened together expires spread out.
            let fraction = (self.jitter.hash_one(n) % 1000) as f64 / 10_000.0;
            now + life.mul_f64(1.0 - fraction)
        });
        Box::new(Slot {
            conn,
            expires_at,
            idle_since: now,
        })
    }

    /// Opening a connection failed: remember it, so acquires fail fast for a while.
    pub(crate) fn connect_failed(&self, error: Error) -> PoolError {
        let error = Arc::new(error);
        let mut st = self.state.lock();
        st.down = Some(Down {
            error: error.clone(),
            last_attempt: Instant::now(),
        });
        st.counters.unavailable += 1;
        let status = status_locked(&st, self.settings.max_size());
        PoolError::new(
            PoolErrorKind::Unavailable,
            status,
            Duration::ZERO,
            Some((error, Duration::ZERO)),
        )
    }

    /// The error for a pool that was closed.
    pub(crate) fn closed_error(&self) -> PoolError {
        let st = self.state.lock();
        self.error_locked(&st, PoolErrorKind::Closed, Duration::ZERO)
    }

    /// An acquire ran out of time.
    pub(crate) fn timed_out(&self, waited: Duration) -> PoolError {
        let mut st = self.state.lock();
        st.counters.timeouts += 1;
        self.error_locked(&st, PoolErrorKind::Timeout, waited)
    }

    fn error_locked(&self, st: &State, kind: PoolErrorKind, waited: Duration) -> PoolError {
        let cause = st
            .down
            .as_ref()
            .map(|d| (d.error.clone(), d.last_attempt.elapsed()));
        PoolError::new(
            kind,
            status_locked(st, self.settings.max_size()),
            waited,
            cause,
        )
    }

    /// A caller is done with a connection: clean ones go back (reset queued for the next
    /// request), broken or expired ones are closed, ones with a request still in flight are
    /// cleaned in a task of their own first.
    pub(crate) fn give_back(self: &Arc<Self>, mut slot: Box<Slot>) {
        if slot.conn.is_broken() {
            self.close_connection(slot.conn);
            self.free_place();
            return;
        }
        if slot.conn.is_busy() {
            super::recycle::spawn(self, slot);
            return;
        }
        let now = Instant::now();
        if slot.expired(now) {
            self.close_connection(slot.conn);
            self.free_place();
            return;
        }
        self.settings.reset().queue(&mut slot.conn);
        slot.idle_since = now;
        self.put_idle(slot);
    }

    /// Hands a clean connection to the oldest live waiter, or parks it idle.
    pub(crate) fn put_idle(&self, mut slot: Box<Slot>) {
        loop {
            let waiter = {
                let mut st = self.state.lock();
                if st.closed {
                    drop(st);
                    self.close_connection(slot.conn);
                    self.free_place();
                    return;
                }
                match st.waiters.pop_front() {
                    Some(w) => w,
                    None => {
                        st.idle.push(slot);
                        return;
                    }
                }
            };
            // Sent outside the lock: waking a task is not the lock's business.
            match waiter.send(Grant::Conn(slot)) {
                Ok(()) => return,
                Err(Grant::Conn(back)) => slot = back,
                Err(Grant::Place) => return,
            }
        }
    }

    /// A place (counted in `size`) is free: the oldest live waiter gets it to open a new
    /// connection; with nobody waiting the pool shrinks.
    pub(crate) fn free_place(&self) {
        loop {
            let waiter = {
                let mut st = self.state.lock();
                match st.waiters.pop_front() {
                    Some(w) => w,
                    None => {
                        st.size = st.size.saturating_sub(1);
                        return;
                    }
                }
            };
            if waiter.send(Grant::Place).is_ok() {
                return;
            }
        }
    }

    /// Gives back what a waiter received but will not use.
    pub(crate) fn return_grant(&self, grant: Grant) {
        match grant {
            Grant::Conn(slot) => self.put_idle(slot),
            Grant::Place => self.free_place(),
        }
    }

    /// Closes a connection that leaves the pool (counted); says goodbye politely when a runtime
    /// is there to send the Terminate, else just drops the socket. The place is not freed here.
    pub(crate) fn close_connection(&self, conn: Connection) {
        self.state.lock().counters.closed += 1;
        if conn.is_broken() {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = tokio::time::timeout(Duration::from_secs(5), conn.close()).await;
            });
        }
    }

    /// A connection left the pool (detached by its caller, or closed by the background task).
    pub(crate) fn count_closed(&self) {
        self.state.lock().counters.closed += 1;
    }

    /// The counters and state now.
    pub(crate) fn status(&self) -> PoolStatus {
        status_locked(&self.state.lock(), self.settings.max_size())
    }

    /// Starts the background task once, when a Tokio runtime is there to run it.
    pub(crate) fn ensure_maintenance(self: &Arc<Self>) {
        if self.maintenance_started.load(Ordering::Relaxed) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if !self.maintenance_started.swap(true, Ordering::AcqRel) {
            runtime.spawn(super::maintenance::run(Arc::downgrade(self)));
        }
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.state.lock().closed
    }

    /// Closes the pool: waiters are told, idle connections are returned for closing, and
    /// connections still out are closed when they come back.
    pub(crate) fn close(&self) -> Vec<Box<Slot>> {
        let mut st = self.state.lock();
        st.closed = true;
        st.waiters.clear();
        let idle: Vec<Box<Slot>> = st.idle.drain(..).collect();
        st.size = st.size.saturating_sub(idle.len());
        st.counters.closed += idle.len() as u64;
        idle
    }

    /// For the background task: takes out idle connections that expired, sat idle past the idle
    /// timeout (beyond `min_idle`), or are due a health check. Returns (to close, to check).
    pub(crate) fn take_for_maintenance(&self, now: Instant) -> (Vec<Box<Slot>>, Vec<Box<Slot>>) {
        let (mut retire, mut check) = (Vec::new(), Vec::new());
        let mut st = self.state.lock();
        if st.closed || st.idle.is_empty() {
            return (retire, check);
        }
        let min_idle = self.settings.min_idle();
        let idle_timeout = self.settings.idle_timeout();
        let health = self.settings.health_check_interval();
        let taken: Vec<Box<Slot>> = st.idle.drain(..).collect();
        let mut remaining = taken.len();
        // Oldest first: the bottom of the stack is the longest unused.
        for slot in taken {
            let idle_for = now.saturating_duration_since(slot.idle_since);
            if slot.expired(now)
                || (remaining > min_idle && idle_timeout.is_some_and(|t| idle_for >= t))
            {
                remaining -= 1;
                retire.push(slot);
            } else if idle_for >= health {
                check.push(slot);
            } else {
                st.idle.push(slot);
            }
        }
        (retire, check)
    }

    /// For the background task: a place to open an idle connection when fewer than `min_idle`
    /// are idle, the pool has room, and the database is not known to be down.
    pub(crate) fn reserve_for_min_idle(&self) -> bool {
        let mut st = self.state.lock();
        let wanted = self.settings.min_idle();
        if st.closed || st.idle.len() >= wanted || st.size >= self.settings.max_size() {
            return false;
        }
        if st
            .down
            .as_ref()
            .is_some_and(|d| d.last_attempt.elapsed() < self.settings.retry_interval())
        {
            return false;
        }
        st.size += 1;
        true
    }
}

fn status_locked(st: &State, max_size: usize) -> PoolStatus {
    PoolStatus {
        max_size,
        size: st.size,
        idle: st.idle.len(),
        busy: st.size.saturating_sub(st.idle.len()),
        waiting: st.waiting,
        created: st.counters.created,
        closed: st.counters.closed,
        timeouts: st.counters.timeouts,
        unavailable: st.counters.unavailable,
        overloaded: st.counters.overloaded,
    }
}
