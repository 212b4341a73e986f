//! The typed form of a view file, as loaded and validated at start (VIEWS.md).

use std::path::PathBuf;
use std::sync::Arc;

/// One view file: its endpoints in file order (the first whose path matches answers).
#[derive(Debug, Clone)]
pub struct View {
    /// The file it was loaded from, for messages.
    pub file: PathBuf,
    pub endpoints: Vec<Endpoint>,
}

/// One entry of the view's `sql` key.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// Where the endpoint sits in its file, as a JSON path (`$.sql[1]`), for messages.
    pub json_path: String,
    pub path: Vec<PathSegment>,
    pub returns: Return,
    pub precondition: Option<Precondition>,
    pub get: Option<Command>,
    /// SQL whose parameters are the captures.
    pub delete: Option<String>,
    /// Method objects applied in order in one transaction (empty: the method is not allowed).
    pub put: Vec<MethodObject>,
    pub patch: Option<MethodObject>,
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
    Csj,
    Object,
    JsonCsv,
}

/// `precondition`: a check and what answers when it is false.
#[derive(Debug, Clone)]
pub struct Precondition {
    pub check: Expr,
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
    Eq(Vec<Expr>),
    Or(Vec<Expr>),
    And(Vec<Expr>),
    /// `["match", n]`: capture n.
    Match(u16),
    /// `["header", "Name"]`: the request header's value, null when absent.
    Header(String),
    /// `["sql.exists", "SQL", args...]`: true when the statement returns a row.
    SqlExists {
        sql: String,
        arguments: Vec<Expr>,
    },
}

/// A GET: SQL and where its parameters come from (the captures in order when given as a string).
#[derive(Debug, Clone)]
pub struct Command {
    pub sql: String,
    pub arguments: Vec<Source>,
}

/// A PUT, PATCH or POST method object.
#[derive(Debug, Clone)]
pub struct MethodObject {
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
    pub name: String,
    pub key: bool,
    pub source: Source,
    /// Strings are trimmed; an all-whitespace string counts as absent.
    pub trim: bool,
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
    Key(String),
    Index(usize),
}

/// A JSON Schema, kept as written; the loader checks it compiles, users compile it once.
#[derive(Debug, Clone)]
pub struct Schema {
    pub source: Arc<serde_json::Value>,
}
