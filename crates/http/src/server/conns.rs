//! Open connections and their progress: bytes read, requests in flight, idle and head deadlines,
//! and which connection gives up its slot to a new one when the cap is reached.
//!
//! Every connection is read through [`Counted`], which counts its bytes, and watched by
//! [`watch`], which closes it when it sits idle past the keep-alive timeout or takes longer than
//! the header timeout over a request head. At the connection cap the server does not simply stop
//! accepting (slow clients holding every slot would lock fast ones out): a new connection takes
//! the slot of one that makes no progress ([`Registry::evict_one`]): an idle keep-alive
//! connection first, then one stuck in a request head, then one whose request body arrives
//! slower than the minimum data rate. Connections busy with a request that progresses are never
//! taken; when every slot holds one, the new connection waits.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;

/// How long a connection must have made no progress before it may give up its slot: long
/// enough that a fast client between two requests, or at the start of a body, is left alone.
const EVICTABLE_AFTER: Duration = Duration::from_millis(100);

/// Milliseconds since the registry's epoch (0 is kept for "never").
fn millis(epoch: Instant, at: Instant) -> u64 {
    u64::try_from(at.saturating_duration_since(epoch).as_millis())
        .unwrap_or(u64::MAX)
        .max(1)
}

/// What one connection has done, updated by its reader, its requests and its body readers.
#[derive(Debug)]
pub struct ConnState {
    id: u64,
    epoch: Instant,
    /// Bytes read from the socket.
    bytes: AtomicU64,
    /// Requests whose head was read and whose response has not ended.
    active: AtomicUsize,
    /// Requests served (answered) so far.
    served: AtomicU64,
    /// When the current wait for a request began (accept, or the end of the last response).
    idle_since: AtomicU64,
    /// `bytes` when that wait began.
    idle_bytes: AtomicU64,
    /// When the first byte of the next head arrived (0: none yet).
    head_since: AtomicU64,
    /// A body reader's bytes read and time spent waiting for data (ms), and when its current
    /// wait began (0: not waiting).
    body_read: AtomicU64,
    body_waited: AtomicU64,
    body_waiting_since: AtomicU64,
    /// Set when the connection must give up its slot.
    evicted: AtomicBool,
    /// Wakes the watcher (state changed, eviction) and a waiting body reader (eviction).
    changed: Notify,
    body_evicted: Notify,
}

impl ConnState {
    fn new(id: u64, epoch: Instant) -> ConnState {
        let now = millis(epoch, Instant::now());
        ConnState {
            id,
            epoch,
            bytes: AtomicU64::new(0),
            active: AtomicUsize::new(0),
            served: AtomicU64::new(0),
            idle_since: AtomicU64::new(now),
            idle_bytes: AtomicU64::new(0),
            head_since: AtomicU64::new(0),
            body_read: AtomicU64::new(0),
            body_waited: AtomicU64::new(0),
            body_waiting_since: AtomicU64::new(0),
            evicted: AtomicBool::new(false),
            changed: Notify::new(),
            body_evicted: Notify::new(),
        }
    }

    fn now(&self) -> u64 {
        millis(self.epoch, Instant::now())
    }

    fn at(&self, ms: u64) -> Instant {
        self.epoch + Duration::from_millis(ms)
    }

    fn read(&self, n: usize) {
        self.bytes.fetch_add(n as u64, Ordering::Relaxed);
        if self.active.load(Ordering::Relaxed) == 0 && self.head_since.load(Ordering::Relaxed) == 0
        {
            self.head_since.store(self.now(), Ordering::Relaxed);
        }
    }

    /// A request's head was read; it is being answered.
    pub fn request_started(&self) {
        self.active.fetch_add(1, Ordering::Relaxed);
        self.head_since.store(0, Ordering::Relaxed);
        self.body_read.store(0, Ordering::Relaxed);
        self.body_waited.store(0, Ordering::Relaxed);
        self.body_waiting_since.store(0, Ordering::Relaxed);
    }

    /// A request's response ended (or was dropped).
    pub fn request_ended(&self) {
        self.served.fetch_add(1, Ordering::Relaxed);
        if self.active.fetch_sub(1, Ordering::Relaxed) == 1 {
            self.idle_bytes
                .store(self.bytes.load(Ordering::Relaxed), Ordering::Relaxed);
            self.idle_since.store(self.now(), Ordering::Relaxed);
            self.head_since.store(0, Ordering::Relaxed);
        }
        self.changed.notify_one();
    }

    /// A body reader starts waiting for data.
    pub fn body_wait_started(&self) {
        self.body_waiting_since.store(self.now(), Ordering::Relaxed);
    }

    /// A body reader stopped waiting: `read` bytes so far, `waited` in all.
    pub fn body_wait_ended(&self, read: u64, waited: Duration) {
        self.body_read.store(read, Ordering::Relaxed);
        self.body_waited.store(
            u64::try_from(waited.as_millis()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
        self.body_waiting_since.store(0, Ordering::Relaxed);
    }

    /// Whether this connection was told to give up its slot.
    pub fn is_evicted(&self) -> bool {
        self.evicted.load(Ordering::Relaxed)
    }

    /// Resolves once the connection is told to give up its slot (at once if it was).
    pub async fn evicted(&self) {
        loop {
            let notified = self.body_evicted.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.is_evicted() {
                return;
            }
            notified.await;
        }
    }

    fn evict(&self) {
        self.evicted.store(true, Ordering::Relaxed);
        self.body_evicted.notify_waiters();
        self.changed.notify_one();
    }

    /// How little progress the connection makes, if it may give up its slot now: lower ranks go
    /// first (idle, then a slow head, then a slow body), and within a rank the longest stuck.
    fn eviction_rank(&self, now: u64, min_body_rate: u64) -> Option<(u8, u64)> {
        if self.is_evicted() {
            return None;
        }
        let evictable_after = EVICTABLE_AFTER.as_millis() as u64;
        if self.active.load(Ordering::Relaxed) == 0 {
            let head = self.head_since.load(Ordering::Relaxed);
            if head == 0 {
                let idle = now.saturating_sub(self.idle_since.load(Ordering::Relaxed));
                return (idle >= evictable_after).then_some((0, u64::MAX - idle));
            }
            let stuck = now.saturating_sub(head);
            return (stuck >= evictable_after).then_some((1, u64::MAX - stuck));
        }
        let since = self.body_waiting_since.load(Ordering::Relaxed);
        if since == 0 || min_body_rate == 0 {
            return None; // Answering, not waiting for the client.
        }
        let waited = self.body_waited.load(Ordering::Relaxed) + now.saturating_sub(since);
        let read = self.body_read.load(Ordering::Relaxed);
        let slow = u128::from(read) * 1000 < u128::from(min_body_rate) * u128::from(waited);
        (waited >= evictable_after && slow).then_some((2, u64::MAX - waited))
    }
}

/// Every open connection of a server.
#[derive(Debug)]
pub struct Registry {
    epoch: Instant,
    next_id: AtomicU64,
    open: Mutex<HashMap<u64, Arc<ConnState>>>,
}

impl Registry {
    pub fn new() -> Registry {
        Registry {
            epoch: Instant::now(),
            next_id: AtomicU64::new(1),
            open: Mutex::new(HashMap::new()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<ConnState>>> {
        self.open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Registers a new connection; it leaves the registry when the returned guard drops.
    pub fn open(self: &Arc<Self>) -> Registered {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let state = Arc::new(ConnState::new(id, self.epoch));
        self.lock().insert(id, state.clone());
        Registered {
            registry: self.clone(),
            state,
        }
    }

    /// Tells the connection making the least progress to give up its slot; false when every
    /// connection is busy with a request that progresses.
    pub fn evict_one(&self, min_body_rate: u64) -> bool {
        let now = millis(self.epoch, Instant::now());
        let victim = self
            .lock()
            .values()
            .filter_map(|state| Some((state.eviction_rank(now, min_body_rate)?, state.clone())))
            .min_by_key(|(rank, _)| *rank)
            .map(|(_, state)| state);
        match victim {
            Some(state) => {
                tracing::debug!(
                    connection = state.id,
                    "at the connection cap: closing a connection that makes no progress"
                );
                state.evict();
                true
            }
            None => false,
        }
    }
}

/// A connection's place in the registry.
#[derive(Debug)]
pub struct Registered {
    registry: Arc<Registry>,
    pub state: Arc<ConnState>,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.registry.lock().remove(&self.state.id);
    }
}

/// The deadlines of a connection between requests.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    /// A request head must arrive whole within this of its first byte (and the first request
    /// of a connection within this of the accept).
    pub header: Duration,
    /// An idle keep-alive connection is closed after this.
    pub keep_alive: Duration,
    /// An evicted connection still answering is cut off after this.
    pub evicted_grace: Duration,
}

/// Drives `connection` until it ends, closing it (by dropping it) when it idles or dawdles over
/// a head past its deadline, or when it was evicted.
pub async fn watch<F: std::future::Future>(
    connection: F,
    state: &ConnState,
    timeouts: Timeouts,
) -> Option<F::Output> {
    tokio::pin!(connection);
    let mut evicted_at: Option<Instant> = None;
    loop {
        let changed = state.changed.notified();
        tokio::pin!(changed);
        changed.as_mut().enable();
        let now = Instant::now();
        let deadline = if let Some(at) = evicted_at {
            Some(at + timeouts.evicted_grace)
        } else if state.is_evicted() {
            if state.active.load(Ordering::Relaxed) == 0 {
                return None;
            }
            // The body reader answers 408; give the answer time to go out.
            evicted_at = Some(now);
            continue;
        } else if state.active.load(Ordering::Relaxed) > 0 {
            None
        } else {
            let head = state.head_since.load(Ordering::Relaxed);
            if head != 0 {
                Some(state.at(head) + timeouts.header)
            } else {
                let idle = state.idle_since.load(Ordering::Relaxed);
                let first = state.served.load(Ordering::Relaxed) == 0;
                Some(
                    state.at(idle)
                        + if first {
                            timeouts.header
                        } else {
                            timeouts.keep_alive
                        },
                )
            }
        };
        if deadline.is_some_and(|d| d <= now) {
            tracing::debug!(
                connection = state.id,
                "closing an idle or stalled connection"
            );
            return None;
        }
        let sleep = async {
            match deadline {
                Some(deadline) => tokio::time::sleep_until(deadline.into()).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            output = &mut connection => return Some(output),
            () = sleep => {}
            () = &mut changed => {}
        }
    }
}

/// A socket whose reads are counted into its connection's state.
pub struct Counted<S> {
    inner: S,
    state: Arc<ConnState>,
}

impl<S> Counted<S> {
    pub fn new(inner: S, state: Arc<ConnState>) -> Counted<S> {
        Counted { inner, state }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Counted<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        let n = buf.filled().len().saturating_sub(before);
        if n > 0 {
            self.state.read(n);
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Counted<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_goes_before_a_slow_head_before_a_slow_body_and_busy_never() {
        let registry = Arc::new(Registry::new());
        let epoch = registry.epoch;
        let later = millis(epoch, Instant::now()) + 10_000;

        let busy = registry.open();
        busy.state.request_started();
        assert_eq!(busy.state.eviction_rank(later, 240), None, "answering");

        let slow_body = registry.open();
        slow_body.state.request_started();
        slow_body.state.body_wait_started();
        assert_eq!(
            slow_body.state.eviction_rank(later, 240).map(|r| r.0),
            Some(2)
        );
        assert_eq!(
            slow_body.state.eviction_rank(later, 0),
            None,
            "no rate, no eviction"
        );
        let fast_body = registry.open();
        fast_body.state.request_started();
        fast_body
            .state
            .body_wait_ended(10 << 20, Duration::from_secs(1));
        fast_body.state.body_wait_started();
        assert_eq!(
            fast_body.state.eviction_rank(later, 240),
            None,
            "fast enough"
        );

        let head = registry.open();
        head.state.read(10);
        assert_eq!(head.state.eviction_rank(later, 240).map(|r| r.0), Some(1));

        let idle = registry.open();
        assert_eq!(idle.state.eviction_rank(later, 240).map(|r| r.0), Some(0));
        let now = millis(epoch, Instant::now());
        assert_eq!(idle.state.eviction_rank(now, 240), None, "just opened");

        // Real time: nothing has waited long enough yet.
        assert!(!registry.evict_one(240));
        drop(busy);
        assert_eq!(registry.lock().len(), 4);
    }

    #[tokio::test]
    async fn the_watcher_closes_idle_and_evicted_connections() {
        let registry = Arc::new(Registry::new());
        let timeouts = Timeouts {
            header: Duration::from_millis(50),
            keep_alive: Duration::from_millis(100),
            evicted_grace: Duration::from_millis(50),
        };
        let idle = registry.open();
        let started = Instant::now();
        let closed = watch(std::future::pending::<()>(), &idle.state, timeouts).await;
        assert!(closed.is_none());
        assert!(started.elapsed() >= Duration::from_millis(50));

        let evicted = registry.open();
        evicted.state.request_started();
        let state = evicted.state.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            state.evict();
        });
        let closed = watch(std::future::pending::<()>(), &evicted.state, timeouts).await;
        assert!(closed.is_none(), "cut off after the grace");

        let done = registry.open();
        assert_eq!(watch(async { 7 }, &done.state, timeouts).await, Some(7));
    }
}
