//! Shared by the write tests: a server whose only mount answers writes through
//! `sluice_http::view::write::handle` for hand-built endpoints, a schema per test, an HTTP client.
#![allow(dead_code, unused_imports, clippy::unwrap_used, clippy::expect_used)]

use bytes::Bytes;
use sluice_embedded::testkit::{self, TestServer};
use sluice_http::view::model::{
    BodyPathElement, Column, Command, Endpoint, MethodObject, PathSegment, Return, Schema, Source,
};
use sluice_http::view::write::{WriteRequest, handle};
use sluice_http::{Mount, MountFuture, Request, RequestContext, Router, ServerOptions};
use sluice_pg::{Connection, Pool, PoolSettings};
use std::net::SocketAddr;
use std::sync::Arc;

pub mod scenarios;

/// A running test server and the schema its tables live in.
pub struct Server {
    pub addr: SocketAddr,
    pub schema: String,
    pub admin: Connection,
    _server: TestServer,
}

/// Answers PUT/PATCH/POST through the writing half; path matching as VIEWS.md says.
struct WriteMount {
    endpoints: Vec<Endpoint>,
    pool: Pool,
}

fn matches(endpoint: &Endpoint, segments: &[&str]) -> Option<Vec<String>> {
    if endpoint.path.len() != segments.len() {
        return None;
    }
    let mut captures = Vec::new();
    for (part, segment) in endpoint.path.iter().zip(segments) {
        match part {
            PathSegment::Literal(l) if l.trim_start_matches('/') == *segment => {}
            PathSegment::Literal(_) => return None,
            PathSegment::Capture(n) => {
                let n = usize::from(*n);
                if captures.len() < n {
                    captures.resize(n, String::new());
                }
                captures[n - 1] = (*segment).to_owned();
            }
        }
    }
    Some(captures)
}

impl Mount for WriteMount {
    fn call(self: Arc<Self>, request: Request, context: RequestContext) -> MountFuture {
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let rest = context.rest(parts.uri.path()).trim_matches('/').to_owned();
            let segments: Vec<&str> = if rest.is_empty() {
                Vec::new()
            } else {
                rest.split('/').collect()
            };
            let Some((endpoint, captures)) = self
                .endpoints
                .iter()
                .find_map(|e| matches(e, &segments).map(|c| (e, c)))
            else {
                let mut response = sluice_http::Response::new(sluice_http::empty());
                *response.status_mut() = http::StatusCode::NOT_FOUND;
                return response;
            };
            handle(WriteRequest {
                endpoint,
                method: &parts.method,
                captures: &captures,
                headers: &parts.headers,
                body,
                context: &context,
                pool: &self.pool,
                report_lsn: false,
            })
            .await
        })
    }
}

pub use sluice_embedded::testkit::unique;

/// Starts a server over a fresh schema in which `setup` ran; `endpoints` are mounted at `/v`.
pub async fn start(setup: &str, endpoints: Vec<Endpoint>) -> Server {
    start_with(setup, endpoints, ServerOptions::default()).await
}

pub async fn start_with(setup: &str, endpoints: Vec<Endpoint>, options: ServerOptions) -> Server {
    let url = sluice_embedded::testkit::url();
    let schema = unique("w");
    let mut admin = Connection::connect(url).await.expect("connect");
    admin
        .batch_execute(&format!(
            "CREATE SCHEMA {schema}; SET search_path TO {schema}; {setup}"
        ))
        .await
        .expect("setup");
    let separator = if url.contains('?') { '&' } else { '?' };
    let pool_url = format!("{url}{separator}options=-c%20search_path%3D{schema}");
    let mut settings = PoolSettings::new();
    settings.set_max_size(4);
    let pool = Pool::connect(&pool_url, settings).expect("pool");
    let mut router = Router::new();
    router.mount("/v", Arc::new(WriteMount { endpoints, pool }));
    let server = TestServer::start(router, options).await;
    Server {
        addr: server.addr,
        schema,
        admin,
        _server: server,
    }
}

/// A response: status, content type, body text.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub content_type: Option<String>,
    pub body: String,
}

impl From<testkit::Answer> for Reply {
    fn from(answer: testkit::Answer) -> Reply {
        Reply {
            status: answer.status,
            content_type: answer.header("content-type").map(str::to_owned),
            body: answer.body,
        }
    }
}

impl Reply {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

impl Server {
    /// Sends one request on a new connection.
    pub async fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: impl Into<Bytes>,
    ) -> Reply {
        let path = format!("/v{path}");
        Reply::from(testkit::request(self.addr, method, &path, headers, body).await)
    }

    /// Sends one request whose body goes out as `frames`, one chunk each, without a
    /// `Content-Length` (chunked). With `hold_open` the body is not ended after the last frame:
    /// the server must answer before the end of the body.
    pub async fn send_frames(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        frames: Vec<Bytes>,
        hold_open: bool,
    ) -> Reply {
        let path = format!("/v{path}");
        let answer =
            testkit::request_frames(self.addr, method, &path, headers, frames, hold_open).await;
        Reply::from(answer)
    }

    /// A CSJ body sent chunked in `frames` (see [`Server::send_frames`]).
    pub async fn csj_frames(
        &self,
        method: &str,
        path: &str,
        frames: Vec<Bytes>,
        hold_open: bool,
    ) -> Reply {
        let csj = [("content-type", "application/csj")];
        self.send_frames(method, path, &csj, frames, hold_open)
            .await
    }

    /// A CSJ body.
    pub async fn csj(&self, method: &str, path: &str, body: &str) -> Reply {
        self.send(
            method,
            path,
            &[("content-type", "application/csj")],
            body.to_owned(),
        )
        .await
    }

    /// A JSON body.
    pub async fn json(&self, method: &str, path: &str, body: serde_json::Value) -> Reply {
        self.send(
            method,
            path,
            &[("content-type", "application/json")],
            body.to_string(),
        )
        .await
    }

    /// The rows of `sql` (in the test's schema) as text lines, fields joined by `|`, NULL as
    /// `-`.
    pub async fn rows(&mut self, sql: &str) -> Vec<String> {
        let rows = self
            .admin
            .query(sql, &[])
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        rows.iter()
            .map(|row| {
                row.raw_fields()
                    .map(|f| f.map_or("-".to_owned(), |b| String::from_utf8_lossy(b).into_owned()))
                    .collect::<Vec<_>>()
                    .join("|")
            })
            .collect()
    }
}

/// A column sourced from the body field of its name.
pub fn column(name: &str) -> Column {
    Column {
        name: name.to_owned(),
        key: false,
        source: Source::Field(name.to_owned()),
        trim: true,
        schema: None,
        insert_required: false,
    }
}

/// A key column sourced from the body field of its name.
pub fn key(name: &str) -> Column {
    Column {
        key: true,
        ..column(name)
    }
}

/// A key column sourced from capture `n`.
pub fn key_capture(name: &str, n: u16) -> Column {
    Column {
        source: Source::Capture(n),
        ..key(name)
    }
}

pub fn body_path(path: &[&str]) -> Source {
    Source::Body(
        path.iter()
            .map(|p| match p.parse::<usize>() {
                Ok(i) => BodyPathElement::Index(i),
                Err(_) => BodyPathElement::Key((*p).to_owned()),
            })
            .collect(),
    )
}

pub fn schema(value: serde_json::Value) -> Schema {
    Schema {
        source: Arc::new(value),
    }
}

/// A method object on `table` with `columns`.
pub fn method(table: &str, columns: Vec<Column>) -> MethodObject {
    MethodObject {
        table: table.to_owned(),
        columns,
        existing: None,
        delete: None,
        returning: Vec::new(),
        schema: None,
    }
}

/// An endpoint at `path` (`"/x"` literals, numbers captures).
pub fn endpoint(path: &[&str], returns: Return) -> Endpoint {
    Endpoint {
        json_path: "$.sql[0]".to_owned(),
        path: path
            .iter()
            .map(|p| match p.parse::<u16>() {
                Ok(n) => PathSegment::Capture(n),
                Err(_) => PathSegment::Literal((*p).to_owned()),
            })
            .collect(),
        returns,
        precondition: None,
        get: None,
        delete: None,
        put: Vec::new(),
        patch: None,
        post: Vec::new(),
    }
}

/// A GET whose parameters are the given captures.
pub fn get(sql: &str, captures: &[u16]) -> Option<Command> {
    Some(Command {
        sql: sql.to_owned(),
        arguments: captures.iter().map(|n| Source::Capture(*n)).collect(),
    })
}
