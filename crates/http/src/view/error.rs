//! The error answer of views: JSON `{"code", "message", "details", "hint"}` with a status chosen
//! from the SQLSTATE (VIEWS.md, Errors).

use crate::mount::{Response, full};
use http::{HeaderValue, StatusCode, header};
use sluice_pg::{ErrorKind, PoolError, PoolErrorKind};

/// An error answer of a view endpoint.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    /// The SQLSTATE for database errors, else a short snake_case word (`not_found`, `bad_body`).
    pub code: String,
    pub message: String,
    pub details: Option<serde_json::Value>,
    pub hint: Option<String>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code: code.to_owned(),
            message: message.into(),
            details: None,
            hint: None,
        }
    }

    pub fn with_details(mut self, details: serde_json::Value) -> ApiError {
        self.details = Some(details);
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> ApiError {
        self.hint = Some(hint.into());
        self
    }

    /// The answer for a driver error: the SQLSTATE picks the status; a lost connection is 503.
    pub fn from_pg(error: &sluice_pg::Error) -> ApiError {
        if let Some(db) = error.as_db_error() {
            let mut api = ApiError::new(status_for_sqlstate(db.code()), db.code(), db.message());
            api.details = db.detail().map(|d| serde_json::Value::String(d.to_owned()));
            api.hint = db.hint().map(str::to_owned);
            return api;
        }
        if error.is_unavailable() {
            return ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "database_unavailable",
                format!("the database is unavailable: {error}"),
            )
            .with_hint("retry later");
        }
        match error.kind() {
            ErrorKind::Conversion | ErrorKind::ParameterCount => {
                ApiError::new(StatusCode::BAD_REQUEST, "bad_request", error.to_string())
            }
            _ => ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                error.to_string(),
            ),
        }
    }

    /// The answer when no connection could be had from the pool.
    pub fn from_pool(error: &PoolError) -> ApiError {
        let code = match error.kind() {
            PoolErrorKind::Timeout => "pool_timeout",
            _ => "database_unavailable",
        };
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, code, error.to_string())
            .with_hint("retry later")
    }

    pub fn into_response(self) -> Response {
        let body = serde_json::json!({
            "code": self.code,
            "message": self.message,
            "details": self.details,
            "hint": self.hint,
        });
        let mut response = Response::new(full(body.to_string()));
        *response.status_mut() = self.status;
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        response
    }
}

/// VIEWS.md's mapping: 409 unique/foreign key, 404 undefined table/function, 403 privilege,
/// 503 connection failure or shutdown, 400 bad input, else 500.
pub fn status_for_sqlstate(code: &str) -> StatusCode {
    use sluice_pg::sqlstate::*;
    match code {
        UNIQUE_VIOLATION | FOREIGN_KEY_VIOLATION => StatusCode::CONFLICT,
        UNDEFINED_TABLE | UNDEFINED_FUNCTION => StatusCode::NOT_FOUND,
        INSUFFICIENT_PRIVILEGE => StatusCode::FORBIDDEN,
        INVALID_TEXT_REPRESENTATION
        | CHECK_VIOLATION
        | NOT_NULL_VIOLATION
        | INVALID_DATETIME_FORMAT
        | DATETIME_FIELD_OVERFLOW
        | NUMERIC_VALUE_OUT_OF_RANGE
        | STRING_DATA_RIGHT_TRUNCATION
        | INVALID_PARAMETER_VALUE => StatusCode::BAD_REQUEST,
        // Connection exceptions and the server going away (57P01-57P05), not a canceled query.
        _ if class(code) == CLASS_CONNECTION_EXCEPTION || code.starts_with("57P") => {
            StatusCode::SERVICE_UNAVAILABLE
        }
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}
