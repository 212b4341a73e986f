//! The SQL of a media type handler's answer: its aggregate over the rows read or written, and a count.

use super::Statement;
use crate::schema::QualifiedName;
use sluice_pg::sql::{push_ident, push_qualified};

/// The alias of the read's rows.
const ROWS: &str = "pgrst_media";

/// What the aggregate takes of each row.
#[derive(Debug, Clone, Copy)]
pub enum Argument<'a> {
    /// The row as it is (an `anyelement` aggregate).
    Row,
    /// The row as this relation's row type (the relation's own aggregate, the default select).
    RowOf(&'a QualifiedName),
    /// This column (a function's scalar value).
    Column(&'a str),
}

/// A handler's aggregate and what it takes of each row.
#[derive(Debug, Clone, Copy)]
pub struct Aggregate<'a> {
    /// The aggregate function.
    pub function: &'a QualifiedName,
    /// What it takes of each row.
    pub argument: Argument<'a>,
}

/// `SELECT aggregate(argument), count(*) FROM (read) rows`: one row whose first column is the
/// answer and second the number of rows read; the read's parameters are kept.
pub fn render(read: Statement, aggregate: &QualifiedName, argument: Argument<'_>) -> Statement {
    let aggregate = Aggregate {
        function: aggregate,
        argument,
    };
    let mut sql = String::with_capacity(read.sql.len() + 128);
    open(&mut sql, aggregate);
    sql.push_str(&read.sql);
    close(&mut sql);
    Statement {
        sql,
        params: read.params,
    }
}

/// The text before the read [`render`] wraps: `SELECT aggregate(argument), count(*) FROM (`.
/// A write's representation puts it after its `WITH` (a data-modifying CTE must stay at the
/// top level), then the read of the CTE's rows, then [`close`].
pub fn open(sql: &mut String, aggregate: Aggregate<'_>) {
    sql.push_str("SELECT ");
    push_qualified(sql, &aggregate.function.schema, &aggregate.function.name);
    sql.push('(');
    push_ident(sql, ROWS);
    match aggregate.argument {
        Argument::Row => {}
        Argument::RowOf(relation) => {
            sql.push_str("::");
            push_qualified(sql, &relation.schema, &relation.name);
        }
        Argument::Column(column) => {
            sql.push('.');
            push_ident(sql, column);
        }
    }
    sql.push_str("), pg_catalog.count(*) FROM (");
}

/// The text after the read [`open`] began: the alias of its rows.
pub fn close(sql: &mut String) {
    sql.push_str(") ");
    push_ident(sql, ROWS);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_aggregate_wraps_the_read() {
        let mut read = Statement::new();
        read.push("SELECT * FROM t WHERE a = ").param("1");
        let agg = QualifiedName::new("api", "twkb agg");
        let lines = QualifiedName::new("api", "lines");
        let st = render(read.clone(), &agg, Argument::RowOf(&lines));
        assert_eq!(
            st.sql,
            "SELECT \"api\".\"twkb agg\"(\"pgrst_media\"::\"api\".\"lines\"), pg_catalog.count(*) \
             FROM (SELECT * FROM t WHERE a = $1) \"pgrst_media\""
        );
        assert_eq!(st.params, read.params);
        let st = render(read.clone(), &agg, Argument::Row);
        assert!(
            st.sql
                .starts_with("SELECT \"api\".\"twkb agg\"(\"pgrst_media\"), ")
        );
        let st = render(read, &agg, Argument::Column("f"));
        assert!(
            st.sql
                .starts_with("SELECT \"api\".\"twkb agg\"(\"pgrst_media\".\"f\"), ")
        );
    }
}
