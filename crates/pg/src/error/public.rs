//! What an error may tell a gate's client: what failed, with the SQLSTATE, never the host, port,
//! user, database, file paths or the operating system's error text.

use super::{Error, ErrorKind, sqlstate};

impl Error {
    /// A description of this error safe to put in a response to a client (an HTTP body, a Redis
    /// reply): what failed and, for the server's errors, the SQLSTATE. Unlike `Display`, which
    /// is for logs, it never holds the server's address, the user or database of the
    /// connection settings, a file path or the operating system's error text. An error the
    /// server raised while serving a statement keeps the server's own message (as PostgREST
    /// shows it), which names the application's objects, not Sluice's settings.
    pub fn public_message(&self) -> String {
        if let Some(db) = self.as_db_error() {
            let code = db.code();
            let what = match code {
                sqlstate::INVALID_CATALOG_NAME => {
                    "the database of the connection settings does not exist"
                }
                sqlstate::CANNOT_CONNECT_NOW => "PostgreSQL is starting up or shutting down",
                sqlstate::TOO_MANY_CONNECTIONS => "PostgreSQL has no free connection slot",
                sqlstate::ADMIN_SHUTDOWN
                | sqlstate::CRASH_SHUTDOWN
                | sqlstate::DATABASE_DROPPED
                | sqlstate::IDLE_SESSION_TIMEOUT => "PostgreSQL ended the session",
                _ if sqlstate::class(code) == sqlstate::CLASS_INVALID_AUTHORIZATION => {
                    "PostgreSQL refused the login"
                }
                _ if sqlstate::class(code) == sqlstate::CLASS_CONNECTION_EXCEPTION => {
                    "the connection to PostgreSQL failed"
                }
                _ => return format!("{} (SQLSTATE {code})", db.message()),
            };
            return format!("{what} (SQLSTATE {code})");
        }
        let what = match self.kind() {
            ErrorKind::Closed => "the connection to PostgreSQL was lost",
            ErrorKind::Connect => "PostgreSQL could not be reached",
            ErrorKind::Timeout => "PostgreSQL did not answer in time",
            ErrorKind::Auth => "authenticating with PostgreSQL failed",
            ErrorKind::Tls => "the TLS connection to PostgreSQL failed",
            ErrorKind::Protocol => "PostgreSQL sent a message out of protocol",
            ErrorKind::Encode => "a statement could not be encoded for PostgreSQL",
            ErrorKind::Conversion => {
                "a value could not be converted to or from its PostgreSQL type"
            }
            ErrorKind::ParameterCount => "the statement was given the wrong number of parameters",
            ErrorKind::RowCount => "the statement returned an unexpected number of rows",
            ErrorKind::ColumnNotFound => "the statement did not return an expected column",
            ErrorKind::Config => "the database connection settings are invalid",
            ErrorKind::RolledBack => "the transaction was rolled back",
            ErrorKind::PipelineAborted => "an earlier statement of the batch failed",
            ErrorKind::Usage => "the database driver was misused",
            ErrorKind::NotReplayed => "the replica has not replayed the requested position",
            ErrorKind::Db => "PostgreSQL reported an error",
        };
        what.to_owned()
    }

    /// [`Error::public_message`] for an error that left the database unreachable
    /// ([`Error::is_unavailable`]), worded as [`crate::PoolError::public_message`] words an
    /// unavailable pool, so every gate says it alike.
    pub fn unavailable_message(&self) -> String {
        format!("the database is unavailable: {}", self.public_message())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server_error(code: &str, message: &str) -> Error {
        super::super::server_error_for_test("FATAL", code, message)
    }

    #[test]
    fn an_unreachable_database_is_worded_as_the_pools() {
        let error = Error::new(
            ErrorKind::Connect,
            "connecting to 10.1.2.3:5432: Connection refused (os error 111)",
        );
        assert_eq!(
            error.unavailable_message(),
            "the database is unavailable: PostgreSQL could not be reached"
        );
    }

    #[test]
    fn connection_failures_say_what_failed_without_names_or_addresses() {
        let cases = [
            (
                "28P01",
                "password authentication failed for user \"app\"",
                "PostgreSQL refused the login (SQLSTATE 28P01)",
            ),
            (
                "3D000",
                "database \"appdb\" does not exist",
                "the database of the connection settings does not exist (SQLSTATE 3D000)",
            ),
            (
                "57P03",
                "the database system is starting up",
                "PostgreSQL is starting up or shutting down (SQLSTATE 57P03)",
            ),
            (
                "57P01",
                "terminating connection due to administrator command",
                "PostgreSQL ended the session (SQLSTATE 57P01)",
            ),
        ];
        for (code, message, public) in cases {
            let e = server_error(code, message).context("connection to server at \"h\", port 1");
            assert_eq!(e.public_message(), public);
            assert!(e.to_string().contains(message), "Display keeps it for logs");
        }
        let io = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let refused = Error::with_source(ErrorKind::Connect, "connection to 10.0.0.1:5432", io);
        assert_eq!(refused.public_message(), "PostgreSQL could not be reached");
        let reset = Error::io(std::io::Error::from(std::io::ErrorKind::ConnectionReset))
            .context("pipeline statement 0");
        assert_eq!(
            reset.public_message(),
            "the connection to PostgreSQL was lost"
        );
    }

    #[test]
    fn statement_errors_keep_the_servers_message() {
        let e = server_error("P0001", "no such account");
        assert_eq!(e.public_message(), "no such account (SQLSTATE P0001)");
    }
}
