//! Backend message parser: borrowed views of server messages over a byte slice.
//!
//! [`parse`] never allocates and never panics: it returns `Ok(None)` when the slice holds less
//! than one whole message, and a [`DecodeError`] naming the byte offset when a message is invalid.
//! A message's declared length is checked against [`MAX_MESSAGE_LEN`] before anything else, so a
//! bad length can make a caller wait for bytes but never allocate without bound.

use super::decode_error::{DecodeError, DecodeErrorKind};
use crate::types::{Format, Oid};

/// The largest backend message body PostgreSQL can send (`MaxAllocSize`), plus the length field.
pub const MAX_MESSAGE_LEN: usize = 0x3fff_ffff + 4;

/// The server's transaction status, from ReadyForQuery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransactionStatus {
    /// Not in a transaction block.
    Idle,
    /// In a transaction block.
    InTransaction,
    /// In a failed transaction block; statements are refused until it ends.
    Failed,
}

/// One backend message, borrowing from the buffer it was parsed from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message<'a> {
    /// An authentication request or result.
    Authentication(Authentication<'a>),
    /// The process ID and secret key used to cancel queries on this session.
    BackendKeyData {
        /// The backend's process ID.
        process_id: i32,
        /// The cancellation key (4 bytes in protocol 3.0).
        secret_key: &'a [u8],
    },
    /// Bind succeeded.
    BindComplete,
    /// Close succeeded.
    CloseComplete,
    /// A statement finished; the tag says what it did (`SELECT 5`, `INSERT 0 1`).
    CommandComplete {
        /// The command tag.
        tag: &'a str,
    },
    /// A chunk of COPY data.
    CopyData(&'a [u8]),
    /// The end of COPY TO STDOUT data.
    CopyDone,
    /// The server is ready for COPY FROM STDIN data.
    CopyInResponse(CopyResponse<'a>),
    /// COPY TO STDOUT data follows.
    CopyOutResponse(CopyResponse<'a>),
    /// Streaming replication copy mode.
    CopyBothResponse(CopyResponse<'a>),
    /// One row of a result.
    DataRow(DataRow<'a>),
    /// The query string was empty.
    EmptyQueryResponse,
    /// An error; the statement failed.
    ErrorResponse(ErrorFields<'a>),
    /// The result of a function call (fast-path interface).
    FunctionCallResponse(Option<&'a [u8]>),
    /// The server does not support the requested minor protocol version or options.
    NegotiateProtocolVersion {
        /// The newest minor version the server supports.
        newest_minor: i32,
        /// The options it did not recognise, as a sequence of C strings.
        unrecognized: &'a [u8],
    },
    /// The statement or portal returns no rows.
    NoData,
    /// A warning or informational message.
    NoticeResponse(ErrorFields<'a>),
    /// A NOTIFY on a channel this session listens to.
    NotificationResponse {
        /// The notifying backend's process ID.
        process_id: i32,
        /// The channel name.
        channel: &'a str,
        /// The payload string.
        payload: &'a str,
    },
    /// The parameter types of a prepared statement.
    ParameterDescription(ParameterDescription<'a>),
    /// A run-time parameter's value (sent at startup and whenever it changes).
    ParameterStatus {
        /// The parameter name.
        name: &'a str,
        /// Its value.
        value: &'a str,
    },
    /// Parse succeeded.
    ParseComplete,
    /// Execute stopped at its row limit; the portal has more rows.
    PortalSuspended,
    /// The server is ready for a new query.
    ReadyForQuery(TransactionStatus),
    /// The columns of the rows that follow.
    RowDescription(RowDescription<'a>),
}

/// The kinds of Authentication message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Authentication<'a> {
    /// Authentication succeeded.
    Ok,
    /// Send the password in clear text.
    CleartextPassword,
    /// Send the MD5 digest of the password with this salt.
    Md5Password {
        /// The 4-byte salt.
        salt: [u8; 4],
    },
    /// Start a SASL exchange with one of these mechanisms (a sequence of C strings).
    Sasl {
        /// The mechanism names, NUL-separated.
        mechanisms: &'a [u8],
    },
    /// A SASL challenge.
    SaslContinue(&'a [u8]),
    /// The SASL outcome (server signature).
    SaslFinal(&'a [u8]),
    /// A method this driver does not implement (Kerberos, GSSAPI, SSPI), by its code.
    Unsupported(i32),
}

impl<'a> Authentication<'a> {
    /// The SASL mechanism names offered by the server.
    pub fn sasl_mechanisms(mechanisms: &'a [u8]) -> impl Iterator<Item = &'a [u8]> {
        mechanisms.split(|&b| b == 0).filter(|m| !m.is_empty())
    }
}

/// The format description of CopyIn/CopyOut/CopyBoth responses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopyResponse<'a> {
    /// The overall format (text also covers CSV).
    pub format: Format,
    column_formats: &'a [u8],
}

impl CopyResponse<'_> {
    /// The number of columns.
    pub fn column_count(&self) -> usize {
        self.column_formats.len() / 2
    }

    /// The format of each column.
    pub fn column_formats(&self) -> impl Iterator<Item = Format> + '_ {
        self.column_formats
            .chunks_exact(2)
            .map(|c| Format::from_code(i16::from_be_bytes([c[0], c[1]])))
    }
}

/// A DataRow's fields, validated at parse time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataRow<'a> {
    count: u16,
    fields: &'a [u8],
}

impl<'a> DataRow<'a> {
    /// The number of fields.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// Whether the row has no fields.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The fields in order; `None` is SQL NULL.
    pub fn fields(&self) -> DataRowFields<'a> {
        DataRowFields {
            rest: self.fields,
            left: self.count,
        }
    }
}

/// Iterator over the fields of a [`DataRow`].
#[derive(Clone, Debug)]
pub struct DataRowFields<'a> {
    rest: &'a [u8],
    left: u16,
}

impl<'a> Iterator for DataRowFields<'a> {
    type Item = Option<&'a [u8]>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        // Lengths were validated when the row was parsed; the fallbacks only keep this total.
        let (len, rest) = self.rest.split_first_chunk::<4>()?;
        let len = i32::from_be_bytes(*len);
        if len < 0 {
            self.rest = rest;
            return Some(None);
        }
        let (value, rest) = rest.split_at_checked(len as usize)?;
        self.rest = rest;
        Some(Some(value))
    }
}

/// Where one field of a row lies in a shared buffer: `len < 0` is SQL NULL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct FieldSpan {
    /// Offset of the value's first byte from the start of the buffer.
    pub start: u32,
    /// Length of the value, or -1 for NULL.
    pub len: i32,
}

/// Parses the body of a DataRow (after its 5-byte header) into spans relative to a buffer where
/// the body starts at `body_offset`, appending exactly `expected` spans to `out`.
///
/// This is the hot loop of reading rows: no allocation beyond `out`'s growth, one bounds check
/// per field.
#[inline]
pub fn data_row_spans(
    body: &[u8],
    body_offset: usize,
    expected: u16,
    out: &mut Vec<FieldSpan>,
) -> Result<(), DecodeError> {
    let bad = |at: usize, what| DecodeError::malformed(b'D', 5 + at, what);
    let Some((count, _)) = body.split_first_chunk::<2>() else {
        return Err(bad(0, "missing field count"));
    };
    if u16::from_be_bytes(*count) != expected {
        return Err(bad(0, "field count differs from the row description"));
    }
    let mut pos = 2usize;
    for _ in 0..expected {
        let Some(len) = body.get(pos..pos + 4) else {
            return Err(bad(pos, "field length runs past the end of the message"));
        };
        let len = i32::from_be_bytes([len[0], len[1], len[2], len[3]]);
        pos += 4;
        let start = (body_offset + pos) as u32;
        if len >= 0 {
            let end = pos + len as usize;
            if end > body.len() {
                return Err(bad(pos - 4, "field value runs past the end of the message"));
            }
            pos = end;
        } else if len != -1 {
            return Err(bad(pos - 4, "negative field length other than -1"));
        }
        out.push(FieldSpan { start, len });
    }
    if pos != body.len() {
        return Err(bad(pos, "trailing bytes after the last field"));
    }
    Ok(())
}

/// The fields of an ErrorResponse or NoticeResponse, validated at parse time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorFields<'a> {
    body: &'a [u8],
}

impl<'a> ErrorFields<'a> {
    /// The `(field code, value)` pairs: `C` SQLSTATE, `M` message, `D` detail, `H` hint, ...
    pub fn iter(&self) -> impl Iterator<Item = (u8, &'a [u8])> + 'a {
        let mut rest = self.body;
        std::iter::from_fn(move || {
            let (&code, tail) = rest.split_first()?;
            if code == 0 {
                return None;
            }
            let end = memchr::memchr(0, tail)?;
            rest = tail.get(end + 1..)?;
            Some((code, &tail[..end]))
        })
    }
}

/// A ParameterDescription: the type OIDs of a statement's parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParameterDescription<'a> {
    oids: &'a [u8],
}

impl ParameterDescription<'_> {
    /// The number of parameters.
    pub fn len(&self) -> usize {
        self.oids.len() / 4
    }

    /// Whether the statement takes no parameters.
    pub fn is_empty(&self) -> bool {
        self.oids.is_empty()
    }

    /// The parameter type OIDs in order.
    pub fn types(&self) -> impl Iterator<Item = Oid> + '_ {
        self.oids
            .chunks_exact(4)
            .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
    }
}

/// A RowDescription, validated at parse time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowDescription<'a> {
    count: u16,
    body: &'a [u8],
}

/// One column of a RowDescription.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldDescription<'a> {
    /// The column name.
    pub name: &'a str,
    /// The OID of the table the column comes from, or 0.
    pub table_oid: Oid,
    /// The column's attribute number in that table, or 0.
    pub column_id: i16,
    /// The data type's OID.
    pub type_oid: Oid,
    /// The data type's size (`pg_type.typlen`), negative for variable width.
    pub type_size: i16,
    /// The type modifier (`pg_attribute.atttypmod`).
    pub type_modifier: i32,
    /// The format the values will be sent in (always text in a Describe Statement answer).
    pub format: Format,
}

impl<'a> RowDescription<'a> {
    /// The number of columns.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// Whether there are no columns.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The columns in order.
    pub fn fields(&self) -> impl Iterator<Item = FieldDescription<'a>> + 'a {
        let mut r = Reader {
            buf: self.body,
            pos: 0,
            tag: b'T',
            base: 7,
        };
        (0..self.count).map_while(move |_| field_description(&mut r).ok())
    }
}

fn field_description<'a>(r: &mut Reader<'a>) -> Result<FieldDescription<'a>, DecodeError> {
    Ok(FieldDescription {
        name: r.str("column name")?,
        table_oid: r.u32("table OID")?,
        column_id: r.i16("column number")?,
        type_oid: r.u32("type OID")?,
        type_size: r.i16("type size")?,
        type_modifier: r.i32("type modifier")?,
        format: Format::from_code(r.i16("format code")?),
    })
}

/// A bounds-checked cursor over a message body; errors name the offset from the type byte.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    tag: u8,
    base: usize,
}

impl<'a> Reader<'a> {
    fn err(&self, what: &'static str) -> DecodeError {
        DecodeError::malformed(self.tag, self.base + self.pos, what)
    }

    fn take<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], DecodeError> {
        let bytes = self
            .buf
            .get(self.pos..self.pos + N)
            .and_then(|s| <[u8; N]>::try_from(s).ok())
            .ok_or_else(|| self.err(what))?;
        self.pos += N;
        Ok(bytes)
    }

    fn u8(&mut self, what: &'static str) -> Result<u8, DecodeError> {
        Ok(self.take::<1>(what)?[0])
    }

    fn i16(&mut self, what: &'static str) -> Result<i16, DecodeError> {
        self.take(what).map(i16::from_be_bytes)
    }

    fn u16(&mut self, what: &'static str) -> Result<u16, DecodeError> {
        self.take(what).map(u16::from_be_bytes)
    }

    fn i32(&mut self, what: &'static str) -> Result<i32, DecodeError> {
        self.take(what).map(i32::from_be_bytes)
    }

    fn u32(&mut self, what: &'static str) -> Result<u32, DecodeError> {
        self.take(what).map(u32::from_be_bytes)
    }

    fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], DecodeError> {
        let s = self
            .buf
            .get(self.pos..self.pos + n)
            .ok_or_else(|| self.err(what))?;
        self.pos += n;
        Ok(s)
    }

    fn cstr(&mut self, what: &'static str) -> Result<&'a [u8], DecodeError> {
        let rest = self.buf.get(self.pos..).unwrap_or_default();
        let end = memchr::memchr(0, rest).ok_or_else(|| self.err(what))?;
        self.pos += end + 1;
        Ok(&rest[..end])
    }

    fn str(&mut self, what: &'static str) -> Result<&'a str, DecodeError> {
        let at = self.base + self.pos;
        let s = self.cstr(what)?;
        std::str::from_utf8(s).map_err(|e| {
            DecodeError::new(
                DecodeErrorKind::InvalidUtf8,
                self.tag,
                at + e.valid_up_to(),
                what,
            )
        })
    }

    fn rest(&mut self) -> &'a [u8] {
        let s = self.buf.get(self.pos..).unwrap_or_default();
        self.pos = self.buf.len();
        s
    }

    fn end(&self, what: &'static str) -> Result<(), DecodeError> {
        if self.pos == self.buf.len() {
            Ok(())
        } else {
            Err(self.err(what))
        }
    }
}

/// The type byte and total length (type byte included) of the message at the start of `buf`,
/// once its 5-byte header is there. Errors on a length outside the protocol's range.
#[inline]
pub fn header(buf: &[u8]) -> Result<Option<(u8, usize)>, DecodeError> {
    let Some(&[tag, a, b, c, d]) = buf.first_chunk::<5>() else {
        return Ok(None);
    };
    let len = u32::from_be_bytes([a, b, c, d]) as usize;
    if !(4..=MAX_MESSAGE_LEN).contains(&len) {
        return Err(DecodeError::new(
            DecodeErrorKind::InvalidLength,
            tag,
            1,
            "message length outside 4 ..= 1 GiB",
        ));
    }
    Ok(Some((tag, len + 1)))
}

/// Parses the message at the start of `buf`: `Ok(None)` if it is not all there yet, else the
/// message and the number of bytes it took.
pub fn parse(buf: &[u8]) -> Result<Option<(Message<'_>, usize)>, DecodeError> {
    let Some((tag, total)) = header(buf)? else {
        return Ok(None);
    };
    let Some(body) = buf.get(5..total) else {
        return Ok(None);
    };
    parse_body(tag, body).map(|m| Some((m, total)))
}

/// Parses a message body (the bytes after the 5-byte header) of type `tag`.
pub fn parse_body(tag: u8, body: &[u8]) -> Result<Message<'_>, DecodeError> {
    let mut r = Reader {
        buf: body,
        pos: 0,
        tag,
        base: 5,
    };
    let empty = |r: &Reader<'_>, m| r.end("unexpected bytes in an empty message").map(|()| m);
    let message = match tag {
        b'R' => Message::Authentication(authentication(&mut r)?),
        b'K' => {
            let process_id = r.i32("process ID")?;
            let secret_key = r.rest();
            if secret_key.len() < 4 {
                return Err(r.err("secret key shorter than 4 bytes"));
            }
            Message::BackendKeyData {
                process_id,
                secret_key,
            }
        }
        b'2' => empty(&r, Message::BindComplete)?,
        b'3' => empty(&r, Message::CloseComplete)?,
        b'C' => Message::CommandComplete {
            tag: r.str("command tag")?,
        },
        b'd' => Message::CopyData(r.rest()),
        b'c' => empty(&r, Message::CopyDone)?,
        b'G' => Message::CopyInResponse(copy_response(&mut r)?),
        b'H' => Message::CopyOutResponse(copy_response(&mut r)?),
        b'W' => Message::CopyBothResponse(copy_response(&mut r)?),
        b'D' => {
            let count = r.u16("field count")?;
            let start = r.pos;
            for _ in 0..count {
                let len = r.i32("field length")?;
                if len >= 0 {
                    r.bytes(len as usize, "field value")?;
                } else if len != -1 {
                    return Err(r.err("negative field length other than -1"));
                }
            }
            r.end("trailing bytes after the last field")?;
            Message::DataRow(DataRow {
                count,
                fields: &body[start..],
            })
        }
        b'I' => empty(&r, Message::EmptyQueryResponse)?,
        b'E' => Message::ErrorResponse(error_fields(&mut r)?),
        b'N' => Message::NoticeResponse(error_fields(&mut r)?),
        b'V' => {
            let len = r.i32("result length")?;
            let value = if len < 0 {
                None
            } else {
                Some(r.bytes(len as usize, "result value")?)
            };
            r.end("trailing bytes after the result")?;
            Message::FunctionCallResponse(value)
        }
        b'v' => {
            let newest_minor = r.i32("newest minor version")?;
            let count = r.i32("option count")?;
            let start = r.pos;
            for _ in 0..count.max(0) {
                r.cstr("unrecognized option name")?;
            }
            r.end("trailing bytes after the options")?;
            Message::NegotiateProtocolVersion {
                newest_minor,
                unrecognized: &body[start..],
            }
        }
        b'n' => empty(&r, Message::NoData)?,
        b'A' => {
            let process_id = r.i32("process ID")?;
            let channel = r.str("channel name")?;
            let payload = r.str("payload")?;
            r.end("trailing bytes after the payload")?;
            Message::NotificationResponse {
                process_id,
                channel,
                payload,
            }
        }
        b't' => {
            let count = r.u16("parameter count")? as usize;
            let oids = r.bytes(count * 4, "parameter type OIDs")?;
            r.end("trailing bytes after the parameter types")?;
            Message::ParameterDescription(ParameterDescription { oids })
        }
        b'S' => {
            let name = r.str("parameter name")?;
            let value = r.str("parameter value")?;
            r.end("trailing bytes after the parameter value")?;
            Message::ParameterStatus { name, value }
        }
        b'1' => empty(&r, Message::ParseComplete)?,
        b's' => empty(&r, Message::PortalSuspended)?,
        b'Z' => {
            let status = match r.u8("transaction status")? {
                b'I' => TransactionStatus::Idle,
                b'T' => TransactionStatus::InTransaction,
                b'E' => TransactionStatus::Failed,
                _ => {
                    return Err(DecodeError::malformed(
                        tag,
                        5,
                        "transaction status not I, T or E",
                    ));
                }
            };
            empty(&r, Message::ReadyForQuery(status))?
        }
        b'T' => {
            let count = r.u16("column count")?;
            let start = r.pos;
            for _ in 0..count {
                field_description(&mut r)?;
            }
            r.end("trailing bytes after the last column")?;
            Message::RowDescription(RowDescription {
                count,
                body: &body[start..],
            })
        }
        _ => {
            return Err(DecodeError::new(
                DecodeErrorKind::UnknownMessage,
                tag,
                0,
                "not a backend message type",
            ));
        }
    };
    Ok(message)
}

fn authentication<'a>(r: &mut Reader<'a>) -> Result<Authentication<'a>, DecodeError> {
    let auth = match r.i32("authentication code")? {
        0 => Authentication::Ok,
        3 => Authentication::CleartextPassword,
        5 => Authentication::Md5Password {
            salt: r.take("MD5 salt")?,
        },
        10 => {
            let start = r.pos;
            loop {
                if r.cstr("SASL mechanism")?.is_empty() {
                    break;
                }
            }
            Authentication::Sasl {
                mechanisms: &r.buf[start..r.pos],
            }
        }
        11 => Authentication::SaslContinue(r.rest()),
        12 => Authentication::SaslFinal(r.rest()),
        code => {
            r.rest();
            Authentication::Unsupported(code)
        }
    };
    r.end("trailing bytes in authentication message")?;
    Ok(auth)
}

fn copy_response<'a>(r: &mut Reader<'a>) -> Result<CopyResponse<'a>, DecodeError> {
    let format = match r.u8("copy format")? {
        0 => Format::Text,
        1 => Format::Binary,
        _ => return Err(r.err("copy format not 0 or 1")),
    };
    let count = r.u16("column count")? as usize;
    let column_formats = r.bytes(count * 2, "column formats")?;
    r.end("trailing bytes after the column formats")?;
    Ok(CopyResponse {
        format,
        column_formats,
    })
}

fn error_fields<'a>(r: &mut Reader<'a>) -> Result<ErrorFields<'a>, DecodeError> {
    let start = r.pos;
    loop {
        if r.u8("field code")? == 0 {
            break;
        }
        r.cstr("field value")?;
    }
    r.end("trailing bytes after the terminator")?;
    Ok(ErrorFields {
        body: &r.buf[start..],
    })
}

#[cfg(test)]
#[path = "backend_tests.rs"]
mod tests;
