//! Buffered message I/O: one big read buffer filled with as much as the kernel has, one write
//! buffer sent with one system call per request.

use super::stream::Stream;
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::backend;
use bytes::{Bytes, BytesMut};
use std::future::Future;
use std::io::IoSlice;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The socket and its two buffers.
#[derive(Debug)]
pub(crate) struct Io {
    stream: Stream,
    read: BytesMut,
    /// Messages waiting to be sent; requests are built here and sent by [`Io::flush`].
    pub(crate) write: BytesMut,
    read_size: usize,
    /// Set while bytes are being written: if the future is dropped midway, the stream holds half
    /// a message and the connection cannot be used again.
    writing: bool,
    broken: bool,
}

impl Io {
    pub(crate) fn new(stream: Stream, read_size: usize) -> Io {
        Io {
            stream,
            read: BytesMut::with_capacity(read_size),
            write: BytesMut::with_capacity(8 * 1024),
            read_size,
            writing: false,
            broken: false,
        }
    }

    /// Whether the connection can no longer be used.
    pub(crate) fn is_broken(&self) -> bool {
        self.broken || self.writing
    }

    pub(crate) fn mark_broken(&mut self) {
        self.broken = true;
    }

    pub(crate) fn is_tls(&self) -> bool {
        self.stream.is_tls()
    }

    /// Reads at least one more byte, aiming to have `want` bytes buffered (a whole message).
    ///
    /// The buffer grows for a message larger than it, but at most doubles per read, so a bogus
    /// length can only cost memory in proportion to bytes actually received.
    async fn read_more(&mut self, want: usize) -> Result<()> {
        let len = self.read.len();
        let spare = self.read.capacity() - len;
        let missing = want.saturating_sub(len).min(len.max(self.read_size));
        if spare < missing || spare < self.read_size / 4 {
            self.read.reserve(missing.max(self.read_size));
        }
        match self.stream.read_buf(&mut self.read).await {
            Ok(0) => {
                self.broken = true;
                Err(Error::closed())
            }
            Ok(_) => Ok(()),
            Err(e) => {
                self.broken = true;
                Err(Error::io(e))
            }
        }
    }

    /// Waits until a whole message is at the front of the read buffer; returns its type byte and
    /// total length.
    #[inline]
    pub(crate) async fn message(&mut self) -> Result<(u8, usize)> {
        loop {
            match backend::header(&self.read) {
                Ok(Some((tag, total))) if self.read.len() >= total => return Ok((tag, total)),
                Ok(Some((_, total))) => self.read_more(total).await?,
                Ok(None) => self.read_more(5).await?,
                Err(e) => {
                    self.broken = true;
                    return Err(e.into());
                }
            }
        }
    }

    /// The buffered bytes not yet consumed.
    #[inline]
    pub(crate) fn buffered(&self) -> &[u8] {
        &self.read
    }

    /// Parses the buffered message of type `tag` and total length `len`; a malformed one marks
    /// the connection broken.
    #[inline]
    pub(crate) fn parse_front(&mut self, tag: u8, len: usize) -> Result<backend::Message<'_>> {
        let (read, broken) = (&self.read, &mut self.broken);
        backend::parse_body(tag, &read[5..len]).map_err(|e| {
            *broken = true;
            e.into()
        })
    }

    /// Drops the first `n` buffered bytes.
    #[inline]
    pub(crate) fn consume(&mut self, n: usize) {
        let _ = self.read.split_to(n);
    }

    /// Takes the first `n` buffered bytes as a shared `Bytes` (no copy).
    #[inline]
    pub(crate) fn take(&mut self, n: usize) -> Bytes {
        self.read.split_to(n).freeze()
    }

    /// Reads whatever the socket already holds, without waiting.
    pub(crate) fn fill_now(&mut self) -> Result<()> {
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        if self.read.capacity() - self.read.len() < 1024 {
            self.read.reserve(self.read_size);
        }
        let read = std::pin::pin!(self.stream.read_buf(&mut self.read));
        match read.poll(&mut cx) {
            std::task::Poll::Pending | std::task::Poll::Ready(Ok(1..)) => Ok(()),
            std::task::Poll::Ready(Ok(0)) => {
                self.broken = true;
                Err(Error::closed())
            }
            std::task::Poll::Ready(Err(e)) => {
                self.broken = true;
                Err(Error::io(e))
            }
        }
    }

    /// The type and length of the message at the front, if it is all there.
    pub(crate) fn complete_message(&self) -> Option<(u8, usize)> {
        match backend::header(&self.read) {
            Ok(Some((tag, total))) if self.read.len() >= total => Some((tag, total)),
            _ => None,
        }
    }

    /// Joins the payloads of the CopyData messages complete at the front into one chunk: each
    /// payload is moved down over the headers in place, then split off without a copy.
    pub(crate) fn take_copy_data(&mut self) -> Option<Bytes> {
        let mut src = 0;
        let mut dst = 0;
        while let Some(&[b'd', a, b, c, d]) = self.read.get(src..src + 5) {
            let total = u32::from_be_bytes([a, b, c, d]) as usize + 1;
            if total < 5 || src + total > self.read.len() {
                break;
            }
            let payload = total - 5;
            self.read.copy_within(src + 5..src + total, dst);
            dst += payload;
            src += total;
        }
        if src == 0 {
            return None;
        }
        let mut chunk = self.read.split_to(src);
        chunk.truncate(dst);
        Some(chunk.freeze())
    }

    /// Sends everything in the write buffer.
    pub(crate) async fn flush(&mut self) -> Result<()> {
        if self.write.is_empty() {
            return Ok(());
        }
        self.writing = true;
        let result = async {
            self.stream.write_all(&self.write).await?;
            self.stream.flush().await
        }
        .await;
        self.writing = false;
        self.write.clear();
        result.map_err(|e| {
            self.broken = true;
            Error::io(e)
        })
    }

    /// Sends the write buffer followed by `header` and `data`, in as few system calls as the
    /// kernel allows, without copying `data`.
    pub(crate) async fn flush_with(&mut self, header: &[u8], data: &[u8]) -> Result<()> {
        self.writing = true;
        let result = async {
            let parts = [&self.write[..], header, data];
            let total: usize = parts.iter().map(|p| p.len()).sum();
            let mut written = 0;
            while written < total {
                let mut skip = written;
                let mut slices = [IoSlice::new(&[]), IoSlice::new(&[]), IoSlice::new(&[])];
                let mut count = 0;
                for p in parts {
                    if skip >= p.len() {
                        skip -= p.len();
                    } else {
                        slices[count] = IoSlice::new(&p[skip..]);
                        count += 1;
                        skip = 0;
                    }
                }
                let n = self.stream.write_vectored(&slices[..count]).await?;
                if n == 0 {
                    return Err(std::io::Error::from(std::io::ErrorKind::WriteZero));
                }
                written += n;
            }
            self.stream.flush().await
        }
        .await;
        self.writing = false;
        self.write.clear();
        result.map_err(|e| {
            self.broken = true;
            Error::io(e)
        })
    }

    /// Closes the write side after sending what is buffered.
    pub(crate) async fn shutdown(&mut self) -> Result<()> {
        self.flush().await?;
        self.stream.shutdown().await.map_err(Error::io)
    }
}

/// The error for using a connection after it broke.
pub(crate) fn broken_error() -> Error {
    Error::new(
        ErrorKind::Closed,
        "connection is broken (an earlier I/O error, protocol error or interrupted write); \
         open a new one",
    )
}
