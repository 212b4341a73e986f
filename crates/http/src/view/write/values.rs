//! Column values of a write: each column's value from its source (capture, body field, body
//! path, header), trimmed, as text for PostgreSQL; key checks and JSON Schema validation.

use super::body::Fields;
use crate::view::error::ApiError;
use crate::view::model::{BodyPathElement, Column, MethodObject, Schema, Source};
use http::StatusCode;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// A column's value for one row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cell<'a> {
    /// No value: the column is left out of the statement.
    Absent,
    /// JSON `null`: SQL NULL.
    Null,
    /// Text in PostgreSQL input syntax.
    Text(Cow<'a, str>),
}

impl Cell<'_> {
    pub fn is_absent(&self) -> bool {
        matches!(self, Cell::Absent)
    }

    /// The parameter value: `None` is NULL.
    pub fn as_param(&self) -> Option<&str> {
        match self {
            Cell::Text(text) => Some(text),
            _ => None,
        }
    }
}

/// What values outside the body rows come from.
pub struct RequestValues<'a> {
    /// `captures[n - 1]` is capture `$n`.
    pub captures: &'a [String],
    pub headers: &'a http::HeaderMap,
}

/// The JSON value a source names in `row` (the body row, or the whole object body).
pub fn source_value<'v>(
    source: &Source,
    row: &'v Fields,
    request: &'v RequestValues<'_>,
) -> Option<Cow<'v, Value>> {
    match source {
        Source::Capture(n) => request
            .captures
            .get(usize::from(*n).checked_sub(1)?)
            .map(|c| Cow::Owned(Value::String(c.clone()))),
        Source::Field(name) => row.get(name).map(Cow::Borrowed),
        Source::Body(path) => {
            let mut steps = path.iter();
            let mut value = match steps.next()? {
                BodyPathElement::Key(key) => row.get(key)?,
                BodyPathElement::Index(_) => return None,
            };
            for step in steps {
                value = match step {
                    BodyPathElement::Key(key) => value.get(key)?,
                    BodyPathElement::Index(i) => value.get(*i)?,
                };
            }
            Some(Cow::Borrowed(value))
        }
        Source::Header(name) => request
            .headers
            .get(name.as_str())
            .and_then(|v| v.to_str().ok())
            .map(|v| Cow::Owned(Value::String(v.to_owned()))),
    }
}

/// The cell for `column` from a JSON value: strings trimmed (when `trim`) and all-whitespace
/// strings absent; numbers and booleans their text; objects and arrays their JSON text.
pub fn cell_of<'v>(value: Option<&'v Value>, trim: bool) -> Cell<'v> {
    match value {
        None => Cell::Absent,
        Some(Value::Null) => Cell::Null,
        Some(Value::String(s)) => {
            let text = if trim { s.trim() } else { s.as_str() };
            if trim && text.is_empty() {
                Cell::Absent
            } else {
                Cell::Text(Cow::Borrowed(text))
            }
        }
        Some(Value::Bool(b)) => Cell::Text(Cow::Borrowed(if *b { "true" } else { "false" })),
        Some(Value::Number(n)) => Cell::Text(Cow::Owned(n.to_string())),
        Some(other) => Cell::Text(Cow::Owned(other.to_string())),
    }
}

/// Turns a borrowed cell into an owned one.
pub fn owned(cell: Cell<'_>) -> Cell<'static> {
    match cell {
        Cell::Absent => Cell::Absent,
        Cell::Null => Cell::Null,
        Cell::Text(t) => Cell::Text(Cow::Owned(t.into_owned())),
    }
}

/// One row's cells, in the method object's column order, after validation.
#[derive(Debug)]
pub struct RowCells<'a> {
    pub cells: Vec<Cell<'a>>,
}

/// Where a row sits, for error paths: `Some(index)` for rows of CSJ/JSON Lines/array bodies.
#[derive(Debug, Clone, Copy)]
pub struct RowPlace {
    pub index: Option<usize>,
    pub line: u64,
}

impl RowPlace {
    fn path(&self, rest: impl IntoIterator<Item = Value>) -> Value {
        let mut path: Vec<Value> = self.index.map(Value::from).into_iter().collect();
        path.extend(rest);
        Value::Array(path)
    }
}

/// Resolves and checks every column of `method` for one row: the row schema, each column's
/// schema, and that every key column has a value.
pub fn row_cells<'v>(
    method: &MethodObject,
    row: &'v Fields,
    request: &'v RequestValues<'_>,
    place: RowPlace,
) -> Result<RowCells<'v>, ApiError> {
    if let Some(schema) = &method.schema {
        // The row schema sees the row as sent, before trimming.
        check_schema(schema, &row.to_object(), place, None)?;
    }
    let mut cells = Vec::with_capacity(method.columns.len());
    for column in &method.columns {
        let value = source_value(&column.source, row, request);
        let cell = match value {
            Some(Cow::Borrowed(v)) => cell_of(Some(v), column.trim),
            Some(Cow::Owned(v)) => owned(cell_of(Some(&v), column.trim)),
            None => Cell::Absent,
        };
        if let (Some(schema), false) = (&column.schema, cell.is_absent()) {
            let instance = match &cell {
                Cell::Absent | Cell::Null => Value::Null,
                Cell::Text(_) => match source_value(&column.source, row, request).as_deref() {
                    Some(Value::String(s)) if column.trim => Value::String(s.trim().to_owned()),
                    Some(v) => v.clone(),
                    None => Value::Null,
                },
            };
            check_schema(schema, &instance, place, Some(column))?;
        }
        if column.key && matches!(cell, Cell::Absent | Cell::Null) {
            return Err(missing_key(column, place));
        }
        cells.push(cell);
    }
    Ok(RowCells { cells })
}

/// 422 for a key column without a value.
pub fn missing_key(column: &Column, place: RowPlace) -> ApiError {
    let at = match place.index {
        Some(i) => format!(" in row {i} (line {})", place.line),
        None => String::new(),
    };
    ApiError::new(
        StatusCode::UNPROCESSABLE_ENTITY,
        "missing_key",
        format!("the key column {:?} has no value{at}", column.name),
    )
    .with_details(serde_json::json!({"path": place.path([Value::from(column.name.as_str())])}))
    .with_hint("send a value for every key column")
}

/// Compiled schemas, by the address of the schema text the view holds (kept alive here, so an
/// address is never reused for another schema).
type Compiled = HashMap<usize, (Arc<Value>, Arc<jsonschema::Validator>)>;
static COMPILED: Mutex<Option<Compiled>> = Mutex::new(None);

/// The compiled validator of `schema`, compiled on first use.
pub fn validator(schema: &Schema) -> Result<Arc<jsonschema::Validator>, ApiError> {
    let address = Arc::as_ptr(&schema.source) as usize;
    let mut cache = COMPILED.lock().unwrap_or_else(PoisonError::into_inner);
    let cache = cache.get_or_insert_with(HashMap::new);
    if let Some((_, compiled)) = cache.get(&address) {
        return Ok(compiled.clone());
    }
    let compiled = jsonschema::validator_for(&schema.source).map_err(|e| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "bad_schema",
            format!("the view's JSON Schema does not compile: {e}"),
        )
    })?;
    let compiled = Arc::new(compiled);
    cache.insert(address, (schema.source.clone(), compiled.clone()));
    Ok(compiled)
}

/// 422 with the failing path when `instance` does not satisfy `schema`.
fn check_schema(
    schema: &Schema,
    instance: &Value,
    place: RowPlace,
    column: Option<&Column>,
) -> Result<(), ApiError> {
    let validator = validator(schema)?;
    let Err(error) = validator.validate(instance) else {
        return Ok(());
    };
    let inner = error
        .instance_path()
        .segments()
        .map(|segment| match segment {
            jsonschema::paths::LocationSegment::Index(i) => Value::from(i),
            other => Value::String(other.to_string()),
        });
    let prefix = column.map(|c| Value::from(c.name.as_str()));
    let path = place.path(prefix.into_iter().chain(inner));
    Err(ApiError::new(
        StatusCode::UNPROCESSABLE_ENTITY,
        "schema",
        format!("the body does not match its schema at {path}: {error}"),
    )
    .with_details(serde_json::json!({
        "path": path,
        "schema_path": error.schema_path().as_str(),
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_from_json() {
        let v = |j: Value, trim| owned(cell_of(Some(&j), trim));
        assert_eq!(v(Value::from("  a "), true), Cell::Text("a".into()));
        assert_eq!(v(Value::from("  a "), false), Cell::Text("  a ".into()));
        assert_eq!(v(Value::from(" \t"), true), Cell::Absent);
        assert_eq!(v(Value::Null, true), Cell::Null);
        assert_eq!(v(Value::from(12.5), true), Cell::Text("12.5".into()));
        assert_eq!(v(Value::from(true), true), Cell::Text("true".into()));
        assert_eq!(
            v(serde_json::json!({"a": [1]}), true),
            Cell::Text("{\"a\":[1]}".into())
        );
        assert_eq!(cell_of(None, true), Cell::Absent);
    }
}
