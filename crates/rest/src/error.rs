//! The REST API's errors in PostgREST's shape (`{"code","message","details","hint"}`): its own
//! `PGRSTxxx` request errors and PostgreSQL's errors with PostgREST's SQLSTATE-to-status table.

use http::StatusCode;
use sluice_pg::sqlstate;

/// An error answer: status, code, message, details, hint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status of the response.
    pub status: StatusCode,
    /// `PGRSTxxx` for the API's own errors, the SQLSTATE for PostgreSQL's.
    pub code: String,
    /// What went wrong, in PostgREST's words or PostgreSQL's.
    pub message: String,
    /// A string, except where PostgREST gives a structure (PGRST201's candidates).
    pub details: Option<serde_json::Value>,
    /// What to do about it, when there is something to say.
    pub hint: Option<String>,
    /// A header sent with the error, not part of the body (boxed: errors stay small).
    pub header: Option<Box<ErrorHeader>>,
}

/// The one header an error may carry besides `Content-Type`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorHeader {
    /// `WWW-Authenticate` of a 401.
    WwwAuthenticate(String),
    /// `Content-Range` of a 416 for an offset past a counted result (`*/15`).
    ContentRange(String),
}

impl ApiError {
    /// An error with a status, a code and a message, and no details or hint.
    pub fn new(status: StatusCode, code: &str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code: code.to_string(),
            message: message.into(),
            details: None,
            hint: None,
            header: None,
        }
    }

    /// The `WWW-Authenticate` challenge sent with this error.
    pub fn authenticate(mut self, challenge: String) -> ApiError {
        self.header = Some(Box::new(ErrorHeader::WwwAuthenticate(challenge)));
        self
    }

    /// The `WWW-Authenticate` challenge of this error, if any.
    pub fn www_authenticate(&self) -> Option<&str> {
        match self.header.as_deref() {
            Some(ErrorHeader::WwwAuthenticate(challenge)) => Some(challenge),
            _ => None,
        }
    }

    /// The `Content-Range` sent with this error.
    pub fn content_range(mut self, range: String) -> ApiError {
        self.header = Some(Box::new(ErrorHeader::ContentRange(range)));
        self
    }

    /// With `details` (as a string).
    pub fn details(mut self, details: impl Into<String>) -> ApiError {
        self.details = Some(serde_json::Value::String(details.into()));
        self
    }

    /// With a hint.
    pub fn hint(mut self, hint: impl Into<String>) -> ApiError {
        self.hint = Some(hint.into());
        self
    }

    /// 406 PGRST116: the single-object media type for a result of other than one row.
    pub fn not_single(details: impl Into<String>) -> ApiError {
        ApiError::new(
            StatusCode::NOT_ACCEPTABLE,
            "PGRST116",
            "Cannot coerce the result to a single JSON object",
        )
        .details(details)
    }

    /// PGRST100: a query parameter that does not parse.
    pub fn parse(message: impl Into<String>, details: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "PGRST100", message).details(details)
    }

    /// The answer for a PostgreSQL error, with PostgREST's status for its SQLSTATE.
    /// `authenticated` tells 403 from 401 for insufficient privilege.
    pub fn from_db(error: &sluice_pg::DbError, authenticated: bool) -> ApiError {
        ApiError {
            status: status_for_sqlstate(error.code(), authenticated),
            code: error.code().to_string(),
            message: error.message().to_string(),
            details: error
                .detail()
                .map(|d| serde_json::Value::String(d.to_string())),
            hint: error.hint().map(str::to_string),
            header: None,
        }
    }

    /// The answer for any driver error: the server's errors by SQLSTATE; a database that cannot
    /// be reached or was lost is PGRST000/PGRST001 (503); anything else a 500 without internals.
    pub fn from_pg(error: &sluice_pg::Error, authenticated: bool) -> ApiError {
        if let Some(db) = error.as_db_error()
            && !error.is_unavailable()
        {
            return ApiError::from_db(db, authenticated);
        }
        if error.is_unavailable() {
            // The driver's own text (host, port, the OS's error) is for the log only.
            tracing::warn!(%error, "the database became unavailable under a request");
            return ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "PGRST001",
                "Database client error. Retrying the connection.",
            )
            .details(error.public_message());
        }
        tracing::warn!(%error, "database error without a server error");
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "PGRSTX00",
            "Internal server error",
        )
    }

    /// The answer when the pool gave no connection: 504 after the acquisition timeout
    /// (PGRST003), 503 at once when the pool's queue of waiters is full (PGRSTX01, Sluice's
    /// own: PostgREST has no bound), else 503 (PGRST000).
    pub fn from_pool(error: &sluice_pg::PoolError) -> ApiError {
        match error.kind() {
            sluice_pg::PoolErrorKind::Overloaded => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "PGRSTX01",
                "Too many requests are waiting for a database connection.",
            )
            .hint("Retry after the time given in Retry-After, or raise [pool] max_waiting"),
            sluice_pg::PoolErrorKind::Timeout => ApiError::new(
                StatusCode::GATEWAY_TIMEOUT,
                "PGRST003",
                "Timed out acquiring connection from connection pool.",
            ),
            _ => {
                tracing::warn!(%error, "no database connection for a request");
                ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "PGRST000",
                    "Could not connect with the database.",
                )
                .details(error.public_message())
            }
        }
    }

    /// The JSON body.
    pub fn body(&self) -> Vec<u8> {
        let body = serde_json::json!({
            "code": self.code,
            "details": self.details,
            "hint": self.hint,
            "message": self.message,
        });
        body.to_string().into_bytes()
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status.as_u16(),
            self.code,
            self.message
        )
    }
}

impl std::error::Error for ApiError {}

/// PostgREST's table (errors.rst, "HTTP Status Codes"): a SQLSTATE to a status.
pub fn status_for_sqlstate(code: &str, authenticated: bool) -> StatusCode {
    use sqlstate::*;
    // `PTxyz`: a function's own status (`RAISE SQLSTATE 'PT406'`), 500 when xyz is not one.
    if let Some(status) = code.strip_prefix("PT") {
        return status
            .parse::<u16>()
            .ok()
            .and_then(|n| StatusCode::from_u16(n).ok())
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    }
    match code {
        FOREIGN_KEY_VIOLATION | UNIQUE_VIOLATION => return StatusCode::CONFLICT,
        READ_ONLY_SQL_TRANSACTION => return StatusCode::METHOD_NOT_ALLOWED,
        "53400" => return StatusCode::INTERNAL_SERVER_ERROR,
        UNDEFINED_FUNCTION | UNDEFINED_TABLE => return StatusCode::NOT_FOUND,
        INVALID_OBJECT_DEFINITION => return StatusCode::INTERNAL_SERVER_ERROR,
        INSUFFICIENT_PRIVILEGE if authenticated => return StatusCode::FORBIDDEN,
        INSUFFICIENT_PRIVILEGE => return StatusCode::UNAUTHORIZED,
        RAISE_EXCEPTION => return StatusCode::BAD_REQUEST,
        _ => {}
    }
    match class(code) {
        "08" | "53" => StatusCode::SERVICE_UNAVAILABLE,
        "0L" | "0P" | "28" => StatusCode::FORBIDDEN,
        "09" | "25" | "2D" | "38" | "39" | "3B" | "40" | "54" | "55" | "57" | "58" | "F0"
        | "HV" | "P0" | "XX" => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::BAD_REQUEST,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgrest_status_table() {
        let cases = [
            ("08006", false, 503),
            ("09000", false, 500),
            ("0L000", false, 403),
            ("0P000", false, 403),
            ("23503", false, 409),
            ("23505", false, 409),
            ("25006", false, 405),
            ("25001", false, 500),
            ("28P01", false, 403),
            ("2D000", false, 500),
            ("40001", false, 500),
            ("53400", false, 500),
            ("53300", false, 503),
            ("PT406", false, 406),
            ("PT402", true, 402),
            ("PTxyz", false, 500),
            ("54000", false, 500),
            ("57014", false, 500),
            ("P0001", false, 400),
            ("P0002", false, 500),
            ("XX000", false, 500),
            ("42883", false, 404),
            ("42P01", false, 404),
            ("42P17", false, 500),
            ("42501", false, 401),
            ("42501", true, 403),
            ("23502", false, 400),
            ("22P02", false, 400),
            ("42703", false, 400),
        ];
        for (code, authenticated, status) in cases {
            assert_eq!(
                status_for_sqlstate(code, authenticated).as_u16(),
                status,
                "{code}"
            );
        }
    }

    #[test]
    fn the_body_has_postgrests_four_keys() {
        let error = ApiError::parse("failed to parse filter (gt.)", "unexpected end of input")
            .hint("write column=gt.value");
        let body: serde_json::Value = serde_json::from_slice(&error.body()).unwrap_or_default();
        assert_eq!(body["code"], "PGRST100");
        assert_eq!(body["message"], "failed to parse filter (gt.)");
        assert_eq!(body["details"], "unexpected end of input");
        assert_eq!(body["hint"], "write column=gt.value");
    }
}
