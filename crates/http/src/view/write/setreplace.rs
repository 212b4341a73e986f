//! PUT set-replace bookkeeping: the key tuples `existing` returns, which of them the body has,
//! and the pipelined `delete` of the others.

use super::values::Cell;
use crate::view::error::ApiError;
use crate::view::model::MethodObject;
use http::StatusCode;
use sluice_pg::{Connection, Rows, SyncMode, ToSql};
use std::collections::HashMap;

/// Deletes per pipeline round trip.
const DELETE_BATCH: usize = 1000;

/// A key tuple as text (`None` for NULL).
pub type Tuple = Vec<Option<String>>;

/// The tuples `existing` returned and whether the body had each.
pub struct Existing {
    /// For each column of `existing`, the method object column of the same name.
    columns: Vec<usize>,
    tuples: Vec<(Tuple, bool)>,
    index: HashMap<Tuple, usize>,
    /// Reused to look tuples up.
    probe: Tuple,
}

impl Existing {
    /// Keeps the rows of `existing`; its columns must be columns of `method` (by name), which is
    /// how body rows are matched to them.
    pub fn new(method: &MethodObject, rows: &Rows) -> Result<Existing, ApiError> {
        let columns = rows
            .columns()
            .iter()
            .map(|c| {
                method
                    .columns
                    .iter()
                    .position(|m| m.name == c.name())
                    .ok_or_else(|| {
                        ApiError::new(
                            StatusCode::INTERNAL_SERVER_ERROR,
                            "bad_view",
                            format!(
                                "the PUT's \"existing\" returns a column {:?} that is not one of its \
                                 \"columns\"; existing rows are matched to body rows by column name",
                                c.name()
                            ),
                        )
                    })
            })
            .collect::<Result<Vec<usize>, ApiError>>()?;
        let mut tuples = Vec::with_capacity(rows.len());
        let mut index = HashMap::with_capacity(rows.len());
        for row in rows.iter() {
            let tuple: Tuple = row
                .raw_fields()
                .map(|f| f.map(|b| String::from_utf8_lossy(b).into_owned()))
                .collect();
            index.entry(tuple.clone()).or_insert(tuples.len());
            tuples.push((tuple, false));
        }
        Ok(Existing {
            columns,
            tuples,
            index,
            probe: Vec::new(),
        })
    }

    /// The number of tuples `existing` returned.
    pub fn selected(&self) -> usize {
        self.tuples.len()
    }

    /// Marks the tuple of a body row (its cells in method column order) as seen.
    pub fn see(&mut self, cells: &[Cell<'_>]) {
        self.probe.clear();
        for &c in &self.columns {
            let text = cells.get(c).and_then(Cell::as_param);
            self.probe.push(text.map(str::to_owned));
        }
        if let Some(&i) = self.index.get(&self.probe)
            && let Some(entry) = self.tuples.get_mut(i)
        {
            entry.1 = true;
        }
    }

    /// Runs `delete` (captures, then the tuple) for every tuple the body did not have, pipelined;
    /// returns how many.
    pub async fn delete_unseen(
        &self,
        conn: &mut Connection,
        delete: &str,
        captures: &[String],
    ) -> Result<usize, ApiError> {
        let unseen: Vec<&Tuple> = self
            .tuples
            .iter()
            .filter(|(_, seen)| !seen)
            .map(|(t, _)| t)
            .collect();
        for batch in unseen.chunks(DELETE_BATCH) {
            let mut pipeline = conn
                .pipeline(SyncMode::Once)
                .await
                .map_err(|e| ApiError::from_pg(&e))?;
            for tuple in batch {
                let values: Vec<Option<&str>> = captures
                    .iter()
                    .map(|c| Some(c.as_str()))
                    .chain(tuple.iter().map(|v| v.as_deref()))
                    .collect();
                let params: Vec<&(dyn ToSql + '_)> =
                    values.iter().map(|v| v as &(dyn ToSql + '_)).collect();
                pipeline
                    .query(delete, &params)
                    .map_err(|e| ApiError::from_pg(&e))?;
            }
            let results = pipeline.run().await.map_err(|e| ApiError::from_pg(&e))?;
            first_error(results, |_| {
                String::from(" (deleting a row the body no longer has)")
            })?;
        }
        Ok(unseen.len())
    }
}

/// The results of a pipeline, or the answer for the statement that failed (the others report
/// only that they did not take effect); `place` says what statement `i` was for.
pub fn first_error(
    results: Vec<sluice_pg::Result<Rows>>,
    place: impl Fn(usize) -> String,
) -> Result<Vec<Rows>, ApiError> {
    let mut failed = None;
    for (i, result) in results.iter().enumerate() {
        if let Err(e) = result {
            if e.kind() != sluice_pg::ErrorKind::PipelineAborted {
                failed = Some((i, e));
                break;
            }
            failed.get_or_insert((i, e));
        }
    }
    if let Some((i, e)) = failed {
        let mut api = ApiError::from_pg(e);
        api.message.push_str(&place(i));
        return Err(api);
    }
    Ok(results.into_iter().filter_map(Result::ok).collect())
}
