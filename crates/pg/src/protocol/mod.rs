//! Sans-I/O PostgreSQL protocol (version 3.0): frontend encoders and a backend message parser.
//!
//! Nothing here touches a socket or an async runtime: encoders append to a `BytesMut`, the parser
//! reads from a byte slice and says how many bytes a message took, or that more are needed.

pub mod backend;
mod decode_error;
pub mod frontend;

pub use decode_error::{DecodeError, DecodeErrorKind};

/// The protocol version sent in the startup message (3.0).
pub const PROTOCOL_VERSION: i32 = 196_608;
/// The request code of an SSLRequest.
pub const SSL_REQUEST_CODE: i32 = 80_877_103;
/// The request code of a CancelRequest.
pub const CANCEL_REQUEST_CODE: i32 = 80_877_102;
