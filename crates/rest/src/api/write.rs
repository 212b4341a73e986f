//! POST, PATCH, PUT and DELETE of a table: the body read within the server's limits, its shape
//! and columns checked against the cache, the statement run behind the request's context in one
//! round trip (one implicit transaction, or an explicit one rolled back for `tx=rollback`), and
//! PostgREST's answer: status, `Location`, `Content-Range`, `Preference-Applied`, the rows.

mod body;
mod media;

use super::{RestApi, Target, error_response};
use crate::error::ApiError;
use crate::plan::write::{
    Mutation, OnConflict, RowChecks, WritePlan, conflict_columns, first_object, payload_columns,
    payload_shape,
};
use crate::plan::{Condition, ReadInput, plan_read};
use crate::request::{
    ApiRequest, Method, Operation, Operator, PathFilter, PreferCount, PreferHandling,
    PreferMissing, PreferResolution, PreferReturn,
};
use crate::response::applied::Applying;
use crate::response::media::Negotiated;
use crate::response::{self, Representation, content_range, rest_kind};
use crate::schema::{SchemaCache, Table};
use crate::sql::write::{Payload, READ_INSERTED, Returning, counts_inserted, render};
use body::body_as_json;
use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
pub(super) use media::{aggregate_of, negotiate};
use sluice_formats::ColumnSpec;
use sluice_http::{Response, empty, full};
use sluice_pg::SyncMode;

/// What the write answers once it ran.
pub(super) struct Written {
    pub rows: u64,
    pub body: Option<Bytes>,
    pub location: Option<String>,
    /// How many of the rows were inserted, for an upsert that counts them (a merge, a PUT):
    /// its status says whether it inserted.
    pub inserted: Option<u64>,
    /// What SQL set for the answer (the pre-request function, the write's triggers, a
    /// handler's aggregate).
    pub shaping: super::context::Shaping,
}

pub(super) async fn write(
    api: &RestApi,
    request: &ApiRequest,
    target: &Target,
    cache: &SchemaCache,
    filters: Vec<PathFilter>,
    body: Bytes,
) -> Response {
    match run(api, request, target, cache, filters, body).await {
        Ok(response) => response,
        Err(error) => error_response(&error),
    }
}

async fn run(
    api: &RestApi,
    request: &ApiRequest,
    target: &Target,
    cache: &SchemaCache,
    filters: Vec<PathFilter>,
    body: Bytes,
) -> Result<Response, ApiError> {
    // A plan may be for a handler's answer, as a read's may.
    if let Some((plan, planned)) = super::explain::planned(api, request, Some(&cache.media)) {
        match prepare(api, &planned, target, cache, filters.clone(), &body) {
            Ok(Prepared::Statement(prepared)) => {
                let context = target.context_statements();
                return Ok(super::explain::explain(api, &context, &prepared.statement, plan).await);
            }
            Ok(_) => {}
            Err(error) => return Ok(super::explain::plan_error(request, &error)),
        }
    }
    let prepared = match prepare(api, request, target, cache, filters, &body)? {
        Prepared::Done(written) => {
            let representation = written
                .body
                .is_some()
                .then_some(Negotiated::Builtin(Representation::Array));
            let applied = applied(api, request, target);
            return Ok(answer(request, applied, written, representation));
        }
        Prepared::Statement(prepared) => prepared,
        Prepared::Nested(json) => {
            return Ok(super::nested::insert(api, request, target, cache, json).await);
        }
    };
    let commits = api.config.tx_end.commits(request.prefer.tx);
    let (written, lsn) = execute(api, target, &prepared, commits).await?;
    let applied = applied(api, request, target);
    let mut response = answer(request, applied, written, prepared.representation);
    super::stamp_lsn(api, &mut response, lsn, target.named);
    Ok(response)
}

/// A write ready to run: its statement and how to read and answer its result.
pub(super) struct PreparedWrite<'c> {
    pub statement: crate::sql::Statement,
    /// How the written rows are answered (`return=representation`): rows in a representation,
    /// or a handler's value (the statement folds them with its aggregate).
    pub representation: Option<Negotiated<'c>>,
    /// The table whose primary key makes the `Location` header.
    pub location_of: Option<&'c Table>,
    /// What the number of rows written must satisfy before the write commits.
    pub checks: RowChecks,
    /// Whether the statement counts its inserted rows ([`READ_INSERTED`] reads them).
    pub counts_inserted: bool,
}

/// A write's plan: a statement to run, or (nothing to set) its answer already.
pub(super) enum Prepared<'c> {
    Statement(PreparedWrite<'c>),
    Done(Written),
    /// A POST whose objects carry their children (keys naming relationships): its JSON.
    Nested(Vec<u8>),
}

/// Checks a write against the cache and renders its statement.
pub(super) fn prepare<'c>(
    api: &RestApi,
    request: &ApiRequest,
    target: &Target,
    cache: &'c SchemaCache,
    filters: Vec<PathFilter>,
    body: &Bytes,
) -> Result<Prepared<'c>, ApiError> {
    let table = cache
        .table(&target.schema, &target.name)
        .ok_or_else(|| super::table_not_found(&target.schema, &target.name))?;
    let prefer = &request.prefer;
    // The operations of a batch carry their own preferences.
    super::strict_preferences(prefer)?;
    let returns = prefer.return_.unwrap_or(PreferReturn::Minimal);
    let query = &request.query;
    // Filters, order and limit as a read plan of the table's level: the write reuses them.
    let read_input = ReadInput::of_query(query, &filters, api.config.aggregates_enabled);
    let read = plan_read(cache, table, &read_input)?;
    let needs_body = matches!(request.method, Method::Post | Method::Patch | Method::Put);
    let (payload, payload_is_array, keys) = if needs_body {
        let json = body_as_json(request, body)?;
        let shape = payload_shape(&json)?;
        if request.method == Method::Post
            && query.columns.is_none()
            && shape
                .keys
                .iter()
                .any(|key| super::nested::names_relationship(cache, table, key))
        {
            return Ok(Prepared::Nested(json));
        }
        if query.columns.is_none() {
            shape.require_matching_keys()?;
        }
        // A PUT of an array puts its first object, as PostgREST does.
        match (request.method == Method::Put && shape.is_array)
            .then(|| first_object(&json))
            .flatten()
        {
            Some(first) => (Some(first), false, shape.keys),
            None => (Some(json), shape.is_array, shape.keys),
        }
    } else {
        (None, false, Vec::new())
    };
    let conditions: Vec<Condition<'_>> = read.conditions.clone();
    let mutation = match request.method {
        Method::Post => {
            let columns = payload_columns(table, &keys, query.columns.as_deref())?;
            let on_conflict = match prefer.resolution {
                Some(resolution) => Some(OnConflict {
                    columns: conflict_columns(table, query.on_conflict.as_deref())?,
                    resolution,
                }),
                None => None,
            };
            Mutation::Insert {
                columns,
                on_conflict,
                missing_default: prefer.missing == Some(PreferMissing::Default),
            }
        }
        Method::Put if !query.limit.is_empty() || !query.offset.is_empty() => {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "PGRST114",
                "limit/offset querystring parameters are not allowed for PUT",
            ));
        }
        Method::Put => put_mutation(table, &filters, &keys, payload.as_deref(), payload_is_array)?,
        Method::Patch => {
            let columns = payload_columns(table, &keys, query.columns.as_deref())?;
            // An array without keys (`[]`, `[{}]`) sets nothing, as PostgREST answers it.
            let keyed_by = if payload_is_array && !keys.is_empty() {
                if table.primary_key.is_empty() {
                    return Err(ApiError::new(
                        StatusCode::BAD_REQUEST,
                        "PGRST102",
                        "A bulk PATCH (an array body) needs a table with a primary key",
                    ));
                }
                let key = conflict_columns(table, None)?;
                if key.iter().any(|k| !keys.contains(&k.name)) {
                    return Err(ApiError::new(
                        StatusCode::BAD_REQUEST,
                        "PGRST102",
                        "Each object of a bulk PATCH must hold the primary key",
                    )
                    .hint(format!(
                        "Include {} in every object",
                        table.primary_key.join(", ")
                    )));
                }
                Some(key)
            } else {
                None
            };
            let columns = columns
                .into_iter()
                .filter(|c| {
                    !keyed_by
                        .as_ref()
                        .is_some_and(|k| k.iter().any(|k| k.name == c.name))
                })
                .collect();
            Mutation::Update {
                columns,
                conditions,
                order: read.order.clone(),
                limit: read.limit,
                keyed_by,
                missing_default: prefer.missing == Some(PreferMissing::Default),
            }
        }
        Method::Delete => Mutation::Delete {
            conditions,
            order: read.order.clone(),
            limit: read.limit,
        },
        _ => {
            return Err(ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "PGRST117",
                "Unsupported HTTP method",
            ));
        }
    };
    let negotiated = negotiate(request, target, cache)?;
    if let Mutation::Update { columns, .. } = &mutation
        && columns.is_empty()
    {
        if returns == PreferReturn::Representation
            && let Negotiated::Handler { handler, own } = negotiated
        {
            let nothing = media::nothing_set(handler, own, table, read, &request.accept)?;
            return Ok(Prepared::Statement(nothing));
        }
        // Nothing to set: PostgREST answers as if no row matched (`[]` for a JSON array).
        let empty = returns == PreferReturn::Representation
            && negotiated == Negotiated::Builtin(Representation::Array);
        return Ok(Prepared::Done(Written {
            rows: 0,
            body: empty.then(|| Bytes::from_static(b"[]")),
            location: None,
            inserted: None,
            shaping: super::context::Shaping::default(),
        }));
    }
    let plan = WritePlan {
        table,
        mutation,
        payload_is_array,
    };
    // The rows to read back: the whole read plan (select, embeds) for a representation; the
    // primary key for `Location`.
    // `order=` orders it, as PostgREST orders a write's representation.
    let mut represented = read;
    represented.conditions.clear();
    represented.limit = None;
    represented.offset = None;
    let representation = (returns == PreferReturn::Representation).then_some(negotiated);
    let returning = match (returns, request.method) {
        (PreferReturn::Representation, _) => match negotiated {
            Negotiated::Builtin(_) => Returning::Read(&represented),
            Negotiated::Handler { handler, own } => Returning::Aggregated(
                &represented,
                aggregate_of(handler, own, table, &request.accept)?,
            ),
        },
        (PreferReturn::HeadersOnly, Method::Post) if !table.primary_key.is_empty() => {
            Returning::Columns(&table.primary_key)
        }
        _ => Returning::Nothing,
    };
    let payload = match payload {
        Some(json) => Payload::Json(String::from_utf8(json).map_err(|_| {
            ApiError::new(StatusCode::BAD_REQUEST, "PGRST102", "The body is not UTF-8")
        })?),
        None => Payload::None,
    };
    let statement = render(&plan, payload, returning);
    Ok(Prepared::Statement(PreparedWrite {
        statement,
        counts_inserted: counts_inserted(&plan),
        representation,
        location_of: matches!(returning, Returning::Columns(_)).then_some(table),
        checks: RowChecks {
            // PostgREST checks it on updates and deletes (and calls), not on inserts or PUT.
            max_affected: strict_max_affected(prefer)
                .filter(|_| matches!(request.method, Method::Patch | Method::Delete)),
            singular: negotiated == Negotiated::Builtin(Representation::Object),
        },
    }))
}

/// PUT: one row by its full primary key, `pk=eq.value` filters only, the body one object with
/// every column (PGRST105 and PGRST115 otherwise).
fn put_mutation<'s>(
    table: &'s Table,
    filters: &[PathFilter],
    keys: &[String],
    payload: Option<&[u8]>,
    is_array: bool,
) -> Result<Mutation<'s>, ApiError> {
    let invalid = || {
        ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "PGRST105",
            "Filters must include all and only primary key columns with 'eq' operators",
        )
    };
    if table.primary_key.is_empty() || filters.len() != table.primary_key.len() || is_array {
        return Err(invalid());
    }
    let mut url_values = Vec::new();
    for pk in &table.primary_key {
        let value = filters
            .iter()
            .find_map(|f| match (&f.filter, f.path.is_empty()) {
                (filter, true)
                    if filter.field.name == *pk
                        && filter.field.json_path.is_empty()
                        && !filter.negated =>
                {
                    match &filter.operation {
                        Operation::Compare {
                            op: Operator::Eq,
                            quantifier: None,
                            value,
                        } => Some(value.clone()),
                        _ => None,
                    }
                }
                _ => None,
            })
            .ok_or_else(invalid)?;
        url_values.push((pk.clone(), value));
    }
    let body: serde_json::Value = payload
        .and_then(|p| serde_json::from_slice(p).ok())
        .unwrap_or_default();
    for (pk, value) in &url_values {
        let given = match body.get(pk) {
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(serde_json::Value::Null) | None => None,
            Some(other) => Some(other.to_string()),
        };
        if given.as_deref() != Some(value.as_str()) {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "PGRST115",
                "Payload values do not match URL in primary key column(s)",
            ));
        }
    }
    let columns = payload_columns(table, keys, None)?;
    Ok(Mutation::Insert {
        on_conflict: Some(OnConflict {
            columns: conflict_columns(table, None)?,
            resolution: PreferResolution::MergeDuplicates,
        }),
        columns,
        missing_default: false,
    })
}

/// Runs the statement behind the context; reads the rows it returns, and the commit position
/// when writes report it (`Sluice-Lsn`): for an implicit transaction in a later group of the
/// same pipeline, after an explicit one with its COMMIT; in both cases in the round trip that
/// commits.
pub(super) async fn execute(
    api: &RestApi,
    target: &Target,
    prepared: &PreparedWrite<'_>,
    commits: bool,
) -> Result<(Written, Option<sluice_pg::Lsn>), ApiError> {
    let statement = &prepared.statement;
    let checks = prepared.checks;
    let max_affected = checks.max_affected;
    let mut conn = api.pool.get().await.map_err(|e| ApiError::from_pool(&e))?;
    let context = target.context_statements();
    let params = statement.driver_params();
    let pg = |e: sluice_pg::Error| ApiError::from_pg(&e, false);
    // One implicit transaction commits at the Sync; one that may have to roll back (tx=rollback,
    // max-affected, response settings a pre-request function may have set wrong) is explicit
    // and ended once the result is read.
    let isolation = target.isolation();
    let explicit = !commits
        || max_affected.is_some()
        || checks.singular
        || context.len() > 1
        || isolation.is_some();
    let report = api.lsn.report && commits;
    let mode = if report && !explicit {
        SyncMode::Groups
    } else {
        SyncMode::Once
    };
    let mut batch = conn.pipeline(mode).await.map_err(pg)?;
    if explicit {
        batch
            .query(super::context::begin(isolation), &[])
            .map_err(pg)?;
    }
    for context in &context {
        batch
            .query(&context.sql, &context.driver_params())
            .map_err(pg)?;
    }
    let main = batch.query(&statement.sql, &params).map_err(pg)?;
    let counted = match prepared.counts_inserted {
        true => Some(batch.query(READ_INSERTED, &[]).map_err(pg)?),
        false => None,
    };
    // The pre-request function, the write (its triggers) and a handler's aggregate may set the
    // answer's headers and status: PostgREST reads them after the statement, in its
    // transaction; here in the same round trip, before the Sync (or the COMMIT) ends it.
    let settings = batch
        .query(super::context::RESPONSE_SETTINGS, &[])
        .map_err(pg)?;
    let position = match mode {
        SyncMode::Groups => Some(batch.commit_position().map_err(pg)?),
        _ => None,
    };
    let mut results = batch.run().await.map_err(pg)?;
    // The commit position's group is the last; the write's own statements come before it.
    let lsn = match position {
        Some(at) => {
            let lsn = sluice_pg::Lsn::from_commit_result(results.get(at));
            results.truncate(at);
            lsn
        }
        None => None,
    };
    if let Some(Err(error)) = failed_statement(&results).map(|i| &results[i]) {
        let error = pg_ref(error);
        if explicit {
            conn.batch_execute("ROLLBACK").await.map_err(pg)?;
        }
        return Err(error);
    }
    // An implicit transaction has committed by now: settings SQL set wrong answer PGRST111 or
    // PGRST112 after the write took effect, as PostgREST's (it reads them after its commit).
    let shaping = match results.get(settings) {
        Some(Ok(rows)) => super::context::Shaping::from_settings(rows),
        _ => Ok(super::context::Shaping::default()),
    };
    let shaping = match shaping {
        Ok(shaping) => shaping,
        Err(error) => {
            if explicit {
                conn.batch_execute("ROLLBACK").await.map_err(pg)?;
            }
            return Err(error);
        }
    };
    let inserted = counted.and_then(|at| results.get(at)).map(inserted_from);
    let rows = results
        .into_iter()
        .nth(main)
        .and_then(Result::ok)
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "PGRSTX00",
                "The write gave no result",
            )
        })?;
    let written = written_from(
        &mut conn,
        &rows,
        prepared.representation,
        prepared.location_of,
    )
    .await
    .map(|w| Written {
        shaping,
        inserted,
        ..w
    });
    let keep = match &written {
        Err(_) => false,
        Ok(w) => match failed_check(checks, w.rows) {
            Some(error) => {
                // Checks make the transaction explicit.
                conn.batch_execute("ROLLBACK").await.map_err(pg)?;
                return Err(error);
            }
            None => commits,
        },
    };
    let lsn = match explicit {
        true => super::end_transaction(&mut conn, keep, report).await?,
        false => lsn,
    };
    written.map(|written| (written, lsn))
}

/// `Prefer: max-affected`, which only binds under `handling=strict`.
pub(super) fn strict_max_affected(prefer: &crate::request::Preferences) -> Option<u64> {
    prefer
        .max_affected
        .filter(|_| prefer.handling == Some(PreferHandling::Strict))
}

/// What `rows` rows (a write's, or a call's result) break of `checks`, in PostgREST's order:
/// the single object first, then max-affected. The transaction is rolled back on either.
pub(super) fn failed_check(checks: RowChecks, rows: u64) -> Option<ApiError> {
    if checks.singular && rows != 1 {
        return Some(ApiError::not_single(format!(
            "The result contains {rows} rows"
        )));
    }
    checks.max_affected.filter(|max| rows > *max)?;
    Some(
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "PGRST124",
            "Query result exceeds max-affected preference constraint",
        )
        .details(format!("The query affects {rows} rows")),
    )
}

/// The count [`READ_INSERTED`] read: no count (no row offered) is none inserted.
pub(super) fn inserted_from(result: &sluice_pg::Result<sluice_pg::Rows>) -> u64 {
    result
        .as_ref()
        .ok()
        .and_then(|rows| rows.get(0)?.raw(0).map(<[u8]>::to_vec))
        .and_then(|text| String::from_utf8(text).ok()?.parse::<i64>().ok())
        .map_or(0, |n| n.max(0).unsigned_abs())
}

/// The statement at fault in the results of a pipeline with one Sync, where every statement
/// fails when one does: the first the server refused, else the first that failed.
pub(super) fn failed_statement(results: &[sluice_pg::Result<sluice_pg::Rows>]) -> Option<usize> {
    results
        .iter()
        .position(|r| r.as_ref().err().is_some_and(|e| e.as_db_error().is_some()))
        .or_else(|| results.iter().position(Result::is_err))
}

/// What a write's returned rows answer: the count, the rows in the representation asked for,
/// the `Location` of the first row's primary key.
pub(super) async fn written_from(
    conn: &mut sluice_pg::Connection,
    rows: &sluice_pg::Rows,
    representation: Option<Negotiated<'_>>,
    location_of: Option<&Table>,
) -> Result<Written, ApiError> {
    let pg = |e: sluice_pg::Error| ApiError::from_pg(&e, false);
    let representation = match representation {
        None => None,
        Some(Negotiated::Builtin(representation)) => Some(representation),
        // The aggregate's one row: the answer, then how many rows were written.
        Some(Negotiated::Handler { handler, .. }) => return Ok(media::written(handler, rows)),
    };
    let affected = rows.command_tag().rows_affected().max(rows.len() as u64);
    // A Location names the one row written, as PostgREST's does: none for several.
    let location = location_of.filter(|_| rows.len() == 1).and_then(|table| {
        let row = rows.get(0)?;
        let pairs: Vec<String> = table
            .primary_key
            .iter()
            .enumerate()
            .map(|(i, pk)| {
                let value = row.raw(i).map(|v| String::from_utf8_lossy(v).into_owned());
                let value: String =
                    form_urlencoded::byte_serialize(value.unwrap_or_default().as_bytes()).collect();
                format!("{pk}=eq.{value}")
            })
            .collect();
        Some(format!("/{}?{}", table.name.name, pairs.join("&")))
    });
    let body = match representation {
        None => None,
        Some(representation) => {
            let oids: Vec<u32> = rows.columns().iter().map(|c| c.type_oid()).collect();
            let kinds = sluice_formats::kind::column_kinds(conn, &oids)
                .await
                .map_err(pg)?;
            let specs: Vec<ColumnSpec> = rows
                .columns()
                .iter()
                .zip(kinds)
                .map(|(c, k)| ColumnSpec::new(c.name(), rest_kind(c.type_oid(), k)))
                .collect();
            let mut encoder = response::encoder(representation, &specs);
            let mut out = Vec::new();
            if representation == Representation::Object {
                if rows.len() != 1 {
                    return Err(ApiError::not_single(format!(
                        "The result contains {} rows",
                        rows.len()
                    )));
                }
            } else {
                encoder.begin(&mut out);
            }
            for row in rows.iter() {
                encoder.row((0..row.len()).map(|i| row.raw(i)), &mut out);
            }
            if representation == Representation::Object {
                if out.last() == Some(&b'\n') {
                    out.pop();
                }
            } else {
                encoder.finish(&mut out);
            }
            Some(Bytes::from(out))
        }
    };
    Ok(Written {
        rows: affected,
        body,
        location,
        inserted: None,
        shaping: super::context::Shaping::default(),
    })
}

fn pg_ref(error: &sluice_pg::Error) -> ApiError {
    ApiError::from_pg(error, false)
}

/// The answer: 201 for POST (200 for a merge that inserted nothing), 200 with a representation
/// (201 for a PUT that inserted), else 204; the headers clients read.
pub(super) fn answer(
    request: &ApiRequest,
    applied: Option<HeaderValue>,
    written: Written,
    representation: Option<Negotiated<'_>>,
) -> Response {
    let shaping = written.shaping.clone();
    let (status, headers, body) = answer_parts(request, applied, written, representation);
    let mut response = Response::new(match body {
        Some(body) => full(body),
        None => empty(),
    });
    *response.status_mut() = status;
    *response.headers_mut() = headers;
    shaping.apply(&mut response);
    response
}

/// A write's `Preference-Applied` (see [`response::applied`]).
pub(super) fn applied(api: &RestApi, request: &ApiRequest, target: &Target) -> Option<HeaderValue> {
    let kind = Applying::of_write(request.method)?;
    target.applied(api, kind, &request.prefer)
}

/// The answer's status, headers and body.
pub(super) fn answer_parts(
    request: &ApiRequest,
    applied: Option<HeaderValue>,
    written: Written,
    representation: Option<Negotiated<'_>>,
) -> (StatusCode, http::HeaderMap, Option<Bytes>) {
    let prefer = &request.prefer;
    let merges = prefer.resolution == Some(PreferResolution::MergeDuplicates)
        || prefer.ignored_resolution == Some(PreferResolution::MergeDuplicates);
    let status = match request.method {
        // A merge that inserted no row (only updated, or had none) created nothing: 200, as
        // PostgREST answers, whatever it returns. Ignoring duplicates always answers 201.
        Method::Post if merges && written.inserted.unwrap_or(written.rows) == 0 => StatusCode::OK,
        Method::Post => StatusCode::CREATED,
        Method::Put if written.body.is_some() && written.inserted.is_some_and(|n| n > 0) => {
            StatusCode::CREATED
        }
        _ if written.body.is_some() => StatusCode::OK,
        _ => StatusCode::NO_CONTENT,
    };
    let mut headers = http::HeaderMap::new();
    if let Some(representation) = representation {
        headers.insert(header::CONTENT_TYPE, representation.content_type());
    }
    if let Some(location) = written
        .location
        .and_then(|l| HeaderValue::from_str(&l).ok())
    {
        headers.insert(header::LOCATION, location);
    }
    // An exact or estimated count is the number of rows written, as PostgREST counts a write;
    // a planned one is not counted.
    let counted = matches!(
        prefer.count,
        Some(PreferCount::Exact | PreferCount::Estimated)
    )
    .then_some(written.rows);
    // PostgREST's Content-Range for POST and DELETE names no rows (`*/*`, `*/<n>`).
    // A PUT answers no Content-Range (PostgREST's single upsert sends none).
    let range = match request.method {
        Method::Post | Method::Delete => Some(content_range(0, 0, counted)),
        Method::Put => None,
        _ => Some(content_range(0, written.rows, counted)),
    };
    if let Some(Ok(range)) = range.map(|r| HeaderValue::from_str(&r)) {
        headers.insert(header::CONTENT_RANGE, range);
    }
    if let Some(applied) = applied {
        headers.insert("preference-applied", applied);
    }
    (status, headers, written.body)
}
