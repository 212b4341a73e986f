//! The HTTP server loop: accepts connections within a cap, routes each request to the mount of its prefix.
//!
//! Limits and what happens at them:
//! - **Slow headers.** A request head must arrive within [`ServerOptions::header_timeout`], else
//!   the connection is closed without an answer. The same clock runs while a keep-alive
//!   connection waits for its next request, so it is also the idle timeout of keep-alive.
//! - **Bodies.** A `Content-Length` over [`ServerOptions::body_limit`] is answered 413 before a
//!   mount sees the request; mounts read bodies with [`crate::read_body`] within the limit and
//!   [`ServerOptions::body_timeout`] that [`RequestContext`] carries (413 / 408).
//! - **Connections.** At most [`ServerOptions::max_connections`] connections are served at once.
//!   At the cap the server stops accepting: new connections wait in the kernel's listen backlog
//!   (they are neither refused nor answered) until a connection closes.
//! - **Shutdown.** When the shutdown future resolves the listener is closed, idle connections
//!   are closed, and requests in flight finish (their responses complete, then their
//!   connections close), for at most [`ServerOptions::shutdown_timeout`]; `/-/ready` answers
//!   503 meanwhile.

mod log;

use crate::mount::{Mount, RequestContext, Response, full};
use crate::ops::{self, Metrics};
use log::{LoggedBody, Record};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Limits and timeouts of the HTTP server.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Largest request body accepted, in bytes (413 beyond).
    pub body_limit: usize,
    /// Longest wait for the next chunk of a request body (408 beyond).
    pub body_timeout: Duration,
    /// Longest wait for a whole request head, and for the next request on an idle keep-alive
    /// connection; the connection is closed beyond it.
    pub header_timeout: Duration,
    /// Most connections served at once; more wait in the listen backlog.
    pub max_connections: usize,
    /// Whether connections stay open for further requests (HTTP/1.1 keep-alive).
    pub keep_alive: bool,
    /// Longest wait for in-flight requests after shutdown is asked for.
    pub shutdown_timeout: Duration,
    /// Whether each request is logged (tracing target `sluice_http::access`, level info).
    pub access_log: bool,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            body_limit: 256 << 20,
            body_timeout: Duration::from_secs(30),
            header_timeout: Duration::from_secs(10),
            max_connections: 1024,
            keep_alive: true,
            shutdown_timeout: Duration::from_secs(30),
            access_log: true,
        }
    }
}

/// Which mount answers which URL prefix, and the database the ops endpoints report on.
#[derive(Default, Clone)]
pub struct Router {
    /// Longest prefix first, so `/films/tags` wins over `/films`.
    mounts: Vec<(Arc<str>, Arc<dyn Mount>)>,
    /// The pool `/-/ready` checks and `/-/metrics` reports.
    pool: Option<sluice_pg::Pool>,
}

impl Router {
    pub fn new() -> Router {
        Router::default()
    }

    /// Mounts `mount` at `prefix` (`/films`; `""` or `/` for the root). A prefix matches whole
    /// path segments: `/films` matches `/films` and `/films/1`, not `/filmsx`. Paths under `/-/`
    /// belong to the server's operations endpoints.
    pub fn mount(&mut self, prefix: &str, mount: Arc<dyn Mount>) -> &mut Router {
        let prefix: Arc<str> = prefix.trim_end_matches('/').into();
        self.mounts.push((prefix, mount));
        self.mounts
            .sort_by_key(|mount| std::cmp::Reverse(mount.0.len()));
        self
    }

    /// The database behind the mounts: `/-/ready` answers 200 only when it answers `SELECT 1`,
    /// and `/-/metrics` includes the pool's gauges. Without one, `/-/ready` answers 200.
    pub fn database(&mut self, pool: sluice_pg::Pool) -> &mut Router {
        self.pool = Some(pool);
        self
    }

    /// The mount for `path` and the prefix it matched.
    pub fn route(&self, path: &str) -> Option<(&Arc<str>, &Arc<dyn Mount>)> {
        self.route_index(path)
            .and_then(|index| self.mounts.get(index))
            .map(|(prefix, mount)| (prefix, mount))
    }

    fn route_index(&self, path: &str) -> Option<usize> {
        self.mounts.iter().position(|(prefix, _)| {
            path.strip_prefix(&**prefix)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
    }
}

/// What every connection task shares.
struct Shared {
    router: Router,
    options: ServerOptions,
    metrics: Metrics,
    shutting_down: AtomicBool,
}

/// Serves HTTP/1.1 on `listener` until `shutdown` resolves, then lets in-flight requests finish
/// (for at most `options.shutdown_timeout`).
pub async fn run(
    listener: tokio::net::TcpListener,
    router: Router,
    options: ServerOptions,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let prefixes: Vec<Arc<str>> = router.mounts.iter().map(|(p, _)| p.clone()).collect();
    let shared = Arc::new(Shared {
        metrics: Metrics::new(&prefixes),
        router,
        options,
        shutting_down: AtomicBool::new(false),
    });
    let slots = Arc::new(tokio::sync::Semaphore::new(
        shared.options.max_connections.max(1),
    ));
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(shared.options.header_timeout)
        .keep_alive(shared.options.keep_alive);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        // A slot first: at the cap the listener is not polled, so connections queue in the
        // kernel's backlog instead of being accepted and starved.
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => match slot {
                Ok(slot) => slot,
                Err(_) => break, // Never closed; kept total.
            },
            () = &mut shutdown => break,
        };
        let (stream, _peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::warn!(%error, "accepting an HTTP connection");
                    // Out of file descriptors and the like: do not spin.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let connection_shared = shared.clone();
        let service = hyper::service::service_fn(move |request| {
            let shared = connection_shared.clone();
            async move { Ok::<_, std::convert::Infallible>(shared.answer(request).await) }
        });
        let connection = builder.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
        let connection = graceful.watch(connection);
        let open = shared.metrics.connection_opened();
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "HTTP connection ended with an error");
            }
            drop(open);
            drop(slot);
        });
    }
    drop(listener);
    shared.shutting_down.store(true, Ordering::Relaxed);
    let timeout = shared.options.shutdown_timeout;
    if tokio::time::timeout(timeout, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            ?timeout,
            "requests still running after the shutdown timeout are cut off"
        );
    }
    Ok(())
}

impl Shared {
    /// Answers one request and wraps its body so the access log and metrics see it end.
    async fn answer(self: Arc<Shared>, request: crate::Request) -> http::Response<LoggedBody> {
        let start = Instant::now();
        let method = request.method().clone();
        let uri = request.uri().clone();
        let (route, response) = self.dispatch(request).await;
        let (parts, body) = response.into_parts();
        let record = Record {
            route,
            method,
            uri,
            status: parts.status,
            start,
        };
        http::Response::from_parts(parts, LoggedBody::new(body, record, self))
    }

    async fn dispatch(&self, request: crate::Request) -> (usize, Response) {
        let path = request.uri().path();
        if let Some(op) = path.strip_prefix("/-/") {
            let response = ops::answer(
                op,
                self.router.pool.as_ref(),
                &self.metrics,
                self.shutting_down.load(Ordering::Relaxed),
            )
            .await;
            return (self.metrics.ops_route(), response);
        }
        let Some(index) = self.router.route_index(path) else {
            return (self.metrics.unmatched_route(), not_found());
        };
        let Some((prefix, mount)) = self.router.mounts.get(index) else {
            return (self.metrics.unmatched_route(), not_found());
        };
        // The body limit is the mount's to enforce (`read_body` refuses a declared length over it
        // before reading), so each gate answers 413 in its own error shape (InfluxDB's differs).
        let context = RequestContext {
            prefix: prefix.clone(),
            body_limit: self.options.body_limit,
            body_timeout: self.options.body_timeout,
        };
        (index, mount.clone().call(request, context).await)
    }
}

/// A JSON error answer in the shape every gate of the server uses.
pub(crate) fn error_response(status: http::StatusCode, code: &str, message: &str) -> Response {
    let body = serde_json::json!({
        "code": code,
        "message": message,
        "details": null,
        "hint": null,
    });
    let mut response = Response::new(full(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

fn not_found() -> Response {
    error_response(
        http::StatusCode::NOT_FOUND,
        "not_found",
        "no endpoint is mounted at this path",
    )
}
