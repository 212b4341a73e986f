//! Writes of large row bodies: rows checked and encoded in chunks into a COPY to a staging table
//! typed like the target, then one upsert (or update) pass per shape of row, and for PUT the
//! set-replace deletes. The rows come from a [`RowSource`]: streamed from the request as it
//! arrives (memory: one chunk, one frame, the longest row) or read back from a spooled body.

use super::rows::duplicate_in_statement;
use super::setreplace::Existing;
use super::sql::{self, Staged, Target};
use super::stream::RowSource;
use super::values::{Cell, RequestValues, RowPlace, row_cells};
use super::{Counts, Verb};
use crate::view::error::ApiError;
use crate::view::model::{MethodObject, Source};
use sluice_formats::encode::write_copy_text;
use sluice_pg::{Connection, ToSql};
use std::collections::BTreeSet;

/// COPY data is sent in pieces of about this size.
const CHUNK: usize = 256 * 1024;

/// The most columns a method object may have for this path (one presence bit each).
pub const MAX_COLUMNS: usize = 62;

/// Whether `method` can be written through COPY.
pub fn supports(method: &MethodObject) -> bool {
    method.columns.len() <= MAX_COLUMNS
}

/// Writes the rows of `rows` through one method object with COPY and set-based passes.
pub async fn write(
    conn: &mut Connection,
    method: &MethodObject,
    stage_number: usize,
    verb: Verb,
    rows: &mut RowSource,
    request: &RequestValues<'_>,
) -> Result<Counts, ApiError> {
    let pg = |e: sluice_pg::Error| ApiError::from_pg(&e);
    let mut existing = match (verb, &method.existing, &method.delete) {
        (Verb::Put, Some(existing), Some(_)) => {
            let params: Vec<&(dyn ToSql + '_)> = request
                .captures
                .iter()
                .map(|c| c as &(dyn ToSql + '_))
                .collect();
            let rows = conn.query(existing, &params).await.map_err(pg)?;
            Some(Existing::new(method, &rows)?)
        }
        _ => None,
    };
    // Values the same for every row (captures, headers) are parameters of the passes, the rest
    // is staged.
    let staged: Vec<bool> = method
        .columns
        .iter()
        .map(|c| matches!(c.source, Source::Field(_) | Source::Body(_)))
        .collect();
    let stage = format!("sluice_write_{stage_number}");
    let stage_columns: Vec<&str> = method
        .columns
        .iter()
        .zip(&staged)
        .filter(|(_, s)| **s)
        .map(|(c, _)| c.name.as_str())
        .collect();
    conn.batch_execute(&sql::create_stage(&stage, &method.table, &stage_columns))
        .await
        .map_err(pg)?;
    let mut copy = conn
        .copy_in(&format!("COPY {stage} FROM STDIN"))
        .await
        .map_err(pg)?;
    let mut masks = BTreeSet::new();
    let mut constants: Option<Vec<Cell<'static>>> = None;
    let mut buffer: Vec<u8> = Vec::with_capacity(CHUNK + 4096);
    let mut records = 0usize;
    let encoded: Result<(), ApiError> = async {
        while let Some(row) = rows.next_row().await? {
            let place = RowPlace {
                index: Some(records),
                line: row.line,
            };
            let cells = row_cells(method, &row.fields, request, place)?;
            if constants.is_none() {
                constants = Some(
                    cells
                        .cells
                        .iter()
                        .zip(&staged)
                        .map(|(c, s)| {
                            if *s {
                                Cell::Absent
                            } else {
                                super::values::owned(c.clone())
                            }
                        })
                        .collect(),
                );
            }
            if let Some(existing) = existing.as_mut() {
                existing.see(&cells.cells);
            }
            let mut mask = 0u64;
            for (i, cell) in cells.cells.iter().enumerate() {
                if !cell.is_absent() {
                    mask |= 1 << i;
                }
            }
            masks.insert(mask);
            push_number(&mut buffer, records as u64);
            buffer.push(b'\t');
            push_number(&mut buffer, mask);
            for (cell, _) in cells.cells.iter().zip(&staged).filter(|(_, s)| **s) {
                buffer.push(b'\t');
                match cell {
                    Cell::Text(text) => write_copy_text(&mut buffer, text.as_bytes()),
                    Cell::Absent | Cell::Null => buffer.extend_from_slice(b"\\N"),
                }
            }
            buffer.push(b'\n');
            records += 1;
            if buffer.len() >= CHUNK {
                copy.write(&buffer).await.map_err(pg)?;
                buffer.clear();
            }
        }
        copy.write(&buffer).await.map_err(pg)?;
        Ok(())
    }
    .await;
    if let Err(error) = encoded {
        // A server error already ended the COPY; aborting again is harmless.
        let _ = copy.abort("the request body was refused").await;
        return Err(error);
    }
    copy.finish().await.map_err(pg)?;
    let constants = constants.unwrap_or_default();
    let keys: Vec<&str> = match verb {
        Verb::Post => Vec::new(),
        _ => method
            .columns
            .iter()
            .filter(|c| c.key)
            .map(|c| c.name.as_str())
            .collect(),
    };
    // Rows of different shapes go in different passes, so PostgreSQL cannot see a key repeated
    // across them: look for one here (as the pipelined path does for every body).
    let staged_keys: Vec<&str> = method
        .columns
        .iter()
        .zip(&staged)
        .filter(|(c, s)| c.key && **s)
        .map(|(c, _)| c.name.as_str())
        .collect();
    let has_values = method.columns.iter().any(|c| !c.key);
    if masks.len() > 1 && has_values && !keys.is_empty() && !staged_keys.is_empty() {
        let repeated = conn
            .query(&sql::repeated_key(&stage, &staged_keys), &[])
            .await
            .map_err(pg)?;
        if !repeated.is_empty() {
            return Err(super::rows::duplicate_key(None));
        }
    }
    for &mask in &masks {
        let mut values = Vec::new();
        let mut params: Vec<Option<&str>> = Vec::new();
        for (i, column) in method.columns.iter().enumerate() {
            if mask & (1 << i) == 0 {
                continue;
            }
            let target = Target {
                name: &column.name,
                key: column.key,
            };
            if staged.get(i).copied().unwrap_or(false) {
                values.push(Staged::Column(target));
            } else {
                params.push(constants.get(i).and_then(Cell::as_param));
                values.push(Staged::Param(target, params.len()));
            }
        }
        let update = verb == Verb::Patch
            && method
                .columns
                .iter()
                .enumerate()
                .any(|(i, c)| c.insert_required && mask & (1 << i) == 0);
        let statement = if update {
            if !values
                .iter()
                .any(|v| matches!(v, Staged::Column(t) | Staged::Param(t, _) if !t.key))
            {
                continue;
            }
            sql::update_from_stage(&method.table, &stage, mask, &values)
        } else {
            sql::upsert_from_stage(&method.table, &stage, mask, &values, &keys)
        };
        let params: Vec<&(dyn ToSql + '_)> =
            params.iter().map(|p| p as &(dyn ToSql + '_)).collect();
        conn.query(&statement, &params)
            .await
            .map_err(|e| duplicate_in_statement(ApiError::from_pg(&e)))?;
    }
    let mut counts = Counts {
        records,
        ..Counts::default()
    };
    if let (Some(existing), Some(delete)) = (existing, &method.delete) {
        counts.selected = existing.selected();
        counts.deleted = existing
            .delete_unseen(conn, delete, request.captures)
            .await?;
    }
    // The staging table goes with the transaction; drop it now so a second method object or a
    // long transaction does not keep it.
    conn.batch_execute(&format!("DROP TABLE {stage}"))
        .await
        .map_err(pg)?;
    Ok(counts)
}

fn push_number(out: &mut Vec<u8>, n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut n = n;
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(digits.get(i..).unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_text() {
        let mut out = Vec::new();
        write_copy_text(&mut out, b"a\tb\\c\nd\re");
        assert_eq!(out, b"a\\tb\\\\c\\nd\\re");
        out.clear();
        push_number(&mut out, 0);
        push_number(&mut out, 18_446_744_073_709_551_615);
        assert_eq!(out, b"018446744073709551615");
    }
}
