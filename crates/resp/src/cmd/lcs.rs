//! LCS: the longest common subsequence of two strings (LEN, IDX, MINMATCHLEN, WITHMATCHLEN),
//! with the table's memory bounded by proto-max-bulk-len as in Redis.

use super::{Args, Cx, SYNTAX};
use crate::engine::Value;

pub fn lcs(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let db = cx.db();
    let d = cx.store.get().db(db);
    let mut read = |key: &[u8]| -> Result<Vec<u8>, ()> {
        match d.get(key).map(|e| &e.value) {
            None => Ok(Vec::new()),
            Some(Value::Str(s)) => Ok(s.to_vec()),
            Some(_) => Err(()),
        }
    };
    let (Ok(a), Ok(b)) = (read(args.get(1)), read(args.get(2))) else {
        cx.out
            .error("ERR The specified keys must contain string values");
        return;
    };
    let (mut get_len, mut get_idx, mut with_len) = (false, false, false);
    let mut min_len: i64 = 0;
    let mut j = 3;
    while j < args.len() {
        if args.is(j, "idx") {
            get_idx = true;
        } else if args.is(j, "len") {
            get_len = true;
        } else if args.is(j, "withmatchlen") {
            with_len = true;
        } else if args.is(j, "minmatchlen") && j + 1 < args.len() {
            let Some(n) = super::int_arg(cx.out, args.get(j + 1)) else {
                return;
            };
            min_len = n.max(0);
            j += 1;
        } else {
            cx.out.error(SYNTAX);
            return;
        }
        j += 1;
    }
    if get_len && get_idx {
        cx.out
            .error("ERR If you want both the length and indexes, please just use IDX.");
        return;
    }
    let (alen, blen) = (a.len(), b.len());
    let cells = (alen as u128 + 1) * (blen as u128 + 1);
    let max = cx
        .shared
        .bulk_max
        .load(std::sync::atomic::Ordering::Relaxed);
    if cells * 4 > max.max(0) as u128 {
        cx.out
            .error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
        return;
    }
    let width = blen + 1;
    let mut table = vec![0u32; (alen + 1) * width];
    for i in 1..=alen {
        for k in 1..=blen {
            table[i * width + k] = if a[i - 1] == b[k - 1] {
                table[(i - 1) * width + k - 1] + 1
            } else {
                table[(i - 1) * width + k].max(table[i * width + k - 1])
            };
        }
    }
    let total = table[alen * width + blen];
    if get_len {
        cx.out.int(i64::from(total));
        return;
    }
    // Walk back from the end, collecting the subsequence and the matching ranges.
    let mut result = vec![0u8; total as usize];
    let mut idx = total as usize;
    let mut ranges: Vec<[usize; 4]> = Vec::new();
    let mut current: Option<[usize; 4]> = None; // a_start, a_end, b_start, b_end
    let (mut i, mut k) = (alen, blen);
    while i > 0 && k > 0 {
        let mut emit = false;
        if a[i - 1] == b[k - 1] {
            result[idx - 1] = a[i - 1];
            match current.as_mut() {
                None => current = Some([i - 1, i - 1, k - 1, k - 1]),
                Some(r) if r[0] == i && r[2] == k => {
                    r[0] -= 1;
                    r[2] -= 1;
                }
                Some(_) => emit = true,
            }
            if current.is_some_and(|r| r[0] == 0 || r[2] == 0) {
                emit = true;
            }
            idx -= 1;
            i -= 1;
            k -= 1;
        } else {
            if table[(i - 1) * width + k] > table[i * width + k - 1] {
                i -= 1;
            } else {
                k -= 1;
            }
            if current.is_some() {
                emit = true;
            }
        }
        if emit && let Some(r) = current.take() {
            let len = r[1] - r[0] + 1;
            if min_len == 0 || len as i64 >= min_len {
                ranges.push(r);
            }
        }
    }
    if !get_idx {
        cx.out.bulk(&result);
        return;
    }
    let out = &mut *cx.out;
    out.map(2);
    out.bulk(b"matches");
    out.array(ranges.len());
    for r in &ranges {
        out.array(2 + usize::from(with_len));
        out.array(2);
        out.int(r[0] as i64);
        out.int(r[1] as i64);
        out.array(2);
        out.int(r[2] as i64);
        out.int(r[3] as i64);
        if with_len {
            out.int((r[1] - r[0] + 1) as i64);
        }
    }
    out.bulk(b"len");
    out.int(i64::from(total));
}
