//! Loading a view file into the typed model, checking every key and value of VIEWS.md: a bad file
//! is refused with its name, the JSON path of the fault (`$.sql[0].PUT.columns.film.source`) and
//! the problem.

use crate::view::model::{
    BodyPathElement, Column, Command, Endpoint, Expr, Failed, MethodObject, PathSegment,
    Precondition, Return, Schema, Source, View,
};
use crate::view::order::KeyOrder;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why a view file was refused.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    /// The file could not be read.
    #[error("{}: cannot read the view file: {source}", file.display())]
    Read {
        /// The view file.
        file: PathBuf,
        /// What reading it said.
        source: std::io::Error,
    },
    /// The file is not JSON.
    #[error("{}: not valid JSON at line {line}, column {column}: {message}", file.display())]
    Syntax {
        /// The view file.
        file: PathBuf,
        /// The line of the error (1-based).
        line: usize,
        /// Its column (1-based).
        column: usize,
        /// What serde_json said.
        message: String,
    },
    /// The JSON does not describe a view.
    #[error("{}: {path}: {problem}", file.display())]
    Invalid {
        /// The view file.
        file: PathBuf,
        /// Where, as a JSON path (`$.sql[0].path[1]`).
        path: String,
        /// What is wrong.
        problem: Problem,
    },
}

impl ViewError {
    /// The JSON path of an invalid value.
    pub fn json_path(&self) -> Option<&str> {
        match self {
            ViewError::Invalid { path, .. } => Some(path),
            _ => None,
        }
    }

    /// The problem with an invalid value.
    pub fn problem(&self) -> Option<&Problem> {
        match self {
            ViewError::Invalid { problem, .. } => Some(problem),
            _ => None,
        }
    }
}

/// What is wrong with a value of a view file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    #[error("unknown key {key:?} (expected one of: {expected})")]
    /// A key the view format does not have here.
    UnknownKey {
        /// The key.
        key: String,
        /// The keys allowed here.
        expected: &'static str,
    },
    #[error("the key {0:?} is required here")]
    /// A required key is missing.
    MissingKey(&'static str),
    #[error("expected {expected}, found {found}")]
    /// A value of the wrong JSON type.
    WrongType {
        /// What the format wants.
        expected: &'static str,
        /// What the file has.
        found: &'static str,
    },
    #[error(
        "a path entry must be a string starting with \"/\" or a capture number from 1 to 65535"
    )]
    /// A `path` entry that is neither a segment nor a capture number.
    BadPathEntry,
    #[error("unknown return {0:?}: use \"csj\", \"object\" or \"json-csv\"")]
    /// A `return` other than `csj`, `object` or `json-csv`.
    UnknownReturn(String),
    #[error("unknown operator {0:?}: use eq, or, and, match, header or sql.exists")]
    /// A precondition operator the format does not have.
    UnknownOperator(String),
    #[error("the operator {operator:?} takes {expected}")]
    /// An operator given the wrong number or kind of arguments.
    OperatorArguments {
        /// The operator.
        operator: &'static str,
        /// What it takes.
        expected: &'static str,
    },
    #[error("a capture number must be from 1 to 65535")]
    /// A capture number out of range.
    BadCapture,
    #[error("the capture ${0} is not in this endpoint's path")]
    /// A capture the endpoint's path does not have.
    CaptureNotInPath(u16),
    #[error("a status must be an HTTP status from 400 to 599")]
    /// A status outside 400-599.
    BadStatus,
    #[error(
        "a source is a capture number, a body field name, [\"body\", path...] or [\"request\", \"headers\", name]"
    )]
    /// A `source` of an unknown shape.
    BadSource,
    #[error("a GET has no body: use a capture, a header or a query parameter")]
    /// A GET reading the body.
    BodySourceInGet,
    #[error("insert must be \"required\"")]
    /// An `insert` other than `required`.
    BadInsert,
    #[error("the list must not be empty")]
    /// An empty list where entries are needed.
    Empty,
    #[error("this endpoint answers no method: give GET, DELETE, PUT, PATCH or POST")]
    /// An endpoint with no method.
    NoMethod,
    #[error("\"existing\" and \"delete\" go together (a set-replace PUT needs both)")]
    /// One of `existing` and `delete` without the other.
    HalfSetReplace,
    #[error("a {0} cannot be empty")]
    /// An empty string where text is needed.
    EmptyText(&'static str),
    #[error("invalid JSON Schema: {0}")]
    /// A `schema` that is not a valid JSON Schema.
    Schema(String),
}

/// Reads and checks the view file at `path`.
pub fn load_file(path: impl AsRef<Path>) -> Result<View, ViewError> {
    let path = path.as_ref();
    let text = std::fs::read(path).map_err(|source| ViewError::Read {
        file: path.to_owned(),
        source,
    })?;
    load_slice(path, &text)
}

/// Checks a view given as JSON text; `file` names it in messages.
pub fn load_slice(file: impl AsRef<Path>, text: &[u8]) -> Result<View, ViewError> {
    let file = file.as_ref().to_owned();
    let value: Value = serde_json::from_slice(text).map_err(|e| ViewError::Syntax {
        file: file.clone(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    let (mut endpoints, roles) =
        parse_view(&value).map_err(|(path, problem)| ViewError::Invalid {
            file: file.clone(),
            path: path.text(),
            problem,
        })?;
    let order = KeyOrder::of(text);
    for endpoint in &mut endpoints {
        keep_column_order(endpoint, &order);
    }
    Ok(View {
        file,
        endpoints,
        roles,
    })
}

/// Puts method objects' columns back in file order (`serde_json::Value` sorts object keys).
fn keep_column_order(endpoint: &mut Endpoint, order: &KeyOrder) {
    let base = endpoint.json_path.clone();
    let sort = |object: &mut MethodObject, path: &str| {
        if let Some(keys) = order.keys(path) {
            object
                .columns
                .sort_by_key(|c| keys.iter().position(|k| *k == c.name));
        }
    };
    for (method, objects) in [("PUT", &mut endpoint.put), ("POST", &mut endpoint.post)] {
        let listed = order.keys(&format!("{base}.{method}[0].columns")).is_some();
        for (i, object) in objects.iter_mut().enumerate() {
            let path = if listed {
                format!("{base}.{method}[{i}].columns")
            } else {
                format!("{base}.{method}.columns")
            };
            sort(object, &path);
        }
    }
    if let Some(object) = &mut endpoint.patch {
        sort(object, &format!("{base}.PATCH.columns"));
    }
    if let Some(Precondition {
        failed: Failed::View(view),
        ..
    }) = &mut endpoint.precondition
    {
        keep_column_order(view, order);
    }
}

/// A JSON path being walked, built only when an error needs it.
#[derive(Clone, Copy)]
enum At<'p> {
    Root,
    Key(&'p At<'p>, &'p str),
    Index(&'p At<'p>, usize),
}

impl<'p> At<'p> {
    fn key(&'p self, key: &'p str) -> At<'p> {
        At::Key(self, key)
    }

    fn index(&'p self, index: usize) -> At<'p> {
        At::Index(self, index)
    }

    fn owned(&self) -> JsonPath {
        JsonPath(self.text())
    }

    fn text(&self) -> String {
        match self {
            At::Root => "$".to_owned(),
            At::Key(parent, key) => {
                let mut text = parent.text();
                if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    text.push('.');
                    text.push_str(key);
                } else {
                    text.push('[');
                    text.push_str(&Value::String((*key).to_owned()).to_string());
                    text.push(']');
                }
                text
            }
            At::Index(parent, index) => format!("{}[{index}]", parent.text()),
        }
    }
}

/// A JSON path kept for an error.
struct JsonPath(String);

impl JsonPath {
    fn text(self) -> String {
        self.0
    }
}

type Fault = (JsonPath, Problem);
type Checked<T> = Result<T, Fault>;

fn fault<T>(at: &At<'_>, problem: Problem) -> Checked<T> {
    Err((at.owned(), problem))
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn wrong<T>(at: &At<'_>, expected: &'static str, value: &Value) -> Checked<T> {
    fault(
        at,
        Problem::WrongType {
            expected,
            found: type_name(value),
        },
    )
}

fn object<'v>(at: &At<'_>, value: &'v Value) -> Checked<&'v Map<String, Value>> {
    match value {
        Value::Object(map) => Ok(map),
        other => wrong(at, "an object", other),
    }
}

fn string<'v>(at: &At<'_>, value: &'v Value, what: &'static str) -> Checked<&'v str> {
    match value {
        Value::String(s) if s.trim().is_empty() => fault(at, Problem::EmptyText(what)),
        Value::String(s) => Ok(s),
        other => wrong(at, "a string", other),
    }
}

/// Refuses keys of `map` not in `allowed`.
fn only_keys(at: &At<'_>, map: &Map<String, Value>, allowed: &'static str) -> Checked<()> {
    for key in map.keys() {
        if !allowed.split(", ").any(|k| k == key) {
            return fault(
                &at.key(key),
                Problem::UnknownKey {
                    key: key.clone(),
                    expected: allowed,
                },
            );
        }
    }
    Ok(())
}

fn parse_view(value: &Value) -> Checked<(Vec<Endpoint>, Vec<String>)> {
    let root = At::Root;
    let map = object(&root, value)?;
    only_keys(&root, map, "sql, roles")?;
    let roles = match map.get("roles") {
        None => Vec::new(),
        Some(Value::Array(items)) if !items.is_empty() => {
            let at = root.key("roles");
            items
                .iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Value::String(role) if !role.is_empty() => Ok(role.clone()),
                    other => wrong(&at.index(i), "a role name", other),
                })
                .collect::<Checked<Vec<String>>>()?
        }
        Some(other) => return wrong(&root.key("roles"), "a non-empty array of role names", other),
    };
    Ok((parse_endpoints(&root, map)?, roles))
}

fn parse_endpoints(root: &At<'_>, map: &Map<String, Value>) -> Checked<Vec<Endpoint>> {
    let Some(sql) = map.get("sql") else {
        return fault(root, Problem::MissingKey("sql"));
    };
    let at = root.key("sql");
    match sql {
        Value::Object(_) => Ok(vec![parse_endpoint(&at, sql, None)?]),
        Value::Array(items) if items.is_empty() => fault(&at, Problem::Empty),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| parse_endpoint(&at.index(i), item, None))
            .collect(),
        other => wrong(&at, "an object or an array of endpoints", other),
    }
}

const ENDPOINT_KEYS: &str = "path, return, precondition, GET, DELETE, PUT, PATCH, POST";

/// An endpoint. `outer` holds the captures of the endpoint whose precondition's `failed` view
/// this is: such a view's path is ignored and it answers with the outer captures.
fn parse_endpoint(at: &At<'_>, value: &Value, outer: Option<&[u16]>) -> Checked<Endpoint> {
    let map = object(at, value)?;
    only_keys(at, map, ENDPOINT_KEYS)?;
    let path = match map.get("path") {
        Some(path) => parse_path(&at.key("path"), path)?,
        None if outer.is_none() => return fault(at, Problem::MissingKey("path")),
        None => Vec::new(),
    };
    let captures: Vec<u16> = match outer {
        Some(outer) => outer.to_vec(),
        None => path
            .iter()
            .filter_map(|segment| match segment {
                PathSegment::Capture(n) => Some(*n),
                PathSegment::Literal(_) => None,
            })
            .collect(),
    };
    let returns = match map.get("return") {
        None => Return::Csj,
        Some(Value::String(s)) => match s.as_str() {
            "csj" => Return::Csj,
            "object" => Return::Object,
            "json-csv" => Return::JsonCsv,
            other => return fault(&at.key("return"), Problem::UnknownReturn(other.to_owned())),
        },
        Some(other) => return wrong(&at.key("return"), "a string", other),
    };
    let precondition = map
        .get("precondition")
        .map(|p| parse_precondition(&at.key("precondition"), p, &captures))
        .transpose()?;
    let get = map
        .get("GET")
        .map(|g| parse_get(&at.key("GET"), g, &captures))
        .transpose()?;
    let delete = map
        .get("DELETE")
        .map(|d| string(&at.key("DELETE"), d, "DELETE statement").map(str::to_owned))
        .transpose()?;
    let put = map
        .get("PUT")
        .map(|p| parse_method_objects(&at.key("PUT"), p, &captures))
        .transpose()?
        .unwrap_or_default();
    let patch = map
        .get("PATCH")
        .map(|p| parse_method_object(&at.key("PATCH"), p, &captures))
        .transpose()?;
    let post = map
        .get("POST")
        .map(|p| parse_method_objects(&at.key("POST"), p, &captures))
        .transpose()?
        .unwrap_or_default();
    if get.is_none() && delete.is_none() && put.is_empty() && patch.is_none() && post.is_empty() {
        return fault(at, Problem::NoMethod);
    }
    Ok(Endpoint {
        json_path: at.text(),
        path,
        returns,
        precondition,
        get,
        delete,
        put,
        patch,
        post,
    })
}

fn capture_number(at: &At<'_>, value: &Value) -> Checked<u16> {
    match value.as_u64() {
        Some(n) if (1..=u64::from(u16::MAX)).contains(&n) => Ok(n as u16),
        _ if value.is_number() => fault(at, Problem::BadCapture),
        _ => wrong(at, "a capture number", value),
    }
}

fn parse_path(at: &At<'_>, value: &Value) -> Checked<Vec<PathSegment>> {
    let Value::Array(items) = value else {
        return wrong(at, "an array", value);
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let at = at.index(i);
            match item {
                Value::String(s) => match s.strip_prefix('/') {
                    Some(literal) => Ok(PathSegment::Literal(literal.to_owned())),
                    None => fault(&at, Problem::BadPathEntry),
                },
                Value::Number(_) => match capture_number(&at, item) {
                    Ok(n) => Ok(PathSegment::Capture(n)),
                    Err(_) => fault(&at, Problem::BadPathEntry),
                },
                _ => fault(&at, Problem::BadPathEntry),
            }
        })
        .collect()
}

fn parse_precondition(at: &At<'_>, value: &Value, captures: &[u16]) -> Checked<Precondition> {
    let Value::Object(map) = value else {
        return Ok(Precondition {
            check: parse_expr(at, value)?,
            failed: Failed::Status(403),
        });
    };
    only_keys(at, map, "check, failed")?;
    let Some(check) = map.get("check") else {
        return fault(at, Problem::MissingKey("check"));
    };
    let check = parse_expr(&at.key("check"), check)?;
    let failed = match map.get("failed") {
        None => Failed::Status(403),
        Some(status @ Value::Number(_)) => match status.as_u64() {
            Some(n @ 400..=599) => Failed::Status(n as u16),
            _ => return fault(&at.key("failed"), Problem::BadStatus),
        },
        Some(view @ Value::Object(_)) => Failed::View(Box::new(parse_endpoint(
            &at.key("failed"),
            view,
            Some(captures),
        )?)),
        Some(other) => return wrong(&at.key("failed"), "a status or an endpoint object", other),
    };
    Ok(Precondition { check, failed })
}

fn parse_expr(at: &At<'_>, value: &Value) -> Checked<Expr> {
    let items = match value {
        Value::Array(items) => items,
        Value::Object(_) => return wrong(at, "an expression (an array or a literal)", value),
        literal => return Ok(Expr::Literal(literal.clone())),
    };
    let Some((operator, arguments)) = items.split_first() else {
        return fault(at, Problem::Empty);
    };
    let Value::String(operator) = operator else {
        return wrong(&at.index(0), "an operator name", operator);
    };
    let list = |at: &At<'_>| -> Checked<Vec<Expr>> {
        arguments
            .iter()
            .enumerate()
            .map(|(i, a)| parse_expr(&at.index(i + 1), a))
            .collect()
    };
    match operator.as_str() {
        "eq" | "or" | "and" if arguments.is_empty() => fault(
            at,
            Problem::OperatorArguments {
                operator: match operator.as_str() {
                    "eq" => "eq",
                    "or" => "or",
                    _ => "and",
                },
                expected: "at least one argument",
            },
        ),
        "eq" => Ok(Expr::Eq(list(at)?)),
        "or" => Ok(Expr::Or(list(at)?)),
        "and" => Ok(Expr::And(list(at)?)),
        "match" => match arguments {
            [n] => Ok(Expr::Match(capture_number(&at.index(1), n)?)),
            _ => fault(
                at,
                Problem::OperatorArguments {
                    operator: "match",
                    expected: "one capture number",
                },
            ),
        },
        "header" => match arguments {
            [Value::String(name)] if !name.is_empty() => Ok(Expr::Header(name.clone())),
            _ => fault(
                at,
                Problem::OperatorArguments {
                    operator: "header",
                    expected: "one header name",
                },
            ),
        },
        "sql.exists" => match arguments.split_first() {
            Some((sql, rest)) => {
                let sql = string(&at.index(1), sql, "SQL statement")?.to_owned();
                let arguments = rest
                    .iter()
                    .enumerate()
                    .map(|(i, a)| parse_expr(&at.index(i + 2), a))
                    .collect::<Checked<Vec<Expr>>>()?;
                Ok(Expr::SqlExists { sql, arguments })
            }
            None => fault(
                at,
                Problem::OperatorArguments {
                    operator: "sql.exists",
                    expected: "an SQL statement, then its arguments",
                },
            ),
        },
        other => fault(&at.index(0), Problem::UnknownOperator(other.to_owned())),
    }
}

/// The captures `$1..$n` in order, `n` the highest capture of the path.
fn capture_sources(captures: &[u16]) -> Vec<Source> {
    let highest = captures.iter().copied().max().unwrap_or(0);
    (1..=highest).map(Source::Capture).collect()
}

fn parse_get(at: &At<'_>, value: &Value, captures: &[u16]) -> Checked<Command> {
    match value {
        Value::String(_) => Ok(Command {
            sql: string(at, value, "GET statement")?.to_owned(),
            arguments: capture_sources(captures),
        }),
        Value::Object(map) => {
            only_keys(at, map, "command, arguments")?;
            let Some(command) = map.get("command") else {
                return fault(at, Problem::MissingKey("command"));
            };
            let sql = string(&at.key("command"), command, "GET statement")?.to_owned();
            let arguments = match map.get("arguments") {
                None => Vec::new(),
                Some(Value::Array(items)) => {
                    let at = at.key("arguments");
                    items
                        .iter()
                        .enumerate()
                        .map(|(i, item)| {
                            let at = at.index(i);
                            let source = parse_source(&at, item, captures)?;
                            if matches!(source, Source::Body(_)) {
                                return fault(&at, Problem::BodySourceInGet);
                            }
                            Ok(source)
                        })
                        .collect::<Checked<Vec<Source>>>()?
                }
                Some(other) => return wrong(&at.key("arguments"), "an array", other),
            };
            Ok(Command { sql, arguments })
        }
        other => wrong(at, "an SQL string or {\"command\", \"arguments\"}", other),
    }
}

/// A value source; a capture must be one of `captures`.
fn parse_source(at: &At<'_>, value: &Value, captures: &[u16]) -> Checked<Source> {
    match value {
        Value::Number(_) => {
            let n = capture_number(at, value)?;
            if !captures.contains(&n) {
                return fault(at, Problem::CaptureNotInPath(n));
            }
            Ok(Source::Capture(n))
        }
        Value::String(name) if !name.is_empty() => Ok(Source::Field(name.clone())),
        Value::Array(items) => match items.split_first() {
            Some((Value::String(kind), rest)) if kind == "body" => rest
                .iter()
                .enumerate()
                .map(|(i, step)| match step {
                    Value::String(key) => Ok(BodyPathElement::Key(key.clone())),
                    Value::Number(n) => match n.as_u64().and_then(|n| usize::try_from(n).ok()) {
                        Some(index) => Ok(BodyPathElement::Index(index)),
                        None => fault(&at.index(i + 1), Problem::BadSource),
                    },
                    _ => fault(&at.index(i + 1), Problem::BadSource),
                })
                .collect::<Checked<Vec<_>>>()
                .map(Source::Body),
            Some((Value::String(kind), [Value::String(headers), Value::String(name)]))
                if kind == "request" && headers == "headers" && !name.is_empty() =>
            {
                Ok(Source::Header(name.clone()))
            }
            _ => fault(at, Problem::BadSource),
        },
        _ => fault(at, Problem::BadSource),
    }
}

fn parse_method_objects(
    at: &At<'_>,
    value: &Value,
    captures: &[u16],
) -> Checked<Vec<MethodObject>> {
    match value {
        Value::Array(items) if items.is_empty() => fault(at, Problem::Empty),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| parse_method_object(&at.index(i), item, captures))
            .collect(),
        other => Ok(vec![parse_method_object(at, other, captures)?]),
    }
}

fn parse_method_object(at: &At<'_>, value: &Value, captures: &[u16]) -> Checked<MethodObject> {
    let map = object(at, value)?;
    only_keys(
        at,
        map,
        "table, columns, existing, delete, returning, schema",
    )?;
    let Some(table) = map.get("table") else {
        return fault(at, Problem::MissingKey("table"));
    };
    let table = string(&at.key("table"), table, "table name")?.to_owned();
    let Some(columns_value) = map.get("columns") else {
        return fault(at, Problem::MissingKey("columns"));
    };
    let columns_at = at.key("columns");
    let columns_map = object(&columns_at, columns_value)?;
    if columns_map.is_empty() {
        return fault(&columns_at, Problem::Empty);
    }
    let columns = columns_map
        .iter()
        .map(|(name, attributes)| parse_column(&columns_at.key(name), name, attributes, captures))
        .collect::<Checked<Vec<Column>>>()?;
    let text = |key: &'static str, what: &'static str| -> Checked<Option<String>> {
        map.get(key)
            .map(|v| string(&at.key(key), v, what).map(str::to_owned))
            .transpose()
    };
    let existing = text("existing", "existing statement")?;
    let delete = text("delete", "delete statement")?;
    if existing.is_some() != delete.is_some() {
        return fault(at, Problem::HalfSetReplace);
    }
    let returning = match map.get("returning") {
        None => Vec::new(),
        Some(Value::Array(items)) => {
            let at = at.key("returning");
            items
                .iter()
                .enumerate()
                .map(|(i, item)| string(&at.index(i), item, "column name").map(str::to_owned))
                .collect::<Checked<Vec<String>>>()?
        }
        Some(name @ Value::String(_)) => {
            vec![string(&at.key("returning"), name, "column name")?.to_owned()]
        }
        Some(other) => return wrong(&at.key("returning"), "an array of column names", other),
    };
    let schema = map
        .get("schema")
        .map(|s| parse_schema(&at.key("schema"), s))
        .transpose()?;
    Ok(MethodObject {
        table,
        columns,
        existing,
        delete,
        returning,
        schema,
    })
}

fn parse_column(at: &At<'_>, name: &str, value: &Value, captures: &[u16]) -> Checked<Column> {
    let map = object(at, value)?;
    only_keys(at, map, "key, source, trim, schema, insert")?;
    let flag = |key: &'static str, default: bool| -> Checked<bool> {
        match map.get(key) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => wrong(&at.key(key), "a boolean", other),
        }
    };
    let key = flag("key", false)?;
    let trim = flag("trim", true)?;
    let source = match map.get("source") {
        None => Source::Field(name.to_owned()),
        Some(source) => parse_source(&at.key("source"), source, captures)?,
    };
    let schema = map
        .get("schema")
        .map(|s| parse_schema(&at.key("schema"), s))
        .transpose()?;
    let insert_required = match map.get("insert") {
        None => false,
        Some(Value::String(s)) if s == "required" => true,
        Some(_) => return fault(&at.key("insert"), Problem::BadInsert),
    };
    Ok(Column {
        name: name.to_owned(),
        key,
        source,
        trim,
        schema,
        insert_required,
    })
}

fn parse_schema(at: &At<'_>, value: &Value) -> Checked<Schema> {
    if !matches!(value, Value::Object(_) | Value::Bool(_)) {
        return wrong(at, "a JSON Schema (an object or a boolean)", value);
    }
    match jsonschema::validator_for(value) {
        Ok(_) => Ok(Schema {
            source: Arc::new(value.clone()),
        }),
        Err(e) => fault(at, Problem::Schema(e.to_string())),
    }
}
