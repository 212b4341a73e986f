//! Streamed response bodies: a producer task encodes rows into chunks; the first chunk travels
//! with what the producer learnt before it (so the status and headers can still depend on the
//! query), the rest through a bounded channel (a slow client slows the producer down).

use crate::mount::{ResponseBody, full};
use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::sync::{mpsc, oneshot};

/// Rows are encoded into chunks of about this size; each goes to the client as one body frame.
pub const CHUNK: usize = 64 * 1024;

/// Chunks waiting for a slow client, beyond the one being encoded: this bounds memory per
/// response.
const QUEUED_CHUNKS: usize = 2;

/// How a response starts: the producer's head `H` and the first chunk (the whole body when
/// `complete`), or its error `E` before any byte was sent.
enum Start<H, E> {
    Body {
        head: H,
        first: Bytes,
        complete: bool,
    },
    Failed(E),
}

/// The producer's end.
pub struct ChunkSender<H, E> {
    start: Option<oneshot::Sender<Start<H, E>>>,
    rest: mpsc::Sender<Result<Bytes, std::io::Error>>,
    head: Option<H>,
}

/// The responder's end: waits for the start, then hands out the body.
pub struct ChunkReceiver<H, E> {
    start: oneshot::Receiver<Start<H, E>>,
    rest: mpsc::Receiver<Result<Bytes, std::io::Error>>,
}

/// A connected sender and receiver.
pub fn channel<H, E>() -> (ChunkSender<H, E>, ChunkReceiver<H, E>) {
    let (start_tx, start_rx) = oneshot::channel();
    let (rest_tx, rest_rx) = mpsc::channel(QUEUED_CHUNKS);
    (
        ChunkSender {
            start: Some(start_tx),
            rest: rest_tx,
            head: None,
        },
        ChunkReceiver {
            start: start_rx,
            rest: rest_rx,
        },
    )
}

impl<H, E> ChunkSender<H, E> {
    /// Sets the head that goes with the first chunk (replacing any earlier one).
    pub fn set_head(&mut self, head: H) {
        self.head = Some(head);
    }

    /// Whether the first chunk has gone: from then on the status cannot change.
    pub fn started(&self) -> bool {
        self.start.is_none()
    }

    /// Sends a full chunk; `false` when the client went away (stop producing).
    pub async fn send(&mut self, chunk: Bytes) -> bool {
        match self.start.take() {
            Some(start) => match self.head.take() {
                Some(head) => start
                    .send(Start::Body {
                        head,
                        first: chunk,
                        complete: false,
                    })
                    .is_ok(),
                None => false,
            },
            None => self.rest.send(Ok(chunk)).await.is_ok(),
        }
    }

    /// Sends the last chunk (the whole body when nothing was sent yet).
    pub async fn finish(mut self, last: Bytes) {
        match self.start.take() {
            Some(start) => {
                if let Some(head) = self.head.take() {
                    let _ = start.send(Start::Body {
                        head,
                        first: last,
                        complete: true,
                    });
                }
            }
            // An empty chunk would read as the end of a chunked body: send only what there is.
            None if last.is_empty() => {}
            None => {
                let _ = self.rest.send(Ok(last)).await;
            }
        }
    }

    /// Fails the response: as `error` when nothing was sent yet (`Ok(())`), else the body is cut
    /// short with an I/O error and `error` is handed back for the caller to log.
    pub async fn fail(mut self, error: E) -> Result<(), E> {
        match self.start.take() {
            Some(start) => {
                let _ = start.send(Start::Failed(error));
                Ok(())
            }
            None => {
                let _ = self
                    .rest
                    .send(Err(std::io::Error::other("the response was cut short")))
                    .await;
                Err(error)
            }
        }
    }
}

/// Why a stream gave no response.
pub enum Outcome<H, E> {
    /// The head and the body.
    Body(H, ResponseBody),
    /// The producer failed before sending anything.
    Failed(E),
    /// The producer ended without a word (it panicked or was dropped).
    Vanished,
}

impl<H, E> ChunkReceiver<H, E> {
    /// Waits for the producer's first chunk (or its error).
    pub async fn start(self) -> Outcome<H, E> {
        match self.start.await {
            Ok(Start::Body {
                head,
                first,
                complete: true,
            }) => Outcome::Body(head, full(first)),
            Ok(Start::Body { head, first, .. }) => Outcome::Body(
                head,
                ChunkBody {
                    first: Some(first),
                    rest: self.rest,
                }
                .boxed(),
            ),
            Ok(Start::Failed(error)) => Outcome::Failed(error),
            Err(_) => Outcome::Vanished,
        }
    }
}

struct ChunkBody {
    first: Option<Bytes>,
    rest: mpsc::Receiver<Result<Bytes, std::io::Error>>,
}

impl Body for ChunkBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        if let Some(first) = self.first.take() {
            return Poll::Ready(Some(Ok(Frame::data(first))));
        }
        self.rest
            .poll_recv(cx)
            .map(|chunk| chunk.map(|c| c.map(Frame::data)))
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}
