//! The access log line and the request metrics, taken when a response body ends (or is dropped).

use super::Shared;
use super::conns::ConnState;
use crate::mount::ResponseBody;
use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

/// What the log line says about a request, gathered before its body is sent.
pub(super) struct Record {
    /// Index of the route in the metrics (a mount, the ops endpoints, or unmatched).
    pub route: usize,
    pub method: http::Method,
    pub uri: http::Uri,
    pub status: http::StatusCode,
    pub start: Instant,
}

/// A request of a connection from its head to the end of its response (or its drop).
pub(super) struct InFlight(Arc<ConnState>);

impl InFlight {
    pub(super) fn new(connection: Arc<ConnState>) -> InFlight {
        connection.request_started();
        InFlight(connection)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.request_ended();
    }
}

/// A response body that counts the bytes it hands to the connection and, when it ends or is
/// dropped (the client went away), logs the request and records it in the metrics. Streamed
/// bodies are thereby logged with their real size and full duration.
pub struct LoggedBody {
    inner: ResponseBody,
    bytes: u64,
    finished: bool,
    record: Option<(Record, Arc<Shared>)>,
    _in_flight: InFlight,
}

impl LoggedBody {
    pub(super) fn new(
        inner: ResponseBody,
        record: Record,
        shared: Arc<Shared>,
        in_flight: InFlight,
    ) -> LoggedBody {
        LoggedBody {
            inner,
            bytes: 0,
            finished: false,
            record: Some((record, shared)),
            _in_flight: in_flight,
        }
    }
}

impl Body for LoggedBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.bytes += data.len() as u64;
                }
            }
            Poll::Ready(None) => this.finished = true,
            Poll::Ready(Some(Err(_))) | Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for LoggedBody {
    fn drop(&mut self) {
        let Some((record, shared)) = self.record.take() else {
            return;
        };
        let elapsed = record.start.elapsed();
        let complete = self.finished || self.inner.is_end_stream();
        shared
            .metrics
            .record(record.route, record.status.as_u16(), elapsed);
        if shared.options.access_log {
            tracing::info!(
                target: "sluice_http::access",
                method = %record.method,
                path = record.uri.path(),
                status = record.status.as_u16(),
                bytes = self.bytes,
                duration_ms = %format_args!("{:.3}", elapsed.as_secs_f64() * 1000.0),
                complete,
                "request"
            );
        }
    }
}
