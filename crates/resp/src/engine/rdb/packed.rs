//! The packed blobs inside RDB values: listpacks (read and written), ziplists and intsets (read), each element as its string bytes.

use super::RdbError;

type Result<T> = std::result::Result<T, RdbError>;

fn bad(what: &'static str) -> RdbError {
    RdbError::Format(what)
}

/// A forward cursor over a blob; every read checks the bounds.
struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).ok_or(bad(what))?;
        let slice = self.buf.get(self.pos..end).ok_or(bad(what))?;
        self.pos = end;
        Ok(slice)
    }

    fn byte(&mut self, what: &'static str) -> Result<u8> {
        Ok(self.take(1, what)?[0])
    }

    fn le(&mut self, n: usize, what: &'static str) -> Result<u64> {
        let bytes = self.take(n, what)?;
        Ok(bytes
            .iter()
            .rev()
            .fold(0u64, |acc, b| (acc << 8) | u64::from(*b)))
    }
}

/// Sign-extends the low `bits` of `v`.
fn signed(v: u64, bits: u32) -> i64 {
    let shift = 64 - bits;
    ((v << shift) as i64) >> shift
}

/// Bytes of a listpack entry's back-length for an entry of `len` bytes.
fn backlen_size(len: usize) -> usize {
    match len {
        0..=127 => 1,
        128..16383 => 2,
        16383..2097151 => 3,
        2097151..268435455 => 4,
        _ => 5,
    }
}

/// The elements of a listpack, integers as their decimal text.
pub fn listpack(blob: &[u8]) -> Result<Vec<Vec<u8>>> {
    let mut c = Cursor { buf: blob, pos: 0 };
    let total = c.le(4, "listpack header")?;
    if total != blob.len() as u64 {
        return Err(bad("listpack size"));
    }
    let declared = c.le(2, "listpack header")? as usize;
    let mut out = Vec::with_capacity(declared.min(blob.len()));
    loop {
        let start = c.pos;
        let b = c.byte("listpack entry")?;
        if b == 0xFF {
            break;
        }
        let element = if b & 0x80 == 0 {
            (b & 0x7F).to_string().into_bytes()
        } else if b & 0xC0 == 0x80 {
            c.take(usize::from(b & 0x3F), "listpack string")?.to_vec()
        } else if b & 0xE0 == 0xC0 {
            let v = (u64::from(b & 0x1F) << 8) | u64::from(c.byte("listpack int")?);
            signed(v, 13).to_string().into_bytes()
        } else if b & 0xF0 == 0xE0 {
            let len = (usize::from(b & 0x0F) << 8) | usize::from(c.byte("listpack string")?);
            c.take(len, "listpack string")?.to_vec()
        } else {
            match b {
                0xF0 => {
                    let len = c.le(4, "listpack string")? as usize;
                    c.take(len, "listpack string")?.to_vec()
                }
                0xF1 => signed(c.le(2, "listpack int")?, 16)
                    .to_string()
                    .into_bytes(),
                0xF2 => signed(c.le(3, "listpack int")?, 24)
                    .to_string()
                    .into_bytes(),
                0xF3 => signed(c.le(4, "listpack int")?, 32)
                    .to_string()
                    .into_bytes(),
                0xF4 => (c.le(8, "listpack int")? as i64).to_string().into_bytes(),
                _ => return Err(bad("listpack encoding")),
            }
        };
        let len = c.pos - start;
        c.take(backlen_size(len), "listpack backlen")?;
        out.push(element);
    }
    if c.pos != blob.len() {
        return Err(bad("listpack end"));
    }
    if declared != 0xFFFF && declared != out.len() {
        return Err(bad("listpack count"));
    }
    Ok(out)
}

/// The elements of a ziplist (RDB version 9 and older), integers as their decimal text.
pub fn ziplist(blob: &[u8]) -> Result<Vec<Vec<u8>>> {
    let mut c = Cursor { buf: blob, pos: 0 };
    let total = c.le(4, "ziplist header")?;
    if total != blob.len() as u64 {
        return Err(bad("ziplist size"));
    }
    c.le(4, "ziplist header")?;
    let declared = c.le(2, "ziplist header")? as usize;
    let mut out = Vec::with_capacity(declared.min(blob.len()));
    loop {
        let first = c.byte("ziplist entry")?;
        if first == 0xFF {
            break;
        }
        if first == 0xFE {
            c.take(4, "ziplist prevlen")?;
        }
        let b = c.byte("ziplist encoding")?;
        let element = match b >> 6 {
            0 => c.take(usize::from(b & 0x3F), "ziplist string")?.to_vec(),
            1 => {
                let len = (usize::from(b & 0x3F) << 8) | usize::from(c.byte("ziplist string")?);
                c.take(len, "ziplist string")?.to_vec()
            }
            2 => {
                let bytes = c.take(4, "ziplist string")?;
                let len = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize;
                c.take(len, "ziplist string")?.to_vec()
            }
            _ => {
                let v: i64 = match b {
                    0xC0 => signed(c.le(2, "ziplist int")?, 16),
                    0xD0 => signed(c.le(4, "ziplist int")?, 32),
                    0xE0 => c.le(8, "ziplist int")? as i64,
                    0xF0 => signed(c.le(3, "ziplist int")?, 24),
                    0xFE => signed(c.le(1, "ziplist int")?, 8),
                    0xF1..=0xFD => i64::from(b & 0x0F) - 1,
                    _ => return Err(bad("ziplist encoding")),
                };
                v.to_string().into_bytes()
            }
        };
        out.push(element);
    }
    if c.pos != blob.len() {
        return Err(bad("ziplist end"));
    }
    if declared != 0xFFFF && declared != out.len() {
        return Err(bad("ziplist count"));
    }
    Ok(out)
}

/// The members of an intset, as decimal text.
pub fn intset(blob: &[u8]) -> Result<Vec<Vec<u8>>> {
    let mut c = Cursor { buf: blob, pos: 0 };
    let width = c.le(4, "intset header")? as usize;
    if !matches!(width, 2 | 4 | 8) {
        return Err(bad("intset encoding"));
    }
    let len = c.le(4, "intset header")? as usize;
    if Some(blob.len()) != len.checked_mul(width).and_then(|n| n.checked_add(8)) {
        return Err(bad("intset size"));
    }
    (0..len)
        .map(|_| {
            let v = c.le(width, "intset member")?;
            Ok(signed(v, (width * 8) as u32).to_string().into_bytes())
        })
        .collect()
}

/// Writes a listpack of `items`, each as a string entry.
pub fn write_listpack<'a>(items: impl Iterator<Item = &'a [u8]>) -> Vec<u8> {
    let items: Vec<Item<'a>> = items.map(Item::Bytes).collect();
    write_listpack_items(&items)
}

/// A listpack element to write: an integer (in the smallest of listpack's integer encodings) or
/// a string.
#[derive(Debug, Clone, Copy)]
pub enum Item<'a> {
    Int(i64),
    Bytes(&'a [u8]),
}

/// A listpack of `items`, integers encoded as Redis's lpAppendInteger encodes them.
pub fn write_listpack_items(items: &[Item<'_>]) -> Vec<u8> {
    let mut lp = vec![0u8; 6];
    for item in items {
        let start = lp.len();
        match *item {
            Item::Bytes(bytes) => write_string_entry(&mut lp, bytes),
            Item::Int(v) => write_int_entry(&mut lp, v),
        }
        let entry_len = lp.len() - start;
        write_backlen(&mut lp, entry_len);
    }
    lp.push(0xFF);
    let total = lp.len() as u32;
    lp[..4].copy_from_slice(&total.to_le_bytes());
    let declared = items.len().min(0xFFFF) as u16;
    lp[4..6].copy_from_slice(&declared.to_le_bytes());
    lp
}

fn write_string_entry(lp: &mut Vec<u8>, item: &[u8]) {
    let len = item.len();
    if len < 64 {
        lp.push(0x80 | len as u8);
    } else if len < 4096 {
        lp.push(0xE0 | (len >> 8) as u8);
        lp.push((len & 0xFF) as u8);
    } else {
        lp.push(0xF0);
        lp.extend_from_slice(&(len as u32).to_le_bytes());
    }
    lp.extend_from_slice(item);
}

fn write_int_entry(lp: &mut Vec<u8>, v: i64) {
    let le = v.to_le_bytes();
    if (0..=127).contains(&v) {
        lp.push(v as u8);
    } else if (-4096..=4095).contains(&v) {
        let u = (v & 0x1FFF) as u16;
        lp.push(0xC0 | (u >> 8) as u8);
        lp.push((u & 0xFF) as u8);
    } else if i16::try_from(v).is_ok() {
        lp.push(0xF1);
        lp.extend_from_slice(&le[..2]);
    } else if (-(1 << 23)..(1 << 23)).contains(&v) {
        lp.push(0xF2);
        lp.extend_from_slice(&le[..3]);
    } else if i32::try_from(v).is_ok() {
        lp.push(0xF3);
        lp.extend_from_slice(&le[..4]);
    } else {
        lp.push(0xF4);
        lp.extend_from_slice(&le);
    }
}

/// The back-length of an entry of `len` bytes: 7 bits per byte, the most significant first,
/// every byte but the first flagged with the high bit (so it reads backwards from its end).
fn write_backlen(out: &mut Vec<u8>, len: usize) {
    let n = backlen_size(len);
    for i in (0..n).rev() {
        let group = ((len >> (7 * i)) & 0x7F) as u8;
        out.push(if i == n - 1 { group } else { group | 0x80 });
    }
}
