//! What the schema cache knows of the exposed schemas: relations and their columns, the
//! relationships between them, and functions. Immutable once built.

use sluice_pg::types::Oid;
use std::collections::HashMap;

/// A schema-qualified name (`public.films`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct QualifiedName {
    /// The schema (namespace).
    pub schema: String,
    /// The relation's or function's name within the schema.
    pub name: String,
}

impl QualifiedName {
    /// The name `schema.name`.
    pub fn new(schema: impl Into<String>, name: impl Into<String>) -> QualifiedName {
        QualifiedName {
            schema: schema.into(),
            name: name.into(),
        }
    }
}

/// A qualified name as two borrowed parts: maps keyed by [`QualifiedName`] are searched with
/// `&(schema, name) as &dyn NameKey` without building the key's two strings (once per request).
pub trait NameKey {
    /// The schema and the name.
    fn parts(&self) -> (&str, &str);
}

impl NameKey for QualifiedName {
    fn parts(&self) -> (&str, &str) {
        (&self.schema, &self.name)
    }
}

impl NameKey for (&str, &str) {
    fn parts(&self) -> (&str, &str) {
        (self.0, self.1)
    }
}

impl<'a> std::borrow::Borrow<dyn NameKey + 'a> for QualifiedName {
    fn borrow(&self) -> &(dyn NameKey + 'a) {
        self
    }
}

/// Hashes as the derived `Hash` of [`QualifiedName`] does (the schema's `str`, then the name's).
impl std::hash::Hash for dyn NameKey + '_ {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let (schema, name) = self.parts();
        schema.hash(state);
        name.hash(state);
    }
}

impl PartialEq for dyn NameKey + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.parts() == other.parts()
    }
}

impl Eq for dyn NameKey + '_ {}

impl std::fmt::Display for QualifiedName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.schema, self.name)
    }
}

/// What kind of relation a [`Table`] is (`pg_class.relkind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelationKind {
    /// An ordinary table (`r`).
    Table,
    /// A partitioned table (`p`).
    PartitionedTable,
    /// A view (`v`).
    View,
    /// A materialized view (`m`).
    MaterializedView,
    /// A foreign table (`f`).
    ForeignTable,
    /// The rows of a function's result that is no table's row type (see [`Routine::result`]).
    FunctionResult,
}

/// A table, view, materialized view or foreign table of an exposed schema.
#[derive(Debug, Clone)]
pub struct Table {
    /// The relation's qualified name.
    pub name: QualifiedName,
    /// Table, view or other kind.
    pub kind: RelationKind,
    /// `COMMENT ON TABLE`.
    pub description: Option<String>,
    /// Columns in their order (`attnum`).
    pub columns: Vec<Column>,
    /// The primary key's columns, in key order; for a view, those of the table it selects from
    /// when the view shows them all.
    pub primary_key: Vec<String>,
    /// Whether INSERT, UPDATE and DELETE are possible at all (tables; auto-updatable views or
    /// views with INSTEAD OF triggers/rules), whatever the privileges.
    pub insertable: bool,
    /// Whether UPDATE is possible at all (see `insertable`).
    pub updatable: bool,
    /// Whether DELETE is possible at all (see `insertable`).
    pub deletable: bool,
    /// The computed fields: functions over the relation's row type that requests may name like
    /// columns, but that `select=*` leaves out.
    pub computed: Vec<ComputedField>,
}

impl Table {
    /// The column called `name`, if the relation has one.
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// The computed field called `name`; a column of that name hides it, as in PostgreSQL's
    /// `row.name` notation.
    pub fn computed(&self, name: &str) -> Option<&ComputedField> {
        match self.column(name) {
            Some(_) => None,
            None => self.computed.iter().find(|c| c.column.name == name),
        }
    }

    /// True for views and materialized views.
    pub fn is_view(&self) -> bool {
        matches!(
            self.kind,
            RelationKind::View | RelationKind::MaterializedView
        )
    }
}

/// A column of a [`Table`].
#[derive(Debug, Clone)]
pub struct Column {
    /// The column's name.
    pub name: String,
    /// The column's type (for a domain, the domain's OID).
    pub type_oid: Oid,
    /// The type as `format_type` writes it (`character varying(20)`, `integer[]`).
    pub type_name: String,
    /// The base type's name when the type is a domain (PostgREST's `nominal` vs `type`), else
    /// the same as `type_name`.
    pub base_type_name: String,
    /// False under a `NOT NULL` constraint.
    pub nullable: bool,
    /// The default expression, as `pg_get_expr` shows it.
    pub default: Option<String>,
    /// `GENERATED ALWAYS AS (...) STORED` or `GENERATED ALWAYS AS IDENTITY`: cannot be written.
    pub generated: bool,
    /// `character varying(n)`'s n.
    pub max_length: Option<i32>,
    /// The labels of an enum type, in order.
    pub enum_values: Vec<String>,
    /// `COMMENT ON COLUMN`.
    pub description: Option<String>,
}

/// A computed field (PostgREST's computed column): a function of the relation's schema whose
/// only required parameter is the relation's row type, so that `f(row)` is a value of each row.
#[derive(Debug, Clone)]
pub struct ComputedField {
    /// The function (an overload of this name over another row type may exist).
    pub function: QualifiedName,
    /// The relation whose row type the function takes: a row of another relation (a write's
    /// returned rows, a call's result) is cast to it in the call.
    pub row_type: QualifiedName,
    /// The field as a column: the function's name and return type.
    pub column: Column,
}

/// How the rows of two relations relate through a foreign key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cardinality {
    /// Many rows of `table` point to one of `foreign_table` (the FK is on `table`).
    ManyToOne(ForeignKey),
    /// One row of `table` has many of `foreign_table` (the FK is on `foreign_table`).
    OneToMany(ForeignKey),
    /// A many-to-one whose columns are also unique (or the reverse, `parent`): at most one row
    /// each way.
    OneToOne {
        /// The foreign key, its column pairs oriented from `table` to `foreign_table`.
        key: ForeignKey,
        /// True when the key is on `foreign_table` (the reverse direction).
        parent: bool,
    },
    /// Through a junction table with foreign keys to both.
    ManyToMany(Junction),
    /// A computed relationship: a function of the schema taking one row of `table` and
    /// returning rows of `foreign_table`, embedded under the function's name.
    Computed {
        /// The function.
        function: QualifiedName,
        /// Not `SETOF`, or `SETOF` with `ROWS 1`: at most one row (an object, not an array).
        to_one: bool,
    },
}

impl Cardinality {
    /// Both directions of foreign key `constraint` whose `pairs` are (referencing, referenced)
    /// columns: many-to-one and its one-to-many, or one-to-one both ways when the referencing
    /// columns are unique.
    pub fn of_foreign_key(
        constraint: &str,
        pairs: Vec<(String, String)>,
        one_to_one: bool,
    ) -> (Cardinality, Cardinality) {
        let reverse = ForeignKey {
            constraint: constraint.to_string(),
            columns: pairs.iter().map(|(a, b)| (b.clone(), a.clone())).collect(),
        };
        let key = ForeignKey {
            constraint: constraint.to_string(),
            columns: pairs,
        };
        if one_to_one {
            (
                Cardinality::OneToOne { key, parent: false },
                Cardinality::OneToOne {
                    key: reverse,
                    parent: true,
                },
            )
        } else {
            (Cardinality::ManyToOne(key), Cardinality::OneToMany(reverse))
        }
    }
}

/// A foreign-key constraint as a relationship uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignKey {
    /// The constraint's name (a disambiguation hint may name it).
    pub constraint: String,
    /// `(column of table, column of foreign_table)` pairs, in key order.
    pub columns: Vec<(String, String)>,
}

/// The junction table of a many-to-many relationship.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Junction {
    /// The junction table.
    pub table: QualifiedName,
    /// The junction's key to `table` and its `(table column, junction column)` pairs.
    pub source: ForeignKey,
    /// The junction's key to `foreign_table` and its `(foreign column, junction column)`
    /// pairs.
    pub target: ForeignKey,
}

/// A relationship from `table` to `foreign_table`, one for each direction of each foreign key
/// (and for views over tables with foreign keys), and one for each computed relationship.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relationship {
    /// The relation the relationship leaves from.
    pub table: QualifiedName,
    /// The relation it leads to.
    pub foreign_table: QualifiedName,
    /// How many rows of each side relate, and through which key.
    pub cardinality: Cardinality,
    /// `table` and `foreign_table` are the same relation.
    pub is_self: bool,
}

impl Relationship {
    /// Whether each row of `table` has at most one row of `foreign_table`.
    pub fn is_to_one(&self) -> bool {
        matches!(
            self.cardinality,
            Cardinality::ManyToOne(_)
                | Cardinality::OneToOne { .. }
                | Cardinality::Computed { to_one: true, .. }
        )
    }
}

/// How a function's body may touch the database (`provolatile`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Volatility {
    /// `IMMUTABLE`: same result for the same arguments, reads nothing.
    Immutable,
    /// `STABLE`: reads the database but does not change it.
    Stable,
    /// `VOLATILE`: may change the database; called only by POST.
    Volatile,
}

/// A parameter of a [`Routine`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoutineParam {
    /// Empty for an unnamed parameter.
    pub name: String,
    /// The parameter's type.
    pub type_oid: Oid,
    /// The type as `format_type` writes it.
    pub type_name: String,
    /// Whether the parameter has a default, so a call may leave it out.
    pub has_default: bool,
    /// A `VARIADIC` parameter, which takes the repeated values of a query parameter.
    pub variadic: bool,
}

/// What a [`Routine`] returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReturnType {
    /// One value of this type (a scalar or a composite).
    Single {
        /// The returned type.
        type_oid: Oid,
        /// The type as `format_type` writes it.
        type_name: String,
    },
    /// `SETOF` or `TABLE (...)`: rows.
    SetOf {
        /// The type of each row.
        type_oid: Oid,
        /// The type as `format_type` writes it.
        type_name: String,
    },
}

/// A function (or procedure) of an exposed schema; overloads are separate routines.
#[derive(Debug, Clone)]
pub struct Routine {
    /// The routine's qualified name.
    pub name: QualifiedName,
    /// `COMMENT ON FUNCTION`.
    pub description: Option<String>,
    /// The input parameters (IN, INOUT, VARIADIC), in order.
    pub params: Vec<RoutineParam>,
    /// What a call returns.
    pub returns: ReturnType,
    /// When the return type is a table's row type (or `SETOF` it): that table, so the result
    /// can be embedded and filtered like it.
    pub returns_table: Option<QualifiedName>,
    /// Otherwise, the result as a relation named after the function, whose columns a call's
    /// filters, `select=` and `order=` name: the `OUT`/`INOUT`/`TABLE` columns, a composite
    /// type's fields, or for a scalar (single or `SETOF`) one column named after the function
    /// (as PostgreSQL names it in `SELECT * FROM f()`). `None` with `returns_table`.
    pub result: Option<Table>,
    /// Whether the return type is a composite (a table's or `OUT` parameters'), so the result
    /// has columns.
    pub returns_composite: bool,
    /// Whether a GET may call it (`IMMUTABLE`, `STABLE`) or only a POST.
    pub volatility: Volatility,
    /// A procedure (`CALL`) rather than a function.
    pub is_procedure: bool,
    /// The settings of its `SET` clauses that a call sets for its whole transaction
    /// (PostgREST's `db-hoisted-tx-settings`), as (name, value), in the function's order.
    pub hoisted_settings: Vec<(String, String)>,
    /// Its `SET default_transaction_isolation`: a call's transaction runs at that level.
    pub isolation: Option<IsolationLevel>,
}

/// A role's own configuration, as its requests apply it.
#[derive(Debug, Clone, Default)]
pub struct RoleConfig {
    /// Its settings (name, value), in the order `rolconfig` holds them.
    pub settings: std::sync::Arc<[(String, String)]>,
    /// Its `default_transaction_isolation` above the default: its requests that write and its
    /// calls run at that level (PostgREST's isolation level per role).
    pub isolation: Option<IsolationLevel>,
}

/// A transaction isolation level above PostgreSQL's default (`READ COMMITTED`; `READ
/// UNCOMMITTED` is the same in PostgreSQL).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsolationLevel {
    /// `REPEATABLE READ`: one snapshot for the whole transaction.
    RepeatableRead,
    /// `SERIALIZABLE`.
    Serializable,
}

impl IsolationLevel {
    /// From a `default_transaction_isolation` value; `None` for the default's levels and for
    /// what is not a level.
    pub fn parse(value: &str) -> Option<IsolationLevel> {
        match value
            .trim()
            .trim_matches(['\'', '"'])
            .to_ascii_lowercase()
            .as_str()
        {
            "repeatable read" => Some(IsolationLevel::RepeatableRead),
            "serializable" => Some(IsolationLevel::Serializable),
            _ => None,
        }
    }

    /// The statement that starts a transaction at this level.
    pub fn begin(self) -> &'static str {
        match self {
            IsolationLevel::RepeatableRead => "BEGIN ISOLATION LEVEL REPEATABLE READ",
            IsolationLevel::Serializable => "BEGIN ISOLATION LEVEL SERIALIZABLE",
        }
    }

    /// The statement that sets it in a transaction that has not read yet.
    pub fn set_transaction(self) -> &'static str {
        match self {
            IsolationLevel::RepeatableRead => "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
            IsolationLevel::Serializable => "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE",
        }
    }
}

/// The schema cache: an immutable snapshot of the exposed schemas, shared by every request and
/// replaced whole on reload.
#[derive(Debug, Clone, Default)]
pub struct SchemaCache {
    /// The exposed schemas, in the configured order (the first is the default).
    pub schemas: Vec<String>,
    /// The relations of the exposed schemas by name.
    pub tables: HashMap<QualifiedName, Table>,
    /// The relationships leaving each relation.
    pub relationships: HashMap<QualifiedName, Vec<Relationship>>,
    /// The routines of each name (overloads).
    pub routines: HashMap<QualifiedName, Vec<Routine>>,
    /// `COMMENT ON SCHEMA` of each exposed schema (for OpenAPI's description).
    pub schema_descriptions: HashMap<String, String>,
    /// The schemas the loading connection's own `search_path` resolves to
    /// (`current_schemas(false)`): a request whose path resolves the same is spared setting it.
    /// Empty when not read (every request then sets it).
    pub connection_search_path: Vec<String>,
    /// What each role requests may run as set with `ALTER ROLE .. SET`, which `SET LOCAL ROLE`
    /// does not apply: each request sets its role's (PostgREST's impersonated role settings).
    /// Only roles that have some.
    pub roles: HashMap<String, RoleConfig>,
    /// The media type handlers: domains named after media types that functions return, or
    /// aggregates over a relation's rows (PostgREST's media type handlers).
    pub media: super::media::MediaHandlers,
}

impl SchemaCache {
    /// The relation `schema.name`.
    pub fn table(&self, schema: &str, name: &str) -> Option<&Table> {
        self.tables.get(&(schema, name) as &dyn NameKey)
    }

    /// The overloads of the routine `schema.name`.
    pub fn routine(&self, schema: &str, name: &str) -> Option<&Vec<Routine>> {
        self.routines.get(&(schema, name) as &dyn NameKey)
    }

    /// The relationships from `table` to relations named `foreign` (in any exposed schema).
    pub fn relationships_to<'a>(
        &'a self,
        table: &QualifiedName,
        foreign: &'a str,
    ) -> impl Iterator<Item = &'a Relationship> + 'a {
        self.relationships
            .get(table)
            .into_iter()
            .flatten()
            .filter(move |r| r.foreign_table.name == foreign)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn borrowed_names_find_what_owned_names_do() {
        let mut cache = SchemaCache::default();
        let name = QualifiedName::new("public", "films");
        cache.routines.insert(name.clone(), Vec::new());
        assert!(cache.routine("public", "films").is_some());
        assert!(cache.routine("public", "film").is_none());
        assert!(cache.routine("publi", "cfilms").is_none());
        assert!(cache.routines.contains_key(&name));
    }
}
