//! Pipelines: many statements written in one go, their results read back in order.

use crate::conn::Connection;
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::frontend;
use crate::query::{Params, is_stale_statement};
use crate::rows::Rows;
use crate::statement::Plan;
use crate::stream::RowStream;
use crate::types::Format;

/// Where Syncs go in a pipeline, which decides how an error spreads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncMode {
    /// One Sync after each statement: each runs in its own implicit transaction and an error
    /// fails only its own statement.
    PerStatement,
    /// One Sync for the whole batch: all statements run in one implicit transaction; an error
    /// fails the batch and nothing of it takes effect.
    Once,
}

#[derive(Debug)]
struct Entry {
    plan: Plan,
    format: Format,
    /// The SQL, kept only where reading the result needs it (statements being prepared).
    sql: Option<Box<str>>,
}

/// A batch of statements sent with one write. Build it with [`Connection::pipeline`], add
/// statements, then [`Pipeline::run`]. Dropping it unrun sends nothing.
#[derive(Debug)]
pub struct Pipeline<'c> {
    /// Taken by [`Pipeline::run_stream`], which hands the connection to the stream.
    conn: Option<&'c mut Connection>,
    mode: SyncMode,
    prelude_syncs: u32,
    /// Where this pipeline's statements start in the write buffer.
    start: usize,
    entries: Vec<Entry>,
    /// SQL prepared by an earlier statement of this batch, by statement name.
    preparing: Vec<(Box<str>, String)>,
    ran: bool,
}

impl Connection {
    /// Starts a pipeline.
    pub async fn pipeline(&mut self, mode: SyncMode) -> Result<Pipeline<'_>> {
        let prelude_syncs = self.begin_request().await?;
        let start = self.io.write.len();
        Ok(Pipeline {
            conn: Some(self),
            mode,
            prelude_syncs,
            start,
            entries: Vec::new(),
            preparing: Vec::new(),
            ran: false,
        })
    }
}

impl Pipeline<'_> {
    /// Adds a statement whose rows come back in text format; returns its index in the results.
    pub fn query(&mut self, sql: &str, params: Params<'_>) -> Result<usize> {
        self.query_with(sql, params, Format::Text)
    }

    /// Adds a statement whose rows come back in `format`.
    pub fn query_with(&mut self, sql: &str, params: Params<'_>, format: Format) -> Result<usize> {
        let Some(conn) = self.conn.as_deref_mut() else {
            return Err(Error::new(ErrorKind::Usage, "the pipeline was already run"));
        };
        let mut plan = conn.statements.plan(sql);
        if matches!(plan, Plan::Prepare(_) | Plan::Unprepared)
            && let Some((_, name)) = self.preparing.iter().find(|(s, _)| &**s == sql)
        {
            plan = Plan::Pending(name.clone());
        }
        conn.write_statement(sql, params, format, &plan)?;
        let keep_sql = matches!(plan, Plan::Prepare(_) | Plan::Pending(_));
        if let Plan::Prepare(name) = &plan {
            self.preparing.push((sql.into(), name.clone()));
        }
        if self.mode == SyncMode::PerStatement {
            frontend::sync(&mut conn.io.write);
        }
        self.entries.push(Entry {
            plan,
            format,
            sql: keep_sql.then(|| sql.into()),
        });
        Ok(self.entries.len() - 1)
    }

    /// The number of statements added.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no statement was added.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Sends the batch and reads every result in order. The outer error means the connection
    /// failed; each statement has its own result. With [`SyncMode::Once`], when one statement
    /// fails, every statement of the batch reports an error (the failing one its own, the others
    /// [`ErrorKind::PipelineAborted`]) because none of them took effect.
    pub async fn run(mut self) -> Result<Vec<Result<Rows>>> {
        self.ran = true;
        let Some(conn) = self.conn.as_deref_mut() else {
            return Err(Error::new(ErrorKind::Usage, "the pipeline was already run"));
        };
        let syncs = match self.mode {
            SyncMode::PerStatement => self.entries.len() as u32,
            SyncMode::Once => {
                frontend::sync(&mut conn.io.write);
                1
            }
        };
        conn.send_request(self.prelude_syncs, syncs, true).await?;
        let mut results: Vec<Result<Rows>> = Vec::with_capacity(self.entries.len());
        let mut failed_at = None;
        for (i, entry) in self.entries.iter().enumerate() {
            if failed_at.is_some() {
                results.push(Err(aborted(i, failed_at)));
                continue;
            }
            let sql = entry.sql.as_deref().unwrap_or("");
            let result = match conn.read_head(sql, &entry.plan, entry.format).await {
                Ok(head) => RowStream::new(conn, head, false).collect().await,
                Err(e) => Err(e),
            };
            if let Err(e) = &result {
                if e.is_closed() || conn.is_broken() {
                    return Err(Error::new(
                        ErrorKind::Closed,
                        format!("pipeline statement {i}: {e}"),
                    ));
                }
                if self.mode == SyncMode::Once {
                    failed_at = Some(i);
                }
                if let (Plan::Prepared(s), true) = (&entry.plan, is_stale_statement(e))
                    && let Some(name) = conn.statements.invalidate(s.sql())
                {
                    conn.prelude.close_statements.push(name);
                }
            }
            if self.mode == SyncMode::PerStatement {
                conn.drain(conn.pending_syncs - 1).await?;
            }
            results.push(result.map_err(|e| e.context(format!("pipeline statement {i}"))));
        }
        if self.mode == SyncMode::Once {
            conn.drain(0).await?;
            if let Some(k) = failed_at {
                for (i, r) in results.iter_mut().enumerate().take(k) {
                    *r = Err(aborted(i, Some(k)));
                }
            }
        }
        Ok(results)
    }
}

impl<'c> Pipeline<'c> {
    /// Sends the batch as one implicit transaction (one Sync, whatever the mode), reads the
    /// rows of every statement but the last, and streams the last one's rows: the way to run a
    /// statement behind the session settings it needs (`set_config` calls, `SET LOCAL ROLE`)
    /// in one round trip. When an earlier statement fails, its error is returned and nothing of
    /// the batch takes effect. An empty batch is a usage error.
    pub async fn run_stream(mut self) -> Result<(Vec<Rows>, RowStream<'c>)> {
        self.ran = true;
        let entries = std::mem::take(&mut self.entries);
        let Some(conn) = self.conn.take() else {
            return Err(Error::new(ErrorKind::Usage, "the pipeline was already run"));
        };
        let Some((last, before)) = entries.split_last() else {
            return Err(Error::new(
                ErrorKind::Usage,
                "run_stream of an empty pipeline",
            ));
        };
        if self.mode == SyncMode::PerStatement {
            return Err(Error::new(
                ErrorKind::Usage,
                "run_stream needs a pipeline with SyncMode::Once",
            ));
        }
        frontend::sync(&mut conn.io.write);
        conn.send_request(self.prelude_syncs, 1, true).await?;
        let mut results = Vec::with_capacity(before.len());
        for (i, entry) in before.iter().enumerate() {
            let sql = entry.sql.as_deref().unwrap_or("");
            let result = match conn.read_head(sql, &entry.plan, entry.format).await {
                Ok(head) => RowStream::new(conn, head, false).collect().await,
                Err(e) => Err(e),
            };
            match result {
                Ok(rows) => results.push(rows),
                Err(e) => {
                    if !e.is_closed() && !conn.is_broken() {
                        conn.drain(0).await?;
                    }
                    return Err(e.context(format!("pipeline statement {i}")));
                }
            }
        }
        let sql = last.sql.as_deref().unwrap_or("");
        match conn.read_head(sql, &last.plan, last.format).await {
            Ok(head) => Ok((results, RowStream::new(conn, head, true))),
            Err(e) => {
                if let (Plan::Prepared(s), true) = (&last.plan, is_stale_statement(&e))
                    && let Some(name) = conn.statements.invalidate(s.sql())
                {
                    conn.prelude.close_statements.push(name);
                }
                if !e.is_closed() && !conn.is_broken() {
                    conn.drain(0).await?;
                }
                Err(e)
            }
        }
    }
}

fn aborted(index: usize, failed: Option<usize>) -> Error {
    let k = failed.unwrap_or(index);
    Error::new(
        ErrorKind::PipelineAborted,
        format!(
            "pipeline statement {index} did not take effect: statement {k} failed and the \
             batch had one Sync (all or nothing)"
        ),
    )
}

impl Drop for Pipeline<'_> {
    fn drop(&mut self) {
        if let (false, Some(conn)) = (self.ran, self.conn.as_deref_mut()) {
            // Unsent statements must not ride along with the next request.
            conn.io.write.truncate(self.start);
        }
    }
}
