//! The plan of a write: the relation, the payload's columns checked against it, and what the
//! statement does with them (insert with upsert, update, delete, PUT's single-row upsert).

use super::read::{Condition, Order};
use crate::error::ApiError;
use crate::request::{ApiRequest, Method, PreferResolution, Resource};
use crate::schema::{Column, SchemaCache, Table};
use http::StatusCode;
use serde::de::{
    DeserializeSeed, Deserializer, Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use std::collections::BTreeSet;
use std::fmt;

/// The shape of a JSON payload: an object or an array of objects, with their keys (the same in
/// every object, as PostgREST requires).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PayloadShape {
    /// An array of objects rather than one object.
    pub is_array: bool,
    /// The keys, in the order of the first object.
    pub keys: Vec<String>,
    /// The number of objects.
    pub rows: u64,
    /// Every object has the same keys (PostgREST requires it unless `columns=` says which to
    /// take).
    pub keys_match: bool,
}

impl PayloadShape {
    /// 400 PGRST102 when the objects' keys differ.
    pub fn require_matching_keys(&self) -> Result<(), ApiError> {
        if self.keys_match {
            Ok(())
        } else {
            Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "PGRST102",
                "All object keys must match",
            ))
        }
    }
}

/// Reads the shape of a JSON body without building it: every value is skipped, only keys are
/// kept. 400 PGRST102 for anything but an object or an array of objects with matching keys.
pub fn payload_shape(body: &[u8]) -> Result<PayloadShape, ApiError> {
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let shape = ShapeSeed
        .deserialize(&mut deserializer)
        .and_then(|shape| deserializer.end().map(|()| shape))
        .map_err(|error| {
            let message = error.to_string();
            if message.contains("All object keys must match") {
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "PGRST102",
                    "All object keys must match",
                )
            } else {
                ApiError::new(StatusCode::BAD_REQUEST, "PGRST102", "Empty or invalid json")
                    .details(message)
            }
        })?;
    Ok(shape)
}

struct ShapeSeed;

impl<'de> DeserializeSeed<'de> for ShapeSeed {
    type Value = PayloadShape;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<PayloadShape, D::Error> {
        d.deserialize_any(ShapeVisitor)
    }
}

struct ShapeVisitor;

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = PayloadShape;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object or an array of objects")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<PayloadShape, A::Error> {
        Ok(PayloadShape {
            is_array: false,
            keys: object_keys(map)?,
            rows: 1,
            keys_match: true,
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<PayloadShape, A::Error> {
        let mut keys: Option<Vec<String>> = None;
        let mut sorted: BTreeSet<String> = BTreeSet::new();
        let mut rows = 0;
        let mut keys_match = true;
        while let Some(object) = seq.next_element_seed(ObjectKeys)? {
            // An element that is not an object: PostgREST's "All object keys must match".
            let object = object.ok_or_else(|| A::Error::custom("All object keys must match"))?;
            rows += 1;
            match &keys {
                None => {
                    sorted = object.iter().cloned().collect();
                    keys = Some(object);
                }
                Some(_) => {
                    let these: BTreeSet<String> = object.into_iter().collect();
                    keys_match &= these == sorted;
                }
            }
        }
        Ok(PayloadShape {
            is_array: true,
            keys: keys.unwrap_or_default(),
            rows,
            keys_match,
        })
    }
}

struct ObjectKeys;

/// An array element's keys; `None` for an element that is not an object.
impl<'de> DeserializeSeed<'de> for ObjectKeys {
    type Value = Option<Vec<String>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        struct KeysVisitor;
        impl<'de> Visitor<'de> for KeysVisitor {
            type Value = Option<Vec<String>>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                object_keys(map).map(Some)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(None)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
        }
        d.deserialize_any(KeysVisitor)
    }
}

fn object_keys<'de, A: MapAccess<'de>>(mut map: A) -> Result<Vec<String>, A::Error> {
    let mut keys = Vec::new();
    while let Some(key) = map.next_key::<String>()? {
        map.next_value::<IgnoredAny>()?;
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    Ok(keys)
}

/// What the number of rows a write touches must satisfy; a write failing a check is rolled back.
#[derive(Debug, Clone, Copy)]
pub struct RowChecks {
    /// `Prefer: max-affected` with `handling=strict`.
    pub max_affected: Option<u64>,
    /// The single-object media type: exactly one row, else 406 PGRST116 (with any `return=`).
    pub singular: bool,
}

/// An array body's first element, when that is an object (a PUT of an array puts it).
pub fn first_object(json: &[u8]) -> Option<Vec<u8>> {
    let elements = serde_json::from_slice::<Vec<&serde_json::value::RawValue>>(json).ok()?;
    let first = elements.first()?.get();
    first.starts_with('{').then(|| first.as_bytes().to_vec())
}

/// `Prefer: resolution=` on a POST to a table without a primary key, and without
/// `on_conflict=`, is ignored (a plain insert, not listed as applied), as PostgREST does.
pub fn ignore_keyless_resolution(request: &mut ApiRequest, cache: &SchemaCache, schema: &str) {
    if let Resource::Relation(name) = &request.resource
        && request.method == Method::Post
        && request.prefer.resolution.is_some()
        && request.query.on_conflict.is_none()
        && cache
            .table(schema, name)
            .is_some_and(|table| table.primary_key.is_empty())
    {
        request.prefer.ignored_resolution = request.prefer.resolution.take();
    }
}

/// The columns a write sets: `columns=` when given (the payload's other keys ignored), else the
/// payload's keys; each checked against `table` (400 PGRST204 for an unknown one).
pub fn payload_columns<'s>(
    table: &'s Table,
    keys: &[String],
    columns_param: Option<&[String]>,
) -> Result<Vec<&'s Column>, ApiError> {
    let names: &[String] = columns_param.unwrap_or(keys);
    names
        .iter()
        .map(|name| {
            table.column(name).ok_or_else(|| {
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "PGRST204",
                    format!(
                        "Could not find the '{name}' column of '{}' in the schema cache",
                        table.name.name
                    ),
                )
            })
        })
        .collect()
}

/// `ON CONFLICT`: the columns and what to do.
#[derive(Debug, Clone)]
pub struct OnConflict<'s> {
    /// The conflict target: `on_conflict=`'s columns, else the primary key's.
    pub columns: Vec<&'s Column>,
    /// Update the existing row (merge) or keep it (ignore).
    pub resolution: PreferResolution,
}

/// What a write statement does.
#[derive(Debug, Clone)]
pub enum Mutation<'s> {
    /// INSERT of the payload's rows.
    Insert {
        /// The columns written: the payload's keys, or `columns=`.
        columns: Vec<&'s Column>,
        /// `ON CONFLICT` for an upsert (`Prefer: resolution=`, PUT).
        on_conflict: Option<OnConflict<'s>>,
        /// `Prefer: missing=default`: absent keys take the column default, not NULL.
        missing_default: bool,
    },
    /// UPDATE of the rows matching `conditions` with the payload's one object; or, for an
    /// array payload, each row matched by its primary key with its own values.
    Update {
        /// The columns written: the payload's keys, or `columns=`.
        columns: Vec<&'s Column>,
        /// The WHERE conditions (filters), joined by AND.
        conditions: Vec<Condition<'s>>,
        /// `order=`, which with `limit` picks the rows to update.
        order: Vec<Order<'s>>,
        /// `limit=`: at most this many rows are updated.
        limit: Option<u64>,
        /// Bulk update: an array payload, each object matched by these key columns.
        keyed_by: Option<Vec<&'s Column>>,
        /// `Prefer: missing=default`: absent keys set the column default, not NULL.
        missing_default: bool,
    },
    /// DELETE of the rows matching `conditions`.
    Delete {
        /// The WHERE conditions (filters), joined by AND.
        conditions: Vec<Condition<'s>>,
        /// `order=`, which with `limit` picks the rows to delete.
        order: Vec<Order<'s>>,
        /// `limit=`: at most this many rows are deleted.
        limit: Option<u64>,
    },
}

/// A write of `table`.
#[derive(Debug, Clone)]
pub struct WritePlan<'s> {
    /// The table (or updatable view) written.
    pub table: &'s Table,
    /// The statement's kind and its parts.
    pub mutation: Mutation<'s>,
    /// The payload is an array (`json_to_recordset`) rather than one object.
    pub payload_is_array: bool,
}

/// The columns of `on_conflict=` (default: the primary key) checked against `table`.
pub fn conflict_columns<'s>(
    table: &'s Table,
    named: Option<&[String]>,
) -> Result<Vec<&'s Column>, ApiError> {
    let names: Vec<String> = match named {
        Some(names) => names.to_vec(),
        None => table.primary_key.clone(),
    };
    if names.is_empty() {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "PGRST105",
            format!(
                "An upsert on '{}' needs on_conflict= or a primary key",
                table.name.name
            ),
        ));
    }
    payload_columns(table, &names, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        let shape = payload_shape(br#"{"a": 1, "b": [1, {"x": 2}]}"#).unwrap();
        assert_eq!(
            (shape.is_array, shape.keys.clone(), shape.rows),
            (false, vec!["a".into(), "b".into()], 1)
        );
        let shape = payload_shape(br#"[{"a": 1, "b": 2}, {"b": 3, "a": null}]"#).unwrap();
        assert_eq!((shape.is_array, shape.rows), (true, 2));
        assert_eq!(shape.keys, ["a", "b"]);
        let shape = payload_shape(b"[]").unwrap();
        assert_eq!((shape.is_array, shape.rows, shape.keys.len()), (true, 0, 0));
        let shape = payload_shape(br#"[{"a": 1}, {"b": 2}]"#).unwrap();
        let error = shape.require_matching_keys().unwrap_err();
        assert_eq!(
            (error.code.as_str(), error.message.as_str()),
            ("PGRST102", "All object keys must match")
        );
        for bad in [&b""[..], b"1", b"\"x\"", b"[1]", b"{", b"{} {}", b"[{}, 2]"] {
            let error = payload_shape(bad).unwrap_err();
            assert_eq!(error.code, "PGRST102", "{}", String::from_utf8_lossy(bad));
        }
    }
}
