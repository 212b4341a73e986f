//! `/rpc/name`: the arguments from the query string (GET, read-only) or the body (POST), the
//! overload they name, and the result read like a table's rows (filters, `select=`, `order=`,
//! the page and the count on its columns) in PostgREST's shape: a value, an array of values,
//! rows, or one object for OUT parameters.

use super::{RestApi, Target, error_response};
use crate::error::ApiError;
use crate::plan::call::{Arguments, CallPlan, ResultShape, plan_call};
use crate::plan::write::{first_object, payload_shape};
use crate::plan::{ReadInput, plan_read};
use crate::request::{self, ApiRequest, MediaType, Method, PathFilter, PreferCount, PreferParams};
use crate::response::Representation;
use crate::response::media::{Answering, Negotiated, default_select, negotiate_handlers};
use crate::schema::media::MediaHandler;
use crate::schema::{SchemaCache, Table, Volatility};
use crate::sql;
use bytes::Bytes;
use http::StatusCode;
use serde::de::IgnoredAny;
use sluice_http::Response;

pub(super) async fn call(
    api: &std::sync::Arc<RestApi>,
    request: &ApiRequest,
    target: &Target,
    cache: &SchemaCache,
    body: Bytes,
) -> Response {
    // A GET reads (its transaction is read-only, whatever the function's volatility), so a
    // replica may answer it. A POST may write: the primary.
    let route = match request.method {
        Method::Get | Method::Head => super::read::Route::Replica,
        _ => super::read::Route::Primary,
    };
    if let Some((plan, inner)) = super::explain::planned(api, request, Some(&cache.media)) {
        return match prepare(api, &inner, target, cache, body) {
            Ok(job) => {
                let by_get = matches!(inner.method, Method::Get | Method::Head);
                let context =
                    target.call_context_statements(&job.function_settings, job.volatile, by_get);
                super::explain::explain(api, &context, &job.statement, plan).await
            }
            Err(error) => super::explain::plan_error(request, &error),
        };
    }
    match prepare(api, request, target, cache, body) {
        Ok(job) => {
            let void = job.void;
            let response = super::read::stream_call(api, request, target, job, route).await;
            if void { no_content(response) } else { response }
        }
        Err(error) => error_response(&error),
    }
}

/// A function returning `void` answers without a body, 204 unless it set another status
/// (`response.status`), as PostgREST answers it; an error keeps its body. Its one row was
/// read, and the call committed, before the answer's head (a scalar's result is collected).
fn no_content(mut response: Response) -> Response {
    let status = response.status();
    if !status.is_success() {
        return response;
    }
    if status == StatusCode::OK {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    response.headers_mut().remove(http::header::CONTENT_TYPE);
    *response.body_mut() = sluice_http::empty();
    response
}

/// A call rendered and ready to run.
pub(super) struct CallJob {
    pub statement: sql::Statement,
    pub shape: ResultShape,
    /// The statements that count the rows, run before the call (`Prefer: count=`).
    pub counts: Vec<sql::Statement>,
    /// The page's first row (the query's offset, the Range header).
    pub offset: u64,
    /// The page's size when bounded (limit, Range, max_rows).
    pub limit: Option<u64>,
    pub count_preference: Option<PreferCount>,
    /// The statement leaves the page out: the rows are counted as they are read, and only the
    /// page's are sent.
    pub count_rows: bool,
    /// `Prefer: params=single-object` was applied: the body went whole to the one parameter.
    pub single_object: bool,
    /// The function returns `void`: the answer has no body.
    pub void: bool,
    /// The function's hoisted settings, set in the call's transaction before it runs.
    pub function_settings: Vec<(String, String)>,
    /// The function is `VOLATILE`: a POST calling it may write.
    pub volatile: bool,
    /// The function's own isolation level (`SET default_transaction_isolation`).
    pub isolation: Option<crate::schema::IsolationLevel>,
    /// How rows are written (a result of rows).
    pub representation: Representation,
    /// A media type handler answers instead (its value; its media type alone for HEAD).
    pub media: Option<super::read::MediaAnswer>,
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
    // An array of objects gives the first one's arguments, as PostgREST takes them; a single
    // unnamed json parameter still gets the body whole.
    let mut first_object = None;
    // `Prefer: params=single-object` applies to a JSON body; a GET's arguments stay by name.
    let json_body = !read_only
        && matches!(
            request.content_type.as_ref().unwrap_or(&MediaType::Json),
            MediaType::Json | MediaType::Any
        );
    let single_object = json_body && request.prefer.params == Some(PreferParams::SingleObject);
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
                let blank = body.iter().all(u8::is_ascii_whitespace);
                let (keys, first) = if blank || single_object {
                    (Vec::new(), None)
                } else {
                    argument_names(&body)?
                };
                first_object = first;
                let arguments = if keys.is_empty() && blank {
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
            MediaType::Other(xml) if xml == "text/xml" => (
                Arguments::Raw,
                Some("xml"),
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
        single_object,
    )?;
    let input = ReadInput::of_query(&request.query, &filters, api.config.aggregates_enabled);
    let mut read = plan_read(cache, result_relation(cache, &plan)?, &input)?;
    let (offset, limit) = super::read::apply_page(api, request, &mut read);
    let body = match plan.arguments {
        Arguments::JsonObject { .. } => first_object.or(body_param),
        Arguments::Raw => body_param,
        _ => None,
    };
    let (representation, handler) = negotiate(request, cache, &plan)?;
    let count_preference = request.prefer.count;
    // A count statement calls the function a second time: fine for one that changes nothing,
    // not for a volatile one (it would do its work twice). Those, and the functions returning
    // one row, are counted as their rows are read instead, the page applied then: the function
    // runs once, as in PostgREST's single statement. EXPLAIN runs nothing, so planned counts
    // are always a statement.
    let once = plan.routine.volatility == Volatility::Volatile
        || matches!(plan.shape, ResultShape::Scalar | ResultShape::Object);
    // A handler's aggregate takes the page's rows in SQL: a function that must run once is not
    // counted then.
    let aggregated =
        handler.is_some_and(|h| h.aggregate.is_some()) && request.method != Method::Head;
    let count_rows = once
        && !aggregated
        && matches!(
            count_preference,
            Some(PreferCount::Exact | PreferCount::Estimated)
        );
    let counts = match count_preference {
        None => Vec::new(),
        Some(PreferCount::Exact | PreferCount::Estimated) if count_rows || once => Vec::new(),
        Some(PreferCount::Exact) => vec![sql::call::render_count(&plan, &read, body.clone(), None)],
        Some(PreferCount::Planned) => {
            vec![sql::call::render_explain(&plan, &read, body.clone())]
        }
        // An exact count while it stays within max_rows, else the planner's estimate.
        Some(PreferCount::Estimated) => match api.config.max_rows {
            Some(max) => vec![
                sql::call::render_count(&plan, &read, body.clone(), Some(max + 1)),
                sql::call::render_explain(&plan, &read, body.clone()),
            ],
            None => vec![sql::call::render_count(&plan, &read, body.clone(), None)],
        },
    };
    if count_rows {
        read.limit = None;
        read.offset = None;
    }
    let mut statement = sql::call::render(&plan, &read, body);
    if let Some(handler) = handler
        && let Some(aggregate) = &handler.aggregate
        && aggregated
    {
        statement = sql::media::render(statement, aggregate, argument(&plan));
    }
    Ok(CallJob {
        statement,
        shape: plan.shape,
        counts,
        offset,
        limit,
        count_preference,
        count_rows,
        single_object,
        void: returns_void(plan.routine),
        function_settings: plan.routine.hoisted_settings.clone(),
        volatile: plan.routine.volatility == Volatility::Volatile,
        isolation: plan.routine.isolation,
        representation,
        media: handler.map(super::read::MediaAnswer::of),
    })
}

/// The representation of a call's rows, or the media type handler answering it: the handlers
/// of its result's table (or of the function itself), as PostgREST looks them up.
fn negotiate<'c>(
    request: &ApiRequest,
    cache: &'c SchemaCache,
    plan: &CallPlan<'_>,
) -> Result<(Representation, Option<&'c MediaHandler>), ApiError> {
    let routine = plan.routine;
    let target = routine.returns_table.as_ref().unwrap_or(&routine.name);
    let answering = Answering {
        schema: &target.schema,
        name: &target.name,
        default_select: default_select(request.query.select.as_deref()),
        values: plan.shape == ResultShape::Scalar,
    };
    Ok(
        match negotiate_handlers(&request.accept, &cache.media, answering)? {
            Negotiated::Builtin(representation) => (representation, None),
            Negotiated::Handler { handler, .. } => (Representation::Array, Some(handler)),
        },
    )
}

/// What a handler's aggregate takes of each row of a call's result: a scalar's value, a
/// table's row, or the row as it is.
fn argument<'p>(plan: &'p CallPlan<'_>) -> sql::media::Argument<'p> {
    let routine = plan.routine;
    match (plan.shape, &routine.returns_table) {
        (ResultShape::Scalar, _) => sql::media::Argument::Column(&routine.name.name),
        (_, Some(table)) => sql::media::Argument::RowOf(table),
        (_, None) => sql::media::Argument::Row,
    }
}

/// `void`'s type OID (`pg_type`), fixed in PostgreSQL's catalog.
const VOID_OID: u32 = 2278;

fn returns_void(routine: &crate::schema::Routine) -> bool {
    matches!(
        routine.returns,
        crate::schema::ReturnType::Single { type_oid, .. } if type_oid == VOID_OID
    ) && !routine.is_procedure
}

/// The relation a call's result is read as: the table whose rows it returns (so they embed
/// like the table's), else the function's own result columns.
fn result_relation<'s>(cache: &'s SchemaCache, plan: &CallPlan<'s>) -> Result<&'s Table, ApiError> {
    let routine = plan.routine;
    match (&routine.returns_table, &routine.result) {
        (Some(name), _) => cache
            .tables
            .get(name)
            .ok_or_else(|| super::table_not_found(&name.schema, &name.name)),
        (None, Some(result)) => Ok(result),
        // The loader gives every routine one or the other.
        (None, None) => Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "PGRSTX00",
            format!(
                "The schema cache has no result columns for the function {}",
                routine.name
            ),
        )),
    }
}

/// The argument names a JSON body gives: an object's keys, or for an array of objects the first
/// one's, with that object's text (the arguments PostgREST takes). Other JSON (an array of
/// values, a number, a string) names none and may go whole to a single unnamed json parameter;
/// but an array of objects whose keys differ, or a body that is not JSON at all, is 400
/// PGRST102 before any function is looked for, as PostgREST parses the payload first.
fn argument_names(body: &[u8]) -> Result<(Vec<String>, Option<String>), ApiError> {
    match payload_shape(body) {
        Ok(shape) if shape.is_array => {
            shape.require_matching_keys()?;
            let first = first_object(body).and_then(|first| String::from_utf8(first).ok());
            Ok((shape.keys, first))
        }
        Ok(shape) => Ok((shape.keys, None)),
        Err(error) => match serde_json::from_slice::<IgnoredAny>(body) {
            Ok(_) => Ok((Vec::new(), None)),
            Err(_) => Err(error),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_bodies_name_arguments_or_are_refused() {
        assert_eq!(
            argument_names(br#"{"a": 1, "b": [2]}"#).unwrap(),
            (vec!["a".to_string(), "b".to_string()], None)
        );
        // An array of objects: the first one's names and text.
        assert_eq!(
            argument_names(br#"[ {"a": 1.50}, {"a": 2}]"#).unwrap(),
            (vec!["a".to_string()], Some(r#"{"a": 1.50}"#.to_string()))
        );
        // Other JSON names no argument: a single unnamed json parameter may take it whole.
        for whole in [&b"[1, 2]"[..], b"\"x\"", b"1", b"null", b"[]"] {
            assert_eq!(argument_names(whole).unwrap(), (Vec::new(), None));
        }
        for (bad, message) in [
            (&b"nul"[..], "Empty or invalid json"),
            (b"{\"a\": 1", "Empty or invalid json"),
            (b"{} {}", "Empty or invalid json"),
            (br#"[{"a": 1}, {"b": 2}]"#, "All object keys must match"),
        ] {
            let error = argument_names(bad).unwrap_err();
            assert_eq!(
                (error.status, error.code.as_str(), error.message.as_str()),
                (StatusCode::BAD_REQUEST, "PGRST102", message),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
