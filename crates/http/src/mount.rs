//! The interface between the server and what answers requests: views, the Influx write API, ops.

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full, combinators::BoxBody};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// A request as the server hands it to a mount: the body is read (or streamed) by the mount.
pub type Request = http::Request<hyper::body::Incoming>;

/// Response bodies are boxed so a mount can answer whole (`full`) or stream chunks.
pub type ResponseBody = BoxBody<Bytes, std::io::Error>;

/// A response as a mount returns it.
pub type Response = http::Response<ResponseBody>;

/// What a mount's `call` returns.
pub type MountFuture = Pin<Box<dyn Future<Output = Response> + Send + 'static>>;

/// Something that answers the requests under one or more URL prefixes.
pub trait Mount: Send + Sync + 'static {
    /// Answers `request`; `context` tells where the mount sits and the server's limits. Errors
    /// are answered as responses (each gate has its own error shape), never as panics.
    fn call(self: Arc<Self>, request: Request, context: RequestContext) -> MountFuture;
}

/// Per-request facts from the server.
#[derive(Debug, Clone)]
pub struct RequestContext {
    /// The prefix the request matched (`/films`; empty for a root mount).
    pub prefix: Arc<str>,
    /// Largest request body accepted, in bytes; beyond it the answer is 413.
    pub body_limit: usize,
    /// Longest wait for the next chunk of a request body; beyond it the answer is 408.
    pub body_timeout: Duration,
}

impl RequestContext {
    /// The part of `path` after the mount's prefix (`/films/1/tags` under `/films` is `/1/tags`).
    pub fn rest<'a>(&self, path: &'a str) -> &'a str {
        path.get(self.prefix.len()..).unwrap_or("")
    }
}

/// A whole body from bytes already in hand.
pub fn full(bytes: impl Into<Bytes>) -> ResponseBody {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed()
}

/// An empty body.
pub fn empty() -> ResponseBody {
    Empty::new().map_err(|never| match never {}).boxed()
}
