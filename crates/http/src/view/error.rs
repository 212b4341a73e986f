//! The error answer of views: JSON `{"code", "message", "details", "hint"}` with a status chosen
//! from the SQLSTATE (VIEWS.md, Errors).

use crate::mount::{Response, full};
use http::{HeaderValue, StatusCode, header};
use sluice_pg::{ErrorKind, PoolError, PoolErrorKind};

/// Marks the answer of a read whose replica had not replayed the position the request named
/// (the mount reads from the primary instead of answering with it).
#[derive(Debug, Clone, Copy)]
pub struct ReplicaBehind;

/// An error answer of a view endpoint.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The SQLSTATE for database errors, else a short snake_case word (`not_found`, `bad_body`).
    pub code: String,
    /// What went wrong, for people.
    pub message: String,
    /// More about it (PostgreSQL's detail, a JSON path).
    pub details: Option<serde_json::Value>,
    /// What to do about it.
    pub hint: Option<String>,
    /// The `WWW-Authenticate` challenge of a 401.
    pub www_authenticate: Option<Box<str>>,
}

impl ApiError {
    /// An error with a status, a code and a message.
    pub fn new(status: StatusCode, code: &str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code: code.to_owned(),
            message: message.into(),
            details: None,
            hint: None,
            www_authenticate: None,
        }
    }

    /// The same with a `WWW-Authenticate` challenge.
    pub fn authenticate(mut self, challenge: String) -> ApiError {
        self.www_authenticate = Some(challenge.into_boxed_str());
        self
    }

    /// The same with details.
    pub fn with_details(mut self, details: serde_json::Value) -> ApiError {
        self.details = Some(details);
        self
    }

    /// The same with a hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> ApiError {
        self.hint = Some(hint.into());
        self
    }

    /// The answer for a driver error: the SQLSTATE picks the status; a lost connection is 503.
    /// A server error shows the server's message, detail and hint (as PostgREST does); any
    /// other error only [`sluice_pg::Error::public_message`], never the server's address, the
    /// operating system's error text or the driver's internals, which go to the log.
    pub fn from_pg(error: &sluice_pg::Error) -> ApiError {
        if let Some(db) = error.as_db_error() {
            let mut api = ApiError::new(status_for_sqlstate(db.code()), db.code(), db.message());
            api.details = db.detail().map(|d| serde_json::Value::String(d.to_owned()));
            api.hint = db.hint().map(str::to_owned);
            return api;
        }
        if error.is_unavailable() {
            tracing::warn!(%error, "view request: the database is unavailable");
            return ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "database_unavailable",
                error.unavailable_message(),
            )
            .with_hint("retry later");
        }
        let public = error.public_message();
        match error.kind() {
            ErrorKind::Conversion | ErrorKind::ParameterCount => {
                tracing::info!(%error, "view request: a value or parameter was refused");
                ApiError::new(StatusCode::BAD_REQUEST, "bad_request", public)
            }
            _ => {
                tracing::warn!(%error, "view request failed");
                ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", public)
            }
        }
    }

    /// The answer when no connection could be had from the pool: 503 with
    /// [`PoolError::public_message`]; the full error, with the server's address and the pool's
    /// counters, goes to the log.
    pub fn from_pool(error: &PoolError) -> ApiError {
        let code = match error.kind() {
            PoolErrorKind::Timeout => "pool_timeout",
            PoolErrorKind::Overloaded => "pool_overloaded",
            _ => "database_unavailable",
        };
        tracing::warn!(%error, "view request: no database connection");
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            code,
            error.public_message(),
        )
        .with_hint("retry later")
    }

    /// The JSON answer (`code`, `message`, `details`, `hint`) with its status.
    pub fn into_response(self) -> Response {
        let body = serde_json::json!({
            "code": self.code,
            "message": self.message,
            "details": self.details,
            "hint": self.hint,
        });
        let mut response = Response::new(full(body.to_string()));
        *response.status_mut() = self.status;
        if self.code == crate::view::read::NOT_REPLAYED {
            response.extensions_mut().insert(ReplicaBehind);
        }
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        if let Some(value) = self
            .www_authenticate
            .and_then(|c| HeaderValue::from_str(&c).ok())
        {
            headers.insert(header::WWW_AUTHENTICATE, value);
        }
        response
    }
}

/// The status of a database error, the one place views map SQLSTATEs (VIEWS.md's mapping, with
/// Sluice's reading of "400 bad input": what the request's content caused is the client's
/// error, so Telegraf-style clients do not retry it forever):
/// - 409: a duplicate or conflicting row (unique, foreign key, exclusion, restrict);
/// - 404 undefined table or function, 403 insufficient privilege;
/// - 413: a value too large for PostgreSQL (54000: row or index entry too big);
/// - 400: any other data exception (class 22: a bad number or date, a NUL in text, a division
///   by zero), integrity violation (class 23: NOT NULL, CHECK) or program limit (class 54);
/// - 503: the database unavailable (`sluice_pg::sqlstate::is_unavailable`: a connection
///   exception, class 08, the server going away or starting up, 57P01-57P05, or out of
///   connection slots, 53300);
/// - 500: anything else (the view's SQL or the server at fault).
pub fn status_for_sqlstate(code: &str) -> StatusCode {
    use sluice_pg::sqlstate::*;
    if is_unavailable(code) {
        return StatusCode::SERVICE_UNAVAILABLE;
    }
    match code {
        UNIQUE_VIOLATION | FOREIGN_KEY_VIOLATION | EXCLUSION_VIOLATION | RESTRICT_VIOLATION => {
            return StatusCode::CONFLICT;
        }
        UNDEFINED_TABLE | UNDEFINED_FUNCTION => return StatusCode::NOT_FOUND,
        INSUFFICIENT_PRIVILEGE => return StatusCode::FORBIDDEN,
        PROGRAM_LIMIT_EXCEEDED => return StatusCode::PAYLOAD_TOO_LARGE,
        _ => {}
    }
    match class(code) {
        CLASS_DATA_EXCEPTION
        | CLASS_INTEGRITY_CONSTRAINT_VIOLATION
        | CLASS_PROGRAM_LIMIT_EXCEEDED => StatusCode::BAD_REQUEST,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_request_caused_is_4xx_and_server_faults_5xx() {
        let cases = [
            ("23505", 409),
            ("23503", 409),
            ("23P01", 409),
            ("23001", 409),
            ("23502", 400),
            ("23514", 400),
            ("22P02", 400),
            ("22021", 400),
            ("22012", 400),
            ("22001", 400),
            ("54000", 413),
            ("54011", 400),
            ("54023", 400),
            ("42P01", 404),
            ("42883", 404),
            ("42501", 403),
            ("08006", 503),
            ("57P01", 503),
            ("57P03", 503),
            ("57P05", 503),
            ("53300", 503),
            ("57014", 500),
            ("42601", 500),
            ("XX000", 500),
            ("53200", 500),
            ("", 500),
            ("2", 500),
        ];
        for (code, status) in cases {
            assert_eq!(status_for_sqlstate(code).as_u16(), status, "{code}");
        }
    }
}
