//! DUMP/RESTORE payloads in Redis's serialization: one RDB value (format version 10, as Redis 7.0 writes it), the 2-byte version and the CRC-64 (Jones) footer. Sans-I/O.
//!
//! Written: strings, lists (quicklist of listpacks), sets, hashes and sorted sets (binary
//! scores) in the plain encodings Redis 7.0 reads, and streams with their consumer groups
//! (`stream`). Read: every encoding Redis 7.0 writes for those types (listpacks, intsets,
//! quicklists, LZF-compressed strings) and the older ziplist ones.

mod packed;
mod stream;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;

use super::db::Value;
use super::{CompactBytes, Hash, Key, Set, ZSet};

/// The RDB format version written in the footer, and the newest one read.
pub const RDB_VERSION: u16 = 10;

const TYPE_STRING: u8 = 0;
const TYPE_LIST: u8 = 1;
const TYPE_SET: u8 = 2;
const TYPE_ZSET: u8 = 3;
const TYPE_HASH: u8 = 4;
const TYPE_ZSET_2: u8 = 5;
const TYPE_LIST_ZIPLIST: u8 = 10;
const TYPE_SET_INTSET: u8 = 11;
const TYPE_ZSET_ZIPLIST: u8 = 12;
const TYPE_HASH_ZIPLIST: u8 = 13;
const TYPE_LIST_QUICKLIST: u8 = 14;
const TYPE_HASH_LISTPACK: u8 = 16;
const TYPE_ZSET_LISTPACK: u8 = 17;
const TYPE_LIST_QUICKLIST_2: u8 = 18;
const TYPE_STREAM_LISTPACKS: u8 = 15;
const TYPE_STREAM_LISTPACKS_2: u8 = 19;

/// Quicklist node containers (RDB_TYPE_LIST_QUICKLIST_2).
const NODE_PLAIN: u64 = 1;
const NODE_PACKED: u64 = 2;
/// Elements and bytes per written list node (Redis's list-max-listpack-size -2 is 8 KiB).
const NODE_MAX_ITEMS: usize = 128;
const NODE_MAX_BYTES: usize = 8 * 1024;

/// The longest string a payload may decompress to (Redis's proto-max-bulk-len default).
const MAX_STRING: usize = 512 * 1024 * 1024;

/// Why a payload was refused; the texts are Redis's RESTORE errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RdbError {
    /// Too short, from a newer format, or the checksum does not match.
    #[error("ERR DUMP payload version or checksum are wrong")]
    Footer,
    /// The value inside does not decode; the detail names what failed (for logs and tests).
    #[error("ERR Bad data format")]
    Format(&'static str),
}

type Result<T> = std::result::Result<T, RdbError>;

fn crc64(bytes: &[u8]) -> u64 {
    const CRC: crc::Crc<u64> = crc::Crc::<u64>::new(&crc::CRC_64_REDIS);
    CRC.checksum(bytes)
}

/// The DUMP payload of `value`.
pub fn dump(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    match value {
        Value::Str(s) => {
            out.push(TYPE_STRING);
            write_string(&mut out, s);
        }
        Value::List(list) => {
            out.push(TYPE_LIST_QUICKLIST_2);
            write_list(&mut out, list);
        }
        Value::Set(set) => {
            out.push(TYPE_SET);
            write_len(&mut out, set.len() as u64);
            for member in set.iter() {
                write_string(&mut out, member);
            }
        }
        Value::Hash(hash) => {
            out.push(TYPE_HASH);
            write_len(&mut out, hash.len() as u64);
            for (field, value) in hash.iter() {
                write_string(&mut out, field);
                write_string(&mut out, value);
            }
        }
        Value::ZSet(zset) => {
            out.push(TYPE_ZSET_2);
            write_len(&mut out, zset.len() as u64);
            for (member, score) in zset.iter() {
                write_string(&mut out, member);
                out.extend_from_slice(&score.to_le_bytes());
            }
        }
        Value::Stream(s) => {
            out.push(TYPE_STREAM_LISTPACKS_2);
            stream::write_stream(&mut out, s);
        }
    }
    with_footer(&out)
}

/// `body` followed by the version and checksum footer (DUMP's payload shape).
pub fn with_footer(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + 10);
    out.extend_from_slice(body);
    out.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = crc64(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

fn write_len(out: &mut Vec<u8>, len: u64) {
    if len < 1 << 6 {
        out.push(len as u8);
    } else if len < 1 << 14 {
        out.push(0x40 | (len >> 8) as u8);
        out.push((len & 0xFF) as u8);
    } else if let Ok(len) = u32::try_from(len) {
        out.push(0x80);
        out.extend_from_slice(&len.to_be_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&len.to_be_bytes());
    }
}

fn write_string(out: &mut Vec<u8>, s: &[u8]) {
    write_len(out, s.len() as u64);
    out.extend_from_slice(s);
}

/// A list as quicklist nodes, each a listpack of at most 128 elements and about 8 KiB.
fn write_list(out: &mut Vec<u8>, list: &VecDeque<Key>) {
    let mut nodes: Vec<(usize, usize)> = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, item) in list.iter().enumerate() {
        if i > start && (i - start >= NODE_MAX_ITEMS || bytes + item.len() > NODE_MAX_BYTES) {
            nodes.push((start, i));
            start = i;
            bytes = 0;
        }
        bytes += item.len() + 11;
    }
    if start < list.len() {
        nodes.push((start, list.len()));
    }
    write_len(out, nodes.len() as u64);
    for (from, to) in nodes {
        write_len(out, NODE_PACKED);
        let lp = packed::write_listpack(list.range(from..to).map(|k| k.as_slice()));
        write_string(out, &lp);
    }
}

/// Checks the footer of a payload and decodes the value in it.
pub fn restore(payload: &[u8]) -> Result<Value> {
    let body_len = payload.len().checked_sub(10).ok_or(RdbError::Footer)?;
    let (body, footer) = payload.split_at(body_len);
    let version = u16::from_le_bytes([footer[0], footer[1]]);
    if version > RDB_VERSION {
        return Err(RdbError::Footer);
    }
    let mut crc = [0u8; 8];
    crc.copy_from_slice(&footer[2..]);
    if u64::from_le_bytes(crc) != crc64(&payload[..body_len + 2]) {
        return Err(RdbError::Footer);
    }
    let mut r = Reader { buf: body, pos: 0 };
    let kind = r.byte("type")?;
    let value = r.value(kind)?;
    if r.pos != body.len() {
        return Err(RdbError::Format("trailing bytes"));
    }
    Ok(value)
}

/// A cursor over a payload's body; every read checks the bounds.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

/// A length, or a string's special encoding.
enum Len {
    Plain(u64),
    Encoded(u8),
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).ok_or(RdbError::Format(what))?;
        let slice = self.buf.get(self.pos..end).ok_or(RdbError::Format(what))?;
        self.pos = end;
        Ok(slice)
    }

    fn byte(&mut self, what: &'static str) -> Result<u8> {
        Ok(self.take(1, what)?[0])
    }

    fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn raw_len(&mut self) -> Result<Len> {
        let b = self.byte("length")?;
        Ok(match b >> 6 {
            0 => Len::Plain(u64::from(b & 0x3F)),
            1 => Len::Plain((u64::from(b & 0x3F) << 8) | u64::from(self.byte("length")?)),
            2 => match b {
                0x80 => {
                    let s = self.take(4, "length")?;
                    Len::Plain(u64::from(u32::from_be_bytes([s[0], s[1], s[2], s[3]])))
                }
                0x81 => {
                    let mut s = [0u8; 8];
                    s.copy_from_slice(self.take(8, "length")?);
                    Len::Plain(u64::from_be_bytes(s))
                }
                _ => return Err(RdbError::Format("length encoding")),
            },
            _ => Len::Encoded(b & 0x3F),
        })
    }

    fn len(&mut self) -> Result<usize> {
        match self.raw_len()? {
            Len::Plain(n) => usize::try_from(n).map_err(|_| RdbError::Format("length")),
            Len::Encoded(_) => Err(RdbError::Format("length")),
        }
    }

    /// A count of items that each take at least one byte: more than remain is corrupt, and
    /// nothing is allocated for it.
    fn count(&mut self) -> Result<usize> {
        let n = self.len()?;
        if n == 0 {
            return Err(RdbError::Format("empty collection"));
        }
        if n > self.remaining() {
            return Err(RdbError::Format("count past the end"));
        }
        Ok(n)
    }

    fn string(&mut self) -> Result<Vec<u8>> {
        match self.raw_len()? {
            Len::Plain(n) => {
                let n = usize::try_from(n).map_err(|_| RdbError::Format("string length"))?;
                Ok(self.take(n, "string")?.to_vec())
            }
            Len::Encoded(0) => Ok((self.byte("int8")? as i8).to_string().into_bytes()),
            Len::Encoded(1) => {
                let s = self.take(2, "int16")?;
                Ok(i16::from_le_bytes([s[0], s[1]]).to_string().into_bytes())
            }
            Len::Encoded(2) => {
                let s = self.take(4, "int32")?;
                Ok(i32::from_le_bytes([s[0], s[1], s[2], s[3]])
                    .to_string()
                    .into_bytes())
            }
            Len::Encoded(3) => {
                let compressed = self.len()?;
                let len = self.len()?;
                let data = self.take(compressed, "lzf data")?;
                // LZF expands at most ~130 times (a back reference of 264 bytes costs 2 or
                // 3); a larger claim is corrupt and must not size an allocation.
                if len == 0 || len > MAX_STRING || len > compressed.saturating_mul(140) {
                    return Err(RdbError::Format("lzf length"));
                }
                match lzf::decompress(data, len) {
                    Ok(out) if out.len() == len => Ok(out),
                    _ => Err(RdbError::Format("lzf data")),
                }
            }
            Len::Encoded(_) => Err(RdbError::Format("string encoding")),
        }
    }

    /// An old-style score: a length byte and the text (253 NaN, 254 +inf, 255 -inf).
    fn text_score(&mut self) -> Result<f64> {
        match self.byte("score")? {
            253 => Err(RdbError::Format("NaN score")),
            254 => Ok(f64::INFINITY),
            255 => Ok(f64::NEG_INFINITY),
            n => parse_score(self.take(usize::from(n), "score")?),
        }
    }

    fn binary_score(&mut self) -> Result<f64> {
        let mut s = [0u8; 8];
        s.copy_from_slice(self.take(8, "score")?);
        let score = f64::from_le_bytes(s);
        if score.is_nan() {
            return Err(RdbError::Format("NaN score"));
        }
        Ok(score)
    }

    fn value(&mut self, kind: u8) -> Result<Value> {
        Ok(match kind {
            TYPE_STRING => Value::Str(CompactBytes::from(self.string()?)),
            TYPE_LIST => {
                let n = self.count()?;
                let items = (0..n).map(|_| self.string()).collect::<Result<Vec<_>>>()?;
                list(items)
            }
            TYPE_SET => {
                let n = self.count()?;
                let items = (0..n).map(|_| self.string()).collect::<Result<Vec<_>>>()?;
                set(items)?
            }
            TYPE_ZSET | TYPE_ZSET_2 => {
                let n = self.count()?;
                let mut pairs = Vec::with_capacity(n);
                for _ in 0..n {
                    let member = self.string()?;
                    let score = if kind == TYPE_ZSET {
                        self.text_score()?
                    } else {
                        self.binary_score()?
                    };
                    pairs.push((member, score));
                }
                zset(pairs)?
            }
            TYPE_HASH => {
                let n = self.count()?;
                let mut items = Vec::with_capacity(n.saturating_mul(2).min(self.remaining()));
                for _ in 0..n {
                    items.push(self.string()?);
                    items.push(self.string()?);
                }
                hash(items)?
            }
            TYPE_LIST_ZIPLIST => list(nonempty(packed::ziplist(&self.string()?)?)?),
            TYPE_SET_INTSET => set(nonempty(packed::intset(&self.string()?)?)?)?,
            TYPE_ZSET_ZIPLIST => zset(scored(packed::ziplist(&self.string()?)?)?)?,
            TYPE_ZSET_LISTPACK => zset(scored(packed::listpack(&self.string()?)?)?)?,
            TYPE_HASH_ZIPLIST => hash(nonempty(packed::ziplist(&self.string()?)?)?)?,
            TYPE_HASH_LISTPACK => hash(nonempty(packed::listpack(&self.string()?)?)?)?,
            TYPE_LIST_QUICKLIST | TYPE_LIST_QUICKLIST_2 => {
                let nodes = self.count()?;
                let mut items = Vec::new();
                for _ in 0..nodes {
                    let container = if kind == TYPE_LIST_QUICKLIST_2 {
                        self.len()? as u64
                    } else {
                        NODE_PACKED
                    };
                    let blob = self.string()?;
                    match container {
                        NODE_PLAIN => items.push(blob),
                        NODE_PACKED if kind == TYPE_LIST_QUICKLIST => {
                            items.extend(packed::ziplist(&blob)?);
                        }
                        NODE_PACKED => items.extend(packed::listpack(&blob)?),
                        _ => return Err(RdbError::Format("quicklist container")),
                    }
                }
                list(nonempty(items)?)
            }
            TYPE_STREAM_LISTPACKS | TYPE_STREAM_LISTPACKS_2 => {
                Value::Stream(Box::new(self.stream(kind == TYPE_STREAM_LISTPACKS_2)?))
            }
            _ => return Err(RdbError::Format("value type")),
        })
    }
}

fn nonempty(items: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>> {
    if items.is_empty() {
        Err(RdbError::Format("empty collection"))
    } else {
        Ok(items)
    }
}

fn parse_score(text: &[u8]) -> Result<f64> {
    match crate::num::parse_f64(text) {
        Some(score) if !score.is_nan() => Ok(score),
        _ => Err(RdbError::Format("score")),
    }
}

/// Member/score pairs from a packed sorted set (member, then score as text).
fn scored(items: Vec<Vec<u8>>) -> Result<Vec<(Vec<u8>, f64)>> {
    if items.is_empty() || !items.len().is_multiple_of(2) {
        return Err(RdbError::Format("sorted set pairs"));
    }
    let mut pairs = Vec::with_capacity(items.len() / 2);
    let mut it = items.into_iter();
    while let (Some(member), Some(score)) = (it.next(), it.next()) {
        let score = parse_score(&score)?;
        pairs.push((member, score));
    }
    Ok(pairs)
}

fn list(items: Vec<Vec<u8>>) -> Value {
    Value::List(Box::new(items.into_iter().map(Key::from).collect()))
}

fn set(items: Vec<Vec<u8>>) -> Result<Value> {
    let n = items.len();
    let set: Set = items.into_iter().map(Key::from).collect();
    if set.len() != n {
        return Err(RdbError::Format("duplicate set member"));
    }
    Ok(Value::Set(Box::new(set)))
}

fn hash(items: Vec<Vec<u8>>) -> Result<Value> {
    if !items.len().is_multiple_of(2) {
        return Err(RdbError::Format("hash pairs"));
    }
    let n = items.len() / 2;
    let mut hash = Hash::default();
    let mut it = items.into_iter();
    while let (Some(field), Some(value)) = (it.next(), it.next()) {
        hash.insert(Key::from(field), Key::from(value));
    }
    if hash.len() != n {
        return Err(RdbError::Format("duplicate hash field"));
    }
    Ok(Value::Hash(Box::new(hash)))
}

fn zset(pairs: Vec<(Vec<u8>, f64)>) -> Result<Value> {
    let mut zset = ZSet::default();
    for (member, score) in pairs {
        if zset.insert(&member, score).is_some() {
            return Err(RdbError::Format("duplicate sorted set member"));
        }
    }
    Ok(Value::ZSet(Box::new(zset)))
}
