//! A table's rows as binary COPY, streamed to PostgreSQL in bounded chunks as they are encoded:
//! one COPY naming every column for a table whose points share their keys, one COPY per key
//! set for a sparse table, whichever sends fewer bytes and statements.

use crate::ddl;
use crate::encode;
use crate::merge::{SERIES_COLUMN, series_id};
use crate::plan::{TIME_COLUMN, TablePlan};
use bytes::{BufMut, BytesMut};
use sluice_lineproto::{Batch, FieldValue, Point, Tag};

/// Encoded rows are handed to the connection once this many bytes are waiting, so a request
/// holds about this much COPY data at a time whatever the body's shape.
pub const CHUNK: usize = 256 * 1024;

/// The bytes of NULLs one more COPY statement must save to be worth it: a statement costs two
/// round trips and its own parse and plan, about what PostgreSQL takes to read this much
/// COPY data.
pub const STATEMENT_COST_BYTES: usize = 64 * 1024;

/// One COPY: the columns it names after `time` (positions in `TablePlan::columns`, in COPY
/// order) and the layouts whose rows it carries.
#[derive(Debug, PartialEq, Eq)]
pub struct Group {
    pub columns: Vec<usize>,
    pub layouts: Vec<usize>,
    /// Whether `columns` is the only layout's own positions (each row's values in order).
    pub exact: bool,
}

/// The COPYs for the rows of `table` whose layouts are not `skipped`. A row with fewer keys
/// than its COPY names costs 4 bytes of NULL per absent column; once those bytes outweigh the
/// cost of a statement per key set, each key set gets its own COPY.
pub fn groups(table: &TablePlan<'_>, skipped: &[bool]) -> Vec<Group> {
    let active: Vec<usize> = (0..table.layouts.len())
        .filter(|&l| !skipped.get(l).copied().unwrap_or(false) && table.layouts[l].rows > 0)
        .collect();
    match active.as_slice() {
        [] => return Vec::new(),
        [only] => {
            return vec![Group {
                columns: table.layouts[*only].positions.clone(),
                layouts: active,
                exact: true,
            }];
        }
        _ => {}
    }
    let mut used = vec![false; table.columns.len()];
    for &l in &active {
        for &p in &table.layouts[l].positions {
            if let Some(u) = used.get_mut(p) {
                *u = true;
            }
        }
    }
    let union: Vec<usize> = (0..used.len()).filter(|&p| used[p]).collect();
    let null_bytes: usize = active
        .iter()
        .map(|&l| {
            let layout = &table.layouts[l];
            layout.rows * 4 * (union.len() - layout.positions.len())
        })
        .sum();
    if null_bytes <= STATEMENT_COST_BYTES * (active.len() - 1) {
        return vec![Group {
            columns: union,
            layouts: active,
            exact: false,
        }];
    }
    active
        .into_iter()
        .map(|l| Group {
            columns: table.layouts[l].positions.clone(),
            layouts: vec![l],
            exact: true,
        })
        .collect()
}

/// The column a staging table has besides the target's: each row's place in the body, so a
/// merge knows which of two points of one series and time came last.
pub const ORDINAL_COLUMN: &str = "sluice_n";

/// Which rows of a table to write: those of layouts not `skipped`, at or after `min_time`
/// (the retention's cutoff).
#[derive(Debug, Clone, Copy)]
pub struct Rows<'s> {
    pub skipped: &'s [bool],
    pub min_time: i64,
}

/// The columns a COPY carries besides `time` and the planned ones.
#[derive(Debug, Clone, Copy, Default)]
pub struct Extra {
    /// The series column (after `time`), in tables that merge.
    pub series: bool,
    /// The body ordinal (last), in staging tables.
    pub ordinal: bool,
}

/// `COPY <target> ("time", ["sluice_series",] ..., ["sluice_n"]) FROM STDIN (FORMAT binary)`.
pub fn copy_sql(target: &str, table: &TablePlan<'_>, columns: &[usize], extra: Extra) -> String {
    let mut sql = String::with_capacity(64 + 16 * columns.len());
    sql.push_str("COPY ");
    sql.push_str(target);
    sql.push_str(" (");
    ddl::push_ident(&mut sql, TIME_COLUMN);
    if extra.series {
        sql.push_str(", ");
        ddl::push_ident(&mut sql, SERIES_COLUMN);
    }
    for &position in columns {
        if let Some(column) = table.columns.get(position) {
            sql.push_str(", ");
            ddl::push_ident(&mut sql, &column.name);
        }
    }
    if extra.ordinal {
        sql.push_str(", ");
        ddl::push_ident(&mut sql, ORDINAL_COLUMN);
    }
    sql.push_str(") FROM STDIN (FORMAT binary)");
    sql
}

/// Writes the `rows` of `table` into `target` (a quoted table name) through `conn`, chunk by
/// chunk in `buf`, with the `extra` columns: each row's series id and its point's index in the
/// body (see [`ORDINAL_COLUMN`]). Returns the rows written.
pub async fn copy_table(
    conn: &mut sluice_pg::Connection,
    target: &str,
    table: &TablePlan<'_>,
    batch: &Batch<'_>,
    rows: Rows<'_>,
    extra: Extra,
    buf: &mut BytesMut,
) -> sluice_pg::Result<usize> {
    let groups = groups(table, rows.skipped);
    if groups.is_empty() {
        return Ok(0);
    }
    // The rows of each layout, in body order (a counting sort: no per-group scan of all rows).
    let by_layout = rows_by_layout(table);
    let mut written = 0;
    let mut slots: Vec<Slot<'_, '_>> = Vec::new();
    let mut slot_of: Vec<usize> = Vec::new();
    for group in &groups {
        let sql = copy_sql(target, table, &group.columns, extra);
        let mut copy = conn.copy_in(&sql).await?;
        buf.clear();
        buf.put_slice(encode::COPY_HEADER);
        if !group.exact {
            slot_of.clear();
            slot_of.resize(table.columns.len(), usize::MAX);
            for (slot, &position) in group.columns.iter().enumerate() {
                slot_of[position] = slot;
            }
        }
        let head = Head {
            series: extra.series,
            extra: usize::from(extra.series) + usize::from(extra.ordinal),
        };
        for &layout in &group.layouts {
            let positions = &table.layouts[layout].positions;
            for &index in by_layout.rows(layout) {
                let Some(point) = batch.point(index as usize) else {
                    continue;
                };
                if point.time() < rows.min_time {
                    continue;
                }
                if group.exact {
                    encode_exact(buf, &point, table.jsonb_tags(), head);
                } else {
                    encode_sparse(
                        buf,
                        &point,
                        table.jsonb_tags(),
                        positions,
                        &slot_of,
                        group.columns.len(),
                        head,
                        &mut slots,
                    );
                }
                if extra.ordinal {
                    buf.put_i32(8);
                    buf.put_i64(i64::from(index));
                }
                written += 1;
                if buf.len() >= CHUNK {
                    copy.write(buf).await?;
                    buf.clear();
                }
            }
        }
        buf.put_i16(encode::COPY_TRAILER);
        copy.write(buf).await?;
        buf.clear();
        copy.finish().await?;
    }
    Ok(written)
}

/// Row indexes grouped by layout, each group in body order.
struct RowsByLayout {
    starts: Vec<usize>,
    points: Vec<u32>,
}

impl RowsByLayout {
    fn rows(&self, layout: usize) -> &[u32] {
        let start = self.starts.get(layout).copied().unwrap_or(0);
        let end = self.starts.get(layout + 1).copied().unwrap_or(start);
        self.points.get(start..end).unwrap_or_default()
    }
}

fn rows_by_layout(table: &TablePlan<'_>) -> RowsByLayout {
    let mut starts = Vec::with_capacity(table.layouts.len() + 1);
    let mut total = 0;
    for layout in &table.layouts {
        starts.push(total);
        total += layout.rows;
    }
    starts.push(total);
    let mut next = starts.clone();
    let mut points = vec![0u32; total];
    for &(point, layout) in &table.rows {
        if let Some(at) = next.get_mut(layout as usize) {
            if let Some(slot) = points.get_mut(*at) {
                *slot = point;
            }
            *at += 1;
        }
    }
    RowsByLayout { starts, points }
}

/// How a row starts: its field count counts `extra` columns besides the values, and the series
/// id follows the time when `series`.
#[derive(Clone, Copy)]
struct Head {
    series: bool,
    extra: usize,
}

/// The field count, the time and, for a merging table, the series id.
fn encode_head(buf: &mut BytesMut, point: &Point<'_, '_>, values: usize, head: Head) {
    buf.put_i16((values + 1 + head.extra) as i16);
    encode::timestamp(buf, point.time());
    if head.series {
        buf.put_i32(16);
        buf.put_slice(&series_id(point.tags()));
    }
}

/// A row whose COPY names exactly its layout's columns: its values in the point's order (an
/// ordinal, if any, is written by the caller).
fn encode_exact(buf: &mut BytesMut, point: &Point<'_, '_>, jsonb_tags: bool, head: Head) {
    let tags = point.tags();
    let values = if jsonb_tags { 1 } else { tags.len() } + point.fields().len();
    encode_head(buf, point, values, head);
    if jsonb_tags {
        encode::tags_jsonb(buf, tags);
    } else {
        for tag in tags {
            encode::text(buf, &tag.value);
        }
    }
    for field in point.fields() {
        encode::field(buf, &field.value);
    }
}

/// A value waiting to be written in its column's place.
#[derive(Clone, Copy)]
enum Slot<'s, 'a> {
    Null,
    Tag(&'s str),
    Tags(&'s [Tag<'a>]),
    Field(&'s FieldValue<'a>),
}

/// A row of a COPY naming more columns than the point has: NULL in the others (an ordinal, if
/// any, is written by the caller).
#[allow(clippy::too_many_arguments)]
fn encode_sparse<'s, 'a>(
    buf: &mut BytesMut,
    point: &Point<'a, 's>,
    jsonb_tags: bool,
    positions: &[usize],
    slot_of: &[usize],
    width: usize,
    head: Head,
    slots: &mut Vec<Slot<'s, 'a>>,
) {
    slots.clear();
    slots.resize(width, Slot::Null);
    let mut positions = positions
        .iter()
        .map(|&p| slot_of.get(p).copied().unwrap_or(usize::MAX));
    if jsonb_tags {
        if let Some(slot) = positions.next().and_then(|s| slots.get_mut(s)) {
            *slot = Slot::Tags(point.tags());
        }
    } else {
        for (tag, slot) in point.tags().iter().zip(positions.by_ref()) {
            if let Some(slot) = slots.get_mut(slot) {
                *slot = Slot::Tag(&tag.value);
            }
        }
    }
    for (field, slot) in point.fields().iter().zip(positions) {
        if let Some(slot) = slots.get_mut(slot) {
            *slot = Slot::Field(&field.value);
        }
    }
    encode_head(buf, point, width, head);
    for slot in slots.iter() {
        match slot {
            Slot::Null => encode::null(buf),
            Slot::Tag(value) => encode::text(buf, value),
            Slot::Tags(tags) => encode::tags_jsonb(buf, tags),
            Slot::Field(value) => encode::field(buf, value),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Plan;
    use sluice_lineproto::Options;

    fn groups_of(body: &str) -> Vec<Group> {
        let batch = Batch::parse(body.as_bytes(), &Options::new(0)).unwrap_or_default();
        let plan = Plan::build(batch.points(), false, true)
            .ok()
            .unwrap_or_default();
        let table = &plan.tables[0];
        groups(table, &vec![false; table.layouts.len()])
    }

    #[test]
    fn dense_tables_take_one_copy_sparse_ones_one_per_key_set() {
        // Two key sets, few NULLs: one COPY naming every column.
        let dense = groups_of("m,a=1 v=1 1\nm,a=1,b=2 v=1 2\nm,a=2 v=2 3\n");
        assert_eq!(dense.len(), 1);
        assert_eq!(dense[0].columns.len(), 3);
        assert!(!dense[0].exact);
        // 200 key sets of 200 rows each over 200 tag keys: per key set.
        let mut body = String::new();
        for i in 0..40_000 {
            body.push_str(&format!("m,k{}=x v=1 {i}\n", i % 200));
        }
        let sparse = groups_of(&body);
        assert_eq!(sparse.len(), 200);
        assert!(sparse.iter().all(|g| g.exact && g.columns.len() == 2));
        // One key set: its own columns.
        let one = groups_of("m,a=1 v=1 1\nm,a=2 v=2 2\n");
        assert_eq!(one.len(), 1);
        assert!(one[0].exact);
    }
}
