//! Fuzz target: RESTORE payloads: any bytes are decoded into a value or refused, never a panic
//! or an allocation sized by a corrupt length; half the inputs get a valid footer so the value
//! decoders (listpack, ziplist, intset, quicklist, LZF, streams) are reached.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice_resp::engine::rdb;

fuzz_target!(|data: &[u8]| {
    let _ = rdb::restore(data);
    let payload = rdb::with_footer(data);
    if let Ok(value) = rdb::restore(&payload) {
        // What decodes also encodes, and reads back.
        let again = rdb::dump(&value);
        assert!(rdb::restore(&again).is_ok());
    }
});
