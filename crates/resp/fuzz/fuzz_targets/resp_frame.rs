//! Fuzz target: the RESP request parser on arbitrary bytes, fed whole and in two pieces.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice_resp::{Parsed, RequestParser};

/// Parses every request in `input` the way a connection does (advancing past each one), with
/// the bytes arriving in two reads split at `split`. Returns the argument lists.
fn parse_all(input: &[u8], split: usize) -> Option<Vec<Vec<Vec<u8>>>> {
    let mut parser = RequestParser::new(1024 * 1024);
    let mut scratch = Vec::new();
    let mut buf: Vec<u8> = input[..split].to_vec();
    let mut fed = split;
    let mut commands = Vec::new();
    loop {
        match parser.parse(&buf, &mut scratch) {
            Ok(Parsed::Command { consumed, inline }) => {
                assert!(consumed <= buf.len());
                let base = if inline { &scratch } else { &buf };
                let args = parser.spans().iter().map(|r| base[r.clone()].to_vec()).collect();
                commands.push(args);
                buf.drain(..consumed);
            }
            Ok(Parsed::Empty { consumed }) => {
                assert!(consumed > 0 && consumed <= buf.len());
                buf.drain(..consumed);
            }
            Ok(Parsed::Incomplete { .. }) => {
                if fed == input.len() {
                    return Some(commands);
                }
                buf.extend_from_slice(&input[fed..]);
                fed = input.len();
            }
            Err(_) => return None,
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&split, input)) = data.split_first() else { return };
    let split = usize::from(split).min(input.len());
    let whole = parse_all(input, input.len());
    let pieces = parse_all(input, split);
    // Where the bytes are split must not change what is parsed.
    if let (Some(a), Some(b)) = (&whole, &pieces) {
        assert_eq!(a, b);
    }
});
