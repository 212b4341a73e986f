//! Reads that name a commit position (read your writes): which replicas have replayed it, the
//! short wait for one to get there, and the pollers that ask the replicas while reads wait.
//!
//! Each replica's replayed position is known from its checks (every second) and, while some
//! read waits, from its poller, which asks `pg_last_wal_replay_lsn()` every millisecond on a
//! connection of its own and wakes the waiting reads when the position moves. A read names a
//! position; [`ReadPools::pick_replayed`] gives it the least busy healthy replica known to have
//! replayed it, else waits up to the configured bound for one to get there, else answers `None`:
//! read from the primary.
//!
//! What is known is a hint for choosing, not the guarantee: the read itself runs behind the
//! guard [`crate::lsn::REPLAYED_SQL`] on the replica (the replica could have restarted from an
//! earlier point since it was asked), and a read whose guard fails goes to the primary
//! ([`ReadPools::note_behind`]).

use super::replicas::{Probe, ReadPools, Replica, ReplicaLease};
use crate::lsn::Lsn;
use std::sync::Arc;
use std::sync::Weak;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::{Notify, watch};

/// How often a poller asks its replica while reads wait.
const POLL_INTERVAL: Duration = Duration::from_millis(1);
/// Longest wait for one poll's answer.
const POLL_TIMEOUT: Duration = Duration::from_secs(1);
/// How long an idle poller sleeps before looking whether its pools are gone.
const IDLE_CHECK: Duration = Duration::from_secs(1);

/// The wait for replicas to replay a read's position, when none is given.
pub const DEFAULT_LSN_WAIT: Duration = Duration::from_millis(100);

/// Where a read that named a commit position went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LsnOutcome {
    // The variants index `Replay::outcomes`, in this order.
    /// A replica known to have replayed it, at once.
    Replayed,
    /// A replica that replayed it while the read waited.
    Waited,
    /// The primary: no healthy replica replayed it within the wait (or none is healthy).
    Primary,
    /// The primary, after the replica's guard found it had not replayed the position after all.
    Behind,
}

impl LsnOutcome {
    /// Every outcome, in the order of [`ReadPools::lsn_outcomes`].
    pub const ALL: [LsnOutcome; 4] = [
        LsnOutcome::Replayed,
        LsnOutcome::Waited,
        LsnOutcome::Primary,
        LsnOutcome::Behind,
    ];

    /// A short name, for metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            LsnOutcome::Replayed => "replica",
            LsnOutcome::Waited => "replica_after_wait",
            LsnOutcome::Primary => "primary",
            LsnOutcome::Behind => "primary_replica_behind",
        }
    }
}

/// The shared state of the waits.
#[derive(Debug)]
pub(super) struct Replay {
    /// Bumped whenever a replica's replayed position moves forward.
    advanced: watch::Sender<u64>,
    /// Reads waiting now: the pollers ask only while it is above zero.
    waiting: AtomicUsize,
    /// Wakes the pollers when a read starts waiting.
    wake: Arc<Notify>,
    /// The longest wait, in microseconds.
    wait_micros: AtomicU64,
    outcomes: [AtomicU64; 4],
}

impl Replay {
    pub(super) fn new() -> Replay {
        Replay {
            advanced: watch::Sender::new(0),
            waiting: AtomicUsize::new(0),
            wake: Arc::new(Notify::new()),
            wait_micros: AtomicU64::new(DEFAULT_LSN_WAIT.as_micros() as u64),
            outcomes: Default::default(),
        }
    }

    pub(super) fn wake(&self) -> Arc<Notify> {
        self.wake.clone()
    }

    /// Records a replayed position of `replica` (from a check or a poll) and wakes the waiting
    /// reads when it moved forward.
    pub(super) fn note(&self, replica: &Replica, replayed: Lsn) {
        let before = replica.replayed.fetch_max(replayed.0, Ordering::AcqRel);
        if replayed.0 > before && self.waiting.load(Ordering::Acquire) > 0 {
            self.advanced.send_modify(|generation| *generation += 1);
        }
    }

    fn count(&self, outcome: LsnOutcome) {
        self.outcomes[outcome as usize].fetch_add(1, Ordering::Relaxed);
    }
}

/// Counts a waiting read for as long as it waits (also when its future is dropped).
struct Waiting<'a>(&'a Replay);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, Ordering::AcqRel);
    }
}

impl ReadPools {
    /// Sets the longest wait of [`ReadPools::pick_replayed`] for a replica to replay a position
    /// (zero: never wait, read from the primary at once).
    pub fn set_lsn_wait(&self, wait: Duration) {
        let micros = u64::try_from(wait.as_micros()).unwrap_or(u64::MAX);
        self.replay.wait_micros.store(micros, Ordering::Relaxed);
    }

    /// The longest wait for a replica to replay a position.
    pub fn lsn_wait(&self) -> Duration {
        Duration::from_micros(self.replay.wait_micros.load(Ordering::Relaxed))
    }

    /// A healthy replica that has replayed `lsn`, the least busy one; when none is known to,
    /// waits up to [`ReadPools::lsn_wait`] for one to get there. `None`: read from the primary.
    ///
    /// The read must then run behind [`crate::lsn::REPLAYED_SQL`] on the replica and go to
    /// the primary (after [`ReadPools::note_behind`]) when that says it has not.
    pub async fn pick_replayed(&self, lsn: Lsn) -> Option<ReplicaLease> {
        let replay = &self.replay;
        let replayed = |replica: &Replica| replica.replayed.load(Ordering::Acquire) >= lsn.0;
        if let Some(lease) = self.pick_where(replayed) {
            replay.count(LsnOutcome::Replayed);
            return Some(lease);
        }
        let wait = self.lsn_wait();
        if wait.is_zero() || !self.replicas().iter().any(|r| r.is_healthy()) {
            replay.count(LsnOutcome::Primary);
            return None;
        }
        let mut advanced = replay.advanced.subscribe();
        replay.waiting.fetch_add(1, Ordering::AcqRel);
        let _waiting = Waiting(replay);
        replay.wake.notify_waiters();
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            advanced.borrow_and_update();
            if let Some(lease) = self.pick_where(replayed) {
                replay.count(LsnOutcome::Waited);
                return Some(lease);
            }
            match tokio::time::timeout_at(deadline, advanced.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) | Err(_) => break,
            }
        }
        replay.count(LsnOutcome::Primary);
        None
    }

    /// A read's guard on `replica` found it had not replayed the position it was picked for
    /// (it restarted from an earlier point, say): what was known of it is forgotten until it is
    /// asked again, and the read goes to the primary.
    pub fn note_behind(&self, replica: &Replica) {
        replica.replayed.store(0, Ordering::Release);
        self.replay.count(LsnOutcome::Behind);
        tracing::debug!(
            replica = replica.index(),
            "replica had not replayed a read's position; reading from the primary"
        );
    }

    /// How many reads that named a commit position went where, since start.
    pub fn lsn_outcomes(&self) -> [(LsnOutcome, u64); 4] {
        LsnOutcome::ALL.map(|outcome| {
            (
                outcome,
                self.replay.outcomes[outcome as usize].load(Ordering::Relaxed),
            )
        })
    }
}

/// One replica's poller: while reads wait, asks the replica for its replayed position every
/// [`POLL_INTERVAL`]; otherwise sleeps. Ends when the pools are dropped.
pub(super) async fn poll_forever(pools: Weak<ReadPools>, index: usize, mut probe: Probe) {
    let wake = match pools.upgrade() {
        Some(pools) => pools.replay.wake(),
        None => return,
    };
    loop {
        let notified = wake.notified();
        let mut notified = std::pin::pin!(notified);
        notified.as_mut().enable();
        let asked = {
            let Some(pools) = pools.upgrade() else {
                return;
            };
            let replica = &pools.replicas()[index];
            if pools.replay.waiting.load(Ordering::Acquire) == 0 || !replica.is_healthy() {
                false
            } else {
                let answer = tokio::time::timeout(POLL_TIMEOUT, replay_position(&mut probe)).await;
                match answer {
                    Ok(Ok(Some(lsn))) => pools.replay.note(replica, lsn),
                    Ok(Ok(None)) => {}
                    Ok(Err(reason)) => {
                        tracing::debug!(replica = index, %reason, "replay poll failed");
                    }
                    Err(_) => probe.close(),
                }
                true
            }
        };
        if asked {
            tokio::time::sleep(POLL_INTERVAL).await;
        } else {
            let _ = tokio::time::timeout(IDLE_CHECK, notified).await;
        }
    }
}

/// The replica's `pg_last_wal_replay_lsn()` (`None` on a server that never was in recovery).
async fn replay_position(probe: &mut Probe) -> Result<Option<Lsn>, String> {
    let row = probe
        .row("SELECT pg_catalog.pg_last_wal_replay_lsn()")
        .await?;
    Ok(row.raw(0).and_then(Lsn::parse))
}
