//! Where the rows of a COPY write come from: a body held whole, or a CSJ / JSON Lines body read
//! frame by frame as it arrives, so only a frame and a cut line are held.

use super::body::{BodyFormat, BodyRow, LineRows, RowReader};
use super::lines::LineSplitter;
use crate::body::{BodyError, BodyReader};
use crate::view::error::ApiError;
use bytes::Bytes;

/// The answer to a body that could not be read (413, 408, 400).
pub fn body_error(error: BodyError) -> ApiError {
    ApiError::new(error.status(), "bad_body", error.to_string())
}

/// The rows of a CSJ or JSON Lines body, parsed as its frames arrive.
pub struct StreamRows {
    reader: BodyReader,
    /// Frames read before the body was found large enough to stream; split first.
    read_ahead: std::vec::IntoIter<Bytes>,
    lines: LineSplitter,
    rows: LineRows,
}

impl StreamRows {
    /// Rows of the frames `read_ahead`, then of the rest of `reader`.
    pub fn new(reader: BodyReader, read_ahead: Vec<Bytes>, format: BodyFormat) -> StreamRows {
        StreamRows {
            reader,
            read_ahead: read_ahead.into_iter(),
            lines: LineSplitter::new(),
            rows: LineRows::new(format),
        }
    }

    /// The next row, `None` after the last; reads frames as needed (within the body limit and
    /// the timeout of the request).
    pub async fn next_row(&mut self) -> Result<Option<BodyRow>, ApiError> {
        loop {
            while let Some((line, line_no)) = self.lines.next_line() {
                if let Some(row) = self.rows.row(line, line_no)? {
                    return Ok(Some(row));
                }
            }
            if self.lines.finished() {
                self.rows.end(self.lines.line_number())?;
                return Ok(None);
            }
            let frame = match self.read_ahead.next() {
                Some(frame) => Some(frame),
                None => self.reader.frame().await.map_err(body_error)?,
            };
            match frame {
                Some(frame) => self.lines.push(frame),
                None => self.lines.finish(),
            }
        }
    }

    /// Reads and drops what is left of the body (see [`BodyReader::discard_rest`]).
    pub async fn discard_rest(&mut self) {
        self.read_ahead = Vec::new().into_iter();
        self.reader.discard_rest().await;
    }
}

/// The rows a COPY write encodes.
pub enum RowSource {
    /// A body held whole.
    Held(RowReader),
    /// A body read as it arrives.
    Streamed(StreamRows),
}

impl RowSource {
    /// The next row, `None` after the last.
    pub async fn next_row(&mut self) -> Result<Option<BodyRow>, ApiError> {
        match self {
            RowSource::Held(reader) => reader.next_row(),
            RowSource::Streamed(rows) => rows.next_row().await,
        }
    }
}
