//! A large body written through several method objects: spooled once to an unlinked temporary
//! file as it arrives, then read back frame by frame for each object, so memory stays at one
//! frame and a cut line whatever the body size.

use super::stream::body_error;
use crate::body::BodyReader;
use crate::view::error::ApiError;
use bytes::{Bytes, BytesMut};
use http::StatusCode;
use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};

/// Bytes read back from the spool file at a time.
const READ_CHUNK: usize = 256 * 1024;

/// A body kept in a temporary file that has no name (gone with the request, even if the
/// process dies).
pub struct SpoolFile {
    file: tokio::fs::File,
    buffer: BytesMut,
}

impl SpoolFile {
    /// Writes the frames `read_ahead`, then the rest of `reader`, to the file. The body limit
    /// and timeout apply as the frames arrive.
    pub async fn spool(
        reader: &mut BodyReader,
        read_ahead: Vec<Bytes>,
    ) -> Result<SpoolFile, ApiError> {
        let file = tempfile::tempfile().map_err(spool_error)?;
        let mut file = tokio::fs::File::from_std(file);
        for frame in read_ahead {
            file.write_all(&frame).await.map_err(spool_error)?;
        }
        while let Some(frame) = reader.frame().await.map_err(body_error)? {
            file.write_all(&frame).await.map_err(spool_error)?;
        }
        file.flush().await.map_err(spool_error)?;
        file.rewind().await.map_err(spool_error)?;
        Ok(SpoolFile {
            file,
            buffer: BytesMut::new(),
        })
    }

    /// Goes back to the start of the body.
    pub async fn rewind(&mut self) -> Result<(), ApiError> {
        self.file.rewind().await.map_err(spool_error)?;
        Ok(())
    }

    /// The next piece of the body, `None` at its end.
    pub async fn frame(&mut self) -> Result<Option<Bytes>, ApiError> {
        self.buffer.reserve(READ_CHUNK);
        let read = self
            .file
            .read_buf(&mut self.buffer)
            .await
            .map_err(spool_error)?;
        Ok((read > 0).then(|| self.buffer.split().freeze()))
    }
}

fn spool_error(error: std::io::Error) -> ApiError {
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "spool_failed",
        format!("the request body could not be kept in a temporary file: {error}"),
    )
}
