//! PostgreSQL's binary COPY format, both ways: rows encoded into a buffer, rows decoded from one.

use bytes::{Buf, BufMut, BytesMut};

/// The OID of bytea, for array headers.
const BYTEA_OID: i32 = 17;

/// Appends one row's values to a binary COPY buffer.
pub struct RowWriter<'b>(pub &'b mut BytesMut);

impl RowWriter<'_> {
    /// Starts a row of `fields` values.
    pub fn start(buf: &mut BytesMut, fields: i16) -> RowWriter<'_> {
        buf.put_i16(fields);
        RowWriter(buf)
    }

    pub fn int2(&mut self, v: i16) -> &mut Self {
        self.0.put_i32(2);
        self.0.put_i16(v);
        self
    }

    pub fn int4(&mut self, v: i32) -> &mut Self {
        self.0.put_i32(4);
        self.0.put_i32(v);
        self
    }

    pub fn int8(&mut self, v: i64) -> &mut Self {
        self.0.put_i32(8);
        self.0.put_i64(v);
        self
    }

    pub fn float8(&mut self, v: f64) -> &mut Self {
        self.0.put_i32(8);
        self.0.put_f64(v);
        self
    }

    /// Bytes of a bytea or text column (text must be UTF-8: only fixed names go there).
    pub fn bytes(&mut self, v: &[u8]) -> &mut Self {
        self.0.put_i32(len_i32(v.len()));
        self.0.put_slice(v);
        self
    }

    #[cfg(test)]
    pub fn null(&mut self) -> &mut Self {
        self.0.put_i32(-1);
        self
    }

    /// A one-dimensional bytea[] of `items`.
    pub fn bytea_array<'i>(&mut self, items: impl ExactSizeIterator<Item = &'i [u8]>) -> &mut Self {
        let at = self.0.len();
        self.0.put_i32(0);
        let count = items.len();
        self.0.put_i32(i32::from(count > 0));
        self.0.put_i32(0);
        self.0.put_i32(BYTEA_OID);
        if count > 0 {
            self.0.put_i32(len_i32(count));
            self.0.put_i32(1);
        }
        for item in items {
            self.0.put_i32(len_i32(item.len()));
            self.0.put_slice(item);
        }
        let len = len_i32(self.0.len() - at - 4);
        self.0[at..at + 4].copy_from_slice(&len.to_be_bytes());
        self
    }
}

/// Lengths past i32 cannot be a PostgreSQL value (1 GB is its limit); they are written as the
/// largest, which the server then refuses with an error naming the row, never a panic here.
fn len_i32(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// Why binary COPY data could not be read.
#[derive(Debug, thiserror::Error)]
#[error("malformed binary COPY data from PostgreSQL: {0}")]
pub struct Malformed(pub &'static str);

/// Reads rows out of binary COPY data arriving in chunks (rows may span chunks).
#[derive(Debug, Default)]
pub struct RowReader {
    buf: BytesMut,
    header_done: bool,
    finished: bool,
}

impl RowReader {
    /// Adds a chunk of data.
    pub fn feed(&mut self, chunk: &[u8]) {
        self.buf.extend_from_slice(chunk);
    }

    /// Calls `row` for each complete row buffered, with its fields (`None` for NULL).
    pub fn drain(
        &mut self,
        fields: &mut Vec<Option<std::ops::Range<usize>>>,
        mut row: impl FnMut(&[u8], &[Option<std::ops::Range<usize>>]) -> Result<(), crate::Error>,
    ) -> Result<(), crate::Error> {
        if !self.header_done {
            // Signature (11), flags (4), extension length (4), extension.
            if self.buf.len() < 19 {
                return Ok(());
            }
            if &self.buf[..11] != b"PGCOPY\n\xff\r\n\0" {
                return Err(Malformed("bad signature").into());
            }
            let ext = u32::from_be_bytes([self.buf[15], self.buf[16], self.buf[17], self.buf[18]])
                as usize;
            if self.buf.len() < 19 + ext {
                return Ok(());
            }
            self.buf.advance(19 + ext);
            self.header_done = true;
        }
        let mut pos = 0;
        let data = &self.buf[..];
        loop {
            if self.finished || data.len() < pos + 2 {
                break;
            }
            let count = i16::from_be_bytes([data[pos], data[pos + 1]]);
            if count == -1 {
                self.finished = true;
                pos += 2;
                break;
            }
            let count = usize::try_from(count).map_err(|_| Malformed("negative field count"))?;
            let mut at = pos + 2;
            fields.clear();
            let mut complete = true;
            for _ in 0..count {
                let Some(len) = data.get(at..at + 4) else {
                    complete = false;
                    break;
                };
                let len = i32::from_be_bytes([len[0], len[1], len[2], len[3]]);
                at += 4;
                if len < 0 {
                    fields.push(None);
                    continue;
                }
                let end = at + len as usize;
                if end > data.len() {
                    complete = false;
                    break;
                }
                fields.push(Some(at..end));
                at = end;
            }
            if !complete {
                break;
            }
            row(data, fields)?;
            pos = at;
        }
        self.buf.advance(pos);
        Ok(())
    }
}

/// Field `i` of a decoded row, or an error naming the column.
pub fn field<'d>(
    data: &'d [u8],
    fields: &[Option<std::ops::Range<usize>>],
    i: usize,
) -> Result<Option<&'d [u8]>, Malformed> {
    match fields.get(i) {
        Some(Some(r)) => data
            .get(r.clone())
            .map(Some)
            .ok_or(Malformed("field out of range")),
        Some(None) => Ok(None),
        None => Err(Malformed("missing field")),
    }
}

/// Appends `bytes` as lowercase hex digits (a key in a notification or in a SQL literal,
/// where hex needs no escaping).
pub fn push_hex(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.reserve(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
}

pub fn as_i16(v: &[u8]) -> Result<i16, Malformed> {
    <[u8; 2]>::try_from(v)
        .map(i16::from_be_bytes)
        .map_err(|_| Malformed("int2 of the wrong size"))
}

pub fn as_i32(v: &[u8]) -> Result<i32, Malformed> {
    <[u8; 4]>::try_from(v)
        .map(i32::from_be_bytes)
        .map_err(|_| Malformed("int4 of the wrong size"))
}

pub fn as_i64(v: &[u8]) -> Result<i64, Malformed> {
    <[u8; 8]>::try_from(v)
        .map(i64::from_be_bytes)
        .map_err(|_| Malformed("int8 of the wrong size"))
}

pub fn as_f64(v: &[u8]) -> Result<f64, Malformed> {
    <[u8; 8]>::try_from(v)
        .map(f64::from_be_bytes)
        .map_err(|_| Malformed("float8 of the wrong size"))
}

/// The elements of a one-dimensional bytea[] in binary form.
pub fn bytea_array(v: &[u8]) -> Result<Vec<&[u8]>, Malformed> {
    let mut cur = v;
    let ndim = take_i32(&mut cur)?;
    let _flags = take_i32(&mut cur)?;
    let oid = take_i32(&mut cur)?;
    if oid != BYTEA_OID {
        return Err(Malformed("an array whose elements are not bytea"));
    }
    if ndim == 0 {
        return Ok(Vec::new());
    }
    if ndim != 1 {
        return Err(Malformed("array of more than one dimension"));
    }
    let count = usize::try_from(take_i32(&mut cur)?).map_err(|_| Malformed("array length"))?;
    let _lbound = take_i32(&mut cur)?;
    let mut items = Vec::with_capacity(count.min(cur.len() / 4));
    for _ in 0..count {
        let len = take_i32(&mut cur)?;
        let len = usize::try_from(len).map_err(|_| Malformed("a NULL array element"))?;
        if cur.len() < len {
            return Err(Malformed("an array element past the array's end"));
        }
        let (item, rest) = cur.split_at(len);
        items.push(item);
        cur = rest;
    }
    Ok(items)
}

fn take_i32(cur: &mut &[u8]) -> Result<i32, Malformed> {
    if cur.len() < 4 {
        return Err(Malformed("an array cut short"));
    }
    let (head, rest) = cur.split_at(4);
    *cur = rest;
    as_i32(head)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_written_read_back_across_chunk_boundaries() {
        let mut buf = BytesMut::new();
        buf.put_slice(sluice_pg::BINARY_HEADER);
        RowWriter::start(&mut buf, 4)
            .int4(3)
            .bytes(b"key")
            .null()
            .bytea_array([&b"f"[..], b"v"].into_iter());
        RowWriter::start(&mut buf, 4)
            .int4(-1)
            .bytes(b"")
            .float8(1.5)
            .int8(7);
        buf.put_i16(-1);
        let mut reader = RowReader::default();
        let mut rows = Vec::new();
        let mut fields = Vec::new();
        for chunk in buf.chunks(3) {
            reader.feed(chunk);
            reader
                .drain(&mut fields, |data, f| {
                    let cols: Vec<Option<Vec<u8>>> = (0..f.len())
                        .map(|i| field(data, f, i).unwrap().map(<[u8]>::to_vec))
                        .collect();
                    rows.push(cols);
                    Ok(())
                })
                .unwrap();
        }
        assert_eq!(rows.len(), 2);
        assert_eq!(as_i32(rows[0][0].as_deref().unwrap()).unwrap(), 3);
        assert_eq!(rows[0][2], None);
        assert_eq!(
            bytea_array(rows[0][3].as_deref().unwrap()).unwrap(),
            vec![&b"f"[..], b"v"]
        );
        assert_eq!(as_f64(rows[1][2].as_deref().unwrap()).unwrap(), 1.5);
        assert_eq!(as_i64(rows[1][3].as_deref().unwrap()).unwrap(), 7);
    }

    /// A bytea[] as one field of a COPY buffer (its length, then the array), without the row's
    /// field count.
    fn encoded(items: &[Vec<u8>]) -> Vec<u8> {
        let mut buf = BytesMut::new();
        RowWriter(&mut buf).bytea_array(items.iter().map(Vec::as_slice));
        buf[4..].to_vec()
    }

    #[test]
    fn a_bytea_array_in_postgresql_binary_form() {
        // ndim 1, no NULLs, element OID 17, 2 elements from lower bound 1, then each element.
        let mut expected = Vec::new();
        for word in [1i32, 0, 17, 2, 1, 1] {
            expected.extend(word.to_be_bytes());
        }
        expected.extend(b"a");
        expected.extend(0i32.to_be_bytes());
        assert_eq!(encoded(&[b"a".to_vec(), Vec::new()]), expected);
        // The empty array has no dimension.
        let mut empty = Vec::new();
        for word in [0i32, 0, 17] {
            empty.extend(word.to_be_bytes());
        }
        assert_eq!(encoded(&[]), empty);
        assert!(bytea_array(&empty).unwrap().is_empty());
    }

    #[test]
    fn malformed_arrays_are_errors_naming_what_is_wrong() {
        let good = encoded(&[b"abc".to_vec(), b"d".to_vec()]);
        for cut in 0..good.len() {
            assert!(bytea_array(&good[..cut]).is_err(), "cut at {cut}");
        }
        let mut null = good.clone();
        null[20..24].copy_from_slice(&(-1i32).to_be_bytes());
        assert_eq!(bytea_array(&null).unwrap_err().0, "a NULL array element");
        let mut text = good.clone();
        text[8..12].copy_from_slice(&25i32.to_be_bytes());
        assert!(bytea_array(&text).is_err());
        let mut two = good;
        two[0..4].copy_from_slice(&2i32.to_be_bytes());
        assert!(bytea_array(&two).is_err());
    }

    proptest::proptest! {
        #[test]
        fn bytea_arrays_round_trip(
            items in proptest::collection::vec(proptest::collection::vec(proptest::num::u8::ANY, 0..40), 0..70)
        ) {
            let bytes = encoded(&items);
            let back: Vec<Vec<u8>> = bytea_array(&bytes).unwrap().into_iter().map(<[u8]>::to_vec).collect();
            proptest::prop_assert_eq!(back, items);
        }

        #[test]
        fn any_bytes_decode_or_fail_without_panicking(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..64),
            header in proptest::sample::select(vec![0usize, 12, 20]),
        ) {
            // Behind a plausible header too, so the element loop is reached.
            let mut v = encoded(&[b"x".to_vec()])[..header].to_vec();
            v.extend(bytes);
            let _ = bytea_array(&v);
        }
    }
}
