//! Fuzz target: HyperLogLog strings a client may SET to anything, then PFADD/PFCOUNT/PFMERGE:
//! every operation answers or reports corruption, never panics, and keeps memory bounded.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice_resp::engine::hll;

fuzz_target!(|data: &[u8]| {
    // Half the inputs get a valid header so the opcode walkers are reached.
    let mut value = Vec::with_capacity(data.len() + hll::HDR);
    if data.first().is_some_and(|b| b & 1 == 0) {
        value.extend_from_slice(b"HYLL");
        value.push(data.get(1).copied().unwrap_or(1) & 1);
        value.extend_from_slice(&[0; 11]);
        value.extend_from_slice(data.get(2..).unwrap_or(&[]));
    } else {
        value.extend_from_slice(data);
    }
    if !hll::is_hll(&value) {
        return;
    }
    let _ = hll::count(&value);
    let mut max = vec![0u8; hll::REGISTERS];
    let _ = hll::merge_into(&mut max, &value);
    if value[4] == hll::SPARSE {
        let _ = hll::to_dense(&value);
        let mut v = value.clone();
        for ele in data.chunks(3).take(64) {
            if v[4] != hll::SPARSE || hll::sparse_add(&mut v, ele, 3000).is_err() {
                break;
            }
        }
        assert!(v.len() <= hll::DENSE_SIZE.max(value.len() + 64 * 3));
    }
});
