//! Pipelines: many statements written in one go, their results read back in order.

use crate::conn::Connection;
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::backend::Message;
use crate::protocol::frontend;
use crate::query::{Head, Params, is_stale_statement};
use crate::rows::{Columns, CommandTag, Rows};
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
    /// Syncs where the caller puts them ([`Pipeline::sync`]): the statements between two Syncs
    /// form a group, one implicit transaction; an error fails its own group only. Statements
    /// after the last `sync` form the last group.
    Groups,
}

#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) plan: Plan,
    pub(crate) format: Format,
    /// The SQL, kept only where reading the result needs it (statements being prepared).
    pub(crate) sql: Option<Box<str>>,
    /// A `COPY ... FROM STDIN` sent with its data ([`Pipeline::copy_in`]).
    copy_in: bool,
}

/// COPY data goes out in messages of at most this size (the server takes up to 1 GB each).
const COPY_MESSAGE: usize = 1 << 20;

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
    /// Where each closed group ends (exclusive index into `entries`), in order.
    group_ends: Vec<usize>,
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
            group_ends: Vec::new(),
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
        self.entries.push(Entry {
            plan,
            format,
            sql: keep_sql.then(|| sql.into()),
            copy_in: false,
        });
        if self.mode == SyncMode::PerStatement {
            frontend::sync(&mut conn.io.write);
            self.group_ends.push(self.entries.len());
        }
        Ok(self.entries.len() - 1)
    }

    /// Adds a `COPY ... FROM STDIN` with all of its `data`: the statement, the data and its end
    /// go out with the rest of the batch, so a transaction of deletes, COPYs and merges costs
    /// one round trip. Its result has no rows; its command tag counts the rows loaded. A
    /// statement that turns out not to be a COPY FROM STDIN fails with [`ErrorKind::Usage`]
    /// (the server ignores the data then). Returns its index in the results.
    pub fn copy_in(&mut self, sql: &str, data: &[u8]) -> Result<usize> {
        let Some(conn) = self.conn.as_deref_mut() else {
            return Err(Error::new(ErrorKind::Usage, "the pipeline was already run"));
        };
        let start = conn.io.write.len();
        conn.write_statement(sql, &[], Format::Text, &Plan::Unprepared)?;
        // The server reads the data right after the Execute that put it in copy-in mode.
        for chunk in data.chunks(COPY_MESSAGE) {
            if let Err(e) = frontend::copy_data(chunk, &mut conn.io.write) {
                conn.io.write.truncate(start);
                return Err(e.into());
            }
        }
        frontend::copy_done(&mut conn.io.write);
        self.entries.push(Entry {
            plan: Plan::Unprepared,
            format: Format::Text,
            sql: None,
            copy_in: true,
        });
        if self.mode == SyncMode::PerStatement {
            frontend::sync(&mut conn.io.write);
            self.group_ends.push(self.entries.len());
        }
        Ok(self.entries.len() - 1)
    }

    /// Ends the current group ([`SyncMode::Groups`]): the statements added since the previous
    /// `sync` run as one implicit transaction, so `set_config(..., true)` or `SET LOCAL` in one
    /// of them holds for the next ones and ends with the group. Does nothing in the other modes
    /// or when no statement was added since the last group ended.
    pub fn sync(&mut self) {
        let Some(conn) = self.conn.as_deref_mut() else {
            return;
        };
        let open_from = self.group_ends.last().copied().unwrap_or(0);
        if self.mode == SyncMode::Groups && self.entries.len() > open_from {
            frontend::sync(&mut conn.io.write);
            self.group_ends.push(self.entries.len());
        }
    }

    /// Ends the current group and adds, as a group of its own, the statement that reads the
    /// WAL position once that group committed ([`crate::lsn::COMMIT_POSITION_SQL`]): in the same
    /// round trip, after the commit. [`SyncMode::Groups`] only (a usage error otherwise); read
    /// its result with [`crate::Lsn::from_commit_position`]. Returns its index in the results.
    pub fn commit_position(&mut self) -> Result<usize> {
        if self.mode != SyncMode::Groups {
            return Err(Error::new(
                ErrorKind::Usage,
                "commit_position needs a pipeline with SyncMode::Groups",
            ));
        }
        self.sync();
        let at = self.query(crate::lsn::COMMIT_POSITION_SQL, &[])?;
        self.sync();
        Ok(at)
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
        // The last group (the whole batch with `Once`) ends here.
        let open = self.entries.len() > self.group_ends.last().copied().unwrap_or(0);
        // `Once` always sends its Sync, even for an empty batch.
        let once_unsent = self.mode == SyncMode::Once && self.group_ends.is_empty();
        if self.mode != SyncMode::PerStatement
            && (open || once_unsent)
            && let Some(conn) = self.conn.as_deref_mut()
        {
            frontend::sync(&mut conn.io.write);
            self.group_ends.push(self.entries.len());
        }
        self.ran = true;
        let Some(conn) = self.conn.as_deref_mut() else {
            return Err(Error::new(ErrorKind::Usage, "the pipeline was already run"));
        };
        let syncs = self.group_ends.len() as u32;
        conn.send_request(self.prelude_syncs, syncs, true).await?;
        let mut results: Vec<Result<Rows>> = Vec::with_capacity(self.entries.len());
        let mut group_start = 0;
        for &group_end in &self.group_ends {
            let mut failed_at = None;
            for i in group_start..group_end {
                let entry = &self.entries[i];
                if failed_at.is_some() {
                    results.push(Err(aborted(i, failed_at)));
                    continue;
                }
                let sql = entry.sql.as_deref().unwrap_or("");
                let result = if entry.copy_in {
                    conn.read_copy_in_result().await
                } else {
                    match conn.read_head(sql, &entry.plan, entry.format).await {
                        Ok(head) => RowStream::new(conn, head, false).collect().await,
                        Err(e) => Err(e),
                    }
                };
                if let Err(e) = &result {
                    if e.is_closed() || conn.is_broken() {
                        return Err(Error::new(
                            ErrorKind::Closed,
                            format!("pipeline statement {i}: {e}"),
                        ));
                    }
                    failed_at = Some(i);
                    if let (Plan::Prepared(s), true) = (&entry.plan, is_stale_statement(e))
                        && let Some(name) = conn.statements.invalidate(s.sql())
                    {
                        conn.prelude.close_statements.push(name);
                    }
                }
                results.push(result.map_err(|e| e.context(format!("pipeline statement {i}"))));
            }
            // This group's ReadyForQuery; its commit may fail there, after every statement
            // succeeded: then it is the first statement's error, the others aborted by it.
            match conn.finish_group(conn.pending_syncs - 1).await {
                Ok(()) => {}
                Err(e) if e.is_closed() || conn.is_broken() => return Err(e),
                Err(e) if failed_at.is_none() && group_end > group_start => {
                    results[group_start] = Err(e.context(format!(
                        "pipeline statements {group_start}..{group_end}: the commit"
                    )));
                    for (i, r) in results
                        .iter_mut()
                        .enumerate()
                        .take(group_end)
                        .skip(group_start + 1)
                    {
                        *r = Err(aborted(i, Some(group_start)));
                    }
                }
                Err(_) => {}
            }
            // Nothing of a failed group took effect, the statements before the failure included.
            if let Some(k) = failed_at {
                for (i, r) in results.iter_mut().enumerate().take(k).skip(group_start) {
                    *r = Err(aborted(i, Some(k)));
                }
            }
            group_start = group_end;
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
    pub async fn run_stream(self) -> Result<(Vec<Rows>, RowStream<'c>)> {
        self.run_stream_then(0).await
    }

    /// [`Pipeline::run_stream`] streaming the statement `trailing` places before the last: the
    /// statements after it run in the same implicit transaction once its rows are read, and
    /// [`RowStream::trailing`] reads their rows (a setting the streamed statement left for the
    /// caller, read before the transaction ends). Dropping the stream reads them away.
    pub async fn run_stream_then(mut self, trailing: usize) -> Result<(Vec<Rows>, RowStream<'c>)> {
        // Usage errors first, while the pipeline is unsent: dropping it then takes its
        // statements back out of the write buffer.
        let usage = if self.entries.is_empty() {
            Some("run_stream of an empty pipeline")
        } else if self.entries.len() <= trailing {
            Some("run_stream_then with no statement to stream before those it trails")
        } else if self.entries.iter().any(|e| e.copy_in) {
            Some("run_stream of a pipeline holding a COPY (use run)")
        } else if self.mode != SyncMode::Once {
            Some("run_stream needs a pipeline with SyncMode::Once")
        } else {
            None
        };
        if let Some(message) = usage {
            return Err(Error::new(ErrorKind::Usage, message));
        }
        let Some(conn) = self.conn.take() else {
            return Err(Error::new(ErrorKind::Usage, "the pipeline was already run"));
        };
        self.ran = true;
        let mut entries = std::mem::take(&mut self.entries);
        let after = entries.split_off(entries.len() - trailing);
        let Some((last, before)) = entries.split_last() else {
            return Err(Error::new(
                ErrorKind::Usage,
                "run_stream of an empty pipeline",
            ));
        };
        frontend::sync(&mut conn.io.write);
        conn.send_request(self.prelude_syncs, 1, true).await?;
        let results = read_each(conn, before, "pipeline statement").await?;
        let sql = last.sql.as_deref().unwrap_or("");
        match conn.read_head(sql, &last.plan, last.format).await {
            Ok(head) if after.is_empty() => Ok((results, RowStream::new(conn, head, true))),
            Ok(head) => Ok((results, RowStream::trailed(conn, head, after))),
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

impl Connection {
    /// Reads the response to a COPY FROM STDIN sent with its data: parsed, bound, described
    /// (no rows), CopyInResponse, then the CommandComplete counting the rows loaded.
    async fn read_copy_in_result(&mut self) -> Result<Rows> {
        let head = self.read_head("", &Plan::Unprepared, Format::Text).await?;
        if let Head::Rows(_) = head {
            RowStream::new(self, head, false).collect().await?;
            return Err(not_copy_in());
        }
        let mut copy_started = false;
        loop {
            let (tag, len) = self.next_message().await?;
            match tag {
                b'G' => {
                    copy_started = true;
                    self.io.consume(len);
                }
                // A COPY TO STDOUT: its data is read and dropped.
                b'H' | b'd' | b'c' => self.io.consume(len),
                b'C' => {
                    let Message::CommandComplete { tag } = self.parse_front(tag, len)? else {
                        return Err(self.unexpected("instead of CommandComplete", tag));
                    };
                    let tag = CommandTag::new(tag);
                    self.io.consume(len);
                    if !copy_started {
                        return Err(not_copy_in());
                    }
                    return Ok(Rows::new(Columns::from(Vec::new()), Vec::new(), tag));
                }
                b'E' => return Err(self.take_error(len)?),
                _ => return Err(self.unexpected("in response to a pipelined COPY", tag)),
            }
        }
    }
}

fn not_copy_in() -> Error {
    Error::new(
        ErrorKind::Usage,
        "Pipeline::copy_in needs a COPY ... FROM STDIN statement",
    )
}

/// Reads the rows of each of `entries`, the statements of a request's one Sync group, in
/// order; the first error (named `what` and its index) is returned once the rest of the
/// request was read away, the connection usable unless it broke.
pub(crate) async fn read_each(
    conn: &mut Connection,
    entries: &[Entry],
    what: &str,
) -> Result<Vec<Rows>> {
    let mut results = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
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
                return Err(e.context(format!("{what} {i}")));
            }
        }
    }
    Ok(results)
}

fn aborted(index: usize, failed: Option<usize>) -> Error {
    let k = failed.unwrap_or(index);
    Error::new(
        ErrorKind::PipelineAborted,
        format!(
            "pipeline statement {index} did not take effect: statement {k} failed and the \
             two shared one implicit transaction (all or nothing)"
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
