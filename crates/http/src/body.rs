//! Reading a request body within a limit and a timeout: frame by frame (for streaming), or once
//! into one buffer sized from `Content-Length`.

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

/// A request body read frame by frame within the limit and the timeout: the one place both
/// are checked, whether the body is gathered whole ([`read_body`]) or streamed.
#[derive(Debug)]
pub struct BodyReader {
    body: hyper::body::Incoming,
    limit: usize,
    timeout: Duration,
    /// Bytes read so far.
    read: usize,
    done: bool,
}

impl BodyReader {
    /// Starts reading `body`; a `Content-Length` over `limit` fails now, before reading.
    pub fn new(
        body: hyper::body::Incoming,
        content_length: Option<u64>,
        limit: usize,
        timeout: Duration,
    ) -> Result<BodyReader, BodyError> {
        if content_length.is_some_and(|length| length > limit as u64) {
            return Err(BodyError::TooLarge { limit });
        }
        Ok(BodyReader {
            body,
            limit,
            timeout,
            read: 0,
            done: false,
        })
    }

    /// The next data frame, `None` at the end. Each frame must arrive within the timeout, and
    /// the frames together stay within the limit.
    pub async fn frame(&mut self) -> Result<Option<Bytes>, BodyError> {
        while !self.done {
            let frame = match tokio::time::timeout(self.timeout, self.body.frame()).await {
                Err(_) => return Err(self.failed(BodyError::Timeout(self.timeout))),
                Ok(None) => break,
                Ok(Some(Err(e))) => return Err(self.failed(BodyError::Io(e))),
                Ok(Some(Ok(frame))) => frame,
            };
            let Ok(data) = frame.into_data() else {
                continue; // Trailers carry nothing a gate reads.
            };
            self.read += data.len();
            if self.read > self.limit {
                return Err(self.failed(BodyError::TooLarge { limit: self.limit }));
            }
            return Ok(Some(data));
        }
        self.done = true;
        Ok(None)
    }

    /// A body that failed is not read further (nor waited for again).
    fn failed(&mut self, error: BodyError) -> BodyError {
        self.done = true;
        error
    }

    /// The bytes read so far.
    pub fn read(&self) -> usize {
        self.read
    }

    /// Reads and drops the rest of the body (within the limit and the timeout), so an answer
    /// sent before the end of the body reaches a client that is still sending it.
    pub async fn discard_rest(&mut self) {
        while let Ok(Some(_)) = self.frame().await {}
    }
}

/// Reads the whole body of a request into one buffer. With a `Content-Length` the buffer is
/// allocated once at that size (and a length over `limit` fails before reading); a single-chunk
/// body is passed on without any copy.
pub async fn read_body(
    body: hyper::body::Incoming,
    content_length: Option<u64>,
    limit: usize,
    timeout: Duration,
) -> Result<Bytes, BodyError> {
    BodyReader::new(body, content_length, limit, timeout)?
        .collect(Vec::new(), content_length)
        .await
}

impl BodyReader {
    /// The rest of the body after the frames already read (`first`), in one buffer: allocated
    /// once at `content_length` when given; a body of one frame is passed on as is.
    pub async fn collect(
        mut self,
        first: Vec<Bytes>,
        content_length: Option<u64>,
    ) -> Result<Bytes, BodyError> {
        let capacity = content_length
            .and_then(|length| usize::try_from(length).ok())
            .unwrap_or(0);
        let mut frames = first.into_iter();
        let mut single: Option<Bytes> = None;
        let mut buffer: Option<BytesMut> = None;
        loop {
            let data = match frames.next() {
                Some(data) => data,
                None => match self.frame().await? {
                    Some(data) => data,
                    None => break,
                },
            };
            match (&mut buffer, single.take()) {
                (Some(buffer), _) => buffer.extend_from_slice(&data),
                (None, None) => single = Some(data),
                (None, Some(previous)) => {
                    let mut joined =
                        BytesMut::with_capacity(capacity.max(previous.len() + data.len()));
                    joined.extend_from_slice(&previous);
                    joined.extend_from_slice(&data);
                    buffer = Some(joined);
                }
            }
        }
        Ok(match (buffer, single) {
            (Some(buffer), _) => buffer.freeze(),
            (None, Some(single)) => single,
            (None, None) => Bytes::new(),
        })
    }
}
