//! Fuzz target: any bytes through the CSJ header reader and row decoder, whole and split in two
//! at a point the input picks; neither may panic, both must agree, errors must point at a line
//! of the input, and every row must be one line of COPY text with one tab per column gap.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice_formats::decode::{CsjDecoder, CsjHeader};
use sluice_formats::{ColumnKind, DecodeError, Scalar};

const KINDS: [ColumnKind; 4] = [
    ColumnKind::STRING,
    ColumnKind::scalar(Scalar::Json),
    ColumnKind::array(Scalar::Number, b','),
    ColumnKind::array(Scalar::Json, b';'),
];

fn decode(input: &[u8], split: usize, kinds: &[ColumnKind]) -> Result<Vec<u8>, DecodeError> {
    let mut decoder = CsjDecoder::new(kinds.to_vec(), 2);
    let mut out = Vec::new();
    let split = split.min(input.len());
    let used = decoder.decode(&input[..split], false, &mut out)?;
    let mut rest = input[used..split].to_vec();
    rest.extend_from_slice(&input[split..]);
    let used = decoder.decode(&rest, true, &mut out)?;
    assert_eq!(used, rest.len());
    Ok(out)
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, input)) = data.split_first() else {
        return;
    };
    let lines = input.iter().filter(|&&b| b == b'\n').count() as u64 + 2;
    if let Ok(Some(header)) = CsjHeader::read(input, true) {
        assert!(header.consumed <= input.len());
        assert!(!header.names.is_empty());
    }
    let width = usize::from(first % 4) + 1;
    let kinds = &KINDS[..width];
    let whole = decode(input, input.len(), kinds);
    let split = decode(input, usize::from(first) * input.len() / 255, kinds);
    match (&whole, &split) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a, b);
            assert!(std::str::from_utf8(a).is_ok());
            for row in a.split(|&b| b == b'\n').filter(|r| !r.is_empty()) {
                assert_eq!(row.iter().filter(|&&b| b == b'\t').count(), width - 1);
            }
        }
        (Err(a), Err(b)) => {
            assert_eq!(a, b);
            assert!(a.line() >= 2 && a.line() <= lines, "{a}");
        }
        _ => panic!("whole {whole:?}, split {split:?}"),
    }
});
