//! Fuzz target: the backend message parser on arbitrary bytes, as a stream of messages.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice_pg::protocol::backend::{Message, data_row_spans, parse};

fuzz_target!(|data: &[u8]| {
    let mut rest = data;
    while let Ok(Some((message, used))) = parse(rest) {
        assert!(used >= 5 && used <= rest.len());
        // Every accessor of a parsed message must run without panicking.
        match message {
            Message::DataRow(row) => {
                assert_eq!(row.fields().count(), row.len());
                let mut spans = Vec::new();
                let body = &rest[5..used];
                assert!(data_row_spans(body, 5, row.len() as u16, &mut spans).is_ok());
                for s in &spans {
                    if s.len >= 0 {
                        assert!(s.start as usize + s.len as usize <= used);
                    }
                }
            }
            Message::RowDescription(rd) => assert_eq!(rd.fields().count(), rd.len()),
            Message::ErrorResponse(f) | Message::NoticeResponse(f) => {
                let _ = f.iter().count();
            }
            Message::ParameterDescription(p) => assert_eq!(p.types().count(), p.len()),
            Message::CopyInResponse(c) | Message::CopyOutResponse(c) | Message::CopyBothResponse(c) => {
                assert_eq!(c.column_formats().count(), c.column_count());
            }
            _ => {}
        }
        rest = &rest[used..];
    }
    // The DataRow fast path on its own, with arbitrary expected counts.
    if let Some((&count, body)) = data.split_first() {
        let mut spans = Vec::new();
        let _ = data_row_spans(body, 0, u16::from(count), &mut spans);
    }
});
