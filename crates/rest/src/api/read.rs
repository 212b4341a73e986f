//! GET and HEAD of a table or view: plan, render, run behind the request's context in one round
//! trip, and stream the rows out as they arrive (JSON, CSV, JSON Lines, CSJ; a single object).

use super::{RestApi, Target, error_response};
use crate::error::ApiError;
use crate::plan::{ReadInput, plan_read};
use crate::request::{ApiRequest, Method, PathFilter, PreferCount};
use crate::response::applied::Applying;
use crate::response::composite::RecordLayout;
use crate::response::media::Negotiated;
use crate::response::{self, Representation, content_range, rest_kind};
use crate::schema::SchemaCache;
use crate::sql::{self, Statement};
use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use sluice_formats::{ColumnKind, ColumnSpec, Scalar};
use sluice_http::stream::{self, CHUNK, ChunkSender, Outcome};
use sluice_http::{Response, empty, full};
use sluice_pg::SyncMode;
use sluice_pg::pool::{Replica, ReplicaLease};
use std::sync::Arc;

mod produce;
use produce::produce;

/// What a read sends, rendered before the producer task takes it.
struct ReadJob {
    /// How rows become the body: a representation of rows, or a function's value(s).
    shape: Shape,
    /// The settings and the pre-request function, run first.
    context: Vec<Statement>,
    /// The statements that count the rows, run before the rows (`Prefer: count=`).
    counts: Vec<Statement>,
    main: Statement,
    representation: Representation,
    offset: u64,
    /// The page's size when the request bounds it (for `Content-Range` of a streamed result).
    limit: Option<u64>,
    count_preference: Option<PreferCount>,
    /// The answer's `Preference-Applied`.
    applied: Option<HeaderValue>,
    max_rows: Option<u64>,
    /// The result is known to be small (a primary key by equality, or a small limit): it can
    /// be collected through the pipelining mode instead of streamed on a connection of its own.
    bounded: bool,
    /// The commit position the request named (`Sluice-Lsn`): on a replica, the read runs behind
    /// the guard that it has replayed that far.
    named: Option<sluice_pg::Lsn>,
    /// A call that may write (POST): its answer is collected whole and carries the commit
    /// position, read after the commit in the same round trip.
    report_commit: bool,
    /// The statement leaves the page out (a call that must run once): every row is read and
    /// counted, only those of the page (`offset`, `limit`) are sent, and the count is the total.
    /// Nothing is sent before the last row, as `Content-Range` needs the total.
    count_rows: bool,
    /// A call that may end otherwise than committed: it runs in an explicit transaction, its
    /// rows collected, ended as this says.
    ending: Option<CallEnding>,
    /// A media type handler answers (its value with [`Shape::Media`]; its media type alone
    /// for HEAD).
    media: Option<MediaAnswer>,
    /// A table's read at its role's isolation level: the statement setting it, first in the
    /// implicit transaction (before anything takes a snapshot), the rows still streamed.
    set_isolation: Option<&'static str>,
    /// A call: what SQL set for the answer (`response.headers`, `response.status`) is read
    /// after its rows, in its transaction; streamed rows wait for it up to a bound. A table's
    /// read is shaped by the pre-request function only.
    shaped_after: bool,
}

/// How a media type handler's answer is sent.
#[derive(Debug, Clone)]
pub(super) struct MediaAnswer {
    /// The answer's `Content-Type`.
    pub content_type: HeaderValue,
    /// The value is `bytea` (its text is decoded to its bytes).
    pub bytea: bool,
}

impl MediaAnswer {
    /// The answer of `handler`.
    pub(super) fn of(handler: &crate::schema::media::MediaHandler) -> MediaAnswer {
        MediaAnswer {
            content_type: response::media::content_type(handler),
            bytea: handler.bytea,
        }
    }
}

/// How a call's explicit transaction ends.
#[derive(Debug, Clone, Copy)]
struct CallEnding {
    /// What its rows must pass, else it rolls back with the check's error (the single object
    /// on a call that may write, `max-affected` under `handling=strict`).
    checks: crate::plan::write::RowChecks,
    /// Whether it commits when they pass (`tx_end`, `Prefer: tx=`).
    commit: bool,
    /// The statement that starts it: at the function's isolation level, else the role's.
    begin: &'static str,
}

/// How a result becomes a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Rows in a representation (an array of objects, one object, CSV, ...).
    Rows,
    /// One value: the first column of the only row (a function returning a scalar).
    Scalar,
    /// An array of the first column's values (a function returning a set of scalars).
    ScalarSet,
    /// The only row as an object (a function with OUT parameters).
    OutObject,
    /// A media type handler's value, raw: the first column of the only row; the second, when
    /// there is one, counts the rows the handler's aggregate took.
    Media,
}

/// The status and headers decided once the first chunk is ready.
struct ReadHead {
    status: StatusCode,
    content_range: Option<String>,
    /// What SQL set for the answer (the pre-request function; a call's function).
    shaping: super::context::Shaping,
    /// The commit position of a call that wrote.
    lsn: Option<sluice_pg::Lsn>,
}

pub(super) async fn read(
    api: &Arc<RestApi>,
    request: &ApiRequest,
    target: &Target,
    cache: &SchemaCache,
    filters: Vec<PathFilter>,
) -> Response {
    if let Some((plan, inner)) = super::explain::planned(api, request, Some(&cache.media)) {
        return match plan_job(api, &inner, target, cache, &filters) {
            Ok(job) => super::explain::explain(api, &job.context, &job.main, plan).await,
            Err(error) => super::explain::plan_error(request, &error),
        };
    }
    let job = match plan_job(api, request, target, cache, &filters) {
        Ok(job) => job,
        Err(error) => return error_response(&error),
    };
    // At an isolation level of its own, on the primary: a standby refuses serializable.
    let route = match job.set_isolation {
        Some(_) => Route::Primary,
        None => Route::Replica,
    };
    let mut response = respond(api, request, job, route).await;
    if response.status().is_success() {
        // PostgREST names what was read: the relation and the canonical query string. A
        // pre-request function's own Content-Location stays.
        let mut location = format!("/{}", target.name);
        if !request.canonical_query.is_empty() {
            location.push('?');
            location.push_str(&request.canonical_query);
        }
        if let Ok(value) = HeaderValue::from_bytes(location.as_bytes()) {
            response
                .headers_mut()
                .entry(header::CONTENT_LOCATION)
                .or_insert(value);
        }
    }
    response
}

/// Where a read may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Route {
    /// A healthy replica when there is one (table and view reads, calls by GET: the function
    /// is `STABLE` or `IMMUTABLE`).
    Replica,
    /// The primary (calls by POST: they may write, or call something volatile).
    Primary,
}

/// A function call's result, streamed like a read.
pub(super) async fn stream_call(
    api: &Arc<RestApi>,
    request: &ApiRequest,
    target: &Target,
    call: super::call::CallJob,
    route: Route,
) -> Response {
    use crate::plan::call::ResultShape;
    let (shape, representation) = match (call.shape, &call.media) {
        (_, Some(_)) if request.method != Method::Head => (Shape::Media, Representation::Array),
        (ResultShape::Scalar, _) => (Shape::Scalar, Representation::Array),
        (ResultShape::ScalarSet, _) => (Shape::ScalarSet, Representation::Array),
        (ResultShape::Object, _) => (Shape::OutObject, Representation::Object),
        (ResultShape::Rows, _) => (Shape::Rows, call.representation),
    };
    let checks = crate::plan::write::RowChecks {
        max_affected: super::write::strict_max_affected(&request.prefer),
        // A call that may write is rolled back when its answer is not the one object asked for
        // (one that only reads is refused as a table read is, while it streams).
        singular: route == Route::Primary
            && shape == Shape::Rows
            && representation == Representation::Object,
    };
    // Only a call that may write is rolled back by tx_end or `Prefer: tx=` (one by GET cannot
    // write: plan_call allows only STABLE and IMMUTABLE functions there).
    let commit = route == Route::Replica || api.config.tx_end.commits(request.prefer.tx);
    let isolation = call.isolation.or(target.isolation());
    let ending =
        (checks.max_affected.is_some() || checks.singular || !commit || isolation.is_some())
            .then_some(CallEnding {
                checks,
                commit,
                begin: super::context::begin(isolation),
            });
    let job = ReadJob {
        shape,
        context: target.call_context_statements(
            &call.function_settings,
            call.volatile,
            matches!(request.method, Method::Get | Method::Head),
        ),
        counts: call.counts,
        main: call.statement,
        representation,
        offset: call.offset,
        limit: call.limit,
        count_preference: call.count_preference,
        applied: if call.single_object || request.prefer.params.is_none() {
            target.applied(api, Applying::Call, &request.prefer)
        } else {
            // params=single-object is applied only to a JSON body (not to a GET's arguments).
            let prefer = crate::request::Preferences {
                params: None,
                ..request.prefer.clone()
            };
            target.applied(api, Applying::Call, &prefer)
        },
        max_rows: api.config.max_rows,
        bounded: false,
        named: target.named,
        report_commit: route == Route::Primary && api.lsn.report,
        count_rows: call.count_rows,
        ending,
        set_isolation: None,
        media: call.media,
        shaped_after: true,
    };
    // A call that may roll back runs on the primary, in a transaction of its own.
    let route = if ending.is_some() {
        Route::Primary
    } else {
        route
    };
    respond(api, request, job, route).await
}

async fn respond(api: &Arc<RestApi>, request: &ApiRequest, job: ReadJob, route: Route) -> Response {
    let head_only = request.method == Method::Head;
    let representation = job.representation;
    let applied = job.applied.clone();
    let content_type = match (&job.media, job.shape) {
        (Some(media), _) => media.content_type.clone(),
        (None, Shape::Rows) => HeaderValue::from_static(representation.content_type()),
        (None, _) => HeaderValue::from_static("application/json; charset=utf-8"),
    };
    // At most the settings statement in front: a pre-request function's answer shaping is read
    // on the streamed path.
    let fast = job.bounded
        && job.set_isolation.is_none()
        && job.context.len() <= 1
        && job.shape == Shape::Rows
        && job.counts.is_empty()
        && job.representation != Representation::Csv;
    let lease = match (route, &api.replicas, job.named) {
        (Route::Replica, Some(pools), Some(lsn)) => pools.pick_replayed(lsn).await,
        (Route::Replica, Some(pools), None) => pools.pick(),
        _ => None,
    };
    if fast {
        match multiplexed(api, &job, lease.as_deref()).await {
            Some(Ok((head, body))) => {
                return finish_response(
                    api,
                    job.named,
                    head,
                    full(body),
                    head_only,
                    content_type,
                    applied,
                );
            }
            Some(Err(error)) => return error_response(&error),
            None => {}
        }
    }
    let (sender, receiver) = stream::channel::<ReadHead, ApiError>();
    let pool = api.pool.clone();
    let pools = api.replicas.clone();
    let named = job.named;
    tokio::spawn(produce(pool, pools, lease, job, sender));
    let (head, body) = match receiver.start().await {
        Outcome::Body(head, body) => (head, body),
        Outcome::Failed(error) => return error_response(&error),
        Outcome::Vanished => {
            return error_response(&ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "PGRSTX00",
                "The query ended without an answer",
            ));
        }
    };
    finish_response(api, named, head, body, head_only, content_type, applied)
}

fn finish_response(
    api: &RestApi,
    named: Option<sluice_pg::Lsn>,
    head: ReadHead,
    body: sluice_http::ResponseBody,
    head_only: bool,
    content_type: HeaderValue,
    applied: Option<HeaderValue>,
) -> Response {
    let mut response = Response::new(if head_only { empty() } else { body });
    *response.status_mut() = head.status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, content_type);
    if let Some(range) = head
        .content_range
        .and_then(|r| HeaderValue::from_str(&r).ok())
    {
        headers.insert(header::CONTENT_RANGE, range);
    }
    if let Some(applied) = applied {
        headers.insert("preference-applied", applied);
    }
    head.shaping.apply(&mut response);
    super::stamp_lsn(api, &mut response, head.lsn, named);
    response
}

/// A small read through the pipelining mode: its statement rides in a batch with other
/// requests' on a pooled connection (one round trip for many). `None` when the result has
/// columns whose JSON needs the catalog (domains, composites): the caller streams it instead.
///
/// On a replica that turns out to be gone (its connection lost, or none to be had), the
/// replica is taken out and the read runs again on the primary: a read changes nothing, so
/// running it twice is safe.
async fn multiplexed(
    api: &RestApi,
    job: &ReadJob,
    replica: Option<&Replica>,
) -> Option<Result<(ReadHead, bytes::Bytes), ApiError>> {
    let needs_catalog = {
        let known = api.needs_catalog.read();
        !known.is_empty() && known.contains(&job.main.sql)
    };
    if needs_catalog {
        return None;
    }
    let answer = match replica {
        Some(replica) => {
            let answer = send_multiplexed(replica.multiplexer()?, job, job.named).await;
            match answer {
                Err(error) if error.is_unavailable() => {
                    replica.mark_unreachable();
                    send_multiplexed(api.multiplexer()?, job, None).await
                }
                Err(error) if error.kind() == sluice_pg::ErrorKind::NotReplayed => {
                    if let Some(pools) = &api.replicas {
                        pools.note_behind(replica);
                    }
                    send_multiplexed(api.multiplexer()?, job, None).await
                }
                answer => answer,
            }
        }
        None => send_multiplexed(api.multiplexer()?, job, None).await,
    };
    let rows = match answer {
        Ok(rows) => rows,
        Err(error) => return Some(Err(ApiError::from_pg(&error, false))),
    };
    encode_multiplexed(api, job, &rows)
}

/// Sends the job's statement (with its context statement) through `multiplexer`; with `guard`,
/// only where the WAL is replayed that far.
async fn send_multiplexed(
    multiplexer: &sluice_pg::pool::Multiplexer,
    job: &ReadJob,
    guard: Option<sluice_pg::Lsn>,
) -> sluice_pg::Result<sluice_pg::Rows> {
    if let Some(lsn) = guard {
        let context = job
            .context
            .first()
            .map(|context| (context.sql.clone().into(), context.params.clone()));
        return multiplexer
            .query_replayed(lsn, context, job.main.sql.clone(), job.main.params.clone())
            .await;
    }
    // The request's role and settings ride in the same implicit transaction as its statement.
    let params = job.main.params.clone();
    match job.context.first() {
        Some(context) => {
            multiplexer
                .query_in_context_text(
                    context.sql.clone(),
                    context.params.clone(),
                    job.main.sql.clone(),
                    params,
                )
                .await
        }
        None => multiplexer.query_text(job.main.sql.clone(), params).await,
    }
}

/// A multiplexed read's rows as the response body; `None` when a column needs the catalog.
fn encode_multiplexed(
    api: &RestApi,
    job: &ReadJob,
    rows: &sluice_pg::Rows,
) -> Option<Result<(ReadHead, bytes::Bytes), ApiError>> {
    let mut specs = Vec::with_capacity(rows.columns().len());
    for column in rows.columns() {
        let Some(kind) = sluice_formats::ColumnKind::builtin(column.type_oid()) else {
            api.needs_catalog.write().insert(job.main.sql.clone());
            return None;
        };
        specs.push(ColumnSpec::new(
            column.name(),
            rest_kind(column.type_oid(), kind),
        ));
    }
    let mut encoder = response::encoder(job.representation, &specs);
    let mut out = Vec::with_capacity(256);
    let single = job.representation == Representation::Object;
    if single {
        if rows.len() != 1 {
            return Some(Err(not_single(rows.len() as u64)));
        }
    } else {
        encoder.begin(&mut out);
    }
    for row in rows.iter() {
        encoder.row((0..row.len()).map(|i| row.raw(i)), &mut out);
    }
    if single {
        if out.last() == Some(&b'\n') {
            out.pop();
        }
    } else {
        encoder.finish(&mut out);
    }
    Some(Ok((
        head(job, Some(rows.len() as u64), None),
        bytes::Bytes::from(out),
    )))
}

fn plan_job(
    api: &RestApi,
    request: &ApiRequest,
    target: &Target,
    cache: &SchemaCache,
    filters: &[PathFilter],
) -> Result<ReadJob, ApiError> {
    let table = cache
        .table(&target.schema, &target.name)
        .ok_or_else(|| super::table_not_found(&target.schema, &target.name))?;
    let input = ReadInput::of_query(&request.query, filters, api.config.aggregates_enabled);
    let mut plan = plan_read(cache, table, &input)?;
    let (offset, limit) = apply_page(api, request, &mut plan);
    let bounded = limit.is_some_and(|l| l <= SMALL_RESULT) || keyed_by_primary_key(&plan);
    let answering = response::media::Answering {
        schema: &target.schema,
        name: &target.name,
        default_select: response::media::default_select(request.query.select.as_deref()),
        values: false,
    };
    let (representation, handler) =
        match response::media::negotiate_handlers(&request.accept, &cache.media, answering)? {
            Negotiated::Builtin(representation) => (representation, None),
            Negotiated::Handler { handler, own } => (Representation::Array, Some((handler, own))),
        };
    let count_preference = request.prefer.count;
    let counts = match count_preference {
        None => Vec::new(),
        Some(PreferCount::Exact) => vec![sql::read::render_count(&plan, None)],
        Some(PreferCount::Planned) => vec![sql::read::render_explain(&plan)],
        // An exact count while it stays within max_rows, else the planner's estimate.
        Some(PreferCount::Estimated) => match api.config.max_rows {
            Some(max) => vec![
                sql::read::render_count(&plan, Some(max + 1)),
                sql::read::render_explain(&plan),
            ],
            None => vec![sql::read::render_count(&plan, None)],
        },
    };
    let mut main = sql::read::render(&plan);
    let mut shape = Shape::Rows;
    // HEAD answers the handler's media type without running its aggregate (PostgREST's).
    if let Some((handler, own)) = handler
        && let Some(aggregate) = &handler.aggregate
        && request.method != Method::Head
    {
        let argument = match own {
            true => sql::media::Argument::RowOf(&table.name),
            false => sql::media::Argument::Row,
        };
        main = sql::media::render(main, aggregate, argument);
        shape = Shape::Media;
    }
    Ok(ReadJob {
        shape,
        context: target.context_statements(),
        counts,
        max_rows: api.config.max_rows,
        main,
        representation,
        offset,
        limit,
        count_preference,
        applied: target.applied(api, Applying::Read, &request.prefer),
        bounded,
        named: target.named,
        report_commit: false,
        count_rows: false,
        ending: None,
        // A role's isolation level is the read's too (PostgREST's).
        set_isolation: target
            .isolation()
            .map(crate::schema::IsolationLevel::set_transaction),
        media: handler.map(|(handler, _)| MediaAnswer::of(handler)),
        shaped_after: false,
    })
}

/// Sets the top level's page from the query's limit and offset, the Range header (GET and
/// HEAD) and max_rows; returns it as (offset, limit).
pub(super) fn apply_page(
    api: &RestApi,
    request: &ApiRequest,
    plan: &mut crate::plan::ReadPlan<'_>,
) -> (u64, Option<u64>) {
    let mut offset = plan.offset.unwrap_or(0);
    let mut limit = plan.limit;
    if let Some(range) = request.range {
        offset = offset.max(range.offset);
        if let Some(last) = range.last {
            let size = last.saturating_sub(range.offset) + 1;
            limit = Some(limit.map_or(size, |l| l.min(size)));
        }
    }
    if let Some(max) = api.config.max_rows {
        limit = Some(limit.map_or(max, |l| l.min(max)));
    }
    plan.limit = limit;
    plan.offset = (offset > 0).then_some(offset);
    (offset, limit)
}

/// Results of at most this many rows (by their limit) count as small.
const SMALL_RESULT: u64 = 100;

/// Whether the top level filters every primary-key column with a plain `eq`: one row at most.
fn keyed_by_primary_key(plan: &crate::plan::ReadPlan<'_>) -> bool {
    use crate::plan::Condition;
    use crate::request::{Operation, Operator};
    let key = &plan.table.primary_key;
    !key.is_empty()
        && key.iter().all(|column| {
            plan.conditions.iter().any(|c| {
                matches!(c, Condition::Filter {
                    field,
                    negated: false,
                    operation: Operation::Compare { op: Operator::Eq, quantifier: None, .. },
                } if field.column.name == *column && field.json_path.is_empty())
            })
        })
}

/// How a composite column's values become JSON objects: its fields' names and kinds from the
/// connection's type cache (loaded with the result's types).
fn record_layout(conn: &sluice_pg::Connection, type_oid: u32) -> Option<RecordLayout> {
    let info = conn.type_info(type_oid)?;
    let info = match info.is_domain() {
        true => conn.type_info(info.base)?,
        false => info,
    };
    if !info.is_composite() {
        return None;
    }
    let lookup = |oid| conn.type_info(oid).map(|t| &**t);
    Some(RecordLayout {
        fields: info
            .fields
            .iter()
            .map(|(name, oid)| {
                let kind = sluice_formats::kind::resolve(*oid, &lookup);
                (name.to_string(), rest_kind(*oid, kind))
            })
            .collect(),
    })
}

/// The count the statements before the rows found: an exact count, the planner's estimate, or
/// (estimated) the exact count when it stays within `max_rows`.
fn total_of(job: &ReadJob, before: &[sluice_pg::Rows]) -> Option<u64> {
    let first_cell = |rows: &sluice_pg::Rows| -> Option<String> {
        rows.get(0)
            .and_then(|row| row.raw(0))
            .map(|raw| String::from_utf8_lossy(raw).into_owned())
    };
    let exact = |rows: &sluice_pg::Rows| first_cell(rows).and_then(|n| n.parse::<u64>().ok());
    let planned = |rows: &sluice_pg::Rows| {
        let plan: serde_json::Value = serde_json::from_str(&first_cell(rows)?).ok()?;
        plan.get(0)?
            .get("Plan")?
            .get("Plan Rows")?
            .as_f64()
            .map(|n| n as u64)
    };
    // The statements before the rows: the context (when sent), then the counts.
    let counts = before.get(job.context.len()..)?;
    match (job.count_preference?, counts) {
        (PreferCount::Exact, [count]) => exact(count),
        (PreferCount::Planned, [explain]) => planned(explain),
        (PreferCount::Estimated, [count, explain]) => {
            let counted = exact(count)?;
            match job.max_rows {
                Some(max) if counted > max => planned(explain).map(|p| p.max(counted)),
                _ => Some(counted),
            }
        }
        (PreferCount::Estimated, [count]) => exact(count),
        _ => None,
    }
}

/// The status and `Content-Range`: exact when the rows were all counted before the first
/// chunk left or the total is known; left out for a streamed result of unknown length.
fn head(job: &ReadJob, rows: Option<u64>, total: Option<u64>) -> ReadHead {
    let rows = rows.or_else(|| {
        let total = total?;
        let end = job
            .limit
            .map_or(total, |limit| total.min(job.offset + limit));
        Some(end.saturating_sub(job.offset))
    });
    let content_range = rows.map(|rows| content_range(job.offset, rows, total));
    let partial = match (rows, total) {
        (Some(rows), Some(total)) => job.offset > 0 || rows < total,
        _ => false,
    };
    ReadHead {
        status: if partial {
            StatusCode::PARTIAL_CONTENT
        } else {
            StatusCode::OK
        },
        content_range,
        shaping: super::context::Shaping::default(),
        lsn: None,
    }
}

fn not_single(rows: u64) -> ApiError {
    ApiError::not_single(format!("The result contains {rows} rows"))
}
