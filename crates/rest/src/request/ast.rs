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
    /// `any`: true when the comparison holds for at least one value of the list.
    Any,
    /// `all`: true when the comparison holds for every value of the list.
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
    /// `is.null`
    Null,
    /// `is.not_null`
    NotNull,
    /// `is.true`
    True,
    /// `is.false`
    False,
    /// `is.unknown`: a null boolean.
    Unknown,
}

/// A filter's operation and value(s). Values are text as the URL gave them (percent-decoded,
/// unquoted); they become bind parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operation {
    /// `op.value`, or `op(any).{a,b}` with a quantifier and a list.
    Compare {
        /// The comparison.
        op: Operator,
        /// `any` or `all`, which make `value` a list `{a,b}`.
        quantifier: Option<Quantifier>,
        /// The right-hand side, or the list when quantified.
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
        /// Which `to_tsquery` variant parses the value.
        op: FtsOperator,
        /// The text search configuration in parentheses (`fts(english)`), if given.
        language: Option<String>,
        /// The query text.
        value: String,
    },
}

/// One step of a JSON path after a column: `->key`, `->>key`, `->0`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct JsonStep {
    /// `->>` (text) rather than `->` (json).
    pub as_text: bool,
    /// The object key or array index this step takes.
    pub key: JsonKey,
}

/// A key of an object or an index of an array (negative indexes count from the end).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum JsonKey {
    /// An object key.
    Key(String),
    /// An array index.
    Index(i64),
}

/// A column, with an optional JSON path: `data->a->>b`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Field {
    /// The column's name as written.
    pub name: String,
    /// The JSON path after the column (`->a->>b`); empty for the column itself.
    pub json_path: Vec<JsonStep>,
}

/// `field=[not.]operation`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    /// The column (and JSON path) filtered on.
    pub field: Field,
    /// `not.` before the operation.
    pub negated: bool,
    /// The operator and value(s).
    pub operation: Operation,
}

/// `and`/`or`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogicOperator {
    /// `and`: every child must hold.
    And,
    /// `or`: at least one child must hold.
    Or,
}

/// A boolean tree of filters: `or=(a.eq.1,and(b.gt.2,not.c.is.null))`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogicTree {
    /// `[not.]and(...)` or `[not.]or(...)`: an operator over child trees.
    Node {
        /// `not.` before the operator.
        negated: bool,
        /// `and` or `or`.
        op: LogicOperator,
        /// The operands, in the order written.
        children: Vec<LogicTree>,
    },
    /// A single filter: `a.eq.1`.
    Leaf(Filter),
}

/// Aggregates allowed in `select` (when the setting enables them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregate {
    /// `count()`
    Count,
    /// `sum()`
    Sum,
    /// `avg()`
    Avg,
    /// `min()`
    Min,
    /// `max()`
    Max,
}

/// `inner` or `left` join of an embedded resource (`!inner`, `!left`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinType {
    /// `!inner`: parent rows without a match are left out.
    Inner,
    /// `!left`: parent rows are kept, with null or `[]` for the embedded resource.
    Left,
}

/// One item of `select=`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SelectItem {
    /// `*`
    Star,
    /// `alias:field->path::cast`, or `alias:field.agg()::cast`.
    Field {
        /// The column and its JSON path.
        field: Field,
        /// The output key (`alias:`), if renamed.
        alias: Option<String>,
        /// `::type` on the column, applied before any aggregate.
        cast: Option<String>,
        /// `.sum()` and friends, or `count()` on its own.
        aggregate: Option<Aggregate>,
        /// `::type` after the aggregate, applied to its result.
        aggregate_cast: Option<String>,
    },
    /// `alias:relation!hint!inner(items)`: an embedded resource.
    Embed {
        /// The related table, view or foreign-key name to embed.
        relation: String,
        /// The output key (`alias:`), if renamed.
        alias: Option<String>,
        /// `!hint`: the foreign key, column or table that picks one relationship among several.
        hint: Option<String>,
        /// `!inner` or `!left`, if given.
        join: Option<JoinType>,
        /// The embedded resource's own select list (empty: `()`, no columns).
        select: Vec<SelectItem>,
    },
    /// `...relation!hint(items)`: the embedded resource's columns spread into the parent.
    Spread {
        /// The related table, view or foreign-key name to spread.
        relation: String,
        /// `!hint`: the foreign key, column or table that picks one relationship among several.
        hint: Option<String>,
        /// `!inner` or `!left`, if given.
        join: Option<JoinType>,
        /// The spread resource's own select list.
        select: Vec<SelectItem>,
    },
}

/// `asc` / `desc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// `asc`: ascending.
    Asc,
    /// `desc`: descending.
    Desc,
}

/// `nullsfirst` / `nullslast`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nulls {
    /// `nullsfirst`: nulls before other values.
    First,
    /// `nullslast`: nulls after other values.
    Last,
}

/// One term of `order=`: `field.desc.nullslast`, or `relation(field).asc` for a to-one
/// embedded resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderTerm {
    /// The embedded to-one relation the field belongs to (`order=author(name)`), if any.
    pub relation: Option<String>,
    /// The column (and JSON path) to sort by.
    pub field: Field,
    /// `asc` or `desc`; PostgreSQL's default (ascending) when absent.
    pub direction: Option<Direction>,
    /// `nullsfirst` or `nullslast`; PostgreSQL's default for the direction when absent.
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
    /// The embedded resource the filter applies to; empty for the requested one.
    pub path: EmbedPath,
    /// The filter itself.
    pub filter: Filter,
}

/// `Prefer: return=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreferReturn {
    /// `minimal`: no body.
    Minimal,
    /// `headers-only`: no body, but the `Location` header of a created row.
    HeadersOnly,
    /// `representation`: the affected rows as the body.
    Representation,
}

/// `Prefer: count=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreferCount {
    /// `exact`: count the rows with `count(*)`.
    Exact,
    /// `planned`: the planner's row estimate from `EXPLAIN`.
    Planned,
    /// `estimated`: exact up to the `max-rows` setting, the planner's estimate above it.
    Estimated,
}

/// `Prefer: resolution=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreferResolution {
    /// `merge-duplicates`: an upsert updates the existing row.
    MergeDuplicates,
    /// `ignore-duplicates`: an upsert keeps the existing row.
    IgnoreDuplicates,
}

/// `Prefer: missing=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreferMissing {
    /// `default`: columns missing from the body take their column default.
    Default,
    /// `null`: columns missing from the body are set to null.
    Null,
}

/// `Prefer: handling=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreferHandling {
    /// `strict`: an unknown or invalid preference is an error.
    Strict,
    /// `lenient`: unknown preferences are ignored.
    Lenient,
}

/// `Prefer: params=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreferParams {
    /// `single-object`: a call's JSON body goes whole to its one json or jsonb parameter.
    SingleObject,
}

/// `Prefer: tx=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreferTx {
    /// `commit`: the transaction commits.
    Commit,
    /// `rollback`: the transaction is rolled back after the response is built.
    Rollback,
}

/// What the `Prefer` headers ask for (several headers, or comma-separated).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Preferences {
    /// `return=`: what a write sends back.
    pub return_: Option<PreferReturn>,
    /// `count=`: how the total in `Content-Range` is counted.
    pub count: Option<PreferCount>,
    /// `resolution=`: how an upsert treats an existing row.
    pub resolution: Option<PreferResolution>,
    /// A `resolution=` not applied (a POST to a table without a key nor `on_conflict=`): a
    /// merge still answers 200 when it inserts nothing, as PostgREST does.
    pub ignored_resolution: Option<PreferResolution>,
    /// `missing=`: what columns absent from the body get.
    pub missing: Option<PreferMissing>,
    /// `handling=`: whether unknown preferences are errors.
    pub handling: Option<PreferHandling>,
    /// `tx=`: commit or roll back (when the settings allow overriding).
    pub tx: Option<PreferTx>,
    /// `params=`: how a call's body becomes its arguments.
    pub params: Option<PreferParams>,
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
    SingleObject {
        /// `;nulls=stripped`: keys whose value is null are left out.
        nulls_stripped: bool,
    },
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
    /// `application/vnd.pgrst.plan` (`+json`, `+text`): the execution plan of the request.
    Plan(PlanMedia),
}

/// The execution plan media type's parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanMedia {
    /// `+json`: EXPLAIN's JSON format; else its text format.
    pub json: bool,
    /// `for=`: the media type whose statement is explained (`application/json` when not given).
    pub for_media: Box<MediaType>,
    /// `options=`, `|`-separated, in PostgREST's order whatever the header's.
    pub options: Vec<PlanOption>,
}

/// An EXPLAIN option the plan media type may ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanOption {
    /// `analyze`: run the statement and report what happened.
    Analyze,
    /// `verbose`
    Verbose,
    /// `settings`
    Settings,
    /// `buffers`
    Buffers,
    /// `wal`
    Wal,
}

impl PlanOption {
    /// Every option, in the order PostgREST writes them.
    pub const ALL: [PlanOption; 5] = [
        PlanOption::Analyze,
        PlanOption::Verbose,
        PlanOption::Settings,
        PlanOption::Buffers,
        PlanOption::Wal,
    ];

    /// Its name in the media type's `options=`.
    pub fn name(self) -> &'static str {
        match self {
            PlanOption::Analyze => "analyze",
            PlanOption::Verbose => "verbose",
            PlanOption::Settings => "settings",
            PlanOption::Buffers => "buffers",
            PlanOption::Wal => "wal",
        }
    }
}

/// The `Range` header's rows: `Range: 0-24` (with `Range-Unit: items`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowRange {
    /// First row index, from 0.
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
    /// `GET`: read.
    Get,
    /// `HEAD`: read, headers only.
    Head,
    /// `POST`: insert, or call a function.
    Post,
    /// `PATCH`: update.
    Patch,
    /// `PUT`: upsert one row by primary key.
    Put,
    /// `DELETE`: delete.
    Delete,
    /// `OPTIONS`: the allowed methods.
    Options,
}
