//! A short busy-wait before a busy connection thread goes to sleep in the kernel.
//!
//! Why: without pipelining every request is one small read and one small write, and a thread that
//! sleeps in `epoll_wait` between them must be woken by the client's send, a cross-core wake-up
//! that costs the client and the server several microseconds each time. Spinning for a few
//! microseconds first lets the next request land while the thread is still running, so the kernel
//! only queues the event. The spin happens only while traffic is steady (the previous sleep was
//! short): an idle or lightly used server sleeps at once and spends nothing.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// A previous sleep shorter than this means requests are arriving back to back.
const BUSY_SLEEP: Duration = Duration::from_millis(1);

thread_local! {
    static ASLEEP_SINCE: Cell<Option<Instant>> = const { Cell::new(None) };
    static LAST_SLEEP: Cell<Duration> = const { Cell::new(Duration::MAX) };
}

/// Hooks for a runtime's `on_thread_park` / `on_thread_unpark`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SpinBeforePark {
    spin: Duration,
}

impl SpinBeforePark {
    pub(crate) fn new(spin: Duration) -> Self {
        Self { spin }
    }

    /// Called before the thread parks: spins for `spin` when the thread has been busy.
    pub(crate) fn before_park(&self) {
        if spin_wanted(LAST_SLEEP.get()) {
            let start = Instant::now();
            while start.elapsed() < self.spin {
                std::hint::spin_loop();
            }
        }
        ASLEEP_SINCE.set(Some(Instant::now()));
    }

    /// Called after the thread wakes: remembers how long it slept.
    pub(crate) fn after_unpark(&self) {
        if let Some(since) = ASLEEP_SINCE.take() {
            LAST_SLEEP.set(since.elapsed());
        }
    }
}

/// 20 µs measured best on 2 cores (BENCHMARKS.md); with one core the spin would only keep the
/// client from running, so none.
pub(crate) fn default_spin() -> Duration {
    match std::thread::available_parallelism() {
        Ok(n) if n.get() > 1 => Duration::from_micros(20),
        _ => Duration::ZERO,
    }
}

fn spin_wanted(last_sleep: Duration) -> bool {
    last_sleep < BUSY_SLEEP
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spins_only_after_a_short_sleep() {
        assert!(spin_wanted(Duration::from_micros(40)));
        assert!(!spin_wanted(Duration::from_millis(5)));
        assert!(!spin_wanted(Duration::MAX));
    }

    #[test]
    fn a_busy_thread_spins_and_an_idle_one_does_not() {
        let hooks = SpinBeforePark::new(Duration::from_millis(100));
        std::thread::spawn(move || {
            // Never slept yet: no spin.
            let start = Instant::now();
            hooks.before_park();
            assert!(start.elapsed() < Duration::from_millis(100));
            hooks.after_unpark();
            // Woke at once, so traffic is steady: the next park spins.
            let start = Instant::now();
            hooks.before_park();
            assert!(start.elapsed() >= Duration::from_millis(100));
            std::thread::sleep(Duration::from_millis(5));
            hooks.after_unpark();
            // Slept 5 ms: idle, no spin.
            let start = Instant::now();
            hooks.before_park();
            assert!(start.elapsed() < Duration::from_millis(100));
        })
        .join()
        .expect("hook thread");
    }

    #[test]
    fn zero_never_spins() {
        let hooks = SpinBeforePark::new(Duration::ZERO);
        hooks.before_park();
        hooks.after_unpark();
        let start = Instant::now();
        hooks.before_park();
        assert!(start.elapsed() < Duration::from_millis(100));
    }
}
