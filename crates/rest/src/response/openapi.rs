//! `GET /`: the OpenAPI (Swagger 2.0) description of an exposed schema, shaped as PostgREST
//! writes it (paths per table, view and function, definitions per relation, shared parameters),
//! so tools that read PostgREST's description keep working.

use crate::schema::{Cardinality, Column, Routine, RoutineParam, SchemaCache, Table};
use serde_json::{Map, Value, json};

/// The description of `schema` as served at `host` under `base_path`.
pub fn describe(cache: &SchemaCache, schema: &str, host: &str, base_path: &str) -> Value {
    let mut tables: Vec<&Table> = cache
        .tables
        .values()
        .filter(|t| t.name.schema == schema)
        .collect();
    tables.sort_by(|a, b| a.name.name.cmp(&b.name.name));
    let mut routines: Vec<&Routine> = cache
        .routines
        .iter()
        .filter(|(name, _)| name.schema == schema)
        .flat_map(|(_, overloads)| overloads.first())
        .collect();
    routines.sort_by(|a, b| a.name.name.cmp(&b.name.name));

    let mut paths = Map::new();
    paths.insert(
        "/".into(),
        json!({"get": {
            "tags": ["Introspection"],
            "summary": "OpenAPI description (this document)",
            "produces": ["application/openapi+json", "application/json"],
            "responses": {"200": {"description": "OK"}}
        }}),
    );
    let mut definitions = Map::new();
    let mut parameters = shared_parameters();
    for table in &tables {
        let name = &table.name.name;
        let mut filters: Vec<Value> = table
            .columns
            .iter()
            .map(|c| json!({"$ref": format!("#/parameters/rowFilter.{name}.{}", c.name)}))
            .collect();
        for column in &table.columns {
            let mut filter = json!({"name": column.name, "required": false, "in": "query",
                                    "type": "string", "format": column.type_name});
            put(&mut filter, "description", column.description.as_deref());
            parameters.insert(format!("rowFilter.{name}.{}", column.name), filter);
        }
        parameters.insert(
            format!("body.{name}"),
            json!({"name": name, "description": name, "required": false, "in": "body",
                   "schema": {"$ref": format!("#/definitions/{name}")}}),
        );
        let reference = |p: &str| json!({"$ref": format!("#/parameters/{p}")});
        let mut get_params = filters.clone();
        get_params.extend(
            [
                "select",
                "order",
                "range",
                "rangeUnit",
                "offset",
                "limit",
                "preferCount",
            ]
            .map(reference),
        );
        let mut path = Map::new();
        let described = table.description.as_deref();
        path.insert(
            "get".into(),
            operation(
                json!({"tags": [name], "parameters": get_params,
                       "responses": {"200": {"description": "OK", "schema": {"items":
                           {"$ref": format!("#/definitions/{name}")}, "type": "array"}},
                           "206": {"description": "Partial Content"}}}),
                described,
            ),
        );
        if table.insertable {
            path.insert(
                "post".into(),
                operation(
                    json!({"tags": [name],
                           "parameters": [reference(&format!("body.{name}")), reference("select"),
                                          reference("preferPost")],
                           "responses": {"201": {"description": "Created"}}}),
                    described,
                ),
            );
        }
        if table.updatable {
            let mut patch = filters.clone();
            patch.extend([
                reference(&format!("body.{name}")),
                reference("preferReturn"),
            ]);
            path.insert(
                "patch".into(),
                operation(
                    json!({"tags": [name], "parameters": patch,
                           "responses": {"204": {"description": "No Content"}}}),
                    described,
                ),
            );
        }
        if table.deletable {
            filters.push(reference("preferReturn"));
            path.insert(
                "delete".into(),
                operation(
                    json!({"tags": [name], "parameters": filters,
                           "responses": {"204": {"description": "No Content"}}}),
                    described,
                ),
            );
        }
        paths.insert(format!("/{name}"), Value::Object(path));
        definitions.insert(name.clone(), definition(cache, table));
    }
    for routine in &routines {
        let name = &routine.name.name;
        let described = routine.description.as_deref();
        let mut path = Map::new();
        path.insert(
            "post".into(),
            operation(
                json!({"tags": ["(rpc) ".to_string() + name],
                       "parameters": [{"name": "args", "required": true, "in": "body",
                                       "schema": routine_schema(routine)},
                                      {"$ref": "#/parameters/preferParams"}],
                       "responses": {"200": {"description": "OK"}}}),
                described,
            ),
        );
        if routine.volatility != crate::schema::Volatility::Volatile {
            let params: Vec<Value> = routine
                .params
                .iter()
                .filter(|p| !p.name.is_empty())
                .map(|p| {
                    // Arrays are written {a,b} and JSON as text: both strings in a query.
                    let kind = match swagger_type(&p.type_name).0 {
                        "array" | "any" => "string",
                        kind => kind,
                    };
                    json!({"name": p.name, "required": !(p.has_default || p.variadic),
                           "in": "query", "type": kind, "format": p.type_name})
                })
                .collect();
            path.insert(
                "get".into(),
                operation(
                    json!({"tags": ["(rpc) ".to_string() + name], "parameters": params,
                           "responses": {"200": {"description": "OK"}}}),
                    described,
                ),
            );
        }
        paths.insert(format!("/rpc/{name}"), Value::Object(path));
    }
    let media = [
        "application/json",
        "application/vnd.pgrst.object+json;nulls=stripped",
        "application/vnd.pgrst.object+json",
        "text/csv",
    ];
    json!({
        "swagger": "2.0",
        "info": {
            "description": cache.schema_descriptions.get(schema).cloned()
                .unwrap_or_else(|| "Sluice's automatic REST API".to_string()),
            "title": format!("{schema} schema"),
            "version": env!("CARGO_PKG_VERSION"),
        },
        "host": host,
        "basePath": base_path,
        "schemes": ["http"],
        "consumes": media,
        "produces": media,
        "paths": paths,
        "definitions": definitions,
        "parameters": parameters,
        "externalDocs": {
            "description": "PostgREST's documentation of the dialect this API speaks",
            "url": "https://postgrest.org/en/stable/references/api.html"
        }
    })
}

/// Swagger's type and format of a PostgreSQL type name.
fn swagger_type(type_name: &str) -> (&'static str, String) {
    let format = match type_name {
        "smallint" => "int32".to_string(),
        "integer" => "int32".to_string(),
        "bigint" => "int64".to_string(),
        other => other.to_string(),
    };
    let kind = if type_name.ends_with("[]") {
        "array"
    } else {
        match type_name {
            "smallint" | "integer" | "bigint" => "integer",
            "real" | "double precision" | "numeric" => "number",
            "boolean" => "boolean",
            "json" | "jsonb" => "any",
            _ if type_name.starts_with("numeric") => "number",
            _ => "string",
        }
    };
    (kind, format)
}

fn definition(cache: &SchemaCache, table: &Table) -> Value {
    let mut properties = Map::new();
    for column in &table.columns {
        properties.insert(column.name.clone(), property(cache, table, column));
    }
    let required: Vec<&str> = table
        .columns
        .iter()
        .filter(|c| !c.nullable && c.default.is_none() && !c.generated)
        .map(|c| c.name.as_str())
        .collect();
    let mut definition = json!({"properties": properties, "type": "object"});
    put(&mut definition, "description", table.description.as_deref());
    if !required.is_empty() {
        definition["required"] = json!(required);
    }
    definition
}

fn property(cache: &SchemaCache, table: &Table, column: &Column) -> Value {
    let mut notes = Vec::new();
    if table.primary_key.contains(&column.name) {
        notes.push("This is a Primary Key.<pk/>".to_string());
    }
    let foreign = cache
        .relationships
        .get(&table.name)
        .into_iter()
        .flatten()
        .find_map(|r| match &r.cardinality {
            Cardinality::ManyToOne(key) | Cardinality::OneToOne { key, parent: false } => {
                match key.columns.as_slice() {
                    [(local, foreign)] if local == &column.name => {
                        Some((r.foreign_table.name.clone(), foreign.clone()))
                    }
                    _ => None,
                }
            }
            _ => None,
        });
    if let Some((t, c)) = foreign {
        notes.push(format!(
            "This is a Foreign Key to `{t}.{c}`.<fk table='{t}' column='{c}'/>"
        ));
    }
    let description = match (&column.description, notes.is_empty()) {
        (d, true) => d.clone(),
        (d, false) => Some(format!(
            "{}Note:\n{}",
            d.as_ref().map(|d| format!("{d}\n\n")).unwrap_or_default(),
            notes.join("\n")
        )),
    };
    let mut property = schema_of(&column.type_name);
    put(&mut property, "description", description.as_deref());
    if let Some(max) = column.max_length {
        property["maxLength"] = json!(max);
    }
    if !column.enum_values.is_empty() {
        property["enum"] = json!(column.enum_values);
    }
    property
}

fn routine_schema(routine: &Routine) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for RoutineParam {
        name,
        type_name,
        has_default,
        variadic,
        ..
    } in &routine.params
    {
        if name.is_empty() {
            continue;
        }
        properties.insert(name.clone(), schema_of(type_name));
        if !has_default && !variadic {
            required.push(name.clone());
        }
    }
    let mut schema = json!({"type": "object", "properties": properties});
    put(&mut schema, "description", routine.description.as_deref());
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

/// The schema of a value of `type_name`: JSON has no type of Swagger's (it is left out, as
/// PostgREST leaves it out), an array says what its items are.
fn schema_of(type_name: &str) -> Value {
    let (kind, format) = swagger_type(type_name);
    let mut schema = json!({"format": format});
    if kind != "any" {
        schema["type"] = json!(kind);
    }
    if kind == "array" {
        schema["items"] = match swagger_type(type_name.trim_end_matches("[]")).0 {
            "any" => json!({}),
            element => json!({"type": element}),
        };
    }
    schema
}

/// An operation described by a comment: its first line the summary, the rest (after blank
/// lines) the description, as PostgREST splits them; nothing when there is no comment.
fn operation(mut operation: Value, comment: Option<&str>) -> Value {
    if let Some(comment) = comment {
        let (summary, rest) = comment.split_once('\n').unwrap_or((comment, ""));
        put(&mut operation, "summary", Some(summary));
        let rest = rest.trim_start_matches('\n');
        put(
            &mut operation,
            "description",
            Some(rest).filter(|r| !r.is_empty()),
        );
    }
    operation
}

/// Sets `key` of the object `value` when there is something to set: Swagger has no null.
fn put(value: &mut Value, key: &str, text: Option<&str>) {
    if let (Some(text), Value::Object(map)) = (text, value) {
        map.insert(key.to_string(), json!(text));
    }
}

fn shared_parameters() -> Map<String, Value> {
    let prefer = |values: &[&str]| {
        json!({"name": "Prefer", "description": "Preference", "required": false, "in": "header",
               "type": "string", "enum": values})
    };
    let query = |name: &str, description: &str| {
        json!({"name": name, "description": description, "required": false, "in": "query",
               "type": "string"})
    };
    let mut parameters = Map::new();
    parameters.insert("preferParams".into(), prefer(&["params=single-object"]));
    parameters.insert(
        "preferReturn".into(),
        prefer(&["return=representation", "return=minimal", "return=none"]),
    );
    parameters.insert("preferCount".into(), prefer(&["count=none"]));
    parameters.insert(
        "preferPost".into(),
        prefer(&[
            "return=representation",
            "return=minimal",
            "return=none",
            "resolution=ignore-duplicates",
            "resolution=merge-duplicates",
        ]),
    );
    parameters.insert("select".into(), query("select", "Filtering Columns"));
    parameters.insert("on_conflict".into(), query("on_conflict", "On Conflict"));
    parameters.insert("order".into(), query("order", "Ordering"));
    parameters.insert("offset".into(), query("offset", "Limiting and Pagination"));
    parameters.insert("limit".into(), query("limit", "Limiting and Pagination"));
    parameters.insert(
        "range".into(),
        json!({"name": "Range", "description": "Limiting and Pagination", "required": false,
               "in": "header", "type": "string"}),
    );
    parameters.insert(
        "rangeUnit".into(),
        json!({"name": "Range-Unit", "description": "Limiting and Pagination", "required": false,
               "in": "header", "type": "string", "default": "items"}),
    );
    parameters
}
