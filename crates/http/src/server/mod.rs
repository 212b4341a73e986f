//! The HTTP server loop: accepts connections within a cap, routes each request to the mount of its prefix.
//!
//! Limits and what happens at them (each a field of [`ServerOptions`]):
//! - **Slow heads, idle connections.** A request head must arrive whole within `header_timeout`
//!   of its first byte (a new connection's first head within `header_timeout` of the accept),
//!   else the connection is closed without an answer; a keep-alive connection idle for
//!   `keep_alive_timeout` is closed.
//! - **Bodies.** Mounts read bodies through [`crate::body`], within `body_limit` (413, also for
//!   a larger `Content-Length` before reading), `body_timeout` without data (408), the
//!   `min_body_rate` after `min_body_rate_grace` of waiting (408, as Kestrel's
//!   MinRequestBodyDataRate), and `request_timeout` for the whole body (408).
//! - **Memory.** Bodies in memory reserve their bytes against `max_inflight_bytes`; a body that
//!   finds no room within `inflight_wait` is answered 503 with `Retry-After`.
//! - **Connections.** At most `max_connections` connections are served at once. At the cap a
//!   new connection takes the slot of one that makes no progress (idle keep-alive, a stalled
//!   head, a body slower than `min_body_rate`; see `conns.rs`); when every connection is busy
//!   answering, it waits (and those behind it in the kernel's backlog) until one closes.
//! - **Shutdown.** When the shutdown future resolves the listener is closed, idle connections
//!   are closed, and requests in flight finish (their responses complete, then their
//!   connections close), for at most [`ServerOptions::shutdown_timeout`]; `/-/ready` answers
//!   503 meanwhile.

pub(crate) mod conns;
mod log;
pub mod tls;

use crate::body::{BodyRules, RequestScope, SCOPE};
use crate::budget::MemoryBudget;
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
    /// Least average rate of a request body, in bytes per second of waiting for it, enforced
    /// after `min_body_rate_grace` (408 below it); 0 turns it off. Kestrel's default: 240.
    pub min_body_rate: u64,
    /// Waiting time before `min_body_rate` applies. Kestrel's default: 5 s.
    pub min_body_rate_grace: Duration,
    /// Longest time from a request's head to the end of its body (408 beyond).
    pub request_timeout: Duration,
    /// Longest wait for a whole request head from its first byte (and for a new connection's
    /// first request); the connection is closed beyond it.
    pub header_timeout: Duration,
    /// Longest idle time of a keep-alive connection between two requests.
    pub keep_alive_timeout: Duration,
    /// Most connections served at once; at the cap a new one takes the slot of a connection
    /// that makes no progress, else waits.
    pub max_connections: usize,
    /// Budget of request-body bytes held in memory by all requests together (0: none).
    pub max_inflight_bytes: usize,
    /// Longest wait of a body for room in that budget before it is answered 503.
    pub inflight_wait: Duration,
    /// Whether connections stay open for further requests (HTTP/1.1 keep-alive).
    pub keep_alive: bool,
    /// Longest wait for in-flight requests after shutdown is asked for.
    pub shutdown_timeout: Duration,
    /// Whether each request is logged (tracing target `sluice_http::access`, level info).
    pub access_log: bool,
    /// HTTPS with this certificate and key; `None`: plain HTTP.
    pub tls: Option<Arc<tls::Tls>>,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            body_limit: 256 << 20,
            body_timeout: Duration::from_secs(30),
            min_body_rate: 240,
            min_body_rate_grace: Duration::from_secs(5),
            request_timeout: Duration::from_secs(300),
            header_timeout: Duration::from_secs(10),
            keep_alive_timeout: Duration::from_secs(75),
            max_connections: 1024,
            max_inflight_bytes: 256 << 20,
            inflight_wait: Duration::from_secs(2),
            keep_alive: true,
            shutdown_timeout: Duration::from_secs(30),
            access_log: true,
            tls: None,
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
    /// The read replicas `/-/metrics` reports.
    replicas: Option<Arc<sluice_pg::pool::ReadPools>>,
}

impl Router {
    /// A router with no mounts (only `/-/` answers).
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

    /// The read replicas: `/-/metrics` reports each one's requests, lag and state.
    pub fn replicas(&mut self, replicas: Arc<sluice_pg::pool::ReadPools>) -> &mut Router {
        self.replicas = Some(replicas);
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
    rules: Arc<BodyRules>,
    metrics: Metrics,
    shutting_down: AtomicBool,
}

/// How often the accept loop, holding a connection at the cap, looks again for a connection
/// that makes no progress.
const EVICTION_RETRY: Duration = Duration::from_millis(100);

/// Serves HTTP/1.1 on `listener` until `shutdown` resolves, then lets in-flight requests finish
/// (for at most `options.shutdown_timeout`).
pub async fn run(
    listener: tokio::net::TcpListener,
    router: Router,
    options: ServerOptions,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let prefixes: Vec<Arc<str>> = router.mounts.iter().map(|(p, _)| p.clone()).collect();
    let rules = Arc::new(BodyRules {
        min_rate: options.min_body_rate,
        grace: options.min_body_rate_grace,
        request_timeout: options.request_timeout,
        budget: (options.max_inflight_bytes > 0)
            .then(|| MemoryBudget::new(options.max_inflight_bytes, options.inflight_wait)),
    });
    let shared = Arc::new(Shared {
        metrics: Metrics::new(&prefixes).with_budget(rules.budget.clone()),
        router,
        options,
        rules,
        shutting_down: AtomicBool::new(false),
    });
    let slots = Arc::new(tokio::sync::Semaphore::new(
        shared.options.max_connections.max(1),
    ));
    let registry = Arc::new(conns::Registry::new());
    let timeouts = conns::Timeouts {
        header: shared.options.header_timeout,
        keep_alive: shared.options.keep_alive_timeout,
        evicted_grace: Duration::from_secs(2),
    };
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(hyper_util::rt::TokioTimer::new())
        // The watcher enforces both; hyper's timer, which runs from the end of the previous
        // response, is only a backstop.
        .header_read_timeout(shared.options.header_timeout + shared.options.keep_alive_timeout)
        .keep_alive(shared.options.keep_alive);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    tokio::pin!(shutdown);
    'accept: loop {
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
        // At the cap, the connection just accepted waits for a slot, which a connection making
        // no progress is told to give up.
        let slot = match slots.clone().try_acquire_owned() {
            Ok(slot) => slot,
            Err(_) => loop {
                if registry.evict_one(shared.options.min_body_rate) {
                    shared.metrics.connection_evicted();
                }
                tokio::select! {
                    slot = slots.clone().acquire_owned() => match slot {
                        Ok(slot) => break slot,
                        Err(_) => break 'accept, // Never closed; kept total.
                    },
                    () = tokio::time::sleep(EVICTION_RETRY) => {}
                    () = &mut shutdown => break 'accept,
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let registered = registry.open();
        let state = registered.state.clone();
        let connection_shared = shared.clone();
        let service = hyper::service::service_fn(move |request| {
            let shared = connection_shared.clone();
            let state = state.clone();
            async move { Ok::<_, std::convert::Infallible>(shared.answer(request, state).await) }
        });
        let io = conns::Counted::new(stream, registered.state.clone());
        let open = shared.metrics.connection_opened();
        let Some(tls) = &shared.options.tls else {
            let connection = builder.serve_connection(hyper_util::rt::TokioIo::new(io), service);
            let connection = graceful.watch(connection);
            tokio::spawn(async move {
                if let Some(Err(error)) =
                    conns::watch(connection, &registered.state, timeouts).await
                {
                    tracing::debug!(%error, "HTTP connection ended with an error");
                }
                drop(registered);
                drop(open);
                drop(slot);
            });
            continue;
        };
        // The handshake runs in the connection's task, within the head's deadline, so a slow
        // one holds only its own slot.
        let acceptor = tls.acceptor();
        let builder = builder.clone();
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            let Some(acceptor) = acceptor else { return };
            match tokio::time::timeout(timeouts.header, acceptor.accept(io)).await {
                Ok(Ok(io)) => {
                    let connection =
                        builder.serve_connection(hyper_util::rt::TokioIo::new(io), service);
                    let connection = watcher.watch(connection);
                    if let Some(Err(error)) =
                        conns::watch(connection, &registered.state, timeouts).await
                    {
                        tracing::debug!(%error, "HTTPS connection ended with an error");
                    }
                }
                Ok(Err(error)) => tracing::debug!(%error, "TLS handshake failed"),
                Err(_) => tracing::debug!("TLS handshake timed out"),
            }
            drop(registered);
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
    /// Answers one request and wraps its body so the access log and metrics see it end (and
    /// the connection's state, that the request is over).
    async fn answer(
        self: Arc<Shared>,
        request: crate::Request,
        connection: Arc<conns::ConnState>,
    ) -> http::Response<LoggedBody> {
        let start = Instant::now();
        let method = request.method().clone();
        let uri = request.uri().clone();
        let in_flight = log::InFlight::new(connection.clone());
        let scope = RequestScope {
            rules: self.rules.clone(),
            connection: Some(connection),
            started: start,
        };
        let (route, response) = SCOPE.scope(scope, self.dispatch(request)).await;
        let (parts, body) = response.into_parts();
        let record = Record {
            route,
            method,
            uri,
            status: parts.status,
            start,
        };
        http::Response::from_parts(parts, LoggedBody::new(body, record, self, in_flight))
    }

    async fn dispatch(&self, request: crate::Request) -> (usize, Response) {
        let path = request.uri().path();
        if let Some(op) = path.strip_prefix("/-/") {
            let response = ops::answer(
                op,
                self.router.pool.as_ref(),
                self.router.replicas.as_deref(),
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
