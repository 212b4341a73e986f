//! The driver's error type: one opaque `Error` with a kind, the server's fields, and a source.

mod db;
mod public;
pub mod sqlstate;

pub use db::{DbError, ErrorPosition, Severity};

use crate::protocol::DecodeError;
use crate::protocol::frontend::EncodeError;
use crate::types::ConversionError;
use std::fmt;

/// What kind of failure an [`Error`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The server reported an error (see [`Error::as_db_error`]); the connection is still usable.
    Db,
    /// The connection is closed or broken (I/O error, unexpected end of stream); it cannot be used
    /// again.
    Closed,
    /// Connecting failed before the session started (network, TLS handshake, refused).
    Connect,
    /// Authentication failed or needs something the configuration does not have.
    Auth,
    /// TLS was required but could not be established, or the certificate was rejected.
    Tls,
    /// The server sent bytes that are not valid protocol; the connection is closed.
    Protocol,
    /// A message could not be encoded (NUL in a string, too many parameters, too long).
    Encode,
    /// A value could not be converted to or from its PostgreSQL type.
    Conversion,
    /// The number of parameters does not match the statement.
    ParameterCount,
    /// A query expected exactly one row (or at most one) and got another number.
    RowCount,
    /// A column index or name does not exist in the result.
    ColumnNotFound,
    /// The configuration is invalid.
    Config,
    /// The operation did not finish in time (connect timeout).
    Timeout,
    /// COMMIT found the transaction failed and rolled it back: nothing was committed.
    RolledBack,
    /// A pipeline statement did not take effect because another statement of the same
    /// all-or-nothing pipeline failed.
    PipelineAborted,
    /// An operation was used in a state that does not allow it (e.g. a COPY statement through
    /// `query`).
    Usage,
    /// A read guarded by a WAL position ran on a server that had not replayed that far (see
    /// `Multiplexer::query_replayed`): nothing was wrong with the server or the statement.
    NotReplayed,
}

/// An error from the driver. Cheap to move (one box); never produced by a panic.
pub struct Error(Box<Inner>);

struct Inner {
    kind: ErrorKind,
    message: Option<String>,
    db: Option<DbError>,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl Error {
    fn build(
        kind: ErrorKind,
        message: Option<String>,
        db: Option<DbError>,
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Error {
        Error(Box::new(Inner {
            kind,
            message,
            db,
            source,
        }))
    }

    /// An error of `kind` described by `message`.
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error::build(kind, Some(message.into()), None, None)
    }

    /// An error of `kind` described by `message`, caused by `source`.
    pub(crate) fn with_source(
        kind: ErrorKind,
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Error {
        Error::build(kind, Some(message.into()), None, Some(Box::new(source)))
    }

    pub(crate) fn db(db: DbError) -> Error {
        Error::build(ErrorKind::Db, None, Some(db), None)
    }

    pub(crate) fn io(e: std::io::Error) -> Error {
        Error::with_source(ErrorKind::Closed, "connection to server lost", e)
    }

    pub(crate) fn closed() -> Error {
        Error::new(
            ErrorKind::Closed,
            "server closed the connection unexpectedly; it probably terminated abnormally \
             before or while processing the request",
        )
    }

    pub(crate) fn unexpected(message: &'static str, tag: u8) -> Error {
        Error::new(
            ErrorKind::Protocol,
            format!(
                "unexpected message '{}' from the server {message}",
                tag.escape_ascii()
            ),
        )
    }

    /// What kind of error this is.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// The server's error, with every ErrorResponse field, when the server reported one.
    pub fn as_db_error(&self) -> Option<&DbError> {
        self.0.db.as_ref()
    }

    /// The SQLSTATE code of a server error (e.g. `23505` for a unique violation).
    pub fn code(&self) -> Option<&str> {
        self.0.db.as_ref().map(DbError::code)
    }

    /// Whether the server reported this error.
    pub fn is_db(&self) -> bool {
        self.0.kind == ErrorKind::Db
    }

    /// Whether the connection is unusable after this error (closed, broken, protocol error).
    pub fn is_closed(&self) -> bool {
        matches!(self.0.kind, ErrorKind::Closed | ErrorKind::Protocol)
    }

    /// Whether this is a timeout.
    pub fn is_timeout(&self) -> bool {
        self.0.kind == ErrorKind::Timeout
    }

    /// Whether the server reported exactly this SQLSTATE (see [`sqlstate`]).
    pub fn is_code(&self, code: &str) -> bool {
        self.code() == Some(code)
    }

    /// Whether the server reported a SQLSTATE of this class (its first two characters, see the
    /// `CLASS_*` constants of [`sqlstate`]).
    pub fn is_class(&self, class: &str) -> bool {
        self.code()
            .is_some_and(|code| sqlstate::class(code) == class)
    }

    /// Whether the session is gone: the connection closed or broke, or the server ended it
    /// ([`sqlstate::is_connection_lost`]: a connection exception, `08xxx`, or a shutdown,
    /// `57P01`/`57P02`/`57P04`/`57P05`). Work in flight on it may or may not have been
    /// committed.
    pub fn is_connection_lost(&self) -> bool {
        self.is_closed() || self.code().is_some_and(sqlstate::is_connection_lost)
    }

    /// Whether the database cannot serve right now, so a client should come back later (HTTP
    /// 503): the session was lost, connecting failed or timed out, or the server is starting
    /// up or has no connection slot left ([`sqlstate::is_unavailable`]).
    pub fn is_unavailable(&self) -> bool {
        self.is_closed()
            || matches!(
                self.0.kind,
                ErrorKind::Connect | ErrorKind::Timeout | ErrorKind::Auth | ErrorKind::Tls
            )
            || self.code().is_some_and(sqlstate::is_unavailable)
    }

    /// Whether running the same transaction again may well succeed: it lost a serialization
    /// race (`40001`) or a deadlock (`40P01`).
    pub fn is_retryable(&self) -> bool {
        self.is_code(sqlstate::SERIALIZATION_FAILURE) || self.is_code(sqlstate::DEADLOCK_DETECTED)
    }

    /// Adds context in front of the message (e.g. which host a connection attempt was for).
    pub(crate) fn context(mut self, context: impl fmt::Display) -> Error {
        self.0.message = Some(match self.0.message.take() {
            Some(m) => format!("{context}: {m}"),
            None => context.to_string(),
        });
        self
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Error");
        d.field("kind", &self.0.kind);
        if let Some(m) = &self.0.message {
            d.field("message", m);
        }
        if let Some(db) = &self.0.db {
            d.field("db", db);
        }
        if let Some(s) = &self.0.source {
            d.field("source", s);
        }
        d.finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut sep = "";
        if let Some(m) = &self.0.message {
            f.write_str(m)?;
            sep = ": ";
        }
        if let Some(db) = &self.0.db {
            write!(f, "{sep}{db}")?;
        } else if let Some(s) = &self.0.source {
            write!(f, "{sep}{s}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.0.db {
            Some(db) => Some(db),
            None => self
                .0
                .source
                .as_deref()
                .map(|s| s as &(dyn std::error::Error + 'static)),
        }
    }
}

impl From<DecodeError> for Error {
    fn from(e: DecodeError) -> Error {
        Error::build(ErrorKind::Protocol, None, None, Some(Box::new(e)))
    }
}

impl From<EncodeError> for Error {
    fn from(e: EncodeError) -> Error {
        Error::build(ErrorKind::Encode, None, None, Some(Box::new(e)))
    }
}

impl From<ConversionError> for Error {
    fn from(e: ConversionError) -> Error {
        Error::build(ErrorKind::Conversion, None, None, Some(Box::new(e)))
    }
}

impl From<crate::config::ConfigError> for Error {
    fn from(e: crate::config::ConfigError) -> Error {
        Error::build(ErrorKind::Config, None, None, Some(Box::new(e)))
    }
}

/// The driver's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A server's error as the driver reads it off the wire, for the tests of this module's files.
#[cfg(test)]
pub(crate) fn server_error_for_test(severity: &str, code: &str, message: &str) -> Error {
    use crate::protocol::backend::{Message, parse};
    let body = format!("S{severity}\0V{severity}\0C{code}\0M{message}\0\0");
    let mut bytes = vec![b'E'];
    bytes.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
    bytes.extend_from_slice(body.as_bytes());
    let Ok(Some((Message::ErrorResponse(fields), _))) = parse(&bytes) else {
        panic!("not an error")
    };
    Error::db(DbError::from_fields(&fields))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server_error(code: &str) -> Error {
        server_error_for_test("ERROR", code, "m")
    }

    #[test]
    fn codes_and_classes() {
        let e = server_error(sqlstate::UNIQUE_VIOLATION);
        assert!(e.is_code("23505"));
        assert!(e.is_class(sqlstate::CLASS_INTEGRITY_CONSTRAINT_VIOLATION));
        assert!(!e.is_class(sqlstate::CLASS_DATA_EXCEPTION));
        assert!(!e.is_unavailable() && !e.is_connection_lost() && !e.is_retryable());
        assert_eq!(sqlstate::class("57P01"), "57");
        assert_eq!(sqlstate::class("5"), "5");
    }

    #[test]
    fn what_counts_as_down_lost_and_retryable() {
        for code in ["08006", "57P01", "57P02"] {
            let e = server_error(code);
            assert!(e.is_connection_lost() && e.is_unavailable(), "{code}");
        }
        for code in ["57P03", "53300"] {
            let e = server_error(code);
            assert!(!e.is_connection_lost() && e.is_unavailable(), "{code}");
        }
        let canceled = server_error(sqlstate::QUERY_CANCELED);
        assert!(!canceled.is_unavailable());
        for code in ["40001", "40P01"] {
            assert!(server_error(code).is_retryable(), "{code}");
        }
        assert!(Error::closed().is_connection_lost());
        let refused = Error::new(ErrorKind::Connect, "connection refused");
        assert!(refused.is_unavailable() && !refused.is_connection_lost());
    }
}
