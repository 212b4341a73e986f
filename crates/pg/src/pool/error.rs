//! What an acquire reports when it gets no connection, and the pool's counters it quotes.

use crate::error::{Error, ErrorKind};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// A snapshot of a pool's state and counters (for logs, errors, and a metrics endpoint).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStatus {
    /// The most connections the pool opens.
    pub max_size: usize,
    /// Connections open, being opened, or being cleaned after an abandoned request.
    pub size: usize,
    /// Connections waiting in the pool for a caller.
    pub idle: usize,
    /// Connections out of the pool: with a caller, being opened, or being cleaned.
    pub busy: usize,
    /// Callers waiting for a connection.
    pub waiting: usize,
    /// Connections opened since the pool started.
    pub created: u64,
    /// Connections closed since the pool started (broken, expired, idle too long, detached).
    pub closed: u64,
    /// Acquires that timed out.
    pub timeouts: u64,
    /// Acquires that failed because the database could not be reached.
    pub unavailable: u64,
    /// Acquires refused at once because `max_waiting` callers were already waiting.
    pub overloaded: u64,
}

impl fmt::Display for PoolStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} of at most {} connections open, {} busy, {} idle; {} callers waiting",
            self.size, self.max_size, self.busy, self.idle, self.waiting
        )
    }
}

/// Why an acquire failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PoolErrorKind {
    /// No connection became free within the acquire timeout.
    Timeout,
    /// A new connection was needed and the database could not be reached (or refused it).
    Unavailable,
    /// The pool was closed.
    Closed,
    /// Every connection was busy and `max_waiting` callers were already waiting.
    Overloaded,
}

/// An acquire that got no connection: what happened, the pool's state at that moment, and the
/// last connection error when the database is unreachable.
#[derive(Clone)]
pub struct PoolError {
    kind: PoolErrorKind,
    status: Box<PoolStatus>,
    waited: Duration,
    /// The last failed connection attempt and how long before this error it was made.
    cause: Option<(Arc<Error>, Duration)>,
}

impl PoolError {
    pub(crate) fn new(
        kind: PoolErrorKind,
        status: PoolStatus,
        waited: Duration,
        cause: Option<(Arc<Error>, Duration)>,
    ) -> PoolError {
        PoolError {
            kind,
            status: Box::new(status),
            waited,
            cause,
        }
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> PoolErrorKind {
        self.kind
    }

    /// The pool's state when the acquire failed.
    pub fn status(&self) -> &PoolStatus {
        &self.status
    }

    /// The last connection error, when connecting is failing.
    pub fn connect_error(&self) -> Option<&Error> {
        self.cause.as_ref().map(|(e, _)| &**e)
    }

    /// A description safe to put in a response to a client: what failed, and for an
    /// unreachable database why, in [`Error::public_message`]'s words. Unlike `Display`, which
    /// is for logs, it never holds the server's address, the connection settings' names, the
    /// operating system's error text or the pool's counters.
    pub fn public_message(&self) -> String {
        let cause = self.connect_error().map(Error::public_message);
        match (self.kind, cause) {
            (PoolErrorKind::Unavailable, Some(cause)) => {
                format!("the database is unavailable: {cause}")
            }
            (PoolErrorKind::Unavailable, None) => "the database is unavailable".to_owned(),
            (PoolErrorKind::Timeout, Some(cause)) => format!(
                "no database connection within {} ms; the last attempt failed: {cause}",
                self.waited.as_millis()
            ),
            (PoolErrorKind::Timeout, None) => format!(
                "no database connection became free within {} ms",
                self.waited.as_millis()
            ),
            (PoolErrorKind::Closed, _) => "the connection pool is closed".to_owned(),
            (PoolErrorKind::Overloaded, _) => {
                "too many requests are waiting for a database connection; try again shortly"
                    .to_owned()
            }
        }
    }
}

impl fmt::Display for PoolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            PoolErrorKind::Timeout => {
                write!(
                    f,
                    "timed out after {:?} waiting for a database connection ({})",
                    self.waited, self.status
                )?;
                match &self.cause {
                    Some((e, ago)) => write!(
                        f,
                        "; the last connection attempt, {ago:.0?} ago, failed: {e}"
                    ),
                    None => f.write_str(
                        "; raise the pool's max_size or acquire_timeout, or look for callers \
                         holding connections too long",
                    ),
                }
            }
            PoolErrorKind::Unavailable => {
                f.write_str("database unavailable: ")?;
                match &self.cause {
                    Some((e, ago)) if !ago.is_zero() => {
                        write!(f, "the last connection attempt, {ago:.0?} ago, failed: {e}")?
                    }
                    Some((e, _)) => write!(f, "connecting failed: {e}")?,
                    None => f.write_str("connecting failed")?,
                }
                write!(
                    f,
                    " ({}); the pool tries again as requests come in",
                    self.status
                )
            }
            PoolErrorKind::Closed => f.write_str("the connection pool is closed"),
            PoolErrorKind::Overloaded => write!(
                f,
                "too many callers waiting for a database connection ({}); try again shortly",
                self.status
            ),
        }
    }
}

impl fmt::Debug for PoolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolError")
            .field("kind", &self.kind)
            .field("status", &self.status)
            .field("waited", &self.waited)
            .field("connect_error", &self.connect_error())
            .finish()
    }
}

impl std::error::Error for PoolError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.connect_error()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl From<PoolError> for Error {
    /// Timeout becomes [`ErrorKind::Timeout`], Unavailable [`ErrorKind::Connect`], Closed
    /// [`ErrorKind::Closed`]; the message is the pool error's.
    fn from(e: PoolError) -> Error {
        let kind = match e.kind {
            PoolErrorKind::Timeout => ErrorKind::Timeout,
            PoolErrorKind::Unavailable => ErrorKind::Connect,
            PoolErrorKind::Closed => ErrorKind::Closed,
            PoolErrorKind::Overloaded => ErrorKind::Timeout,
        };
        Error::new(kind, e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status() -> PoolStatus {
        PoolStatus {
            max_size: 4,
            size: 4,
            idle: 0,
            busy: 4,
            waiting: 7,
            ..PoolStatus::default()
        }
    }

    #[test]
    fn timeout_names_the_pool_state_and_what_to_do() {
        let e = PoolError::new(
            PoolErrorKind::Timeout,
            status(),
            Duration::from_millis(250),
            None,
        );
        let text = e.to_string();
        assert!(text.contains("timed out after 250ms"), "{text}");
        assert!(
            text.contains("4 of at most 4 connections open, 4 busy, 0 idle; 7 callers waiting"),
            "{text}"
        );
        assert!(text.contains("max_size"), "{text}");
        let driver: Error = e.into();
        assert_eq!(driver.kind(), ErrorKind::Timeout);
        assert!(driver.to_string().contains("7 callers waiting"));
    }

    #[test]
    fn unavailable_quotes_the_connect_error() {
        let cause = Arc::new(Error::new(ErrorKind::Connect, "connection refused"));
        let e = PoolError::new(
            PoolErrorKind::Unavailable,
            status(),
            Duration::ZERO,
            Some((cause.clone(), Duration::from_millis(40))),
        );
        let text = e.to_string();
        assert!(text.starts_with("database unavailable: "), "{text}");
        assert!(text.contains("40ms ago") && text.contains("connection refused"));
        assert!(std::error::Error::source(&e).is_some());
        let fresh = PoolError::new(
            PoolErrorKind::Unavailable,
            status(),
            Duration::ZERO,
            Some((cause, Duration::ZERO)),
        );
        assert!(
            fresh
                .to_string()
                .starts_with("database unavailable: connecting failed: connection refused")
        );
        assert_eq!(Error::from(fresh).kind(), ErrorKind::Connect);
    }

    #[test]
    fn the_public_message_keeps_addresses_and_counters_out() {
        let io = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let cause = Arc::new(Error::with_source(
            ErrorKind::Connect,
            "connection to server at \"10.1.2.3\", port 6543",
            io,
        ));
        let e = PoolError::new(
            PoolErrorKind::Unavailable,
            status(),
            Duration::ZERO,
            Some((cause.clone(), Duration::from_millis(40))),
        );
        assert!(e.to_string().contains("10.1.2.3"), "Display is for logs");
        assert_eq!(
            e.public_message(),
            "the database is unavailable: PostgreSQL could not be reached"
        );
        let timeout = PoolError::new(
            PoolErrorKind::Timeout,
            status(),
            Duration::from_millis(250),
            Some((cause, Duration::from_millis(40))),
        );
        let text = timeout.public_message();
        assert!(
            text.starts_with("no database connection within 250 ms"),
            "{text}"
        );
        assert!(
            !text.contains("10.1.2.3") && !text.contains("callers"),
            "{text}"
        );
    }
}
