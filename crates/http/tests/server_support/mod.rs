//! Shared pieces of the server tests: a server on port 0, a real HTTP client, test mounts.
#![allow(dead_code)]

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use sluice_http::{Mount, MountFuture, Request, RequestContext, Router, ServerOptions, full};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// A server running in the test's runtime.
pub struct Server {
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    pub task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Server {
    pub async fn start(router: Router, options: ServerOptions) -> Server {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(sluice_http::run(listener, router, options, async move {
            let _ = stopped.await;
        }));
        Server {
            addr,
            stop: Some(stop),
            task,
        }
    }

    /// Asks for a graceful shutdown.
    pub fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// A response as the tests look at it.
pub struct Answer {
    pub status: u16,
    pub headers: http::HeaderMap,
    pub body: String,
}

/// One keep-alive client connection (hyper's HTTP/1 client).
pub struct Client {
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    pub task: tokio::task::JoinHandle<()>,
}

impl Client {
    pub async fn connect(addr: SocketAddr) -> Client {
        let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .unwrap();
        let task = tokio::spawn(async move {
            let _ = conn.await;
        });
        Client { sender, task }
    }

    pub async fn send(&mut self, method: &str, path: &str, body: &[u8]) -> Answer {
        let request = http::Request::builder()
            .method(method)
            .uri(path)
            .header("host", "test")
            .body(Full::new(Bytes::copy_from_slice(body)))
            .unwrap();
        self.sender.ready().await.unwrap();
        let response = self.sender.send_request(request).await.unwrap();
        let (parts, body) = response.into_parts();
        let body = body.collect().await.unwrap().to_bytes();
        Answer {
            status: parts.status.as_u16(),
            headers: parts.headers,
            body: String::from_utf8_lossy(&body).into_owned(),
        }
    }
}

/// One request on a fresh connection.
pub async fn get(addr: SocketAddr, path: &str) -> Answer {
    Client::connect(addr).await.send("GET", path, b"").await
}

/// Answers with the length of the request body, read with `read_body` within the limits.
pub struct Echo;

impl Mount for Echo {
    fn call(self: Arc<Self>, request: Request, context: RequestContext) -> MountFuture {
        Box::pin(async move {
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
                Ok(body) => http::Response::new(full(format!("{} bytes", body.len()))),
                Err(error) => {
                    let mut response = http::Response::new(full(error.to_string()));
                    *response.status_mut() = error.status();
                    response
                }
            }
        })
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
