//! Reading a request body once, into one buffer sized from `Content-Length`, within a limit.

use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use std::time::Duration;

/// Why a request body could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    /// The body is larger than the limit (answer 413).
    #[error("the request body is larger than the limit of {limit} bytes")]
    TooLarge { limit: usize },
    /// No chunk of the body arrived within the body timeout (answer 408).
    #[error("the request body did not arrive within {0:?}")]
    Timeout(Duration),
    /// The connection failed while the body was read.
    #[error("reading the request body: {0}")]
    Io(#[from] hyper::Error),
}

impl BodyError {
    /// The HTTP status that answers this error.
    pub fn status(&self) -> http::StatusCode {
        match self {
            BodyError::TooLarge { .. } => http::StatusCode::PAYLOAD_TOO_LARGE,
            BodyError::Timeout(_) => http::StatusCode::REQUEST_TIMEOUT,
            BodyError::Io(_) => http::StatusCode::BAD_REQUEST,
        }
    }
}

/// Reads the whole body of a request into one buffer. With a `Content-Length` the buffer is
/// allocated once at that size (and a length over `limit` fails before reading); a single-chunk
/// body is passed on without any copy.
pub async fn read_body(
    mut body: hyper::body::Incoming,
    content_length: Option<u64>,
    limit: usize,
    timeout: Duration,
) -> Result<Bytes, BodyError> {
    if let Some(length) = content_length {
        if length > limit as u64 {
            return Err(BodyError::TooLarge { limit });
        }
    }
    let mut first: Option<Bytes> = None;
    let mut buffer: Option<BytesMut> = None;
    loop {
        let frame = match tokio::time::timeout(timeout, body.frame()).await {
            Err(_) => return Err(BodyError::Timeout(timeout)),
            Ok(None) => break,
            Ok(Some(frame)) => frame?,
        };
        let Ok(data) = frame.into_data() else {
            continue; // Trailers carry nothing a gate reads.
        };
        let total = buffer.as_ref().map_or(0, BytesMut::len)
            + first.as_ref().map_or(0, Bytes::len)
            + data.len();
        if total > limit {
            return Err(BodyError::TooLarge { limit });
        }
        match (&mut buffer, first.take()) {
            (Some(buffer), _) => buffer.extend_from_slice(&data),
            (None, None) => first = Some(data),
            (None, Some(previous)) => {
                let capacity = content_length
                    .and_then(|length| usize::try_from(length).ok())
                    .unwrap_or(0)
                    .max(previous.len() + data.len());
                let mut joined = BytesMut::with_capacity(capacity);
                joined.extend_from_slice(&previous);
                joined.extend_from_slice(&data);
                buffer = Some(joined);
            }
        }
    }
    Ok(match (buffer, first) {
        (Some(buffer), _) => buffer.freeze(),
        (None, Some(first)) => first,
        (None, None) => Bytes::new(),
    })
}
