//! Every supported type through a real server, in both formats, as parameters (text of unknown
//! type before preparation, binary after) and as results, with NULLs and edge values.
#![allow(clippy::unwrap_used)]

use crate::common;

use sluice_pg::types::{Date, Interval, Numeric, Time, Timestamp, TimestampTz, Uuid};
use sluice_pg::{Config, Connection, ErrorKind, Format, FromSql, ToSql};
use std::fmt::Debug;
use std::str::FromStr;

use common::typed_sessions as sessions;

/// For each `(literal, server text)` case of `sql_type`: the value parsed from `literal` goes
/// to the server as a parameter and comes back equal in both formats; the server shows it as
/// `server text`; and the server's own literal decodes to the same value. NULL reads as `None`.
async fn check<T>(sql_type: &str, cases: &[(&str, &str)])
where
    T: ToSql + for<'a> FromSql<'a> + PartialEq + Debug + FromStr,
    <T as FromStr>::Err: Debug,
{
    for conn in &mut sessions().await {
        for &(literal, shown) in cases {
            let value: T = literal
                .parse()
                .unwrap_or_else(|e| panic!("{sql_type} {literal:?}: {e:?}"));
            for format in [Format::Text, Format::Binary] {
                let sql = format!("SELECT $1::{sql_type}, $1::{sql_type}::text");
                for _ in 0..2 {
                    let row = conn
                        .query_one_with(&sql, &[&value], format)
                        .await
                        .unwrap_or_else(|e| panic!("{sql_type} {literal:?} {format:?}: {e}"));
                    let back: T = row
                        .get(0)
                        .unwrap_or_else(|e| panic!("{sql_type} {literal:?} {format:?}: {e}"));
                    assert_eq!(back, value, "{sql_type} {literal:?} in {format:?}");
                    assert_eq!(
                        row.get::<&str>(1).unwrap_or_else(|e| panic!("{e}")),
                        shown,
                        "{sql_type} {literal:?} as text"
                    );
                }
                let quoted = literal.replace('\'', "''");
                let row = conn
                    .query_one_with(&format!("SELECT '{quoted}'::{sql_type}"), &[], format)
                    .await
                    .unwrap();
                let decoded: T = row
                    .get(0)
                    .unwrap_or_else(|e| panic!("{sql_type} {literal:?} {format:?}: {e}"));
                assert_eq!(
                    decoded, value,
                    "server literal {literal:?} of {sql_type} in {format:?}"
                );
            }
        }
        for format in [Format::Text, Format::Binary] {
            let row = conn
                .query_one_with(&format!("SELECT NULL::{sql_type}"), &[], format)
                .await
                .unwrap();
            assert_eq!(row.get::<Option<T>>(0).unwrap(), None);
            let err = row.get::<T>(0).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Conversion, "{err}");
            let none: Option<T> = None;
            let row = conn
                .query_one_with(&format!("SELECT $1::{sql_type} IS NULL"), &[&none], format)
                .await
                .unwrap();
            assert!(row.get::<bool>(0).unwrap());
        }
    }
}

#[tokio::test]
async fn booleans_and_integers() {
    check::<bool>("bool", &[("true", "true"), ("false", "false")]).await;
    check::<i16>(
        "int2",
        &[("0", "0"), ("-32768", "-32768"), ("32767", "32767")],
    )
    .await;
    check::<i32>(
        "int4",
        &[
            ("-2147483648", "-2147483648"),
            ("2147483647", "2147483647"),
            ("7", "7"),
        ],
    )
    .await;
    check::<i64>(
        "int8",
        &[
            ("-9223372036854775808", "-9223372036854775808"),
            ("9223372036854775807", "9223372036854775807"),
        ],
    )
    .await;
    check::<u32>("oid", &[("0", "0"), ("4294967295", "4294967295")]).await;
}

#[tokio::test]
async fn floats() {
    check::<f32>(
        "float4",
        &[
            ("1.5", "1.5"),
            ("-3.4028235e38", "-3.4028235e+38"),
            ("1e-45", "1e-45"),
            ("Infinity", "Infinity"),
            ("-Infinity", "-Infinity"),
            ("-0", "-0"),
        ],
    )
    .await;
    check::<f64>(
        "float8",
        &[
            ("3.141592653589793", "3.141592653589793"),
            ("1e308", "1e+308"),
            ("5e-324", "5e-324"),
            ("-Infinity", "-Infinity"),
            ("0.1", "0.1"),
        ],
    )
    .await;
    for conn in &mut sessions().await {
        for format in [Format::Text, Format::Binary] {
            let row = conn
                .query_one_with(
                    "SELECT 'NaN'::float8, $1::float8, 'NaN'::float4",
                    &[&f64::NAN],
                    format,
                )
                .await
                .unwrap();
            assert!(row.get::<f64>(0).unwrap().is_nan());
            assert!(row.get::<f64>(1).unwrap().is_nan());
            assert!(row.get::<f32>(2).unwrap().is_nan());
        }
    }
}

#[tokio::test]
async fn numerics() {
    check::<Numeric>(
        "numeric",
        &[
            ("0", "0"),
            ("-1.50", "-1.50"),
            (
                "123456789012345678901234567890.000000001",
                "123456789012345678901234567890.000000001",
            ),
            (
                "0.000000000000000000000000000000000001",
                "0.000000000000000000000000000000000001",
            ),
            ("NaN", "NaN"),
            ("Infinity", "Infinity"),
            ("-Infinity", "-Infinity"),
            ("10000", "10000"),
            ("9999.9999", "9999.9999"),
        ],
    )
    .await;
    // A 1001-digit number and a tiny scale survive both formats exactly.
    let big = format!("1{}", "0".repeat(1000));
    let small = format!("0.{}1", "0".repeat(999));
    check::<Numeric>("numeric", &[(&big, &big), (&small, &small)]).await;
}

#[tokio::test]
async fn text_family() {
    let cases = [
        ("", ""),
        ("plain", "plain"),
        ("héllo ☃ 𝄞", "héllo ☃ 𝄞"),
        ("quote ' \" back\\slash", "quote ' \" back\\slash"),
        (
            "line\nbreak\ttab\u{1}control",
            "line\nbreak\ttab\u{1}control",
        ),
    ];
    for ty in ["text", "varchar", "name"] {
        check::<String>(ty, &cases).await;
    }
    // char(n) pads with spaces; the cast to text drops them again.
    check::<String>("char(5)", &[("ab   ", "ab"), ("abcde", "abcde")]).await;
    check::<String>(
        "json",
        &[
            ("{\"a\": [1, 2, null]}", "{\"a\": [1, 2, null]}"),
            ("\"s\"", "\"s\""),
        ],
    )
    .await;
    check::<String>(
        "jsonb",
        &[(
            "{\"a\": [1, 2, null], \"b\": {\"c\": \"d\"}}",
            "{\"a\": [1, 2, null], \"b\": {\"c\": \"d\"}}",
        )],
    )
    .await;
    // Borrowed &str reads without a copy in either format.
    for conn in &mut sessions().await {
        for format in [Format::Text, Format::Binary] {
            let row = conn
                .query_one_with("SELECT 'borrowed'::text", &[], format)
                .await
                .unwrap();
            let s: &str = row.get(0).unwrap();
            assert_eq!(s, "borrowed");
        }
    }
}

#[tokio::test]
async fn bytea() {
    for conn in &mut sessions().await {
        let big: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
        for value in [Vec::new(), vec![0u8, 1, 127, 128, 255], big] {
            for format in [Format::Text, Format::Binary] {
                let row = conn
                    .query_one_with("SELECT $1::bytea, length($1::bytea)", &[&value], format)
                    .await
                    .unwrap();
                assert_eq!(row.get::<Vec<u8>>(0).unwrap(), value);
                assert_eq!(row.get::<i32>(1).unwrap() as usize, value.len());
            }
            let row = conn
                .query_one_with("SELECT $1::bytea", &[&value], Format::Binary)
                .await
                .unwrap();
            assert_eq!(
                row.get::<&[u8]>(0).unwrap(),
                &value[..],
                "borrowed in binary"
            );
        }
        for format in [Format::Text, Format::Binary] {
            let row = conn
                .query_one_with("SELECT '\\x00ff'::bytea, NULL::bytea", &[], format)
                .await
                .unwrap();
            assert_eq!(row.get::<Vec<u8>>(0).unwrap(), [0, 255]);
            assert_eq!(row.get::<Option<Vec<u8>>>(1).unwrap(), None);
        }
    }
}

#[tokio::test]
async fn uuids() {
    check::<Uuid>(
        "uuid",
        &[
            (
                "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
                "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            ),
            (
                "00000000-0000-0000-0000-000000000000",
                "00000000-0000-0000-0000-000000000000",
            ),
            (
                "{A0EEBC99-9C0B4EF8-BB6D6BB9-BD380A11}",
                "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            ),
        ],
    )
    .await;
}

#[tokio::test]
async fn dates_and_times() {
    check::<Date>(
        "date",
        &[
            ("2000-01-01", "2000-01-01"),
            ("1970-01-01", "1970-01-01"),
            ("2024-02-29", "2024-02-29"),
            ("4713-01-01 BC", "4713-01-01 BC"),
            ("5874897-12-31", "5874897-12-31"),
            ("infinity", "infinity"),
            ("-infinity", "-infinity"),
        ],
    )
    .await;
    check::<Time>(
        "time",
        &[
            ("00:00:00", "00:00:00"),
            ("23:59:59.999999", "23:59:59.999999"),
            ("12:34:56.5", "12:34:56.5"),
            ("24:00:00", "24:00:00"),
        ],
    )
    .await;
    check::<Timestamp>(
        "timestamp",
        &[
            ("2000-01-01 00:00:00", "2000-01-01 00:00:00"),
            ("1999-12-31 23:59:59.999999", "1999-12-31 23:59:59.999999"),
            ("2024-02-29 12:34:56.789", "2024-02-29 12:34:56.789"),
            ("0044-03-15 12:00:00 BC", "0044-03-15 12:00:00 BC"),
            (
                "294276-12-31 23:59:59.999999",
                "294276-12-31 23:59:59.999999",
            ),
            ("infinity", "infinity"),
            ("-infinity", "-infinity"),
        ],
    )
    .await;
    check::<TimestampTz>(
        "timestamptz",
        &[
            ("2024-02-29 12:34:56.789+00", "2024-02-29 12:34:56.789+00"),
            ("2024-06-01 05:30:00+05:30", "2024-06-01 00:00:00+00"),
            ("1900-01-01 00:00:00-03:30:15", "1900-01-01 03:30:15+00"),
            ("infinity", "infinity"),
        ],
    )
    .await;
}

#[tokio::test]
async fn timestamptz_in_another_time_zone_is_the_same_instant() {
    let mut conn = common::connect().await;
    conn.batch_execute("SET TimeZone = 'Asia/Kolkata'")
        .await
        .unwrap();
    let utc: TimestampTz = "2024-01-01 00:00:00+00".parse().unwrap();
    for format in [Format::Text, Format::Binary] {
        let row = conn
            .query_one_with(
                "SELECT '2024-01-01 05:30:00+05:30'::timestamptz, now()::text LIKE '%+05:30'",
                &[],
                format,
            )
            .await
            .unwrap();
        assert_eq!(row.get::<TimestampTz>(0).unwrap(), utc);
        assert!(row.get::<bool>(1).unwrap());
    }
}

#[tokio::test]
async fn intervals() {
    check::<Interval>(
        "interval",
        &[
            (
                "1 year 2 mons 3 days 04:05:06.789",
                "1 year 2 mons 3 days 04:05:06.789",
            ),
            ("-1 days +02:00:00", "-1 days +02:00:00"),
            ("00:00:00", "00:00:00"),
            ("-178000000 years", "-178000000 years"),
            ("P1Y2M3DT4H5M6S", "1 year 2 mons 3 days 04:05:06"),
            ("-00:00:00.000001", "-00:00:00.000001"),
        ],
    )
    .await;
}

#[tokio::test]
async fn one_dimensional_arrays() {
    for conn in &mut sessions().await {
        for format in [Format::Text, Format::Binary] {
            let ints: Vec<i32> = vec![1, -2, i32::MAX];
            let row = conn
                .query_one_with(
                    "SELECT $1::int4[], '{}'::int4[], $1::int4[]::text",
                    &[&ints],
                    format,
                )
                .await
                .unwrap();
            assert_eq!(row.get::<Vec<i32>>(0).unwrap(), ints);
            assert_eq!(row.get::<Vec<i32>>(1).unwrap(), Vec::<i32>::new());
            assert_eq!(row.get::<&str>(2).unwrap(), "{1,-2,2147483647}");

            let nullable: Vec<Option<i64>> = vec![Some(1), None, Some(-3)];
            let row = conn
                .query_one_with("SELECT $1::int8[], $1::int8[]::text", &[&nullable], format)
                .await
                .unwrap();
            assert_eq!(row.get::<Vec<Option<i64>>>(0).unwrap(), nullable);
            assert_eq!(row.get::<&str>(1).unwrap(), "{1,NULL,-3}");
            let err = row.get::<Vec<i64>>(0).unwrap_err();
            assert_eq!(
                err.kind(),
                ErrorKind::Conversion,
                "a NULL element needs Option"
            );

            let texts: Vec<String> = [
                "a b",
                "",
                "NULL",
                "\"q\"",
                "back\\slash",
                "{brace}",
                "comma,",
                "é",
            ]
            .map(String::from)
            .to_vec();
            let row = conn
                .query_one_with("SELECT $1::text[], $1::text[]::text", &[&texts], format)
                .await
                .unwrap();
            assert_eq!(row.get::<Vec<String>>(0).unwrap(), texts);
            assert_eq!(
                row.get::<&str>(1).unwrap(),
                r#"{"a b","","NULL","\"q\"","back\\slash","{brace}","comma,",é}"#
            );
            let row = conn
                .query_one_with("SELECT ARRAY['x', NULL]::text[]", &[], format)
                .await
                .unwrap();
            assert_eq!(
                row.get::<Vec<Option<String>>>(0).unwrap(),
                [Some("x".into()), None]
            );

            let floats = vec![1.5f64, f64::INFINITY, -0.25];
            let row = conn
                .query_one_with("SELECT $1::float8[]", &[&floats], format)
                .await
                .unwrap();
            assert_eq!(row.get::<Vec<f64>>(0).unwrap(), floats);
            let bools = vec![true, false];
            let row = conn
                .query_one_with("SELECT $1::bool[]", &[&bools], format)
                .await
                .unwrap();
            assert_eq!(row.get::<Vec<bool>>(0).unwrap(), bools);
            let numerics: Vec<Numeric> = ["1.10", "NaN", "-7"]
                .iter()
                .map(|s| s.parse().unwrap())
                .collect();
            let row = conn
                .query_one_with("SELECT $1::numeric[]", &[&numerics], format)
                .await
                .unwrap();
            assert_eq!(row.get::<Vec<Numeric>>(0).unwrap(), numerics);
            let blobs: Vec<Vec<u8>> = vec![vec![], vec![0, 255]];
            let row = conn
                .query_one_with("SELECT $1::bytea[]", &[&blobs], format)
                .await
                .unwrap();
            assert_eq!(row.get::<Vec<Vec<u8>>>(0).unwrap(), blobs);
            let uuids: Vec<Uuid> = vec![Uuid::from_u128(1), Uuid::from_u128(u128::MAX)];
            let row = conn
                .query_one_with("SELECT $1::uuid[]", &[&uuids], format)
                .await
                .unwrap();
            assert_eq!(row.get::<Vec<Uuid>>(0).unwrap(), uuids);
            let dates: Vec<Date> = ["2024-02-29", "infinity"]
                .iter()
                .map(|s| s.parse().unwrap())
                .collect();
            let row = conn
                .query_one_with("SELECT $1::date[]", &[&dates], format)
                .await
                .unwrap();
            assert_eq!(row.get::<Vec<Date>>(0).unwrap(), dates);
            let stamps: Vec<Timestamp> = ["2024-02-29 01:02:03.5", "0001-01-01 00:00:00 BC"]
                .iter()
                .map(|s| s.parse().unwrap())
                .collect();
            let row = conn
                .query_one_with("SELECT $1::timestamp[]", &[&stamps], format)
                .await
                .unwrap();
            assert_eq!(row.get::<Vec<Timestamp>>(0).unwrap(), stamps);
            let zoned: Vec<TimestampTz> = ["2024-02-29 01:02:03.5+00"]
                .iter()
                .map(|s| s.parse().unwrap())
                .collect();
            let row = conn
                .query_one_with("SELECT $1::timestamptz[]", &[&zoned], format)
                .await
                .unwrap();
            assert_eq!(row.get::<Vec<TimestampTz>>(0).unwrap(), zoned);
            let times: Vec<Time> = ["01:02:03"].iter().map(|s| s.parse().unwrap()).collect();
            let row = conn
                .query_one_with("SELECT $1::time[]", &[&times], format)
                .await
                .unwrap();
            assert_eq!(row.get::<Vec<Time>>(0).unwrap(), times);
            let intervals: Vec<Interval> = ["1 day", "-00:00:01"]
                .iter()
                .map(|s| s.parse().unwrap())
                .collect();
            let row = conn
                .query_one_with("SELECT $1::interval[]", &[&intervals], format)
                .await
                .unwrap();
            assert_eq!(row.get::<Vec<Interval>>(0).unwrap(), intervals);
            let smalls: Vec<i16> = vec![i16::MIN, 0];
            let row = conn
                .query_one_with(
                    "SELECT $1::int2[], $2::float4[]",
                    &[&smalls, &vec![0.5f32]],
                    format,
                )
                .await
                .unwrap();
            assert_eq!(row.get::<Vec<i16>>(0).unwrap(), smalls);
            assert_eq!(row.get::<Vec<f32>>(1).unwrap(), [0.5]);
            let row = conn
                .query_one_with(
                    "SELECT ARRAY['{\"a\":1}'::jsonb], ARRAY['[1]'::json]",
                    &[],
                    format,
                )
                .await
                .unwrap();
            assert_eq!(row.get::<Vec<String>>(0).unwrap(), ["{\"a\": 1}"]);
            assert_eq!(row.get::<Vec<String>>(1).unwrap(), ["[1]"]);
            let row = conn
                .query_one_with("SELECT NULL::int4[]", &[], format)
                .await
                .unwrap();
            assert_eq!(row.get::<Option<Vec<i32>>>(0).unwrap(), None);
            let row = conn
                .query_one_with("SELECT '{{1,2},{3,4}}'::int4[]", &[], format)
                .await
                .unwrap();
            assert_eq!(
                row.get::<Vec<i32>>(0).unwrap_err().kind(),
                ErrorKind::Conversion,
                "two dimensions are refused"
            );
        }
    }
}

#[tokio::test]
async fn mismatched_types_give_clear_errors() {
    let mut conn = common::connect().await;
    let row = conn
        .query_one("SELECT 1::int8, 'x'::text, 70000::int4", &[])
        .await
        .unwrap();
    let err = row.get::<bool>(0).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conversion);
    let msg = err.to_string();
    assert!(
        msg.contains("column 0") && msg.contains("int8") && msg.contains("bool"),
        "{msg}"
    );
    assert!(row.get::<i32>(1).is_err());
    let err = row.get::<i16>(2).unwrap_err();
    assert!(err.to_string().contains("int4"), "{err}");
    assert_eq!(row.get::<i64>(2).unwrap(), 70000, "widening is allowed");
    let err = row.get::<i32>("nope").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ColumnNotFound);
    let err = row.get::<i32>(9).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ColumnNotFound);
    // A parameter the server cannot parse names the parameter's type problem.
    let err = conn.query("SELECT $1::int4", &[&"abc"]).await.unwrap_err();
    assert_eq!(err.code(), Some("22P02"));
    // A value out of range for a prepared parameter's type is refused before sending.
    let mut config = Config::parse(common::db().url()).unwrap();
    config.set_prepare_threshold(1);
    let mut prepared = Connection::connect_with(&config).await.unwrap();
    prepared.query("SELECT $1::int2", &[&1i64]).await.unwrap();
    let err = prepared
        .query("SELECT $1::int2", &[&100_000i64])
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conversion);
    assert!(err.to_string().contains("$1"), "{err}");
    assert_eq!(prepared.execute("SELECT 1", &[]).await.unwrap(), 1);
}

#[cfg(feature = "decimal")]
#[tokio::test]
async fn rust_decimal_values() {
    use rust_decimal::Decimal;
    check::<Decimal>(
        "numeric",
        &[
            ("1.50", "1.50"),
            (
                "-79228162514264337593543950335",
                "-79228162514264337593543950335",
            ),
            (
                "0.0000000000000000000000000001",
                "0.0000000000000000000000000001",
            ),
        ],
    )
    .await;
}

#[cfg(feature = "with-serde_json-1")]
#[tokio::test]
async fn serde_json_values() {
    for conn in &mut sessions().await {
        for format in [Format::Text, Format::Binary] {
            let v = serde_json::json!({"a": [1, 2.5, null, "s"], "b": {"c": true}});
            let row = conn
                .query_one_with("SELECT $1::jsonb, $1::json", &[&v], format)
                .await
                .unwrap();
            assert_eq!(row.get::<serde_json::Value>(0).unwrap(), v);
            assert_eq!(row.get::<serde_json::Value>(1).unwrap(), v);
        }
    }
}

/// The connection's type cache follows domains, arrays, ranges and composites to their
/// element, base, subtype and attribute types, in both sessions (unprepared and prepared).
#[tokio::test]
async fn catalog_type_info_follows_links() {
    let schema = common::unique("catalog");
    let mut setup = common::connect().await;
    setup
        .batch_execute(&format!(
            "CREATE SCHEMA {schema};
             CREATE DOMAIN {schema}.positive AS int4 CHECK (VALUE > 0);
             CREATE TYPE {schema}.mood AS ENUM ('sad', 'happy');
             CREATE TYPE {schema}.pair AS (label text, score {schema}.positive, dropped int);
             ALTER TYPE {schema}.pair DROP ATTRIBUTE dropped;
             CREATE TYPE {schema}.floatrange AS RANGE (subtype = float8);"
        ))
        .await
        .unwrap();
    for conn in &mut sessions().await {
        // Twice: the second time answers from the cache.
        for _ in 0..2 {
            let row = conn
                .query_one(
                    &format!(
                        "SELECT NULL::{schema}.positive[], NULL::{schema}.mood,
                                NULL::{schema}.pair, NULL::{schema}.floatrange"
                    ),
                    &[],
                )
                .await
                .unwrap();
            let oids: Vec<u32> = row.columns().iter().map(|c| c.type_oid()).collect();
            conn.load_types(&oids).await.unwrap();
            let array = conn.type_info(oids[0]).unwrap().clone();
            assert!(array.is_array(), "{array:?}");
            let domain = conn.type_info(array.element).unwrap().clone();
            assert!(domain.is_domain());
            assert_eq!(&*domain.name, "positive");
            assert_eq!(&*domain.schema, schema);
            assert_eq!(domain.base, 23, "int4");
            let mood = conn.type_info(oids[1]).unwrap();
            assert_eq!(mood.typtype, b'e');
            let pair = conn.type_info(oids[2]).unwrap().clone();
            assert!(pair.is_composite());
            let fields: Vec<(&str, u32)> = pair.fields.iter().map(|(n, t)| (&**n, *t)).collect();
            assert_eq!(fields, [("label", 25), ("score", domain.oid)]);
            let range = conn.type_info(oids[3]).unwrap();
            assert_eq!((range.typtype, range.range_subtype), (b'r', 701));
        }
    }
    setup
        .batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
        .await
        .unwrap();
}
