//! What the API answers: its error type, mapped to InfluxDB's statuses and JSON error shape.

use http::{HeaderValue, StatusCode, header};
use sluice_formats::encode::write_json_str;
use sluice_http::{Response, empty, full};

/// The version reported in `X-Influxdb-Version` (clients such as Telegraf only check that the
/// header is there; 1.8 is the v1 API this speaks).
pub const INFLUXDB_VERSION: &str = "1.8.10";

/// Seconds a client is asked to wait before retrying when the database is down.
const RETRY_AFTER_SECONDS: &str = "5";

/// Why a request failed; each variant knows its HTTP status and InfluxDB error code.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// Auth is configured and the request carries no accepted token.
    #[error("unauthorized access")]
    Unauthorized,
    /// A bad request other than a parse error (missing database, bad precision, bad gzip).
    #[error("{0}")]
    Invalid(String),
    /// A line of the body is not line protocol.
    #[error("unable to parse points: {0}")]
    Parse(#[from] sluice_lineproto::Error),
    /// A field's value does not fit the column it goes to.
    #[error(
        "field type conflict: input field \"{field}\" on measurement \"{measurement}\" is type {given}, already exists as type {existing}"
    )]
    TypeConflict {
        /// The measurement (table) written to.
        measurement: String,
        /// The field's key.
        field: String,
        /// The line protocol type of the value given.
        given: &'static str,
        /// The type the field already has.
        existing: &'static str,
    },
    /// The request may not write where it asks: a database or table the API does not own.
    #[error("{0}")]
    Forbidden(String),
    /// Some points were written and others rejected, or every point was rejected for what the
    /// database holds (InfluxDB's partial write; v2 prefixes its message as InfluxDB 2 does).
    #[error(
        "{}partial write: {reasons} dropped={dropped}",
        if *.v2 { "failure writing points to database: " } else { "" }
    )]
    PartialWrite {
        /// Why lines were rejected, as InfluxDB words it.
        reasons: String,
        /// How many points were dropped.
        dropped: usize,
        /// The request came through the v2 API.
        v2: bool,
    },
    /// The body (or its inflated form) is larger than the limit.
    #[error("request body is larger than the limit of {limit} bytes")]
    TooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// The body did not arrive in time.
    #[error("{0}")]
    Timeout(String),
    /// The database cannot serve (retry later), or the server has no room for the request.
    #[error("{message}")]
    Unavailable {
        /// What the client is told: what failed, never the server's address or the driver's
        /// internals.
        message: String,
        /// The full error, for the log only.
        cause: Option<String>,
    },
    /// Any other failure of the database or of Sluice.
    #[error("{message}")]
    Database {
        /// What the client is told, as for `Unavailable`.
        message: String,
        /// The full error, for the log only.
        cause: Option<String>,
    },
    /// What the request would create exists already (a bucket of that name).
    #[error("{0}")]
    Conflict(String),
    /// No such endpoint.
    #[error("not found")]
    NotFound,
    /// The endpoint exists but not with this method.
    #[error("method not allowed")]
    MethodNotAllowed,
}

impl ApiError {
    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::Invalid(_) | ApiError::Parse(_) | ApiError::TypeConflict { .. } => {
                StatusCode::BAD_REQUEST
            }
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::PartialWrite { v2: false, .. } => StatusCode::BAD_REQUEST,
            ApiError::PartialWrite { v2: true, .. } => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::Timeout(_) => StatusCode::REQUEST_TIMEOUT,
            ApiError::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Database { .. } => StatusCode::INTERNAL_SERVER_ERROR,
            ApiError::Conflict(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::NotFound => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
        }
    }

    /// The full error behind an `Unavailable` or `Database` answer, for the log: the client
    /// sees only the message.
    pub fn cause(&self) -> Option<&str> {
        match self {
            ApiError::Unavailable { cause, .. } | ApiError::Database { cause, .. } => {
                cause.as_deref()
            }
            _ => None,
        }
    }

    /// InfluxDB 2.x's error code.
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::Unauthorized => "unauthorized",
            ApiError::Invalid(_) | ApiError::Parse(_) | ApiError::TypeConflict { .. } => "invalid",
            ApiError::Forbidden(_) => "forbidden",
            ApiError::PartialWrite { v2: false, .. } => "invalid",
            ApiError::PartialWrite { v2: true, .. } => "unprocessable entity",
            ApiError::TooLarge { .. } => "request too large",
            ApiError::Timeout(_) => "request timeout",
            ApiError::Unavailable { .. } => "unavailable",
            ApiError::Database { .. } => "internal error",
            ApiError::Conflict(_) => "conflict",
            ApiError::NotFound => "not found",
            ApiError::MethodNotAllowed => "method not allowed",
        }
    }

    /// The response: `{"code": ..., "message": ...}` as InfluxDB 2.x answers, plus `"error"`
    /// with the same message, which InfluxDB 1.x clients read.
    pub fn response(&self) -> Response {
        let message = self.to_string();
        let mut body = Vec::with_capacity(message.len() * 2 + 48);
        body.extend_from_slice(b"{\"code\":");
        write_json_str(&mut body, self.code());
        body.extend_from_slice(b",\"message\":");
        write_json_str(&mut body, &message);
        body.extend_from_slice(b",\"error\":");
        write_json_str(&mut body, &message);
        body.push(b'}');
        let mut response = json_response(self.status(), body);
        let headers = response.headers_mut();
        headers.insert(
            "X-Platform-Error-Code",
            HeaderValue::from_static(self.code()),
        );
        if let Ok(value) = HeaderValue::from_str(&message.replace('\n', "; ")) {
            headers.insert("X-Influxdb-Error", value);
        }
        if matches!(self, ApiError::Unavailable { .. }) {
            headers.insert(
                header::RETRY_AFTER,
                HeaderValue::from_static(RETRY_AFTER_SECONDS),
            );
        }
        if matches!(self, ApiError::Unauthorized) {
            headers.insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"InfluxDB\""),
            );
        }
        response
    }
}

/// A response with InfluxDB's version headers.
pub fn with_version(status: StatusCode, body: sluice_http::ResponseBody) -> Response {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        "X-Influxdb-Version",
        HeaderValue::from_static(INFLUXDB_VERSION),
    );
    headers.insert("X-Influxdb-Build", HeaderValue::from_static("OSS"));
    response
}

/// A JSON response.
pub fn json_response(status: StatusCode, body: Vec<u8>) -> Response {
    let mut response = with_version(status, full(body));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// 204 No Content, what a successful write answers.
pub fn no_content() -> Response {
    with_version(StatusCode::NO_CONTENT, empty())
}

/// Maps a driver error to the API's: connection-level failures are "unavailable" (503). The
/// answer says what failed in [`sluice_pg::Error::public_message`]'s words; the full error, with
/// the server's address, is kept for the log.
pub fn from_db(error: sluice_pg::Error) -> ApiError {
    if error.is_unavailable() {
        ApiError::Unavailable {
            message: error.unavailable_message(),
            cause: Some(error.to_string()),
        }
    } else if error.is_class(sluice_pg::sqlstate::CLASS_DATA_EXCEPTION) {
        // Data exceptions: a value PostgreSQL cannot store (a NUL in a string, say).
        ApiError::Invalid(format!("PostgreSQL refused a value: {error}"))
    } else {
        ApiError::Database {
            message: format!("database error: {}", error.public_message()),
            cause: Some(error.to_string()),
        }
    }
}

/// Maps a pool error: no connection means "unavailable" (503), told as
/// [`sluice_pg::PoolError::public_message`]; the full error is kept for the log.
pub fn from_pool(error: sluice_pg::PoolError) -> ApiError {
    ApiError::Unavailable {
        message: error.public_message(),
        cause: Some(error.to_string()),
    }
}
