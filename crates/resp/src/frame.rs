//! Sans-I/O request parser: RESP multibulk and inline commands, arguments as spans of the read buffer.

use std::ops::Range;

/// Longest inline request or multibulk/bulk header line Redis accepts (PROTO_INLINE_MAX_SIZE).
pub const INLINE_MAX: usize = 64 * 1024;
/// Most arguments in one multibulk request (Redis's limit for 32-bit counts).
pub const MULTIBULK_MAX: i64 = i32::MAX as i64;
/// Default largest bulk argument (proto-max-bulk-len, 512 MB).
pub const BULK_MAX_DEFAULT: i64 = 512 * 1024 * 1024;

/// What went wrong while parsing a request; every kind closes the connection, as in Redis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    /// A `*` line longer than the inline limit without its CRLF.
    #[error("Protocol error: too big mbulk count string")]
    MbulkCountTooBig,
    /// A `*` count that is not an integer or out of range.
    #[error("Protocol error: invalid multibulk length")]
    InvalidMultibulkLength,
    /// A `$` line longer than the inline limit without its CRLF.
    #[error("Protocol error: too big bulk count string")]
    BulkCountTooBig,
    /// An argument of a multibulk request that does not start with `$`.
    #[error("Protocol error: expected '$', got '{}'", char::from(*.0))]
    ExpectedDollar(u8),
    /// A `$` length that is not an integer or exceeds proto-max-bulk-len.
    #[error("Protocol error: invalid bulk length")]
    InvalidBulkLength,
    /// An inline request longer than the inline limit.
    #[error("Protocol error: too big inline request")]
    InlineTooBig,
    /// More than 10 arguments before AUTH.
    #[error("Protocol error: unauthenticated multibulk length")]
    UnauthenticatedMultibulkLength,
    /// An argument over 16 KB before AUTH.
    #[error("Protocol error: unauthenticated bulk length")]
    UnauthenticatedBulkLength,
    /// An inline request with an unterminated quote.
    #[error("Protocol error: unbalanced quotes in request")]
    UnbalancedQuotes,
}

/// The outcome of one parse step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parsed {
    /// A full command of `consumed` bytes; its arguments are in [`RequestParser::spans`],
    /// relative to the read buffer, or to the scratch buffer when `inline` is true.
    Command {
        /// Bytes of the buffer the request took.
        consumed: usize,
        /// True for an inline command (`SET k v` typed by hand), whose spans index the scratch
        /// buffer.
        inline: bool,
    },
    /// An empty request (`*0`, `*-1` or a blank line) of `consumed` bytes, to skip.
    Empty {
        /// Bytes to skip.
        consumed: usize,
    },
    /// More bytes are needed; at least `want` bytes in total are expected.
    Incomplete {
        /// The least total size of the request, a hint for how much to read next.
        want: usize,
    },
}

/// A resumable request parser. Arguments are never copied for multibulk requests: spans index
/// the buffer given to [`RequestParser::parse`], which must start at the request's first byte
/// and keep its earlier bytes until the request completes.
#[derive(Debug)]
pub struct RequestParser {
    spans: Vec<Range<usize>>,
    bulk_max: i64,
    /// Multibulk in progress: arguments still expected and the offset after the last one parsed.
    pending: Option<(usize, usize)>,
    /// The client has not authenticated yet: Redis's small request limits apply.
    unauthenticated: bool,
}

/// Most arguments an unauthenticated client may send in one request.
pub const UNAUTH_MULTIBULK_MAX: i64 = 10;
/// Largest argument an unauthenticated client may send.
pub const UNAUTH_BULK_MAX: i64 = 16 * 1024;

impl Default for RequestParser {
    fn default() -> Self {
        Self::new(BULK_MAX_DEFAULT)
    }
}

impl RequestParser {
    /// A parser that accepts bulk arguments up to `bulk_max` bytes.
    pub fn new(bulk_max: i64) -> Self {
        Self {
            spans: Vec::with_capacity(16),
            bulk_max,
            pending: None,
            unauthenticated: false,
        }
    }

    /// Applies (or lifts) the limits for clients that have not authenticated, so a stranger
    /// cannot make the server buffer large requests.
    pub fn set_unauthenticated(&mut self, unauthenticated: bool) {
        self.unauthenticated = unauthenticated;
    }

    /// Changes the largest bulk accepted (CONFIG SET proto-max-bulk-len).
    pub fn set_bulk_max(&mut self, bulk_max: i64) {
        self.bulk_max = bulk_max;
    }

    /// The argument spans of the command last returned as [`Parsed::Command`].
    pub fn spans(&self) -> &[Range<usize>] {
        &self.spans
    }

    /// Parses one request from the start of `buf`. Inline arguments are unescaped into `scratch`.
    pub fn parse(&mut self, buf: &[u8], scratch: &mut Vec<u8>) -> Result<Parsed, ProtocolError> {
        if self.pending.is_none() {
            match buf.first() {
                None => return Ok(Parsed::Incomplete { want: 1 }),
                Some(b'*') => {}
                Some(_) => return self.parse_inline(buf, scratch),
            }
        }
        self.parse_multibulk(buf)
    }

    fn parse_multibulk(&mut self, buf: &[u8]) -> Result<Parsed, ProtocolError> {
        let (mut remaining, mut pos) = match self.pending {
            Some(state) => state,
            None => {
                let Some((line, next)) = line_at(buf, 1) else {
                    if buf.len() > INLINE_MAX {
                        return Err(ProtocolError::MbulkCountTooBig);
                    }
                    return Ok(Parsed::Incomplete {
                        want: buf.len() + 1,
                    });
                };
                let count = parse_len(line).ok_or(ProtocolError::InvalidMultibulkLength)?;
                if count > MULTIBULK_MAX {
                    return Err(ProtocolError::InvalidMultibulkLength);
                }
                if self.unauthenticated && count > UNAUTH_MULTIBULK_MAX {
                    return Err(ProtocolError::UnauthenticatedMultibulkLength);
                }
                if count <= 0 {
                    return Ok(Parsed::Empty { consumed: next });
                }
                self.spans.clear();
                let count =
                    usize::try_from(count).map_err(|_| ProtocolError::InvalidMultibulkLength)?;
                self.spans.reserve(count.min(1024));
                (count, next)
            }
        };
        while remaining > 0 {
            let Some(&first) = buf.get(pos) else {
                self.pending = Some((remaining, pos));
                return Ok(Parsed::Incomplete { want: pos + 1 });
            };
            if first != b'$' {
                self.pending = None;
                return Err(ProtocolError::ExpectedDollar(first));
            }
            let Some((line, next)) = line_at(buf, pos + 1) else {
                if buf.len() - pos > INLINE_MAX {
                    self.pending = None;
                    return Err(ProtocolError::BulkCountTooBig);
                }
                self.pending = Some((remaining, pos));
                return Ok(Parsed::Incomplete {
                    want: buf.len() + 1,
                });
            };
            let len = match parse_len(line) {
                Some(len) if self.unauthenticated && len > UNAUTH_BULK_MAX => {
                    self.pending = None;
                    return Err(ProtocolError::UnauthenticatedBulkLength);
                }
                Some(len) if (0..=self.bulk_max).contains(&len) => len,
                _ => {
                    self.pending = None;
                    return Err(ProtocolError::InvalidBulkLength);
                }
            };
            let len = usize::try_from(len).map_err(|_| ProtocolError::InvalidBulkLength)?;
            let end = next + len;
            if buf.len() < end + 2 {
                self.pending = Some((remaining, pos));
                return Ok(Parsed::Incomplete { want: end + 2 });
            }
            // Redis does not check the two bytes after a bulk either; it skips them.
            self.spans.push(next..end);
            pos = end + 2;
            remaining -= 1;
        }
        self.pending = None;
        Ok(Parsed::Command {
            consumed: pos,
            inline: false,
        })
    }

    fn parse_inline(&mut self, buf: &[u8], scratch: &mut Vec<u8>) -> Result<Parsed, ProtocolError> {
        let Some(newline) = memchr::memchr(b'\n', buf) else {
            if buf.len() > INLINE_MAX {
                return Err(ProtocolError::InlineTooBig);
            }
            return Ok(Parsed::Incomplete {
                want: buf.len() + 1,
            });
        };
        let mut line = &buf[..newline];
        if let [rest @ .., b'\r'] = line {
            line = rest;
        }
        self.spans.clear();
        scratch.clear();
        split_inline(line, scratch, &mut self.spans)?;
        if self.spans.is_empty() {
            return Ok(Parsed::Empty {
                consumed: newline + 1,
            });
        }
        Ok(Parsed::Command {
            consumed: newline + 1,
            inline: true,
        })
    }
}

/// The line starting at `from`, without its CRLF, and the offset after the CRLF.
fn line_at(buf: &[u8], from: usize) -> Option<(&[u8], usize)> {
    let rest = buf.get(from..)?;
    let cr = memchr::memchr(b'\r', rest)?;
    rest.get(cr + 1)?;
    Some((&rest[..cr], from + cr + 2))
}

/// Parses a length line the way Redis's string2ll does (no sign '+', no leading zeros).
fn parse_len(line: &[u8]) -> Option<i64> {
    crate::num::parse_i64(line)
}

/// Splits an inline request into arguments like Redis's sdssplitargs (quotes and escapes).
fn split_inline(
    line: &[u8],
    scratch: &mut Vec<u8>,
    spans: &mut Vec<Range<usize>>,
) -> Result<(), ProtocolError> {
    let mut i = 0;
    loop {
        while line.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
            i += 1;
        }
        if i >= line.len() {
            return Ok(());
        }
        let start = scratch.len();
        let mut in_double = false;
        let mut in_single = false;
        loop {
            let c = line.get(i).copied();
            if in_double {
                match c {
                    None => return Err(ProtocolError::UnbalancedQuotes),
                    Some(b'\\') if is_hex_escape(line, i) => {
                        let hi = hex_value(line[i + 2]);
                        let lo = hex_value(line[i + 3]);
                        scratch.push(hi * 16 + lo);
                        i += 3;
                    }
                    Some(b'\\') if i + 1 < line.len() => {
                        i += 1;
                        scratch.push(match line[i] {
                            b'n' => b'\n',
                            b'r' => b'\r',
                            b't' => b'\t',
                            b'b' => 8,
                            b'a' => 7,
                            other => other,
                        });
                    }
                    Some(b'"') => {
                        // A closing quote must be followed by a space or the end.
                        if line.get(i + 1).is_some_and(|c| !c.is_ascii_whitespace()) {
                            return Err(ProtocolError::UnbalancedQuotes);
                        }
                        i += 1;
                        break;
                    }
                    Some(other) => scratch.push(other),
                }
            } else if in_single {
                match c {
                    None => return Err(ProtocolError::UnbalancedQuotes),
                    Some(b'\\') if line.get(i + 1) == Some(&b'\'') => {
                        i += 1;
                        scratch.push(b'\'');
                    }
                    Some(b'\'') => {
                        if line.get(i + 1).is_some_and(|c| !c.is_ascii_whitespace()) {
                            return Err(ProtocolError::UnbalancedQuotes);
                        }
                        i += 1;
                        break;
                    }
                    Some(other) => scratch.push(other),
                }
            } else {
                match c {
                    None => break,
                    Some(c) if c.is_ascii_whitespace() => break,
                    Some(b'"') => in_double = true,
                    Some(b'\'') => in_single = true,
                    Some(other) => scratch.push(other),
                }
            }
            i += 1;
        }
        spans.push(start..scratch.len());
    }
}

fn is_hex_escape(line: &[u8], i: usize) -> bool {
    line.get(i + 1) == Some(&b'x')
        && line.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
        && line.get(i + 3).is_some_and(u8::is_ascii_hexdigit)
}

fn hex_value(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        b'A'..=b'F' => c - b'A' + 10,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(parser: &RequestParser, buf: &[u8], scratch: &[u8], inline: bool) -> Vec<Vec<u8>> {
        let base = if inline { scratch } else { buf };
        parser
            .spans()
            .iter()
            .map(|r| base[r.clone()].to_vec())
            .collect()
    }

    #[test]
    fn multibulk_in_one_piece() {
        let mut p = RequestParser::default();
        let mut s = Vec::new();
        let buf = b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*1";
        let r = p.parse(buf, &mut s).unwrap();
        assert_eq!(
            r,
            Parsed::Command {
                consumed: 20,
                inline: false
            }
        );
        assert_eq!(
            args(&p, buf, &s, false),
            vec![b"GET".to_vec(), b"k".to_vec()]
        );
    }

    #[test]
    fn multibulk_resumes_byte_by_byte() {
        let full = b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n";
        let mut p = RequestParser::default();
        let mut s = Vec::new();
        for n in 0..full.len() {
            assert!(
                matches!(
                    p.parse(&full[..n], &mut s).unwrap(),
                    Parsed::Incomplete { .. }
                ),
                "at {n}"
            );
        }
        let r = p.parse(full, &mut s).unwrap();
        assert_eq!(
            r,
            Parsed::Command {
                consumed: full.len(),
                inline: false
            }
        );
        assert_eq!(args(&p, full, &s, false)[2], b"value");
    }

    #[test]
    fn inline_with_quotes() {
        let mut p = RequestParser::default();
        let mut s = Vec::new();
        let buf = b"set \"a b\" 'c\\'d' \"\\x41\\n\"\r\n";
        let r = p.parse(buf, &mut s).unwrap();
        assert_eq!(
            r,
            Parsed::Command {
                consumed: buf.len(),
                inline: true
            }
        );
        assert_eq!(
            args(&p, buf, &s, true),
            vec![
                b"set".to_vec(),
                b"a b".to_vec(),
                b"c'd".to_vec(),
                b"A\n".to_vec()
            ]
        );
        assert_eq!(
            p.parse(b"get \"a\r\n", &mut s),
            Err(ProtocolError::UnbalancedQuotes)
        );
        assert_eq!(
            p.parse(b"\r\n", &mut s).unwrap(),
            Parsed::Empty { consumed: 2 }
        );
        assert_eq!(
            p.parse(b"PING\n", &mut s).unwrap(),
            Parsed::Command {
                consumed: 5,
                inline: true
            }
        );
    }

    #[test]
    fn errors_match_redis() {
        let mut s = Vec::new();
        let mut p = RequestParser::default();
        assert_eq!(
            p.parse(b"*x\r\n", &mut s),
            Err(ProtocolError::InvalidMultibulkLength)
        );
        assert_eq!(
            p.parse(b"*1\r\n+x\r\n", &mut s),
            Err(ProtocolError::ExpectedDollar(b'+'))
        );
        assert_eq!(
            p.parse(b"*1\r\n$-2\r\n", &mut s),
            Err(ProtocolError::InvalidBulkLength)
        );
        assert_eq!(
            ProtocolError::ExpectedDollar(b'+').to_string(),
            "Protocol error: expected '$', got '+'"
        );
        let mut small = RequestParser::new(10);
        assert_eq!(
            small.parse(b"*1\r\n$11\r\n", &mut s),
            Err(ProtocolError::InvalidBulkLength)
        );
        assert_eq!(
            p.parse(b"*0\r\n", &mut s).unwrap(),
            Parsed::Empty { consumed: 4 }
        );
        assert_eq!(
            p.parse(b"*-1\r\n", &mut s).unwrap(),
            Parsed::Empty { consumed: 5 }
        );
        let long = vec![b'a'; INLINE_MAX + 1];
        assert_eq!(p.parse(&long, &mut s), Err(ProtocolError::InlineTooBig));
    }
}
