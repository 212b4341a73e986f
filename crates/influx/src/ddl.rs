//! Catalog reads and the DDL of first writes: tables and new columns, under advisory locks.

use crate::catalog;
use crate::merge::SERIES_COLUMN;
use crate::plan::{TIME_COLUMN, TablePlan};
use crate::shape::{ColumnType, TableShape};
use sluice_pg::Connection;
use std::fmt::Write;

pub use sluice_pg::sql::{push_ident, qualified};

/// The advisory lock key of a schema (`table` empty) or a table: a stable 64-bit hash (FNV-1a)
/// of the names, so every Sluice process takes the same lock for the same table.
pub fn lock_key(schema: &str, table: &str) -> i64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in b"sluice-influx\0"
        .iter()
        .chain(schema.as_bytes())
        .chain(b"\0")
        .chain(table.as_bytes())
    {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash as i64
}

/// Waits for the transaction-scoped advisory lock `key`: first writers of one table take turns,
/// so the second sees the first's columns instead of failing on a duplicate.
pub async fn lock(conn: &mut Connection, key: i64) -> sluice_pg::Result<()> {
    conn.execute("SELECT pg_catalog.pg_advisory_xact_lock($1)", &[&key])
        .await
        .map(drop)
}

/// A table as the catalog has it now: its columns, and whether the write API owns it.
#[derive(Debug)]
pub struct ExistingTable {
    pub shape: TableShape,
    pub owned: bool,
}

/// The columns of `schema.table` as the catalog has them now, and whether it is the API's (see
/// [`crate::catalog`]); `None` when there is no such relation.
pub async fn read_table(
    conn: &mut Connection,
    schema: &str,
    table: &str,
) -> sluice_pg::Result<Option<ExistingTable>> {
    let rows = conn
        .query(
            "SELECT a.attname::text, a.atttypid::int8, c.relkind::text, \
                    EXISTS (SELECT 1 FROM sluice_influx.measurements m \
                            WHERE m.database = n.nspname AND m.name = c.relname \
                              AND m.relid = c.oid) \
             FROM pg_catalog.pg_class c \
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
             LEFT JOIN pg_catalog.pg_attribute a \
               ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped \
             WHERE n.nspname = $1::text AND c.relname = $2::text",
            &[&schema, &table],
        )
        .await?;
    if rows.is_empty() {
        return Ok(None);
    }
    let mut shape = TableShape::default();
    let mut owned = false;
    let mut partitioned = false;
    for row in rows.iter() {
        owned = row.get(3)?;
        let kind: String = row.get(2)?;
        partitioned = kind == "p";
        let name: Option<String> = row.get(0)?;
        let oid: Option<i64> = row.get(1)?;
        if let (Some(name), Some(oid)) = (name, oid) {
            let oid = u32::try_from(oid).unwrap_or(0);
            shape.columns.insert(name, ColumnType::from_oid(oid));
        }
    }
    if partitioned {
        shape.partitions = Some(crate::retention::read_partitions(conn, schema, table).await?);
    }
    Ok(Some(ExistingTable { shape, owned }))
}

/// The name of the series index of `schema.table`: a hash of both names, so it fits
/// PostgreSQL's 63 bytes whatever the table is called.
pub fn series_index_name(schema: &str, table: &str) -> String {
    format!("sluice_series_{:016x}", lock_key(schema, table) as u64)
}

/// Creates the table (and registers it as the API's), or adds the columns it lacks, in one
/// round trip; returns the table's shape afterwards. `columns` are positions in `plan.columns`:
/// every column the rows to write use for a new table, the missing ones for an existing one.
/// A new table that `merges` gets the series column and its unique index on (time, series):
/// `time` first, as points mostly arrive in time order and land at the index's end.
pub async fn extend_table(
    conn: &mut Connection,
    schema: &str,
    plan: &TablePlan<'_>,
    existing: Option<TableShape>,
    columns: &[usize],
    merges: bool,
    partitioned: bool,
) -> sluice_pg::Result<TableShape> {
    let name = qualified(schema, plan.name);
    let mut sql = String::new();
    let created = existing.is_none();
    let mut shape = existing.unwrap_or_default();
    let planned = columns
        .iter()
        .filter_map(|&i| plan.columns.get(i).map(|c| (&*c.name, c.ty)));
    if created {
        let _ = write!(sql, "CREATE TABLE {name} (");
        push_ident(&mut sql, TIME_COLUMN);
        sql.push_str(" timestamptz NOT NULL");
        shape
            .columns
            .insert(TIME_COLUMN.to_owned(), ColumnType::Timestamp);
        if merges {
            sql.push_str(", ");
            push_ident(&mut sql, SERIES_COLUMN);
            sql.push_str(" uuid NOT NULL");
            shape
                .columns
                .insert(SERIES_COLUMN.to_owned(), ColumnType::Uuid);
        }
        for (column, ty) in planned {
            sql.push_str(", ");
            push_ident(&mut sql, column);
            sql.push(' ');
            sql.push_str(ty.sql());
            shape.columns.insert(column.to_owned(), ty);
        }
        sql.push(')');
        if partitioned {
            sql.push_str(" PARTITION BY RANGE (");
            push_ident(&mut sql, TIME_COLUMN);
            sql.push(')');
            shape.partitions = Some(Default::default());
        }
        sql.push_str("; ");
        if merges {
            sql.push_str("CREATE UNIQUE INDEX ");
            push_ident(&mut sql, &series_index_name(schema, plan.name));
            let _ = write!(sql, " ON {name} (");
            push_ident(&mut sql, TIME_COLUMN);
            sql.push_str(", ");
            push_ident(&mut sql, SERIES_COLUMN);
            sql.push_str("); ");
        }
        sql.push_str(&catalog::register_table_sql(schema, plan.name));
    } else {
        let _ = write!(sql, "ALTER TABLE {name} ");
        let mut first = true;
        let lacks_time = TablePlan::lacks_time(&shape);
        let time = lacks_time.then_some((TIME_COLUMN, ColumnType::Timestamp));
        for (column, ty) in time.into_iter().chain(planned) {
            if !first {
                sql.push_str(", ");
            }
            first = false;
            sql.push_str("ADD COLUMN IF NOT EXISTS ");
            push_ident(&mut sql, column);
            sql.push(' ');
            sql.push_str(ty.sql());
            shape.columns.insert(column.to_owned(), ty);
        }
        if first {
            return Ok(shape);
        }
    }
    conn.batch_execute(&sql).await?;
    Ok(shape)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_quoted() {
        assert_eq!(qualified("my\"db", "cpu load"), "\"my\"\"db\".\"cpu load\"");
    }

    #[test]
    fn lock_keys_differ_by_name() {
        assert_ne!(lock_key("a", "bc"), lock_key("ab", "c"));
        assert_eq!(lock_key("db", "cpu"), lock_key("db", "cpu"));
    }
}
