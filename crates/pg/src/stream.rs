//! Streaming a statement's rows block by block, and refusing COPY met through a row API.

use crate::conn::Connection;
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::backend::Message;
use crate::query::Head;
use crate::rows::{Column, Columns, CommandTag, RowBlock, Rows};

/// The rows of a running statement, delivered in blocks as they arrive. Dropping it early is
/// allowed: the connection reads (and discards) the rest before its next request.
#[derive(Debug)]
pub struct RowStream<'c> {
    conn: &'c mut Connection,
    columns: Columns,
    tag: Option<CommandTag>,
    error: Option<Error>,
    /// Rows have ended (CommandComplete or error seen).
    ended: bool,
    /// Also read the request's ReadyForQuery after the rows (a single-statement request).
    until_ready: bool,
    done: bool,
    spans_hint: usize,
    /// Statements of the same request after this one, read by [`RowStream::trailing`].
    trailing: Vec<crate::pipeline::Entry>,
}

impl<'c> RowStream<'c> {
    pub(crate) fn new(conn: &'c mut Connection, head: Head, until_ready: bool) -> RowStream<'c> {
        let columns = match head {
            Head::Rows(c) => c,
            Head::NoRows => Columns::from(Vec::new()),
        };
        RowStream {
            conn,
            columns,
            tag: None,
            error: None,
            ended: false,
            until_ready,
            done: false,
            spans_hint: 0,
            trailing: Vec::new(),
        }
    }

    /// A stream followed by `trailing` statements of the same request (their results and the
    /// request's ReadyForQuery are read by [`RowStream::trailing`]).
    pub(crate) fn trailed(
        conn: &'c mut Connection,
        head: Head,
        trailing: Vec<crate::pipeline::Entry>,
    ) -> RowStream<'c> {
        let mut stream = RowStream::new(conn, head, false);
        stream.trailing = trailing;
        stream
    }

    /// Reads what is left of the rows (dropped), then the rows of the statements that follow
    /// this one in its pipeline ([`crate::Pipeline::run_stream_then`]), and ends the request.
    /// An error of the streamed statement or of one after it is returned; the connection stays
    /// usable.
    pub async fn trailing(mut self) -> Result<Vec<Rows>> {
        while self.next_block().await?.is_some() {}
        let trailing = std::mem::take(&mut self.trailing);
        let results =
            crate::pipeline::read_each(self.conn, &trailing, "trailing statement").await?;
        // The implicit transaction commits at the Sync, and may fail there.
        self.conn
            .finish_group(0)
            .await
            .map_err(|e| e.context("the commit"))?;
        Ok(results)
    }

    /// The result's columns.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The command tag, once the last block has been read.
    pub fn command_tag(&self) -> Option<&CommandTag> {
        self.tag.as_ref()
    }

    /// The next block of rows, or `None` when the statement has finished. A server error
    /// mid-stream (after some blocks) is returned here.
    pub async fn next_block(&mut self) -> Result<Option<RowBlock>> {
        loop {
            if self.done {
                return Ok(None);
            }
            if !self.ended
                && let Some(block) = self.conn.take_block(&self.columns, self.spans_hint)?
            {
                self.spans_hint = block.spans().len();
                return Ok(Some(block));
            }
            if self.ended && !self.until_ready {
                self.done = true;
                return match self.error.take() {
                    Some(e) => Err(e),
                    None => Ok(None),
                };
            }
            let (tag, len) = self.conn.next_message().await?;
            match tag {
                b'D' if !self.ended => {}
                b'C' => {
                    let Message::CommandComplete { tag } = self.conn.parse_front(b'C', len)? else {
                        return Err(self.conn.unexpected("instead of CommandComplete", b'C'));
                    };
                    let tag = CommandTag::new(tag);
                    self.conn.io.consume(len);
                    self.conn.on_command_complete(tag.as_str());
                    self.tag = Some(tag);
                    self.ended = true;
                }
                b'I' | b's' => {
                    self.conn.io.consume(len);
                    self.tag.get_or_insert_with(CommandTag::default);
                    self.ended = true;
                }
                b'E' => {
                    self.error = Some(self.conn.take_error(len)?);
                    self.ended = true;
                }
                b'3' => self.conn.io.consume(len),
                b'Z' if self.until_ready => {
                    self.conn.take_ready(len)?;
                    self.done = true;
                    return match self.error.take() {
                        Some(e) => Err(e),
                        None => Ok(None),
                    };
                }
                b'G' | b'H' | b'W' => return Err(self.conn.reject_copy(tag, len).await),
                _ => return Err(self.conn.unexpected("in a statement's rows", tag)),
            }
        }
    }

    /// Reads every remaining block into memory.
    pub async fn collect(mut self) -> Result<Rows> {
        let mut blocks = Vec::new();
        while let Some(block) = self.next_block().await? {
            blocks.push(block);
        }
        Ok(Rows::new(
            self.columns.clone(),
            blocks,
            self.tag.take().unwrap_or_default(),
        ))
    }
}

impl Connection {
    /// A COPY reached through a row-returning call: fail it cleanly and say what to use instead.
    pub(crate) async fn reject_copy(&mut self, tag: u8, len: usize) -> Error {
        self.io.consume(len);
        if tag == b'G' {
            if let Err(e) = self.fail_copy_in("COPY FROM STDIN needs copy_in") {
                return e;
            }
            if let Err(e) = self.io.flush().await {
                return e;
            }
        }
        if let Err(e) = self.drain(0).await {
            return e;
        }
        Error::new(
            ErrorKind::Usage,
            "COPY statements must run through copy_in / copy_out, not query or execute",
        )
    }
}

impl Drop for RowStream<'_> {
    /// Statements after a stream dropped unread ([`RowStream::trailing`] not called) are read
    /// away by the connection's next request; one being prepared was never recorded in the
    /// statement cache, so the next request closes it on the server.
    fn drop(&mut self) {
        for entry in self.trailing.drain(..) {
            if let crate::statement::Plan::Prepare(name) = entry.plan {
                self.conn.prelude.close_statements.push(name);
            }
        }
    }
}
