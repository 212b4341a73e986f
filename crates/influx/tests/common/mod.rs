//! Shared helpers of the write API's tests: a server on a free port, an HTTP client, SQL checks.
#![allow(dead_code, clippy::unwrap_used)]

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use sluice_http::{Router, ServerOptions};
use sluice_influx::{InfluxApi, InfluxConfig};
use sluice_pg::{Connection, Pool, PoolSettings};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};

/// A running write API and a client for it.
pub struct Server {
    pub addr: SocketAddr,
    client: Client<HttpConnector, Full<Bytes>>,
}

/// A response, read whole.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: http::HeaderMap,
    pub body: String,
}

impl Answer {
    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// The test database's URL.
pub fn url() -> &'static str {
    sluice_embedded::test_database().url()
}

/// A schema (Influx database) name unique in this process and run.
pub fn unique(prefix: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!(
        "{prefix}_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Starts the API against the test database.
pub async fn start(config: InfluxConfig) -> Server {
    start_with(config, ServerOptions::default(), url()).await
}

/// Starts the API with server options and a database URL of choice.
pub async fn start_with(config: InfluxConfig, options: ServerOptions, database: &str) -> Server {
    let mut settings = PoolSettings::new();
    settings.set_max_size(8);
    let pool = Pool::connect(database, settings).unwrap();
    let api = InfluxApi::new(pool, config);
    let mut router = Router::new();
    api.mount_all(&mut router);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(sluice_http::run(
        listener,
        router,
        options,
        std::future::pending(),
    ));
    Server {
        addr,
        client: Client::builder(TokioExecutor::new()).build_http(),
    }
}

impl Server {
    /// Sends a request with `headers` and `body`.
    pub async fn send(
        &self,
        method: &str,
        path_and_query: &str,
        headers: &[(&str, &str)],
        body: impl Into<Bytes>,
    ) -> Answer {
        let mut request = http::Request::builder()
            .method(method)
            .uri(format!("http://{}{path_and_query}", self.addr));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request.body(Full::new(body.into())).unwrap();
        let response = self.client.request(request).await.unwrap();
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        Answer {
            status,
            headers,
            body: String::from_utf8_lossy(&body).into_owned(),
        }
    }

    /// `POST path` with a body of line protocol.
    pub async fn post(&self, path_and_query: &str, body: &str) -> Answer {
        self.send("POST", path_and_query, &[], body.to_owned())
            .await
    }
}

/// Runs `sql` on the test database; every row's fields as text (`None` for NULL).
pub async fn rows(sql: &str) -> Vec<Vec<Option<String>>> {
    let mut conn = Connection::connect(url()).await.unwrap();
    let results = conn.simple_query(sql).await.unwrap();
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

/// The single value of a one-row, one-column query.
pub async fn value(sql: &str) -> Option<String> {
    rows(sql).await.into_iter().next()?.into_iter().next()?
}

/// `column:type` of each column of `schema.table`, in order, but the series column of tables
/// that merge duplicates (see [`all_columns`]).
pub async fn columns(schema: &str, table: &str) -> Vec<String> {
    all_columns(schema, table)
        .await
        .into_iter()
        .filter(|c| c != "sluice_series:uuid")
        .collect()
}

/// `column:type` of each column of `schema.table`, in order.
pub async fn all_columns(schema: &str, table: &str) -> Vec<String> {
    rows(&format!(
        "SELECT column_name || ':' || data_type FROM information_schema.columns \
         WHERE table_schema = '{schema}' AND table_name = '{table}' ORDER BY ordinal_position"
    ))
    .await
    .into_iter()
    .filter_map(|r| r.into_iter().next().flatten())
    .collect()
}

/// The number of rows in `schema.table` (`None` when there is no such table).
pub async fn count(schema: &str, table: &str) -> Option<i64> {
    let exists = value(&format!(
        "SELECT to_regclass('\"{schema}\".\"{table}\"') IS NOT NULL"
    ))
    .await;
    if exists.as_deref() != Some("t") {
        return None;
    }
    value(&format!("SELECT count(*) FROM \"{schema}\".\"{table}\""))
        .await
        .and_then(|v| v.parse().ok())
}
