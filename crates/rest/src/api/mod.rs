//! The REST API as a mount of the HTTP server: each request parsed, its schema and resource
//! found in the schema cache, and handed to the read, write or call path.

mod batch;
mod bulk;
mod call;
mod context;
mod cors;
mod explain;
mod nested;
mod read;
mod write;

pub use bulk::STREAM_THRESHOLD;
pub use context::RequestContext;

use crate::config::RestConfig;
use crate::error::{ApiError, ErrorHeader};
use crate::request::{self, ApiRequest, Method, PathFilter, Resource};
use crate::response::applied::{Applying, Honoured};
use crate::schema::SchemaCache;
use http::{HeaderValue, StatusCode, header};
use sluice_http::{Mount, MountFuture, Request, RequestContext as HttpContext, Response, full};
use std::sync::Arc;

/// Where the current schema cache comes from.
#[derive(Clone)]
pub enum SchemaSource {
    /// One snapshot for good (tests).
    Fixed(Arc<SchemaCache>),
    /// The reloadable cache; a request for a name it does not know reloads it (at most once per
    /// [`MISS_RELOAD_INTERVAL`]) before answering 404.
    Handle(Arc<crate::schema::SchemaHandle>),
}

/// The shortest time between reloads caused by requests for unknown names.
pub const MISS_RELOAD_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

impl SchemaSource {
    fn current(&self) -> Arc<SchemaCache> {
        match self {
            SchemaSource::Fixed(cache) => cache.clone(),
            SchemaSource::Handle(handle) => handle.current(),
        }
    }

    /// The cache, reloaded first when it lacks what `resource` names in `schema`.
    async fn for_resource(&self, resource: &Resource, schema: &str) -> Arc<SchemaCache> {
        let cache = self.current();
        let SchemaSource::Handle(handle) = self else {
            return cache;
        };
        let known = match resource {
            Resource::Relation(name) => cache.table(schema, name).is_some(),
            Resource::Routine(name) => cache.routine(schema, name).is_some(),
            Resource::Schema => true,
        };
        if known || !handle.refresh(MISS_RELOAD_INTERVAL).await {
            return cache;
        }
        handle.current()
    }
}

/// The REST API over a pool: mount it at the API's prefix.
pub struct RestApi {
    pub(crate) pool: sluice_pg::Pool,
    /// Streaming replicas table and view reads go to, when configured.
    pub(crate) replicas: Option<Arc<sluice_pg::pool::ReadPools>>,
    pub(crate) config: RestConfig,
    schema: SchemaSource,
    /// The pipelining mode small reads go through, started on first use.
    multiplexer: std::sync::OnceLock<Option<sluice_pg::pool::Multiplexer>>,
    /// Statements whose columns need the catalog for their JSON: they are streamed instead.
    pub(crate) needs_catalog: parking_lot::RwLock<std::collections::HashSet<String>>,
    /// The server's time zone names (`pg_timezone_names`), read when a request first asks for
    /// one with `Prefer: timezone`.
    timezones: tokio::sync::OnceCell<std::collections::HashSet<String>>,
    /// Identities of verified tokens, when `jwt_cache_max_lifetime` is set.
    jwt_cache: Option<crate::auth::JwtCache>,
    /// Whether writes answer with their commit position (`Sluice-Lsn`), and the cookie.
    pub(crate) lsn: sluice_http::lsn::LsnOptions,
}

/// The relation or routine a request is for, in its schema, with the context it runs in.
pub(crate) struct Target {
    pub schema: String,
    pub name: String,
    /// The settings the request's transaction starts with, when it needs any: a role to run
    /// as, or a search path other than the connection's.
    pub context: Option<RequestContext>,
    /// The commit position the request named (`Sluice-Lsn`): a read must see it.
    pub named: Option<sluice_pg::Lsn>,
}

impl Target {
    /// The statements the request's transaction starts with: its settings, then the
    /// pre-request function; none when it needs no context.
    pub(crate) fn context_statements(&self) -> Vec<crate::sql::Statement> {
        self.context
            .as_ref()
            .map(RequestContext::statements)
            .unwrap_or_default()
    }

    /// The role's isolation level above the default, if any.
    pub(crate) fn isolation(&self) -> Option<crate::schema::IsolationLevel> {
        self.context.as_ref().and_then(|c| c.isolation)
    }

    /// The statements a call's transaction starts with: the context's, with the function's
    /// hoisted settings set after the others (in a statement of their own when the request
    /// needs no other context), read-only when the function is not `VOLATILE` (a GET's is
    /// already). A `VOLATILE` function called by GET (`by_get`) runs read-only even without a
    /// context, as PostgREST's access mode has it: one that writes fails with 25006.
    pub(crate) fn call_context_statements(
        &self,
        function_settings: &[(String, String)],
        volatile: bool,
        by_get: bool,
    ) -> Vec<crate::sql::Statement> {
        let read_only = !volatile && self.context.as_ref().is_some_and(|c| !c.read_only);
        let guard = volatile && by_get && self.context.is_none();
        if function_settings.is_empty() && !read_only && !guard {
            return self.context_statements();
        }
        match &self.context {
            Some(context) => {
                let mut context = context.clone();
                context.function_settings = function_settings.to_vec();
                context.read_only |= read_only;
                context.statements()
            }
            None => {
                let mut pairs = function_settings.to_vec();
                if guard {
                    pairs.push(("transaction_read_only".to_string(), "on".to_string()));
                }
                vec![context::settings_statement(&pairs)]
            }
        }
    }

    /// The request's `Preference-Applied`, for its kind: what its settings and context honour.
    pub(crate) fn applied(
        &self,
        api: &RestApi,
        kind: Applying,
        prefer: &request::Preferences,
    ) -> Option<HeaderValue> {
        applied(api, kind, prefer, self.context.as_ref())
    }
}

/// `Preference-Applied` for a request of `kind` running in `context`: `tx=` is honoured when
/// the settings allow overriding, `timezone=` when the server knew the zone (the context runs
/// in it).
pub(crate) fn applied(
    api: &RestApi,
    kind: Applying,
    prefer: &request::Preferences,
    context: Option<&RequestContext>,
) -> Option<HeaderValue> {
    let honoured = Honoured {
        tx: api.config.tx_end.allows_override(),
        timezone: context.and_then(|c| c.timezone.as_deref()),
    };
    crate::response::applied::preference_applied(kind, prefer, honoured)
}

impl RestApi {
    /// The API over `pool`, answering from `schema` with the settings in `config`.
    pub fn new(pool: sluice_pg::Pool, config: RestConfig, schema: SchemaSource) -> RestApi {
        let jwt_cache = (config.jwt_cache_max_lifetime > 0).then(|| {
            crate::auth::JwtCache::new(std::time::Duration::from_secs(
                config.jwt_cache_max_lifetime,
            ))
        });
        RestApi {
            pool,
            replicas: None,
            config,
            schema,
            multiplexer: std::sync::OnceLock::new(),
            needs_catalog: Default::default(),
            timezones: tokio::sync::OnceCell::new(),
            jwt_cache,
            lsn: sluice_http::lsn::LsnOptions::default(),
        }
    }

    /// Sends table and view reads (GET, HEAD) and calls of functions by GET (`STABLE` or
    /// `IMMUTABLE`: a GET of a volatile one is refused) to `replicas` while one is healthy;
    /// writes and POST calls stay on the primary's pool. Writes then answer with their commit
    /// position (`Sluice-Lsn`), and a read that names one is served by a replica that has
    /// replayed it, else by the primary.
    pub fn with_replicas(mut self, replicas: Arc<sluice_pg::pool::ReadPools>) -> RestApi {
        self.replicas = Some(replicas);
        self.lsn.report = true;
        self
    }

    /// Whether writes answer with their commit position, and set the cookie (by default they
    /// answer with it once [`RestApi::with_replicas`] was given replicas).
    pub fn with_lsn(mut self, options: sluice_http::lsn::LsnOptions) -> RestApi {
        self.lsn = options;
        self
    }

    /// The time zone `Prefer: timezone` asks for, when the server knows it (PostgREST's rule:
    /// an unknown one is ignored, or refused with PGRST122 under `handling=strict`).
    async fn requested_timezone(&self, request: &ApiRequest) -> Result<Option<String>, ApiError> {
        let Some(asked) = &request.prefer.timezone else {
            return Ok(None);
        };
        let known = self
            .timezones
            .get_or_try_init(|| async {
                let mut conn = self.pool.get().await.map_err(|e| ApiError::from_pool(&e))?;
                let rows = conn
                    .query("SELECT name FROM pg_catalog.pg_timezone_names", &[])
                    .await
                    .map_err(|e| ApiError::from_pg(&e, false))?;
                Ok::<_, ApiError>(
                    rows.iter()
                        .filter_map(|row| row.raw(0))
                        .map(|name| String::from_utf8_lossy(name).into_owned())
                        .collect(),
                )
            })
            .await?;
        if known.contains(asked) {
            return Ok(Some(asked.clone()));
        }
        if request.prefer.handling == Some(request::PreferHandling::Strict) {
            return Err(invalid_preferences(&[format!("timezone={asked}")]));
        }
        Ok(None)
    }

    /// The pipelining mode over the pool (it needs the runtime, so it starts on first use).
    pub(crate) fn multiplexer(&self) -> Option<&sluice_pg::pool::Multiplexer> {
        self.multiplexer
            .get_or_init(|| {
                self.pool
                    .multiplexer(self.pool.settings().max_size())
                    .inspect_err(|error| {
                        tracing::warn!(%error, "small reads run without the pipelining mode")
                    })
                    .ok()
            })
            .as_ref()
    }

    async fn handle(self: Arc<Self>, request: Request, http: HttpContext) -> Response {
        let origins = &self.config.cors_allowed_origins;
        // A browser's preflight carries no credentials: it is answered before authentication.
        if let Some(answer) = cors::preflight(request.method(), request.headers(), origins) {
            return answer;
        }
        // Only a cross-origin request keeps its headers for the answer's CORS headers.
        let cross_origin = request
            .headers()
            .contains_key(header::ORIGIN)
            .then(|| request.headers().clone());
        let mut response = self.clone().authenticate_and_respond(request, http).await;
        if let Some(headers) = cross_origin {
            cors::decorate(&headers, &self.config.cors_allowed_origins, &mut response);
        }
        response
    }

    async fn authenticate_and_respond(
        self: Arc<Self>,
        request: Request,
        http: HttpContext,
    ) -> Response {
        let (jwt, anon_role) = (self.config.jwt.as_deref(), self.config.anon_role.as_deref());
        let authorization = request.headers().get(header::AUTHORIZATION);
        let identity = match &self.jwt_cache {
            Some(cache) => cache.authenticate(jwt, anon_role, authorization),
            None => crate::auth::authenticate(jwt, anon_role, authorization),
        };
        let identity = match identity {
            Ok(identity) => identity,
            Err(error) => return error_response(&error),
        };
        let authenticated = identity.authenticated();
        let mut response = self.respond_as(identity, request, http).await;
        // Insufficient privilege is 401 for the anonymous role and 403 for a token's role, as
        // PostgREST answers it (every 401 of the token itself was answered above).
        if authenticated && response.status() == StatusCode::UNAUTHORIZED {
            *response.status_mut() = StatusCode::FORBIDDEN;
        }
        response
    }

    async fn respond_as(
        self: Arc<Self>,
        identity: crate::auth::Identity,
        request: Request,
        http: HttpContext,
    ) -> Response {
        let (parts, body) = request.into_parts();
        let path = http.rest(parts.uri.path());
        let path = if path.is_empty() { "/" } else { path };
        let mut parsed =
            match request::parse_request(&parts.method, path, parts.uri.query(), &parts.headers) {
                Ok(parsed) => parsed,
                Err(error) => return error_response(&error),
            };
        let named = match sluice_http::lsn::requested(&parts.headers) {
            Ok(named) => named,
            Err(bad) => return error_response(&bad_lsn(&bad)),
        };
        let schema = match self.schema_for(&parsed) {
            Ok(schema) => schema,
            Err(error) => return error_response(&error),
        };
        let cache = self.schema.for_resource(&parsed.resource, &schema).await;
        crate::plan::write::ignore_keyless_resolution(&mut parsed, &cache, &schema);
        // Only a request that runs as another role or with another search path pays for the
        // settings: the connection's own path (read with the cache) often resolves as the
        // request's would, `"$user", public` as `public, public` when the user has no schema.
        let pre_request = self.config.pre_request.as_deref();
        if let Err(error) = strict_preferences(&parsed.prefer) {
            return error_response(&error);
        }
        let timezone = match self.requested_timezone(&parsed).await {
            Ok(timezone) => timezone,
            Err(error) => return error_response(&error),
        };
        let needs_context = identity.role.is_some()
            || identity.claims_json.is_some()
            || !context::search_path_matches(
                &cache.connection_search_path,
                &schema,
                &self.config.extra_search_path,
            )
            || pre_request.is_some()
            || timezone.is_some();
        let context = needs_context.then(|| {
            let mut context = RequestContext::new(
                identity,
                &schema,
                &self.config.extra_search_path,
                &parts.method,
                path,
                &parts.headers,
            );
            context.pre_request = pre_request.map(context::quote_function);
            context.timezone = timezone;
            context.read_only = matches!(parsed.method, Method::Get | Method::Head);
            if let Some(config) = context.role.as_ref().and_then(|r| cache.roles.get(r)) {
                context.role_settings = config.settings.clone();
                context.isolation = config.isolation;
            }
            context
        });
        let needs_body = matches!(parsed.method, Method::Post | Method::Patch | Method::Put);
        let length: Option<u64> = parts
            .headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok());
        if let (Resource::Relation(name), Method::Post) = (&parsed.resource, parsed.method)
            && bulk::streams(&parsed, length)
        {
            let reader = match sluice_http::body::BodyReader::new(
                body,
                length,
                http.body_limit,
                http.body_timeout,
            ) {
                Ok(reader) => reader,
                Err(error) => {
                    return error_response(&ApiError::new(
                        error.status(),
                        "PGRST102",
                        error.to_string(),
                    ));
                }
            };
            let target = Target {
                schema,
                name: name.clone(),
                context,
                named,
            };
            return bulk::insert(&self, &parsed, &target, &cache, reader).await;
        }
        let body = if needs_body {
            match sluice_http::read_body(body, length, http.body_limit, http.body_timeout).await {
                Ok(bytes) => bytes,
                Err(error) => {
                    return error_response(&ApiError::new(
                        error.status(),
                        "PGRST102",
                        error.to_string(),
                    ));
                }
            }
        } else {
            bytes::Bytes::new()
        };
        match &parsed.resource {
            Resource::Relation(name) => {
                let target = Target {
                    schema,
                    name: name.clone(),
                    context,
                    named,
                };
                let filters = match filters(&parsed) {
                    Ok(filters) => filters,
                    Err(error) => return error_response(&error),
                };
                match parsed.method {
                    Method::Get | Method::Head => {
                        read::read(&self, &parsed, &target, &cache, filters).await
                    }
                    Method::Post | Method::Patch | Method::Put | Method::Delete => {
                        write::write(&self, &parsed, &target, &cache, filters, body).await
                    }
                    Method::Options => {
                        options(&["OPTIONS", "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"])
                    }
                }
            }
            Resource::Routine(name) => {
                let target = Target {
                    schema,
                    name: name.clone(),
                    context,
                    named,
                };
                match parsed.method {
                    Method::Get | Method::Head | Method::Post => {
                        call::call(&self, &parsed, &target, &cache, body).await
                    }
                    Method::Options => options(&["OPTIONS", "GET", "HEAD", "POST"]),
                    _ => error_response(&ApiError::new(
                        StatusCode::METHOD_NOT_ALLOWED,
                        "PGRST101",
                        "Only GET or POST requests are allowed for function calls",
                    )),
                }
            }
            Resource::Schema if parsed.method == Method::Post => {
                batch::batch(&self, &parsed, &cache, context, named, body).await
            }
            Resource::Schema => {
                if !self.config.openapi {
                    return error_response(&ApiError::new(
                        StatusCode::NOT_FOUND,
                        "PGRST126",
                        "Root endpoint metadata is disabled",
                    ));
                }
                match parsed.method {
                    Method::Get | Method::Head => {}
                    // POST is the batch, answered above.
                    Method::Options => return options(&["OPTIONS", "GET", "HEAD", "POST"]),
                    _ => {
                        return error_response(&ApiError::new(
                            StatusCode::METHOD_NOT_ALLOWED,
                            "PGRST117",
                            format!("Unsupported HTTP method: {}", parts.method),
                        ));
                    }
                }
                let host = parts
                    .headers
                    .get(header::HOST)
                    .and_then(|h| h.to_str().ok())
                    .unwrap_or("localhost");
                let base = if http.prefix.is_empty() {
                    "/"
                } else {
                    &http.prefix
                };
                let document = crate::response::openapi::describe(&cache, &schema, host, base);
                let mut response = Response::new(full(document.to_string()));
                response.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/openapi+json; charset=utf-8"),
                );
                response
            }
        }
    }

    /// The schema of the request: its profile header, else the first exposed schema; 406
    /// PGRST106 for a schema that is not exposed.
    fn schema_for(&self, request: &ApiRequest) -> Result<String, ApiError> {
        let exposed = &self.config.schemas;
        match &request.profile {
            None => exposed.first().cloned().ok_or_else(|| {
                ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "PGRSTX00",
                    "No schema is exposed",
                )
            }),
            Some(asked) if exposed.contains(asked) => Ok(asked.clone()),
            Some(_) => Err(ApiError::new(
                StatusCode::NOT_ACCEPTABLE,
                "PGRST106",
                format!(
                    "Invalid schema: {}",
                    request.profile.as_deref().unwrap_or_default()
                ),
            )
            .hint(format!(
                "Only the following schemas are exposed: {}",
                exposed.join(", ")
            ))),
        }
    }
}

impl Mount for RestApi {
    fn call(self: Arc<Self>, request: Request, context: HttpContext) -> MountFuture {
        Box::pin(self.handle(request, context))
    }
}

/// The filters among a table request's parameters (all of them, for a table).
fn filters(request: &ApiRequest) -> Result<Vec<PathFilter>, ApiError> {
    request
        .query
        .params
        .iter()
        .map(|(key, value)| request::parse_filter(key, value))
        .collect()
}

/// 400 PGRSTX02 (Sluice's own) for a `Sluice-Lsn` header or cookie that is not a position.
fn bad_lsn(bad: &sluice_http::lsn::BadLsn) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, "PGRSTX02", bad.to_string())
        .details(bad.details())
        .hint(sluice_http::lsn::BadLsn::HINT)
}

/// Marks a write's answer with its commit position (`Sluice-Lsn`, and the cookie when asked).
pub(crate) fn stamp_lsn(
    api: &RestApi,
    response: &mut Response,
    lsn: Option<sluice_pg::Lsn>,
    named: Option<sluice_pg::Lsn>,
) {
    if let Some(lsn) = lsn {
        sluice_http::lsn::stamp(response.headers_mut(), lsn, named, &api.lsn);
    }
}

/// Ends a request's explicit transaction: committed, its position read in the same round trip
/// when writes report it (`Sluice-Lsn`), or rolled back.
pub(crate) async fn end_transaction(
    conn: &mut sluice_pg::Connection,
    commit: bool,
    report: bool,
) -> Result<Option<sluice_pg::Lsn>, ApiError> {
    let pg = |e: sluice_pg::Error| ApiError::from_pg(&e, false);
    match (commit, report) {
        (true, true) => conn.commit_lsn().await.map_err(pg),
        (true, false) => conn
            .batch_execute("COMMIT")
            .await
            .map(|()| None)
            .map_err(pg),
        (false, _) => conn
            .batch_execute("ROLLBACK")
            .await
            .map(|()| None)
            .map_err(pg),
    }
}

/// 404 PGRST205 for a relation the cache does not have.
pub(crate) fn table_not_found(schema: &str, name: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "PGRST205",
        format!("Could not find the table '{schema}.{name}' in the schema cache"),
    )
}

fn options(methods: &[&str]) -> Response {
    let mut response = Response::new(sluice_http::empty());
    if let Ok(allow) = HeaderValue::from_str(&methods.join(",")) {
        response.headers_mut().insert(header::ALLOW, allow);
    }
    response
}

/// An error in PostgREST's JSON shape.
pub(crate) fn error_response(error: &ApiError) -> Response {
    let mut response = Response::new(full(error.body()));
    *response.status_mut() = error.status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=utf-8"),
    );
    if matches!(
        error.status,
        StatusCode::SERVICE_UNAVAILABLE | StatusCode::GATEWAY_TIMEOUT
    ) {
        headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
    let extra = match error.header.as_deref() {
        Some(ErrorHeader::WwwAuthenticate(value)) => Some((header::WWW_AUTHENTICATE, value)),
        Some(ErrorHeader::ContentRange(value)) => Some((header::CONTENT_RANGE, value)),
        None => None,
    };
    if let Some((name, value)) = extra
        && let Ok(value) = HeaderValue::from_str(value)
    {
        headers.insert(name, value);
    }
    response
}

/// PostgREST's PGRST122: under `handling=strict`, preferences it does not know are refused (on
/// reads, writes and calls alike).
pub(crate) fn strict_preferences(prefer: &request::Preferences) -> Result<(), ApiError> {
    if prefer.handling == Some(request::PreferHandling::Strict) && !prefer.invalid.is_empty() {
        return Err(invalid_preferences(&prefer.invalid));
    }
    Ok(())
}

fn invalid_preferences(invalid: &[String]) -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "PGRST122",
        "Invalid preferences given with handling=strict",
    )
    .details(format!("Invalid preferences: {}", invalid.join(", ")))
}
