//! One database row as a JSON object for write answers: values by type, `__` in names nests.

use serde_json::{Map, Value};
use sluice_pg::Row;

/// The row as an object: booleans and numbers as JSON values, json/jsonb embedded, the rest as
/// strings; `watched__last` becomes `{"watched": {"last": ...}}`.
pub fn object_of(row: &Row<'_>) -> Value {
    let mut object = Map::new();
    for (i, column) in row.columns().iter().enumerate() {
        let value = match row.raw(i) {
            None => Value::Null,
            Some(raw) => typed(column.type_oid(), &String::from_utf8_lossy(raw)),
        };
        insert_nested(&mut object, column.name(), value);
    }
    Value::Object(object)
}

fn typed(oid: u32, text: &str) -> Value {
    match oid {
        16 => Value::Bool(text == "t" || text == "true"),
        20 | 21 | 23 | 26 | 700 | 701 | 1700 => {
            match serde_json::from_str::<serde_json::Number>(text) {
                Ok(n) => Value::Number(n),
                Err(_) => Value::String(text.to_owned()),
            }
        }
        114 | 3802 => serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned())),
        _ => Value::String(text.to_owned()),
    }
}

fn insert_nested(object: &mut Map<String, Value>, name: &str, value: Value) {
    match name.split_once("__") {
        Some((head, rest)) if !head.is_empty() && !rest.is_empty() => {
            let inner = object
                .entry(head.to_owned())
                .or_insert_with(|| Value::Object(Map::new()));
            if !inner.is_object() {
                *inner = Value::Object(Map::new());
            }
            if let Value::Object(inner) = inner {
                insert_nested(inner, rest, value);
            }
        }
        _ => {
            object.insert(name.to_owned(), value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_and_types() {
        let mut object = Map::new();
        insert_nested(&mut object, "watched__last", typed(23, "5"));
        insert_nested(&mut object, "watched__by__name", typed(25, "ann"));
        insert_nested(&mut object, "ok", typed(16, "t"));
        insert_nested(&mut object, "doc", typed(3802, "{\"a\": [1]}"));
        insert_nested(&mut object, "n", typed(1700, "NaN"));
        assert_eq!(
            Value::Object(object),
            serde_json::json!({
                "watched": {"last": 5, "by": {"name": "ann"}},
                "ok": true, "doc": {"a": [1]}, "n": "NaN"
            })
        );
    }
}
