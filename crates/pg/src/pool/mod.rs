//! A connection pool: fast to acquire from, fair to its waiters, and self-healing.
//!
//! - **Fast path.** Acquiring an idle connection takes one short lock (a `Vec::pop`), no
//!   allocation and no await point; giving it back is one lock and a push. The lock is only ever
//!   held for O(1) work, never across an await or a system call.
//! - **Fair.** Callers that find no idle connection queue up first come, first served; a
//!   connection given back goes straight to the oldest waiter, so a newcomer never barges ahead.
//!   An acquire that times out says so with the pool's state (size, busy, idle, waiting).
//! - **Clean.** A connection given back carries its reset (a ROLLBACK when a transaction was left
//!   open, and the session reset of [`Reset`]) in front of its next request: one write and one
//!   round trip for both (seed 002, "prepend"). A connection given back with a request still in
//!   flight (its future was dropped) is drained — the query cancelled if it does not end within
//!   a few milliseconds — before anyone else gets it, or closed. Prepared statements live in the
//!   connection and survive: the reset never deallocates them.
//! - **Self-healing.** Broken connections (I/O error, FATAL from the server) are closed when given
//!   back and their place goes to the next waiter, who opens a new one. A connection that sat idle
//!   is checked (without a round trip) before it is handed out, so a server restart costs at most
//!   the requests that were running on it. While connecting fails, acquires that need a new
//!   connection fail at once with a "database unavailable" error instead of hanging, and one
//!   attempt per retry interval finds the server when it is back.
//! - **Pipelining mode.** [`Multiplexer`] lets many tasks share connections' round trips for
//!   short independent statements (Npgsql's "multiplexing"); see BENCHMARKS.md for when it pays.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use sluice_pg::pool::{Pool, PoolSettings};
//! let pool = Pool::connect("postgres://app@db/app", PoolSettings::default())?;
//! let mut conn = pool.get().await?;
//! let row = conn.query_one("SELECT 1 + $1::int", &[&41]).await?;
//! # let _ = row; Ok(()) }
//! ```

mod error;
mod guard;
mod hooks;
mod maintenance;
mod multiplex;
mod recycle;
mod replay;
mod replicas;
mod settings;
mod shared;

pub use error::{PoolError, PoolErrorKind, PoolStatus};
pub use guard::PooledConnection;
pub use multiplex::Multiplexer;
pub use replay::{DEFAULT_LSN_WAIT, LsnOutcome};
pub use replicas::{
    CHECK_INTERVAL, PRIMARY_APPLICATION_NAME, ReadPools, Replica, ReplicaError, ReplicaLease,
    ReplicaState, parse_lsn, replica_application_name,
};
pub use settings::{PoolSettings, Reset, SESSION_RESET, SESSION_RESET_SAME_AUTHORIZATION};

use crate::config::Config;
use crate::conn::Connection;
use guard::{Place, Waiting};
use shared::{Grant, Shared, Step};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A pool of connections to one database. Cheap to clone (one `Arc`); all clones share the
/// connections. Create it inside a Tokio runtime: a background task closes expired and idle
/// connections, checks idle ones, and keeps `min_idle` open.
#[derive(Clone)]
pub struct Pool {
    shared: Arc<Shared>,
}

impl Pool {
    /// A pool that opens connections with `config` as they are needed.
    pub fn new(config: Config, settings: PoolSettings) -> Pool {
        let shared = Arc::new(Shared::new(config, settings));
        shared.ensure_maintenance();
        Pool { shared }
    }

    /// A pool for a URL (`postgres://...`) or conninfo string (`host=... user=...`).
    pub fn connect(conninfo: &str, settings: PoolSettings) -> crate::Result<Pool> {
        Ok(Pool::new(Config::parse(conninfo)?, settings))
    }

    /// A connection: an idle one when there is one, else a new one while the pool is below its
    /// maximum size, else the next one given back (first come, first served). Fails after the
    /// acquire timeout, at once when the database is known to be unreachable, or when the pool
    /// is closed.
    #[inline]
    pub async fn get(&self) -> Result<PooledConnection, PoolError> {
        if let Some(conn) = self.try_get() {
            return Ok(conn);
        }
        // Boxed: the slow path's future (it may open a connection) is kilobytes, and inline it
        // would make every fast acquire build and move that much.
        Box::pin(self.get_slow()).await
    }

    /// An idle connection if there is one right now; never waits and never opens one.
    #[inline]
    pub fn try_get(&self) -> Option<PooledConnection> {
        while let Some(slot) = self.shared.pop_idle() {
            match self.shared.vet(slot) {
                Ok(slot) => return Some(PooledConnection::new(slot, self.shared.clone())),
                Err(()) => self.shared.free_place(),
            }
        }
        None
    }

    /// The pool's state and counters now.
    pub fn status(&self) -> PoolStatus {
        self.shared.status()
    }

    /// The settings the pool runs with.
    pub fn settings(&self) -> &PoolSettings {
        &self.shared.settings
    }

    /// The connection configuration.
    pub fn config(&self) -> &Config {
        &self.shared.config
    }

    /// Starts the pipelining mode over up to `connections` of this pool's connections (see
    /// [`Multiplexer`]). Needs a Tokio runtime.
    pub fn multiplexer(&self, connections: usize) -> crate::Result<Multiplexer> {
        Multiplexer::start(self.clone(), connections)
    }

    /// Closes the pool: waiters and later acquires fail with [`PoolErrorKind::Closed`], idle
    /// connections are closed now and connections in use when they come back.
    pub async fn close(&self) {
        for slot in self.shared.close() {
            let _ = tokio::time::timeout(Duration::from_secs(1), slot.conn.close()).await;
        }
    }

    #[inline(never)]
    async fn get_slow(&self) -> Result<PooledConnection, PoolError> {
        self.shared.ensure_maintenance();
        let started = Instant::now();
        let timeout = self.shared.settings.acquire_timeout();
        match tokio::time::timeout(timeout, self.acquire()).await {
            Ok(result) => result,
            Err(_) => Err(self.shared.timed_out(started.elapsed())),
        }
    }

    async fn acquire(&self) -> Result<PooledConnection, PoolError> {
        loop {
            match self.shared.plan_acquire() {
                Step::Got(slot) => match self.shared.vet(slot) {
                    Ok(slot) => return Ok(PooledConnection::new(slot, self.shared.clone())),
                    Err(()) => self.shared.free_place(),
                },
                Step::Open => return self.open(Place::new(&self.shared)).await,
                Step::Fail(e) => return Err(e),
                Step::Wait(rx) => {
                    let mut waiting = Waiting::new(rx, &self.shared);
                    let grant = (&mut waiting.rx).await;
                    drop(waiting);
                    return match grant {
                        Ok(Grant::Conn(slot)) => match self.shared.vet(slot) {
                            Ok(slot) => Ok(PooledConnection::new(slot, self.shared.clone())),
                            // Its place is ours: open a new connection in it.
                            Err(()) => self.open(Place::new(&self.shared)).await,
                        },
                        Ok(Grant::Place) => self.open(Place::new(&self.shared)).await,
                        // The queue was dropped: the pool closed.
                        Err(_) => Err(self.shared.closed_error()),
                    };
                }
            }
        }
    }

    /// Opens a connection into a place already counted in the pool's size.
    async fn open(&self, place: Place<'_>) -> Result<PooledConnection, PoolError> {
        self.shared.begin_attempt()?;
        match Connection::connect_with(&self.shared.config).await {
            Ok(conn) => {
                let slot = self.shared.opened(conn);
                place.keep();
                Ok(PooledConnection::new(slot, self.shared.clone()))
            }
            Err(e) => Err(self.shared.connect_failed(e)),
        }
    }
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("status", &self.status())
            .field("settings", &self.shared.settings)
            .finish_non_exhaustive()
    }
}
