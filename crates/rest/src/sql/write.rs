//! The SQL of writes: the payload as one JSON parameter read by `json_to_recordset` with the
//! columns' types from the schema cache, then INSERT (with ON CONFLICT), UPDATE or DELETE, and
//! for a representation the written rows read back like a table through a CTE.

use super::Statement;
use super::read::render_over;
use crate::plan::write::{Mutation, OnConflict, WritePlan};
use crate::plan::{Condition, ReadPlan};
use crate::request::PreferResolution;
use crate::schema::Column;
use sluice_pg::sql::quote_literal;

/// The name of the CTE holding the written rows.
pub const SOURCE: &str = "pgrst_source";

/// The transaction-local setting that counts the rows a merging upsert inserts: one up for each
/// row offered, one down for each row the conflict updates instead (PostgREST's way of telling
/// 201 from 200 within the write's own statement).
const INSERTED: &str = "sluice.inserted";

/// Reads the count of inserted rows, then clears it: a batch runs several upserts in one
/// transaction. The subquery (kept apart by `OFFSET 0`) reads before the outer filter clears.
pub const READ_INSERTED: &str = "SELECT \"pgrst_counted\".n FROM (SELECT nullif(\
    pg_catalog.current_setting('sluice.inserted', true), '')::int8 AS n OFFSET 0) AS \
    \"pgrst_counted\" WHERE pg_catalog.set_config('sluice.inserted', '', true) IS NOT NULL";

/// Whether the write counts its inserted rows (into [`READ_INSERTED`]): an upsert that merges,
/// whose status says whether it inserted.
pub fn counts_inserted(plan: &WritePlan<'_>) -> bool {
    matches!(
        &plan.mutation,
        Mutation::Insert {
            on_conflict: Some(OnConflict {
                resolution: PreferResolution::MergeDuplicates,
                ..
            }),
            ..
        }
    )
}

/// `set_config` moving the inserted count by `step`; never NULL, so usable as a condition.
fn count_inserted(st: &mut Statement, step: &str) {
    st.push("pg_catalog.set_config('")
        .push(INSERTED)
        .push("', (coalesce(nullif(pg_catalog.current_setting('")
        .push(INSERTED)
        .push("', true), '')::int8, 0) ")
        .push(step)
        .push(")::text, true) IS NOT NULL");
}

/// What the statement returns.
#[derive(Debug, Clone, Copy)]
pub enum Returning<'p, 's> {
    /// Only the number of rows (the command tag).
    Nothing,
    /// These columns of each written row (the primary key, for `Location`).
    Columns(&'p [String]),
    /// The written rows read through `plan` (select, embeds) for `return=representation`.
    Read(&'p ReadPlan<'s>),
    /// The same read, folded by a media type handler's aggregate into one row: the answer and
    /// the number of rows written.
    Aggregated(&'p ReadPlan<'s>, super::media::Aggregate<'p>),
}

/// Where a write's rows come from.
#[derive(Debug, Clone)]
pub enum Payload {
    /// The request body (JSON), as the first parameter.
    Json(String),
    /// A temporary table the body was copied into.
    Staged(String),
    /// No body (DELETE).
    None,
}

/// The write's statement.
pub fn render(plan: &WritePlan<'_>, payload: Payload, returning: Returning<'_, '_>) -> Statement {
    let mut st = Statement::new();
    let represent = matches!(returning, Returning::Read(_) | Returning::Aggregated(..));
    if represent {
        st.push("WITH ").ident(SOURCE).push(" AS (");
    }
    let staged = match &payload {
        Payload::Staged(table) => Some(table.clone()),
        _ => None,
    };
    let payload_param = match payload {
        Payload::Json(body) => {
            st.params.push(Some(body));
            Some(format!("${}", st.params.len()))
        }
        _ => None,
    };
    let table = &plan.table.name;
    let target = "pgrst_target";
    match &plan.mutation {
        Mutation::Insert {
            columns,
            on_conflict,
            missing_default,
        } => {
            st.push("INSERT INTO ")
                .ident(&table.schema)
                .push(".")
                .ident(&table.name)
                .push(" AS ")
                .ident(target);
            // Without columns (`{}`, `[{}, {}]`, `[]`) every column takes its default.
            if !columns.is_empty() {
                st.push(" (");
                comma_list(&mut st, columns, |st, c| {
                    st.ident(&c.name);
                });
                st.push(")");
            }
            st.push(" SELECT ");
            comma_list(&mut st, columns, |st, c| {
                st.column("pgrst_body", &c.name);
            });
            st.push(" FROM ");
            match &staged {
                Some(table) => {
                    st.ident(table).push(" AS ").ident("pgrst_body");
                }
                None => payload_source(
                    &mut st,
                    payload_param.as_deref().unwrap_or("NULL"),
                    columns,
                    plan.payload_is_array,
                    *missing_default,
                ),
            }
            let counts = counts_inserted(plan);
            if counts {
                st.push(" WHERE ");
                count_inserted(&mut st, "+ 1");
            }
            if let Some(on_conflict) = on_conflict {
                conflict(&mut st, on_conflict, columns, counts);
            }
        }
        Mutation::Update {
            columns,
            conditions,
            order,
            limit,
            keyed_by,
            missing_default,
        } => {
            st.push("UPDATE ")
                .ident(&table.schema)
                .push(".")
                .ident(&table.name)
                .push(" AS ")
                .ident(target)
                .push(" SET ");
            comma_list(&mut st, columns, |st, c| {
                st.ident(&c.name).push(" = ").column("pgrst_body", &c.name);
            });
            st.push(" FROM ");
            let mut body_columns: Vec<&Column> = columns.clone();
            if let Some(keys) = keyed_by {
                for key in keys {
                    if !body_columns.iter().any(|c| c.name == key.name) {
                        body_columns.push(key);
                    }
                }
            }
            payload_source(
                &mut st,
                payload_param.as_deref().unwrap_or("NULL"),
                &body_columns,
                plan.payload_is_array,
                *missing_default,
            );
            let mut first = true;
            if let Some(keys) = keyed_by {
                for key in keys {
                    st.push(if std::mem::take(&mut first) {
                        " WHERE "
                    } else {
                        " AND "
                    })
                    .column(target, &key.name)
                    .push(" = ")
                    .column("pgrst_body", &key.name);
                }
            }
            filtered(&mut st, plan, target, conditions, order, *limit, first);
        }
        Mutation::Delete {
            conditions,
            order,
            limit,
        } => {
            st.push("DELETE FROM ")
                .ident(&table.schema)
                .push(".")
                .ident(&table.name)
                .push(" AS ")
                .ident(target);
            filtered(&mut st, plan, target, conditions, order, *limit, true);
        }
    }
    match returning {
        Returning::Nothing => {}
        Returning::Columns(columns) => {
            st.push(" RETURNING ");
            for (i, name) in columns.iter().enumerate() {
                if i > 0 {
                    st.push(", ");
                }
                st.column(target, name);
            }
        }
        Returning::Read(read) => {
            st.push(" RETURNING ").ident(target).push(".*) ");
            st = render_over(st, read, &sluice_pg::sql::quote_ident(SOURCE));
        }
        Returning::Aggregated(read, aggregate) => {
            // The aggregate folds the CTE's rows in the outer SELECT: a data-modifying CTE
            // cannot sit in a subquery.
            st.push(" RETURNING ").ident(target).push(".*) ");
            super::media::open(&mut st.sql, aggregate);
            st = render_over(st, read, &sluice_pg::sql::quote_ident(SOURCE));
            super::media::close(&mut st.sql);
        }
    }
    st
}

pub(crate) fn comma_list<'c>(
    st: &mut Statement,
    columns: &[&'c Column],
    mut each: impl FnMut(&mut Statement, &'c Column),
) {
    for (i, column) in columns.iter().enumerate() {
        if i > 0 {
            st.push(", ");
        }
        each(st, column);
    }
}

/// The payload as rows named `pgrst_body` with the columns' types: `json_to_recordset` of an
/// array (or `json_to_record` of one object); with `missing_default`, each object first gets the
/// columns' defaults for the keys it lacks (evaluated per row, so sequences advance).
pub(crate) fn payload_source(
    st: &mut Statement,
    param: &str,
    columns: &[&Column],
    is_array: bool,
    missing_default: bool,
) {
    if columns.is_empty() {
        // Objects without keys: one row each and no columns (PostgREST's `(values(1))` for an
        // object, json_array_elements for an array); a record type needs a column.
        st.push("pg_catalog.json_array_elements(");
        if is_array {
            st.push(param).push("::json");
        } else {
            st.push("pg_catalog.json_build_array(")
                .push(param)
                .push("::json)");
        }
        st.push(") AS ").ident("pgrst_body");
        return;
    }
    let typed = |st: &mut Statement| {
        st.push(" AS ").ident("pgrst_body").push("(");
        comma_list(st, columns, |st, c| {
            st.ident(&c.name).push(" ").push(&c.type_name);
        });
        st.push(")");
    };
    if missing_default {
        st.push("pg_catalog.jsonb_array_elements(");
        if is_array {
            st.push(param).push("::jsonb");
        } else {
            st.push("pg_catalog.jsonb_build_array(")
                .push(param)
                .push("::jsonb)");
        }
        st.push(") AS \"pgrst_element\"(value), LATERAL pg_catalog.jsonb_to_record(");
        st.push("pg_catalog.jsonb_build_object(");
        let mut first = true;
        for column in columns {
            let Some(default) = &column.default else {
                continue;
            };
            if !std::mem::take(&mut first) {
                st.push(", ");
            }
            // Names and default expressions come from the catalog, not from the request.
            st.push(&quote_literal(&column.name))
                .push(", ")
                .push("(")
                .push(default)
                .push(")");
        }
        st.push(") || \"pgrst_element\".value)");
        typed(st);
        return;
    }
    if is_array {
        st.push("pg_catalog.json_to_recordset(")
            .push(param)
            .push("::json)");
    } else {
        st.push("pg_catalog.json_to_record(")
            .push(param)
            .push("::json)");
    }
    typed(st);
}

fn conflict(st: &mut Statement, on_conflict: &OnConflict<'_>, columns: &[&Column], counts: bool) {
    st.push(" ON CONFLICT (");
    comma_list(st, &on_conflict.columns, |st, c| {
        st.ident(&c.name);
    });
    st.push(")");
    let updated: Vec<&Column> = columns
        .iter()
        .copied()
        .filter(|c| !on_conflict.columns.iter().any(|k| k.name == c.name))
        .collect();
    // Merging rows whose every written column is in the conflict target still updates them
    // (with their own values), so that they are returned, as PostgREST does.
    let updated = if updated.is_empty() {
        columns.to_vec()
    } else {
        updated
    };
    match on_conflict.resolution {
        PreferResolution::MergeDuplicates if !updated.is_empty() => {
            st.push(" DO UPDATE SET ");
            comma_list(st, &updated, |st, c| {
                st.ident(&c.name).push(" = EXCLUDED.").ident(&c.name);
            });
            if counts {
                st.push(" WHERE ");
                count_inserted(st, "- 1");
            }
        }
        _ => {
            st.push(" DO NOTHING");
        }
    }
}

/// ` WHERE conditions`, and for a limited write (`order` with `limit`) the rows chosen by ctid.
fn filtered(
    st: &mut Statement,
    plan: &WritePlan<'_>,
    target: &str,
    conditions: &[Condition<'_>],
    order: &[crate::plan::Order<'_>],
    limit: Option<u64>,
    mut first: bool,
) {
    let mut and = |st: &mut Statement| {
        st.push(if std::mem::take(&mut first) {
            " WHERE "
        } else {
            " AND "
        });
    };
    match limit {
        None => {
            for condition in conditions {
                and(st);
                super::read::render_condition(st, condition, target);
            }
        }
        Some(limit) => {
            // PostgREST's limited update/delete: the rows are chosen first, by ctid.
            let name = &plan.table.name;
            and(st);
            st.column(target, "ctid")
                .push(" = ANY(ARRAY(SELECT ")
                .column("pgrst_limited", "ctid")
                .push(" FROM ")
                .ident(&name.schema)
                .push(".")
                .ident(&name.name)
                .push(" AS ")
                .ident("pgrst_limited");
            let mut inner_first = true;
            for condition in conditions {
                st.push(if std::mem::take(&mut inner_first) {
                    " WHERE "
                } else {
                    " AND "
                });
                super::read::render_condition(st, condition, "pgrst_limited");
            }
            super::read::render_order(st, order, "pgrst_limited");
            st.push(" LIMIT ").param(limit.to_string()).push("))");
        }
    }
}
