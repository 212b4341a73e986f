//! Shared helpers of the write API's tests: the write API on a free port, SQL checks. The test
//! database, unique names, the server and the HTTP client are the shared test kit's.
#![allow(dead_code, unused_imports, clippy::unwrap_used)]

use bytes::Bytes;
use sluice_embedded::testkit::TestServer;
use sluice_http::{Router, ServerOptions};
use sluice_influx::{InfluxApi, InfluxConfig};
use sluice_pg::{Pool, PoolSettings};
use std::net::SocketAddr;

pub use sluice_embedded::testkit::{Answer, rows, unique, url, value};

/// A running write API.
pub struct Server {
    pub addr: SocketAddr,
    _server: TestServer,
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
    let server = TestServer::start(router, options).await;
    Server {
        addr: server.addr,
        _server: server,
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
        sluice_embedded::testkit::request(self.addr, method, path_and_query, headers, body).await
    }

    /// `POST path` with a body of line protocol.
    pub async fn post(&self, path_and_query: &str, body: &str) -> Answer {
        self.send("POST", path_and_query, &[], body.to_owned())
            .await
    }
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
