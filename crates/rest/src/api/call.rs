//! `/rpc/name`: the arguments from the query string (GET, read-only) or the body (POST), the
//! overload they name, and the result in PostgREST's shape: a value, an array of values, rows
//! filtered and embedded like a table, or one object for OUT parameters.

use super::{RestApi, Target, error_response};
use crate::error::ApiError;
use crate::plan::call::{Arguments, ResultShape, plan_call};
use crate::plan::write::payload_shape;
use crate::plan::{ReadInput, plan_read};
use crate::request::{self, ApiRequest, MediaType, Method, PathFilter, SelectItem};
use crate::schema::SchemaCache;
use crate::sql;
use bytes::Bytes;
use http::StatusCode;
use sluice_http::Response;

pub(super) async fn call(
    api: &std::sync::Arc<RestApi>,
    request: &ApiRequest,
    target: &Target,
    cache: &SchemaCache,
    body: Bytes,
) -> Response {
    // A GET may call only a STABLE or IMMUTABLE function (plan_call refuses a volatile one):
    // it reads, so a replica may answer it. A POST may write: the primary.
    let route = match request.method {
        Method::Get | Method::Head => super::read::Route::Replica,
        _ => super::read::Route::Primary,
    };
    match prepare(api, request, target, cache, body) {
        Ok(job) => super::read::stream_call(api, request, target, job, route).await,
        Err(error) => error_response(&error),
    }
}

/// A call rendered and ready to run.
pub(super) struct CallJob {
    pub statement: sql::Statement,
    pub shape: ResultShape,
}

fn prepare(
    api: &RestApi,
    request: &ApiRequest,
    target: &Target,
    cache: &SchemaCache,
    body: Bytes,
) -> Result<CallJob, ApiError> {
    let read_only = matches!(request.method, Method::Get | Method::Head);
    let routine_params: Vec<String> = cache
        .routine(&target.schema, &target.name)
        .into_iter()
        .flatten()
        .flat_map(|r| r.params.iter().map(|p| p.name.clone()))
        .collect();
    // Query parameters naming a parameter are arguments (GET); the others filter the result.
    let mut text_args: Vec<(String, Vec<String>)> = Vec::new();
    let mut filters: Vec<PathFilter> = Vec::new();
    for (key, value) in &request.query.params {
        if read_only && routine_params.contains(key) {
            match text_args.iter_mut().find(|(k, _)| k == key) {
                Some((_, values)) => values.push(value.clone()),
                None => text_args.push((key.clone(), vec![value.clone()])),
            }
        } else {
            filters.push(request::parse_filter(key, value)?);
        }
    }
    let (arguments, raw_type, body_param) = if read_only {
        let arguments = if text_args.is_empty() {
            Arguments::None
        } else {
            Arguments::Text(text_args)
        };
        (arguments, None, None)
    } else {
        match request.content_type.as_ref().unwrap_or(&MediaType::Json) {
            MediaType::Json | MediaType::Any => {
                let text = String::from_utf8_lossy(&body).into_owned();
                let keys = if body.iter().all(u8::is_ascii_whitespace) {
                    Vec::new()
                } else {
                    match payload_shape(&body) {
                        Ok(shape) if !shape.is_array => shape.keys,
                        _ => Vec::new(),
                    }
                };
                let arguments = if keys.is_empty() && body.iter().all(u8::is_ascii_whitespace) {
                    Arguments::None
                } else {
                    Arguments::JsonObject { keys }
                };
                (arguments, Some("json"), Some(text))
            }
            MediaType::UrlEncoded => {
                let mut pairs: Vec<(String, Vec<String>)> = Vec::new();
                for (k, v) in form_urlencoded::parse(&body) {
                    match pairs.iter_mut().find(|(key, _)| *key == k) {
                        Some((_, values)) => values.push(v.into_owned()),
                        None => pairs.push((k.into_owned(), vec![v.into_owned()])),
                    }
                }
                (Arguments::Text(pairs), None, None)
            }
            MediaType::TextPlain => (
                Arguments::Raw,
                Some("text"),
                Some(String::from_utf8_lossy(&body).into_owned()),
            ),
            MediaType::OctetStream => {
                let hex: String = body.iter().map(|b| format!("{b:02x}")).collect();
                (Arguments::Raw, Some("bytea"), Some(format!("\\x{hex}")))
            }
            other => {
                return Err(ApiError::new(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "PGRST107",
                    format!(
                        "The request's Content-Type is not acceptable: {}",
                        crate::response::media_name(other)
                    ),
                ));
            }
        }
    };
    let plan = plan_call(
        cache,
        &target.schema,
        &target.name,
        arguments,
        raw_type,
        read_only,
    )?;
    let star = [SelectItem::Star];
    let query = &request.query;
    let read = match (&plan.shape, &plan.routine.returns_table) {
        (ResultShape::Rows, Some(table_name)) => {
            let table = cache
                .tables
                .get(table_name)
                .ok_or_else(|| super::table_not_found(&table_name.schema, &table_name.name))?;
            let input = ReadInput {
                select: query.select.as_deref().unwrap_or(&star),
                filters: &filters,
                logic: &query.logic,
                order: &query.order,
                limit: &query.limit,
                offset: &query.offset,
                aggregates_enabled: api.config.aggregates_enabled,
            };
            Some(plan_read(cache, table, &input)?)
        }
        _ => None,
    };
    let body = match plan.arguments {
        crate::plan::call::Arguments::Raw | crate::plan::call::Arguments::JsonObject { .. } => {
            body_param
        }
        _ => None,
    };
    let statement = sql::call::render(&plan, read.as_ref(), body);
    Ok(CallJob {
        statement,
        shape: plan.shape,
    })
}
