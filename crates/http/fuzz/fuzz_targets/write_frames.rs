//! Fuzz target: CSJ and JSON Lines bodies fed in frames give the rows (or the error) of the
//! whole body. The first byte picks the `Content-Type`, the next four the frame cuts.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice_http::view::write::frames_agree;

const CONTENT_TYPES: [Option<&str>; 2] = [Some("application/csj"), Some("application/x-ndjson")];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let (cuts, body) = rest.split_at(rest.len().min(4));
    let content_type = CONTENT_TYPES[usize::from(selector) % CONTENT_TYPES.len()];
    let cuts: Vec<usize> = cuts.iter().map(|&c| usize::from(c)).collect();
    assert!(frames_agree(
        content_type,
        bytes::Bytes::copy_from_slice(body),
        &cuts
    ));
});
