//! Fuzz target: the write body parsers (CSJ, JSON Lines, JSON rows, a JSON object) on arbitrary
//! bytes; the first byte picks the `Content-Type`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice_http::view::write::parse_body;

const CONTENT_TYPES: [Option<&str>; 5] = [
    None,
    Some("application/csj"),
    Some("application/x-ndjson"),
    Some("application/json"),
    Some("text/plain; charset=utf-8"),
];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    let content_type = CONTENT_TYPES[usize::from(selector) % CONTENT_TYPES.len()];
    if let Err(error) = parse_body(content_type, bytes::Bytes::copy_from_slice(body)) {
        // A parse error answers 400 with a message built from the input.
        assert_eq!(error.status.as_u16(), 400, "{}", error.message);
    }
});
