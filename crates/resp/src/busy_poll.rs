//! A short busy-poll of a connection thread's sockets after its last piece of work, before the
//! thread sleeps in the kernel.
//!
//! Why: without pipelining every request is one small read and one small write, and a thread that
//! sleeps in `epoll_wait` between them must be woken by the client's send, a cross-core wake-up
//! that costs the client and the server several microseconds each time. Polling the sockets for a
//! few microseconds after the last work lets the next request land while the thread still runs,
//! so the kernel only queues the event, and the thread takes the request the moment it lands
//! rather than after a fixed spin. Once no connection has had work for the whole window the thread
//! sleeps; an idle server spends nothing.

use std::cell::Cell;
use std::future::poll_fn;
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

thread_local! {
    /// Bumped each time a connection on this thread has work.
    static ACTIVITY: Cell<u64> = const { Cell::new(0) };
    /// The poller's waker while it waits for work.
    static POLLER: Cell<Option<Waker>> = const { Cell::new(None) };
    /// Rounds of polling done on this thread (for tests).
    static POLL_ROUNDS: Cell<u64> = const { Cell::new(0) };
}

/// Called by a connection each time it has work: keeps the thread polling a while longer.
pub(crate) fn note_activity() {
    ACTIVITY.set(ACTIVITY.get().wrapping_add(1));
    if let Some(waker) = POLLER.take() {
        waker.wake();
    }
}

/// Runs for the life of a connection thread's runtime (one worker): after any
/// connection's work it yields back to the runtime again and again for up to `window` without new
/// work. Each yield makes the runtime poll its sockets without blocking (tokio defers a yielded
/// task until after that poll), so a request that lands meanwhile runs at once.
pub(crate) async fn poll_after_work(window: Duration) {
    loop {
        let seen = ACTIVITY.get();
        poll_fn(|cx| {
            if ACTIVITY.get() != seen {
                return Poll::Ready(());
            }
            POLLER.set(Some(cx.waker().clone()));
            Poll::Pending
        })
        .await;
        let mut seen = ACTIVITY.get();
        let mut idle_since = Instant::now();
        loop {
            tokio::task::yield_now().await;
            POLL_ROUNDS.set(POLL_ROUNDS.get() + 1);
            let now = ACTIVITY.get();
            if now != seen {
                seen = now;
                idle_since = Instant::now();
            } else if idle_since.elapsed() >= window {
                break;
            }
        }
    }
}

/// The default window: 50 µs measured a little ahead of 20 and level with 100 on 2 cores
/// (BENCHMARKS.md); with one core the polling would only keep the client from running, so none.
pub(crate) fn default_window() -> Duration {
    match std::thread::available_parallelism() {
        Ok(n) if n.get() > 1 => Duration::from_micros(50),
        _ => Duration::ZERO,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the runtime for `pause`, then returns the rounds of polling so far.
    fn rounds_after(runtime: &tokio::runtime::Runtime, pause: Duration) -> u64 {
        runtime.block_on(async move { tokio::time::sleep(pause).await });
        POLL_ROUNDS.get()
    }

    /// Runs the runtime until the poller has polled at least once more than `before`.
    fn polls_again(runtime: &tokio::runtime::Runtime, before: u64) -> bool {
        // A loaded machine may take a while to run the poller at all.
        (0..200).any(|_| rounds_after(runtime, Duration::from_millis(10)) > before)
    }

    #[test]
    fn polls_only_after_work_and_only_for_the_window() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.spawn(poll_after_work(Duration::from_millis(1)));
        // No work yet: the poller waits without polling.
        assert_eq!(rounds_after(&runtime, Duration::from_millis(20)), 0);
        // Work: the thread polls, then stops once the window has passed without more work.
        runtime.spawn(async { note_activity() });
        assert!(polls_again(&runtime, 0), "no polling after work");
        let settled = rounds_after(&runtime, Duration::from_millis(200));
        assert_eq!(
            rounds_after(&runtime, Duration::from_millis(100)),
            settled,
            "still polling long after the window"
        );
        // More work: polling starts again.
        runtime.spawn(async { note_activity() });
        assert!(polls_again(&runtime, settled), "no polling after new work");
    }
}
