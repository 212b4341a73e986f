//! The SQL of a nested insert: one statement per parent row, its INSERT a CTE whose returned
//! row the children's INSERTs read their foreign key from; and the read of the inserted parents
//! by their primary keys for a representation (a later statement of the same transaction, so
//! embedded children are visible).

use super::Statement;
use super::read::render_over;
use super::write::{SOURCE, comma_list, payload_source};
use crate::plan::ReadPlan;
use crate::schema::{Column, Table};

const PARENT: &str = "pgrst_parent";

/// The children of one relationship under a parent.
pub struct Children<'s> {
    /// The child table.
    pub table: &'s Table,
    /// `(parent column, child column)` pairs of the foreign key.
    pub key: &'s [(String, String)],
    /// The columns the children's objects set (without the key's).
    pub columns: Vec<&'s Column>,
    /// Their objects as a JSON array.
    pub json: String,
}

/// INSERT of one parent (`json`, one object) with its children; the statement returns the
/// parent's primary key.
pub fn render_parent(
    table: &Table,
    columns: &[&Column],
    json: String,
    children: &[Children<'_>],
    missing_default: bool,
) -> Statement {
    let mut st = Statement::new();
    st.push("WITH ").ident(PARENT).push(" AS (INSERT INTO ");
    qualified(&mut st, table);
    st.push(" AS ").ident("pgrst_target");
    if columns.is_empty() {
        st.push(" DEFAULT VALUES");
    } else {
        st.push(" (");
        comma_list(&mut st, columns, |st, c| {
            st.ident(&c.name);
        });
        st.push(") SELECT ");
        comma_list(&mut st, columns, |st, c| {
            st.column("pgrst_body", &c.name);
        });
        st.push(" FROM ");
        st.params.push(Some(json));
        let param = format!("${}", st.params.len());
        payload_source(&mut st, &param, columns, false, missing_default);
    }
    st.push(" RETURNING ").ident("pgrst_target").push(".*)");
    for (i, child) in children.iter().enumerate() {
        st.push(", ")
            .ident(&format!("pgrst_child_{i}"))
            .push(" AS (INSERT INTO ");
        qualified(&mut st, child.table);
        st.push(" (");
        let mut first = true;
        for (_, child_column) in child.key {
            if !std::mem::take(&mut first) {
                st.push(", ");
            }
            st.ident(child_column);
        }
        for column in &child.columns {
            st.push(", ").ident(&column.name);
        }
        st.push(") SELECT ");
        let mut first = true;
        for (parent_column, _) in child.key {
            if !std::mem::take(&mut first) {
                st.push(", ");
            }
            st.column(PARENT, parent_column);
        }
        for column in &child.columns {
            st.push(", ").column("pgrst_body", &column.name);
        }
        st.push(" FROM ").ident(PARENT).push(", ");
        st.params.push(Some(child.json.clone()));
        let param = format!("${}", st.params.len());
        if child.columns.is_empty() {
            // Children with nothing of their own: one row each, only the key set.
            st.push("pg_catalog.json_array_elements(")
                .push(&param)
                .push("::json) AS ")
                .ident("pgrst_body");
        } else {
            payload_source(&mut st, &param, &child.columns, true, missing_default);
        }
        st.push(" RETURNING 1)");
    }
    st.push(" SELECT ");
    let mut first = true;
    for pk in &table.primary_key {
        if !std::mem::take(&mut first) {
            st.push(", ");
        }
        st.column(PARENT, pk);
    }
    if first {
        st.push("1");
    }
    st.push(" FROM ").ident(PARENT);
    st
}

/// The rows of `table` whose primary keys are in `keys` (a JSON array of arrays of their text),
/// read through `read`.
pub fn render_inserted(table: &Table, keys_json: String, read: &ReadPlan<'_>) -> Statement {
    let mut st = Statement::new();
    st.push("WITH ").ident(SOURCE).push(" AS (SELECT ");
    st.ident("pgrst_target").push(".* FROM ");
    qualified(&mut st, table);
    st.push(" AS ").ident("pgrst_target").push(" WHERE (");
    for (i, pk) in table.primary_key.iter().enumerate() {
        if i > 0 {
            st.push(", ");
        }
        st.column("pgrst_target", pk).push("::text");
    }
    st.push(") IN (SELECT ");
    for i in 0..table.primary_key.len() {
        if i > 0 {
            st.push(", ");
        }
        st.push(&format!("\"pgrst_key\".value ->> {i}"));
    }
    st.push(" FROM pg_catalog.json_array_elements(")
        .param(keys_json)
        .push("::json) AS \"pgrst_key\")) ");
    render_over(st, read, &sluice_pg::sql::quote_ident(SOURCE))
}

fn qualified(st: &mut Statement, table: &Table) {
    st.ident(&table.name.schema)
        .push(".")
        .ident(&table.name.name);
}
