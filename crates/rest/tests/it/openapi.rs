//! `GET /`'s description is valid Swagger 2.0 (no `null` where a string goes, no empty
//! `required` list, only Swagger's types), so tools that read PostgREST's description read ours.
#![allow(clippy::unwrap_used)]

use crate::common::{Served, fixtures, send};
use serde_json::Value;
use sluice_rest::RestConfig;

/// Beyond the fixtures: a function taking JSON that GET can call, and a relation whose columns
/// may all be null (no `required` list to give), one of them an array of JSON.
const EXTRA: &str = "
CREATE FUNCTION doc_keys(doc jsonb) RETURNS SETOF text LANGUAGE sql STABLE
  AS 'SELECT jsonb_object_keys(doc)';
CREATE TABLE loose (a int, b text, c jsonb[]);
";

/// Swagger 2.0's types: JSON Schema's simple types (less `null`), and `file` for parameters.
const TYPES: [&str; 7] = [
    "array", "boolean", "integer", "number", "object", "string", "file",
];

/// Everything in `value` that Swagger 2.0's own schema refuses, each with where it is.
fn violations(value: &Value, at: &str, found: &mut Vec<String>) {
    match value {
        Value::Null => found.push(format!("{at}: null")),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                violations(item, &format!("{at}/{i}"), found);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                let here = format!("{at}/{key}");
                match (key.as_str(), item) {
                    ("required", Value::Array(list)) if list.is_empty() => {
                        found.push(format!("{here}: an empty list"));
                    }
                    ("type", Value::String(kind)) if !TYPES.contains(&kind.as_str()) => {
                        found.push(format!("{here}: {kind:?} is not a Swagger type"));
                    }
                    _ => {}
                }
                // A parameter outside the body that is an array says what its items are.
                if key == "in"
                    && item != "body"
                    && map.get("type") == Some(&Value::from("array"))
                    && !map.contains_key("items")
                {
                    found.push(format!("{at}: an array parameter without items"));
                }
                violations(item, &here, found);
            }
        }
        _ => {}
    }
}

#[tokio::test]
async fn the_description_is_valid_swagger_2() {
    let setup = format!("{}\n{EXTRA}", fixtures());
    let served = Served::start("openapi", &setup, RestConfig::default())
        .await
        .unwrap();
    let answer = send(served.address, "GET", "/", &[], Vec::new(), false).await;
    served.finish().await;
    assert_eq!(answer.status, 200);
    let document = answer.json();
    assert_eq!(document["swagger"], "2.0");
    // What the description must still say.
    assert_eq!(
        document["definitions"]["authors"]["description"],
        "People who write books"
    );
    assert!(document["paths"]["/rpc/doc_keys"]["get"].is_object());
    assert!(document["definitions"]["loose"]["properties"]["a"].is_object());
    let mut found = Vec::new();
    violations(&document, "", &mut found);
    assert!(
        found.is_empty(),
        "{} violations of Swagger 2.0, the first: {:#?}",
        found.len(),
        &found[..found.len().min(12)]
    );
}
