//! Property tests of the request parser: round trips, pipelines, resumption at any split, and
//! no panic on arbitrary bytes.

use proptest::prelude::*;
use sluice_resp::{Parsed, RequestParser};

fn encode(args: &[Vec<u8>]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// Parses all requests from `input` delivered in chunks of `chunk` bytes, as a connection does.
fn parse_stream(
    input: &[u8],
    chunk: usize,
) -> Result<Vec<Vec<Vec<u8>>>, sluice_resp::ProtocolError> {
    let mut parser = RequestParser::default();
    let mut scratch = Vec::new();
    let mut buf = Vec::new();
    let mut fed = 0;
    let mut out = Vec::new();
    loop {
        match parser.parse(&buf, &mut scratch)? {
            Parsed::Command { consumed, inline } => {
                let base = if inline { &scratch } else { &buf };
                out.push(
                    parser
                        .spans()
                        .iter()
                        .map(|r| base[r.clone()].to_vec())
                        .collect(),
                );
                buf.drain(..consumed);
            }
            Parsed::Empty { consumed } => {
                buf.drain(..consumed);
            }
            Parsed::Incomplete { .. } => {
                if fed >= input.len() {
                    return Ok(out);
                }
                let end = (fed + chunk).min(input.len());
                buf.extend_from_slice(&input[fed..end]);
                fed = end;
            }
        }
    }
}

fn arg() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..64)
}

fn command() -> impl Strategy<Value = Vec<Vec<u8>>> {
    prop::collection::vec(arg(), 1..12)
}

proptest! {
    #[test]
    fn multibulk_round_trips(cmd in command()) {
        let bytes = encode(&cmd);
        let mut parser = RequestParser::default();
        let mut scratch = Vec::new();
        let parsed = parser.parse(&bytes, &mut scratch).unwrap();
        prop_assert_eq!(parsed, Parsed::Command { consumed: bytes.len(), inline: false });
        let got: Vec<Vec<u8>> = parser.spans().iter().map(|r| bytes[r.clone()].to_vec()).collect();
        prop_assert_eq!(got, cmd);
    }

    #[test]
    fn pipelines_parse_the_same_at_any_chunk_size(cmds in prop::collection::vec(command(), 1..8), chunk in 1usize..64) {
        let bytes: Vec<u8> = cmds.iter().flat_map(|c| encode(c)).collect();
        prop_assert_eq!(parse_stream(&bytes, chunk).unwrap(), cmds.clone());
        prop_assert_eq!(parse_stream(&bytes, bytes.len()).unwrap(), cmds);
    }

    #[test]
    fn inline_words_round_trip(words in prop::collection::vec("[a-zA-Z0-9_:.-]{1,12}", 1..8)) {
        let line = format!("{}\r\n", words.join(" "));
        let got = parse_stream(line.as_bytes(), line.len()).unwrap();
        let expected: Vec<Vec<u8>> = words.iter().map(|w| w.as_bytes().to_vec()).collect();
        prop_assert_eq!(got, vec![expected]);
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_splits_agree(bytes in prop::collection::vec(any::<u8>(), 0..512), chunk in 1usize..32) {
        let whole = parse_stream(&bytes, bytes.len());
        let chunked = parse_stream(&bytes, chunk);
        if let (Ok(a), Ok(b)) = (&whole, &chunked) {
            prop_assert_eq!(a, b);
        }
    }

    #[test]
    fn corrupted_requests_error_instead_of_panicking(cmd in command(), at in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let mut bytes = encode(&cmd);
        let i = at.index(bytes.len());
        bytes[i] = byte;
        let _ = parse_stream(&bytes, 7);
    }
}
