//! Shared pieces of the server tests: test mounts and a time bound; the server on port 0 and the
//! HTTP client are the shared test kit's.
#![allow(dead_code, unused_imports)]

use sluice_http::{Mount, MountFuture, Request, RequestContext, Response, full};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

pub use sluice_embedded::testkit::{Answer, HttpClient as Client, TestServer as Server};

/// One request on a fresh connection.
pub async fn get(addr: SocketAddr, path: &str) -> Answer {
    Client::connect(addr).await.send("GET", path, b"").await
}

/// Answers with the length of the request body, read with `read_body` within the limits.
pub struct Echo;

impl Mount for Echo {
    fn call(self: Arc<Self>, request: Request, context: RequestContext) -> MountFuture {
        Box::pin(answer_length(request, context, Duration::ZERO))
    }
}

/// Reads the body whole (as the Influx write API does) and holds it this long while "writing"
/// it, then answers as [`Echo`].
pub struct Hold(pub Duration);

impl Mount for Hold {
    fn call(self: Arc<Self>, request: Request, context: RequestContext) -> MountFuture {
        Box::pin(answer_length(request, context, self.0))
    }
}

/// The body's length after holding it for `hold`, or the reader's error (503 with
/// `Retry-After`).
async fn answer_length(request: Request, context: RequestContext, hold: Duration) -> Response {
    let length = request
        .headers()
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse().ok());
    match sluice_http::read_body(
        request.into_body(),
        length,
        context.body_limit,
        context.body_timeout,
    )
    .await
    {
        Ok(body) => {
            tokio::time::sleep(hold).await;
            http::Response::new(full(format!("{} bytes", body.len())))
        }
        Err(error) => {
            let mut response = http::Response::new(full(error.to_string()));
            *response.status_mut() = error.status();
            if error.status() == http::StatusCode::SERVICE_UNAVAILABLE {
                response.headers_mut().insert(
                    http::header::RETRY_AFTER,
                    http::HeaderValue::from_static("1"),
                );
            }
            response
        }
    }
}

/// Says when a request has started, then answers after `delay`.
pub struct Slow {
    pub started: mpsc::UnboundedSender<()>,
    pub delay: Duration,
}

impl Mount for Slow {
    fn call(self: Arc<Self>, _request: Request, _context: RequestContext) -> MountFuture {
        Box::pin(async move {
            let _ = self.started.send(());
            tokio::time::sleep(self.delay).await;
            http::Response::new(full("done"))
        })
    }
}

/// Fails the test instead of hanging when `future` takes more than 20 s.
pub async fn bounded<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), future)
        .await
        .expect("the test step did not finish within 20 s")
}
