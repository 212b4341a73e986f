//! COPY FROM STDIN and COPY TO STDOUT, streamed both ways, and a binary COPY row writer.

use crate::conn::Connection;
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::backend::Message;
use crate::protocol::frontend;
use crate::rows::CommandTag;
use crate::types::{ConversionError, Format, IsNull, Oid, ToSql};
use bytes::{BufMut, Bytes, BytesMut};

/// Data is gathered into messages of about this size before it is sent.
const COPY_CHUNK: usize = 64 * 1024;

impl Connection {
    /// Starts `COPY ... FROM STDIN`; send the data with [`CopyIn::write`], then
    /// [`CopyIn::finish`]. Dropping it unfinished aborts the COPY (nothing is loaded).
    pub async fn copy_in(&mut self, sql: &str) -> Result<CopyIn<'_>> {
        let (format, columns) = self
            .start_copy(sql, b'G', "copy_in needs a COPY ... FROM STDIN statement")
            .await?;
        self.copy_in_open = true;
        Ok(CopyIn {
            conn: self,
            format,
            columns,
            finished: false,
        })
    }

    /// Starts `COPY ... TO STDOUT`; read the data with [`CopyOut::next_chunk`].
    pub async fn copy_out(&mut self, sql: &str) -> Result<CopyOut<'_>> {
        let (format, columns) = self
            .start_copy(sql, b'H', "copy_out needs a COPY ... TO STDOUT statement")
            .await?;
        Ok(CopyOut {
            conn: self,
            format,
            columns,
            tag: None,
            error: None,
            done: false,
        })
    }

    /// Sends a COPY statement and waits for the server's CopyIn (`G`) or CopyOut (`H`)
    /// response; returns the overall format and the column count.
    async fn start_copy(
        &mut self,
        sql: &str,
        expected: u8,
        misuse: &'static str,
    ) -> Result<(Format, usize)> {
        let prelude = self.begin_request().await?;
        frontend::query(sql, &mut self.io.write)?;
        self.send_request(prelude, 1, false).await?;
        let (tag, len) = self.next_message().await?;
        if tag == expected {
            let response = match self.parse_front(tag, len)? {
                Message::CopyInResponse(r) | Message::CopyOutResponse(r) => {
                    (r.format, r.column_count())
                }
                _ => return Err(self.unexpected("instead of a COPY response", tag)),
            };
            self.io.consume(len);
            return Ok(response);
        }
        match tag {
            b'E' => {
                let e = self.take_error(len)?;
                self.finish_failed().await;
                Err(e)
            }
            b'G' | b'H' | b'W' => {
                self.reject_copy(tag, len).await;
                Err(Error::new(ErrorKind::Usage, misuse))
            }
            _ => {
                self.io.consume(len);
                self.finish_failed().await;
                Err(Error::new(ErrorKind::Usage, misuse))
            }
        }
    }
}

/// A running `COPY ... FROM STDIN`. Dropped unfinished, it leaves the connection's
/// `copy_in_open` flag set, so the next request sends CopyFail first and nothing is loaded.
#[derive(Debug)]
pub struct CopyIn<'c> {
    conn: &'c mut Connection,
    format: Format,
    columns: usize,
    finished: bool,
}

impl CopyIn<'_> {
    /// The overall format the server expects (text also covers CSV).
    pub fn format(&self) -> Format {
        self.format
    }

    /// The number of columns being loaded.
    pub fn column_count(&self) -> usize {
        self.columns
    }

    /// Sends a piece of COPY data (any split; rows may span calls). Small pieces are gathered
    /// into large messages; a large piece is sent as is, without copying it. Waits while the
    /// socket is full (backpressure). A server error (a bad row) stops the COPY early and is
    /// returned here.
    pub async fn write(&mut self, data: &[u8]) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        if data.len() >= COPY_CHUNK {
            let header = frontend::copy_data_header(data.len())?;
            self.conn.io.flush_with(&header, data).await?;
        } else {
            frontend::copy_data(data, &mut self.conn.io.write)?;
            if self.conn.io.write.len() < COPY_CHUNK {
                return Ok(());
            }
            self.conn.io.flush().await?;
        }
        self.check_server_error().await
    }

    /// Whether the server already rejected the data: reads what has arrived without waiting,
    /// handling notices and the like on the way.
    async fn check_server_error(&mut self) -> Result<()> {
        self.conn.io.fill_now()?;
        while let Some((tag, len)) = self.conn.io.complete_message() {
            if self.conn.handle_async(tag, len)? {
                continue;
            }
            if tag != b'E' {
                return Err(self.conn.unexpected("during COPY FROM STDIN", tag));
            }
            let e = self.conn.take_error(len)?;
            // After an error the server ignores the rest of the data and ends the query.
            self.conn.copy_in_open = false;
            self.finished = true;
            self.conn.finish_failed().await;
            return Err(e);
        }
        Ok(())
    }

    /// Ends the data and waits for the server to load it; returns the number of rows.
    pub async fn finish(mut self) -> Result<u64> {
        self.finished = true;
        self.conn.copy_in_open = false;
        frontend::copy_done(&mut self.conn.io.write);
        self.conn.io.flush().await?;
        let mut rows = 0;
        let mut error = None;
        loop {
            let (tag, len) = self.conn.next_message().await?;
            match tag {
                b'C' => {
                    if let Message::CommandComplete { tag } = self.conn.parse_front(tag, len)? {
                        rows = CommandTag::new(tag).rows_affected();
                    }
                    self.conn.io.consume(len);
                }
                b'E' => error = Some(self.conn.take_error(len)?),
                b'Z' => {
                    self.conn.take_ready(len)?;
                    return match error {
                        Some(e) => Err(e),
                        None => Ok(rows),
                    };
                }
                _ => return Err(self.conn.unexpected("after COPY data", tag)),
            }
        }
    }

    /// Aborts the COPY with `reason`: nothing is loaded.
    pub async fn abort(mut self, reason: &str) -> Result<()> {
        self.finished = true;
        self.conn.copy_in_open = false;
        frontend::copy_fail(reason, &mut self.conn.io.write)?;
        self.conn.io.flush().await?;
        self.conn.drain(0).await
    }
}

/// A running `COPY ... TO STDOUT`.
#[derive(Debug)]
pub struct CopyOut<'c> {
    conn: &'c mut Connection,
    format: Format,
    columns: usize,
    tag: Option<CommandTag>,
    error: Option<Error>,
    done: bool,
}

impl CopyOut<'_> {
    /// The overall format of the data.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The number of columns.
    pub fn column_count(&self) -> usize {
        self.columns
    }

    /// The next chunk of data: every CopyData message that had arrived, joined (rows are whole
    /// within a chunk for text and CSV). `None` at the end.
    pub async fn next_chunk(&mut self) -> Result<Option<Bytes>> {
        loop {
            if self.done {
                return Ok(None);
            }
            if let Some(chunk) = self.conn.io.take_copy_data() {
                return Ok(Some(chunk));
            }
            let (tag, len) = self.conn.next_message().await?;
            match tag {
                b'd' => {}
                b'c' => self.conn.io.consume(len),
                b'C' => {
                    if let Message::CommandComplete { tag } = self.conn.parse_front(tag, len)? {
                        self.tag = Some(CommandTag::new(tag));
                    }
                    self.conn.io.consume(len);
                }
                b'E' => self.error = Some(self.conn.take_error(len)?),
                b'Z' => {
                    self.conn.take_ready(len)?;
                    self.done = true;
                    if let Some(e) = self.error.take() {
                        return Err(e);
                    }
                }
                _ => return Err(self.conn.unexpected("in COPY data", tag)),
            }
        }
    }

    /// The command tag (`COPY n`), once all data was read.
    pub fn command_tag(&self) -> Option<&CommandTag> {
        self.tag.as_ref()
    }
}

/// Writes rows in PostgreSQL's binary COPY format, each value encoded for its column's type.
#[derive(Debug)]
pub struct BinaryCopyWriter<'c> {
    copy: CopyIn<'c>,
    types: Vec<Oid>,
    buf: BytesMut,
}

/// The signature, flags and header extension length of binary COPY data (public for callers
/// that encode rows themselves, e.g. the Influx write API).
pub const BINARY_HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";

impl<'c> BinaryCopyWriter<'c> {
    /// Wraps a `COPY table (cols) FROM STDIN (FORMAT binary)`; `types` are the columns' types.
    pub fn new(copy: CopyIn<'c>, types: &[Oid]) -> Result<BinaryCopyWriter<'c>> {
        if copy.format() != Format::Binary {
            return Err(Error::new(
                ErrorKind::Usage,
                "BinaryCopyWriter needs COPY ... (FORMAT binary)",
            ));
        }
        if copy.column_count() != types.len() {
            return Err(Error::new(
                ErrorKind::ParameterCount,
                format!(
                    "the COPY has {} columns but {} types were given",
                    copy.column_count(),
                    types.len()
                ),
            ));
        }
        let mut buf = BytesMut::with_capacity(COPY_CHUNK + 1024);
        buf.put_slice(BINARY_HEADER);
        Ok(BinaryCopyWriter {
            copy,
            types: types.to_vec(),
            buf,
        })
    }

    /// Adds one row.
    pub async fn write_row(&mut self, values: &[&(dyn ToSql + '_)]) -> Result<()> {
        if values.len() != self.types.len() {
            return Err(Error::new(
                ErrorKind::ParameterCount,
                format!(
                    "the row has {} values but the COPY has {} columns",
                    values.len(),
                    self.types.len()
                ),
            ));
        }
        let start = self.buf.len();
        self.buf.put_i16(values.len() as i16);
        for (i, (value, &oid)) in values.iter().zip(&self.types).enumerate() {
            if let Err(e) = encode_binary(&mut self.buf, *value, oid) {
                self.buf.truncate(start);
                return Err(Error::from(e).context(format!("column {i}")));
            }
        }
        if self.buf.len() >= COPY_CHUNK {
            self.copy.write(&self.buf).await?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Sends the trailer and finishes the COPY; returns the number of rows.
    pub async fn finish(mut self) -> Result<u64> {
        self.buf.put_i16(-1);
        self.copy.write(&self.buf).await?;
        self.copy.finish().await
    }
}

fn encode_binary(buf: &mut BytesMut, value: &dyn ToSql, oid: Oid) -> Result<(), ConversionError> {
    if !value.accepts_binary(oid) {
        return Err(ConversionError::wrong_type(oid, value.rust_type()));
    }
    let at = buf.len();
    buf.put_i32(0);
    let len = match value.to_sql_binary(oid, buf)? {
        IsNull::Yes => {
            buf.truncate(at + 4);
            -1
        }
        IsNull::No => (buf.len() - at - 4) as i32,
    };
    buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
    Ok(())
}
