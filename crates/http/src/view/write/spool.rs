//! A large body written through several method objects: spooled once to an unlinked temporary
//! file as it arrives, then read back frame by frame for each object, so memory stays at one
//! frame and a cut line whatever the body size.

use super::body::{BodyFormat, BodyRow};
use super::stream::{FramedRows, Next, body_error};
use crate::body::BodyReader;
use crate::view::error::ApiError;
use bytes::{Bytes, BytesMut};
use http::StatusCode;
use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};

/// Bytes read back from the spool file at a time.
const READ_CHUNK: usize = 256 * 1024;

/// The rows of a spooled body, read again from the start for each method object.
pub struct SpooledRows {
    file: tokio::fs::File,
    format: BodyFormat,
    rows: FramedRows,
    buffer: BytesMut,
}

impl SpooledRows {
    /// Writes the frames `read_ahead`, then the rest of `reader`, to a temporary file that has
    /// no name (gone with the request, even if the process dies). The body limit and timeout
    /// apply as the frames arrive.
    pub async fn spool(
        reader: &mut BodyReader,
        read_ahead: Vec<Bytes>,
        format: BodyFormat,
    ) -> Result<SpooledRows, ApiError> {
        let file = tempfile::tempfile().map_err(spool_error)?;
        let mut file = tokio::fs::File::from_std(file);
        for frame in read_ahead {
            file.write_all(&frame).await.map_err(spool_error)?;
        }
        while let Some(frame) = reader.frame().await.map_err(body_error)? {
            file.write_all(&frame).await.map_err(spool_error)?;
        }
        file.flush().await.map_err(spool_error)?;
        Ok(SpooledRows {
            file,
            format,
            rows: FramedRows::new(format),
            buffer: BytesMut::new(),
        })
    }

    /// Starts again from the first row.
    pub async fn rewind(&mut self) -> Result<(), ApiError> {
        self.file.rewind().await.map_err(spool_error)?;
        self.rows = FramedRows::new(self.format);
        Ok(())
    }

    /// The next row, `None` after the last.
    pub async fn next_row(&mut self) -> Result<Option<BodyRow>, ApiError> {
        loop {
            match self.rows.next()? {
                Next::Row(row) => return Ok(Some(row)),
                Next::End => return Ok(None),
                Next::More => {}
            }
            self.buffer.reserve(READ_CHUNK);
            let read = self
                .file
                .read_buf(&mut self.buffer)
                .await
                .map_err(spool_error)?;
            if read == 0 {
                self.rows.finish();
            } else {
                self.rows.push(self.buffer.split().freeze());
            }
        }
    }
}

fn spool_error(error: std::io::Error) -> ApiError {
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "spool_failed",
        format!("the request body could not be kept in a temporary file: {error}"),
    )
}
