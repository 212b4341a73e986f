//! `duplicates = "merge"`: a table's rows are copied in when they are all new points, or
//! land in a staging table through COPY and one `INSERT ... ON CONFLICT DO UPDATE` on the
//! unique index on (time, series) merges them into the table, as InfluxDB merges a point
//! written again (same measurement, tag set and time):
//! its fields are merged, a new non-null value winning; of two points of one series and time
//! in one body the later wins.
//!
//! The series is the point's tag set, stored as its hash in the `sluice_series` uuid column
//! (the first 16 bytes of the SHA-256 of each tag's key, a NUL, its value and a NUL, tags in
//! key order): a fixed-size key whatever the number of tags (an index takes at most 32
//! columns), unchanged when a measurement gains tag keys, and the same in every process.

use crate::copy::{self, Extra, ORDINAL_COLUMN, Rows};
use crate::ddl::{self, push_ident};
use crate::plan::{Role, TIME_COLUMN, TablePlan};
use bytes::BytesMut;
use foldhash::HashSet;
use sha2::{Digest, Sha256};
use sluice_lineproto::{Batch, Tag};
use std::hash::{BuildHasher, Hasher};

/// The column of a merging table that holds each row's series id.
pub const SERIES_COLUMN: &str = "sluice_series";

/// The series id of a point with `tags` (sorted by key, as the parser gives them).
pub fn series_id(tags: &[Tag<'_>]) -> [u8; 16] {
    let mut hasher = Sha256::new();
    for tag in tags {
        hasher.update(tag.key.as_bytes());
        hasher.update([0]);
        hasher.update(tag.value.as_bytes());
        hasher.update([0]);
    }
    let digest = hasher.finalize();
    let mut id = [0u8; 16];
    id.copy_from_slice(&digest[..16]);
    id
}

/// The planned columns the rows not `skipped` use, in column order.
fn used_columns(table: &TablePlan<'_>, skipped: &[bool]) -> Vec<usize> {
    let mut used = vec![false; table.columns.len()];
    for (layout, skip) in table.layouts.iter().zip(skipped) {
        if !skip && layout.rows > 0 {
            for &p in &layout.positions {
                if let Some(u) = used.get_mut(p) {
                    *u = true;
                }
            }
        }
    }
    (0..used.len()).filter(|&p| used[p]).collect()
}

/// Whether two rows not `skipped` share series and time (by a hash of both: a collision only
/// costs the slower merge, never a wrong one).
fn has_duplicates(table: &TablePlan<'_>, batch: &Batch<'_>, skipped: &[bool]) -> bool {
    let mut seen: HashSet<u64> = HashSet::default();
    seen.reserve(table.rows.len());
    let state = foldhash::fast::FixedState::with_seed(7);
    for &(index, layout) in &table.rows {
        if skipped.get(layout as usize).copied().unwrap_or(true) {
            continue;
        }
        let Some(point) = batch.point(index as usize) else {
            continue;
        };
        let mut hasher = state.build_hasher();
        // Points are stored to the microsecond: points apart by less are one.
        hasher.write_i64(point.time().div_euclid(1000));
        for tag in point.tags() {
            hasher.write(tag.key.as_bytes());
            hasher.write_u8(0xff);
            hasher.write(tag.value.as_bytes());
            hasher.write_u8(0xfe);
        }
        if !seen.insert(hasher.finish()) {
            return true;
        }
    }
    false
}

/// Writes the `rows` of `table` by merging. Most bodies bring only new points: they are
/// copied straight into the table (its unique index checks them), under a savepoint; when a
/// point is already there (a unique violation) or the body repeats one, the rows go through a
/// staging table and one `INSERT ... ON CONFLICT DO UPDATE` instead. Returns the rows written.
pub async fn write_table(
    conn: &mut sluice_pg::Connection,
    schema: &str,
    index: usize,
    table: &TablePlan<'_>,
    batch: &Batch<'_>,
    rows: Rows<'_>,
    chunk: &mut BytesMut,
) -> sluice_pg::Result<usize> {
    let skipped = rows.skipped;
    let used = used_columns(table, skipped);
    if used.is_empty() {
        return Ok(0);
    }
    let target = ddl::qualified(schema, table.name);
    let duplicates = has_duplicates(table, batch, skipped);
    if !duplicates {
        conn.batch_execute("SAVEPOINT sluice_merge").await?;
        let extra = Extra {
            series: true,
            ordinal: false,
        };
        match copy::copy_table(conn, &target, table, batch, rows, extra, chunk).await {
            Ok(written) => {
                conn.batch_execute("RELEASE SAVEPOINT sluice_merge").await?;
                return Ok(written);
            }
            Err(error) if error.is_code(sluice_pg::sqlstate::UNIQUE_VIOLATION) => {
                conn.batch_execute("ROLLBACK TO SAVEPOINT sluice_merge")
                    .await?;
            }
            Err(error) => return Err(error),
        }
    }
    let mut stage = String::new();
    push_ident(&mut stage, &format!("sluice_stage_{index}"));
    conn.batch_execute(&format!(
        "CREATE TEMP TABLE {stage} (LIKE {target}, {ORDINAL_COLUMN} int8) ON COMMIT DROP"
    ))
    .await?;
    let extra = Extra {
        series: true,
        ordinal: true,
    };
    let written = copy::copy_table(conn, &stage, table, batch, rows, extra, chunk).await?;
    if written == 0 {
        return Ok(0);
    }
    let sql = merge_sql(&target, &stage, table, &used, duplicates);
    conn.batch_execute(&sql).await?;
    Ok(written)
}

/// The INSERT that merges the staging table into the target. Tag columns (and the jsonb tags
/// column) follow from the series, so they are written as they are; fields are merged.
fn merge_sql(
    target: &str,
    stage: &str,
    table: &TablePlan<'_>,
    used: &[usize],
    duplicates: bool,
) -> String {
    let mut keys: Vec<&str> = vec![TIME_COLUMN, SERIES_COLUMN];
    let mut fields: Vec<&str> = Vec::new();
    for column in used.iter().filter_map(|&p| table.columns.get(p)) {
        if column.role == Role::Field {
            fields.push(&column.name);
        } else {
            keys.push(&column.name);
        }
    }
    let mut sql = format!("INSERT INTO {target} AS t (");
    for (i, name) in keys.iter().chain(&fields).enumerate() {
        if i > 0 {
            sql.push_str(", ");
        }
        push_ident(&mut sql, name);
    }
    sql.push_str(") SELECT ");
    for (i, name) in keys.iter().enumerate() {
        if i > 0 {
            sql.push_str(", ");
        }
        push_ident(&mut sql, name);
    }
    for name in &fields {
        sql.push_str(", ");
        if duplicates {
            // The last non-null value of the body's points of one series and time.
            sql.push_str("(array_agg(");
            push_ident(&mut sql, name);
            sql.push_str(" ORDER BY ");
            push_ident(&mut sql, ORDINAL_COLUMN);
            sql.push_str(" DESC) FILTER (WHERE ");
            push_ident(&mut sql, name);
            sql.push_str(" IS NOT NULL))[1]");
        } else {
            push_ident(&mut sql, name);
        }
    }
    sql.push_str(" FROM ");
    sql.push_str(stage);
    if duplicates {
        sql.push_str(" GROUP BY ");
        for (i, name) in keys.iter().enumerate() {
            if i > 0 {
                sql.push_str(", ");
            }
            push_ident(&mut sql, name);
        }
    }
    sql.push_str(" ON CONFLICT (");
    push_ident(&mut sql, TIME_COLUMN);
    sql.push_str(", ");
    push_ident(&mut sql, SERIES_COLUMN);
    sql.push(')');
    if fields.is_empty() {
        sql.push_str(" DO NOTHING");
        return sql;
    }
    sql.push_str(" DO UPDATE SET ");
    for (i, name) in fields.iter().enumerate() {
        if i > 0 {
            sql.push_str(", ");
        }
        push_ident(&mut sql, name);
        sql.push_str(" = COALESCE(EXCLUDED.");
        push_ident(&mut sql, name);
        sql.push_str(", t.");
        push_ident(&mut sql, name);
        sql.push(')');
    }
    sql
}
