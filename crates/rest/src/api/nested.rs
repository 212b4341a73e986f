//! A nested insert (PostgREST #818): `POST /parents` with objects whose keys name one-to-many
//! relationships as embedding names them (`{"name": "x", "books": [{...}, ...]}`); each parent and
//! its children go in one statement, every parent's statement in one transaction and one round
//! trip, the children's foreign keys taken from the parent's inserted row.

use super::write::{Written, answer, failed_statement, written_from};
use super::{RestApi, Target, error_response};
use crate::error::ApiError;
use crate::plan::write::payload_columns;
use crate::plan::{ReadInput, plan_read};
use crate::request::{ApiRequest, PreferMissing, PreferReturn, SelectItem};
use crate::response::media::Negotiated;
use crate::schema::{Cardinality, Column, SchemaCache, Table};
use crate::sql::nested::{Children, render_inserted, render_parent};
use http::StatusCode;
use serde_json::{Map, Value};
use sluice_http::Response;
use sluice_pg::SyncMode;

/// Whether `key` names a relationship of `table` rather than a column.
pub(super) fn names_relationship(cache: &SchemaCache, table: &Table, key: &str) -> bool {
    let (name, hint) = split_hint(key);
    table.column(key).is_none()
        && match crate::plan::embed::find(cache, table, name, hint) {
            Ok(_) => true,
            // Several relationships by that name: the insert says which to choose.
            Err(error) => error.code == "PGRST201",
        }
}

fn split_hint(key: &str) -> (&str, Option<&str>) {
    match key.split_once('!') {
        Some((name, hint)) => (name, Some(hint)),
        None => (key, None),
    }
}

pub(super) async fn insert(
    api: &RestApi,
    request: &ApiRequest,
    target: &Target,
    cache: &SchemaCache,
    json: Vec<u8>,
) -> Response {
    match run(api, request, target, cache, json).await {
        Ok(response) => response,
        Err(error) => error_response(&error),
    }
}

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, "PGRST102", message)
}

/// One parent's object split into its columns and its children's relationships.
fn split_parent<'c>(
    cache: &'c SchemaCache,
    table: &'c Table,
    object: Map<String, Value>,
    index: usize,
) -> Result<(Vec<&'c Column>, String, Vec<Children<'c>>), ApiError> {
    let mut own = Map::new();
    let mut children = Vec::new();
    for (key, value) in object {
        if table.column(&key).is_some() {
            own.insert(key, value);
            continue;
        }
        let (name, hint) = split_hint(&key);
        let relationship = crate::plan::embed::find(cache, table, name, hint).map_err(|error| {
            if error.code == "PGRST201" {
                return error;
            }
            payload_columns(table, std::slice::from_ref(&key), None)
                .err()
                .unwrap_or(error)
        })?;
        let fk = match &relationship.cardinality {
            Cardinality::OneToMany(fk)
            | Cardinality::OneToOne {
                key: fk,
                parent: true,
            } => fk,
            Cardinality::Computed { function, .. } => {
                return Err(invalid(format!(
                    "A nested insert follows foreign keys: '{key}' is the computed \
                     relationship {function}, whose rows a function chooses"
                )));
            }
            _ => {
                return Err(invalid(format!(
                    "A nested insert writes the rows that point to the parent: '{key}' is \
                     referenced by '{}', insert it first and give its key",
                    table.name.name
                )));
            }
        };
        let child_table = cache
            .tables
            .get(&relationship.foreign_table)
            .ok_or_else(|| {
                super::table_not_found(
                    &relationship.foreign_table.schema,
                    &relationship.foreign_table.name,
                )
            })?;
        let items = match value {
            Value::Array(items) => items,
            object @ Value::Object(_) => vec![object],
            _ => {
                return Err(invalid(format!(
                    "'{key}' of object {index} must be an object or an array of objects"
                )));
            }
        };
        let mut keys: Vec<String> = Vec::new();
        for item in &items {
            let Value::Object(item) = item else {
                return Err(invalid(format!(
                    "'{key}' of object {index} must hold only objects"
                )));
            };
            for child_key in item.keys() {
                if fk.columns.iter().any(|(_, c)| c == child_key) {
                    return Err(invalid(format!(
                        "'{child_key}' of '{key}' is set from the parent row"
                    )));
                }
                if !keys.contains(child_key) {
                    keys.push(child_key.clone());
                }
            }
        }
        let columns = payload_columns(child_table, &keys, None)?;
        children.push(Children {
            table: child_table,
            key: &fk.columns,
            columns,
            json: Value::Array(items).to_string(),
        });
    }
    let keys: Vec<String> = own.keys().cloned().collect();
    let columns = payload_columns(table, &keys, None)?;
    Ok((columns, Value::Object(own).to_string(), children))
}

async fn run(
    api: &RestApi,
    request: &ApiRequest,
    target: &Target,
    cache: &SchemaCache,
    json: Vec<u8>,
) -> Result<Response, ApiError> {
    let table = cache
        .table(&target.schema, &target.name)
        .ok_or_else(|| super::table_not_found(&target.schema, &target.name))?;
    let body: Value = serde_json::from_slice(&json)
        .map_err(|e| invalid("Empty or invalid json").details(e.to_string()))?;
    let parents = match body {
        Value::Array(items) => items,
        object @ Value::Object(_) => vec![object],
        _ => return Err(invalid("Empty or invalid json")),
    };
    let prefer = &request.prefer;
    let missing_default = prefer.missing == Some(PreferMissing::Default);
    let mut statements = Vec::with_capacity(parents.len());
    for (i, parent) in parents.into_iter().enumerate() {
        let Value::Object(object) = parent else {
            return Err(invalid(format!(
                "element {} of the array is not an object",
                i + 1
            )));
        };
        let (columns, own, children) = split_parent(cache, table, object, i + 1)?;
        statements.push(render_parent(
            table,
            &columns,
            own,
            &children,
            missing_default,
        ));
    }
    let returns = prefer.return_.unwrap_or(PreferReturn::Minimal);
    let representation = super::write::negotiate(request, target, cache)?;
    let representation = (returns == PreferReturn::Representation).then_some(representation);
    if representation.is_some() && table.primary_key.is_empty() {
        return Err(invalid(format!(
            "return=representation of a nested insert reads the parents back by their primary \
             key, and '{}' has none",
            table.name.name
        )));
    }
    let mut conn = api.pool.get().await.map_err(|e| ApiError::from_pool(&e))?;
    let pg = |e: sluice_pg::Error| ApiError::from_pg(&e, false);
    let context = target.context_statements();
    let params: Vec<_> = statements.iter().map(|s| s.driver_params()).collect();
    let mut pipeline = conn.pipeline(SyncMode::Once).await.map_err(pg)?;
    pipeline
        .query(super::context::begin(target.isolation()), &[])
        .map_err(pg)?;
    for context in &context {
        pipeline
            .query(&context.sql, &context.driver_params())
            .map_err(pg)?;
    }
    let mut slots = Vec::with_capacity(statements.len());
    for (statement, params) in statements.iter().zip(&params) {
        slots.push(pipeline.query(&statement.sql, params).map_err(pg)?);
    }
    // What SQL set for the answer (the pre-request function, the inserts' triggers).
    let settings = pipeline
        .query(super::context::RESPONSE_SETTINGS, &[])
        .map_err(pg)?;
    let results = pipeline.run().await.map_err(pg)?;
    if let Some(Err(error)) = failed_statement(&results).map(|i| &results[i]) {
        let error = ApiError::from_pg(error, false);
        conn.batch_execute("ROLLBACK").await.map_err(pg)?;
        return Err(error);
    }
    let mut results: Vec<Option<sluice_pg::Rows>> = results.into_iter().map(Result::ok).collect();
    let inserted: Vec<sluice_pg::Rows> = slots
        .iter()
        .filter_map(|slot| results.get_mut(*slot).and_then(Option::take))
        .collect();
    let shaping = match results.get_mut(settings).and_then(Option::take) {
        Some(rows) => super::context::Shaping::from_settings(&rows),
        None => Ok(super::context::Shaping::default()),
    };
    let outcome = match shaping {
        Ok(shaping) => answer_rows(
            &mut conn,
            request,
            cache,
            table,
            &inserted,
            representation,
            returns,
        )
        .await
        // A handler's aggregate, read after, may have set them again.
        .map(|written| match written.shaping == Default::default() {
            true => Written { shaping, ..written },
            false => written,
        }),
        Err(error) => Err(error),
    };
    let commits = outcome.is_ok() && api.config.tx_end.commits(prefer.tx);
    let lsn = super::end_transaction(&mut conn, commits, api.lsn.report).await?;
    let applied = super::write::applied(api, request, target);
    let mut response = answer(request, applied, outcome?, representation);
    super::stamp_lsn(api, &mut response, lsn, target.named);
    Ok(response)
}

/// What the nested insert answers: the parents' count, their representation (read back with
/// their children in the same transaction) or the first one's `Location`.
async fn answer_rows(
    conn: &mut sluice_pg::Connection,
    request: &ApiRequest,
    cache: &SchemaCache,
    table: &Table,
    inserted: &[sluice_pg::Rows],
    representation: Option<Negotiated<'_>>,
    returns: PreferReturn,
) -> Result<Written, ApiError> {
    let parents = inserted.len() as u64;
    match (representation, returns) {
        (Some(representation), _) => {
            let keys: Vec<Value> = inserted
                .iter()
                .filter_map(|rows| rows.get(0))
                .map(|row| {
                    Value::Array(
                        (0..row.len())
                            .map(|i| {
                                row.raw(i)
                                    .map(|v| Value::String(String::from_utf8_lossy(v).into_owned()))
                                    .unwrap_or(Value::Null)
                            })
                            .collect(),
                    )
                })
                .collect();
            let star = [SelectItem::Star];
            let query = &request.query;
            let select = query.select.as_deref().unwrap_or(&star);
            let read = plan_read(cache, table, &ReadInput::written(select, &query.order))?;
            let mut statement = render_inserted(table, Value::Array(keys).to_string(), &read);
            // A handler's aggregate folds the rows read back (a plain read: it can be wrapped).
            if let Negotiated::Handler { handler, own } = representation {
                let aggregate = super::write::aggregate_of(handler, own, table, &request.accept)?;
                statement =
                    crate::sql::media::render(statement, aggregate.function, aggregate.argument);
            }
            let pg = |e: sluice_pg::Error| ApiError::from_pg(&e, false);
            let rows = conn
                .query(&statement.sql, &statement.driver_params())
                .await
                .map_err(pg)?;
            let mut written = written_from(conn, &rows, Some(representation), None).await?;
            written.rows = parents;
            if let Negotiated::Handler { .. } = representation {
                // What the aggregate set for the answer.
                let settings = conn
                    .query(super::context::RESPONSE_SETTINGS, &[])
                    .await
                    .map_err(pg)?;
                written.shaping = super::context::Shaping::from_settings(&settings)?;
            }
            Ok(written)
        }
        (None, PreferReturn::HeadersOnly) if !table.primary_key.is_empty() => {
            let mut written = match inserted.first() {
                Some(rows) => written_from(conn, rows, None, Some(table)).await?,
                None => Written {
                    rows: 0,
                    body: None,
                    location: None,
                    inserted: None,
                    shaping: super::context::Shaping::default(),
                },
            };
            written.rows = parents;
            Ok(written)
        }
        _ => Ok(Written {
            rows: parents,
            body: None,
            location: None,
            inserted: None,
            shaping: super::context::Shaping::default(),
        }),
    }
}
