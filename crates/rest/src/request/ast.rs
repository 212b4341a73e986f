//! What a REST request asks for, as the URL grammar and the headers say it: the types the
//! sans-I/O parsers produce and the planner reads. Nothing here has looked at the schema yet.

/// The operators of horizontal filters (`column=op.value`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operator {
    /// `eq` `=`
    Eq,
    /// `neq` `<>`
    Neq,
    /// `gt` `>`
    Gt,
    /// `gte` `>=`
    Gte,
    /// `lt` `<`
    Lt,
    /// `lte` `<=`
    Lte,
    /// `like` (`*` stands for `%`)
    Like,
    /// `ilike`
    Ilike,
    /// `match` `~`
    Match,
    /// `imatch` `~*`
    Imatch,
    /// `cs` `@>`
    Contains,
    /// `cd` `<@`
    Contained,
    /// `ov` `&&`
    Overlap,
    /// `sl` `<<`
    StrictlyLeft,
    /// `sr` `>>`
    StrictlyRight,
    /// `nxr` `&<`
    NotExtendsRight,
    /// `nxl` `&>`
    NotExtendsLeft,
    /// `adj` `-|-`
    Adjacent,
}

impl Operator {
    /// Whether `any`/`all` may modify it (`eq(any).{a,b}`).
    pub fn quantifiable(self) -> bool {
        matches!(
            self,
            Operator::Eq
                | Operator::Gt
                | Operator::Gte
                | Operator::Lt
                | Operator::Lte
                | Operator::Like
                | Operator::Ilike
                | Operator::Match
                | Operator::Imatch
        )
    }
}

/// `any` or `all` after a quantifiable operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Quantifier {
    Any,
    All,
}

/// Full-text search operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FtsOperator {
    /// `fts`: `to_tsquery`
    Fts,
    /// `plfts`: `plainto_tsquery`
    Plain,
    /// `phfts`: `phraseto_tsquery`
    Phrase,
    /// `wfts`: `websearch_to_tsquery`
    Websearch,
}

/// The right side of `is.`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IsValue {
    Null,
    NotNull,
    True,
    False,
    Unknown,
}

/// A filter's operation and value(s). Values are text as the URL gave them (percent-decoded,
/// unquoted); they become bind parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operation {
    /// `op.value`, or `op(any).{a,b}` with a quantifier and a list.
    Compare {
        op: Operator,
        quantifier: Option<Quantifier>,
        value: String,
    },
    /// `in.(a,b,"c,d")`
    In(Vec<String>),
    /// `is.null` ...
    Is(IsValue),
    /// `isdistinct.value`
    IsDistinct(String),
    /// `fts(english).value`
    Fts {
        op: FtsOperator,
        language: Option<String>,
        value: String,
    },
}

/// One step of a JSON path after a column: `->key`, `->>key`, `->0`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct JsonStep {
    /// `->>` (text) rather than `->` (json).
    pub as_text: bool,
    pub key: JsonKey,
}

/// A key of an object or an index of an array (negative indexes count from the end).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum JsonKey {
    Key(String),
    Index(i64),
}

/// A column, with an optional JSON path: `data->a->>b`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Field {
    pub name: String,
    pub json_path: Vec<JsonStep>,
}

/// `field=[not.]operation`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    pub field: Field,
    pub negated: bool,
    pub operation: Operation,
}

/// `and`/`or`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogicOperator {
    And,
    Or,
}

/// A boolean tree of filters: `or=(a.eq.1,and(b.gt.2,not.c.is.null))`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogicTree {
    Node {
        negated: bool,
        op: LogicOperator,
        children: Vec<LogicTree>,
    },
    Leaf(Filter),
}

/// Aggregates allowed in `select` (when the setting enables them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregate {
    Count,
    Sum,
    Avg,
    Min,
    Max,
}

/// `inner` or `left` join of an embedded resource (`!inner`, `!left`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinType {
    Inner,
    Left,
}

/// One item of `select=`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SelectItem {
    /// `*`
    Star,
    /// `alias:field->path::cast`, or `alias:field.agg()::cast`.
    Field {
        field: Field,
        alias: Option<String>,
        cast: Option<String>,
        aggregate: Option<Aggregate>,
        aggregate_cast: Option<String>,
    },
    /// `alias:relation!hint!inner(items)`: an embedded resource.
    Embed {
        relation: String,
        alias: Option<String>,
        hint: Option<String>,
        join: Option<JoinType>,
        /// The embedded resource's own select list (empty: `()`, no columns).
        select: Vec<SelectItem>,
    },
    /// `...relation!hint(items)`: the embedded resource's columns spread into the parent.
    Spread {
        relation: String,
        hint: Option<String>,
        join: Option<JoinType>,
        select: Vec<SelectItem>,
    },
}

/// `asc` / `desc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Asc,
    Desc,
}

/// `nullsfirst` / `nullslast`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nulls {
    First,
    Last,
}

/// One term of `order=`: `field.desc.nullslast`, or `relation(field).asc` for a to-one
/// embedded resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderTerm {
    /// The embedded to-one relation the field belongs to (`order=author(name)`), if any.
    pub relation: Option<String>,
    pub field: Field,
    pub direction: Option<Direction>,
    pub nulls: Option<Nulls>,
}

/// The embedded resources a parameter applies to: `clients.projects.id=eq.1` has path
/// `["clients", "projects"]`; empty for the requested resource itself. Names are the aliases
/// (or relation names) used in `select`.
pub type EmbedPath = Vec<String>;

/// The query string, split into what each reserved parameter says. Parameters that are not
/// reserved stay as `params` in order: they are filters of a table, or arguments (or filters
/// of the result) of a function, which only the schema can tell.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueryParams {
    /// `select=`, per embed path; `None` for the root: `*`.
    pub select: Option<Vec<SelectItem>>,
    /// `[path.]order=`.
    pub order: Vec<(EmbedPath, Vec<OrderTerm>)>,
    /// `[path.]limit=`.
    pub limit: Vec<(EmbedPath, u64)>,
    /// `[path.]offset=`.
    pub offset: Vec<(EmbedPath, u64)>,
    /// `[path.]or=(...)`, `[path.]and=(...)`, `[path.]not.or=(...)`.
    pub logic: Vec<(EmbedPath, LogicTree)>,
    /// `columns=a,b` (which keys of a body to use).
    pub columns: Option<Vec<String>>,
    /// `on_conflict=a,b`.
    pub on_conflict: Option<Vec<String>>,
    /// Every other parameter, percent-decoded, in order: `(key, value)`.
    pub params: Vec<(String, String)>,
}

/// A filter parameter as the planner gets it once it knows the parameter is a filter: the
/// embed path from its key and the filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathFilter {
    pub path: EmbedPath,
    pub filter: Filter,
}

/// `Prefer: return=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreferReturn {
    Minimal,
    HeadersOnly,
    Representation,
}

/// `Prefer: count=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreferCount {
    Exact,
    Planned,
    Estimated,
}

/// `Prefer: resolution=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreferResolution {
    MergeDuplicates,
    IgnoreDuplicates,
}

/// `Prefer: missing=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreferMissing {
    Default,
    Null,
}

/// `Prefer: handling=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreferHandling {
    Strict,
    Lenient,
}

/// `Prefer: tx=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreferTx {
    Commit,
    Rollback,
}

/// What the `Prefer` headers ask for (several headers, or comma-separated).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Preferences {
    pub return_: Option<PreferReturn>,
    pub count: Option<PreferCount>,
    pub resolution: Option<PreferResolution>,
    pub missing: Option<PreferMissing>,
    pub handling: Option<PreferHandling>,
    pub tx: Option<PreferTx>,
    /// `max-affected=n`.
    pub max_affected: Option<u64>,
    /// `timezone=...`.
    pub timezone: Option<String>,
    /// Preferences not understood (for `handling=strict`'s error).
    pub invalid: Vec<String>,
}

/// The media types Sluice's REST API reads and writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MediaType {
    /// `application/json`
    Json,
    /// `application/vnd.pgrst.object+json` (optionally `;nulls=stripped`)
    SingleObject { nulls_stripped: bool },
    /// `application/vnd.pgrst.array+json;nulls=stripped`
    ArrayStripped,
    /// `text/csv`
    Csv,
    /// `application/x-ndjson` / `application/jsonl`: JSON Lines
    JsonLines,
    /// `application/csj`
    Csj,
    /// `application/x-www-form-urlencoded` (bodies)
    UrlEncoded,
    /// `application/openapi+json`
    OpenApi,
    /// `text/plain`
    TextPlain,
    /// `application/octet-stream`
    OctetStream,
    /// `*/*`
    Any,
    /// Anything else, as given (for the 406/415 message).
    Other(String),
}

/// The `Range` header's rows: `Range: 0-24` (with `Range-Unit: items`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowRange {
    pub offset: u64,
    /// Last row index, inclusive; `None` for an open range (`10-`).
    pub last: Option<u64>,
}

/// The resource a path names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resource {
    /// `/` : the OpenAPI description of the schema.
    Schema,
    /// `/table`
    Relation(String),
    /// `/rpc/function`
    Routine(String),
}

/// A request's method as the API treats it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Head,
    Post,
    Patch,
    Put,
    Delete,
    Options,
}
