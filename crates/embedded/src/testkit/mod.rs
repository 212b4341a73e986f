//! The test kit the crates' suites share (feature `test-support`): unique names, connections to
//! the test database, SQL results as text, memory figures of a process, an HTTP server on port 0
//! and a real HTTP client.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use sluice_http::{Router, ServerOptions};
use sluice_pg::Connection;
use tokio::sync::oneshot;

use crate::test_db::test_database;

pub mod outage;

/// A name unique in this process (`<prefix>_<pid>_<n>`), for the tables, schemas and databases
/// of tests running in parallel.
pub fn unique(prefix: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!(
        "{prefix}_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The superuser URL of the test database (the embedded cluster, or `DATABASE_URL`).
pub fn url() -> &'static str {
    test_database().url()
}

/// A new connection to the test database as the superuser; panics when there is none.
pub async fn connect() -> Connection {
    Connection::connect(url())
        .await
        .expect("connect to the test database")
}

/// Runs `sql` (one or more statements, simple protocol) on a new connection to the test
/// database; every row of every result, its fields as text (`None` for NULL).
pub async fn rows(sql: &str) -> Vec<Vec<Option<String>>> {
    let mut conn = connect().await;
    let results = conn
        .simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let mut out = Vec::new();
    for result in &results {
        for row in result.iter() {
            out.push(
                row.raw_fields()
                    .map(|f| f.map(|b| String::from_utf8_lossy(b).into_owned()))
                    .collect(),
            );
        }
    }
    out
}

/// The first field of the first row of `sql` (`None` for no row or NULL).
pub async fn value(sql: &str) -> Option<String> {
    rows(sql).await.into_iter().next()?.into_iter().next()?
}

/// A size field of `/proc/<pid>/status` (`"VmRSS:"`, the resident set; `"VmHWM:"`, its peak),
/// in KiB; `pid` is `std::process::id()` for this process.
pub fn proc_status_kib(pid: u32, field: &str) -> u64 {
    let path = format!("/proc/{pid}/status");
    let status = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.trim().strip_suffix("kB"))
        .and_then(|kib| kib.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in {path}"))
}

/// Resets this process's peak resident set (`VmHWM`) to its current one.
pub fn reset_peak_rss() {
    std::fs::write("/proc/self/clear_refs", "5").expect("write /proc/self/clear_refs");
}

/// An HTTP server (`sluice_http::run`) on a free port of 127.0.0.1, in the test's runtime. It
/// shuts down gracefully on [`TestServer::stop`] or when dropped.
pub struct TestServer {
    /// Where it listens.
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    /// The server's task: it ends after a shutdown.
    pub task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl TestServer {
    /// Serves `router` with `options` on `127.0.0.1:0`.
    pub async fn start(router: Router, options: ServerOptions) -> TestServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("the listener's address");
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(sluice_http::run(listener, router, options, async move {
            let _ = stopped.await;
        }));
        TestServer {
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

    /// One request on a new connection (see [`request`]).
    pub async fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: impl Into<Bytes>,
    ) -> Answer {
        request(self.addr, method, path, headers, body).await
    }
}

/// A response, read whole.
#[derive(Debug)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// The response headers.
    pub headers: http::HeaderMap,
    /// The body as text (invalid UTF-8 replaced).
    pub body: String,
}

impl Answer {
    /// The body as JSON, `null` when it is not JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or(serde_json::Value::Null)
    }

    /// The value of header `name`, when present and text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// One request on a new connection (hyper's HTTP/1 client): `path` is the origin form
/// (`/write?db=x`); `Host: localhost` unless `headers` name one.
pub async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: impl Into<Bytes>,
) -> Answer {
    let (parts, body) = exchange(addr, method, path, headers, Full::new(body.into())).await;
    answer(parts, body.expect("the response body"))
}

/// One request whose body goes out as `frames`, one chunk each, without a `Content-Length`
/// (chunked). With `hold_open` the body is not ended after the last frame: the server must
/// answer before the end of the body. Fails the test after 60 s without an answer.
pub async fn request_frames(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    frames: Vec<Bytes>,
    hold_open: bool,
) -> Answer {
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(1);
    tokio::spawn(async move {
        for frame in frames {
            if tx.send(frame).await.is_err() {
                return; // The server stopped reading.
            }
        }
        if hold_open {
            tx.closed().await;
        }
    });
    let exchanged = exchange(addr, method, path, headers, Frames(rx));
    let (parts, body) = tokio::time::timeout(Duration::from_secs(60), exchanged)
        .await
        .expect("no answer within 60 s");
    answer(parts, body.expect("the response body"))
}

/// One request on a new connection; the response head and its body as it ended (an error when
/// the server cut it short).
pub async fn exchange<B>(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: B,
) -> (http::response::Parts, Result<Bytes, hyper::Error>)
where
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connect to the test server");
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("HTTP/1 handshake");
    tokio::spawn(connection);
    let mut builder = http::Request::builder().method(method).uri(path);
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        builder = builder.header("host", "localhost");
    }
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    let response = sender
        .send_request(builder.body(body).expect("a valid request"))
        .await
        .expect("a response");
    let (parts, body) = response.into_parts();
    let body = body.collect().await.map(|b| b.to_bytes());
    (parts, body)
}

fn answer(parts: http::response::Parts, body: Bytes) -> Answer {
    Answer {
        status: parts.status.as_u16(),
        headers: parts.headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

/// A request body of frames from a channel, of unknown length.
struct Frames(tokio::sync::mpsc::Receiver<Bytes>);

impl http_body::Body for Frames {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        self.0
            .poll_recv(cx)
            .map(|frame| frame.map(|data| Ok(http_body::Frame::data(data))))
    }
}

/// One keep-alive connection (hyper's HTTP/1 client), for tests of what happens across the
/// requests of a connection.
pub struct HttpClient {
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    /// The connection's task: it ends when the server closes the connection.
    pub task: tokio::task::JoinHandle<()>,
}

impl HttpClient {
    /// Connects to `addr`.
    pub async fn connect(addr: SocketAddr) -> HttpClient {
        let stream = tokio::net::TcpStream::connect(addr)
            .await
            .expect("connect to the test server");
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .expect("HTTP/1 handshake");
        let task = tokio::spawn(async move {
            let _ = connection.await;
        });
        HttpClient { sender, task }
    }

    /// Sends a request on this connection and reads the response whole.
    pub async fn send(&mut self, method: &str, path: &str, body: &[u8]) -> Answer {
        let request = http::Request::builder()
            .method(method)
            .uri(path)
            .header("host", "localhost")
            .body(Full::new(Bytes::copy_from_slice(body)))
            .expect("a valid request");
        self.sender.ready().await.expect("the connection is open");
        let response = self.sender.send_request(request).await.expect("a response");
        let (parts, body) = response.into_parts();
        let body = body.collect().await.expect("the response body").to_bytes();
        answer(parts, body)
    }
}
