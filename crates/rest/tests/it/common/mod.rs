//! What the REST API's test binaries share: a fresh database built from SQL, the API served over
//! it on 127.0.0.1:0, and the suite config format.
#![allow(dead_code)]

use sluice_http::testkit::spec::{create_database, drop_database, url_for};
use sluice_http::{Router, ServerOptions};
use sluice_pg::{Connection, Pool, PoolSettings};
use sluice_rest::api::{RestApi, SchemaSource};
use sluice_rest::{RestConfig, TxEnd};
use std::path::Path;
use std::sync::Arc;

/// Runs `setup` on the database at `url` and loads the schema cache of the default settings'
/// schemas from it: what a test serving its own cluster builds its API on.
pub async fn set_up_schema(
    url: &str,
    setup: &str,
) -> (RestConfig, Arc<sluice_rest::schema::SchemaCache>) {
    let mut conn = Connection::connect(url)
        .await
        .expect("connecting for the setup");
    conn.batch_execute(setup).await.expect("the setup");
    let config = RestConfig::default();
    let cache = sluice_rest::schema::load(&mut conn, &config.schemas)
        .await
        .expect("loading the schema cache");
    (config, Arc::new(cache))
}

/// The suite's `config`: `key = value` lines named like `[rest]`'s settings.
pub fn read_config(suite: &Path) -> Result<RestConfig, String> {
    let text = std::fs::read_to_string(suite.join("config")).map_err(|e| e.to_string())?;
    let mut config = RestConfig::default();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = line
            .split_once('=')
            .map(|(k, v)| (k.trim(), v.trim()))
            .ok_or_else(|| format!("config:{}: expected key = value", i + 1))?;
        match key {
            "schemas" => config.schemas = value.split(',').map(|s| s.trim().to_string()).collect(),
            "anon_role" => config.anon_role = Some(value.to_string()),
            "pre_request" => config.pre_request = Some(value.to_string()),
            "cors_allowed_origins" => {
                config.cors_allowed_origins =
                    value.split(',').map(|s| s.trim().to_string()).collect()
            }
            "extra_search_path" => {
                config.extra_search_path = value
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            }
            "max_rows" => config.max_rows = value.parse().ok(),
            "aggregates_enabled" => config.aggregates_enabled = value == "true",
            "plan_enabled" => config.plan_enabled = value == "true",
            "jwt_secret" => {
                config.jwt = Some(std::sync::Arc::new(
                    sluice_rest::auth::JwtConfig::new(value, false, None, ".role")
                        .map_err(|e| format!("config:{}: {e}", i + 1))?,
                ))
            }
            "tx_end" => {
                config.tx_end = match value {
                    "commit" => TxEnd::Commit,
                    "commit-allow-override" => TxEnd::CommitAllowOverride,
                    "rollback" => TxEnd::Rollback,
                    "rollback-allow-override" => TxEnd::RollbackAllowOverride,
                    other => return Err(format!("config:{}: tx_end {other:?}", i + 1)),
                }
            }
            other => return Err(format!("config:{}: unknown key {other:?}", i + 1)),
        }
    }
    Ok(config)
}

/// A database of its own, built by `setup` (SQL, several statements), served by the REST API
/// with `config`; dropped with the value.
pub struct Served {
    pub address: std::net::SocketAddr,
    pub url: String,
    dbname: String,
    listening: Listening,
    pub pool: Pool,
}

/// A router served by `sluice_http::run` on 127.0.0.1:0 until [`Listening::stop`].
pub struct Listening {
    pub address: std::net::SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Listening {
    pub async fn serve(router: Router, options: ServerOptions) -> Result<Listening, String> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| e.to_string())?;
        let address = listener.local_addr().map_err(|e| e.to_string())?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(sluice_http::run(listener, router, options, async move {
            let _ = stopped.await;
        }));
        Ok(Listening {
            address,
            stop,
            server,
        })
    }

    /// Stops the server and waits for it to end.
    pub async fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.server.await;
    }
}

impl Served {
    pub async fn start(name: &str, setup: &str, config: RestConfig) -> Result<Served, String> {
        Served::start_with(
            name,
            setup,
            config,
            PoolSettings::default(),
            ServerOptions::default(),
        )
        .await
    }

    /// As [`Served::start`], with the pool's and the HTTP server's settings.
    pub async fn start_with(
        name: &str,
        setup: &str,
        config: RestConfig,
        pool_settings: PoolSettings,
        options: ServerOptions,
    ) -> Result<Served, String> {
        let base = sluice_embedded::test_database().url().to_owned();
        let dbname = create_database(&base, "rest", name).await?;
        let url = url_for(&base, &dbname, None);
        let mut conn = Connection::connect(&url)
            .await
            .map_err(|e| format!("connecting: {e}"))?;
        conn.batch_execute(setup)
            .await
            .map_err(|e| format!("setup: {e}"))?;
        let cache = Arc::new(
            sluice_rest::schema::load_searching(
                &mut conn,
                &config.schemas,
                &config.extra_search_path,
                &config.hoisted_tx_settings,
            )
            .await
            .map_err(|e| format!("loading the schema cache: {e}"))?,
        );
        drop(conn);
        let pool = Pool::connect(&url, pool_settings).map_err(|e| format!("pool: {e}"))?;
        let api = RestApi::new(pool.clone(), config, SchemaSource::Fixed(cache));
        let mut router = Router::new();
        router.mount("", Arc::new(api));
        let listening = Listening::serve(router, options).await?;
        Ok(Served {
            address: listening.address,
            url,
            dbname,
            listening,
            pool,
        })
    }

    /// Stops the server and drops the database.
    pub async fn finish(self) {
        self.listening.stop().await;
        self.pool.close().await;
        let base = sluice_embedded::test_database().url().to_owned();
        drop_database(&base, &self.dbname).await;
    }
}

/// The fixtures schema (tests/specs/fixtures.sql).
pub fn fixtures() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/specs/fixtures.sql"))
        .unwrap_or_default()
}

/// An answer: status, headers, body.
pub struct Answer {
    pub status: u16,
    pub headers: http::HeaderMap,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// Sends one request; `chunked` sends the body in pieces without a `Content-Length`.
pub async fn send(
    address: std::net::SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
    chunked: bool,
) -> Answer {
    match try_send(address, method, path, headers, body, chunked).await {
        Ok(answer) => answer,
        Err(error) => panic!("{method} {path}: {error}"),
    }
}

/// As [`send`], with a failure to connect, send or read as an error.
pub async fn try_send(
    address: std::net::SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
    chunked: bool,
) -> Result<Answer, String> {
    use http_body_util::BodyExt;
    let stream = tokio::net::TcpStream::connect(address)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .map_err(|e| format!("handshake: {e}"))?;
    tokio::spawn(connection);
    let mut request = http::Request::builder()
        .method(method)
        .uri(path)
        .header(http::header::HOST, address.to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let body: http_body_util::combinators::BoxBody<bytes::Bytes, std::convert::Infallible> =
        if chunked {
            let pieces: Vec<Result<http_body::Frame<bytes::Bytes>, std::convert::Infallible>> =
                body.chunks(7919)
                    .map(|c| Ok(http_body::Frame::data(bytes::Bytes::copy_from_slice(c))))
                    .collect();
            http_body_util::StreamBody::new(futures_util::stream::iter(pieces)).boxed()
        } else {
            http_body_util::Full::new(bytes::Bytes::from(body)).boxed()
        };
    let request = request.body(body).map_err(|e| format!("request: {e}"))?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| format!("send: {e}"))?;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes().to_vec())
        .unwrap_or_default();
    Ok(Answer {
        status,
        headers,
        body,
    })
}
