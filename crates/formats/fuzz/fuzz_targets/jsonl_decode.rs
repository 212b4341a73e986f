//! Fuzz target: any bytes through the JSON Lines key reader and object decoder, whole and split
//! in two; neither may panic, both must agree, errors must point at a line of the input, and
//! every row must be one line of COPY text with one tab per column gap.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice_formats::decode::{JsonlDecoder, first_object_keys};
use sluice_formats::{ColumnKind, DecodeError, Scalar};

fn decode(input: &[u8], split: usize, names: &[String], kinds: &[ColumnKind]) -> Result<Vec<u8>, DecodeError> {
    let mut decoder = JsonlDecoder::new(names, kinds.to_vec());
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
    let lines = input.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
    let (names, kinds) = match first_object_keys(input, true) {
        Ok(Some(keys)) => {
            let kinds: Vec<ColumnKind> = (0..keys.len())
                .map(|i| match i % 3 {
                    0 => ColumnKind::STRING,
                    1 => ColumnKind::scalar(Scalar::Json),
                    _ => ColumnKind::array(Scalar::String, b','),
                })
                .collect();
            (keys, kinds)
        }
        _ => (
            vec!["a".to_owned(), "b".to_owned()],
            vec![ColumnKind::STRING, ColumnKind::array(Scalar::Number, b',')],
        ),
    };
    let whole = decode(input, input.len(), &names, &kinds);
    let split = decode(input, usize::from(first) * input.len() / 255, &names, &kinds);
    match (&whole, &split) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a, b);
            assert!(std::str::from_utf8(a).is_ok());
            for row in a.split(|&b| b == b'\n').filter(|r| !r.is_empty()) {
                assert_eq!(row.iter().filter(|&&b| b == b'\t').count(), names.len() - 1);
            }
        }
        (Err(a), Err(b)) => {
            assert_eq!(a, b);
            assert!(a.line() >= 1 && a.line() <= lines, "{a}");
        }
        _ => panic!("whole {whole:?}, split {split:?}"),
    }
});
