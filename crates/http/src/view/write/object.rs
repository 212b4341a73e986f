//! Writes of `return: "object"` endpoints: PUT upserts one JSON object, PATCH updates it, POST
//! inserts it; each answers with a row as a JSON object (`returning`, or the endpoint's GET re-run
//! inside the transaction).

use super::Verb;
use super::body::Fields;
use super::sql::{self, Target};
use super::values::{Cell, RequestValues, RowPlace, cell_of, row_cells, source_value};
use crate::view::error::ApiError;
use crate::view::json::{ObjectWriter, column_kinds};
use crate::view::model::{Endpoint, MethodObject};
use http::StatusCode;
use sluice_pg::{Connection, Rows, ToSql};

/// The row a write answers with: its JSON object and status.
pub struct Answer {
    pub status: StatusCode,
    pub object: Vec<u8>,
}

/// The first row of `rows` as a JSON object, `None` without rows.
async fn first_object(conn: &mut Connection, rows: &Rows) -> Result<Option<Vec<u8>>, ApiError> {
    let Some(row) = rows.get(0) else {
        return Ok(None);
    };
    let kinds = column_kinds(conn, rows.columns())
        .await
        .map_err(|e| ApiError::from_pg(&e))?;
    let mut out = Vec::with_capacity(256);
    ObjectWriter::for_columns(rows.columns(), kinds).write_row(row, &mut out);
    Ok(Some(out))
}

/// Applies `methods` to the object `body` in order and builds the answer.
pub async fn write(
    conn: &mut Connection,
    endpoint: &Endpoint,
    methods: &[MethodObject],
    verb: Verb,
    body: &Fields,
    request: &RequestValues<'_>,
) -> Result<Answer, ApiError> {
    let place = RowPlace {
        index: None,
        line: 0,
    };
    let mut answer: Option<Vec<u8>> = None;
    for method in methods {
        let cells = row_cells(method, body, request, place)?;
        let present: Vec<(Target<'_>, Option<&str>)> = method
            .columns
            .iter()
            .zip(&cells.cells)
            .filter(|(_, v)| !v.is_absent())
            .map(|(c, v)| {
                (
                    Target {
                        name: &c.name,
                        key: c.key,
                    },
                    v.as_param(),
                )
            })
            .collect();
        let targets: Vec<Target<'_>> = present.iter().map(|(t, _)| *t).collect();
        let rows = match verb {
            Verb::Put | Verb::Post => {
                let keys: Vec<&str> = if verb == Verb::Put {
                    targets.iter().filter(|t| t.key).map(|t| t.name).collect()
                } else {
                    Vec::new()
                };
                let mut statement = sql::upsert(&method.table, &targets, &keys);
                sql::returning(&mut statement, &method.returning);
                let values: Vec<Option<&str>> = present.iter().map(|(_, v)| *v).collect();
                run(conn, &statement, &values).await?
            }
            Verb::Patch => {
                let has_values = targets.iter().any(|t| !t.key);
                let (statement, values): (String, Vec<Option<&str>>) = if has_values {
                    let values = present
                        .iter()
                        .filter(|(t, _)| !t.key)
                        .chain(present.iter().filter(|(t, _)| t.key))
                        .map(|(_, v)| *v)
                        .collect();
                    let mut statement = sql::update(&method.table, &targets);
                    sql::returning(&mut statement, &method.returning);
                    (statement, values)
                } else {
                    let values = present.iter().map(|(_, v)| *v).collect();
                    (sql::exists(&method.table, &targets), values)
                };
                let rows = run(conn, &statement, &values).await?;
                if rows.is_empty() {
                    return Err(not_found());
                }
                rows
            }
        };
        if answer.is_none() && (verb == Verb::Post || !method.returning.is_empty()) {
            answer = first_object(conn, &rows).await?;
        }
    }
    let object = match (answer, &endpoint.get) {
        (Some(object), _) => object,
        (None, Some(get)) => rerun_get(conn, get, body, request).await?,
        (None, None) => b"{}".to_vec(),
    };
    let status = if verb == Verb::Post {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(Answer { status, object })
}

async fn run(conn: &mut Connection, sql: &str, values: &[Option<&str>]) -> Result<Rows, ApiError> {
    let params: Vec<&(dyn ToSql + '_)> = values.iter().map(|v| v as &(dyn ToSql + '_)).collect();
    conn.query(sql, &params)
        .await
        .map_err(|e| ApiError::from_pg(&e))
}

/// The endpoint's GET, run in the write's transaction so it sees the write: exactly one row.
async fn rerun_get(
    conn: &mut Connection,
    get: &crate::view::model::Command,
    body: &Fields,
    request: &RequestValues<'_>,
) -> Result<Vec<u8>, ApiError> {
    let mut owned: Vec<Option<String>> = Vec::with_capacity(get.arguments.len());
    for source in &get.arguments {
        let value = source_value(source, body, request);
        owned.push(match cell_of(value.as_deref(), false) {
            Cell::Text(t) => Some(t.into_owned()),
            Cell::Absent | Cell::Null => None,
        });
    }
    let values: Vec<Option<&str>> = owned.iter().map(Option::as_deref).collect();
    let rows = run(conn, &get.sql, &values).await?;
    match rows.len() {
        0 => Err(not_found()),
        1 => Ok(first_object(conn, &rows).await?.unwrap_or_default()),
        n => Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "too_many_rows",
            format!("the endpoint's GET returned {n} rows where one object was expected"),
        )),
    }
}

/// 404 `{"error": "Not found"}`-style answer in the view error shape.
pub fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "not_found", "Not found")
}
