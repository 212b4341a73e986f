//! The InfluxDB write API over PostgreSQL: `/write`, `/api/v2/write`, `/ping`, `/health`,
//! `/query` (databases and retention policies), `/api/v2/buckets`.
//!
//! Mount it on the HTTP server at each of [`PATHS`]:
//!
//! ```no_run
//! # fn demo(pool: sluice_pg::Pool) {
//! use sluice_influx::{InfluxApi, InfluxConfig};
//! let api = InfluxApi::new(pool, InfluxConfig::default());
//! let mut router = sluice_http::Router::new();
//! api.mount_all(&mut router);
//! # }
//! ```
//!
//! A database (v1 `db`) or bucket (v2 `bucket`, without a `/retention` suffix) is a PostgreSQL
//! schema, created on first write; a measurement is a table in it, created on first write with
//! `time timestamptz`, one `text` column per tag (or one `jsonb` column `tags`, see
//! [`InfluxConfig::tags_as_jsonb`]) and one column per field typed from its value (`float8`,
//! `int8`, `numeric` for unsigned, `text`, `boolean`). New tags and fields add columns. Each
//! request is one transaction of binary COPYs, one per table; 204 only after COMMIT. Times are
//! kept to the microsecond (PostgreSQL's `timestamptz`), cut towards the past.

#![warn(missing_docs)]

mod buckets;
mod catalog;
mod config;
mod copy;
mod ddl;
mod encode;
pub mod influxql;
mod merge;
mod plan;
mod policy;
mod query;
mod reply;
mod request;
mod retention;
mod shape;
mod write;

pub use catalog::{CATALOG_DDL, CATALOG_SCHEMA};
pub use config::{
    DEFAULT_MAX_COLUMNS_PER_TABLE, Duplicates, InfluxConfig, POSTGRES_MAX_COLUMNS, parse_retention,
};
pub use plan::RESERVED_COLUMNS;
pub use reply::{ApiError, INFLUXDB_VERSION};
pub use retention::RetentionPass;

use http::{Method, StatusCode};
use reply::{json_response, no_content, with_version};
use request::QueryParams;
use sluice_http::{Mount, MountFuture, Request, RequestContext, Response, Router, empty};
use sluice_lineproto::{Options, Precision};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The URL prefixes the API answers; mount the same [`InfluxApi`] at each.
pub const PATHS: &[&str] = &[
    "/write",
    "/api/v2/write",
    "/api/v2/buckets",
    "/api/v2/orgs",
    "/ping",
    "/health",
    "/query",
];

/// The write API: a pool to write with, its options, and the known table shapes.
pub struct InfluxApi {
    pool: sluice_pg::Pool,
    config: InfluxConfig,
    shapes: shape::ShapeCache,
    scratch: parking_lot::Mutex<Vec<write::Scratch>>,
    /// Whether Sluice's catalog ([`CATALOG_SCHEMA`]) is known to exist.
    catalog_ready: AtomicBool,
    /// Whether the catalog keeps the retention clients set (false: an earlier Sluice made it
    /// and this role may not add the columns).
    policies_kept: AtomicBool,
    /// Each database's retention policy as clients set it, as last read.
    policies: policy::PolicyCache,
    /// Whether writes answer with their commit position (`Sluice-Lsn`, `sluice_http::lsn`).
    lsn: sluice_http::lsn::LsnOptions,
}

/// Scratch buffers kept for reuse: about one per concurrent request.
const SCRATCH_KEPT: usize = 16;
/// Scratch grown past this by a very large body is dropped rather than kept.
const SCRATCH_MAX_BYTES: usize = 64 << 20;

impl std::fmt::Debug for InfluxApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InfluxApi")
            .field("tags_as_jsonb", &self.config.tags_as_jsonb)
            .field("auth", &!self.config.tokens.is_empty())
            .finish_non_exhaustive()
    }
}

impl InfluxApi {
    /// The API writing through `pool`.
    pub fn new(pool: sluice_pg::Pool, config: InfluxConfig) -> Arc<InfluxApi> {
        Arc::new(InfluxApi {
            pool,
            config,
            shapes: shape::ShapeCache::default(),
            scratch: parking_lot::Mutex::new(Vec::new()),
            catalog_ready: AtomicBool::new(false),
            policies_kept: AtomicBool::new(true),
            policies: policy::PolicyCache::default(),
            lsn: sluice_http::lsn::LsnOptions::default(),
        })
    }

    /// The API writing through `pool`, its writes answering with their commit position as
    /// `options` say (for clients that then read from replicas through the REST API or views).
    pub fn with_lsn(
        pool: sluice_pg::Pool,
        config: InfluxConfig,
        options: sluice_http::lsn::LsnOptions,
    ) -> Arc<InfluxApi> {
        let mut api = InfluxApi::new(pool, config);
        if let Some(api) = Arc::get_mut(&mut api) {
            api.lsn = options;
        }
        api
    }

    /// Makes Sluice's catalog on first use (a no-op once known to exist).
    async fn ensure_catalog(&self, conn: &mut sluice_pg::Connection) -> sluice_pg::Result<()> {
        if self.catalog_ready.load(Ordering::Acquire) {
            return Ok(());
        }
        let mut kept = true;
        match catalog::state(conn).await? {
            catalog::CatalogState::Current => {}
            catalog::CatalogState::Missing => catalog::create(conn).await?,
            catalog::CatalogState::Old => match catalog::migrate(conn).await {
                Ok(()) => {}
                Err(error) if error.is_code(sluice_pg::sqlstate::INSUFFICIENT_PRIVILEGE) => {
                    tracing::warn!(
                        "the Influx catalog sluice_influx.databases was made by an earlier \
                         Sluice and this role may not add its retention columns: retention \
                         set by clients is not kept until its owner runs {}",
                        catalog::CATALOG_MIGRATION.replace('\n', " ")
                    );
                    kept = false;
                }
                Err(error) => return Err(error),
            },
        }
        self.policies_kept.store(kept, Ordering::Release);
        self.catalog_ready.store(true, Ordering::Release);
        Ok(())
    }

    /// Forgets what is known of `schema` and of the catalog (something vanished behind the
    /// cache's back).
    fn forget(&self, schema: &str) {
        self.shapes.forget_schema(schema);
        self.catalog_ready.store(false, Ordering::Release);
    }

    fn take_scratch(&self) -> write::Scratch {
        self.scratch.lock().pop().unwrap_or_default()
    }

    fn give_back_scratch(&self, scratch: write::Scratch) {
        if scratch.allocated_bytes() > SCRATCH_MAX_BYTES {
            return;
        }
        let mut kept = self.scratch.lock();
        if kept.len() < SCRATCH_KEPT {
            kept.push(scratch);
        }
    }

    /// Mounts the API at each of [`PATHS`].
    pub fn mount_all(self: &Arc<Self>, router: &mut Router) {
        for path in PATHS {
            router.mount(path, self.clone());
        }
    }

    async fn answer(
        self: Arc<Self>,
        request: Request,
        context: RequestContext,
    ) -> Result<Response, ApiError> {
        let path = request.uri().path().trim_end_matches('/').to_owned();
        let method = request.method().clone();
        match path.as_str() {
            "/ping" => match method {
                Method::GET | Method::HEAD => Ok(ping(&request)),
                _ => Err(ApiError::MethodNotAllowed),
            },
            "/health" => match method {
                Method::GET | Method::HEAD => Ok(self.health().await),
                _ => Err(ApiError::MethodNotAllowed),
            },
            "/write" | "/api/v2/write" => {
                if method != Method::POST {
                    return Err(ApiError::MethodNotAllowed);
                }
                let params = QueryParams::parse(request.uri().query());
                self.authorize(&request, &params)?;
                let v2 = path != "/write";
                let schema = database(&params, v2)?;
                let access = self.config.database_access(&schema)?;
                let options = Options::now().with_precision(precision(&params, v2)?);
                let strict = !accept_partial(&params, self.config.accept_partial)?;
                // Only the cookie keeps the largest position the client presented.
                let named = match self.lsn.cookie {
                    Some(_) => sluice_http::lsn::requested(request.headers())
                        .ok()
                        .flatten(),
                    None => None,
                };
                let body = request::body(request, &context).await?;
                let outcome = write::write(&self, &schema, access, &body, options, strict).await?;
                let rejected = outcome.rejected;
                let mut response = if rejected.is_empty() {
                    no_content()
                } else if outcome.written == 0 && rejected.parse_only {
                    return Err(ApiError::Invalid(rejected.joined()));
                } else {
                    // Some points were written: the answer is an error, their commit stands.
                    ApiError::PartialWrite {
                        reasons: rejected.joined(),
                        dropped: rejected.dropped,
                        v2,
                    }
                    .response()
                };
                if let Some(lsn) = outcome.lsn {
                    sluice_http::lsn::stamp(response.headers_mut(), lsn, named, &self.lsn);
                }
                Ok(response)
            }
            "/query" => {
                if method != Method::GET && method != Method::POST {
                    return Err(ApiError::MethodNotAllowed);
                }
                let mut params = QueryParams::parse(request.uri().query());
                self.authorize(&request, &params)?;
                if method == Method::POST {
                    let body = request::body(request, &context).await?;
                    params.extend_from_form(&body);
                }
                let q = params
                    .get("q")
                    .ok_or_else(|| ApiError::Invalid("missing required parameter \"q\"".into()))?;
                let statements = influxql::parse(q)?;
                let body = query::run(&self, &statements, params.get("db")).await?;
                Ok(json_response(StatusCode::OK, body))
            }
            _ if path.starts_with("/api/v2/buckets") || path.starts_with("/api/v2/orgs") => {
                let params = QueryParams::parse(request.uri().query());
                self.authorize(&request, &params)?;
                let query = request.uri().query().map(str::to_owned);
                let body = if method == Method::POST || method == Method::PATCH {
                    request::body(request, &context).await?
                } else {
                    bytes::Bytes::new()
                };
                buckets::answer(&self, &method, &path, query.as_deref(), &body).await
            }
            _ => Err(ApiError::NotFound),
        }
    }

    fn authorize(&self, request: &Request, params: &QueryParams) -> Result<(), ApiError> {
        if self.config.tokens.is_empty() && self.config.jwt.is_none() {
            return Ok(());
        }
        let Some(secret) = request::presented_secret(request, params) else {
            return Err(ApiError::Unauthorized);
        };
        if request::token_matches(&self.config.tokens, &secret) {
            return Ok(());
        }
        match &self.config.jwt {
            Some(jwt) if jwt.verify(&secret).is_ok() => Ok(()),
            _ => Err(ApiError::Unauthorized),
        }
    }

    /// 200 when a connection answers, 503 otherwise; InfluxDB 2.x's health body.
    async fn health(&self) -> Response {
        let check = async {
            let mut conn = self.pool.get().await.map_err(reply::from_pool)?;
            conn.execute("SELECT 1", &[]).await.map_err(reply::from_db)
        };
        let (status, state, message) = match check.await {
            Ok(_) => (
                StatusCode::OK,
                "pass",
                "ready for queries and writes".to_owned(),
            ),
            Err(error) => {
                let cause = error.cause().unwrap_or_default();
                tracing::debug!(%error, cause, "/health: the database does not answer");
                (StatusCode::SERVICE_UNAVAILABLE, "fail", error.to_string())
            }
        };
        let mut body = Vec::new();
        body.extend_from_slice(b"{\"name\":\"influxdb\",\"message\":");
        sluice_formats::encode::write_json_str(&mut body, &message);
        body.extend_from_slice(
            format!(
                ",\"status\":\"{state}\",\"checks\":[],\"version\":\"{INFLUXDB_VERSION}\",\"commit\":\"sluice\"}}"
            )
            .as_bytes(),
        );
        json_response(status, body)
    }
}

impl Mount for InfluxApi {
    fn call(self: Arc<Self>, request: Request, context: RequestContext) -> MountFuture {
        Box::pin(async move {
            match self.answer(request, context).await {
                Ok(response) => response,
                Err(error) => {
                    if error.status().is_server_error() {
                        let cause = error.cause().unwrap_or_default();
                        tracing::warn!(%error, cause, "Influx API request failed");
                    }
                    error.response()
                }
            }
        })
    }
}

/// `/ping`: 204 with the version headers, or 200 with `{"version": ...}` when `verbose=true`.
fn ping(request: &Request) -> Response {
    let params = QueryParams::parse(request.uri().query());
    if params.get("verbose").is_some_and(|v| v == "true") {
        let body = format!("{{\"version\":\"{INFLUXDB_VERSION}\"}}").into_bytes();
        return json_response(StatusCode::OK, body);
    }
    with_version(StatusCode::NO_CONTENT, empty())
}

/// The schema a write goes to: v1's `db`, or v2's `bucket` without a `/retention` suffix
/// (InfluxDB 1.8's v2 compatibility names buckets `database/retention-policy`).
fn database(params: &QueryParams, v2: bool) -> Result<String, ApiError> {
    if v2 {
        let bucket = params
            .get("bucket")
            .ok_or_else(|| ApiError::Invalid("bucket is required".into()))?;
        let name = bucket.split('/').next().unwrap_or(bucket);
        if name.is_empty() {
            return Err(ApiError::Invalid(format!("bad bucket name {bucket:?}")));
        }
        Ok(name.to_owned())
    } else {
        params
            .get("db")
            .map(str::to_owned)
            .ok_or_else(|| ApiError::Invalid("database is required".into()))
    }
}

/// The `accept_partial` parameter (InfluxDB 3's), else the configured default.
fn accept_partial(params: &QueryParams, default: bool) -> Result<bool, ApiError> {
    match params.get("accept_partial") {
        None => Ok(default),
        Some("true") => Ok(true),
        Some("false") => Ok(false),
        Some(other) => Err(ApiError::Invalid(format!(
            "invalid accept_partial {other:?}: expected true or false"
        ))),
    }
}

/// The `precision` parameter: v2's `ns us ms s`, and v1's `n u` too (default nanoseconds).
fn precision(params: &QueryParams, v2: bool) -> Result<Precision, ApiError> {
    let Some(value) = params.get("precision") else {
        return Ok(Precision::Nanoseconds);
    };
    let accepted = if v2 {
        matches!(value, "ns" | "us" | "ms" | "s")
    } else {
        true
    };
    match value.parse::<Precision>() {
        Ok(precision) if accepted => Ok(precision),
        _ => Err(ApiError::Invalid(format!(
            "invalid precision {value:?}: expected {}",
            if v2 {
                "ns, us, ms or s"
            } else {
                "n, ns, u, us, ms or s"
            }
        ))),
    }
}
