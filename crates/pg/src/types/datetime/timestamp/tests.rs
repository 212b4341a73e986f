//! Tests of [`Timestamp`] and [`TimestampTz`] against golden values from PostgreSQL 15.

use super::*;
use crate::types::ConversionErrorKind;
use proptest::prelude::*;

// `select t::text, encode(timestamp_send(t), 'hex')`.
const TIMESTAMP_GOLDEN: [(&str, u64); 8] = [
    ("2000-01-01 00:00:00", 0x0000000000000000),
    ("2024-03-05 13:45:10.5", 0x0002b5e8d1cf86a0),
    ("infinity", 0x7fffffffffffffff),
    ("-infinity", 0x8000000000000000),
    ("1999-01-08 04:05:06 BC", 0xfe3fc67baad0c080),
    ("294276-12-31 23:59:59.999999", 0x7fffff5bb3b29fff),
    ("4714-11-24 00:00:00 BC", 0xfd0f7cc1411fa000),
    ("1970-01-01 00:00:00", 0xfffca2fec4c82000),
];

// `set timezone = ...; select t::text, encode(timestamptz_send(t), 'hex')`, in the zones
// Asia/Kolkata (LMT +05:53:28 in 1 BC, +05:21:10 in 1900), America/St_Johns and UTC.
const TIMESTAMPTZ_GOLDEN: [(&str, u64); 6] = [
    ("2000-01-01 05:30:00+05:30", 0x0000000000000000),
    ("2024-03-05 18:15:10.5+05:30", 0x0002b5e7fb3be2a0),
    ("2024-03-05 09:15:10.5-03:30", 0x0002b5e7fb3be2a0),
    ("1999-01-08 09:58:34+05:53:28 BC", 0xfe3fc67baad0c080),
    ("1900-01-01 05:21:10+05:21:10", 0xfff4c9ee7c0b8000),
    ("294276-12-31 23:59:59.999999+00", 0x7fffff5bb3b29fff),
];

fn text_of(value: &dyn ToSql) -> String {
    let mut out = BytesMut::new();
    value.to_sql_text(&mut out).unwrap();
    String::from_utf8(out.to_vec()).unwrap()
}

#[test]
fn timestamp_golden_text_and_binary() {
    for (text, bits) in TIMESTAMP_GOLDEN {
        let binary = bits.to_be_bytes();
        let value = Timestamp::from_sql(oid::TIMESTAMP, Format::Binary, &binary).unwrap();
        assert_eq!(
            Timestamp::from_sql(oid::TIMESTAMP, Format::Text, text.as_bytes()),
            Ok(value),
            "{text}"
        );
        assert_eq!(text_of(&value), text);
        let mut out = BytesMut::new();
        value.to_sql_binary(oid::TIMESTAMP, &mut out).unwrap();
        assert_eq!(&out[..], binary);
    }
    assert_eq!(
        Timestamp::from_civil(CivilDateTime::date(-4713, 11, 24)),
        Ok(Timestamp::MIN)
    );
    assert_eq!(
        Timestamp::from_civil(CivilDateTime::date(294_276, 12, 31).at(23, 59, 59, 999_999)),
        Ok(Timestamp::MAX)
    );
}

#[test]
fn timestamptz_golden_offsets_and_bc() {
    for (text, bits) in TIMESTAMPTZ_GOLDEN {
        let binary = bits.to_be_bytes();
        let value = TimestampTz::from_sql(oid::TIMESTAMPTZ, Format::Binary, &binary).unwrap();
        assert_eq!(
            TimestampTz::from_sql(oid::TIMESTAMPTZ, Format::Text, text.as_bytes()),
            Ok(value),
            "{text}"
        );
    }
    // Our own output is UTC: select '1999-01-08 04:05:06+00 BC'::timestamptz = fe3fc67baad0c080.
    let bc = TimestampTz::from_pg_micros(0xfe3fc67baad0c080u64 as i64);
    assert_eq!(text_of(&bc), "1999-01-08 04:05:06+00 BC");
    assert_eq!(bc.to_string().parse::<TimestampTz>(), Ok(bc));
    let monrovia: TimestampTz = "1959-12-31 23:15:30-00:44:30".parse().unwrap();
    assert_eq!(monrovia, "1960-01-01 00:00:00+00".parse().unwrap());
}

#[test]
fn civil_fields_dates_and_times() {
    let civil = CivilDateTime::date(2024, 2, 29).at(13, 45, 10, 500_000);
    let value = Timestamp::from_civil(civil).unwrap();
    assert_eq!(value.to_civil(), Some(civil));
    assert_eq!(value.date(), Date::from_ymd(2024, 2, 29).unwrap());
    assert_eq!(
        value.time(),
        Some(Time::from_hms_micro(13, 45, 10, 500_000).unwrap())
    );
    assert_eq!(
        Timestamp::new(
            value.date(),
            Time::from_hms_micro(13, 45, 10, 500_000).unwrap()
        ),
        Ok(value)
    );
    assert_eq!(
        Timestamp::new(Date::INFINITY, Time::MIDNIGHT),
        Ok(Timestamp::INFINITY)
    );
    assert_eq!(Timestamp::INFINITY.to_civil(), None);
    assert_eq!(TimestampTz::NEG_INFINITY.date(), Date::NEG_INFINITY);
    assert_eq!(TimestampTz::from_utc(value).to_utc(), value);
    let err = Timestamp::from_civil(CivilDateTime::date(294_277, 1, 1)).unwrap_err();
    assert_eq!(err.kind(), ConversionErrorKind::OutOfRange);
    let err = Timestamp::from_civil(CivilDateTime::date(2023, 2, 29)).unwrap_err();
    assert!(err.to_string().contains("day 29"), "{err}");
}

#[test]
fn system_time_conversions() {
    let epoch = Timestamp::try_from(UNIX_EPOCH).unwrap();
    assert_eq!(epoch.to_string(), "1970-01-01 00:00:00");
    assert_eq!(SystemTime::try_from(epoch), Ok(UNIX_EPOCH));
    // Before 1970, sub-microsecond parts truncate towards the past.
    let before = UNIX_EPOCH - Duration::from_nanos(1_500);
    assert_eq!(
        TimestampTz::try_from(before).unwrap().pg_micros(),
        epoch.pg_micros() - 2
    );
    assert!(SystemTime::try_from(Timestamp::INFINITY).is_err());
    let far = UNIX_EPOCH + Duration::from_secs(10_000_000_000_000);
    assert_eq!(
        Timestamp::try_from(far).unwrap_err().kind(),
        ConversionErrorKind::OutOfRange
    );
}

#[test]
fn text_errors_are_clear() {
    let err =
        Timestamp::from_sql(oid::TIMESTAMP, Format::Text, b"2024-03-05 13:45:10+01").unwrap_err();
    assert!(err.to_string().contains("no UTC offset"), "{err}");
    let err = TimestampTz::from_sql(oid::TIMESTAMPTZ, Format::Text, b"03/05/2024 13:45:10 UTC")
        .unwrap_err();
    assert!(err.to_string().contains("DateStyle SQL"), "{err}");
    let err =
        Timestamp::from_sql(oid::TIMESTAMP, Format::Text, b"294277-01-01 00:00:00").unwrap_err();
    assert_eq!(err.kind(), ConversionErrorKind::OutOfRange);
    let mut out = BytesMut::new();
    let err = Timestamp::from_pg_micros(END_MICROS)
        .to_sql_binary(oid::TIMESTAMP, &mut out)
        .unwrap_err();
    assert_eq!(err.kind(), ConversionErrorKind::OutOfRange);
    assert!(out.is_empty());
}

fn micros_in_range() -> impl Strategy<Value = i64> {
    prop_oneof![MIN_MICROS..END_MICROS, Just(i64::MAX), Just(i64::MIN)]
}

proptest! {
    #[test]
    fn timestamp_round_trips_both_formats(micros in micros_in_range()) {
        let value = Timestamp::from_pg_micros(micros);
        let mut out = BytesMut::new();
        value.to_sql_binary(oid::TIMESTAMP, &mut out).unwrap();
        prop_assert_eq!(Timestamp::from_sql(oid::TIMESTAMP, Format::Binary, &out), Ok(value));
        out.clear();
        value.to_sql_text(&mut out).unwrap();
        prop_assert_eq!(Timestamp::from_sql(oid::TIMESTAMP, Format::Text, &out), Ok(value));
    }

    #[test]
    fn timestamptz_round_trips_both_formats(micros in micros_in_range()) {
        let value = TimestampTz::from_pg_micros(micros);
        let mut out = BytesMut::new();
        value.to_sql_binary(oid::TIMESTAMPTZ, &mut out).unwrap();
        prop_assert_eq!(TimestampTz::from_sql(oid::TIMESTAMPTZ, Format::Binary, &out), Ok(value));
        out.clear();
        value.to_sql_text(&mut out).unwrap();
        prop_assert_eq!(TimestampTz::from_sql(oid::TIMESTAMPTZ, Format::Text, &out), Ok(value));
    }

    #[test]
    fn offsets_shift_by_their_amount(micros in 0i64..1_000_000_000_000_000, offset_minutes in -959i64..=959) {
        let utc = TimestampTz::from_pg_micros(micros);
        let local = Timestamp::from_pg_micros(micros + offset_minutes * 60_000_000);
        let sign = if offset_minutes < 0 { '-' } else { '+' };
        let text = format!("{local}{sign}{:02}:{:02}", offset_minutes.abs() / 60, offset_minutes.abs() % 60);
        prop_assert_eq!(text.parse::<TimestampTz>(), Ok(utc));
    }

    #[test]
    fn system_time_round_trips(micros in MIN_MICROS / 4..END_MICROS / 4) {
        let value = TimestampTz::from_pg_micros(micros);
        if let Ok(system) = SystemTime::try_from(value) {
            prop_assert_eq!(TimestampTz::try_from(system), Ok(value));
        }
    }

    #[test]
    fn never_panics_on_arbitrary_bytes(raw: Vec<u8>) {
        for format in [Format::Binary, Format::Text] {
            let _ = Timestamp::from_sql(oid::TIMESTAMP, format, &raw);
            let _ = TimestampTz::from_sql(oid::TIMESTAMPTZ, format, &raw);
            let _ = SystemTime::from_sql(oid::TIMESTAMPTZ, format, &raw);
            let _ = SystemTime::from_sql(oid::TIMESTAMP, format, &raw);
        }
    }

    #[test]
    fn display_never_panics(micros: i64) {
        let _ = Timestamp::from_pg_micros(micros).to_string();
        let _ = TimestampTz::from_pg_micros(micros).to_civil();
    }
}
