//! Fuzz target: any bytes through the streaming, batch and partial line protocol parsers; none
//! may panic, they must agree, errors must point inside the input, and every point must encode.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice_lineproto::{Batch, Options, Parser, write_point_json};

fuzz_target!(|data: &[u8]| {
    let options = Options::new(0);
    let mut errors = Vec::new();
    let (partial, failed) =
        Batch::parse_partial_reusing(data, &options, &mut Default::default(), &mut errors, 8);
    assert_eq!(errors.len(), failed.min(8));
    assert!(errors.iter().all(|e| e.offset() <= data.len() && e.line() >= 1));
    let partial: Vec<String> = partial.points().map(|p| format!("{p:?}")).collect();
    let batch = Batch::parse(data, &options);
    let mut parser = Parser::new(data, options);
    let mut streamed = Vec::new();
    let mut stream_error = None;
    while let Some(point) = parser.next_point() {
        match point {
            Ok(point) => {
                let mut json = Vec::new();
                write_point_json(&point, &mut json);
                assert!(std::str::from_utf8(&json).is_ok());
                streamed.push(format!("{point:?}"));
            }
            Err(error) => stream_error = Some(error),
        }
    }
    match (batch, stream_error) {
        (Ok(batch), None) => {
            let batched: Vec<String> = batch.points().map(|p| format!("{p:?}")).collect();
            assert_eq!(batched, streamed);
            assert_eq!(failed, 0);
            assert_eq!(partial, batched);
        }
        (Err(a), Some(b)) => {
            assert_eq!(a, b);
            assert!(a.offset() <= data.len());
            assert!(a.line() >= 1 && a.column() >= 1);
        }
        (a, b) => panic!("batch {:?}, stream error {b:?}", a.err()),
    }
});
