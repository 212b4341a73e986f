//! Bitmap commands on string values: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD and
//! BITFIELD_RO (with WRAP, SAT and FAIL overflow).

use super::common::typed;
use super::{Args, Cx, SYNTAX, WRONGTYPE};
use crate::engine::{CompactBytes, Value, WrongType};

const OFFSET_ERR: &str = "ERR bit offset is not an integer or out of range";

/// A bit offset argument; `#n` (BITFIELD) means n times the field width. Offsets whose byte is
/// past proto-max-bulk-len are refused as Redis refuses them (SETBIT at 2^32 included).
fn offset_arg(cx: &mut Cx<'_, '_>, arg: &[u8], field_bits: Option<u32>) -> Option<u64> {
    let (hash, digits) = match (arg.first(), field_bits) {
        (Some(b'#'), Some(_)) => (true, &arg[1..]),
        _ => (false, arg),
    };
    let max_bytes = cx
        .shared
        .bulk_max
        .load(std::sync::atomic::Ordering::Relaxed);
    let value = crate::num::parse_i64(digits).and_then(|n| {
        if hash {
            n.checked_mul(i64::from(field_bits.unwrap_or(1)))
        } else {
            Some(n)
        }
    });
    match value {
        Some(n) if n >= 0 && (n >> 3) < max_bytes => Some(n as u64),
        _ => {
            cx.out.error(OFFSET_ERR);
            None
        }
    }
}

fn get_bit(bytes: &[u8], offset: u64) -> bool {
    let byte = usize::try_from(offset >> 3).unwrap_or(usize::MAX);
    bytes
        .get(byte)
        .is_some_and(|b| b & (0x80 >> (offset & 7)) != 0)
}

fn set_bit(bytes: &mut [u8], offset: u64, on: bool) {
    let byte = (offset >> 3) as usize;
    let mask = 0x80u8 >> (offset & 7);
    if let Some(b) = bytes.get_mut(byte) {
        if on { *b |= mask } else { *b &= !mask }
    }
}

/// The string at `key` grown with zeros to hold bit `max_bit`; whether it was created or grown.
fn string_for_write<'s>(
    d: &'s mut crate::engine::Db,
    key: &[u8],
    max_bit: u64,
) -> Result<(&'s mut CompactBytes, bool), WrongType> {
    let need = usize::try_from(max_bit >> 3).unwrap_or(usize::MAX) + 1;
    let existed = d.string(key)?.is_some();
    let s = d.string_or_new(key)?;
    let before = s.len();
    s.grow_zeroed(need);
    let grown = !existed || s.len() != before;
    Ok((s, grown))
}

pub fn setbit(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some(offset) = offset_arg(cx, args.get(2), None) else {
        return;
    };
    let on = match crate::num::parse_i64(args.get(3)) {
        Some(0) => false,
        Some(1) => true,
        _ => {
            cx.out.error("ERR bit is not an integer or out of range");
            return;
        }
    };
    let db = cx.db();
    let key = args.get(1);
    let store = cx.store.get();
    let Some((s, grown)) = typed(cx.out, string_for_write(store.db(db), key, offset)) else {
        return;
    };
    let bytes = s.as_mut_slice();
    let old = get_bit(bytes, offset);
    if old != on {
        set_bit(bytes, offset, on);
    }
    if grown || old != on {
        store.touch(db, key);
    }
    cx.out.int(i64::from(old));
}

pub fn getbit(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some(offset) = offset_arg(cx, args.get(2), None) else {
        return;
    };
    let db = cx.db();
    let bit = match cx.store.get().db(db).string(args.get(1)) {
        Ok(s) => s.is_some_and(|s| get_bit(s, offset)),
        Err(WrongType) => {
            cx.out.error(WRONGTYPE);
            return;
        }
    };
    cx.out.int(i64::from(bit));
}

fn popcount(bytes: &[u8]) -> u64 {
    let mut chunks = bytes.chunks_exact(8);
    let mut n: u64 = chunks
        .by_ref()
        .map(|c| u64::from(u64::from_ne_bytes(c.try_into().unwrap_or([0; 8])).count_ones()))
        .sum();
    n += chunks
        .remainder()
        .iter()
        .map(|b| u64::from(b.count_ones()))
        .sum::<u64>();
    n
}

/// A `start end [BYTE|BIT]` range of BITCOUNT/BITPOS resolved against a string of `len` bytes:
/// (first byte, last byte, mask of bits to drop in the first byte, in the last byte), or None
/// when empty.
fn resolve_range(
    len: usize,
    start: i64,
    end: i64,
    bit_unit: bool,
) -> Option<(usize, usize, u8, u8)> {
    let total = if bit_unit {
        (len as i64) << 3
    } else {
        len as i64
    };
    let mut start = if start < 0 { total + start } else { start };
    let mut end = if end < 0 { total + end } else { end };
    start = start.max(0);
    end = end.max(0);
    if end >= total {
        end = total - 1;
    }
    if start > end {
        return None;
    }
    let (mut first_mask, mut last_mask) = (0u8, 0u8);
    if bit_unit {
        first_mask = !((1u16 << (8 - (start & 7))) - 1) as u8;
        last_mask = ((1u16 << (7 - (end & 7))) - 1) as u8;
        start >>= 3;
        end >>= 3;
    }
    Some((start as usize, end as usize, first_mask, last_mask))
}

fn unit_arg(cx: &mut Cx<'_, '_>, args: &Args<'_>, i: usize) -> Option<bool> {
    if i >= args.len() {
        Some(false)
    } else if args.is(i, "bit") {
        Some(true)
    } else if args.is(i, "byte") {
        Some(false)
    } else {
        cx.out.error(SYNTAX);
        None
    }
}

pub fn bitcount(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let db = cx.db();
    let key = args.get(1);
    let bytes: Vec<u8>;
    let s: &[u8] = match cx.store.get().db(db).string(key) {
        Ok(Some(s)) => {
            bytes = s.to_vec();
            &bytes
        }
        Ok(None) => {
            cx.out.int(0);
            return;
        }
        Err(WrongType) => {
            cx.out.error(WRONGTYPE);
            return;
        }
    };
    let range = match args.len() {
        2 => resolve_range(s.len(), 0, -1, false),
        4 | 5 => {
            let Some(start) = super::int_arg(cx.out, args.get(2)) else {
                return;
            };
            let Some(end) = super::int_arg(cx.out, args.get(3)) else {
                return;
            };
            if start < 0 && end < 0 && start > end {
                cx.out.int(0);
                return;
            }
            let Some(bit_unit) = unit_arg(cx, args, 4) else {
                return;
            };
            resolve_range(s.len(), start, end, bit_unit)
        }
        _ => {
            cx.out.error(SYNTAX);
            return;
        }
    };
    let Some((a, b, first_mask, last_mask)) = range else {
        cx.out.int(0);
        return;
    };
    let mut count = popcount(&s[a..=b]);
    count -= u64::from((s[a] & first_mask).count_ones());
    count -= u64::from((s[b] & last_mask).count_ones());
    cx.out.int(count as i64);
}

/// Position of the first bit equal to `bit` in `bytes`, or bytes.len() * 8 when none (for a
/// clear bit) / -1 (for a set bit), as Redis's redisBitpos.
fn first_bit(bytes: &[u8], bit: bool) -> i64 {
    let skip = if bit { 0u8 } else { 0xff };
    for (i, &b) in bytes.iter().enumerate() {
        if b != skip {
            let lead = if bit {
                b.leading_zeros()
            } else {
                (!b).leading_zeros()
            };
            return (i as i64) * 8 + i64::from(lead);
        }
    }
    if bit { -1 } else { (bytes.len() as i64) * 8 }
}

pub fn bitpos(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some(bit) = super::int_arg(cx.out, args.get(2)) else {
        return;
    };
    if bit != 0 && bit != 1 {
        cx.out.error("ERR The bit argument must be 1 or 0.");
        return;
    }
    let bit = bit == 1;
    let db = cx.db();
    let bytes: Vec<u8> = match cx.store.get().db(db).string(args.get(1)) {
        Ok(Some(s)) => s.to_vec(),
        Ok(None) => {
            cx.out.int(if bit { -1 } else { 0 });
            return;
        }
        Err(WrongType) => {
            cx.out.error(WRONGTYPE);
            return;
        }
    };
    let len = bytes.len();
    let mut end_given = false;
    let range = match args.len() {
        3 => resolve_range(len, 0, -1, false),
        4..=6 => {
            let Some(start) = super::int_arg(cx.out, args.get(3)) else {
                return;
            };
            let Some(bit_unit) = unit_arg(cx, args, 5) else {
                return;
            };
            let end = if args.len() >= 5 {
                let Some(end) = super::int_arg(cx.out, args.get(4)) else {
                    return;
                };
                end_given = true;
                end
            } else if bit_unit {
                ((len as i64) << 3) + 7
            } else {
                len as i64 - 1
            };
            resolve_range(len, start, end, bit_unit)
        }
        _ => {
            cx.out.error(SYNTAX);
            return;
        }
    };
    let Some((a, b, first_mask, last_mask)) = range else {
        cx.out.int(-1);
        return;
    };
    // Bits outside the range are forced to the opposite value so they are never found.
    let mut window = bytes[a..=b].to_vec();
    let force = |byte: &mut u8, mask: u8| {
        if bit { *byte &= !mask } else { *byte |= mask }
    };
    if let Some(f) = window.first_mut() {
        force(f, first_mask);
    }
    if let Some(l) = window.last_mut() {
        force(l, last_mask);
    }
    let pos = first_bit(&window, bit);
    if end_given && !bit && pos == (window.len() as i64) * 8 {
        cx.out.int(-1);
        return;
    }
    cx.out
        .int(if pos == -1 { -1 } else { pos + (a as i64) * 8 });
}

pub fn bitop(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let op = args.get(1).to_ascii_lowercase();
    if !matches!(op.as_slice(), b"and" | b"or" | b"xor" | b"not") {
        cx.out.error(SYNTAX);
        return;
    }
    if op == b"not" && args.len() != 4 {
        cx.out
            .error("ERR BITOP NOT must be called with a single source key.");
        return;
    }
    let db = cx.db();
    let store = cx.store.get();
    let mut sources: Vec<Option<Vec<u8>>> = Vec::with_capacity(args.len() - 3);
    for key in args.from(3) {
        match store.db(db).string(key) {
            Ok(s) => sources.push(s.map(|s| s.to_vec())),
            Err(WrongType) => {
                cx.out.error(WRONGTYPE);
                return;
            }
        }
    }
    let maxlen = sources.iter().flatten().map(Vec::len).max().unwrap_or(0);
    let dest = args.get(2);
    if maxlen == 0 {
        if store.db(db).remove(dest).is_some() {
            store.touch(db, dest);
        }
        cx.out.int(0);
        return;
    }
    let byte_at =
        |s: &Option<Vec<u8>>, j: usize| s.as_ref().and_then(|v| v.get(j)).copied().unwrap_or(0);
    let mut result = vec![0u8; maxlen];
    for (j, out) in result.iter_mut().enumerate() {
        let mut acc = byte_at(&sources[0], j);
        match op.as_slice() {
            b"not" => acc = !acc,
            b"and" => sources[1..].iter().for_each(|s| acc &= byte_at(s, j)),
            b"or" => sources[1..].iter().for_each(|s| acc |= byte_at(s, j)),
            _ => sources[1..].iter().for_each(|s| acc ^= byte_at(s, j)),
        }
        *out = acc;
    }
    store.db(db).set(dest, Value::Str(result.into()));
    store.touch(db, dest);
    cx.out.int(maxlen as i64);
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Overflow {
    Wrap,
    Sat,
    Fail,
}

#[derive(Clone, Copy)]
enum FieldOp {
    Get,
    Set(i64),
    IncrBy(i64),
}

#[derive(Clone, Copy)]
struct Field {
    op: FieldOp,
    offset: u64,
    bits: u32,
    signed: bool,
    overflow: Overflow,
}

fn type_arg(cx: &mut Cx<'_, '_>, arg: &[u8]) -> Option<(bool, u32)> {
    let signed = arg.first() == Some(&b'i');
    let valid_prefix = matches!(arg.first(), Some(b'i' | b'u'));
    let bits = crate::num::parse_i64(arg.get(1..).unwrap_or(&[]));
    match bits {
        Some(b) if valid_prefix && b >= 1 && b <= if signed { 64 } else { 63 } => {
            Some((signed, b as u32))
        }
        _ => {
            cx.out.error("ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.");
            None
        }
    }
}

/// Reads `bits` bits at `offset` (big-endian bit order, zeros past the end) as an unsigned value.
fn read_bits(bytes: &[u8], offset: u64, bits: u32) -> u64 {
    let mut v = 0u64;
    for i in 0..u64::from(bits) {
        v = (v << 1) | u64::from(get_bit(bytes, offset + i));
    }
    v
}

fn write_bits(bytes: &mut [u8], offset: u64, bits: u32, value: u64) {
    for i in 0..u64::from(bits) {
        let on = (value >> (u64::from(bits) - 1 - i)) & 1 == 1;
        set_bit(bytes, offset + i, on);
    }
}

fn sign_extend(v: u64, bits: u32) -> i64 {
    if bits == 64 {
        v as i64
    } else {
        let shift = 64 - bits;
        ((v << shift) as i64) >> shift
    }
}

/// The value a signed field takes for `value + incr`: None when it overflows under FAIL.
fn signed_result(value: i64, incr: i64, bits: u32, overflow: Overflow) -> Option<i64> {
    let max: i128 = (1i128 << (bits - 1)) - 1;
    let min: i128 = -max - 1;
    let sum = i128::from(value) + i128::from(incr);
    if sum >= min && sum <= max {
        return Some(sum as i64);
    }
    match overflow {
        Overflow::Fail => None,
        Overflow::Sat => Some(if sum > max { max as i64 } else { min as i64 }),
        Overflow::Wrap => Some(sign_extend((sum as u128 as u64) & mask(bits), bits)),
    }
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

fn unsigned_result(value: u64, incr: i64, bits: u32, overflow: Overflow) -> Option<u64> {
    let max = i128::from(mask(bits));
    let sum = i128::from(value) + i128::from(incr);
    if sum >= 0 && sum <= max {
        return Some(sum as u64);
    }
    match overflow {
        Overflow::Fail => None,
        Overflow::Sat => Some(if sum > max { max as u64 } else { 0 }),
        Overflow::Wrap => Some((sum as u128 as u64) & mask(bits)),
    }
}

fn bitfield_generic(cx: &mut Cx<'_, '_>, args: &Args<'_>, read_only: bool) {
    let mut fields = Vec::new();
    let mut overflow = Overflow::Wrap;
    let mut highest: Option<u64> = None;
    let mut j = 2;
    while j < args.len() {
        let remaining = args.len() - j - 1;
        let sub = args.get(j).to_ascii_lowercase();
        let kind = match sub.as_slice() {
            b"get" if remaining >= 2 => 0,
            b"set" if remaining >= 3 => 1,
            b"incrby" if remaining >= 3 => 2,
            b"overflow" if remaining >= 1 => {
                overflow = match args.get(j + 1).to_ascii_lowercase().as_slice() {
                    b"wrap" => Overflow::Wrap,
                    b"sat" => Overflow::Sat,
                    b"fail" => Overflow::Fail,
                    _ => {
                        cx.out.error("ERR Invalid OVERFLOW type specified");
                        return;
                    }
                };
                j += 2;
                continue;
            }
            _ => {
                cx.out.error(SYNTAX);
                return;
            }
        };
        let Some((signed, bits)) = type_arg(cx, args.get(j + 1)) else {
            return;
        };
        let Some(offset) = offset_arg(cx, args.get(j + 2), Some(bits)) else {
            return;
        };
        let op = if kind == 0 {
            FieldOp::Get
        } else {
            let top = offset + u64::from(bits) - 1;
            highest = Some(highest.map_or(top, |h: u64| h.max(top)));
            let Some(v) = super::int_arg(cx.out, args.get(j + 3)) else {
                return;
            };
            if kind == 1 {
                FieldOp::Set(v)
            } else {
                FieldOp::IncrBy(v)
            }
        };
        fields.push(Field {
            op,
            offset,
            bits,
            signed,
            overflow,
        });
        j += if kind == 0 { 3 } else { 4 };
    }
    let db = cx.db();
    let key = args.get(1);
    let store = cx.store.get();
    let Some(top) = highest else {
        let value = match store.db(db).string(key) {
            Ok(s) => s.map(|s| s.to_vec()).unwrap_or_default(),
            Err(WrongType) => {
                cx.out.error(WRONGTYPE);
                return;
            }
        };
        cx.out.array(fields.len());
        for f in &fields {
            let raw = read_bits(&value, f.offset, f.bits);
            if f.signed {
                cx.out.int(sign_extend(raw, f.bits));
            } else {
                cx.out.int(raw as i64);
            }
        }
        return;
    };
    if read_only {
        cx.out
            .error("ERR BITFIELD_RO only supports the GET subcommand");
        return;
    }
    let Some((s, grown)) = typed(cx.out, string_for_write(store.db(db), key, top)) else {
        return;
    };
    let bytes = s.as_mut_slice();
    let mut changes = 0;
    cx.out.array(fields.len());
    for f in &fields {
        let raw = read_bits(bytes, f.offset, f.bits);
        let (reply, new) = match (f.op, f.signed) {
            (FieldOp::Get, true) => (Some(sign_extend(raw, f.bits)), None),
            (FieldOp::Get, false) => (Some(raw as i64), None),
            (FieldOp::Set(v), true) => {
                let old = sign_extend(raw, f.bits);
                match signed_result(v, 0, f.bits, f.overflow) {
                    Some(n) => (Some(old), Some(n as u64 & mask(f.bits))),
                    None => (None, None),
                }
            }
            (FieldOp::Set(v), false) => {
                // A value outside the field's range overflows like Redis's check does.
                let candidate = if v < 0 {
                    match f.overflow {
                        Overflow::Fail => None,
                        Overflow::Sat => Some(mask(f.bits)),
                        Overflow::Wrap => Some(v as u64 & mask(f.bits)),
                    }
                } else {
                    unsigned_result(v as u64, 0, f.bits, f.overflow)
                };
                match candidate {
                    Some(n) => (Some(raw as i64), Some(n)),
                    None => (None, None),
                }
            }
            (FieldOp::IncrBy(v), true) => {
                match signed_result(sign_extend(raw, f.bits), v, f.bits, f.overflow) {
                    Some(n) => (Some(n), Some(n as u64 & mask(f.bits))),
                    None => (None, None),
                }
            }
            (FieldOp::IncrBy(v), false) => match unsigned_result(raw, v, f.bits, f.overflow) {
                Some(n) => (Some(n as i64), Some(n)),
                None => (None, None),
            },
        };
        match reply {
            Some(r) => cx.out.int(r),
            None => cx.out.null(),
        }
        if let Some(n) = new {
            write_bits(bytes, f.offset, f.bits, n);
            if grown || n != raw {
                changes += 1;
            }
        }
    }
    if changes > 0 {
        store.touch(db, key);
    }
}

pub fn bitfield(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    bitfield_generic(cx, args, false);
}

pub fn bitfield_ro(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    bitfield_generic(cx, args, true);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflow_modes_match_redis() {
        assert_eq!(signed_result(127, 1, 8, Overflow::Wrap), Some(-128));
        assert_eq!(signed_result(127, 1, 8, Overflow::Sat), Some(127));
        assert_eq!(signed_result(127, 1, 8, Overflow::Fail), None);
        assert_eq!(signed_result(-128, -1, 8, Overflow::Sat), Some(-128));
        assert_eq!(
            signed_result(i64::MAX, 1, 64, Overflow::Wrap),
            Some(i64::MIN)
        );
        assert_eq!(unsigned_result(255, 1, 8, Overflow::Wrap), Some(0));
        assert_eq!(unsigned_result(0, -1, 8, Overflow::Sat), Some(0));
        assert_eq!(unsigned_result(3, 10, 2, Overflow::Sat), Some(3));
    }

    #[test]
    fn bits_round_trip() {
        let mut bytes = vec![0u8; 4];
        write_bits(&mut bytes, 5, 13, 0x1abc);
        assert_eq!(read_bits(&bytes, 5, 13), 0x1abc);
        assert_eq!(sign_extend(0xff, 8), -1);
        assert_eq!(first_bit(&[0x00, 0x10], true), 11);
        assert_eq!(first_bit(&[0xff], false), 8);
    }

    proptest::proptest! {
        #[test]
        fn popcount_matches_naive(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..100)) {
            let naive: u64 = bytes.iter().map(|b| u64::from(b.count_ones())).sum();
            proptest::prop_assert_eq!(popcount(&bytes), naive);
        }
    }
}
