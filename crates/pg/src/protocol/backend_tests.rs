//! Golden-byte and property tests for the backend message parser.

use super::*;
use proptest::prelude::*;

/// Frames a body as a backend message of type `tag`.
fn msg(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![tag];
    v.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
    v.extend_from_slice(body);
    v
}

/// Parses exactly one whole message; the bytes are leaked so the message can outlive the caller's
/// temporary.
fn one(bytes: &[u8]) -> Message<'static> {
    let bytes: &'static [u8] = Box::leak(bytes.to_vec().into_boxed_slice());
    let (m, n) = parse(bytes).unwrap().expect("a whole message");
    assert_eq!(n, bytes.len());
    m
}

#[test]
fn authentication_messages() {
    assert_eq!(
        one(&msg(b'R', &[0, 0, 0, 0])),
        Message::Authentication(Authentication::Ok)
    );
    assert_eq!(
        one(&msg(b'R', &[0, 0, 0, 3])),
        Message::Authentication(Authentication::CleartextPassword)
    );
    assert_eq!(
        one(&msg(b'R', &[0, 0, 0, 5, 1, 2, 3, 4])),
        Message::Authentication(Authentication::Md5Password { salt: [1, 2, 3, 4] })
    );
    let sasl = msg(b'R', b"\0\0\0\x0aSCRAM-SHA-256-PLUS\0SCRAM-SHA-256\0\0");
    let Message::Authentication(Authentication::Sasl { mechanisms }) = one(&sasl) else {
        panic!("not SASL")
    };
    let names: Vec<_> = Authentication::sasl_mechanisms(mechanisms).collect();
    assert_eq!(names, [&b"SCRAM-SHA-256-PLUS"[..], b"SCRAM-SHA-256"]);
    assert_eq!(
        one(&msg(b'R', b"\0\0\0\x0br=abc")),
        Message::Authentication(Authentication::SaslContinue(b"r=abc"))
    );
    assert_eq!(
        one(&msg(b'R', b"\0\0\0\x0cv=xyz")),
        Message::Authentication(Authentication::SaslFinal(b"v=xyz"))
    );
    assert_eq!(
        one(&msg(b'R', &[0, 0, 0, 7])),
        Message::Authentication(Authentication::Unsupported(7))
    );
}

#[test]
fn md5_without_salt_is_malformed() {
    let err = parse(&msg(b'R', &[0, 0, 0, 5, 1])).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::Malformed);
    assert_eq!(err.offset(), 9);
}

#[test]
fn key_data_status_and_simple_messages() {
    assert_eq!(
        one(&msg(b'K', &[0, 0, 0, 42, 9, 8, 7, 6])),
        Message::BackendKeyData {
            process_id: 42,
            secret_key: &[9, 8, 7, 6]
        }
    );
    assert_eq!(one(&msg(b'2', &[])), Message::BindComplete);
    assert_eq!(one(&msg(b'3', &[])), Message::CloseComplete);
    assert_eq!(one(&msg(b'1', &[])), Message::ParseComplete);
    assert_eq!(one(&msg(b'n', &[])), Message::NoData);
    assert_eq!(one(&msg(b's', &[])), Message::PortalSuspended);
    assert_eq!(one(&msg(b'I', &[])), Message::EmptyQueryResponse);
    assert_eq!(one(&msg(b'c', &[])), Message::CopyDone);
    assert_eq!(
        one(&msg(b'C', b"SELECT 5\0")),
        Message::CommandComplete { tag: "SELECT 5" }
    );
    assert_eq!(
        one(&msg(b'S', b"TimeZone\0UTC\0")),
        Message::ParameterStatus {
            name: "TimeZone",
            value: "UTC"
        }
    );
    assert_eq!(
        one(&msg(b'Z', b"I")),
        Message::ReadyForQuery(TransactionStatus::Idle)
    );
    assert_eq!(
        one(&msg(b'Z', b"T")),
        Message::ReadyForQuery(TransactionStatus::InTransaction)
    );
    assert_eq!(
        one(&msg(b'Z', b"E")),
        Message::ReadyForQuery(TransactionStatus::Failed)
    );
    assert!(parse(&msg(b'Z', b"X")).is_err());
    assert!(
        parse(&msg(b'1', b"x")).is_err(),
        "empty messages carry no body"
    );
}

#[test]
fn copy_messages() {
    assert_eq!(one(&msg(b'd', b"1\t2\n")), Message::CopyData(b"1\t2\n"));
    let Message::CopyInResponse(r) = one(&msg(b'G', &[0, 0, 2, 0, 0, 0, 0])) else {
        panic!("not CopyIn")
    };
    assert_eq!(r.format, Format::Text);
    assert_eq!(
        r.column_formats().collect::<Vec<_>>(),
        [Format::Text, Format::Text]
    );
    let Message::CopyOutResponse(r) = one(&msg(b'H', &[1, 0, 1, 0, 1])) else {
        panic!("not CopyOut")
    };
    assert_eq!((r.format, r.column_count()), (Format::Binary, 1));
    assert!(matches!(
        one(&msg(b'W', &[0, 0, 0])),
        Message::CopyBothResponse(_)
    ));
    assert!(
        parse(&msg(b'G', &[2, 0, 0])).is_err(),
        "format must be 0 or 1"
    );
}

#[test]
fn data_row_with_null_and_empty() {
    let body = b"\0\x03\0\0\0\x0242\xff\xff\xff\xff\0\0\0\0";
    let Message::DataRow(row) = one(&msg(b'D', body)) else {
        panic!("not DataRow")
    };
    assert_eq!(row.len(), 3);
    assert_eq!(
        row.fields().collect::<Vec<_>>(),
        [Some(&b"42"[..]), None, Some(&b""[..])]
    );

    let mut spans = Vec::new();
    data_row_spans(body, 100, 3, &mut spans).unwrap();
    assert_eq!(
        spans,
        [
            FieldSpan { start: 106, len: 2 },
            FieldSpan {
                start: 112,
                len: -1
            },
            FieldSpan { start: 116, len: 0 }
        ]
    );
}

#[test]
fn data_row_errors() {
    // A field longer than the message.
    let err = parse(&msg(b'D', b"\0\x01\0\0\0\x09ab")).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::Malformed);
    // Trailing bytes.
    assert!(parse(&msg(b'D', b"\0\x01\0\0\0\x01ab")).is_err());
    // Length -2.
    assert!(parse(&msg(b'D', b"\0\x01\xff\xff\xff\xfe")).is_err());
    let mut spans = Vec::new();
    assert!(data_row_spans(b"\0\x01\0\0\0\x09ab", 0, 1, &mut spans).is_err());
    assert!(
        data_row_spans(b"\0\x02\0\0\0\x01a", 0, 1, &mut spans).is_err(),
        "count mismatch"
    );
    assert!(data_row_spans(b"\0\x01\xff\xff\xff\xfe", 0, 1, &mut spans).is_err());
}

#[test]
fn error_and_notice_fields() {
    let body = b"SERROR\0C42601\0Msyntax error at or near \"x\"\0P8\0\0";
    let Message::ErrorResponse(fields) = one(&msg(b'E', body)) else {
        panic!("not error")
    };
    let fields: Vec<_> = fields.iter().collect();
    assert_eq!(
        fields,
        [
            (b'S', &b"ERROR"[..]),
            (b'C', b"42601"),
            (b'M', b"syntax error at or near \"x\""),
            (b'P', b"8")
        ]
    );
    assert!(matches!(
        one(&msg(b'N', b"SNOTICE\0\0")),
        Message::NoticeResponse(_)
    ));
    assert!(
        parse(&msg(b'E', b"SERROR\0")).is_err(),
        "missing terminator"
    );
    assert!(parse(&msg(b'E', b"SERROR")).is_err(), "unterminated value");
}

#[test]
fn notification_and_parameter_description() {
    assert_eq!(
        one(&msg(b'A', b"\0\0\0\x07chan\0hello\0")),
        Message::NotificationResponse {
            process_id: 7,
            channel: "chan",
            payload: "hello"
        }
    );
    let Message::ParameterDescription(p) = one(&msg(b't', &[0, 2, 0, 0, 0, 23, 0, 0, 0, 25]))
    else {
        panic!("not ParameterDescription")
    };
    assert_eq!(p.types().collect::<Vec<_>>(), [23, 25]);
    assert!(parse(&msg(b't', &[0, 2, 0, 0, 0, 23])).is_err());
}

#[test]
fn row_description() {
    let mut body = vec![0, 2];
    body.extend_from_slice(b"aid\0\0\0\x40\x01\0\x01\0\0\0\x17\0\x04\xff\xff\xff\xff\0\0");
    body.extend_from_slice(b"filler\0\0\0\0\0\0\0\0\0\x04\x12\xff\xff\0\0\0\x58\0\x01");
    let Message::RowDescription(rd) = one(&msg(b'T', &body)) else {
        panic!("not T")
    };
    let cols: Vec<_> = rd.fields().collect();
    assert_eq!(cols.len(), 2);
    assert_eq!(
        cols[0],
        FieldDescription {
            name: "aid",
            table_oid: 0x4001,
            column_id: 1,
            type_oid: 23,
            type_size: 4,
            type_modifier: -1,
            format: Format::Text
        }
    );
    assert_eq!(
        (cols[1].name, cols[1].type_oid, cols[1].type_modifier),
        ("filler", 1042, 88)
    );
    assert_eq!(cols[1].format, Format::Binary);
    // One column short.
    assert!(parse(&msg(b'T', &body[..body.len() - 1])).is_err());
}

#[test]
fn negotiate_and_function_call() {
    assert_eq!(
        one(&msg(b'v', b"\0\0\0\0\0\0\0\x01_pq_.x\0")),
        Message::NegotiateProtocolVersion {
            newest_minor: 0,
            unrecognized: b"_pq_.x\0"
        }
    );
    assert_eq!(
        one(&msg(b'V', b"\0\0\0\x01z")),
        Message::FunctionCallResponse(Some(b"z"))
    );
    assert_eq!(
        one(&msg(b'V', b"\xff\xff\xff\xff")),
        Message::FunctionCallResponse(None)
    );
}

#[test]
fn incomplete_and_invalid_framing() {
    let whole = msg(b'C', b"SELECT 1\0");
    for cut in 0..whole.len() {
        assert_eq!(parse(&whole[..cut]), Ok(None), "prefix of {cut} bytes");
    }
    let err = parse(b"C\0\0\0\x03").unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::InvalidLength);
    let err = parse(b"D\x7f\xff\xff\xff").unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::InvalidLength);
    let err = parse(&msg(b'?', b"")).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::UnknownMessage);
    let err = parse(&msg(b'C', b"\xff\xfe\0")).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::InvalidUtf8);
    assert!(err.to_string().contains("'C'"), "{err}");
}

#[test]
fn messages_in_sequence() {
    let mut stream = msg(b'1', &[]);
    stream.extend(msg(b'2', &[]));
    stream.extend(msg(b'Z', b"I"));
    let mut rest = &stream[..];
    let mut seen = Vec::new();
    while let Some((m, n)) = parse(rest).unwrap() {
        seen.push(m);
        rest = &rest[n..];
    }
    assert_eq!(
        seen,
        [
            Message::ParseComplete,
            Message::BindComplete,
            Message::ReadyForQuery(TransactionStatus::Idle)
        ]
    );
}

const TAGS: &[u8] = b"RK23CdcGHWDIEVvnNAtS1sZT";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    /// Any bytes: no panic, and a claimed message size is within the input.
    #[test]
    fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        if let Ok(Some((_, n))) = parse(&bytes) {
            prop_assert!(n <= bytes.len() && n >= 5);
        }
    }

    /// Well-framed messages of every type with arbitrary bodies: no panic; every accessor of a
    /// successfully parsed message runs to completion.
    #[test]
    fn framed_bodies_never_panic(
        tag in proptest::sample::select(TAGS),
        body in proptest::collection::vec(any::<u8>(), 0..128),
    ) {
        let bytes = msg(tag, &body);
        if let Ok(Some((m, n))) = parse(&bytes) {
            prop_assert_eq!(n, bytes.len());
            match m {
                Message::DataRow(row) => {
                    prop_assert_eq!(row.fields().count(), row.len());
                    let mut spans = Vec::new();
                    prop_assert!(data_row_spans(&body, 5, row.len() as u16, &mut spans).is_ok());
                }
                Message::RowDescription(rd) => prop_assert_eq!(rd.fields().count(), rd.len()),
                Message::ErrorResponse(f) | Message::NoticeResponse(f) => { f.iter().count(); }
                Message::ParameterDescription(p) => prop_assert_eq!(p.types().count(), p.len()),
                Message::CopyInResponse(c) => prop_assert_eq!(c.column_formats().count(), c.column_count()),
                _ => {}
            }
        }
    }

    /// Data rows built from arbitrary fields parse back to the same fields, both ways.
    #[test]
    fn data_row_round_trip(fields in proptest::collection::vec(
        proptest::option::of(proptest::collection::vec(any::<u8>(), 0..20)), 0..20)
    ) {
        let mut body = (fields.len() as u16).to_be_bytes().to_vec();
        for f in &fields {
            match f {
                Some(v) => {
                    body.extend_from_slice(&(v.len() as i32).to_be_bytes());
                    body.extend_from_slice(v);
                }
                None => body.extend_from_slice(&(-1i32).to_be_bytes()),
            }
        }
        let bytes = msg(b'D', &body);
        let Message::DataRow(row) = one(&bytes) else { panic!("not DataRow") };
        let parsed: Vec<_> = row.fields().map(|f| f.map(<[u8]>::to_vec)).collect();
        prop_assert_eq!(&parsed, &fields);
        let mut spans = Vec::new();
        data_row_spans(&body, 5, fields.len() as u16, &mut spans).unwrap();
        let from_spans: Vec<_> = spans.iter().map(|s| {
            (s.len >= 0).then(|| bytes[s.start as usize..s.start as usize + s.len as usize].to_vec())
        }).collect();
        prop_assert_eq!(&from_spans, &fields);
    }
}
