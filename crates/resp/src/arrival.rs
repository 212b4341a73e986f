//! Runs a connection thread's connections in the order their wake-ups arrived, as Redis's single
//! event loop serves sockets in the order they became readable.
//!
//! Why: tokio's multi-thread scheduler puts the task woken last into a LIFO slot that runs before
//! the queue. When one poll of the kernel finds two connections readable (A's request landed
//! first, then B's), B runs first. Clients see it: a client that sends a blocking XREADGROUP and
//! then, from another connection, deletes the stream, expects to be unblocked with an error;
//! with B first the delete runs before the read has blocked. Here each wake-up on the thread
//! takes a ticket, and a task polled while an earlier ticket is still waiting steps back behind
//! it. Wake-ups from other threads take no ticket: tokio queues those in order already.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use parking_lot::Mutex;

/// How many times in a row a task steps back before it runs anyway (a safety valve: an earlier
/// ticket always belongs to a task that is queued to run, so this is never reached in practice).
const MAX_STEPS_BACK: u32 = 64;

/// The tickets of one connection thread: wake-ups not yet served, oldest first.
#[derive(Debug, Default)]
pub(crate) struct Arrivals {
    waiting: Mutex<Tickets>,
}

#[derive(Debug, Default)]
struct Tickets {
    next: u64,
    waiting: VecDeque<u64>,
}

impl Arrivals {
    fn take_ticket(&self) -> u64 {
        let mut t = self.waiting.lock();
        t.next += 1;
        let ticket = t.next;
        t.waiting.push_back(ticket);
        ticket
    }

    /// True when a ticket older than `ticket` still waits.
    fn earlier_waits(&self, ticket: u64) -> bool {
        self.waiting
            .lock()
            .waiting
            .front()
            .is_some_and(|&t| t < ticket)
    }

    fn served(&self, ticket: u64) {
        let mut t = self.waiting.lock();
        if t.waiting.front() == Some(&ticket) {
            t.waiting.pop_front();
        } else if let Some(i) = t.waiting.iter().position(|&w| w == ticket) {
            t.waiting.remove(i);
        }
    }

    #[cfg(test)]
    fn waiting(&self) -> usize {
        self.waiting.lock().waiting.len()
    }
}

thread_local! {
    /// The tickets of the connection thread whose tasks this OS thread last polled: the thread
    /// that runs them, and whose kernel poll wakes them. (Threads of the runtime's blocking pool
    /// never poll them, so their wake-ups, queued by tokio in order, take no ticket.)
    static THREAD_ARRIVALS: std::cell::RefCell<Option<Arc<Arrivals>>> =
        const { std::cell::RefCell::new(None) };
}

/// Notes that the calling thread runs `arrivals`' tasks.
fn mark_thread(arrivals: &Arc<Arrivals>) {
    if !on_thread_of(arrivals) {
        THREAD_ARRIVALS.set(Some(arrivals.clone()));
    }
}

fn on_thread_of(arrivals: &Arc<Arrivals>) -> bool {
    THREAD_ARRIVALS.with_borrow(|a| a.as_ref().is_some_and(|a| Arc::ptr_eq(a, arrivals)))
}

/// What the wrapped task's waker shares with the wrapper.
#[derive(Debug)]
struct Slot {
    arrivals: Arc<Arrivals>,
    /// The ticket of the wake-up not yet served; 0 for none.
    ticket: AtomicU64,
    /// Set once the task is gone: later wake-ups take no ticket nobody would hand back.
    gone: AtomicBool,
    /// The runtime's waker of the task.
    task: Mutex<Option<Waker>>,
}

impl Slot {
    fn hand_back(&self) {
        let ticket = self.ticket.swap(0, Ordering::AcqRel);
        if ticket != 0 {
            self.arrivals.served(ticket);
        }
    }
}

impl Wake for Slot {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if !self.gone.load(Ordering::Acquire)
            && self.ticket.load(Ordering::Acquire) == 0
            && on_thread_of(&self.arrivals)
        {
            let ticket = self.arrivals.take_ticket();
            if self
                .ticket
                .compare_exchange(0, ticket, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                self.arrivals.served(ticket);
            } else if self.gone.load(Ordering::Acquire) {
                self.hand_back();
            }
        }
        if let Some(task) = self.task.lock().as_ref() {
            task.wake_by_ref();
        }
    }
}

/// A connection's future, polled in the order of its wake-ups among its thread's connections.
pub(crate) struct InArrivalOrder<F> {
    inner: Pin<Box<F>>,
    slot: Arc<Slot>,
    waker: Waker,
    steps_back: u32,
}

impl<F: Future> InArrivalOrder<F> {
    pub(crate) fn new(arrivals: Arc<Arrivals>, inner: F) -> Self {
        let slot = Arc::new(Slot {
            arrivals,
            ticket: AtomicU64::new(0),
            gone: AtomicBool::new(false),
            task: Mutex::new(None),
        });
        Self {
            inner: Box::pin(inner),
            waker: Waker::from(slot.clone()),
            slot,
            steps_back: 0,
        }
    }
}

impl<F: Future> Future for InArrivalOrder<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        mark_thread(&self.slot.arrivals);
        {
            let mut task = self.slot.task.lock();
            if !task.as_ref().is_some_and(|t| t.will_wake(cx.waker())) {
                *task = Some(cx.waker().clone());
            }
        }
        let ticket = self.slot.ticket.load(Ordering::Acquire);
        if ticket != 0 {
            if self.steps_back < MAX_STEPS_BACK && self.slot.arrivals.earlier_waits(ticket) {
                // Waking itself while polled puts the task at the back of the run queue,
                // behind the one holding the earlier ticket.
                self.steps_back += 1;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            self.slot.hand_back();
        }
        self.steps_back = 0;
        let this = &mut *self;
        let mut inner_cx = Context::from_waker(&this.waker);
        this.inner.as_mut().poll(&mut inner_cx)
    }
}

impl<F> Drop for InArrivalOrder<F> {
    fn drop(&mut self) {
        self.slot.gone.store(true, Ordering::Release);
        self.slot.hand_back();
        *self.slot.task.lock() = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// A future that is woken by the test and records when it is polled after a wake-up.
    struct Recorder {
        id: usize,
        log: Arc<Mutex<Vec<usize>>>,
        wakers: Arc<Mutex<Vec<Option<Waker>>>>,
        rounds: Arc<AtomicUsize>,
        seen: usize,
    }

    impl Future for Recorder {
        type Output = ();
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            let round = self.rounds.load(Ordering::SeqCst);
            if round != self.seen {
                self.seen = round;
                self.log.lock().push(self.id);
            }
            if round >= 3 {
                return Poll::Ready(());
            }
            self.wakers.lock()[self.id] = Some(cx.waker().clone());
            Poll::Pending
        }
    }

    /// Three tasks woken in the order 0, 1, 2 from the runtime's own thread run in that order,
    /// where tokio's LIFO slot alone would run task 2 first.
    #[test]
    fn tasks_run_in_the_order_they_were_woken() {
        let arrivals = Arc::new(Arrivals::default());
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .expect("runtime");
        let log = Arc::new(Mutex::new(Vec::new()));
        let wakers = Arc::new(Mutex::new(vec![None, None, None]));
        let rounds = Arc::new(AtomicUsize::new(0));
        runtime.block_on(async {
            let mut handles = Vec::new();
            for id in 0..3 {
                let task = Recorder {
                    id,
                    log: log.clone(),
                    wakers: wakers.clone(),
                    rounds: rounds.clone(),
                    seen: 0,
                };
                handles.push(tokio::spawn(InArrivalOrder::new(arrivals.clone(), task)));
            }
            let (wakers, rounds, log) = (wakers.clone(), rounds.clone(), log.clone());
            // The waking runs in a task on the worker, as the I/O driver's wake-ups do.
            tokio::spawn(async move {
                for _ in 1..=3 {
                    while wakers.lock().iter().any(Option::is_none) {
                        tokio::task::yield_now().await;
                    }
                    log.lock().push(99);
                    rounds.fetch_add(1, Ordering::SeqCst);
                    let taken: Vec<Waker> =
                        wakers.lock().iter_mut().filter_map(Option::take).collect();
                    for w in taken {
                        w.wake();
                    }
                    tokio::task::yield_now().await;
                }
            })
            .await
            .expect("waker task");
            for h in handles {
                h.await.expect("task");
            }
        });
        let log = log.lock().clone();
        assert_eq!(log, vec![99, 0, 1, 2, 99, 0, 1, 2, 99, 0, 1, 2], "{log:?}");
        assert_eq!(arrivals.waiting(), 0);
    }

    #[test]
    fn a_wake_after_the_task_ended_leaves_no_ticket() {
        let arrivals = Arc::new(Arrivals::default());
        mark_thread(&arrivals);
        let fut = InArrivalOrder::new(arrivals.clone(), std::future::ready(()));
        let waker = fut.waker.clone();
        drop(fut);
        waker.wake_by_ref();
        assert_eq!(arrivals.waiting(), 0);
    }
}
