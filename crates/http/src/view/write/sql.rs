//! SQL text of writes: upserts, updates, inserts and the bulk passes over a staging table,
//! built from a method object's table and the columns that have values.

use sluice_pg::sql::push_ident as push_quoted;
use std::fmt::Write;

/// A column taking part in a statement.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    pub name: &'a str,
    pub key: bool,
}

fn column_list(out: &mut String, columns: &[Target<'_>]) {
    for (i, c) in columns.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        push_quoted(out, c.name);
    }
}

/// ` ON CONFLICT (keys) DO UPDATE SET c = EXCLUDED.c, ...` (or `DO NOTHING` when every column is a
/// key); nothing when there are no keys (a plain insert).
fn on_conflict(out: &mut String, columns: &[Target<'_>], keys: &[&str]) {
    if keys.is_empty() {
        return;
    }
    out.push_str(" ON CONFLICT (");
    for (i, k) in keys.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        push_quoted(out, k);
    }
    out.push(')');
    let mut values = columns.iter().filter(|c| !c.key).peekable();
    if values.peek().is_none() {
        out.push_str(" DO NOTHING");
        return;
    }
    out.push_str(" DO UPDATE SET ");
    for (i, c) in values.enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        push_quoted(out, c.name);
        out.push_str(" = EXCLUDED.");
        push_quoted(out, c.name);
    }
}

/// ` RETURNING "a", "b"`, or ` RETURNING *` for no names.
pub fn returning(out: &mut String, names: &[String]) {
    out.push_str(" RETURNING ");
    if names.is_empty() {
        out.push('*');
        return;
    }
    for (i, n) in names.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        push_quoted(out, n);
    }
}

/// `INSERT INTO table (cols) VALUES ($1, ...)` with the upsert's conflict clause on `keys`.
pub fn upsert(table: &str, columns: &[Target<'_>], keys: &[&str]) -> String {
    let mut sql = format!("INSERT INTO {table} (");
    column_list(&mut sql, columns);
    sql.push_str(") VALUES (");
    for i in 1..=columns.len() {
        if i > 1 {
            sql.push_str(", ");
        }
        let _ = write!(sql, "${i}");
    }
    sql.push(')');
    on_conflict(&mut sql, columns, keys);
    sql
}

/// `UPDATE table SET v = $1, ... WHERE k = $n AND ...`: parameters are the non-key columns in
/// order, then the keys in order.
pub fn update(table: &str, columns: &[Target<'_>]) -> String {
    let mut sql = format!("UPDATE {table} SET ");
    let mut n = 0;
    for c in columns.iter().filter(|c| !c.key) {
        n += 1;
        if n > 1 {
            sql.push_str(", ");
        }
        push_quoted(&mut sql, c.name);
        let _ = write!(sql, " = ${n}");
    }
    where_keys(&mut sql, columns, n);
    sql
}

/// ` WHERE k = $n AND ...` for the key columns, numbering after `before` parameters.
fn where_keys(sql: &mut String, columns: &[Target<'_>], before: usize) {
    let mut n = before;
    for (i, c) in columns.iter().filter(|c| c.key).enumerate() {
        n += 1;
        sql.push_str(if i == 0 { " WHERE " } else { " AND " });
        push_quoted(sql, c.name);
        let _ = write!(sql, " = ${n}");
    }
}

/// `SELECT 1 FROM table WHERE k = $1 AND ...`: whether the row of these keys exists.
pub fn exists(table: &str, columns: &[Target<'_>]) -> String {
    let mut sql = format!("SELECT 1 FROM {table}");
    where_keys(&mut sql, columns, 0);
    sql
}

/// Where each value of a bulk pass comes from: a staging table column or a parameter.
#[derive(Debug, Clone, Copy)]
pub enum Staged<'a> {
    /// `s."name"` of the staging table.
    Column(Target<'a>),
    /// `$n`: a value that is the same for every row (capture, header).
    Param(Target<'a>, usize),
}

impl<'a> Staged<'a> {
    fn target(&self) -> Target<'a> {
        match self {
            Staged::Column(t) | Staged::Param(t, _) => *t,
        }
    }

    fn push_value(&self, sql: &mut String) {
        match self {
            Staged::Column(t) => {
                sql.push_str("s.");
                push_quoted(sql, t.name);
            }
            Staged::Param(_, n) => {
                let _ = write!(sql, "${n}");
            }
        }
    }
}

/// `CREATE TEMP TABLE stage ON COMMIT DROP AS SELECT 0::int8 AS sluice_row, 0::int8 AS
/// sluice_mask, cols FROM table WITH NO DATA`: a staging table typed like the target's columns.
pub fn create_stage(stage: &str, table: &str, columns: &[&str]) -> String {
    let mut sql = format!(
        "CREATE TEMP TABLE {stage} ON COMMIT DROP AS SELECT 0::int8 AS sluice_row, 0::int8 AS \
         sluice_mask"
    );
    for c in columns {
        sql.push_str(", ");
        push_quoted(&mut sql, c);
    }
    let _ = write!(sql, " FROM {table} WITH NO DATA");
    sql
}

/// The upsert pass: the staging rows with presence `mask` into the table. No ORDER BY: keys are
/// unique within a body (a repeat fails the upsert), so the order cannot change the result.
pub fn upsert_from_stage(
    table: &str,
    stage: &str,
    mask: u64,
    values: &[Staged<'_>],
    keys: &[&str],
) -> String {
    let targets: Vec<Target<'_>> = values.iter().map(Staged::target).collect();
    let mut sql = format!("INSERT INTO {table} (");
    column_list(&mut sql, &targets);
    sql.push_str(") SELECT ");
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            sql.push_str(", ");
        }
        v.push_value(&mut sql);
    }
    let _ = write!(sql, " FROM {stage} s WHERE s.sluice_mask = {mask}");
    on_conflict(&mut sql, &targets, keys);
    sql
}

/// One row when two staged rows share their key values.
pub fn repeated_key(stage: &str, keys: &[&str]) -> String {
    let mut sql = String::from("SELECT 1 FROM ");
    sql.push_str(stage);
    sql.push_str(" GROUP BY ");
    for (i, k) in keys.iter().enumerate() {
        if i > 0 {
            sql.push_str(", ");
        }
        push_quoted(&mut sql, k);
    }
    sql.push_str(" HAVING count(*) > 1 LIMIT 1");
    sql
}

/// The update pass (PATCH rows missing an `insert: "required"` column): set the non-key values
/// of the rows whose keys match.
pub fn update_from_stage(table: &str, stage: &str, mask: u64, values: &[Staged<'_>]) -> String {
    let mut sql = format!("UPDATE {table} AS t SET ");
    for (i, v) in values.iter().filter(|v| !v.target().key).enumerate() {
        if i > 0 {
            sql.push_str(", ");
        }
        push_quoted(&mut sql, v.target().name);
        sql.push_str(" = ");
        v.push_value(&mut sql);
    }
    let _ = write!(sql, " FROM {stage} s WHERE s.sluice_mask = {mask}");
    for v in values.iter().filter(|v| v.target().key) {
        sql.push_str(" AND t.");
        push_quoted(&mut sql, v.target().name);
        sql.push_str(" = ");
        v.push_value(&mut sql);
    }
    sql
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILM: Target<'static> = Target {
        name: "film",
        key: true,
    };
    const TAG: Target<'static> = Target {
        name: "tag",
        key: true,
    };
    const NOTE: Target<'static> = Target {
        name: "no\"te",
        key: false,
    };

    #[test]
    fn statements() {
        assert_eq!(
            upsert("film_tags", &[FILM, TAG], &["film", "tag"]),
            r#"INSERT INTO film_tags ("film", "tag") VALUES ($1, $2) ON CONFLICT ("film", "tag") DO NOTHING"#
        );
        assert_eq!(
            upsert("t", &[FILM, NOTE], &["film"]),
            r#"INSERT INTO t ("film", "no""te") VALUES ($1, $2) ON CONFLICT ("film") DO UPDATE SET "no""te" = EXCLUDED."no""te""#
        );
        assert_eq!(
            upsert("t", &[NOTE], &[]),
            r#"INSERT INTO t ("no""te") VALUES ($1)"#
        );
        assert_eq!(
            update("t", &[FILM, NOTE, TAG]),
            r#"UPDATE t SET "no""te" = $1 WHERE "film" = $2 AND "tag" = $3"#
        );
        assert_eq!(
            exists("t", &[FILM, NOTE]),
            r#"SELECT 1 FROM t WHERE "film" = $1"#
        );
        let mut r = String::new();
        returning(&mut r, &[]);
        assert_eq!(r, " RETURNING *");
    }

    #[test]
    fn bulk_statements() {
        assert_eq!(
            create_stage("s0", "film_tags", &["tag"]),
            r#"CREATE TEMP TABLE s0 ON COMMIT DROP AS SELECT 0::int8 AS sluice_row, 0::int8 AS sluice_mask, "tag" FROM film_tags WITH NO DATA"#
        );
        let values = [
            Staged::Param(FILM, 1),
            Staged::Column(TAG),
            Staged::Column(NOTE),
        ];
        assert_eq!(
            upsert_from_stage("t", "s0", 3, &values, &["film", "tag"]),
            r#"INSERT INTO t ("film", "tag", "no""te") SELECT $1, s."tag", s."no""te" FROM s0 s WHERE s.sluice_mask = 3 ON CONFLICT ("film", "tag") DO UPDATE SET "no""te" = EXCLUDED."no""te""#
        );
        assert_eq!(
            update_from_stage("t", "s0", 3, &values),
            r#"UPDATE t AS t SET "no""te" = s."no""te" FROM s0 s WHERE s.sluice_mask = 3 AND t."film" = $1 AND t."tag" = s."tag""#
        );
    }
}
