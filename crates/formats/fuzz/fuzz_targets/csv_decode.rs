//! Fuzz target: any bytes through the CSV scanner, collecting fields and only counting them,
//! whole and split in two; none may panic, all must agree, errors must point at a line of the
//! input, and the records must encode back to CSV that scans to the same records.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice_formats::decode::{CollectFields, CsvScanner, SkipFields};
use sluice_formats::encode::encode_all;
use sluice_formats::{ColumnKind, ColumnSpec, DecodeError, Format};

type Records = Vec<Vec<Option<Vec<u8>>>>;

fn collect(pieces: &[&[u8]]) -> Result<Records, DecodeError> {
    let mut scanner = CsvScanner::new();
    let mut sink = CollectFields::new(None);
    for piece in pieces {
        assert_eq!(scanner.scan(piece, &mut sink)?, piece.len());
    }
    scanner.finish(&mut sink)?;
    Ok(sink.records)
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, input)) = data.split_first() else {
        return;
    };
    let lines = input.iter().filter(|&&b| b == b'\n' || b == b'\r').count() as u64 + 1;
    let at = usize::from(first) * input.len() / 255;
    let whole = collect(&[input]);
    let split = collect(&[&input[..at], &input[at..]]);
    let mut counter = CsvScanner::new();
    let counted = counter
        .scan(input, &mut SkipFields)
        .and_then(|_| counter.finish(&mut SkipFields));
    match (&whole, &split) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a, b);
            assert!(counted.is_ok());
            assert_eq!(counter.records(), a.len() as u64);
            // Records of one width encode back to CSV that reads the same.
            if let Some(width) = a.first().map(Vec::len) {
                if a.iter().all(|r| r.len() == width) && !(width == 1 && a.iter().any(|r| r[0].is_none())) {
                    let columns: Vec<ColumnSpec> =
                        (0..width).map(|i| ColumnSpec::new(format!("c{i}"), ColumnKind::STRING)).collect();
                    let csv = encode_all(Format::Csv, &columns, false, a.iter().map(|r| r.iter().map(|f| f.as_deref())));
                    assert_eq!(collect(&[&csv]).as_ref(), Ok(a));
                }
            }
        }
        (Err(a), Err(b)) => {
            assert_eq!(a, b);
            assert!(counted.is_err());
            assert!(a.line() >= 1 && a.line() <= lines, "{a}");
        }
        _ => panic!("whole {whole:?}, split {split:?}"),
    }
});
