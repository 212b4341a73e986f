//! The error of decoding a backend message: what was malformed and at which byte.

use std::fmt;

/// What made a backend message undecodable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// A message length below the 4 bytes of the length itself, or above the allowed maximum.
    InvalidLength,
    /// A message type byte the protocol does not define for the backend.
    UnknownMessage,
    /// The body of a known message does not follow its layout.
    Malformed,
    /// A string in the message is not valid UTF-8.
    InvalidUtf8,
}

/// A backend message that cannot be decoded; the connection it came from cannot be trusted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    kind: DecodeErrorKind,
    tag: u8,
    offset: usize,
    what: &'static str,
}

impl DecodeError {
    pub(crate) fn new(kind: DecodeErrorKind, tag: u8, offset: usize, what: &'static str) -> Self {
        DecodeError {
            kind,
            tag,
            offset,
            what,
        }
    }

    pub(crate) fn malformed(tag: u8, offset: usize, what: &'static str) -> Self {
        DecodeError::new(DecodeErrorKind::Malformed, tag, offset, what)
    }

    /// The kind of failure.
    pub fn kind(&self) -> DecodeErrorKind {
        self.kind
    }

    /// The message type byte.
    pub fn tag(&self) -> u8 {
        self.tag
    }

    /// The byte offset inside the message (from its type byte) where decoding failed.
    pub fn offset(&self) -> usize {
        self.offset
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tag = if self.tag.is_ascii_graphic() {
            format!("'{}'", self.tag as char)
        } else {
            format!("0x{:02x}", self.tag)
        };
        let kind = match self.kind {
            DecodeErrorKind::InvalidLength => "invalid length",
            DecodeErrorKind::UnknownMessage => "unknown message type",
            DecodeErrorKind::Malformed => "malformed message",
            DecodeErrorKind::InvalidUtf8 => "invalid UTF-8",
        };
        write!(
            f,
            "protocol error: {kind} in backend message {tag} at byte {}: {}",
            self.offset, self.what
        )
    }
}

impl std::error::Error for DecodeError {}
