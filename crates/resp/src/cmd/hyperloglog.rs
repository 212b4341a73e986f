//! HyperLogLog commands: PFADD, PFCOUNT, PFMERGE, PFDEBUG and PFSELFTEST, on strings in Redis's
//! HLL format (see `engine/hll.rs`).

use super::{Args, Cx, WRONGTYPE};
use crate::engine::hll::{self, Corrupt};
use crate::engine::{CompactBytes, Value};
use crate::reply::Out;

const NOT_HLL: &str = "WRONGTYPE Key is not a valid HyperLogLog string value.";
const INVALID: &str = "INVALIDOBJ Corrupted HLL object detected";

fn sparse_max(cx: &Cx<'_, '_>) -> usize {
    cx.shared
        .params
        .read()
        .get("hll-sparse-max-bytes")
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000)
}

/// The HLL string at `key`: Ok(None) when missing, Err after replying (wrong type, not an HLL).
fn hll_at<'d>(
    out: &mut Out,
    d: &'d mut crate::engine::Db,
    key: &[u8],
) -> Result<Option<&'d mut CompactBytes>, ()> {
    match d.get(key).map(|e| &mut e.value) {
        None => Ok(None),
        Some(Value::Str(s)) => {
            if hll::is_hll(s) {
                Ok(Some(s))
            } else {
                out.error(NOT_HLL);
                Err(())
            }
        }
        Some(_) => {
            out.error(WRONGTYPE);
            Err(())
        }
    }
}

/// Adds elements to an HLL string in place; Ok(number of registers changed).
fn add_all<'a>(
    s: &mut CompactBytes,
    elements: impl Iterator<Item = &'a [u8]>,
    max_bytes: usize,
) -> Result<usize, Corrupt> {
    let mut changed = 0;
    for ele in elements {
        if s[4] == hll::DENSE {
            let (i, c) = hll::pattern(ele);
            if hll::dense_set_max(&mut s.as_mut_slice()[hll::HDR..], i, c) {
                changed += 1;
            }
        } else if s.modify(|v| hll::sparse_add(v, ele, max_bytes))? {
            changed += 1;
        }
    }
    Ok(changed)
}

pub fn pfadd(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let max_bytes = sparse_max(cx);
    let db = cx.db();
    let key = args.get(1);
    let store = cx.store.get();
    let d = store.db(db);
    let mut updated = 0;
    let s = match hll_at(cx.out, d, key) {
        Err(()) => return,
        Ok(Some(s)) => s,
        Ok(None) => {
            d.set(key, Value::Str(hll::new_sparse().into()));
            updated += 1;
            match d.string(key) {
                Ok(Some(s)) => s,
                _ => return,
            }
        }
    };
    match add_all(s, args.from(2), max_bytes) {
        Ok(n) => updated += n,
        Err(Corrupt) => {
            cx.out.error(INVALID);
            return;
        }
    }
    if updated > 0 {
        hll::invalidate_cache(s.as_mut_slice());
        store.touch(db, key);
    }
    cx.out.int(i64::from(updated > 0));
}

pub fn pfcount(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let db = cx.db();
    let store = cx.store.get();
    if args.len() > 2 {
        let mut max = vec![0u8; hll::REGISTERS];
        for key in args.from(1) {
            let Ok(found) = hll_at(cx.out, store.db(db), key) else {
                return;
            };
            if let Some(s) = found
                && hll::merge_into(&mut max, s).is_err()
            {
                cx.out.error(INVALID);
                return;
            }
        }
        cx.out.int(hll::estimate(&hll::raw_histogram(&max)) as i64);
        return;
    }
    let key = args.get(1);
    let s = match hll_at(cx.out, store.db(db), key) {
        Err(()) => return,
        Ok(None) => {
            cx.out.int(0);
            return;
        }
        Ok(Some(s)) => s,
    };
    if let Some(card) = hll::cached(s) {
        cx.out.int(card as i64);
        return;
    }
    let Ok(card) = hll::count(s) else {
        cx.out.error(INVALID);
        return;
    };
    hll::set_cache(s.as_mut_slice(), card);
    store.touch(db, key);
    cx.out.int(card as i64);
}

pub fn pfmerge(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let max_bytes = sparse_max(cx);
    let db = cx.db();
    let store = cx.store.get();
    let mut max = vec![0u8; hll::REGISTERS];
    let mut use_dense = false;
    for key in args.from(1) {
        let Ok(found) = hll_at(cx.out, store.db(db), key) else {
            return;
        };
        if let Some(s) = found {
            use_dense |= s[4] == hll::DENSE;
            if hll::merge_into(&mut max, s).is_err() {
                cx.out.error(INVALID);
                return;
            }
        }
    }
    let dest = args.get(1);
    let d = store.db(db);
    if !d.contains(dest) {
        d.set(dest, Value::Str(hll::new_sparse().into()));
    }
    let Ok(Some(s)) = d.string(dest) else {
        return;
    };
    let result = s.modify(|v| -> Result<(), Corrupt> {
        if use_dense && v[4] == hll::SPARSE {
            *v = hll::to_dense(v)?;
        }
        for (i, &m) in max.iter().enumerate() {
            if m == 0 {
                continue;
            }
            if v[4] == hll::DENSE {
                hll::dense_set_max(&mut v[hll::HDR..], i, m);
            } else {
                hll::sparse_set(v, i, m, max_bytes)?;
            }
        }
        hll::invalidate_cache(v);
        Ok(())
    });
    if result.is_err() {
        cx.out.error(INVALID);
        return;
    }
    store.touch(db, dest);
    cx.out.ok();
}

pub fn pfdebug(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let sub = args.get(1).to_ascii_lowercase();
    let db = cx.db();
    let key = args.get(2);
    let store = cx.store.get();
    let s = match hll_at(cx.out, store.db(db), key) {
        Err(()) => return,
        Ok(None) => {
            cx.out.error("ERR The specified key does not exist");
            return;
        }
        Ok(Some(s)) => s,
    };
    let known = matches!(
        sub.as_slice(),
        b"getreg" | b"decode" | b"encoding" | b"todense"
    );
    if known && args.len() != 3 {
        cx.out.error(&format!(
            "ERR Wrong number of arguments for the '{}' subcommand",
            String::from_utf8_lossy(args.get(1))
        ));
        return;
    }
    match sub.as_slice() {
        b"getreg" | b"todense" => {
            let converted = s[4] == hll::SPARSE;
            if converted {
                match hll::to_dense(s) {
                    Ok(dense) => *s = dense.into(),
                    Err(Corrupt) => {
                        cx.out.error(INVALID);
                        return;
                    }
                }
            }
            if sub == b"todense" {
                cx.out.int(i64::from(converted));
            } else {
                cx.out.array(hll::REGISTERS);
                for i in 0..hll::REGISTERS {
                    cx.out.int(i64::from(hll::dense_get(&s[hll::HDR..], i)));
                }
            }
            if converted {
                store.touch(db, key);
            }
        }
        b"decode" => {
            if s[4] != hll::SPARSE {
                cx.out.error("ERR HLL encoding is not sparse");
                return;
            }
            cx.out.bulk(hll::decode(s).as_bytes());
        }
        b"encoding" => cx.out.simple(if s[4] == hll::DENSE {
            "dense"
        } else {
            "sparse"
        }),
        _ => cx.out.error(&format!(
            "ERR Unknown PFDEBUG subcommand '{}'",
            String::from_utf8_lossy(args.get(1))
        )),
    }
}

/// PFSELFTEST: register access and the estimator's error bounds, dense against sparse.
pub fn pfselftest(cx: &mut Cx<'_, '_>, _args: &Args<'_>) {
    let max_bytes = sparse_max(cx);
    match self_test(max_bytes) {
        Ok(()) => cx.out.ok(),
        Err(msg) => cx.out.error(&msg),
    }
}

fn self_test(max_bytes: usize) -> Result<(), String> {
    let mut dense = vec![0u8; hll::DENSE_SIZE];
    dense[..4].copy_from_slice(b"HYLL");
    let mut bytes = vec![0u8; hll::REGISTERS];
    for _ in 0..1000 {
        for (i, b) in bytes.iter_mut().enumerate() {
            let r = fastrand::u8(..64);
            *b = r;
            hll::dense_set(&mut dense[hll::HDR..], i, r);
        }
        for (i, &b) in bytes.iter().enumerate() {
            let v = hll::dense_get(&dense[hll::HDR..], i);
            if v != b {
                return Err(format!("TESTFAILED Register {i} should be {b} but is {v}"));
            }
        }
    }
    dense[hll::HDR..].fill(0);
    let mut sparse = hll::new_sparse();
    let relerr = 1.04 / (hll::REGISTERS as f64).sqrt();
    let seed = fastrand::u64(..);
    let mut checkpoint = 1u64;
    for j in 1..=10_000_000u64 {
        let ele = (j ^ seed).to_ne_bytes();
        let (i, c) = hll::pattern(&ele);
        hll::dense_set_max(&mut dense[hll::HDR..], i, c);
        if sparse[4] == hll::SPARSE {
            hll::sparse_add(&mut sparse, &ele, max_bytes)
                .map_err(|_| "TESTFAILED corrupted sparse".to_owned())?;
        } else {
            hll::dense_set_max(&mut sparse[hll::HDR..], i, c);
        }
        if j == checkpoint {
            if (j as usize) < max_bytes / 2 && sparse[4] != hll::SPARSE {
                return Err("TESTFAILED sparse encoding not used".into());
            }
            let a = hll::count(&dense).map_err(|_| "TESTFAILED corrupted dense".to_owned())?;
            let b = hll::count(&sparse).map_err(|_| "TESTFAILED corrupted sparse".to_owned())?;
            if a != b {
                return Err("TESTFAILED dense/sparse disagree".into());
            }
            let abserr = (checkpoint as i64 - a as i64).unsigned_abs();
            let maxerr = if j == 10 {
                1
            } else {
                (relerr * 6.0 * checkpoint as f64).ceil() as u64
            };
            if abserr > maxerr {
                return Err(format!(
                    "TESTFAILED Too big error. card:{checkpoint} abserr:{abserr}"
                ));
            }
            checkpoint *= 10;
        }
    }
    Ok(())
}
