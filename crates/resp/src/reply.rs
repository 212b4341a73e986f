//! Reply encoder: RESP2/RESP3 replies written straight into one output buffer per read batch.

/// The output buffer of one connection and the protocol version its replies use.
#[derive(Debug, Default)]
pub struct Out {
    /// Encoded replies not yet written to the socket.
    pub buf: Vec<u8>,
    /// True once the client said `HELLO 3`.
    pub resp3: bool,
}

/// The kind of aggregate whose length is only known after its elements are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregate {
    /// An array of `n` elements.
    Array,
    /// A map of `n` pairs; `n * 2` elements in RESP2.
    Map,
    /// A set of `n` members (an array in RESP2).
    Set,
}

/// A placeholder for an aggregate header, see [`Out::begin_deferred`].
#[derive(Debug)]
pub struct Deferred {
    at: usize,
    kind: Aggregate,
}

impl Out {
    /// An empty RESP2 buffer with room for a typical batch of replies.
    pub fn new() -> Self {
        Self {
            buf: Vec::with_capacity(16 * 1024),
            resp3: false,
        }
    }

    fn head(&mut self, tag: u8, n: impl itoa::Integer) {
        self.buf.push(tag);
        self.buf
            .extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
        self.buf.extend_from_slice(b"\r\n");
    }

    /// The simple string `+OK`.
    pub fn ok(&mut self) {
        self.buf.extend_from_slice(b"+OK\r\n");
    }

    /// A simple string reply; `s` must not contain CR or LF.
    pub fn simple(&mut self, s: &str) {
        self.buf.push(b'+');
        self.buf.extend_from_slice(s.as_bytes());
        self.buf.extend_from_slice(b"\r\n");
    }

    /// An error reply; `msg` starts with its code (`ERR`, `WRONGTYPE`, ...). CR and LF inside are
    /// replaced by spaces, as Redis does, so the reply stays one line.
    pub fn error(&mut self, msg: &str) {
        self.buf.push(b'-');
        self.buf.extend(
            msg.bytes()
                .map(|c| if c == b'\r' || c == b'\n' { b' ' } else { c }),
        );
        self.buf.extend_from_slice(b"\r\n");
    }

    /// An integer reply.
    pub fn int(&mut self, n: i64) {
        self.head(b':', n);
    }

    /// A bulk string reply.
    pub fn bulk(&mut self, data: &[u8]) {
        self.head(b'$', data.len());
        self.buf.extend_from_slice(data);
        self.buf.extend_from_slice(b"\r\n");
    }

    /// A bulk string holding the decimal form of `n`.
    pub fn bulk_int(&mut self, n: i64) {
        let mut b = itoa::Buffer::new();
        self.bulk(b.format(n).as_bytes());
    }

    /// A verbatim text string in RESP3 (INFO, CLIENT LIST), a bulk string in RESP2.
    pub fn verbatim(&mut self, text: &[u8]) {
        if self.resp3 {
            self.head(b'=', text.len() + 4);
            self.buf.extend_from_slice(b"txt:");
        } else {
            self.head(b'$', text.len());
        }
        self.buf.extend_from_slice(text);
        self.buf.extend_from_slice(b"\r\n");
    }

    /// The null bulk string (`$-1` in RESP2, `_` in RESP3).
    pub fn null(&mut self) {
        self.buf
            .extend_from_slice(if self.resp3 { b"_\r\n" } else { b"$-1\r\n" });
    }

    /// The null array (`*-1` in RESP2, `_` in RESP3).
    pub fn null_array(&mut self) {
        self.buf
            .extend_from_slice(if self.resp3 { b"_\r\n" } else { b"*-1\r\n" });
    }

    /// An array header of `n` elements; the elements follow.
    pub fn array(&mut self, n: usize) {
        self.head(b'*', n);
    }

    /// A map header of `n` pairs (a flat array of `2n` in RESP2).
    pub fn map(&mut self, n: usize) {
        if self.resp3 {
            self.head(b'%', n)
        } else {
            self.head(b'*', n * 2)
        }
    }

    /// A set header (an array in RESP2).
    pub fn set(&mut self, n: usize) {
        self.head(if self.resp3 { b'~' } else { b'*' }, n);
    }

    /// A push header for pub/sub messages (an array in RESP2).
    pub fn push(&mut self, n: usize) {
        self.head(if self.resp3 { b'>' } else { b'*' }, n);
    }

    /// A double: RESP3 `,` type, or a bulk string formatted like `%.17g` in RESP2.
    pub fn double(&mut self, value: f64) {
        let mut text = Vec::with_capacity(24);
        crate::num::push_g17(&mut text, value);
        if self.resp3 {
            self.buf.push(b',');
            self.buf.extend_from_slice(&text);
            self.buf.extend_from_slice(b"\r\n");
        } else {
            self.bulk(&text);
        }
    }

    /// A boolean: RESP3 `#t`/`#f`, the integers 1/0 in RESP2.
    pub fn boolean(&mut self, value: bool) {
        if self.resp3 {
            self.buf
                .extend_from_slice(if value { b"#t\r\n" } else { b"#f\r\n" });
        } else {
            self.int(i64::from(value));
        }
    }

    /// Reserves the place of an aggregate header whose length is not known yet.
    pub fn begin_deferred(&mut self, kind: Aggregate) -> Deferred {
        Deferred {
            at: self.buf.len(),
            kind,
        }
    }

    /// Inserts the header reserved by [`Out::begin_deferred`] for `n` elements (pairs for maps).
    pub fn end_deferred(&mut self, deferred: Deferred, n: usize) {
        let mut header = Vec::with_capacity(12);
        let (tag, count) = match (deferred.kind, self.resp3) {
            (Aggregate::Array, _) | (Aggregate::Set, false) => (b'*', n),
            (Aggregate::Map, false) => (b'*', n * 2),
            (Aggregate::Map, true) => (b'%', n),
            (Aggregate::Set, true) => (b'~', n),
        };
        header.push(tag);
        header.extend_from_slice(itoa::Buffer::new().format(count).as_bytes());
        header.extend_from_slice(b"\r\n");
        self.buf.splice(deferred.at..deferred.at, header);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resp2_and_resp3_shapes() {
        let mut o = Out::new();
        o.null();
        o.map(2);
        o.double(1.5);
        o.boolean(true);
        assert_eq!(o.buf, b"$-1\r\n*4\r\n$3\r\n1.5\r\n:1\r\n");
        let mut o = Out {
            resp3: true,
            ..Out::new()
        };
        o.null();
        o.map(2);
        o.double(1.5);
        o.boolean(true);
        assert_eq!(o.buf, b"_\r\n%2\r\n,1.5\r\n#t\r\n");
    }

    #[test]
    fn deferred_header() {
        let mut o = Out::new();
        o.ok();
        let d = o.begin_deferred(Aggregate::Array);
        o.bulk(b"a");
        o.int(1);
        o.end_deferred(d, 2);
        assert_eq!(o.buf, b"+OK\r\n*2\r\n$1\r\na\r\n:1\r\n");
        o.buf.clear();
        o.error("ERR bad\r\nthing");
        assert_eq!(o.buf, b"-ERR bad  thing\r\n");
    }
}
