//! The HTTP server loop: accepts connections, routes each request to the mount of its prefix.

use crate::mount::{Mount, RequestContext, Response, full};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// Limits and timeouts of the HTTP server.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Largest request body accepted, in bytes (413 beyond).
    pub body_limit: usize,
    /// Longest wait for the next chunk of a request body (408 beyond).
    pub body_timeout: Duration,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            body_limit: 256 << 20,
            body_timeout: Duration::from_secs(30),
        }
    }
}

/// Which mount answers which URL prefix.
#[derive(Default, Clone)]
pub struct Router {
    /// Longest prefix first, so `/films/tags` wins over `/films`.
    mounts: Vec<(Arc<str>, Arc<dyn Mount>)>,
}

impl Router {
    pub fn new() -> Router {
        Router::default()
    }

    /// Mounts `mount` at `prefix` (`/films`; `""` or `/` for the root). A prefix matches whole
    /// path segments: `/films` matches `/films` and `/films/1`, not `/filmsx`.
    pub fn mount(&mut self, prefix: &str, mount: Arc<dyn Mount>) -> &mut Router {
        let prefix: Arc<str> = prefix.trim_end_matches('/').into();
        self.mounts.push((prefix, mount));
        self.mounts
            .sort_by_key(|mount| std::cmp::Reverse(mount.0.len()));
        self
    }

    /// The mount for `path` and the prefix it matched.
    pub fn route(&self, path: &str) -> Option<(&Arc<str>, &Arc<dyn Mount>)> {
        self.mounts
            .iter()
            .find(|(prefix, _)| {
                path.strip_prefix(&**prefix)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
            })
            .map(|(prefix, mount)| (prefix, mount))
    }
}

/// Serves HTTP/1.1 on `listener` until `shutdown` resolves, then lets in-flight requests finish.
pub async fn run(
    listener: tokio::net::TcpListener,
    router: Router,
    options: ServerOptions,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let router = Arc::new(router);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, _peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::warn!(%error, "accepting an HTTP connection");
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let router = router.clone();
        let options = options.clone();
        let service = hyper::service::service_fn(move |request| {
            let router = router.clone();
            let options = options.clone();
            async move { Ok::<_, std::convert::Infallible>(dispatch(&router, &options, request).await) }
        });
        let connection = hyper::server::conn::http1::Builder::new()
            .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "HTTP connection ended with an error");
            }
        });
    }
    graceful.shutdown().await;
    Ok(())
}

async fn dispatch(router: &Router, options: &ServerOptions, request: crate::Request) -> Response {
    let Some((prefix, mount)) = router.route(request.uri().path()) else {
        return not_found();
    };
    let context = RequestContext {
        prefix: prefix.clone(),
        body_limit: options.body_limit,
        body_timeout: options.body_timeout,
    };
    mount.clone().call(request, context).await
}

fn not_found() -> Response {
    let mut response = Response::new(full(
        &br#"{"code":"not_found","message":"no endpoint is mounted at this path","details":null,"hint":null}"#[..],
    ));
    *response.status_mut() = http::StatusCode::NOT_FOUND;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}
