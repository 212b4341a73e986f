//! `ReadPools`: the primary's pool and one pool per streaming replica, with health and lag checks.
//!
//! Reads that may see a slightly older state (table and view GETs) ask [`ReadPools::pick`] for a
//! replica: the healthy one with the fewest requests in flight (ties go round the replicas), held
//! by a [`ReplicaLease`] that counts the request until it is dropped. `None` means "use the
//! primary": there are no replicas, or every one is out.
//!
//! A background task checks every replica once a second, on connections of its own (a pool
//! busy with reads must not make its replica look unreachable): it must answer, be in recovery
//! (`pg_is_in_recovery()`: a promoted replica is out), and not lag more than the allowed lag.
//! Lag is measured against the primary's WAL position rather than by
//! `now() - pg_last_xact_replay_timestamp()`: after a quiet spell on the primary that timestamp is
//! old even on a replica that is fully caught up, and the first write would evict every replica.
//! Instead each check notes the primary's `pg_current_wal_lsn()`; the lag is the age of the
//! oldest noted position the replica has not replayed yet (`pg_last_wal_replay_lsn()`), zero when
//! it has replayed everything the primary had. A replica that fails a check is out at once and
//! back in at the first check it passes. When the primary does not answer, replicas are judged
//! on reachability and recovery alone, so reads go on while it is down.

use super::replay::{self, Replay};
use super::{Pool, PoolSettings};
use crate::config::Config;
use crate::lsn::Lsn;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant};

/// How often replicas are checked.
pub const CHECK_INTERVAL: Duration = Duration::from_secs(1);
/// Longest wait for one check's answer; beyond it the replica counts as unreachable.
const CHECK_TIMEOUT: Duration = Duration::from_secs(2);
/// Most primary positions remembered per replica (older ones only matter beyond any sane lag).
const MAX_NOTED: usize = 3_600;

/// The `application_name` of the primary's connections when the URL names none.
pub const PRIMARY_APPLICATION_NAME: &str = "sluice-primary";

/// The `application_name` of replica `index`'s connections.
pub fn replica_application_name(index: usize) -> String {
    format!("sluice-replica-{index}")
}

/// Why the replicas could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum ReplicaError {
    /// A replica URL does not parse.
    #[error("replica {index}: its URL is not valid: {source}")]
    BadUrl {
        /// Position in the list.
        index: usize,
        /// What the parser said.
        source: crate::config::ConfigError,
    },
    /// A replica URL points at a server that is not in recovery.
    #[error(
        "replica {index} ({host}) is not a replica: pg_is_in_recovery() is false there, so it \
         is a primary; reads sent to it could miss writes made on the real primary. Give only \
         streaming replicas of the database as replica URLs"
    )]
    NotAReplica {
        /// Position in the list.
        index: usize,
        /// Host and port (no credentials).
        host: String,
    },
}

/// What a replica is doing, as the last check found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplicaState {
    /// Serving reads.
    Healthy,
    /// Out: it did not answer.
    Unreachable,
    /// Out: it is not in recovery (promoted, or a primary).
    NotInRecovery,
    /// Out: it lags more than the allowed lag.
    Lagging,
}

impl ReplicaState {
    /// A short name, for metrics and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            ReplicaState::Healthy => "healthy",
            ReplicaState::Unreachable => "unreachable",
            ReplicaState::NotInRecovery => "not_in_recovery",
            ReplicaState::Lagging => "lagging",
        }
    }

    fn code(self) -> usize {
        self as usize
    }

    fn from_code(code: usize) -> ReplicaState {
        match code {
            0 => ReplicaState::Healthy,
            1 => ReplicaState::Unreachable,
            2 => ReplicaState::NotInRecovery,
            _ => ReplicaState::Lagging,
        }
    }
}

/// One replica: its pool, its counters and its state.
pub struct Replica {
    index: usize,
    host: String,
    pool: Pool,
    /// How the checks connect: a connection of their own, not one of the pool's, so a pool
    /// busy with reads does not make a healthy replica look unreachable.
    probe: Config,
    healthy: AtomicBool,
    state: AtomicUsize,
    in_flight: AtomicUsize,
    served: AtomicU64,
    lag_millis: AtomicU64,
    /// The replayed WAL position last seen (0: not known), for reads that name a position.
    pub(super) replayed: AtomicU64,
    multiplexer: OnceLock<Option<super::Multiplexer>>,
}

impl std::fmt::Debug for Replica {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replica")
            .field("index", &self.index)
            .field("host", &self.host)
            .field("state", &self.state())
            .finish_non_exhaustive()
    }
}

impl Replica {
    /// Its position in the configured list.
    pub fn index(&self) -> usize {
        self.index
    }

    /// Host and port, safe to print.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// Its pool.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// The pipelining mode over its pool, started on first use (`None` when it cannot start).
    pub fn multiplexer(&self) -> Option<&super::Multiplexer> {
        self.multiplexer
            .get_or_init(|| {
                self.pool
                    .multiplexer(self.pool.settings().max_size())
                    .inspect_err(|error| {
                        tracing::warn!(replica = self.index, %error,
                            "reads on this replica run without the pipelining mode")
                    })
                    .ok()
            })
            .as_ref()
    }

    /// Whether it serves reads now.
    pub fn is_healthy(&self) -> bool {
        self.healthy.load(Ordering::Relaxed)
    }

    /// The replayed WAL position last seen by its checks or poller (`None` while not known,
    /// as after it was taken out).
    pub fn replayed(&self) -> Option<Lsn> {
        match self.replayed.load(Ordering::Acquire) {
            0 => None,
            lsn => Some(Lsn(lsn)),
        }
    }

    /// The state the last check found.
    pub fn state(&self) -> ReplicaState {
        ReplicaState::from_code(self.state.load(Ordering::Relaxed))
    }

    /// Requests on it now.
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Relaxed)
    }

    /// Requests it was given since start.
    pub fn served(&self) -> u64 {
        self.served.load(Ordering::Relaxed)
    }

    /// The lag the last check measured.
    pub fn lag(&self) -> Duration {
        Duration::from_millis(self.lag_millis.load(Ordering::Relaxed))
    }

    /// Takes it out until the next check passes (a request found it unreachable).
    pub fn mark_unreachable(&self) {
        self.set_state(ReplicaState::Unreachable);
    }

    fn set_state(&self, state: ReplicaState) {
        let previous = ReplicaState::from_code(self.state.swap(state.code(), Ordering::Relaxed));
        self.healthy
            .store(state == ReplicaState::Healthy, Ordering::Relaxed);
        if state != ReplicaState::Healthy {
            // It may come back from an earlier point (a restart): ask again before trusting it.
            self.replayed.store(0, Ordering::Release);
        }
        if previous != state {
            if state == ReplicaState::Healthy {
                tracing::info!(replica = self.index, host = %self.host, "replica back in");
            } else {
                tracing::warn!(replica = self.index, host = %self.host, state = state.as_str(),
                    lag_ms = self.lag_millis.load(Ordering::Relaxed), "replica taken out");
            }
        }
    }
}

/// A request's hold on a replica: counted in its requests in flight until dropped.
#[derive(Debug)]
pub struct ReplicaLease {
    replica: Arc<Replica>,
}

impl ReplicaLease {
    /// The replica.
    pub fn replica(&self) -> &Replica {
        &self.replica
    }

    /// The replica, shared: it outlives the lease (to take the replica out after the lease
    /// went with a streamed body).
    pub fn shared(&self) -> Arc<Replica> {
        self.replica.clone()
    }
}

impl std::ops::Deref for ReplicaLease {
    type Target = Replica;
    fn deref(&self) -> &Replica {
        &self.replica
    }
}

impl Drop for ReplicaLease {
    fn drop(&mut self) {
        self.replica.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The primary's pool and the replicas' pools. Cheap to share in an `Arc`; the checking task
/// stops when the last `ReadPools` is dropped.
#[derive(Debug)]
pub struct ReadPools {
    primary: Pool,
    replicas: Vec<Arc<Replica>>,
    max_lag: Duration,
    /// Servers not in recovery serve reads too (see [`ReadPools::connect_allowing_primary`]).
    allow_primary: bool,
    next: AtomicUsize,
    /// Reads that name a commit position: what each replica replayed, the waits.
    pub(super) replay: Replay,
}

impl ReadPools {
    /// As [`ReadPools::connect`], but a server that is not in recovery is taken as a replica
    /// instead of refused, and kept in by the checks: for measuring what routing costs, with
    /// the primary itself under another URL as the "replica" (the same server answers either
    /// way, so only the routing differs). Its lag counts as zero. Not for serving: a real
    /// primary given as a replica may be another database than the one written to.
    pub async fn connect_allowing_primary(
        primary: Pool,
        urls: &[String],
        settings: PoolSettings,
        max_lag: Duration,
    ) -> Result<Arc<ReadPools>, ReplicaError> {
        ReadPools::connect_with(primary, urls, settings, max_lag, true).await
    }

    /// Opens a pool per replica URL (its connections named [`replica_application_name`]),
    /// checks that each is in recovery (a primary is refused with
    /// [`ReplicaError::NotAReplica`]; one that does not answer starts out), and starts the
    /// checks. Needs a Tokio runtime.
    pub async fn connect(
        primary: Pool,
        urls: &[String],
        settings: PoolSettings,
        max_lag: Duration,
    ) -> Result<Arc<ReadPools>, ReplicaError> {
        ReadPools::connect_with(primary, urls, settings, max_lag, false).await
    }

    async fn connect_with(
        primary: Pool,
        urls: &[String],
        settings: PoolSettings,
        max_lag: Duration,
        allow_primary: bool,
    ) -> Result<Arc<ReadPools>, ReplicaError> {
        let mut replicas = Vec::with_capacity(urls.len());
        for (index, url) in urls.iter().enumerate() {
            let mut config =
                Config::parse(url).map_err(|source| ReplicaError::BadUrl { index, source })?;
            config.set_application_name(&replica_application_name(index));
            let host = describe_host(&config);
            let probe = probe_config(&config);
            let mut first = Probe::new(probe.clone());
            let status = tokio::time::timeout(CHECK_TIMEOUT * 5, recovery_status(&mut first))
                .await
                .unwrap_or_else(|_| Err("no answer in time".to_owned()));
            drop(first);
            let pool = Pool::new(config, settings.clone());
            let state = match status {
                Ok((true, _)) => ReplicaState::Healthy,
                Ok((false, _)) if allow_primary => ReplicaState::Healthy,
                Ok((false, _)) => return Err(ReplicaError::NotAReplica { index, host }),
                Err(reason) => {
                    // Not refused: it may be starting; the checks bring it in once it answers
                    // (and keep it out should it turn out to be a primary).
                    tracing::warn!(replica = index, %host, %reason,
                        "replica does not answer yet; it serves no reads until it does");
                    ReplicaState::Unreachable
                }
            };
            replicas.push(Arc::new(Replica {
                index,
                host,
                pool,
                probe,
                healthy: AtomicBool::new(state == ReplicaState::Healthy),
                state: AtomicUsize::new(state.code()),
                in_flight: AtomicUsize::new(0),
                served: AtomicU64::new(0),
                lag_millis: AtomicU64::new(0),
                replayed: AtomicU64::new(0),
                multiplexer: OnceLock::new(),
            }));
        }
        let pools = Arc::new(ReadPools {
            primary,
            replicas,
            max_lag,
            allow_primary,
            next: AtomicUsize::new(0),
            replay: Replay::new(),
        });
        if !pools.replicas.is_empty() {
            tokio::spawn(check_forever(Arc::downgrade(&pools)));
        }
        for replica in &pools.replicas {
            let probe = Probe::new(replica.probe.clone());
            tokio::spawn(replay::poll_forever(
                Arc::downgrade(&pools),
                replica.index,
                probe,
            ));
        }
        Ok(pools)
    }

    /// The primary's pool.
    pub fn primary(&self) -> &Pool {
        &self.primary
    }

    /// The replicas, in configured order.
    pub fn replicas(&self) -> &[Arc<Replica>] {
        &self.replicas
    }

    /// The most lag a replica may have and still serve reads.
    pub fn max_lag(&self) -> Duration {
        self.max_lag
    }

    /// The healthy replica with the fewest requests in flight, held until the lease drops;
    /// `None`: read from the primary.
    pub fn pick(&self) -> Option<ReplicaLease> {
        self.pick_where(|_| true)
    }

    /// The least busy healthy replica that `accept` takes, held until the lease drops.
    pub(super) fn pick_where(&self, accept: impl Fn(&Replica) -> bool) -> Option<ReplicaLease> {
        let count = self.replicas.len();
        if count == 0 {
            return None;
        }
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        let mut best: Option<&Arc<Replica>> = None;
        for offset in 0..count {
            let replica = &self.replicas[(start + offset) % count];
            if !replica.healthy.load(Ordering::Relaxed) || !accept(replica) {
                continue;
            }
            if best.is_none_or(|b| replica.in_flight() < b.in_flight()) {
                best = Some(replica);
            }
        }
        let replica = best?.clone();
        replica.in_flight.fetch_add(1, Ordering::Relaxed);
        replica.served.fetch_add(1, Ordering::Relaxed);
        Some(ReplicaLease { replica })
    }

    /// Checks every replica once and updates its state (the background task does this every
    /// [`CHECK_INTERVAL`]).
    async fn check_now(&self, state: &mut CheckState) {
        let primary_lsn = tokio::time::timeout(CHECK_TIMEOUT, current_wal_lsn(&mut state.primary))
            .await
            .unwrap_or_else(|_| {
                state.primary.conn = None;
                Err("no answer in time".to_owned())
            })
            .ok();
        let now = Instant::now();
        for (replica, (probe, noted)) in self.replicas.iter().zip(state.replicas.iter_mut()) {
            let status = tokio::time::timeout(CHECK_TIMEOUT, recovery_status(probe))
                .await
                .unwrap_or_else(|_| {
                    probe.conn = None;
                    Err("no answer in time".to_owned())
                });
            let state = match status {
                Err(reason) => {
                    tracing::debug!(replica = replica.index, %reason, "replica check failed");
                    ReplicaState::Unreachable
                }
                Ok((false, _)) if self.allow_primary => ReplicaState::Healthy,
                Ok((false, _)) => ReplicaState::NotInRecovery,
                Ok((true, replayed)) => {
                    if let Some(replayed) = replayed {
                        self.replay.note(replica, Lsn(replayed));
                    }
                    let lag = match (primary_lsn, replayed) {
                        (Some(primary), Some(replayed)) => {
                            note_and_measure(noted, now, primary, replayed)
                        }
                        // No primary to compare with: judge by reachability alone.
                        _ => Duration::ZERO,
                    };
                    replica
                        .lag_millis
                        .store(lag.as_millis() as u64, Ordering::Relaxed);
                    if lag > self.max_lag {
                        ReplicaState::Lagging
                    } else {
                        ReplicaState::Healthy
                    }
                }
            };
            replica.set_state(state);
        }
    }

    /// Closes every replica's pool (not the primary's).
    pub async fn close(&self) {
        for replica in &self.replicas {
            replica.pool.close().await;
        }
    }
}

/// Notes the primary's position `primary` at `now` unless the replica has it already, forgets
/// the positions it has replayed, and answers the age of the oldest one still missing.
fn note_and_measure(
    noted: &mut VecDeque<(Instant, u64)>,
    now: Instant,
    primary: u64,
    replayed: u64,
) -> Duration {
    while noted.front().is_some_and(|(_, lsn)| *lsn <= replayed) {
        noted.pop_front();
    }
    if primary > replayed && noted.back().is_none_or(|(_, lsn)| *lsn < primary) {
        if noted.len() == MAX_NOTED {
            noted.pop_front();
        }
        noted.push_back((now, primary));
    }
    noted.front().map_or(Duration::ZERO, |(since, _)| {
        now.saturating_duration_since(*since)
    })
}

/// The checks' connections (one to the primary, one per replica, opened again after a failure)
/// and the primary positions noted per replica.
struct CheckState {
    primary: Probe,
    replicas: Vec<(Probe, VecDeque<(Instant, u64)>)>,
}

/// A connection of the checks' (or a poller's) own.
pub(super) struct Probe {
    config: Config,
    conn: Option<crate::Connection>,
}

impl Probe {
    pub(super) fn new(config: Config) -> Probe {
        Probe { config, conn: None }
    }

    /// Drops the connection (it did not answer in time); the next use opens another.
    pub(super) fn close(&mut self) {
        self.conn = None;
    }

    /// The single row of `sql` (text format), connecting first when needed; any failure closes
    /// the connection, so the next check starts afresh.
    pub(super) async fn row(&mut self, sql: &str) -> Result<crate::OwnedRow, String> {
        let conn = match &mut self.conn {
            Some(conn) => conn,
            slot => slot.insert(
                crate::Connection::connect_with(&self.config)
                    .await
                    .map_err(|e| e.to_string())?,
            ),
        };
        match conn.query_one(sql, &[]).await {
            Ok(row) => Ok(row),
            Err(error) => {
                self.conn = None;
                Err(error.to_string())
            }
        }
    }
}

/// The checks' connection settings: `config` named `sluice-check`, so `pg_stat_activity` tells
/// them from the reads.
fn probe_config(config: &Config) -> Config {
    let mut probe = config.clone();
    probe.set_application_name("sluice-check");
    probe
}

async fn check_forever(pools: Weak<ReadPools>) {
    let mut interval = tokio::time::interval(CHECK_INTERVAL);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut state = match pools.upgrade() {
        Some(pools) => CheckState {
            primary: Probe::new(probe_config(pools.primary.config())),
            replicas: pools
                .replicas
                .iter()
                .map(|replica| (Probe::new(replica.probe.clone()), VecDeque::new()))
                .collect(),
        },
        None => return,
    };
    loop {
        interval.tick().await;
        let Some(pools) = pools.upgrade() else {
            return;
        };
        pools.check_now(&mut state).await;
    }
}

/// `host:port` of a config, without user or password.
fn describe_host(config: &Config) -> String {
    config
        .targets()
        .iter()
        .map(|target| format!("{}:{}", target.host, target.port))
        .collect::<Vec<_>>()
        .join(",")
}

/// `(pg_is_in_recovery(), pg_last_wal_replay_lsn())` of the probe's server.
async fn recovery_status(probe: &mut Probe) -> Result<(bool, Option<u64>), String> {
    let row = probe
        .row(
            "SELECT pg_catalog.pg_is_in_recovery()::text, \
             pg_catalog.pg_last_wal_replay_lsn()::text",
        )
        .await?;
    let in_recovery = row.raw(0) == Some(b"true".as_slice());
    let replayed = row.raw(1).and_then(parse_lsn);
    Ok((in_recovery, replayed))
}

/// The primary's `pg_current_wal_lsn()`.
async fn current_wal_lsn(probe: &mut Probe) -> Result<u64, String> {
    let row = probe
        .row("SELECT pg_catalog.pg_current_wal_lsn()::text")
        .await?;
    row.raw(0)
        .and_then(parse_lsn)
        .ok_or_else(|| "pg_current_wal_lsn() answered no position".to_owned())
}

/// A WAL position in PostgreSQL's text form (`16/B374D848`) as a number ([`Lsn::parse`]).
pub fn parse_lsn(text: &[u8]) -> Option<u64> {
    Lsn::parse(text).map(|lsn| lsn.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lsns_parse_and_order() {
        assert_eq!(parse_lsn(b"0/0"), Some(0));
        assert_eq!(parse_lsn(b"16/B374D848"), Some((0x16 << 32) | 0xB374_D848));
        assert!(parse_lsn(b"1/FFFFFFFF") < parse_lsn(b"2/0"));
        for bad in [
            &b""[..],
            b"/",
            b"1/",
            b"/1",
            b"x/1",
            b"123456789/0",
            b"1/2/3",
            b"\xff/1",
        ] {
            assert_eq!(parse_lsn(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn lag_is_the_age_of_the_oldest_position_not_replayed() {
        let start = Instant::now();
        let at = |secs: u64| start + Duration::from_secs(secs);
        let mut noted = VecDeque::new();
        // Caught up: no lag, nothing noted.
        assert_eq!(
            note_and_measure(&mut noted, at(0), 100, 100),
            Duration::ZERO
        );
        assert!(noted.is_empty());
        // Behind from t=1: the lag grows while replay is stuck.
        assert_eq!(
            note_and_measure(&mut noted, at(1), 200, 100),
            Duration::ZERO
        );
        assert_eq!(
            note_and_measure(&mut noted, at(2), 300, 100),
            Duration::from_secs(1)
        );
        assert_eq!(
            note_and_measure(&mut noted, at(5), 300, 100),
            Duration::from_secs(4)
        );
        // Replayed what the primary had at t=1, not t=2's: four seconds behind at t=6.
        assert_eq!(
            note_and_measure(&mut noted, at(6), 300, 200),
            Duration::from_secs(4)
        );
        // Caught up again.
        assert_eq!(
            note_and_measure(&mut noted, at(7), 300, 300),
            Duration::ZERO
        );
        assert!(noted.is_empty());
        // A quiet primary never makes a caught-up replica lag, however long the quiet.
        assert_eq!(
            note_and_measure(&mut noted, at(900), 300, 300),
            Duration::ZERO
        );
        // Stuck for ten minutes while the primary writes every second: ten minutes behind,
        // one position noted per second.
        for second in 1..=600 {
            note_and_measure(&mut noted, at(900 + second), 300 + second, 300);
        }
        assert_eq!(
            note_and_measure(&mut noted, at(1500), 900, 300),
            Duration::from_secs(599)
        );
        assert_eq!(noted.len(), 600);
        // Replayed what the primary had five minutes in: five minutes behind.
        assert_eq!(
            note_and_measure(&mut noted, at(1500), 900, 600),
            Duration::from_secs(299)
        );
    }
}
