//! Writes of row bodies (CSJ, JSON Lines, JSON arrays) small enough to hold: each row's upsert,
//! update or insert prepared and pipelined, many rows per round trip; PUT set-replace.

use super::setreplace::{Existing, first_error};
use super::sql::{self, Target};
use super::values::{Cell, RequestValues, RowCells, RowPlace, row_cells};
use super::{Counts, Verb, body::BodyRow};
use crate::view::error::ApiError;
use crate::view::model::MethodObject;
use http::StatusCode;
use sluice_pg::{Connection, SyncMode, ToSql};
use std::collections::{HashMap, HashSet};

/// Statements per pipeline round trip (bounds the write buffer).
const BATCH: usize = 1000;

/// Which statement a row needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Shape {
    /// Insert, with the upsert's conflict clause when the method has keys.
    Upsert,
    /// A plain insert (POST).
    Insert,
    /// An update by key (a PATCH row missing an `insert: "required"` column).
    Update,
}

/// Writes `rows` through one method object; `captures` feed `existing` and `delete`.
pub async fn write(
    conn: &mut Connection,
    method: &MethodObject,
    verb: Verb,
    rows: &[BodyRow],
    request: &RequestValues<'_>,
) -> Result<Counts, ApiError> {
    let mut cells: Vec<RowCells<'_>> = Vec::with_capacity(rows.len());
    for (index, row) in rows.iter().enumerate() {
        let place = RowPlace {
            index: Some(index),
            line: row.line,
        };
        cells.push(row_cells(method, &row.fields, request, place)?);
    }
    check_duplicate_keys(method, &cells, rows)?;
    let keys: Vec<&str> = method
        .columns
        .iter()
        .filter(|c| c.key)
        .map(|c| c.name.as_str())
        .collect();
    let set_replace = match (verb, &method.existing, &method.delete) {
        (Verb::Put, Some(existing), Some(delete)) => Some((existing.as_str(), delete.as_str())),
        _ => None,
    };
    let mut statements: HashMap<(Vec<bool>, Shape), String> = HashMap::new();
    let mut existing_rows = None;
    let mut first = true;
    let mut done = 0;
    while first || done < cells.len() {
        let mut pipeline = conn
            .pipeline(SyncMode::Once)
            .await
            .map_err(|e| ApiError::from_pg(&e))?;
        let with_existing = first && set_replace.is_some();
        if let (true, Some((existing, _))) = (with_existing, set_replace) {
            let params: Vec<&(dyn ToSql + '_)> = request
                .captures
                .iter()
                .map(|c| c as &(dyn ToSql + '_))
                .collect();
            pipeline
                .query(existing, &params)
                .map_err(|e| ApiError::from_pg(&e))?;
        }
        first = false;
        let batch_start = done;
        let mut rows_of_statements = Vec::with_capacity(BATCH);
        while done < cells.len() && rows_of_statements.len() < BATCH {
            let row = &cells[done];
            done += 1;
            let shape = shape_of(method, verb, &row.cells);
            let present: Vec<bool> = row.cells.iter().map(|c| !c.is_absent()).collect();
            if shape == Shape::Update && !has_values(method, &present) {
                continue; // Nothing to change in this row.
            }
            let key = (present, shape);
            if !statements.contains_key(&key) {
                let sql = statement(method, &key.0, shape, &keys);
                statements.insert(key.clone(), sql);
            }
            let Some(sql) = statements.get(&key) else {
                continue;
            };
            let values = ordered_values(method, &row.cells, shape);
            let params: Vec<&(dyn ToSql + '_)> =
                values.iter().map(|v| v as &(dyn ToSql + '_)).collect();
            pipeline
                .query(sql, &params)
                .map_err(|e| ApiError::from_pg(&e))?;
            rows_of_statements.push(done - 1);
        }
        let _ = batch_start;
        let results = pipeline.run().await.map_err(|e| ApiError::from_pg(&e))?;
        let offset = usize::from(with_existing);
        let mut results = first_error(results, |i| match i.checked_sub(offset) {
            None => String::from(" (running the PUT's \"existing\")"),
            Some(s) => {
                let r = rows_of_statements.get(s).copied().unwrap_or(0);
                let line = rows.get(r).map_or(0, |row| row.line);
                format!(" (body row {r}, line {line})")
            }
        })
        .map_err(duplicate_in_statement)?;
        if with_existing && !results.is_empty() {
            existing_rows = Some(results.remove(0));
        }
    }
    let mut counts = Counts {
        records: cells.len(),
        ..Counts::default()
    };
    if let (Some((_, delete)), Some(existing_rows)) = (set_replace, existing_rows) {
        let mut existing = Existing::new(method, &existing_rows)?;
        for row in &cells {
            existing.see(&row.cells);
        }
        counts.selected = existing.selected();
        counts.deleted = existing
            .delete_unseen(conn, delete, request.captures)
            .await?;
    }
    Ok(counts)
}

fn shape_of(method: &MethodObject, verb: Verb, cells: &[Cell<'_>]) -> Shape {
    match verb {
        Verb::Post => Shape::Insert,
        Verb::Put => Shape::Upsert,
        Verb::Patch => {
            let update = method
                .columns
                .iter()
                .zip(cells)
                .any(|(c, v)| c.insert_required && v.is_absent());
            if update { Shape::Update } else { Shape::Upsert }
        }
    }
}

fn has_values(method: &MethodObject, present: &[bool]) -> bool {
    method
        .columns
        .iter()
        .zip(present)
        .any(|(c, &p)| p && !c.key)
}

/// The statement for a row with the `present` columns.
fn statement(method: &MethodObject, present: &[bool], shape: Shape, keys: &[&str]) -> String {
    let targets: Vec<Target<'_>> = method
        .columns
        .iter()
        .zip(present)
        .filter(|(_, p)| **p)
        .map(|(c, _)| Target {
            name: &c.name,
            key: c.key,
        })
        .collect();
    match shape {
        Shape::Upsert => sql::upsert(&method.table, &targets, keys),
        Shape::Insert => sql::upsert(&method.table, &targets, &[]),
        Shape::Update => sql::update(&method.table, &targets),
    }
}

/// The parameters in the statement's order: present columns in order (updates: values, then
/// keys).
fn ordered_values<'c>(
    method: &MethodObject,
    cells: &'c [Cell<'_>],
    shape: Shape,
) -> Vec<Option<&'c str>> {
    let present = method
        .columns
        .iter()
        .zip(cells)
        .filter(|(_, v)| !v.is_absent());
    match shape {
        Shape::Update => present
            .clone()
            .filter(|(c, _)| !c.key)
            .chain(present.filter(|(c, _)| c.key))
            .map(|(_, v)| v.as_param())
            .collect(),
        _ => present.map(|(_, v)| v.as_param()).collect(),
    }
}

/// 400 when two rows name the same key and carry other values: which would win is a guess.
/// Rows made only of keys may repeat (the repeat changes nothing).
fn check_duplicate_keys(
    method: &MethodObject,
    cells: &[RowCells<'_>],
    rows: &[BodyRow],
) -> Result<(), ApiError> {
    if method.columns.iter().all(|c| c.key) || !method.columns.iter().any(|c| c.key) {
        return Ok(());
    }
    let mut seen: HashSet<Vec<Option<&str>>> = HashSet::with_capacity(cells.len());
    for (index, row) in cells.iter().enumerate() {
        let tuple: Vec<Option<&str>> = method
            .columns
            .iter()
            .zip(&row.cells)
            .filter(|(c, _)| c.key)
            .map(|(_, v)| v.as_param())
            .collect();
        if !seen.insert(tuple) {
            let line = rows.get(index).map_or(0, |r| r.line);
            return Err(duplicate_key(Some((index, line))));
        }
    }
    Ok(())
}

/// The answer for a body that names one key twice.
pub fn duplicate_key(at: Option<(usize, u64)>) -> ApiError {
    let (message, details) = match at {
        Some((index, line)) => (
            format!("body row {index} (line {line}) repeats the key of an earlier row"),
            serde_json::json!({"path": [index]}),
        ),
        None => (
            String::from("the body has two rows with the same key"),
            serde_json::Value::Null,
        ),
    };
    ApiError::new(StatusCode::BAD_REQUEST, "duplicate_key", message)
        .with_details(details)
        .with_hint("send each key once per request")
}

/// PostgreSQL's "ON CONFLICT DO UPDATE command cannot affect row a second time" is a body with
/// one key twice.
pub fn duplicate_in_statement(error: ApiError) -> ApiError {
    if error.code == sluice_pg::sqlstate::CARDINALITY_VIOLATION {
        let mut api = duplicate_key(None);
        api.message = format!("{}: {}", api.message, error.message);
        return api;
    }
    error
}
