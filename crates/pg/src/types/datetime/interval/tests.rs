//! Tests of [`Interval`] against golden values from PostgreSQL 15 in every IntervalStyle.

use super::*;
use crate::types::ConversionErrorKind;
use proptest::prelude::*;

fn unhex(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

fn from_binary(hex: &str) -> Interval {
    Interval::from_sql(oid::INTERVAL, Format::Binary, &unhex(hex)).unwrap()
}

// IntervalStyle postgres (the default): `select i::text, encode(interval_send(i), 'hex')`.
const POSTGRES_STYLE: [(&str, &str); 15] = [
    (
        "1 year 2 mons 3 days 04:05:06.789",
        "000000036c97ca88000000030000000e",
    ),
    ("-1 days +02:00:00", "00000001ad274800ffffffff00000000"),
    ("00:00:00", "00000000000000000000000000000000"),
    (
        "-1 years -2 mons +3 days -04:05:06",
        "fffffffc93743f8000000003fffffff2",
    ),
    ("1 mon", "00000000000000000000000000000001"),
    ("-00:00:00.000001", "ffffffffffffffff0000000000000000"),
    (
        "2562047788:00:54.775807",
        "7fffffffffffffff0000000000000000",
    ),
    (
        "-2562047788:00:54.775807",
        "80000000000000010000000000000000",
    ),
    (
        "-2562047788:00:54.775808",
        "80000000000000000000000000000000",
    ),
    ("178956970 years 7 mons", "0000000000000000000000007fffffff"),
    (
        "-178956970 years -8 mons",
        "00000000000000000000000080000000",
    ),
    ("1 day -00:00:01", "fffffffffff0bdc00000000100000000"),
    ("100:00:00", "00000053d1ac10000000000000000000"),
    ("2147483647 days", "00000000000000007fffffff00000000"),
    ("-2147483648 days", "00000000000000008000000000000000"),
];

// The same values in the other styles: `set intervalstyle = ...; select i::text, ...`.
const OTHER_STYLES: [(&str, &str); 33] = [
    ("-1-2", "000000000000000000000000fffffff2"),
    ("3 4:05:06", "000000036c8bc0800000000300000000"),
    ("-4:05:06", "fffffffc93743f800000000000000000"),
    ("1-2", "0000000000000000000000000000000e"),
    ("+1-0 -1 +0:00:00", "0000000000000000ffffffff0000000c"),
    ("0", "00000000000000000000000000000000"),
    ("+0-0 -1 +2:00:00", "00000001ad274800ffffffff00000000"),
    ("0:00:01.5", "000000000016e3600000000000000000"),
    ("-0:00:00.5", "fffffffffff85ee00000000000000000"),
    ("+0-1 -3 -0:00:00.25", "fffffffffffc2f70fffffffd00000001"),
    ("-1 0:00:01", "fffffffffff0bdc0ffffffff00000000"),
    ("@ 1 year 2 mons ago", "000000000000000000000000fffffff2"),
    (
        "@ 3 days 4 hours 5 mins 6 secs",
        "000000036c8bc0800000000300000000",
    ),
    (
        "@ 4 hours 5 mins 6 secs ago",
        "fffffffc93743f800000000000000000",
    ),
    ("@ 1 year -1 days", "0000000000000000ffffffff0000000c"),
    ("@ 0", "00000000000000000000000000000000"),
    ("@ 1 day -2 hours ago", "00000001ad274800ffffffff00000000"),
    ("@ 1.5 secs", "000000000016e3600000000000000000"),
    ("@ 0.5 secs ago", "fffffffffff85ee00000000000000000"),
    (
        "@ 2562047788 hours 54.775807 secs ago",
        "80000000000000010000000000000000",
    ),
    (
        "@ 1 mon -3 days -0.25 secs",
        "fffffffffffc2f70fffffffd00000001",
    ),
    ("P-1Y-2M", "000000000000000000000000fffffff2"),
    ("P3DT4H5M6S", "000000036c8bc0800000000300000000"),
    ("PT-4H-5M-6S", "fffffffc93743f800000000000000000"),
    ("P1Y-1D", "0000000000000000ffffffff0000000c"),
    ("PT0S", "00000000000000000000000000000000"),
    ("P-1DT2H", "00000001ad274800ffffffff00000000"),
    ("PT-0.5S", "fffffffffff85ee00000000000000000"),
    (
        "PT-2562047788H-54.775807S",
        "80000000000000010000000000000000",
    ),
    ("P1M-3DT-0.25S", "fffffffffffc2f70fffffffd00000001"),
    // Input forms: select 'P1Y2M3DT4H5M6S'::interval, 'P1.5Y', 'PT1.5S', 'P1W'.
    ("P1Y2M3DT4H5M6S", "000000036c8bc080000000030000000e"),
    ("P1.5Y", "00000000000000000000000000000012"),
    ("P1W", "00000000000000000000000700000000"),
];

#[test]
fn postgres_style_golden_both_ways() {
    for (text, hex) in POSTGRES_STYLE {
        let value = from_binary(hex);
        assert_eq!(value.to_string(), text);
        assert_eq!(text.parse::<Interval>(), Ok(value), "{text}");
        let mut out = BytesMut::new();
        value.to_sql_binary(oid::INTERVAL, &mut out).unwrap();
        assert_eq!(&out[..], unhex(hex));
    }
}

#[test]
fn every_interval_style_reads_back() {
    for (text, hex) in OTHER_STYLES {
        assert_eq!(text.parse::<Interval>(), Ok(from_binary(hex)), "{text}");
    }
}

#[test]
fn text_parameters_avoid_the_unreadable_minimum() {
    // PostgreSQL prints a time of i64::MIN microseconds as -2562047788:00:54.775808 but
    // rejects that text as input; '-9223372036854775808 microseconds' it accepts.
    let minimum = from_binary("80000000000000000000000000000000");
    let mut out = BytesMut::new();
    minimum.to_sql_text(&mut out).unwrap();
    assert_eq!(&out[..], b"-9223372036854775808 microseconds");
    assert_eq!(
        std::str::from_utf8(&out).unwrap().parse::<Interval>(),
        Ok(minimum)
    );
    out.clear();
    Interval::new(14, -3, i64::MIN)
        .to_sql_text(&mut out)
        .unwrap();
    assert_eq!(
        &out[..],
        b"1 year 2 mons -3 days -9223372036854775808 microseconds"
    );
}

#[test]
fn infinities_and_fractions() {
    assert_eq!("infinity".parse::<Interval>(), Ok(Interval::INFINITY));
    assert_eq!(Interval::NEG_INFINITY.to_string(), "-infinity");
    assert!(!Interval::INFINITY.is_finite() && Interval::ZERO.is_finite());
    // select '1.5 mons'::interval = 1 mon 15 days; '1.5 days' = 1 day 12:00:00;
    // '1 week 1.5 hours'; '10 ms'; '1:30' (hours:minutes).
    assert_eq!("1.5 mons".parse::<Interval>(), Ok(Interval::new(1, 15, 0)));
    assert_eq!(
        "1.5 days".parse::<Interval>(),
        Ok(Interval::new(0, 1, 43_200_000_000))
    );
    assert_eq!(
        "1 week 1.5 hours".parse::<Interval>(),
        Ok(Interval::new(0, 7, 5_400_000_000))
    );
    assert_eq!("10 ms".parse::<Interval>(), Ok(Interval::new(0, 0, 10_000)));
    assert_eq!(
        "1:30".parse::<Interval>(),
        Ok(Interval::new(0, 0, 5_400_000_000))
    );
    assert_eq!("2days".parse::<Interval>(), Ok(Interval::new(0, 2, 0)));
    assert_eq!(
        "PT1.5S".parse::<Interval>(),
        Ok(Interval::new(0, 0, 1_500_000))
    );
}

#[test]
fn errors_are_typed() {
    for bad in ["", "1 fortnight", "P", "P1X", "PT1Y", "1:2:3:4", "abc", "@"] {
        let err = bad.parse::<Interval>().unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::Invalid, "{bad}");
    }
    let err = "2147483648 days".parse::<Interval>().unwrap_err();
    assert_eq!(err.kind(), ConversionErrorKind::OutOfRange);
    let err = Interval::from_sql(oid::INTERVAL, Format::Binary, &[0; 15]).unwrap_err();
    assert_eq!(err.kind(), ConversionErrorKind::Invalid);
}

fn any_interval() -> impl Strategy<Value = Interval> {
    (any::<i32>(), any::<i32>(), any::<i64>()).prop_map(|(m, d, t)| Interval::new(m, d, t))
}

proptest! {
    #[test]
    fn round_trips_both_formats(value in any_interval()) {
        let mut out = BytesMut::new();
        value.to_sql_binary(oid::INTERVAL, &mut out).unwrap();
        prop_assert_eq!(Interval::from_sql(oid::INTERVAL, Format::Binary, &out), Ok(value));
        out.clear();
        value.to_sql_text(&mut out).unwrap();
        prop_assert_eq!(Interval::from_sql(oid::INTERVAL, Format::Text, &out), Ok(value));
        // Display (the server's own output) reads back too.
        prop_assert_eq!(value.to_string().parse::<Interval>(), Ok(value));
    }

    #[test]
    fn never_panics_on_arbitrary_bytes(raw: Vec<u8>) {
        let _ = Interval::from_sql(oid::INTERVAL, Format::Binary, &raw);
        let _ = Interval::from_sql(oid::INTERVAL, Format::Text, &raw);
    }

    #[test]
    fn never_panics_on_interval_like_text(text in "[-+@ 0-9:.PTYMWDHS]{0,40}|([-+]?[0-9]{1,30}(\\.[0-9]{0,20})? (years|mons|days|hours|secs|ago) ?){1,5}") {
        let _ = text.parse::<Interval>();
    }
}
