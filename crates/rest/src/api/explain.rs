//! The execution plan media type (`application/vnd.pgrst.plan`, PostgREST's `db-plan-enabled`):
//! EXPLAIN of the request's main statement behind its context, in a transaction always rolled
//! back (with `analyze` the statement runs, and a write must leave nothing).

use super::{RestApi, error_response};
use crate::error::ApiError;
use crate::request::{ApiRequest, PlanMedia};
use crate::response::plan_media_name;
use crate::sql::Statement;
use http::{HeaderValue, header};
use sluice_http::{Response, full};
use sluice_pg::SyncMode;

/// The plan the request asks for, with the request as it would run for the media type the plan
/// is for (`for=`): its statement is the one explained. With `handlers`, the plan may be for a
/// media type handler's answer.
pub(super) fn planned<'r>(
    api: &RestApi,
    request: &'r ApiRequest,
    handlers: Option<&crate::schema::media::MediaHandlers>,
) -> Option<(&'r PlanMedia, ApiRequest)> {
    let plan = crate::response::wanted_plan(&request.accept, api.config.plan_enabled, handlers)?;
    let mut inner = request.clone();
    inner.accept = vec![(*plan.for_media).clone()];
    Some((plan, inner))
}

/// The error of planning the request for the plan's media type: when no handler answers it for
/// this request after all, the 406 names the media types the request accepted.
pub(super) fn plan_error(request: &ApiRequest, error: &ApiError) -> Response {
    if error.code == "PGRST107" && error.status == http::StatusCode::NOT_ACCEPTABLE {
        return error_response(&crate::response::not_acceptable(&request.accept));
    }
    error_response(error)
}

/// The answer: 200 with EXPLAIN's output (one line per row), or the statement's error.
pub(super) async fn explain(
    api: &RestApi,
    context: &[Statement],
    main: &Statement,
    plan: &PlanMedia,
) -> Response {
    match run(api, context, main, plan).await {
        Ok(body) => {
            let mut response = Response::new(full(body));
            let content_type = format!("{}; charset=utf-8", plan_media_name(plan));
            if let Ok(value) = HeaderValue::from_str(&content_type) {
                response.headers_mut().insert(header::CONTENT_TYPE, value);
            }
            response
        }
        Err(error) => error_response(&error),
    }
}

async fn run(
    api: &RestApi,
    context: &[Statement],
    main: &Statement,
    plan: &PlanMedia,
) -> Result<String, ApiError> {
    let mut options = vec![if plan.json {
        "FORMAT JSON"
    } else {
        "FORMAT TEXT"
    }];
    options.extend(plan.options.iter().map(|o| match o {
        crate::request::PlanOption::Analyze => "ANALYZE",
        crate::request::PlanOption::Verbose => "VERBOSE",
        crate::request::PlanOption::Settings => "SETTINGS",
        crate::request::PlanOption::Buffers => "BUFFERS",
        crate::request::PlanOption::Wal => "WAL",
    }));
    let sql = format!("EXPLAIN ({}) {}", options.join(", "), main.sql);
    let pg = |e: sluice_pg::Error| ApiError::from_pg(&e, false);
    let mut conn = api.pool.get().await.map_err(|e| ApiError::from_pool(&e))?;
    let mut batch = conn.pipeline(SyncMode::Once).await.map_err(pg)?;
    batch.query("BEGIN", &[]).map_err(pg)?;
    for statement in context {
        batch
            .query(&statement.sql, &statement.driver_params())
            .map_err(pg)?;
    }
    let at = batch.query(&sql, &main.driver_params()).map_err(pg)?;
    let results = batch.run().await.map_err(pg)?;
    // Whatever happened, nothing the statement did is kept.
    conn.batch_execute("ROLLBACK").await.map_err(pg)?;
    if let Some(Err(error)) = super::write::failed_statement(&results).map(|i| &results[i]) {
        return Err(ApiError::from_pg(error, false));
    }
    let mut body = String::new();
    if let Some(Ok(rows)) = results.get(at) {
        for row in rows.iter() {
            if let Some(line) = row.raw(0) {
                body.push_str(&String::from_utf8_lossy(line));
                body.push('\n');
            }
        }
    }
    Ok(body)
}
