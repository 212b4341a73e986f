//! Tests of arrays against golden values from PostgreSQL 15 (`array_send`, `array_out`).

use super::*;
use crate::types::{ConversionErrorKind, Date, Interval, Numeric, Uuid, oid};
use proptest::prelude::*;
use std::borrow::Cow;

fn unhex(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

fn binary(value: &dyn ToSql, oid: Oid) -> Vec<u8> {
    let mut out = BytesMut::new();
    assert!(value.accepts_binary(oid), "{value:?}");
    value.to_sql_binary(oid, &mut out).unwrap();
    out.to_vec()
}

fn text(value: &dyn ToSql) -> String {
    let mut out = BytesMut::new();
    value.to_sql_text(&mut out).unwrap();
    String::from_utf8(out.to_vec()).unwrap()
}

const INT4_WITH_NULL: &str =
    "000000010000000100000017000000030000000100000004000000010000000400000002ffffffff";
const TEXT_TRICKY: &str = "000000010000000100000019000000090000000100000005612022622200000000000000044e554c4cffffffff00000003782c79000000027b7d0000000a6261636b5c736c61736800000005206c65616400000002c3a9";
const TEXT_TRICKY_OUT: &str = r#"{"a \"b\"","","NULL",NULL,"x,y","{}","back\\slash"," lead",é}"#;

fn tricky() -> Vec<Option<&'static str>> {
    vec![
        Some("a \"b\""),
        Some(""),
        Some("NULL"),
        None,
        Some("x,y"),
        Some("{}"),
        Some("back\\slash"),
        Some(" lead"),
        Some("é"),
    ]
}

#[test]
fn int4_array_golden() {
    let values = vec![Some(1), Some(2), None::<i32>];
    assert_eq!(binary(&values, oid::INT4_ARRAY), unhex(INT4_WITH_NULL));
    assert_eq!(text(&values), "{1,2,NULL}");
    let raw = unhex(INT4_WITH_NULL);
    assert_eq!(
        Vec::<Option<i32>>::from_sql(oid::INT4_ARRAY, Format::Binary, &raw),
        Ok(values.clone())
    );
    assert_eq!(
        Vec::<Option<i32>>::from_sql(oid::INT4_ARRAY, Format::Text, b"{1,2,NULL}"),
        Ok(values)
    );
    // An int4[] reads as Vec<i64> too (lossless widening of each element).
    assert_eq!(
        Vec::<Option<i64>>::from_sql(oid::INT4_ARRAY, Format::Binary, &raw),
        Ok(vec![Some(1), Some(2), None])
    );
}

#[test]
fn empty_and_lower_bound_golden() {
    let empty = unhex("000000000000000000000017");
    assert_eq!(binary(&Vec::<i32>::new(), oid::INT4_ARRAY), empty);
    assert_eq!(text(&Vec::<i32>::new()), "{}");
    assert_eq!(
        Vec::<i32>::from_sql(oid::INT4_ARRAY, Format::Binary, &empty),
        Ok(vec![])
    );
    assert_eq!(
        Vec::<i32>::from_sql(oid::INT4_ARRAY, Format::Text, b"{}"),
        Ok(vec![])
    );
    // '[0:1]={5,6}'::int4[]
    let shifted = unhex("000000010000000000000017000000020000000000000004000000050000000400000006");
    assert_eq!(
        Vec::<i32>::from_sql(oid::INT4_ARRAY, Format::Binary, &shifted),
        Ok(vec![5, 6])
    );
    assert_eq!(
        Vec::<i32>::from_sql(oid::INT4_ARRAY, Format::Text, b"[0:1]={5,6}"),
        Ok(vec![5, 6])
    );
}

#[test]
fn text_array_quoting_golden() {
    let values = tricky();
    assert_eq!(binary(&values, oid::TEXT_ARRAY), unhex(TEXT_TRICKY));
    assert_eq!(text(&values), TEXT_TRICKY_OUT);
    let owned: Vec<Option<String>> = values.iter().map(|v| v.map(str::to_owned)).collect();
    assert_eq!(
        Vec::<Option<String>>::from_sql(oid::TEXT_ARRAY, Format::Text, TEXT_TRICKY_OUT.as_bytes()),
        Ok(owned.clone())
    );
    assert_eq!(
        Vec::<Option<String>>::from_sql(oid::TEXT_ARRAY, Format::Binary, &unhex(TEXT_TRICKY)),
        Ok(owned)
    );
    // Borrowed strings read the binary form, and the text form where nothing was escaped.
    assert_eq!(
        Vec::<Option<&str>>::from_sql(oid::TEXT_ARRAY, Format::Binary, &unhex(TEXT_TRICKY)),
        Ok(values)
    );
    assert_eq!(
        Vec::<&str>::from_sql(
            oid::TEXT_ARRAY,
            Format::Text,
            r#"{a,"b c","",é}"#.as_bytes()
        ),
        Ok(vec!["a", "b c", "", "é"])
    );
    let err =
        Vec::<Option<&str>>::from_sql(oid::TEXT_ARRAY, Format::Text, TEXT_TRICKY_OUT.as_bytes())
            .unwrap_err();
    assert_eq!(err.kind(), ConversionErrorKind::WrongType);
    assert!(err.to_string().contains("array element 1"), "{err}");
    // Cow borrows what it can and owns the rest.
    let cows = Vec::<Option<Cow<'_, str>>>::from_sql(
        oid::TEXT_ARRAY,
        Format::Text,
        TEXT_TRICKY_OUT.as_bytes(),
    )
    .unwrap();
    assert!(matches!(cows[0], Some(Cow::Owned(_))) && matches!(cows[1], Some(Cow::Borrowed(""))));
}

#[test]
fn whitespace_nulls_and_quoted_null() {
    // select '{ a , "b" , NULL , null, "NULL" , c d }'::text[]::text = {a,b,NULL,NULL,"NULL","c d"}
    let parsed = Vec::<Option<String>>::from_sql(
        oid::TEXT_ARRAY,
        Format::Text,
        br#"{ a , "b" , NULL , null, "NULL" , c d }"#,
    )
    .unwrap();
    let expected = [Some("a"), Some("b"), None, None, Some("NULL"), Some("c d")];
    assert_eq!(parsed, expected.map(|v| v.map(str::to_owned)));
    // select array['  x  ', 'a b', E'tab\there', E'nl\nx']::text
    let spaced = vec!["  x  ", "a b", "tab\there", "nl\nx"];
    assert_eq!(text(&spaced), "{\"  x  \",\"a b\",\"tab\there\",\"nl\nx\"}");
    // select array[E'a\\b', 'x"y', 'nULl', '}', '{', E'\t', 'a;b', '  ']::text
    let specials = vec!["a\\b", "x\"y", "nULl", "}", "{", "\t", "a;b", "  "];
    let written = text(&specials);
    assert_eq!(
        written,
        "{\"a\\\\b\",\"x\\\"y\",\"nULl\",\"}\",\"{\",\"\t\",a;b,\"  \"}"
    );
    assert_eq!(
        Vec::<String>::from_sql(oid::TEXT_ARRAY, Format::Text, written.as_bytes()).unwrap(),
        specials
    );
    // Mixed quoted and unquoted parts, and escapes outside quotes, as array_in reads them.
    assert_eq!(
        Vec::<String>::from_sql(oid::TEXT_ARRAY, Format::Text, br#"{a"b c"d,x\,y}"#),
        Ok(vec!["ab cd".to_owned(), "x,y".to_owned()])
    );
}

#[test]
fn element_types_golden() {
    // array['1.50'::numeric, 'NaN', null]
    let numerics = vec![
        Some("1.50".parse::<Numeric>().unwrap()),
        Some(Numeric::nan()),
        None,
    ];
    let raw = unhex(
        "0000000100000001000006a400000003000000010000000c0002000000000002000113880000000800000000c0000000ffffffff",
    );
    assert_eq!(binary(&numerics, oid::NUMERIC_ARRAY), raw);
    assert_eq!(
        Vec::<Option<Numeric>>::from_sql(oid::NUMERIC_ARRAY, Format::Binary, &raw),
        Ok(numerics.clone())
    );
    assert_eq!(text(&numerics), "{1.50,NaN,NULL}");
    // array['infinity'::date, '2024-02-29', '0044-03-15 BC']
    let dates = vec![
        Date::INFINITY,
        Date::from_ymd(2024, 2, 29).unwrap(),
        Date::from_ymd(-43, 3, 15).unwrap(),
    ];
    let raw = unhex(
        "00000001000000000000043a0000000300000001000000047fffffff000000040000227900000004fff49d7b",
    );
    assert_eq!(binary(&dates, oid::DATE_ARRAY), raw);
    assert_eq!(text(&dates), r#"{infinity,2024-02-29,"0044-03-15 BC"}"#);
    assert_eq!(
        Vec::<Date>::from_sql(
            oid::DATE_ARRAY,
            Format::Text,
            br#"{infinity,2024-02-29,"0044-03-15 BC"}"#
        ),
        Ok(dates)
    );
    // array['1 day -00:00:01'::interval, '00:00:00']
    let intervals = vec![Interval::new(0, 1, -1_000_000), Interval::ZERO];
    let raw = unhex(
        "0000000100000000000004a2000000020000000100000010fffffffffff0bdc000000001000000000000001000000000000000000000000000000000",
    );
    assert_eq!(binary(&intervals, oid::INTERVAL_ARRAY), raw);
    assert_eq!(
        Vec::<Interval>::from_sql(
            oid::INTERVAL_ARRAY,
            Format::Text,
            br#"{"1 day -00:00:01",00:00:00}"#
        ),
        Ok(intervals)
    );
    // array['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid]
    let uuids = vec![Uuid::from_u128(0xa0eebc999c0b4ef8bb6d6bb9bd380a11)];
    let raw =
        unhex("000000010000000000000b86000000010000000100000010a0eebc999c0b4ef8bb6d6bb9bd380a11");
    assert_eq!(binary(&uuids, oid::UUID_ARRAY), raw);
    assert_eq!(text(&uuids), "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}");
    // array['\x00ff'::bytea, ''::bytea, null] prints {"\\x00ff","\\x",NULL}
    let blobs = vec![Some(vec![0u8, 0xff]), Some(vec![]), None];
    let raw = unhex("00000001000000010000001100000003000000010000000200ff00000000ffffffff");
    assert_eq!(binary(&blobs, oid::BYTEA_ARRAY), raw);
    assert_eq!(text(&blobs), r#"{"\\x00ff","\\x",NULL}"#);
    assert_eq!(
        Vec::<Option<Vec<u8>>>::from_sql(
            oid::BYTEA_ARRAY,
            Format::Text,
            br#"{"\\x00ff","\\x",NULL}"#
        ),
        Ok(blobs.clone())
    );
    assert_eq!(
        Vec::<Option<&[u8]>>::from_sql(oid::BYTEA_ARRAY, Format::Binary, &raw),
        Ok(vec![Some(&[0u8, 0xff][..]), Some(&[][..]), None])
    );
    // array[true, false] and array[null::bool]
    let raw = unhex("000000010000000000000010000000020000000100000001010000000100");
    assert_eq!(binary(&&[true, false][..], oid::BOOL_ARRAY), raw);
    assert_eq!(binary(&[true, false], oid::BOOL_ARRAY), raw);
    assert_eq!(
        Vec::<bool>::from_sql(oid::BOOL_ARRAY, Format::Text, b"{t,f}"),
        Ok(vec![true, false])
    );
    let raw = unhex("0000000100000001000000100000000100000001ffffffff");
    assert_eq!(binary(&vec![None::<bool>], oid::BOOL_ARRAY), raw);
    // array[1.5::float8, 'NaN', '-Infinity'], array['2024-01-01 00:00'::timestamp], jsonb, "char"
    let floats =
        Vec::<f64>::from_sql(oid::FLOAT8_ARRAY, Format::Text, b"{1.5,NaN,-Infinity}").unwrap();
    assert!(floats[0] == 1.5 && floats[1].is_nan() && floats[2] == f64::NEG_INFINITY);
    let stamps = Vec::<crate::types::Timestamp>::from_sql(
        oid::TIMESTAMP_ARRAY,
        Format::Text,
        br#"{"2024-01-01 00:00:00"}"#,
    )
    .unwrap();
    assert_eq!(stamps[0].to_string(), "2024-01-01 00:00:00");
    assert_eq!(
        Vec::<String>::from_sql(oid::JSONB_ARRAY, Format::Text, br#"{"{\"a\": 1}"}"#),
        Ok(vec![r#"{"a": 1}"#.to_owned()])
    );
    assert_eq!(
        Vec::<i8>::from_sql(oid::CHAR_ARRAY, Format::Text, b"{a}"),
        Ok(vec![b'a' as i8])
    );
}

#[test]
fn multidimensional_arrays_are_refused_clearly() {
    // '{{1,2},{3,4}}'::int[]
    let raw = unhex(
        "000000020000000000000017000000020000000100000002000000010000000400000001000000040000000200000004000000030000000400000004",
    );
    let err = Vec::<i32>::from_sql(oid::INT4_ARRAY, Format::Binary, &raw).unwrap_err();
    assert_eq!(err.kind(), ConversionErrorKind::WrongType);
    assert!(err.to_string().contains("2 dimensions"), "{err}");
    let err = Vec::<i32>::from_sql(oid::INT4_ARRAY, Format::Text, b"{{1,2},{3,4}}").unwrap_err();
    assert_eq!(err.kind(), ConversionErrorKind::WrongType);
    assert!(err.to_string().contains("one-dimensional"), "{err}");
    let err =
        Vec::<i32>::from_sql(oid::INT4_ARRAY, Format::Text, b"[1:2][1:1]={{1},{2}}").unwrap_err();
    assert_eq!(err.kind(), ConversionErrorKind::WrongType);
}

#[test]
fn errors_name_the_element() {
    let err = Vec::<i32>::from_sql(oid::INT4_ARRAY, Format::Text, b"{1,NULL}").unwrap_err();
    assert_eq!(err.kind(), ConversionErrorKind::UnexpectedNull);
    assert!(err.to_string().contains("array element 2"), "{err}");
    let err = Vec::<i32>::from_sql(oid::INT4_ARRAY, Format::Text, b"{1,x}").unwrap_err();
    assert_eq!(err.kind(), ConversionErrorKind::Invalid);
    assert!(err.to_string().contains("array element 2 (int4)"), "{err}");
    for bad in [
        &b"{1,}"[..],
        b"{1",
        b"1,2",
        b"{1} x",
        b"{\"a}",
        b"[1:3]={1,2}",
        b"{a\\}",
        b"[0:9223372036854775807]={1}",
        b"[-2147483648:2147483647]={1}",
        b"[2:1]={}x",
    ] {
        let err = Vec::<String>::from_sql(oid::TEXT_ARRAY, Format::Text, bad).unwrap_err();
        assert_eq!(
            err.kind(),
            ConversionErrorKind::Invalid,
            "{}",
            String::from_utf8_lossy(bad)
        );
    }
    let err = Vec::<i32>::from_sql(oid::TEXT_ARRAY, Format::Text, b"{1}").unwrap_err();
    assert_eq!(err.kind(), ConversionErrorKind::WrongType);
    let mut out = BytesMut::from(&b"keep"[..]);
    let err = vec![1i64, 70_000]
        .to_sql_binary(oid::INT2_ARRAY, &mut out)
        .unwrap_err();
    assert_eq!(err.kind(), ConversionErrorKind::OutOfRange);
    assert!(err.to_string().contains("array element 2"), "{err}");
    assert_eq!(&out[..], b"keep");
    assert!(!vec![1i32].accepts_binary(oid::INT4));
    assert!(!vec![1i32].accepts_binary(oid::TEXT_ARRAY));
}

proptest! {
    #[test]
    fn int_arrays_round_trip(values: Vec<Option<i64>>) {
        let raw = binary(&values, oid::INT8_ARRAY);
        prop_assert_eq!(Vec::<Option<i64>>::from_sql(oid::INT8_ARRAY, Format::Binary, &raw), Ok(values.clone()));
        let written = text(&values);
        prop_assert_eq!(Vec::<Option<i64>>::from_sql(oid::INT8_ARRAY, Format::Text, written.as_bytes()), Ok(values));
    }

    #[test]
    fn string_arrays_round_trip(values: Vec<Option<String>>) {
        let raw = binary(&values, oid::TEXT_ARRAY);
        prop_assert_eq!(Vec::<Option<String>>::from_sql(oid::TEXT_ARRAY, Format::Binary, &raw), Ok(values.clone()));
        let written = text(&values);
        prop_assert_eq!(Vec::<Option<String>>::from_sql(oid::TEXT_ARRAY, Format::Text, written.as_bytes()), Ok(values));
    }

    #[test]
    fn special_character_strings_round_trip(values in prop::collection::vec("[ \"\\\\{},a-cNUL\t\n]{0,8}", 0..8)) {
        let written = text(&values);
        prop_assert_eq!(Vec::<String>::from_sql(oid::TEXT_ARRAY, Format::Text, written.as_bytes()), Ok(values));
    }

    #[test]
    fn bytea_arrays_round_trip(values: Vec<Vec<u8>>) {
        let raw = binary(&values, oid::BYTEA_ARRAY);
        prop_assert_eq!(Vec::<Vec<u8>>::from_sql(oid::BYTEA_ARRAY, Format::Binary, &raw), Ok(values.clone()));
        let written = text(&values);
        prop_assert_eq!(Vec::<Vec<u8>>::from_sql(oid::BYTEA_ARRAY, Format::Text, written.as_bytes()), Ok(values));
    }

    #[test]
    fn never_panics_on_arbitrary_bytes(raw: Vec<u8>) {
        for format in [Format::Binary, Format::Text] {
            let _ = Vec::<Option<i32>>::from_sql(oid::INT4_ARRAY, format, &raw);
            let _ = Vec::<Option<&str>>::from_sql(oid::TEXT_ARRAY, format, &raw);
            let _ = Vec::<Option<String>>::from_sql(oid::TEXT_ARRAY, format, &raw);
            let _ = Vec::<Vec<u8>>::from_sql(oid::BYTEA_ARRAY, format, &raw);
        }
    }

    #[test]
    fn never_panics_on_array_like_text(raw in "[\\[\\]0-9:={},\"\\\\ aNUL]{0,30}") {
        let _ = Vec::<Option<String>>::from_sql(oid::TEXT_ARRAY, Format::Text, raw.as_bytes());
        let _ = Vec::<Option<i32>>::from_sql(oid::INT4_ARRAY, Format::Text, raw.as_bytes());
    }

    #[test]
    fn never_panics_on_framed_binary(ndim in -1i32..3, flags in 0i32..3, count in -2i32..5, lengths in prop::collection::vec(-2i32..6, 0..6), tail in prop::collection::vec(any::<u8>(), 0..20)) {
        let mut raw = Vec::new();
        raw.extend_from_slice(&ndim.to_be_bytes());
        raw.extend_from_slice(&flags.to_be_bytes());
        raw.extend_from_slice(&oid::INT4.to_be_bytes());
        raw.extend_from_slice(&count.to_be_bytes());
        raw.extend_from_slice(&1i32.to_be_bytes());
        for length in lengths {
            raw.extend_from_slice(&length.to_be_bytes());
            raw.extend(std::iter::repeat_n(7u8, length.max(0) as usize));
        }
        raw.extend_from_slice(&tail);
        let _ = Vec::<Option<i32>>::from_sql(oid::INT4_ARRAY, Format::Binary, &raw);
    }
}
