//! Frontend message encoders: each appends one complete message to a `BytesMut`.
//!
//! Encoders write the length last (into a placeholder), so a message is built in one pass with no
//! intermediate buffer. On error nothing is left half-written: the buffer is truncated back.

use super::{CANCEL_REQUEST_CODE, PROTOCOL_VERSION, SSL_REQUEST_CODE};
use crate::types::{Format, IsNull, Oid};
use bytes::{BufMut, BytesMut};
use std::fmt;

/// Why a frontend message could not be encoded.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodeError {
    /// A string sent as a C string contains a NUL byte.
    NulInString {
        /// Which string (e.g. "SQL text").
        what: &'static str,
        /// Byte offset of the NUL inside it.
        offset: usize,
    },
    /// The message would exceed the protocol's 1 GiB - 1 length limit.
    TooLong {
        /// The message type.
        message: &'static str,
    },
    /// More than 65535 parameters or result columns.
    TooManyValues {
        /// What was counted.
        what: &'static str,
        /// How many there were.
        count: usize,
    },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::NulInString { what, offset } => write!(
                f,
                "{what} contains a NUL byte at offset {offset}; PostgreSQL strings cannot contain NUL"
            ),
            EncodeError::TooLong { message } => {
                write!(f, "{message} message exceeds the protocol limit of 1 GiB")
            }
            EncodeError::TooManyValues { what, count } => {
                write!(f, "{count} {what} given; the protocol allows at most 65535")
            }
        }
    }
}

impl std::error::Error for EncodeError {}

/// The largest message length PostgreSQL accepts from a client (`PQ_LARGE_MESSAGE_LIMIT`).
const MAX_MESSAGE_LEN: usize = 0x3fff_ffff;

/// Starts a message with type byte `tag`: writes the tag and a length placeholder.
/// Returns the offset of the length field.
#[inline]
fn begin(buf: &mut BytesMut, tag: u8) -> usize {
    buf.put_u8(tag);
    let at = buf.len();
    buf.put_i32(0);
    at
}

/// Fills in the length of the message whose length field is at `at`; on overflow the message is
/// removed from the buffer.
#[inline]
fn finish(buf: &mut BytesMut, at: usize, message: &'static str) -> Result<(), EncodeError> {
    let len = buf.len() - at;
    if len > MAX_MESSAGE_LEN {
        buf.truncate(at.saturating_sub(1));
        return Err(EncodeError::TooLong { message });
    }
    buf[at..at + 4].copy_from_slice(&(len as i32).to_be_bytes());
    Ok(())
}

/// Writes `s` followed by a NUL terminator.
#[inline]
fn put_cstr(buf: &mut BytesMut, s: &[u8], what: &'static str) -> Result<(), EncodeError> {
    if let Some(offset) = memchr::memchr(0, s) {
        return Err(EncodeError::NulInString { what, offset });
    }
    buf.put_slice(s);
    buf.put_u8(0);
    Ok(())
}

/// Runs `body` for the message started at `at`; on error removes the partial message.
#[inline]
fn guarded(
    buf: &mut BytesMut,
    at: usize,
    message: &'static str,
    body: impl FnOnce(&mut BytesMut) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    if let Err(e) = body(buf) {
        buf.truncate(at.saturating_sub(1));
        return Err(e);
    }
    finish(buf, at, message)
}

fn count_u16(n: usize, what: &'static str) -> Result<u16, EncodeError> {
    u16::try_from(n).map_err(|_| EncodeError::TooManyValues { what, count: n })
}

/// StartupMessage: protocol 3.0 and `name=value` parameters (user, database, options, ...).
pub fn startup(params: &[(&str, &str)], buf: &mut BytesMut) -> Result<(), EncodeError> {
    let at = buf.len();
    buf.put_i32(0);
    buf.put_i32(PROTOCOL_VERSION);
    for (name, value) in params {
        if let Err(e) = put_cstr(buf, name.as_bytes(), "startup parameter name")
            .and_then(|()| put_cstr(buf, value.as_bytes(), "startup parameter value"))
        {
            buf.truncate(at);
            return Err(e);
        }
    }
    buf.put_u8(0);
    let len = buf.len() - at;
    if len > 10_000 {
        // The server rejects startup packets over 10000 bytes.
        buf.truncate(at);
        return Err(EncodeError::TooLong {
            message: "StartupMessage",
        });
    }
    buf[at..at + 4].copy_from_slice(&(len as i32).to_be_bytes());
    Ok(())
}

/// SSLRequest: asks the server whether it will speak TLS.
pub fn ssl_request(buf: &mut BytesMut) {
    buf.put_i32(8);
    buf.put_i32(SSL_REQUEST_CODE);
}

/// CancelRequest: sent on a new connection to cancel the query running on another.
pub fn cancel_request(process_id: i32, secret_key: i32, buf: &mut BytesMut) {
    buf.put_i32(16);
    buf.put_i32(CANCEL_REQUEST_CODE);
    buf.put_i32(process_id);
    buf.put_i32(secret_key);
}

/// PasswordMessage: a cleartext password or an MD5 digest (`md5...`), NUL-terminated.
pub fn password(password: &[u8], buf: &mut BytesMut) -> Result<(), EncodeError> {
    let at = begin(buf, b'p');
    guarded(buf, at, "PasswordMessage", |buf| {
        put_cstr(buf, password, "password")
    })
}

/// SASLInitialResponse: the chosen mechanism and the client-first message.
pub fn sasl_initial_response(
    mechanism: &str,
    data: &[u8],
    buf: &mut BytesMut,
) -> Result<(), EncodeError> {
    let at = begin(buf, b'p');
    guarded(buf, at, "SASLInitialResponse", |buf| {
        put_cstr(buf, mechanism.as_bytes(), "SASL mechanism")?;
        buf.put_i32(data.len() as i32);
        buf.put_slice(data);
        Ok(())
    })
}

/// SASLResponse: a further SASL message from the client.
pub fn sasl_response(data: &[u8], buf: &mut BytesMut) -> Result<(), EncodeError> {
    let at = begin(buf, b'p');
    buf.put_slice(data);
    finish(buf, at, "SASLResponse")
}

/// Query: one or more SQL statements in the simple query protocol.
pub fn query(sql: &str, buf: &mut BytesMut) -> Result<(), EncodeError> {
    let at = begin(buf, b'Q');
    guarded(buf, at, "Query", |buf| {
        put_cstr(buf, sql.as_bytes(), "SQL text")
    })
}

/// Parse: prepares `sql` as statement `name` ("" for the unnamed statement); a parameter type of 0
/// lets the server infer it.
pub fn parse(
    name: &str,
    sql: &str,
    param_types: &[Oid],
    buf: &mut BytesMut,
) -> Result<(), EncodeError> {
    let at = begin(buf, b'P');
    guarded(buf, at, "Parse", |buf| {
        put_cstr(buf, name.as_bytes(), "statement name")?;
        put_cstr(buf, sql.as_bytes(), "SQL text")?;
        buf.put_u16(count_u16(param_types.len(), "parameter types")?);
        for &oid in param_types {
            buf.put_u32(oid);
        }
        Ok(())
    })
}

/// The formats of a Bind's parameters or result columns, as the protocol can express them.
#[derive(Clone, Copy, Debug)]
pub enum Formats<'a> {
    /// Every value in this one format (sent as a single format code, or none for text).
    All(Format),
    /// One format per value.
    Each(&'a [Format]),
}

impl Formats<'_> {
    fn put(self, buf: &mut BytesMut, what: &'static str) -> Result<(), EncodeError> {
        match self {
            Formats::All(Format::Text) => buf.put_u16(0),
            Formats::All(Format::Binary) => {
                buf.put_u16(1);
                buf.put_i16(1);
            }
            Formats::Each(formats) => {
                buf.put_u16(count_u16(formats.len(), what)?);
                for f in formats {
                    buf.put_i16(f.code());
                }
            }
        }
        Ok(())
    }
}

/// Writes the parameter values of a Bind message, one [`ParamWriter::put`] per value.
pub struct ParamWriter<'b> {
    buf: &'b mut BytesMut,
    count: usize,
}

impl ParamWriter<'_> {
    /// Appends one parameter: `encode` writes its bytes and says whether it is NULL.
    #[inline]
    pub fn put<E>(
        &mut self,
        encode: impl FnOnce(&mut BytesMut) -> Result<IsNull, E>,
    ) -> Result<(), E> {
        let at = self.buf.len();
        self.buf.put_i32(0);
        let len = match encode(self.buf)? {
            IsNull::Yes => {
                self.buf.truncate(at + 4);
                -1
            }
            IsNull::No => (self.buf.len() - at - 4) as i32,
        };
        self.buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
        self.count += 1;
        Ok(())
    }

    /// Appends one parameter from raw bytes (`None` for NULL).
    #[inline]
    pub fn put_raw(&mut self, value: Option<&[u8]>) {
        match value {
            Some(v) => {
                self.buf.put_i32(v.len() as i32);
                self.buf.put_slice(v);
            }
            None => self.buf.put_i32(-1),
        }
        self.count += 1;
    }
}

/// Why a Bind message could not be written: the protocol, or a parameter's own encoder.
#[derive(Debug)]
pub enum BindError<E> {
    /// The message itself is invalid.
    Encode(EncodeError),
    /// A parameter failed to encode.
    Param(E),
}

/// Bind: binds parameters to `statement`, creating `portal`.
///
/// `params` writes the values through the [`ParamWriter`]; their count is filled in afterwards.
pub fn bind<E>(
    portal: &str,
    statement: &str,
    param_formats: Formats<'_>,
    params: impl FnOnce(&mut ParamWriter<'_>) -> Result<(), E>,
    result_formats: Formats<'_>,
    buf: &mut BytesMut,
) -> Result<(), BindError<E>> {
    let start = buf.len();
    let at = begin(buf, b'B');
    let abort = |buf: &mut BytesMut, e| {
        buf.truncate(start);
        e
    };
    let head = put_cstr(buf, portal.as_bytes(), "portal name")
        .and_then(|()| put_cstr(buf, statement.as_bytes(), "statement name"))
        .and_then(|()| param_formats.put(buf, "parameter formats"));
    if let Err(e) = head {
        return Err(abort(buf, BindError::Encode(e)));
    }
    let count_at = buf.len();
    buf.put_u16(0);
    let mut writer = ParamWriter { buf, count: 0 };
    if let Err(e) = params(&mut writer) {
        return Err(abort(buf, BindError::Param(e)));
    }
    let count = writer.count;
    let count = match count_u16(count, "parameters") {
        Ok(n) => n,
        Err(e) => return Err(abort(buf, BindError::Encode(e))),
    };
    buf[count_at..count_at + 2].copy_from_slice(&count.to_be_bytes());
    if let Err(e) = result_formats.put(buf, "result formats") {
        return Err(abort(buf, BindError::Encode(e)));
    }
    finish(buf, at, "Bind").map_err(BindError::Encode)
}

/// What a Describe or Close message refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A prepared statement.
    Statement,
    /// A portal.
    Portal,
}

impl Target {
    fn code(self) -> u8 {
        match self {
            Target::Statement => b'S',
            Target::Portal => b'P',
        }
    }
}

/// Describe: asks for the parameter and row descriptions of a statement, or a portal's rows.
pub fn describe(target: Target, name: &str, buf: &mut BytesMut) -> Result<(), EncodeError> {
    let at = begin(buf, b'D');
    guarded(buf, at, "Describe", |buf| {
        buf.put_u8(target.code());
        put_cstr(buf, name.as_bytes(), "statement or portal name")
    })
}

/// Execute: runs `portal`, returning at most `max_rows` rows (0 for all).
pub fn execute(portal: &str, max_rows: i32, buf: &mut BytesMut) -> Result<(), EncodeError> {
    let at = begin(buf, b'E');
    guarded(buf, at, "Execute", |buf| {
        put_cstr(buf, portal.as_bytes(), "portal name")?;
        buf.put_i32(max_rows);
        Ok(())
    })
}

/// Close: releases a prepared statement or a portal.
pub fn close(target: Target, name: &str, buf: &mut BytesMut) -> Result<(), EncodeError> {
    let at = begin(buf, b'C');
    guarded(buf, at, "Close", |buf| {
        buf.put_u8(target.code());
        put_cstr(buf, name.as_bytes(), "statement or portal name")
    })
}

/// Sync: ends an extended-query batch; the server answers ReadyForQuery.
#[inline]
pub fn sync(buf: &mut BytesMut) {
    buf.put_slice(&[b'S', 0, 0, 0, 4]);
}

/// Flush: asks the server to send what it has buffered, without ending the batch.
#[inline]
pub fn flush(buf: &mut BytesMut) {
    buf.put_slice(&[b'H', 0, 0, 0, 4]);
}

/// Terminate: closes the session.
pub fn terminate(buf: &mut BytesMut) {
    buf.put_slice(&[b'X', 0, 0, 0, 4]);
}

/// The 5-byte header of a CopyData message carrying `len` bytes, for writing the data itself
/// without copying it into the buffer (vectored write).
pub fn copy_data_header(len: usize) -> Result<[u8; 5], EncodeError> {
    if len > MAX_MESSAGE_LEN - 4 {
        return Err(EncodeError::TooLong {
            message: "CopyData",
        });
    }
    let n = (len as u32 + 4).to_be_bytes();
    Ok([b'd', n[0], n[1], n[2], n[3]])
}

/// CopyData: a chunk of COPY FROM STDIN data.
pub fn copy_data(data: &[u8], buf: &mut BytesMut) -> Result<(), EncodeError> {
    let header = copy_data_header(data.len())?;
    buf.put_slice(&header);
    buf.put_slice(data);
    Ok(())
}

/// CopyDone: the end of COPY FROM STDIN data.
pub fn copy_done(buf: &mut BytesMut) {
    buf.put_slice(&[b'c', 0, 0, 0, 4]);
}

/// CopyFail: aborts COPY FROM STDIN with `reason`, which the server reports in its error.
pub fn copy_fail(reason: &str, buf: &mut BytesMut) -> Result<(), EncodeError> {
    let at = begin(buf, b'f');
    guarded(buf, at, "CopyFail", |buf| {
        put_cstr(buf, reason.as_bytes(), "CopyFail reason")
    })
}

#[cfg(test)]
#[path = "frontend_tests.rs"]
mod tests;
