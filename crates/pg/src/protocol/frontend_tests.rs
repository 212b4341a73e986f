//! Golden-byte tests for every frontend message.

use super::*;

fn encoded(f: impl FnOnce(&mut BytesMut)) -> Vec<u8> {
    let mut buf = BytesMut::new();
    f(&mut buf);
    buf.to_vec()
}

#[test]
fn startup_message() {
    let bytes = encoded(|b| startup(&[("user", "bob"), ("database", "db")], b).unwrap());
    let mut expected = vec![0, 0, 0, 30, 0, 3, 0, 0];
    expected.extend_from_slice(b"user\0bob\0database\0db\0\0");
    assert_eq!(bytes, expected);
}

#[test]
fn startup_rejects_nul_and_leaves_buffer_clean() {
    let mut buf = BytesMut::from(&b"keep"[..]);
    let err = startup(&[("user", "b\0b")], &mut buf).unwrap_err();
    assert_eq!(
        err,
        EncodeError::NulInString {
            what: "startup parameter value",
            offset: 1
        }
    );
    assert_eq!(&buf[..], b"keep");
}

#[test]
fn ssl_and_cancel_requests() {
    assert_eq!(encoded(ssl_request), [0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);
    assert_eq!(
        encoded(|b| cancel_request(0x0102_0304, -1, b)),
        [
            0, 0, 0, 16, 0x04, 0xd2, 0x16, 0x2e, 1, 2, 3, 4, 0xff, 0xff, 0xff, 0xff
        ]
    );
}

#[test]
fn password_messages() {
    assert_eq!(encoded(|b| password(b"pw", b).unwrap()), b"p\0\0\0\x07pw\0");
    assert_eq!(
        encoded(|b| sasl_initial_response("SCRAM-SHA-256", b"n,,n=", b).unwrap()),
        b"p\0\0\0\x1bSCRAM-SHA-256\0\0\0\0\x05n,,n="
    );
    assert_eq!(
        encoded(|b| sasl_response(b"c=biws", b).unwrap()),
        b"p\0\0\0\x0ac=biws"
    );
}

#[test]
fn query_message() {
    assert_eq!(
        encoded(|b| query("SELECT 1", b).unwrap()),
        b"Q\0\0\0\x0dSELECT 1\0"
    );
    let mut buf = BytesMut::new();
    assert_eq!(
        query("SELECT '\0'", &mut buf),
        Err(EncodeError::NulInString {
            what: "SQL text",
            offset: 8
        })
    );
    assert!(buf.is_empty(), "a failed encode leaves nothing behind");
}

#[test]
fn parse_message() {
    assert_eq!(
        encoded(|b| parse("s1", "SELECT $1", &[23], b).unwrap()),
        b"P\0\0\0\x17s1\0SELECT $1\0\0\x01\0\0\0\x17"
    );
    assert_eq!(
        encoded(|b| parse("", "X", &[], b).unwrap()),
        b"P\0\0\0\x09\0X\0\0\0"
    );
}

#[test]
fn bind_message_with_text_params_and_binary_results() {
    let bytes = encoded(|b| {
        bind::<()>(
            "",
            "s1",
            Formats::All(Format::Text),
            |w| {
                w.put_raw(Some(b"42"));
                w.put_raw(None);
                Ok(())
            },
            Formats::All(Format::Binary),
            b,
        )
        .unwrap()
    });
    let expected: &[u8] = b"B\0\0\0\x1a\0s1\0\0\0\0\x02\0\0\0\x0242\xff\xff\xff\xff\0\x01\0\x01";
    assert_eq!(bytes, expected);
}

#[test]
fn bind_message_with_per_param_formats_and_encoder() {
    let bytes = encoded(|b| {
        bind::<()>(
            "p",
            "",
            Formats::Each(&[Format::Binary, Format::Text]),
            |w| {
                w.put(|out| {
                    out.put_i32(7);
                    Ok(IsNull::No)
                })?;
                w.put(|out| {
                    out.put_slice(b"ignored");
                    Ok(IsNull::Yes)
                })
            },
            Formats::Each(&[]),
            b,
        )
        .unwrap()
    });
    let expected: &[u8] =
        b"B\0\0\0\x1dp\0\0\0\x02\0\x01\0\0\0\x02\0\0\0\x04\0\0\0\x07\xff\xff\xff\xff\0\0";
    assert_eq!(bytes, expected);
}

#[test]
fn bind_param_error_leaves_buffer_clean() {
    let mut buf = BytesMut::from(&b"S\0\0\0\x04"[..]);
    let r = bind(
        "",
        "",
        Formats::All(Format::Text),
        |w| {
            w.put_raw(Some(b"1"));
            w.put(|_| Err("bad value"))
        },
        Formats::All(Format::Text),
        &mut buf,
    );
    assert!(matches!(r, Err(BindError::Param("bad value"))));
    assert_eq!(&buf[..], b"S\0\0\0\x04");
}

#[test]
fn describe_execute_close() {
    assert_eq!(
        encoded(|b| describe(Target::Statement, "s1", b).unwrap()),
        b"D\0\0\0\x08Ss1\0"
    );
    assert_eq!(
        encoded(|b| describe(Target::Portal, "", b).unwrap()),
        b"D\0\0\0\x06P\0"
    );
    assert_eq!(
        encoded(|b| execute("", 0, b).unwrap()),
        b"E\0\0\0\x09\0\0\0\0\0"
    );
    assert_eq!(
        encoded(|b| execute("c", 100, b).unwrap()),
        b"E\0\0\0\x0ac\0\0\0\0\x64"
    );
    assert_eq!(
        encoded(|b| close(Target::Statement, "s1", b).unwrap()),
        b"C\0\0\0\x08Ss1\0"
    );
    assert_eq!(
        encoded(|b| close(Target::Portal, "", b).unwrap()),
        b"C\0\0\0\x06P\0"
    );
}

#[test]
fn fixed_messages() {
    assert_eq!(encoded(sync), b"S\0\0\0\x04");
    assert_eq!(encoded(flush), b"H\0\0\0\x04");
    assert_eq!(encoded(terminate), b"X\0\0\0\x04");
    assert_eq!(encoded(copy_done), b"c\0\0\0\x04");
}

#[test]
fn copy_messages() {
    assert_eq!(
        encoded(|b| copy_data(b"1\t2\n", b).unwrap()),
        b"d\0\0\0\x081\t2\n"
    );
    assert_eq!(copy_data_header(4).unwrap(), *b"d\0\0\0\x08");
    assert_eq!(
        encoded(|b| copy_fail("stop", b).unwrap()),
        b"f\0\0\0\x09stop\0"
    );
    assert_eq!(
        copy_data_header(usize::MAX / 2),
        Err(EncodeError::TooLong {
            message: "CopyData"
        })
    );
}

#[test]
fn too_many_parameter_types() {
    let mut buf = BytesMut::new();
    let oids = vec![0; 70_000];
    assert_eq!(
        parse("", "SELECT 1", &oids, &mut buf),
        Err(EncodeError::TooManyValues {
            what: "parameter types",
            count: 70_000
        })
    );
    assert!(buf.is_empty());
}
