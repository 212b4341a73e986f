//! Several writes in one request (`POST /` with a JSON array of operations, PostgREST #286):
//! each operation checked and planned as if it came alone, all of them run on one connection in
//! one transaction (one round trip for the statements), committed together or not at all.

use super::write::{Prepared, PreparedWrite, Written, answer_parts, inserted_from, written_from};
use super::{RequestContext, RestApi, Target, error_response, filters};
use crate::error::ApiError;
use crate::request::{self, Method, Resource};
use crate::response::Representation;
use crate::response::applied::{Applying, Honoured, preference_applied};
use crate::response::media::Negotiated;
use crate::schema::SchemaCache;
use crate::sql::write::READ_INSERTED;
use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use serde::Deserialize;
use sluice_http::{Response, full};
use sluice_pg::SyncMode;

/// The most operations one batch may carry.
pub const MAX_OPERATIONS: usize = 1000;

/// One operation as the body gives it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Operation {
    method: String,
    path: String,
    #[serde(default)]
    headers: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    body: Option<serde_json::Value>,
}

/// One operation checked and planned.
struct Planned<'c> {
    request: request::ApiRequest,
    prepared: Prepared<'c>,
}

pub(super) async fn batch(
    api: &RestApi,
    outer: &request::ApiRequest,
    cache: &SchemaCache,
    context: Option<RequestContext>,
    named: Option<sluice_pg::Lsn>,
    body: Bytes,
) -> Response {
    match run(api, outer, cache, context, named, body).await {
        Ok(response) => response,
        Err(error) => error_response(&error),
    }
}

fn invalid_batch(details: impl Into<String>) -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "PGRST102",
        "A batch is a JSON array of operations: {\"method\", \"path\", \"headers\", \"body\"}",
    )
    .details(details)
}

/// The error of operation `index` (counted from 1), saying which it was.
fn in_operation(index: usize, operation: &str, mut error: ApiError) -> ApiError {
    let inner = match error.details.take() {
        Some(serde_json::Value::String(details)) => format!("{}: {details}", error.message),
        Some(other) => format!("{}: {other}", error.message),
        None => error.message.clone(),
    };
    error.details = Some(serde_json::Value::String(format!(
        "operation {index} ({operation}): {inner}"
    )));
    error
}

async fn run(
    api: &RestApi,
    outer: &request::ApiRequest,
    cache: &SchemaCache,
    context: Option<RequestContext>,
    named: Option<sluice_pg::Lsn>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let operations: Vec<Operation> =
        serde_json::from_slice(&body).map_err(|e| invalid_batch(e.to_string()))?;
    if operations.is_empty() || operations.len() > MAX_OPERATIONS {
        return Err(invalid_batch(format!(
            "{} operations; a batch holds 1 to {MAX_OPERATIONS}",
            operations.len()
        )));
    }
    let mut planned = Vec::with_capacity(operations.len());
    let mut names = Vec::with_capacity(operations.len());
    for (i, operation) in operations.into_iter().enumerate() {
        let name = format!("{} {}", operation.method, operation.path);
        let plan = plan(api, cache, operation).map_err(|e| in_operation(i + 1, &name, e))?;
        planned.push(plan);
        names.push(name);
    }
    let applied = super::applied(api, Applying::Batch, &outer.prefer, context.as_ref());
    let mut conn = api.pool.get().await.map_err(|e| ApiError::from_pool(&e))?;
    let pg = |e: sluice_pg::Error| ApiError::from_pg(&e, false);
    let isolation = context.as_ref().and_then(|c| c.isolation);
    let context = context
        .as_ref()
        .map(RequestContext::statements)
        .unwrap_or_default();
    let statements: Vec<(usize, &PreparedWrite<'_>)> = planned
        .iter()
        .enumerate()
        .filter_map(|(i, p)| match &p.prepared {
            Prepared::Statement(prepared) => Some((i, prepared)),
            Prepared::Done(_) | Prepared::Nested(_) => None,
        })
        .collect();
    let params: Vec<_> = statements
        .iter()
        .map(|(_, p)| p.statement.driver_params())
        .collect();
    let mut pipeline = conn.pipeline(SyncMode::Once).await.map_err(pg)?;
    pipeline
        .query(super::context::begin(isolation), &[])
        .map_err(pg)?;
    for context in &context {
        pipeline
            .query(&context.sql, &context.driver_params())
            .map_err(pg)?;
    }
    let mut slots = Vec::with_capacity(statements.len());
    // Where each statement's count of inserted rows comes back, read (and cleared) right after
    // it so that each operation counts its own.
    let mut counted_at = Vec::with_capacity(statements.len());
    for ((_, prepared), params) in statements.iter().zip(&params) {
        slots.push(
            pipeline
                .query(&prepared.statement.sql, params)
                .map_err(pg)?,
        );
        counted_at.push(match prepared.counts_inserted {
            true => Some(pipeline.query(READ_INSERTED, &[]).map_err(pg)?),
            false => None,
        });
    }
    let results = pipeline.run().await.map_err(pg)?;
    if let Some(position) = super::write::failed_statement(&results) {
        let error = match &results[position] {
            Err(error) => ApiError::from_pg(error, false),
            Ok(_) => unreachable_error(),
        };
        conn.batch_execute("ROLLBACK").await.map_err(pg)?;
        return Err(match slots.iter().position(|&slot| slot == position) {
            Some(k) => {
                let index = statements[k].0;
                in_operation(index + 1, &names[index], error)
            }
            None => error,
        });
    }
    let mut inserted_of: Vec<Option<u64>> = vec![None; planned.len()];
    for ((index, _), at) in statements.iter().zip(&counted_at) {
        inserted_of[*index] = at.and_then(|at| results.get(at)).map(inserted_from);
    }
    let mut results: Vec<Option<sluice_pg::Rows>> = results.into_iter().map(Result::ok).collect();
    let mut rows_of: Vec<Option<sluice_pg::Rows>> = (0..planned.len()).map(|_| None).collect();
    for ((index, _), slot) in statements.iter().zip(&slots) {
        rows_of[*index] = results.get_mut(*slot).and_then(Option::take);
    }
    let mut answers = Vec::with_capacity(planned.len());
    for (index, (plan, rows)) in planned.into_iter().zip(rows_of).enumerate() {
        let (written, representation) = match (plan.prepared, rows) {
            (Prepared::Done(written), _) => {
                let representation = written
                    .body
                    .is_some()
                    .then_some(Negotiated::Builtin(Representation::Array));
                (written, representation)
            }
            (Prepared::Nested(_), _) => {
                conn.batch_execute("ROLLBACK").await.map_err(pg)?;
                return Err(unreachable_error());
            }
            (Prepared::Statement(prepared), Some(rows)) => {
                let written = written_from(
                    &mut conn,
                    &rows,
                    prepared.representation,
                    prepared.location_of,
                )
                .await;
                let written = match written {
                    Ok(written) => Written {
                        inserted: inserted_of[index],
                        ..written
                    },
                    Err(error) => {
                        conn.batch_execute("ROLLBACK").await.map_err(pg)?;
                        return Err(in_operation(index + 1, &names[index], error));
                    }
                };
                if let Some(error) = super::write::failed_check(prepared.checks, written.rows) {
                    conn.batch_execute("ROLLBACK").await.map_err(pg)?;
                    return Err(in_operation(index + 1, &names[index], error));
                }
                (written, prepared.representation)
            }
            (Prepared::Statement(_), None) => {
                conn.batch_execute("ROLLBACK").await.map_err(pg)?;
                return Err(unreachable_error());
            }
        };
        // An operation's tx= and timezone= are not its own to apply: it runs in the batch's
        // transaction and context, whose answer lists those.
        let applied = Applying::of_write(plan.request.method)
            .and_then(|kind| preference_applied(kind, &plan.request.prefer, Honoured::default()));
        answers.push(answer_json(&plan.request, applied, written, representation));
    }
    let commits = api.config.tx_end.commits(outer.prefer.tx);
    let lsn = super::end_transaction(&mut conn, commits, api.lsn.report).await?;
    let mut response = Response::new(full(serde_json::Value::Array(answers).to_string()));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=utf-8"),
    );
    if let Some(applied) = applied {
        response.headers_mut().insert("preference-applied", applied);
    }
    super::stamp_lsn(api, &mut response, lsn, named);
    Ok(response)
}

fn unreachable_error() -> ApiError {
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "PGRSTX00",
        "A statement of the batch gave no result",
    )
}

/// Checks one operation as if it came alone: its method, path, headers and body.
fn plan<'c>(
    api: &RestApi,
    cache: &'c SchemaCache,
    operation: Operation,
) -> Result<Planned<'c>, ApiError> {
    let method = match operation.method.to_ascii_uppercase().as_str() {
        "POST" => http::Method::POST,
        "PATCH" => http::Method::PATCH,
        "PUT" => http::Method::PUT,
        "DELETE" => http::Method::DELETE,
        _ => {
            return Err(ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "PGRST117",
                "A batch holds writes: POST, PATCH, PUT or DELETE",
            ));
        }
    };
    let mut headers = http::HeaderMap::new();
    for (name, value) in &operation.headers {
        let value = value.as_str().ok_or_else(|| {
            invalid_batch(format!("the value of header {name:?} is not a string"))
        })?;
        let name = http::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| invalid_batch(format!("{name:?} is not a header name")))?;
        let value = HeaderValue::from_str(value)
            .map_err(|_| invalid_batch(format!("the value of header {name} is not valid")))?;
        headers.append(name, value);
    }
    let body = match operation.body {
        Some(body) => {
            headers
                .entry(header::CONTENT_TYPE)
                .or_insert(HeaderValue::from_static("application/json"));
            Bytes::from(body.to_string())
        }
        None => Bytes::new(),
    };
    let (path, query) = match operation.path.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (operation.path.as_str(), None),
    };
    let mut parsed = request::parse_request(&method, path, query, &headers)?;
    let Resource::Relation(name) = &parsed.resource else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "PGRST125",
            "A batch operation's path names a table or view: /name?query",
        ));
    };
    let schema = api.schema_for(&parsed)?;
    if matches!(parsed.method, Method::Post | Method::Patch | Method::Put) && body.is_empty() {
        return Err(invalid_batch("this operation needs a \"body\""));
    }
    let target = Target {
        schema,
        name: name.clone(),
        context: None,
        named: None,
    };
    crate::plan::write::ignore_keyless_resolution(&mut parsed, cache, &target.schema);
    let filters = filters(&parsed)?;
    let prepared = super::write::prepare(api, &parsed, &target, cache, filters, &body)?;
    if let Prepared::Nested(_) = prepared {
        return Err(invalid_batch(
            "a nested insert (keys naming relations) is a request of its own, not part of a batch",
        ));
    }
    if let Prepared::Statement(PreparedWrite {
        representation: Some(Negotiated::Handler { .. }),
        ..
    }) = prepared
    {
        // Its raw bytes have no place in the batch's JSON answer.
        return Err(invalid_batch(
            "a media type handler's answer is a request of its own, not part of a batch",
        ));
    }
    Ok(Planned {
        request: parsed,
        prepared,
    })
}

/// An operation's answer as the batch's response lists it: status, headers, body (JSON when the
/// representation is JSON, else its text).
fn answer_json(
    request: &request::ApiRequest,
    applied: Option<HeaderValue>,
    written: Written,
    representation: Option<Negotiated<'_>>,
) -> serde_json::Value {
    let (status, headers, body) = answer_parts(request, applied, written, representation);
    let headers: serde_json::Map<String, serde_json::Value> = headers
        .iter()
        .filter_map(|(name, value)| {
            let value = value.to_str().ok()?;
            Some((
                name.to_string(),
                serde_json::Value::String(value.to_string()),
            ))
        })
        .collect();
    let body = match body {
        None => serde_json::Value::Null,
        Some(body) => serde_json::from_slice(&body).unwrap_or_else(|_| {
            serde_json::Value::String(String::from_utf8_lossy(&body).into_owned())
        }),
    };
    serde_json::json!({"status": status.as_u16(), "headers": headers, "body": body})
}
