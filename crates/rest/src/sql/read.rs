//! The SQL of a read: the requested relation's rows, one per result row, each embedded resource
//! a LATERAL subquery that PostgreSQL turns into one JSON value per row (an array for to-many,
//! an object or null for to-one) or, spread, into columns of the row.

use super::{Statement, array_literal};
use crate::plan::{ColumnRef, Condition, Embed, Order, Output, ReadPlan};
use crate::request::{
    Aggregate, Direction, FtsOperator, IsValue, JoinType, JsonKey, LogicOperator, Nulls, Operation,
    Operator, Quantifier,
};
use crate::schema::Cardinality;

/// The statement that reads `plan`: its rows stream out one per row of the relation.
pub fn render(plan: &ReadPlan<'_>) -> Statement {
    let mut r = Renderer::default();
    r.level(plan, None);
    r.st
}

/// Appends to `st` the read of `plan` whose top level reads the rows of `source` (SQL: a CTE's
/// quoted name, a function call, a subquery in parentheses) instead of the relation: a write's
/// representation, a function's result. Parameters `source` uses must already be in `st`.
pub fn render_over(st: Statement, plan: &ReadPlan<'_>, source: &str) -> Statement {
    let mut r = Renderer {
        st,
        next: 0,
        root_source: Some(source.to_string()),
    };
    r.level(plan, None);
    r.st
}

/// `SELECT count(*)` of the rows `plan`'s top level would return without its page; with
/// `at_most`, counting stops after that many rows.
pub fn render_count(plan: &ReadPlan<'_>, at_most: Option<u64>) -> Statement {
    render_count_over(Statement::new(), plan, None, at_most)
}

/// [`render_count`] appended to `st`, with `source` (see [`render_over`]) in place of the top
/// level's relation when given.
pub fn render_count_over(
    st: Statement,
    plan: &ReadPlan<'_>,
    source: Option<&str>,
    at_most: Option<u64>,
) -> Statement {
    let mut r = Renderer {
        st,
        next: 0,
        root_source: source.map(str::to_string),
    };
    let alias = r.alias("t");
    r.st.push("SELECT pg_catalog.count(*) FROM (SELECT 1 FROM ");
    r.relation(plan, &alias, None, true);
    if let Some(at_most) = at_most {
        r.st.push(" LIMIT ").param(at_most.to_string());
    }
    r.st.push(") AS \"rows\"");
    r.st
}

/// `EXPLAIN (FORMAT JSON)` of the rows `plan`'s top level would return without its page: the
/// planner's estimate of their number ("Plan Rows").
pub fn render_explain(plan: &ReadPlan<'_>) -> Statement {
    render_explain_over(Statement::new(), plan, None)
}

/// [`render_explain`] appended to `st`, with `source` (see [`render_over`]) in place of the top
/// level's relation when given.
pub fn render_explain_over(st: Statement, plan: &ReadPlan<'_>, source: Option<&str>) -> Statement {
    let mut r = Renderer {
        st,
        next: 0,
        root_source: source.map(str::to_string),
    };
    let alias = r.alias("t");
    r.st.push("EXPLAIN (FORMAT JSON) SELECT 1 FROM ");
    r.relation(plan, &alias, None, true);
    r.st
}

/// Where a level hangs from its parent.
#[derive(Clone, Copy)]
struct Link<'p, 's> {
    embed: &'p Embed<'s>,
    parent_alias: &'p str,
}

#[derive(Default)]
struct Renderer {
    st: Statement,
    next: usize,
    /// A CTE the top level reads instead of its relation.
    root_source: Option<String>,
}

impl Renderer {
    fn alias(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}{}", self.next)
    }

    /// `SELECT outputs FROM ... WHERE ... GROUP BY ... ORDER BY ... LIMIT ... OFFSET ...`.
    fn level(&mut self, plan: &ReadPlan<'_>, link: Option<Link<'_, '_>>) {
        let alias = self.alias("t");
        let lateral_aliases: Vec<String> = plan.embeds.iter().map(|_| self.alias("l")).collect();
        self.st.push("SELECT ");
        let mut first = true;
        for output in &plan.outputs {
            self.output(plan, output, &alias, &lateral_aliases, &mut first);
        }
        self.st.push(" FROM ");
        self.relation_and_where(plan, &alias, link, false, &lateral_aliases);
        let grouped: Vec<&ColumnRef<'_>> = if plan.aggregates() {
            plan.outputs
                .iter()
                .filter_map(|o| match o {
                    Output::Column {
                        field,
                        aggregate: None,
                        ..
                    } => Some(field),
                    _ => None,
                })
                .collect()
        } else {
            Vec::new()
        };
        for (i, field) in grouped.iter().enumerate() {
            self.st.push(if i == 0 { " GROUP BY " } else { ", " });
            self.field(field, &alias);
        }
        self.order(&plan.order, &alias);
        if let Some(limit) = plan.limit {
            self.st.push(" LIMIT ").param(limit.to_string());
        }
        if let Some(offset) = plan.offset {
            self.st.push(" OFFSET ").param(offset.to_string());
        }
    }

    fn output(
        &mut self,
        plan: &ReadPlan<'_>,
        output: &Output<'_>,
        alias: &str,
        laterals: &[String],
        first: &mut bool,
    ) {
        let mut comma = |st: &mut Statement| {
            if !std::mem::take(first) {
                st.push(", ");
            }
        };
        match output {
            Output::Column {
                field,
                cast,
                aggregate,
                key,
            } => {
                comma(&mut self.st);
                if let Some((function, _)) = aggregate {
                    self.st.push(aggregate_function(*function)).push("(");
                }
                if cast.is_some() {
                    self.st.push("(");
                }
                self.field(field, alias);
                if let Some(cast) = cast {
                    self.st.push(")::").push(cast.as_str());
                }
                if let Some((_, aggregate_cast)) = aggregate {
                    self.st.push(")");
                    if let Some(cast) = aggregate_cast {
                        self.st.push("::").push(cast.as_str());
                    }
                }
                self.st.push(" AS ").ident(key);
            }
            Output::Count { key, cast } => {
                comma(&mut self.st);
                self.st.push("pg_catalog.count(*)");
                if let Some(cast) = cast {
                    self.st.push("::").push(cast.as_str());
                }
                self.st.push(" AS ").ident(key);
            }
            Output::Embed { index } => {
                let (Some(embed), Some(lateral)) = (plan.embeds.get(*index), laterals.get(*index))
                else {
                    return;
                };
                if embed.spread {
                    for key in output_keys(&embed.plan) {
                        comma(&mut self.st);
                        self.st.column(lateral, &key).push(" AS ").ident(&key);
                    }
                } else {
                    comma(&mut self.st);
                    if embed.relationship.is_to_one() {
                        self.st.column(lateral, "body");
                    } else {
                        self.st
                            .push("COALESCE(")
                            .column(lateral, "body")
                            .push(", '[]')");
                    }
                    self.st.push(" AS ").ident(&embed.key);
                }
            }
        }
    }

    /// `FROM table AS alias` with the embeds' LATERAL joins and the WHERE clause.
    fn relation(
        &mut self,
        plan: &ReadPlan<'_>,
        alias: &str,
        link: Option<Link<'_, '_>>,
        only_inner: bool,
    ) {
        let laterals: Vec<String> = plan.embeds.iter().map(|_| self.alias("l")).collect();
        self.relation_and_where(plan, alias, link, only_inner, &laterals);
    }

    fn relation_and_where(
        &mut self,
        plan: &ReadPlan<'_>,
        alias: &str,
        link: Option<Link<'_, '_>>,
        only_inner: bool,
        laterals: &[String],
    ) {
        let name = &plan.table.name;
        let computed = link.and_then(|l| match &l.embed.relationship.cardinality {
            Cardinality::Computed { function, .. } => Some((function, l)),
            _ => None,
        });
        match (link, self.root_source.take(), computed) {
            (None, Some(source), _) => {
                self.st.push(&source);
            }
            // A computed relationship's rows: its function called on the parent's row (cast as
            // a computed field's argument is, for the same reason); no join condition.
            (_, _, Some((function, link))) => {
                let parent = &link.embed.relationship.table;
                self.st
                    .ident(&function.schema)
                    .push(".")
                    .ident(&function.name)
                    .push("(CAST(")
                    .ident(link.parent_alias)
                    .push(".* AS ")
                    .ident(&parent.schema)
                    .push(".")
                    .ident(&parent.name)
                    .push("))");
            }
            _ => {
                self.st.ident(&name.schema).push(".").ident(&name.name);
            }
        }
        self.st.push(" AS ").ident(alias);
        let mut conditions_started = false;
        let mut and = |st: &mut Statement| {
            st.push(if conditions_started {
                " AND "
            } else {
                " WHERE "
            });
            conditions_started = true;
        };
        // A many-to-many embed joins the junction here; its other half goes in WHERE.
        let junction_alias = match link.map(|l| &l.embed.relationship.cardinality) {
            Some(Cardinality::ManyToMany(junction)) => {
                let j = self.alias("j");
                self.st
                    .push(" JOIN ")
                    .ident(&junction.table.schema)
                    .push(".")
                    .ident(&junction.table.name)
                    .push(" AS ")
                    .ident(&j)
                    .push(" ON ");
                for (i, (foreign, junction_column)) in junction.target.columns.iter().enumerate() {
                    if i > 0 {
                        self.st.push(" AND ");
                    }
                    self.st
                        .column(&j, junction_column)
                        .push(" = ")
                        .column(alias, foreign);
                }
                Some(j)
            }
            _ => None,
        };
        for (embed, lateral) in plan.embeds.iter().zip(laterals) {
            let inner = embed.join == JoinType::Inner;
            if only_inner && !inner {
                continue;
            }
            let link = Link {
                embed,
                parent_alias: alias,
            };
            if embed.spread {
                self.st.push(if inner {
                    " JOIN LATERAL ("
                } else {
                    " LEFT JOIN LATERAL ("
                });
                self.level(&embed.plan, Some(link));
            } else {
                let row = self.alias("r");
                self.st.push(" LEFT JOIN LATERAL (SELECT ");
                if embed.relationship.is_to_one() {
                    self.st.push("pg_catalog.to_json(");
                } else {
                    self.st.push("pg_catalog.json_agg(");
                }
                self.st.ident(&row).push(") AS \"body\" FROM (");
                self.level(&embed.plan, Some(link));
                self.st.push(") AS ").ident(&row);
            }
            self.st.push(") AS ").ident(lateral).push(" ON TRUE");
        }
        if let Some(link) = link {
            match &link.embed.relationship.cardinality {
                Cardinality::ManyToOne(key)
                | Cardinality::OneToMany(key)
                | Cardinality::OneToOne { key, .. } => {
                    for (local, foreign) in &key.columns {
                        and(&mut self.st);
                        self.st
                            .column(alias, foreign)
                            .push(" = ")
                            .column(link.parent_alias, local);
                    }
                }
                Cardinality::Computed { .. } => {}
                Cardinality::ManyToMany(junction) => {
                    let j = junction_alias.as_deref().unwrap_or_default();
                    for (local, junction_column) in &junction.source.columns {
                        and(&mut self.st);
                        self.st
                            .column(j, junction_column)
                            .push(" = ")
                            .column(link.parent_alias, local);
                    }
                }
            }
        }
        for (embed, lateral) in plan.embeds.iter().zip(laterals) {
            if embed.join == JoinType::Inner && !embed.spread {
                and(&mut self.st);
                self.st.column(lateral, "body").push(" IS NOT NULL");
            }
        }
        for condition in &plan.conditions {
            and(&mut self.st);
            self.condition(condition, alias);
        }
    }

    fn order(&mut self, order: &[Order<'_>], alias: &str) {
        for (i, term) in order.iter().enumerate() {
            self.st.push(if i == 0 { " ORDER BY " } else { ", " });
            self.field(&term.field, alias);
            match term.direction {
                Some(Direction::Asc) => {
                    self.st.push(" ASC");
                }
                Some(Direction::Desc) => {
                    self.st.push(" DESC");
                }
                None => {}
            }
            match term.nulls {
                Some(Nulls::First) => {
                    self.st.push(" NULLS FIRST");
                }
                Some(Nulls::Last) => {
                    self.st.push(" NULLS LAST");
                }
                None => {}
            }
        }
    }

    /// `"alias"."column"` (or a computed field's call on the row) with its JSON path, keys and
    /// indexes as parameters.
    fn field(&mut self, field: &ColumnRef<'_>, alias: &str) {
        // Arrows on a column that is not json (an array, a composite type) apply to
        // `to_jsonb(column)`, as PostgREST does; json and jsonb keep their own operators.
        let to_jsonb = !field.json_path.is_empty()
            && !matches!(field.column.base_type_name.as_str(), "json" | "jsonb");
        if to_jsonb {
            self.st.push("pg_catalog.to_jsonb(");
        }
        match field.computed {
            None => {
                self.st.column(alias, &field.column.name);
            }
            Some(computed) => {
                // `f(row)`: the whole row by `alias.*` (a bare `alias` would be a column of that
                // name if the relation had one), cast to the function's row type since a write's
                // returned rows come as anonymous records (a no-op on the relation itself).
                let (function, row_type) = (&computed.function, &computed.row_type);
                self.st
                    .ident(&function.schema)
                    .push(".")
                    .ident(&function.name)
                    .push("(CAST(")
                    .ident(alias)
                    .push(".* AS ")
                    .ident(&row_type.schema)
                    .push(".")
                    .ident(&row_type.name)
                    .push("))");
            }
        }
        if to_jsonb {
            self.st.push(")");
        }
        for step in &field.json_path {
            self.st.push(if step.as_text { "->>" } else { "->" });
            match &step.key {
                JsonKey::Key(key) => {
                    self.st.param(key.clone()).push("::text");
                }
                JsonKey::Index(index) => {
                    self.st.param(index.to_string()).push("::int");
                }
            }
        }
    }

    fn condition(&mut self, condition: &Condition<'_>, alias: &str) {
        match condition {
            Condition::Filter {
                field,
                negated,
                operation,
            } => {
                if *negated {
                    self.st.push("NOT (");
                }
                self.filter(field, operation, alias);
                if *negated {
                    self.st.push(")");
                }
            }
            Condition::Tree {
                negated,
                op,
                children,
            } => {
                self.st.push(if *negated { "NOT (" } else { "(" });
                if children.is_empty() {
                    // An empty AND is true, an empty OR false, as in logic.
                    self.st.push(match op {
                        LogicOperator::And => "TRUE",
                        LogicOperator::Or => "FALSE",
                    });
                }
                for (i, child) in children.iter().enumerate() {
                    if i > 0 {
                        self.st.push(match op {
                            LogicOperator::And => " AND ",
                            LogicOperator::Or => " OR ",
                        });
                    }
                    self.condition(child, alias);
                }
                self.st.push(")");
            }
        }
    }

    fn filter(&mut self, field: &ColumnRef<'_>, operation: &Operation, alias: &str) {
        match operation {
            // Full-text search on a column not of type tsvector (text, jsonb, ...) searches
            // `to_tsvector([language,] column)`, as PostgREST does.
            Operation::Fts { language, .. } if field.column.base_type_name != "tsvector" => {
                self.st.push("pg_catalog.to_tsvector(");
                if let Some(language) = language {
                    self.st.param(language.clone()).push("::regconfig, ");
                }
                self.field(field, alias);
                self.st.push(")");
            }
            _ => self.field(field, alias),
        }
        match operation {
            Operation::Compare {
                op,
                quantifier,
                value,
            } => {
                let value = match op {
                    Operator::Like | Operator::Ilike => value.replace('*', "%"),
                    _ => value.clone(),
                };
                self.st.push(" ").push(operator_sql(*op)).push(" ");
                match quantifier {
                    None => {
                        self.st.param(value);
                    }
                    Some(q) => {
                        self.st
                            .push(match q {
                                Quantifier::Any => "ANY(",
                                Quantifier::All => "ALL(",
                            })
                            .param(value)
                            .push(")");
                    }
                }
            }
            Operation::In(values) => {
                self.st
                    .push(" = ANY(")
                    .param(array_literal(values.iter().map(String::as_str)))
                    .push(")");
            }
            Operation::Is(value) => {
                self.st.push(match value {
                    IsValue::Null => " IS NULL",
                    IsValue::NotNull => " IS NOT NULL",
                    IsValue::True => " IS TRUE",
                    IsValue::False => " IS FALSE",
                    IsValue::Unknown => " IS UNKNOWN",
                });
            }
            Operation::IsDistinct(value) => {
                self.st.push(" IS DISTINCT FROM ").param(value.clone());
            }
            Operation::Fts {
                op,
                language,
                value,
            } => {
                self.st.push(" @@ ").push(match op {
                    FtsOperator::Fts => "pg_catalog.to_tsquery(",
                    FtsOperator::Plain => "pg_catalog.plainto_tsquery(",
                    FtsOperator::Phrase => "pg_catalog.phraseto_tsquery(",
                    FtsOperator::Websearch => "pg_catalog.websearch_to_tsquery(",
                });
                if let Some(language) = language {
                    self.st.param(language.clone()).push("::regconfig, ");
                }
                self.st.param(value.clone()).push(")");
            }
        }
    }
}

fn operator_sql(op: Operator) -> &'static str {
    match op {
        Operator::Eq => "=",
        Operator::Neq => "<>",
        Operator::Gt => ">",
        Operator::Gte => ">=",
        Operator::Lt => "<",
        Operator::Lte => "<=",
        Operator::Like => "LIKE",
        Operator::Ilike => "ILIKE",
        Operator::Match => "~",
        Operator::Imatch => "~*",
        Operator::Contains => "@>",
        Operator::Contained => "<@",
        Operator::Overlap => "&&",
        Operator::StrictlyLeft => "<<",
        Operator::StrictlyRight => ">>",
        Operator::NotExtendsRight => "&<",
        Operator::NotExtendsLeft => "&>",
        Operator::Adjacent => "-|-",
    }
}

fn aggregate_function(function: Aggregate) -> &'static str {
    match function {
        Aggregate::Count => "pg_catalog.count",
        Aggregate::Sum => "pg_catalog.sum",
        Aggregate::Avg => "pg_catalog.avg",
        Aggregate::Min => "pg_catalog.min",
        Aggregate::Max => "pg_catalog.max",
    }
}

/// The keys a level outputs, spread embeds' keys in their place.
pub fn output_keys(plan: &ReadPlan<'_>) -> Vec<String> {
    let mut keys = Vec::new();
    for output in &plan.outputs {
        match output {
            Output::Column { key, .. } | Output::Count { key, .. } => keys.push(key.clone()),
            Output::Embed { index } => {
                if let Some(embed) = plan.embeds.get(*index) {
                    if embed.spread {
                        keys.extend(output_keys(&embed.plan));
                    } else {
                        keys.push(embed.key.clone());
                    }
                }
            }
        }
    }
    keys
}

/// Appends `condition` on the relation aliased `alias` (for writes' WHERE).
pub fn render_condition(st: &mut Statement, condition: &Condition<'_>, alias: &str) {
    let mut r = Renderer {
        st: std::mem::take(st),
        next: 0,
        root_source: None,
    };
    r.condition(condition, alias);
    *st = r.st;
}

/// Appends ` ORDER BY ...` of `order` on the relation aliased `alias`.
pub fn render_order(st: &mut Statement, order: &[Order<'_>], alias: &str) {
    let mut r = Renderer {
        st: std::mem::take(st),
        next: 0,
        root_source: None,
    };
    r.order(order, alias);
    *st = r.st;
}
