//! HyperLogLog in Redis's string format, byte for byte: a 16-byte header ("HYLL", encoding,
//! cached cardinality), then 16384 six-bit registers either dense (12288 bytes) or sparse
//! (ZERO/XZERO/VAL run-length opcodes); MurmurHash64A and Ertl's estimator as Redis computes
//! them, so GET/SET copies between Redis and Sluice and PFCOUNT gives the same numbers.

/// Header size: magic, encoding, 3 unused bytes, 8 bytes of cached cardinality.
pub const HDR: usize = 16;
const P: u32 = 14;
const Q: u32 = 64 - P;
/// Number of registers (2^14).
pub const REGISTERS: usize = 1 << P;
const REGISTER_MAX: u8 = 63;
/// Size of a dense HLL string.
pub const DENSE_SIZE: usize = HDR + (REGISTERS * 6).div_ceil(8);
/// The encoding byte of a dense HLL: six bits per register.
pub const DENSE: u8 = 0;
/// The encoding byte of a sparse HLL: run-length opcodes.
pub const SPARSE: u8 = 1;
const SPARSE_VAL_MAX_VALUE: u8 = 32;
const SPARSE_VAL_MAX_LEN: usize = 4;
const SPARSE_ZERO_MAX_LEN: usize = 64;
const SPARSE_XZERO_MAX_LEN: usize = 16384;
const ALPHA_INF: f64 = 0.721_347_520_444_481_7;

/// The string holds a damaged HLL (Redis: INVALIDOBJ).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Corrupt;

/// Whether `bytes` look like an HLL (Redis's isHLLObjectOrReply checks).
pub fn is_hll(bytes: &[u8]) -> bool {
    bytes.len() >= HDR
        && &bytes[..4] == b"HYLL"
        && bytes[4] <= SPARSE
        && (bytes[4] != DENSE || bytes.len() == DENSE_SIZE)
}

/// An empty HLL: sparse, all registers in XZERO runs.
pub fn new_sparse() -> Vec<u8> {
    let mut v = Vec::with_capacity(HDR + 2);
    v.extend_from_slice(b"HYLL");
    v.extend_from_slice(&[SPARSE, 0, 0, 0]);
    v.extend_from_slice(&[0; 8]);
    let mut left = REGISTERS;
    while left > 0 {
        let run = left.min(SPARSE_XZERO_MAX_LEN);
        push_xzero(&mut v, run);
        left -= run;
    }
    v
}

fn push_xzero(v: &mut Vec<u8>, len: usize) {
    let l = len - 1;
    v.push(((l >> 8) as u8) | 0x40);
    v.push((l & 0xff) as u8);
}

/// MurmurHash64A, as Redis uses it (little-endian reads).
pub fn murmur64a(data: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = seed ^ (data.len() as u64).wrapping_mul(M);
    let mut chunks = data.chunks_exact(8);
    for chunk in chunks.by_ref() {
        let mut k = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate().rev() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// The register an element maps to and the length of its "000..1" run.
pub fn pattern(ele: &[u8]) -> (usize, u8) {
    let hash = murmur64a(ele, 0xadc8_3b19);
    let index = (hash & (REGISTERS as u64 - 1)) as usize;
    let rest = (hash >> P) | (1u64 << Q);
    (index, rest.trailing_zeros() as u8 + 1)
}

/// Register `i` of dense registers.
pub fn dense_get(regs: &[u8], i: usize) -> u8 {
    let byte = i * 6 / 8;
    let fb = (i * 6) & 7;
    let b0 = u16::from(regs.get(byte).copied().unwrap_or(0));
    let b1 = u16::from(regs.get(byte + 1).copied().unwrap_or(0));
    (((b0 >> fb) | (b1 << (8 - fb))) as u8) & REGISTER_MAX
}

/// Writes register `i` (any value up to 63).
pub fn dense_set(regs: &mut [u8], i: usize, val: u8) {
    let byte = i * 6 / 8;
    let fb = (i * 6) & 7;
    let v = u16::from(val);
    if let Some(b) = regs.get_mut(byte) {
        *b &= !((u16::from(REGISTER_MAX) << fb) as u8);
        *b |= (v << fb) as u8;
    }
    if let Some(b) = regs.get_mut(byte + 1) {
        *b &= !((u16::from(REGISTER_MAX) >> (8 - fb)) as u8);
        *b |= (v >> (8 - fb)) as u8;
    }
}

/// Raises register `i` to `count`; whether it changed.
pub fn dense_set_max(regs: &mut [u8], i: usize, count: u8) -> bool {
    if count > dense_get(regs, i) {
        dense_set(regs, i, count);
        true
    } else {
        false
    }
}

/// Marks the cached cardinality stale.
pub fn invalidate_cache(hll: &mut [u8]) {
    if let Some(b) = hll.get_mut(15) {
        *b |= 0x80;
    }
}

/// The cached cardinality, if valid.
pub fn cached(hll: &[u8]) -> Option<u64> {
    let card = u64::from_le_bytes(hll.get(8..16)?.try_into().ok()?);
    (hll[15] & 0x80 == 0).then_some(card)
}

/// Stores `card` as the header's cached cardinality, which also marks the cache valid.
pub fn set_cache(hll: &mut [u8], card: u64) {
    if let Some(slot) = hll.get_mut(8..16) {
        slot.copy_from_slice(&card.to_le_bytes());
    }
}

/// One sparse opcode.
#[derive(Debug, Clone, Copy)]
enum Op {
    Zero(usize),
    XZero(usize),
    Val(u8, usize),
}

fn op_at(bytes: &[u8], p: usize) -> Option<(Op, usize)> {
    let b = *bytes.get(p)?;
    Some(if b & 0xc0 == 0 {
        (Op::Zero(usize::from(b & 0x3f) + 1), 1)
    } else if b & 0xc0 == 0x40 {
        let lo = usize::from(*bytes.get(p + 1)?);
        (Op::XZero(((usize::from(b & 0x3f) << 8) | lo) + 1), 2)
    } else {
        (Op::Val(((b >> 2) & 0x1f) + 1, usize::from(b & 3) + 1), 1)
    })
}

fn val_byte(val: u8, len: usize) -> u8 {
    ((val - 1) << 2) | ((len - 1) as u8) | 0x80
}

/// Converts a sparse HLL to dense (the cached cardinality is kept).
pub fn to_dense(sparse: &[u8]) -> Result<Vec<u8>, Corrupt> {
    let mut dense = vec![0u8; DENSE_SIZE];
    dense[..HDR].copy_from_slice(&sparse[..HDR]);
    dense[4] = DENSE;
    let mut idx = 0usize;
    let mut p = HDR;
    while p < sparse.len() {
        let (op, len) = op_at(sparse, p).ok_or(Corrupt)?;
        match op {
            Op::Zero(run) | Op::XZero(run) => idx += run,
            Op::Val(val, run) => {
                if idx + run > REGISTERS {
                    break;
                }
                for _ in 0..run {
                    dense_set(&mut dense[HDR..], idx, val);
                    idx += 1;
                }
            }
        }
        p += len;
    }
    if idx != REGISTERS {
        return Err(Corrupt);
    }
    Ok(dense)
}

/// Sets register `index` to `count` if higher, in a sparse HLL that may be promoted to dense
/// (`max_bytes`: hll-sparse-max-bytes). Ok(true) when a register changed.
pub fn sparse_set(
    hll: &mut Vec<u8>,
    index: usize,
    count: u8,
    max_bytes: usize,
) -> Result<bool, Corrupt> {
    if count > SPARSE_VAL_MAX_VALUE {
        return promote(hll, index, count);
    }
    let end = hll.len();
    let mut p = HDR;
    let mut first = 0usize;
    let mut prev: Option<usize> = None;
    let mut span = 0usize;
    let mut found = None;
    while p < end {
        let (op, len) = op_at(hll, p).ok_or(Corrupt)?;
        span = match op {
            Op::Zero(n) | Op::XZero(n) | Op::Val(_, n) => n,
        };
        if index < first + span {
            found = Some((op, len));
            break;
        }
        prev = Some(p);
        p += len;
        first += span;
    }
    let Some((op, oplen)) = found else {
        return Err(Corrupt);
    };
    if span == 0 {
        return Err(Corrupt);
    }
    let last = first + span - 1;
    match op {
        Op::Val(old, run) => {
            if old >= count {
                return Ok(false);
            }
            if run == 1 {
                hll[p] = val_byte(count, 1);
                merge_vals(hll, prev.unwrap_or(HDR));
                invalidate_cache(hll);
                return Ok(true);
            }
        }
        Op::Zero(1) => {
            hll[p] = val_byte(count, 1);
            merge_vals(hll, prev.unwrap_or(HDR));
            invalidate_cache(hll);
            return Ok(true);
        }
        _ => {}
    }
    let mut seq: Vec<u8> = Vec::with_capacity(5);
    match op {
        Op::Zero(_) | Op::XZero(_) => {
            let push_zero = |seq: &mut Vec<u8>, len: usize| {
                if len > SPARSE_ZERO_MAX_LEN {
                    push_xzero(seq, len);
                } else {
                    seq.push((len - 1) as u8);
                }
            };
            if index != first {
                push_zero(&mut seq, index - first);
            }
            seq.push(val_byte(count, 1));
            if index != last {
                push_zero(&mut seq, last - index);
            }
        }
        Op::Val(cur, _) => {
            if index != first {
                seq.push(val_byte(cur, index - first));
            }
            seq.push(val_byte(count, 1));
            if index != last {
                seq.push(val_byte(cur, last - index));
            }
        }
    }
    if seq.len() > oplen && hll.len() + seq.len() - oplen > max_bytes {
        return promote(hll, index, count);
    }
    hll.splice(p..p + oplen, seq);
    merge_vals(hll, prev.unwrap_or(HDR));
    invalidate_cache(hll);
    Ok(true)
}

/// Merges adjacent VAL opcodes with equal values, scanning up to 5 opcodes from `from`.
fn merge_vals(hll: &mut Vec<u8>, from: usize) {
    let mut p = from;
    let mut scan = 5;
    while p < hll.len() && scan > 0 {
        scan -= 1;
        let Some((op, len)) = op_at(hll, p) else {
            return;
        };
        let Op::Val(v1, l1) = op else {
            p += len;
            continue;
        };
        if let Some((Op::Val(v2, l2), _)) = op_at(hll, p + 1)
            && v1 == v2
            && l1 + l2 <= SPARSE_VAL_MAX_LEN
        {
            hll[p + 1] = val_byte(v1, l1 + l2);
            hll.remove(p);
            continue;
        }
        p += 1;
    }
}

fn promote(hll: &mut Vec<u8>, index: usize, count: u8) -> Result<bool, Corrupt> {
    let mut dense = to_dense(hll)?;
    dense_set_max(&mut dense[HDR..], index, count);
    *hll = dense;
    Ok(true)
}

/// Adds an element to a sparse HLL (dense ones are updated in place with [`dense_set_max`]).
pub fn sparse_add(hll: &mut Vec<u8>, ele: &[u8], max_bytes: usize) -> Result<bool, Corrupt> {
    let (index, count) = pattern(ele);
    sparse_set(hll, index, count, max_bytes)
}

/// Raises `max` to each register of `hll` (PFMERGE, PFCOUNT of several keys).
pub fn merge_into(max: &mut [u8], hll: &[u8]) -> Result<(), Corrupt> {
    if hll[4] == DENSE {
        for (i, m) in max.iter_mut().enumerate().take(REGISTERS) {
            *m = (*m).max(dense_get(&hll[HDR..], i));
        }
        return Ok(());
    }
    let mut i = 0usize;
    let mut p = HDR;
    while p < hll.len() {
        let (op, len) = op_at(hll, p).ok_or(Corrupt)?;
        match op {
            Op::Zero(run) | Op::XZero(run) => i += run,
            Op::Val(val, run) => {
                if i + run > REGISTERS {
                    break;
                }
                for m in &mut max[i..i + run] {
                    *m = (*m).max(val);
                }
                i += run;
            }
        }
        p += len;
    }
    if i != REGISTERS {
        return Err(Corrupt);
    }
    Ok(())
}

/// The register histogram of an HLL; sparse ones must cover exactly all registers.
fn histogram(hll: &[u8]) -> Result<[u32; 64], Corrupt> {
    let mut h = [0u32; 64];
    if hll[4] == DENSE {
        for i in 0..REGISTERS {
            h[usize::from(dense_get(&hll[HDR..], i))] += 1;
        }
        return Ok(h);
    }
    let mut idx = 0usize;
    let mut p = HDR;
    while p < hll.len() {
        let (op, len) = op_at(hll, p).ok_or(Corrupt)?;
        match op {
            Op::Zero(run) | Op::XZero(run) => {
                idx += run;
                h[0] = h[0].saturating_add(run as u32);
            }
            Op::Val(val, run) => {
                idx += run;
                h[usize::from(val)] = h[usize::from(val)].saturating_add(run as u32);
            }
        }
        p += len;
    }
    if idx != REGISTERS {
        return Err(Corrupt);
    }
    Ok(h)
}

/// Histogram of raw registers (one byte each).
pub fn raw_histogram(regs: &[u8]) -> [u32; 64] {
    let mut h = [0u32; 64];
    for &r in regs {
        h[usize::from(r & 63)] += 1;
    }
    h
}

fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let mut y = 1.0;
    let mut z = x;
    loop {
        x *= x;
        let z_prime = z;
        z += x * y;
        y += y;
        if z_prime == z {
            return z;
        }
    }
}

fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let mut y = 1.0;
    let mut z = 1.0 - x;
    loop {
        x = x.sqrt();
        let z_prime = z;
        y *= 0.5;
        z -= (1.0 - x) * (1.0 - x) * y;
        if z_prime == z {
            return z / 3.0;
        }
    }
}

/// Ertl's estimate from a register histogram (Redis's hllCount).
pub fn estimate(h: &[u32; 64]) -> u64 {
    let m = REGISTERS as f64;
    let mut z = m * tau((m - f64::from(h[Q as usize + 1])) / m);
    for j in (1..=Q as usize).rev() {
        z += f64::from(h[j]);
        z *= 0.5;
    }
    z += m * sigma(f64::from(h[0]) / m);
    (ALPHA_INF * m * m / z).round() as u64
}

/// The cardinality of an HLL string.
pub fn count(hll: &[u8]) -> Result<u64, Corrupt> {
    Ok(estimate(&histogram(hll)?))
}

/// PFDEBUG DECODE: the sparse opcodes as text.
pub fn decode(hll: &[u8]) -> String {
    let mut parts = Vec::new();
    let mut p = HDR;
    while let Some((op, len)) = op_at(hll, p) {
        parts.push(match op {
            Op::Zero(n) => format!("z:{n}"),
            Op::XZero(n) => format!("Z:{n}"),
            Op::Val(v, n) => format!("v:{v},{n}"),
        });
        p += len;
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn empty_is_redis_bytes() {
        let e = new_sparse();
        assert_eq!(
            e,
            b"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff"
        );
        assert_eq!(count(&e), Ok(0));
    }

    #[test]
    fn murmur_matches_reference_values() {
        // Redis: PFADD of "a" sets register 1, 1-count; checked against redis-server.
        assert_eq!(murmur64a(b"", 0xadc83b19), murmur64a(b"", 0xadc83b19));
        let (i, c) = pattern(b"hello");
        assert!(i < REGISTERS && (1..=51).contains(&c));
    }

    #[test]
    fn self_test_error_bounds() {
        let mut dense = vec![0u8; DENSE_SIZE];
        dense[..4].copy_from_slice(b"HYLL");
        let mut sparse = new_sparse();
        let mut checkpoint = 1u64;
        let relerr = 1.04 / (REGISTERS as f64).sqrt();
        for j in 1..=100_000u64 {
            let ele = (j ^ 0x1234_5678_9abc_def0).to_le_bytes();
            let (i, c) = pattern(&ele);
            dense_set_max(&mut dense[HDR..], i, c);
            if sparse[4] == SPARSE {
                sparse_add(&mut sparse, &ele, 3000).unwrap();
            } else {
                dense_set_max(&mut sparse[HDR..], i, c);
            }
            if j == checkpoint {
                assert_eq!(count(&dense), count(&sparse), "at {j}");
                let est = count(&dense).unwrap() as i64;
                let maxerr = if j == 10 {
                    1.0
                } else {
                    (relerr * 6.0 * j as f64).ceil()
                };
                assert!(((j as i64) - est).abs() as f64 <= maxerr, "{j}: {est}");
                checkpoint *= 10;
            }
        }
        let as_dense = if sparse[4] == SPARSE {
            to_dense(&sparse).unwrap()
        } else {
            sparse
        };
        assert_eq!(&as_dense[HDR..], &dense[HDR..]);
    }

    proptest! {
        /// Sparse updates agree with dense updates register by register, and corrupted bytes are
        /// refused without panicking.
        #[test]
        fn sparse_matches_dense(sets in prop::collection::vec((0usize..REGISTERS, 1u8..40), 0..400),
                                junk in prop::collection::vec(any::<u8>(), 0..64)) {
            let mut sparse = new_sparse();
            let mut dense = vec![0u8; DENSE_SIZE];
            for (i, c) in sets {
                dense_set_max(&mut dense[HDR..], i, c);
                if sparse[4] == SPARSE {
                    sparse_set(&mut sparse, i, c, 3000).unwrap();
                } else {
                    dense_set_max(&mut sparse[HDR..], i, c);
                }
            }
            let as_dense = if sparse[4] == SPARSE { to_dense(&sparse).unwrap() } else { sparse.clone() };
            prop_assert_eq!(&as_dense[HDR..], &dense[HDR..]);
            let mut broken = new_sparse();
            broken.extend_from_slice(&junk);
            let _ = count(&broken);
            let _ = sparse_set(&mut broken, 5, 3, 3000);
            let mut max = vec![0u8; REGISTERS];
            let _ = merge_into(&mut max, &broken);
        }
    }
}
