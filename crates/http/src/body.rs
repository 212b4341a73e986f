//! Reading a request body within a limit and a timeout: frame by frame (for streaming), or once
//! into one buffer sized from `Content-Length`.

use crate::budget::{Busy, MemoryBudget, Reservation};
use crate::server::conns::ConnState;
use bytes::{Bytes, BytesMut};
use http_body::Body as _;
use http_body_util::BodyExt;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Why a request body could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    /// The body is larger than the limit (answer 413).
    #[error("the request body is larger than the limit of {limit} bytes")]
    TooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// The body arrived too slowly, or not whole in time (answer 408).
    #[error("{0}")]
    Timeout(Slow),
    /// The connection failed while the body was read.
    #[error("reading the request body: {0}")]
    Io(#[from] hyper::Error),
    /// The server's budget of body memory is spent (answer 503 with `Retry-After`).
    #[error("{0}")]
    Busy(#[from] Busy),
}

/// How a body was too slow.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Slow {
    /// No data arrived for the body timeout.
    #[error("the request body did not arrive within {0:?}: no data for that long")]
    Idle(Duration),
    /// The body arrived slower than the minimum data rate, after the grace period.
    #[error(
        "the request body arrived at {rate} bytes/s ({read} bytes in {waited:?}), under the \
         minimum of {min_rate} bytes/s"
    )]
    Rate {
        /// The rate it came at, bytes per second of waiting.
        rate: u64,
        /// Bytes read so far.
        read: u64,
        /// Time spent waiting for them.
        waited: Duration,
        /// The least rate allowed.
        min_rate: u64,
    },
    /// The whole request was not read within the request timeout.
    #[error("the request body was not read whole within the request timeout of {0:?}")]
    Deadline(Duration),
    /// The server needed the connection's slot for a client that makes progress.
    #[error(
        "the request body arrived too slowly while the server was at its connection limit; \
         the connection was closed for another client"
    )]
    Evicted,
}

impl BodyError {
    /// The HTTP status that answers this error.
    pub fn status(&self) -> http::StatusCode {
        match self {
            BodyError::TooLarge { .. } => http::StatusCode::PAYLOAD_TOO_LARGE,
            BodyError::Timeout(_) => http::StatusCode::REQUEST_TIMEOUT,
            BodyError::Io(_) => http::StatusCode::BAD_REQUEST,
            BodyError::Busy(_) => http::StatusCode::SERVICE_UNAVAILABLE,
        }
    }
}

/// The rules for the bodies of one server's requests, besides the limit and chunk timeout of
/// [`crate::RequestContext`].
#[derive(Debug, Clone)]
pub struct BodyRules {
    /// Least average rate of a body, in bytes per second of waiting for it (0: none).
    pub min_rate: u64,
    /// Waiting time before the rate is enforced.
    pub grace: Duration,
    /// A request's body must be read whole within this of the request's start.
    pub request_timeout: Duration,
    /// The budget of body bytes in memory, when there is one.
    pub budget: Option<Arc<MemoryBudget>>,
}

/// What a body reader learns from the server about the request it reads.
#[derive(Debug, Clone)]
pub(crate) struct RequestScope {
    pub rules: Arc<BodyRules>,
    pub connection: Option<Arc<ConnState>>,
    pub started: Instant,
}

tokio::task_local! {
    /// Set by the server around each request's answer, so every body reader made while
    /// answering it (whatever the gate) follows the server's rules.
    pub(crate) static SCOPE: RequestScope;
}

/// A request body read frame by frame within the limit and the timeouts: the one place they are
/// checked, whether the body is gathered whole ([`read_body`]) or streamed.
///
/// Within a server ([`crate::run`]), it also enforces the minimum data rate after its grace,
/// the request timeout, the connection cap's eviction of slow bodies, and charges the bytes it
/// hands out to the memory budget: [`BodyReader::frame`]'s frames and [`read_body`]'s buffer
/// keep their reservation until they are dropped.
#[derive(Debug)]
pub struct BodyReader {
    body: hyper::body::Incoming,
    limit: usize,
    timeout: Duration,
    scope: Option<RequestScope>,
    /// Bytes read so far.
    read: usize,
    /// Time spent waiting for data.
    waited: Duration,
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
            scope: SCOPE.try_with(RequestScope::clone).ok(),
            read: 0,
            waited: Duration::ZERO,
            done: false,
        })
    }

    /// The next data frame, `None` at the end, charged to the memory budget until dropped.
    /// Each frame must arrive within the timeouts, and the frames together stay within the
    /// limit.
    pub async fn frame(&mut self) -> Result<Option<Bytes>, BodyError> {
        let Some(data) = self.next_data().await? else {
            return Ok(None);
        };
        match self.budget() {
            None => Ok(Some(data)),
            Some(budget) => match budget.reserve(data.len()).await {
                Ok(reservation) => Ok(Some(reservation.attach(data))),
                Err(busy) => Err(self.failed(BodyError::Busy(busy))),
            },
        }
    }

    fn budget(&self) -> Option<Arc<MemoryBudget>> {
        self.scope.as_ref()?.rules.budget.clone()
    }

    /// The next data frame, uncharged.
    async fn next_data(&mut self) -> Result<Option<Bytes>, BodyError> {
        while !self.done {
            // Data already here (the common case of a fast client) needs no timers.
            let ready = std::future::poll_fn(|cx| {
                std::task::Poll::Ready(match Pin::new(&mut self.body).poll_frame(cx) {
                    std::task::Poll::Ready(frame) => Some(frame),
                    std::task::Poll::Pending => None,
                })
            })
            .await;
            let frame = match ready {
                Some(frame) => frame,
                None => match self.wait_for_frame().await {
                    Ok(frame) => frame,
                    Err(error) => return Err(self.failed(error)),
                },
            };
            let frame = match frame {
                None => break,
                Some(Err(e)) => return Err(self.failed(BodyError::Io(e))),
                Some(Ok(frame)) => frame,
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

    /// Waits for the next frame within the timeouts, the rate and the connection's eviction.
    async fn wait_for_frame(
        &mut self,
    ) -> Result<Option<Result<http_body::Frame<Bytes>, hyper::Error>>, BodyError> {
        let (wait, why) = self.allowed_wait();
        let connection = self.scope.as_ref().and_then(|s| s.connection.clone());
        let started = Instant::now();
        if let Some(connection) = &connection {
            connection.body_wait_started();
        }
        let evicted = async {
            match &connection {
                Some(connection) => connection.evicted().await,
                None => std::future::pending().await,
            }
        };
        let outcome = tokio::select! {
            biased;
            frame = self.body.frame() => Ok(frame),
            () = tokio::time::sleep(wait) => Err(why),
            () = evicted => Err(Slow::Evicted),
        };
        self.waited += started.elapsed();
        if let Some(connection) = &connection {
            connection.body_wait_ended(self.read as u64, self.waited);
        }
        match outcome {
            Ok(frame) => Ok(frame),
            Err(Slow::Rate { .. }) => Err(BodyError::Timeout(self.slow())),
            Err(why) => Err(BodyError::Timeout(why)),
        }
    }

    /// How long the next wait for data may last, and what it is when it runs out: the chunk
    /// timeout, the time left before the request timeout, or before the average rate since
    /// the grace period would drop under the minimum.
    fn allowed_wait(&self) -> (Duration, Slow) {
        let mut wait = (self.timeout, Slow::Idle(self.timeout));
        let Some(scope) = &self.scope else {
            return wait;
        };
        let rules = &scope.rules;
        let deadline = scope.started + rules.request_timeout;
        let left = deadline.saturating_duration_since(Instant::now());
        if left < wait.0 {
            wait = (left, Slow::Deadline(rules.request_timeout));
        }
        if rules.min_rate > 0 {
            let earned = Duration::from_secs_f64(self.read as f64 / rules.min_rate as f64);
            let left = rules.grace.max(earned).saturating_sub(self.waited);
            if left < wait.0 {
                wait = (left, self.slow());
            }
        }
        wait
    }

    fn slow(&self) -> Slow {
        let min_rate = self.scope.as_ref().map_or(0, |s| s.rules.min_rate);
        let seconds = self.waited.as_secs_f64().max(1e-3);
        Slow::Rate {
            rate: (self.read as f64 / seconds) as u64,
            read: self.read as u64,
            waited: self.waited,
            min_rate,
        }
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

    /// Reads and drops the rest of the body (within the limit and the timeouts), so an answer
    /// sent before the end of the body reaches a client that is still sending it.
    pub async fn discard_rest(&mut self) {
        while let Ok(Some(_)) = self.next_data().await {}
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
    /// once at `content_length` when given; a body of one frame is passed on as is. Within a
    /// server with a memory budget, the buffer is reserved before it is allocated (the whole
    /// `Content-Length` at once, else as it grows) and keeps its reservation until dropped.
    pub async fn collect(
        mut self,
        first: Vec<Bytes>,
        content_length: Option<u64>,
    ) -> Result<Bytes, BodyError> {
        let capacity = content_length
            .and_then(|length| usize::try_from(length).ok())
            .unwrap_or(0)
            .min(self.limit);
        let budget = self.budget();
        let mut reservation = Reservation::default();
        if let Some(budget) = &budget {
            reservation = budget
                .reserve(capacity)
                .await
                .map_err(|busy| self.failed(BodyError::Busy(busy)))?;
        }
        let mut frames = first.into_iter();
        let mut single: Option<Bytes> = None;
        let mut buffer: Option<BytesMut> = None;
        let mut held = 0usize;
        loop {
            let data = match frames.next() {
                Some(data) => data,
                None => match self.next_data().await? {
                    Some(data) => data,
                    None => break,
                },
            };
            held += data.len();
            if let Some(budget) = &budget
                && held > reservation.bytes()
            {
                budget
                    .grow(&mut reservation, held)
                    .await
                    .map_err(|busy| self.failed(BodyError::Busy(busy)))?;
            }
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
        let body = match (buffer, single) {
            (Some(buffer), _) => buffer.freeze(),
            (None, Some(single)) => single,
            (None, None) => Bytes::new(),
        };
        Ok(match budget {
            Some(_) if !body.is_empty() => reservation.attach(body),
            _ => body,
        })
    }
}
