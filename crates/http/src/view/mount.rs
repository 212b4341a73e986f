//! `ViewMount`: a loaded view served under a URL prefix. Matches the path, answers 404 and 405,
//! checks the precondition, then runs GET and DELETE here and hands PUT, PATCH and POST to
//! `write::handle`.

use crate::mount::{Mount, MountFuture, Request, RequestContext, Response, empty};
use crate::view::error::ApiError;
use crate::view::load::{ViewError, load_file};
use crate::view::model::{Endpoint, Failed, Return, Source, View};
use crate::view::path::{match_path, query_parameter, segments};
use crate::view::precondition::{EvalError, Facts, holds};
use crate::view::read::{self, ObjectGets, Query};
use crate::view::write::{self, WriteRequest};
use http::{HeaderValue, Method, StatusCode, header};
use std::path::Path;
use std::sync::Arc;

/// A view file's endpoints, answering under the prefix it is mounted at.
pub struct ViewMount {
    view: View,
    pool: sluice_pg::Pool,
    objects: ObjectGets,
    /// Verifies the tokens of a view that requires roles.
    jwt: Option<Arc<crate::jwt::JwtConfig>>,
    /// Streaming replicas GETs go to, when configured.
    replicas: Option<Arc<sluice_pg::pool::ReadPools>>,
    /// Whether writes answer with their commit position (`Sluice-Lsn`), and the cookie.
    lsn: crate::lsn::LsnOptions,
}

impl ViewMount {
    /// Serves `view` with connections from `pool`.
    pub fn new(view: View, pool: sluice_pg::Pool) -> ViewMount {
        ViewMount {
            view,
            pool,
            objects: ObjectGets::new(),
            jwt: None,
            replicas: None,
            lsn: crate::lsn::LsnOptions::default(),
        }
    }

    /// Sends GETs and HEADs to `replicas` while one is healthy (the primary's pool, given to
    /// [`ViewMount::new`], keeps preconditions, writes and deletes). A GET a replica answers
    /// with 503 before any row (it went away, or has no connection to give) is taken out and
    /// the GET runs again on the primary: a read changes nothing, so that is safe.
    ///
    /// Writes then answer with their commit position (`Sluice-Lsn`), and a GET that names one
    /// is served by a replica that has replayed it, else by the primary.
    pub fn with_replicas(mut self, replicas: Arc<sluice_pg::pool::ReadPools>) -> Self {
        self.replicas = Some(replicas);
        self.lsn.report = true;
        self
    }

    /// Whether writes answer with their commit position, and set the cookie (by default they
    /// answer with it once [`ViewMount::with_replicas`] was given replicas).
    pub fn with_lsn(mut self, options: crate::lsn::LsnOptions) -> Self {
        self.lsn = options;
        self
    }

    /// A write's answer with the `Sluice-Lsn` header (and cookie) of the commit it carries.
    fn stamped(&self, mut response: Response, named: Option<sluice_pg::Lsn>) -> Response {
        if let Some(committed) = response
            .extensions_mut()
            .remove::<crate::view::write::Committed>()
        {
            crate::lsn::stamp(response.headers_mut(), committed.0, named, &self.lsn);
        }
        response
    }

    /// Runs a GET or HEAD of `returns` on `pool`; on a replica, `replica` holds its lease (kept
    /// until the answer's last byte) and the position the read must see there, if any.
    async fn get(
        &self,
        pool: &sluice_pg::Pool,
        multiplexer: Option<&sluice_pg::pool::Multiplexer>,
        query: Query,
        returns: Return,
        parts: &http::request::Parts,
        replica: Option<(sluice_pg::pool::ReplicaLease, Option<sluice_pg::Lsn>)>,
    ) -> Response {
        let accept = parts.headers.get(header::ACCEPT);
        let (lease, guard) = match replica {
            Some((lease, guard)) => (Some(lease), guard),
            None => (None, None),
        };
        match returns {
            Return::Object => {
                read::get_object(pool, multiplexer, &self.objects, query, guard).await
            }
            // A HEAD reads no rows: nothing it answers depends on what was replayed.
            returns if parts.method == Method::HEAD => {
                read::head_rows(pool, &query, returns, accept).await
            }
            returns => read::get_rows(pool, query, returns, accept, lease, guard).await,
        }
    }

    /// Verifies bearer tokens with `jwt` (`[rest] jwt_secret`): a view whose file lists
    /// `roles` answers only requests whose token names one of them. Refused for such a view
    /// without keys, naming the file.
    pub fn with_jwt(mut self, jwt: Option<Arc<crate::jwt::JwtConfig>>) -> Result<Self, String> {
        if !self.view.roles.is_empty() && jwt.is_none() {
            return Err(format!(
                "{}: the view requires roles ({}) but no jwt_secret is set to verify tokens with",
                self.view.file.display(),
                self.view.roles.join(", ")
            ));
        }
        self.jwt = jwt;
        Ok(self)
    }

    /// For a view with `roles`, why the request may not use it: its bearer token must verify
    /// and name one of them.
    fn refusal(&self, headers: &http::HeaderMap) -> Option<ApiError> {
        if self.view.roles.is_empty() {
            return None;
        }
        let unauthorized = |message: &str| {
            ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", message).authenticate(format!(
                "Bearer error=\"invalid_token\", error_description=\"{message}\""
            ))
        };
        let Some(jwt) = &self.jwt else {
            return Some(unauthorized(
                "this view requires a token and none can be verified",
            ));
        };
        let Some(token) = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(crate::jwt::bearer_token)
        else {
            return Some(
                ApiError::new(
                    StatusCode::UNAUTHORIZED,
                    "unauthorized",
                    "this view requires a bearer token",
                )
                .authenticate("Bearer".to_string()),
            );
        };
        let claims = match jwt.verify(token) {
            Ok(claims) => claims,
            Err(error) => return Some(unauthorized(error.message)),
        };
        match jwt.role_of(&claims) {
            Some(role) if self.view.roles.iter().any(|r| r == role) => None,
            _ => Some(ApiError::new(
                StatusCode::FORBIDDEN,
                "forbidden",
                "the token's role may not use this view",
            )),
        }
    }

    /// Loads and checks the view file at `path`, then serves it with `pool`.
    pub fn load_file(
        path: impl AsRef<Path>,
        pool: sluice_pg::Pool,
    ) -> Result<ViewMount, ViewError> {
        Ok(ViewMount::new(load_file(path)?, pool))
    }

    /// The view being served.
    pub fn view(&self) -> &View {
        &self.view
    }

    async fn answer(self: Arc<Self>, request: Request, context: RequestContext) -> Response {
        let (parts, body) = request.into_parts();
        if let Some(error) = self.refusal(&parts.headers) {
            return error.into_response();
        }
        let named = match crate::lsn::requested(&parts.headers) {
            Ok(named) => named,
            Err(bad) => {
                return ApiError::new(StatusCode::BAD_REQUEST, "bad_lsn", bad.to_string())
                    .with_details(serde_json::Value::String(bad.details()))
                    .with_hint(crate::lsn::BadLsn::HINT)
                    .into_response();
            }
        };
        let rest = context.rest(parts.uri.path());
        let segments: Vec<&str> = segments(rest).collect();
        let mut captures: Vec<String> = Vec::new();
        let mut found = None;
        for endpoint in &self.view.endpoints {
            match match_path(&endpoint.path, &segments, &mut captures) {
                Ok(true) => {
                    found = Some(endpoint);
                    break;
                }
                Ok(false) => {}
                Err(error) => {
                    return ApiError::new(StatusCode::BAD_REQUEST, "bad_path", error.to_string())
                        .into_response();
                }
            }
        }
        let Some(mut endpoint) = found else {
            return ApiError::new(
                StatusCode::NOT_FOUND,
                "not_found",
                format!("no endpoint of this view matches {}", parts.uri.path()),
            )
            .into_response();
        };
        if parts.method == Method::OPTIONS {
            let mut response = Response::new(empty());
            *response.status_mut() = StatusCode::NO_CONTENT;
            response
                .headers_mut()
                .insert(header::ALLOW, allow(endpoint));
            return response;
        }
        if !answers(endpoint, &parts.method) {
            return method_not_allowed(endpoint, &parts.method);
        }
        // A failed precondition answers with a status, or hands the request to another endpoint
        // (whose own precondition is checked in turn).
        while let Some(precondition) = &endpoint.precondition {
            let facts = Facts {
                captures: &captures,
                headers: &parts.headers,
                pool: &self.pool,
            };
            match holds(&precondition.check, &facts).await {
                Ok(true) => break,
                Ok(false) => match &precondition.failed {
                    Failed::Status(status) => {
                        let status = StatusCode::from_u16(*status).unwrap_or(StatusCode::FORBIDDEN);
                        return ApiError::new(
                            status,
                            "precondition_failed",
                            "the request does not meet this endpoint's precondition",
                        )
                        .into_response();
                    }
                    Failed::View(other) => {
                        endpoint = other;
                        if !answers(endpoint, &parts.method) {
                            return method_not_allowed(endpoint, &parts.method);
                        }
                    }
                },
                Err(EvalError::Pool(error)) => return ApiError::from_pool(&error).into_response(),
                Err(EvalError::Db(error)) => return ApiError::from_pg(&error).into_response(),
            }
        }
        match parts.method {
            Method::GET | Method::HEAD => {
                let Some(command) = &endpoint.get else {
                    return method_not_allowed(endpoint, &parts.method);
                };
                let params = command
                    .arguments
                    .iter()
                    .map(|source| argument(source, &captures, &parts))
                    .collect();
                let query = Query {
                    sql: command.sql.clone(),
                    params,
                    captures_only: command
                        .arguments
                        .iter()
                        .all(|a| matches!(a, Source::Capture(_)))
                        && command.arguments.len() == captures.len(),
                };
                let lease = match (&self.replicas, named) {
                    (Some(pools), Some(lsn)) => pools.pick_replayed(lsn).await,
                    (Some(pools), None) => pools.pick(),
                    (None, _) => None,
                };
                if let (Some(lease), Some(pools)) = (lease, &self.replicas) {
                    let replica = lease.shared();
                    let response = self
                        .get(
                            replica.pool(),
                            replica.multiplexer(),
                            query.clone(),
                            endpoint.returns,
                            &parts,
                            Some((lease, named)),
                        )
                        .await;
                    if response
                        .extensions()
                        .get::<crate::view::error::ReplicaBehind>()
                        .is_some()
                    {
                        pools.note_behind(&replica);
                    } else if response.status() != StatusCode::SERVICE_UNAVAILABLE {
                        return response;
                    } else {
                        tracing::debug!(
                            replica = replica.index(),
                            "replica unavailable; reading from the primary"
                        );
                        replica.mark_unreachable();
                    }
                }
                let multiplexer = self.objects.multiplexer(&self.pool);
                self.get(
                    &self.pool,
                    multiplexer,
                    query,
                    endpoint.returns,
                    &parts,
                    None,
                )
                .await
            }
            Method::DELETE => {
                let Some(sql) = &endpoint.delete else {
                    return method_not_allowed(endpoint, &parts.method);
                };
                let query = Query {
                    sql: sql.clone(),
                    params: captures.iter().cloned().map(Some).collect(),
                    captures_only: true,
                };
                let response =
                    read::delete(&self.pool, query, endpoint.returns, self.lsn.report).await;
                self.stamped(response, named)
            }
            _ => {
                let response = write::handle(WriteRequest {
                    endpoint,
                    method: &parts.method,
                    captures: &captures,
                    headers: &parts.headers,
                    body,
                    context: &context,
                    pool: &self.pool,
                    report_lsn: self.lsn.report,
                })
                .await;
                self.stamped(response, named)
            }
        }
    }
}

impl Mount for ViewMount {
    fn call(self: Arc<Self>, request: Request, context: RequestContext) -> MountFuture {
        Box::pin(self.answer(request, context))
    }
}

/// A GET argument's value: a capture, a header, or a query parameter (`source` a name);
/// absent values are NULL.
fn argument(source: &Source, captures: &[String], parts: &http::request::Parts) -> Option<String> {
    match source {
        Source::Capture(n) => captures.get(usize::from(*n) - 1).cloned(),
        Source::Header(name) => parts
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
        Source::Field(name) => query_parameter(parts.uri.query(), name),
        Source::Body(_) => None,
    }
}

/// Whether `endpoint` has an entry for `method` (HEAD where GET is, OPTIONS always).
fn answers(endpoint: &Endpoint, method: &Method) -> bool {
    match *method {
        Method::GET | Method::HEAD => endpoint.get.is_some(),
        Method::DELETE => endpoint.delete.is_some(),
        Method::PUT => !endpoint.put.is_empty(),
        Method::PATCH => endpoint.patch.is_some(),
        Method::POST => !endpoint.post.is_empty(),
        Method::OPTIONS => true,
        _ => false,
    }
}

/// The `Allow` header of `endpoint`.
fn allow(endpoint: &Endpoint) -> HeaderValue {
    let mut methods: Vec<&str> = Vec::with_capacity(7);
    if endpoint.get.is_some() {
        methods.extend(["GET", "HEAD"]);
    }
    if !endpoint.put.is_empty() {
        methods.push("PUT");
    }
    if endpoint.patch.is_some() {
        methods.push("PATCH");
    }
    if !endpoint.post.is_empty() {
        methods.push("POST");
    }
    if endpoint.delete.is_some() {
        methods.push("DELETE");
    }
    methods.push("OPTIONS");
    HeaderValue::from_str(&methods.join(", ")).unwrap_or(HeaderValue::from_static("OPTIONS"))
}

fn method_not_allowed(endpoint: &Endpoint, method: &Method) -> Response {
    let mut response = ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!("this endpoint does not answer {method}"),
    )
    .into_response();
    response
        .headers_mut()
        .insert(header::ALLOW, allow(endpoint));
    response
}
