//! Pool settings, their defaults, and the session reset run when a connection comes back.

use crate::conn::Connection;
use std::time::Duration;

/// What a connection's next user must not inherit from its last one.
///
/// The reset is prepended to the connection's next request (one write, one round trip for
/// both), never sent as a round trip of its own. Prepared statements survive every variant: the
/// statement cache lives in the connection and the reset never deallocates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reset {
    /// Roll back an open transaction, then `CLOSE ALL; SET SESSION AUTHORIZATION DEFAULT;
    /// RESET ALL; UNLISTEN *; SELECT pg_advisory_unlock_all(); DISCARD TEMP; DISCARD
    /// SEQUENCES` — PostgreSQL's `DISCARD ALL` without its `DEALLOCATE ALL` and `DISCARD
    /// PLANS`, which would throw away the prepared statements. `SET SESSION AUTHORIZATION
    /// DEFAULT` is left out when the server reported no change of `session_authorization`. The
    /// server runs it in front of every request that follows a return to the pool, which costs
    /// server time on short statements (see BENCHMARKS.md).
    #[default]
    Session,
    /// Only roll back an open transaction. For callers that never change session state
    /// (`SET`, `LISTEN`, temporary tables, advisory locks, cursors `WITH HOLD`): nothing is sent
    /// unless a transaction was left open.
    TransactionOnly,
    /// Roll back an open transaction, then run these statements (each valid in a transaction
    /// block and a pipeline).
    Custom(&'static [&'static str]),
}

/// The statements of [`Reset::Session`]: `DISCARD ALL` without the parts that drop prepared
/// statements (the connection's statement cache survives), each valid in a transaction block so
/// the reset can share the next request's Sync group. When the server reported no change of
/// `session_authorization` during the lease, [`SESSION_RESET_SAME_AUTHORIZATION`] is used.
pub const SESSION_RESET: &[&str] = &[
    "CLOSE ALL",
    "SET SESSION AUTHORIZATION DEFAULT",
    "RESET ALL",
    "UNLISTEN *",
    "SELECT pg_advisory_unlock_all()",
    "DISCARD TEMP",
    "DISCARD SEQUENCES",
];

/// [`SESSION_RESET`] without `SET SESSION AUTHORIZATION DEFAULT`: for a connection whose
/// `session_authorization` is the one it started with (see
/// [`Connection::session_authorization_changed`]). `SET ROLE` is undone by `RESET ALL`.
pub const SESSION_RESET_SAME_AUTHORIZATION: &[&str] = &[
    "CLOSE ALL",
    "RESET ALL",
    "UNLISTEN *",
    "SELECT pg_advisory_unlock_all()",
    "DISCARD TEMP",
    "DISCARD SEQUENCES",
];

impl Reset {
    /// The statements run after the rollback, if any.
    pub fn statements(&self) -> Option<&'static [&'static str]> {
        match self {
            Reset::Session => Some(SESSION_RESET),
            Reset::TransactionOnly => None,
            Reset::Custom(statements) => Some(statements),
        }
    }

    /// The statements a reset of `conn` runs after the rollback, if any: for
    /// [`Reset::Session`], `SET SESSION AUTHORIZATION DEFAULT` only when the server reported a
    /// change of the session's authorization (the cheapest reset that is still complete).
    pub fn statements_for(&self, conn: &Connection) -> Option<&'static [&'static str]> {
        match self {
            Reset::Session if !conn.session_authorization_changed() => {
                Some(SESSION_RESET_SAME_AUTHORIZATION)
            }
            _ => self.statements(),
        }
    }

    /// Queues the reset in front of the connection's next request. Idempotent: a connection
    /// returned twice without being used carries one reset, not two.
    pub(crate) fn queue(&self, conn: &mut Connection) {
        conn.prepend_rollback_if_open();
        conn.clear_prepended();
        if let Some(statements) = self.statements_for(conn) {
            conn.prepend_reset(statements);
        }
        // What the last user's session said is not the next user's business.
        drop(conn.take_notices());
        drop(conn.take_notifications());
    }
}

/// How a [`Pool`](super::Pool) sizes itself, waits, and looks after its connections.
///
/// ```
/// # use sluice_pg::pool::PoolSettings;
/// # use std::time::Duration;
/// let mut settings = PoolSettings::default();
/// settings.set_max_size(16).set_acquire_timeout(Duration::from_secs(2));
/// ```
#[derive(Clone, Debug)]
pub struct PoolSettings {
    max_size: usize,
    min_idle: usize,
    acquire_timeout: Duration,
    max_waiting: usize,
    max_lifetime: Option<Duration>,
    idle_timeout: Option<Duration>,
    health_check_interval: Duration,
    retry_interval: Duration,
    reset: Reset,
}

impl Default for PoolSettings {
    fn default() -> PoolSettings {
        PoolSettings {
            max_size: 10,
            min_idle: 0,
            acquire_timeout: Duration::from_secs(5),
            max_waiting: 1024,
            max_lifetime: Some(Duration::from_secs(30 * 60)),
            idle_timeout: Some(Duration::from_secs(10 * 60)),
            health_check_interval: Duration::from_secs(1),
            retry_interval: Duration::from_millis(100),
            reset: Reset::Session,
        }
    }
}

impl PoolSettings {
    /// The defaults: at most 10 connections, none kept open when unused, 5 s to acquire, 1024 waiters, 30 min
    /// lifetime, 10 min idle timeout, 1 s health checks, 100 ms between connection attempts while
    /// the database is unavailable, [`Reset::Session`].
    pub fn new() -> PoolSettings {
        PoolSettings::default()
    }

    /// At most this many connections are open (at least 1; default 10).
    pub fn set_max_size(&mut self, connections: usize) -> &mut PoolSettings {
        self.max_size = connections.max(1);
        self.min_idle = self.min_idle.min(self.max_size);
        self
    }

    /// Keep at least this many idle connections open, opened in the background (default 0;
    /// at most `max_size`).
    pub fn set_min_idle(&mut self, connections: usize) -> &mut PoolSettings {
        self.min_idle = connections.min(self.max_size);
        self
    }

    /// How long an acquire waits for a connection before failing with
    /// [`PoolErrorKind::Timeout`](super::PoolErrorKind::Timeout) (default 5 s). Opening a new
    /// connection counts against it.
    pub fn set_acquire_timeout(&mut self, timeout: Duration) -> &mut PoolSettings {
        self.acquire_timeout = timeout;
        self
    }

    /// At most this many callers wait for a connection (default 1024); one more fails at once
    /// with [`PoolErrorKind::Overloaded`](super::PoolErrorKind::Overloaded), so that a burst
    /// beyond what the database serves gets a fast refusal instead of a pile-up of waiters that
    /// would each time out. 0 waits for nobody: an acquire with no free connection fails.
    pub fn set_max_waiting(&mut self, callers: usize) -> &mut PoolSettings {
        self.max_waiting = callers;
        self
    }

    /// Close connections older than this (default 30 min; `None`: never). Each connection's
    /// lifetime is drawn between 90% and 100% of it, so connections opened together do not all
    /// expire together.
    pub fn set_max_lifetime(&mut self, lifetime: Option<Duration>) -> &mut PoolSettings {
        self.max_lifetime = lifetime;
        self
    }

    /// Close connections idle for longer than this, down to `min_idle` (default 10 min;
    /// `None`: never).
    pub fn set_idle_timeout(&mut self, timeout: Option<Duration>) -> &mut PoolSettings {
        self.idle_timeout = timeout;
        self
    }

    /// A connection idle for longer than this is checked before it is handed out, and the
    /// background task looks over idle connections this often (default 1 s). The check reads
    /// what the socket holds without waiting, so it finds a server that ended the session
    /// (restart, `pg_terminate_backend`) without a round trip.
    pub fn set_health_check_interval(&mut self, interval: Duration) -> &mut PoolSettings {
        self.health_check_interval = interval;
        self
    }

    /// While connecting fails, at most one attempt is made per interval; other acquires that
    /// need a new connection fail at once with
    /// [`PoolErrorKind::Unavailable`](super::PoolErrorKind::Unavailable) (default 100 ms).
    pub fn set_retry_interval(&mut self, interval: Duration) -> &mut PoolSettings {
        self.retry_interval = interval;
        self
    }

    /// What is reset when a connection comes back (default [`Reset::Session`]).
    pub fn set_reset(&mut self, reset: Reset) -> &mut PoolSettings {
        self.reset = reset;
        self
    }

    /// The most connections open at once.
    pub fn max_size(&self) -> usize {
        self.max_size
    }

    /// The idle connections kept open.
    pub fn min_idle(&self) -> usize {
        self.min_idle
    }

    /// How long an acquire waits.
    pub fn acquire_timeout(&self) -> Duration {
        self.acquire_timeout
    }

    /// The lifetime after which connections are closed.
    pub fn max_lifetime(&self) -> Option<Duration> {
        self.max_lifetime
    }

    /// The idle time after which connections are closed.
    pub fn idle_timeout(&self) -> Option<Duration> {
        self.idle_timeout
    }

    /// How long a connection may sit idle before it is checked.
    pub fn health_check_interval(&self) -> Duration {
        self.health_check_interval
    }

    /// The most callers that wait for a connection.
    pub fn max_waiting(&self) -> usize {
        self.max_waiting
    }

    /// The least time between connection attempts while connecting fails.
    pub fn retry_interval(&self) -> Duration {
        self.retry_interval
    }

    /// The reset run when a connection comes back.
    pub fn reset(&self) -> Reset {
        self.reset
    }

    /// How often the background task runs.
    pub(crate) fn maintenance_tick(&self) -> Duration {
        self.health_check_interval
            .min(Duration::from_secs(1))
            .max(Duration::from_millis(10))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_clamped() {
        let mut s = PoolSettings::new();
        s.set_max_size(0);
        assert_eq!(s.max_size(), 1);
        s.set_min_idle(5);
        assert_eq!(s.min_idle(), 1);
        s.set_max_size(8).set_min_idle(3);
        assert_eq!((s.max_size(), s.min_idle()), (8, 3));
        s.set_max_size(2);
        assert_eq!(s.min_idle(), 2);
    }

    #[test]
    fn reset_keeps_prepared_statements() {
        let statements = Reset::Session.statements().unwrap_or_default();
        assert!(
            statements
                .iter()
                .all(|s| !s.contains("DEALLOCATE") && !s.contains("DISCARD ALL"))
        );
        assert!(statements.iter().all(|s| !s.contains("DISCARD PLANS")));
        assert_eq!(Reset::TransactionOnly.statements(), None);
        assert_eq!(
            Reset::Custom(&["RESET ALL"]).statements(),
            Some(&["RESET ALL"][..])
        );
    }

    #[test]
    fn maintenance_tick_is_bounded() {
        let mut s = PoolSettings::new();
        s.set_health_check_interval(Duration::from_secs(60));
        assert_eq!(s.maintenance_tick(), Duration::from_secs(1));
        s.set_health_check_interval(Duration::ZERO);
        assert_eq!(s.maintenance_tick(), Duration::from_millis(10));
    }
}
