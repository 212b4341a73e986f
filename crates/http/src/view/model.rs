//! The typed form of a view file, as loaded and validated at start (VIEWS.md).

use std::path::PathBuf;
use std::sync::Arc;

/// One view file: its endpoints in file order (the first whose path matches answers).
#[derive(Debug, Clone)]
pub struct View {
    /// The file it was loaded from, for messages.
    pub file: PathBuf,
    /// The endpoints, in file order.
    pub endpoints: Vec<Endpoint>,
    /// The roles a request's JWT must name for any endpoint to answer (`roles`); empty: open.
    pub roles: Vec<String>,
}

/// One entry of the view's `sql` key.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// Where the endpoint sits in its file, as a JSON path (`$.sql[1]`), for messages.
    pub json_path: String,
    /// The URL path: literal segments and captures.
    pub path: Vec<PathSegment>,
    /// How a GET's rows are written (`return`).
    pub returns: Return,
    /// A check run before the method (`precondition`).
    pub precondition: Option<Precondition>,
    /// The GET's SQL and arguments.
    pub get: Option<Command>,
    /// SQL whose parameters are the captures.
    pub delete: Option<String>,
    /// Method objects applied in order in one transaction (empty: the method is not allowed).
    pub put: Vec<MethodObject>,
    /// The PATCH method object.
    pub patch: Option<MethodObject>,
    /// The POST method objects, applied in order.
    pub post: Vec<MethodObject>,
}

/// One entry of `path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSegment {
    /// `"/tags"`: the segment must equal `tags`.
    Literal(String),
    /// `n`: the segment, percent-decoded, becomes parameter `$n`.
    Capture(u16),
}

/// The endpoint's `return` key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Return {
    #[default]
    /// `"csj"`: a header line of names, then one line of JSON values per row.
    Csj,
    /// `"object"`: one row as a JSON object (404 without a row).
    Object,
    /// `"json-csv"`: an array of JSON arrays.
    JsonCsv,
}

/// `precondition`: a check and what answers when it is false.
#[derive(Debug, Clone)]
pub struct Precondition {
    /// The expression that must hold.
    pub check: Expr,
    /// What answers when it does not.
    pub failed: Failed,
}

/// What answers a failed precondition.
#[derive(Debug, Clone)]
pub enum Failed {
    /// A status with an error body (403 by default).
    Status(u16),
    /// Another endpoint (its path ignored) answers the request.
    View(Box<Endpoint>),
}

/// A precondition expression.
#[derive(Debug, Clone)]
pub enum Expr {
    /// A JSON literal (string, number, boolean, null).
    Literal(serde_json::Value),
    /// `["eq", a, b]`: the values are equal.
    Eq(Vec<Expr>),
    /// `["or", ...]`: any holds.
    Or(Vec<Expr>),
    /// `["and", ...]`: all hold.
    And(Vec<Expr>),
    /// `["match", n]`: capture n.
    Match(u16),
    /// `["header", "Name"]`: the request header's value, null when absent.
    Header(String),
    /// `["sql.exists", "SQL", args...]`: true when the statement returns a row.
    SqlExists {
        /// The statement.
        sql: String,
        /// Its parameters, in order.
        arguments: Vec<Expr>,
    },
}

/// A GET: SQL and where its parameters come from (the captures in order when given as a string).
#[derive(Debug, Clone)]
pub struct Command {
    /// The statement.
    pub sql: String,
    /// Where each parameter comes from, in order.
    pub arguments: Vec<Source>,
}

/// A PUT, PATCH or POST method object.
#[derive(Debug, Clone)]
pub struct MethodObject {
    /// The table written to.
    pub table: String,
    /// In file order.
    pub columns: Vec<Column>,
    /// PUT set-replace: SQL returning the key tuples that exist now (parameters: captures).
    pub existing: Option<String>,
    /// PUT set-replace: SQL deleting one tuple (parameters: captures, then the tuple's values).
    pub delete: Option<String>,
    /// Columns to answer with (empty: all).
    pub returning: Vec<String>,
    /// JSON Schema for a whole row.
    pub schema: Option<Schema>,
}

/// One entry of a method object's `columns`.
#[derive(Debug, Clone)]
pub struct Column {
    /// The column's name.
    pub name: String,
    /// Part of the row's key (PATCH matches rows by it, PUT by the key tuple).
    pub key: bool,
    /// Where its value comes from.
    pub source: Source,
    /// Strings are trimmed; an all-whitespace string counts as absent.
    pub trim: bool,
    /// A JSON Schema the value must satisfy.
    pub schema: Option<Schema>,
    /// `insert: "required"`: a PATCH row missing it is an UPDATE instead of an upsert.
    pub insert_required: bool,
}

/// Where a value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A URL capture.
    Capture(u16),
    /// A field of the body row.
    Field(String),
    /// `["body", path...]`: a value inside the body.
    Body(Vec<BodyPathElement>),
    /// `["request", "headers", "X-Name"]`.
    Header(String),
}

/// One step of a `["body", ...]` path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyPathElement {
    /// An object's key.
    Key(String),
    /// An array's index.
    Index(usize),
}

/// A JSON Schema, kept as written; the loader checks it compiles, users compile it once.
#[derive(Debug, Clone)]
pub struct Schema {
    /// The schema as written in the view file.
    pub source: Arc<serde_json::Value>,
}
