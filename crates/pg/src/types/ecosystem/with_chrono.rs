//! chrono 0.4 (feature `with-chrono-0_4`): `NaiveDate` ↔ date, `NaiveTime` ↔ time,
//! `NaiveDateTime` ↔ timestamp, `DateTime<Utc | FixedOffset | Local>` ↔ timestamptz.
//!
//! A timestamptz carries no zone on the wire: it reads as `DateTime<Utc>`, as
//! `DateTime<FixedOffset>` at +00:00, or as `DateTime<Local>` in the process's zone.
//! Nanoseconds are cut to microseconds when writing, towards the past.

use super::convert_through;
use crate::types::{Date, Time, Timestamp, TimestampTz, oid};
use ::chrono::{
    DateTime, Datelike, FixedOffset, Local, NaiveDate, NaiveDateTime, NaiveTime, TimeZone,
    Timelike, Utc,
};

/// chrono's day number (days since 0001-12-31, the day before 0001-01-01) of 2000-01-01.
const PG_EPOCH_CE_DAYS: i32 = 730_120;

fn read_date(date: Date) -> Option<NaiveDate> {
    if !date.is_finite() {
        return None;
    }
    NaiveDate::from_num_days_from_ce_opt(date.pg_days().checked_add(PG_EPOCH_CE_DAYS)?)
}

fn write_date(date: &NaiveDate) -> Result<Date, crate::types::ConversionError> {
    Date::from_ymd(date.year(), date.month(), date.day())
}

fn read_time(time: Time) -> Option<NaiveTime> {
    let micros = time.micros();
    let seconds = u32::try_from(micros / 1_000_000).ok()?;
    let nanos = u32::try_from(micros % 1_000_000 * 1000).ok()?;
    NaiveTime::from_num_seconds_from_midnight_opt(seconds, nanos)
}

fn write_time(time: &NaiveTime) -> Result<Time, crate::types::ConversionError> {
    // A leap second (nanoseconds past 10^9) folds into the next second; 23:59:60 is 24:00:00.
    let micros = i64::from(time.num_seconds_from_midnight()) * 1_000_000
        + i64::from(time.nanosecond() / 1000);
    Time::from_micros(micros)
}

/// The instant `unix_micros` after the Unix epoch, in UTC.
fn utc(unix_micros: Option<i64>) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp_micros(unix_micros?)
}

/// Microseconds since the Unix epoch, floored.
fn unix_micros<Tz: TimeZone>(instant: &DateTime<Tz>) -> i64 {
    // The seconds of a chrono value are at most about 2^43, so this cannot overflow.
    instant.timestamp() * 1_000_000 + i64::from(instant.timestamp_subsec_micros())
}

fn write_instant<Tz: TimeZone>(
    instant: &DateTime<Tz>,
) -> Result<TimestampTz, crate::types::ConversionError> {
    TimestampTz::from_unix_micros(unix_micros(instant))
}

convert_through!(NaiveDate, Date, oid::DATE, "chrono::NaiveDate",
    read: read_date, write: write_date);

convert_through!(NaiveTime, Time, oid::TIME, "chrono::NaiveTime",
    read: read_time, write: write_time);

convert_through!(NaiveDateTime, Timestamp, oid::TIMESTAMP, "chrono::NaiveDateTime",
    read: |t| Some(utc(t.unix_micros())?.naive_utc()),
    write: |t| Timestamp::from_unix_micros(unix_micros(&t.and_utc())));

convert_through!(DateTime<Utc>, TimestampTz, oid::TIMESTAMPTZ, "chrono::DateTime<Utc>",
    read: |t| utc(t.unix_micros()),
    write: write_instant);

convert_through!(DateTime<FixedOffset>, TimestampTz, oid::TIMESTAMPTZ,
    "chrono::DateTime<FixedOffset>",
    read: |t| Some(utc(t.unix_micros())?.fixed_offset()),
    write: write_instant);

convert_through!(DateTime<Local>, TimestampTz, oid::TIMESTAMPTZ, "chrono::DateTime<Local>",
    read: |t| Some(utc(t.unix_micros())?.with_timezone(&Local)),
    write: write_instant);

#[cfg(test)]
mod tests {
    use super::super::test_support::{binary, text};
    use super::*;
    use crate::types::{ConversionErrorKind, Format, FromSql, ToSql};
    use bytes::BytesMut;
    use proptest::prelude::*;

    #[test]
    fn dates_match_postgres_day_numbers() {
        let epoch = NaiveDate::from_ymd_opt(2000, 1, 1).unwrap();
        assert_eq!(&binary(&epoch, oid::DATE)[..], 0i32.to_be_bytes());
        // date_send('0044-03-15 BC') = fff49d7b; chrono's year -43 is 44 BC.
        let ides = NaiveDate::from_ymd_opt(-43, 3, 15).unwrap();
        assert_eq!(&binary(&ides, oid::DATE)[..], 0xfff49d7bu32.to_be_bytes());
        assert_eq!(text(&ides), "0044-03-15 BC");
        assert_eq!(
            NaiveDate::from_sql(oid::DATE, Format::Text, b"0044-03-15 BC"),
            Ok(ides)
        );
        assert_eq!(
            NaiveDate::from_sql(oid::DATE, Format::Binary, &0xfff49d7bu32.to_be_bytes()),
            Ok(ides)
        );
    }

    #[test]
    fn infinities_and_far_values_are_out_of_range() {
        for raw in [&b"infinity"[..], b"-infinity", b"5874897-12-31"] {
            let err = NaiveDate::from_sql(oid::DATE, Format::Text, raw).unwrap_err();
            assert_eq!(err.kind(), ConversionErrorKind::OutOfRange, "{err}");
            assert_eq!(err.rust_type(), "chrono::NaiveDate");
        }
        let err =
            DateTime::<Utc>::from_sql(oid::TIMESTAMPTZ, Format::Text, b"infinity").unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::OutOfRange, "{err}");
        let err = NaiveTime::from_sql(oid::TIME, Format::Text, b"24:00:00").unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::OutOfRange, "{err}");
        // Before 4714-11-24 BC PostgreSQL has no dates.
        let ancient = NaiveDate::from_ymd_opt(-5000, 1, 1).unwrap();
        let err = ancient
            .to_sql_binary(oid::DATE, &mut BytesMut::new())
            .unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::OutOfRange, "{err}");
        assert_eq!(err.rust_type(), "chrono::NaiveDate");
    }

    #[test]
    fn wrong_types_are_refused() {
        let err = NaiveDate::from_sql(oid::TIMESTAMP, Format::Text, b"2000-01-01").unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::WrongType);
        let now = Utc::now();
        assert!(!now.accepts_binary(oid::TIMESTAMP));
        assert!(now.to_sql_binary(oid::DATE, &mut BytesMut::new()).is_err());
    }

    #[test]
    fn offsets_are_applied() {
        let value = DateTime::<FixedOffset>::from_sql(
            oid::TIMESTAMPTZ,
            Format::Text,
            b"2024-03-05 13:45:10.5-03:30",
        )
        .unwrap();
        assert_eq!(value.to_rfc3339(), "2024-03-05T17:15:10.500+00:00");
        let west = FixedOffset::west_opt(3 * 3600 + 1800).unwrap();
        let local = west.with_ymd_and_hms(2024, 3, 5, 13, 45, 10).unwrap();
        assert_eq!(text(&local), "2024-03-05 17:15:10+00");
    }

    proptest! {
        #[test]
        fn timestamps_round_trip(micros in -211_813_488_000_000_000i64..9_223_371_331_200_000_000) {
            let stored = Timestamp::from_pg_micros(micros);
            let mut raw = BytesMut::new();
            stored.to_sql_binary(oid::TIMESTAMP, &mut raw).unwrap();
            match NaiveDateTime::from_sql(oid::TIMESTAMP, Format::Binary, &raw) {
                Ok(value) => {
                    prop_assert_eq!(&binary(&value, oid::TIMESTAMP)[..], &raw[..]);
                    let shown = text(&value);
                    prop_assert_eq!(NaiveDateTime::from_sql(oid::TIMESTAMP, Format::Text, shown.as_bytes()), Ok(value));
                }
                // Past chrono's ±262143 years.
                Err(e) => prop_assert_eq!(e.kind(), ConversionErrorKind::OutOfRange),
            }
        }

        #[test]
        fn times_round_trip(micros in 0i64..86_400_000_000) {
            let value = read_time(Time::from_micros(micros).unwrap()).unwrap();
            let raw = binary(&value, oid::TIME);
            prop_assert_eq!(&raw[..], micros.to_be_bytes());
            prop_assert_eq!(NaiveTime::from_sql(oid::TIME, Format::Text, text(&value).as_bytes()), Ok(value));
        }
    }
}
