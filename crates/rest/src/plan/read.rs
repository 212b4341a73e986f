//! The plan of a read: the requested relation with its selected columns, filters, order and
//! page, and the embedded resources below it, every name resolved against the schema cache.

use super::embed;
use crate::error::ApiError;
use crate::request::{
    Aggregate, Direction, EmbedPath, Field, JoinType, JsonKey, JsonStep, LogicOperator, LogicTree,
    Nulls, Operation, OrderTerm, PathFilter, QueryParams, SelectItem,
};
use crate::schema::{Column, ComputedField, Relationship, SchemaCache, Table};
use http::StatusCode;

/// A column (or computed field) of the level's relation, with an optional JSON path into it.
#[derive(Debug, Clone)]
pub struct ColumnRef<'s> {
    /// The column, as the schema cache describes it (for a computed field, its name and type).
    pub column: &'s Column,
    /// Set for a computed field: the function whose value of the row the "column" is.
    pub computed: Option<&'s ComputedField>,
    /// The JSON path into it (`->a->>b`); empty for the column itself.
    pub json_path: Vec<JsonStep>,
}

/// A type named in a cast (`::text`), checked to be a type name and nothing else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CastType(String);

impl CastType {
    /// A single identifier (`int4`, `text`, `my_enum`, with `[]` for arrays) or one of the
    /// multi-word SQL type names; anything else (quotes, parentheses, other words) is refused,
    /// so a cast can never carry more than a type into the SQL text.
    pub fn parse(text: &str) -> Result<CastType, ApiError> {
        const MULTI_WORD: &[&str] = &[
            "double precision",
            "character varying",
            "bit varying",
            "timestamp with time zone",
            "timestamp without time zone",
            "time with time zone",
            "time without time zone",
        ];
        let lower = text.trim().to_ascii_lowercase();
        let base = lower.trim_end_matches("[]");
        let ident = base
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && base.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if ident || MULTI_WORD.contains(&base) {
            Ok(CastType(lower))
        } else {
            Err(ApiError::parse(
                format!("failed to parse cast ({text})"),
                "a cast names a type: a letter or underscore, then letters, digits or \
                 underscores, optionally followed by []",
            ))
        }
    }

    /// The type name, lower-cased, as it goes into the SQL text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// One output column of a level.
#[derive(Debug, Clone)]
pub enum Output<'s> {
    /// A column (or a path into it), possibly cast or aggregated, under `key`.
    Column {
        /// The column and its JSON path.
        field: ColumnRef<'s>,
        /// `::type` on the column, applied before any aggregate.
        cast: Option<CastType>,
        /// The aggregate, with the cast of its result.
        aggregate: Option<(Aggregate, Option<CastType>)>,
        /// The output key: the alias, else the aggregate's name, else the column's (or the JSON
        /// path's last key).
        key: String,
    },
    /// `count()` without a column.
    Count {
        /// The output key: the alias, else `count`.
        key: String,
        /// `::type` after `count()`, applied to the count.
        cast: Option<CastType>,
    },
    /// The embedded resource `embeds[index]` (its JSON, or its columns when spread).
    Embed {
        /// Position of the resource in the level's `embeds`.
        index: usize,
    },
}

/// A condition of a level's WHERE.
#[derive(Debug, Clone)]
pub enum Condition<'s> {
    /// A filter on one column: `[not.]op.value`.
    Filter {
        /// The column (and JSON path) filtered on.
        field: ColumnRef<'s>,
        /// `not.` before the operation.
        negated: bool,
        /// The operator and its value(s), still text: they become bind parameters.
        operation: Operation,
    },
    /// `[not.]and(...)` or `[not.]or(...)` over child conditions.
    Tree {
        /// `not.` before the operator.
        negated: bool,
        /// `and` or `or`.
        op: LogicOperator,
        /// The operands, in the order written.
        children: Vec<Condition<'s>>,
    },
}

/// A term of a level's ORDER BY.
#[derive(Debug, Clone)]
pub struct Order<'s> {
    /// The column (and JSON path) to sort by.
    pub field: ColumnRef<'s>,
    /// `asc` or `desc`; ascending when absent.
    pub direction: Option<Direction>,
    /// `nullsfirst` or `nullslast`; PostgreSQL's default for the direction when absent.
    pub nulls: Option<Nulls>,
}

/// An embedded resource: the relationship it goes through and its own plan.
#[derive(Debug, Clone)]
pub struct Embed<'s> {
    /// The relationship from the parent level's relation to the embedded one.
    pub relationship: &'s Relationship,
    /// The name paths and the output use: the alias, else the relation's name.
    pub key: String,
    /// `!inner` drops parent rows without a match; left (the default) keeps them.
    pub join: JoinType,
    /// `...relation(...)`: its columns go into the parent's.
    pub spread: bool,
    /// The embedded level's own plan.
    pub plan: ReadPlan<'s>,
}

/// One level of a read: a relation and what is asked of it.
#[derive(Debug, Clone)]
pub struct ReadPlan<'s> {
    /// The relation read.
    pub table: &'s Table,
    /// The output columns, in select order.
    pub outputs: Vec<Output<'s>>,
    /// The WHERE conditions, joined by AND.
    pub conditions: Vec<Condition<'s>>,
    /// The ORDER BY terms.
    pub order: Vec<Order<'s>>,
    /// `limit=`; at the top level also capped by the `Range` header and max-rows.
    pub limit: Option<u64>,
    /// `offset=`; at the top level also raised by the `Range` header.
    pub offset: Option<u64>,
    /// The embedded resources, in select order.
    pub embeds: Vec<Embed<'s>>,
}

impl<'s> ReadPlan<'s> {
    /// Whether the level has an aggregate (so its other columns are grouped by).
    pub fn aggregates(&self) -> bool {
        self.outputs.iter().any(|o| {
            matches!(
                o,
                Output::Count { .. }
                    | Output::Column {
                        aggregate: Some(_),
                        ..
                    }
            )
        })
    }

    fn level_mut(&mut self, path: &[String]) -> Option<&mut ReadPlan<'s>> {
        match path.split_first() {
            None => Some(self),
            Some((name, rest)) => self
                .embeds
                .iter_mut()
                .find(|e| &e.key == name)
                .and_then(|e| e.plan.level_mut(rest)),
        }
    }
}

/// What a read asks, besides the relation: the parts of the query string the planner needs.
#[derive(Debug, Clone, Copy)]
pub struct ReadInput<'r> {
    /// `select=` (the whole tree, embedded levels included).
    pub select: &'r [SelectItem],
    /// The filters, each with the embed path it applies to.
    pub filters: &'r [PathFilter],
    /// `and=`/`or=` trees, per embed path.
    pub logic: &'r [(EmbedPath, LogicTree)],
    /// `order=`, per embed path.
    pub order: &'r [(EmbedPath, Vec<OrderTerm>)],
    /// `limit=`, per embed path.
    pub limit: &'r [(EmbedPath, u64)],
    /// `offset=`, per embed path.
    pub offset: &'r [(EmbedPath, u64)],
    /// Whether the settings allow aggregates in `select` (`db-aggregates-enabled`).
    pub aggregates_enabled: bool,
}

/// `select=*`, what a request without `select=` reads.
static SELECT_ALL: [SelectItem; 1] = [SelectItem::Star];

impl<'r> ReadInput<'r> {
    /// A request's read parameters with the `filters` the planner took from them.
    pub fn of_query(
        query: &'r QueryParams,
        filters: &'r [PathFilter],
        aggregates_enabled: bool,
    ) -> ReadInput<'r> {
        ReadInput {
            select: query.select.as_deref().unwrap_or(&SELECT_ALL),
            filters,
            logic: &query.logic,
            order: &query.order,
            limit: &query.limit,
            offset: &query.offset,
            aggregates_enabled,
        }
    }

    /// The rows a write returns, read back: `select` and `order` only, no filters or page.
    pub fn written(
        select: &'r [SelectItem],
        order: &'r [(EmbedPath, Vec<OrderTerm>)],
    ) -> ReadInput<'r> {
        ReadInput {
            select,
            filters: &[],
            logic: &[],
            order,
            limit: &[],
            offset: &[],
            aggregates_enabled: false,
        }
    }
}

/// Plans a read of `table`.
pub fn plan_read<'s>(
    cache: &'s SchemaCache,
    table: &'s Table,
    input: &ReadInput<'_>,
) -> Result<ReadPlan<'s>, ApiError> {
    let mut plan = level(cache, table, input.select, input.aggregates_enabled)?;
    for PathFilter { path, filter } in input.filters {
        let level = find_level(&mut plan, path)?;
        let field = resolve(level.table, &filter.field)?;
        level.conditions.push(Condition::Filter {
            field,
            negated: filter.negated,
            operation: filter.operation.clone(),
        });
    }
    for (path, tree) in input.logic {
        let level = find_level(&mut plan, path)?;
        let condition = condition(level.table, tree)?;
        level.conditions.push(condition);
    }
    for (path, terms) in input.order {
        let level = find_level(&mut plan, path)?;
        for term in terms {
            if term.relation.is_some() {
                return Err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "PGRST127",
                    "Ordering by a related resource's column is not supported yet",
                ));
            }
            let field = resolve(level.table, &term.field)?;
            level.order.push(Order {
                field,
                direction: term.direction,
                nulls: term.nulls,
            });
        }
    }
    for (path, limit) in input.limit {
        find_level(&mut plan, path)?.limit = Some(*limit);
    }
    for (path, offset) in input.offset {
        find_level(&mut plan, path)?.offset = Some(*offset);
    }
    Ok(plan)
}

fn find_level<'p, 's>(
    plan: &'p mut ReadPlan<'s>,
    path: &[String],
) -> Result<&'p mut ReadPlan<'s>, ApiError> {
    plan.level_mut(path).ok_or_else(|| {
        let name = path.last().map(String::as_str).unwrap_or_default();
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "PGRST108",
            format!("'{name}' is not an embedded resource in this request"),
        )
        .hint(format!(
            "Verify that '{name}' is included in the 'select' query parameter."
        ))
    })
}

/// A level from its select items.
fn level<'s>(
    cache: &'s SchemaCache,
    table: &'s Table,
    select: &[SelectItem],
    aggregates_enabled: bool,
) -> Result<ReadPlan<'s>, ApiError> {
    let mut plan = ReadPlan {
        table,
        outputs: Vec::new(),
        conditions: Vec::new(),
        order: Vec::new(),
        limit: None,
        offset: None,
        embeds: Vec::new(),
    };
    for item in select {
        match item {
            SelectItem::Star => {
                for column in &table.columns {
                    plan.outputs.push(Output::Column {
                        field: ColumnRef {
                            column,
                            computed: None,
                            json_path: Vec::new(),
                        },
                        cast: None,
                        aggregate: None,
                        key: column.name.clone(),
                    });
                }
            }
            SelectItem::Field {
                field,
                alias,
                cast,
                aggregate,
                aggregate_cast,
            } => {
                let cast = cast.as_deref().map(CastType::parse).transpose()?;
                let aggregate = match aggregate {
                    None => None,
                    Some(_) if !aggregates_enabled => return Err(aggregates_disabled()),
                    Some(function) => Some((
                        *function,
                        aggregate_cast.as_deref().map(CastType::parse).transpose()?,
                    )),
                };
                if field.name == "count" && field.json_path.is_empty() && aggregate.is_some() {
                    // `count()`: PostgREST's row count, not a column named count.
                    if table.column("count").is_none() {
                        let cast = aggregate.and_then(|(_, cast)| cast);
                        plan.outputs.push(Output::Count {
                            key: alias.clone().unwrap_or_else(|| "count".into()),
                            cast,
                        });
                        continue;
                    }
                }
                let key = alias.clone().unwrap_or_else(|| match aggregate {
                    Some((function, _)) => aggregate_name(function).to_string(),
                    None => output_name(field),
                });
                plan.outputs.push(Output::Column {
                    field: resolve(table, field)?,
                    cast,
                    aggregate,
                    key,
                });
            }
            SelectItem::Embed {
                relation,
                alias,
                hint,
                join,
                select,
            } => {
                let embedded = embed_level(
                    cache,
                    table,
                    relation,
                    hint.as_deref(),
                    select,
                    aggregates_enabled,
                )?;
                let (relationship, child) = embedded;
                plan.embeds.push(Embed {
                    relationship,
                    key: alias.clone().unwrap_or_else(|| relation.clone()),
                    join: join.unwrap_or(JoinType::Left),
                    spread: false,
                    plan: child,
                });
                plan.outputs.push(Output::Embed {
                    index: plan.embeds.len() - 1,
                });
            }
            SelectItem::Spread {
                relation,
                hint,
                join,
                select,
            } => {
                let (relationship, child) = embed_level(
                    cache,
                    table,
                    relation,
                    hint.as_deref(),
                    select,
                    aggregates_enabled,
                )?;
                if !relationship.is_to_one() {
                    return Err(ApiError::new(
                        StatusCode::BAD_REQUEST,
                        "PGRST119",
                        format!(
                            "A spread operation on '{relation}' is only possible on to-one \
                             relationships"
                        ),
                    )
                    .details(format!(
                        "'{}' and '{relation}' do not form a many-to-one or one-to-one \
                         relationship",
                        table.name.name
                    )));
                }
                plan.embeds.push(Embed {
                    relationship,
                    key: relation.clone(),
                    join: join.unwrap_or(JoinType::Left),
                    spread: true,
                    plan: child,
                });
                plan.outputs.push(Output::Embed {
                    index: plan.embeds.len() - 1,
                });
            }
        }
    }
    Ok(plan)
}

fn embed_level<'s>(
    cache: &'s SchemaCache,
    table: &'s Table,
    relation: &str,
    hint: Option<&str>,
    select: &[SelectItem],
    aggregates_enabled: bool,
) -> Result<(&'s Relationship, ReadPlan<'s>), ApiError> {
    let relationship = embed::find(cache, table, relation, hint)?;
    let target = cache
        .tables
        .get(&relationship.foreign_table)
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "PGRST200",
                format!(
                    "Could not find a relationship between '{}' and '{relation}' in the schema \
                     cache",
                    table.name.name
                ),
            )
            .details(format!(
                "'{}' is not in an exposed schema",
                relationship.foreign_table
            ))
        })?;
    let child = level(cache, target, select, aggregates_enabled)?;
    Ok((relationship, child))
}

fn aggregates_disabled() -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "PGRST123",
        "Use of aggregate functions is not allowed",
    )
}

fn aggregate_name(function: Aggregate) -> &'static str {
    match function {
        Aggregate::Count => "count",
        Aggregate::Sum => "sum",
        Aggregate::Avg => "avg",
        Aggregate::Min => "min",
        Aggregate::Max => "max",
    }
}

/// The output key of a field without an alias: the last key (not index) of its JSON path, else
/// the column, as PostgREST names it (`data->0->a->>2` is `a`, `data->>0` is `data`).
fn output_name(field: &Field) -> String {
    field
        .json_path
        .iter()
        .rev()
        .find_map(|step| match &step.key {
            JsonKey::Key(key) => Some(key.clone()),
            JsonKey::Index(_) => None,
        })
        .unwrap_or_else(|| field.name.clone())
}

/// `field` checked against `table`'s columns, then its computed fields.
fn resolve<'s>(table: &'s Table, field: &Field) -> Result<ColumnRef<'s>, ApiError> {
    let (column, computed) = match table.column(&field.name) {
        Some(column) => (column, None),
        None => match table.computed(&field.name) {
            Some(computed) => (&computed.column, Some(computed)),
            None => {
                return Err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "42703",
                    format!("column {}.{} does not exist", table.name.name, field.name),
                ));
            }
        },
    };
    Ok(ColumnRef {
        column,
        computed,
        json_path: field.json_path.clone(),
    })
}

fn condition<'s>(table: &'s Table, tree: &LogicTree) -> Result<Condition<'s>, ApiError> {
    Ok(match tree {
        LogicTree::Leaf(filter) => Condition::Filter {
            field: resolve(table, &filter.field)?,
            negated: filter.negated,
            operation: filter.operation.clone(),
        },
        LogicTree::Node {
            negated,
            op,
            children,
        } => Condition::Tree {
            negated: *negated,
            op: *op,
            children: children
                .iter()
                .map(|child| condition(table, child))
                .collect::<Result<_, _>>()?,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casts_are_type_names_only() {
        for ok in [
            "text",
            "int4",
            "INT",
            "my_enum",
            "text[]",
            "double precision",
            "_x1",
        ] {
            assert!(CastType::parse(ok).is_ok(), "{ok}");
        }
        for bad in [
            "text) OR (1=1",
            "int from pg_authid",
            "\"text\"",
            "1int",
            "",
            "text;",
            "numeric(10,2)",
        ] {
            assert!(CastType::parse(bad).is_err(), "{bad}");
        }
    }
}
