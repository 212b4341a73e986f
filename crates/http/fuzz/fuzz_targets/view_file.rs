//! Fuzz target: `load_slice` (parse and check a view file) on arbitrary bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice_http::view::load_slice;

fuzz_target!(|data: &[u8]| {
    match load_slice("fuzz.json", data) {
        Ok(view) => assert_eq!(view.file.to_str(), Some("fuzz.json")),
        Err(error) => {
            // Messages are built from the input: rendering them must not panic either.
            let _ = error.to_string();
            let _ = error.json_path();
        }
    }
});
