//! time 0.3 (feature `with-time-0_3`): `Date` ↔ date, `Time` ↔ time, `PrimitiveDateTime` ↔
//! timestamp, `OffsetDateTime` ↔ timestamptz (read at UTC offset +00:00, since timestamptz
//! carries no zone on the wire). Nanoseconds are cut to microseconds when writing, towards the
//! past; time's years stop at ±9999.

use super::convert_through;
use crate::types::{ConversionError, Date, Time, Timestamp, TimestampTz, oid};
use ::time::{OffsetDateTime, PrimitiveDateTime};

/// The Julian day number of 2000-01-01.
const PG_EPOCH_JULIAN_DAY: i32 = 2_451_545;

fn read_date(date: Date) -> Option<::time::Date> {
    if !date.is_finite() {
        return None;
    }
    ::time::Date::from_julian_day(date.pg_days().checked_add(PG_EPOCH_JULIAN_DAY)?).ok()
}

fn write_date(date: &::time::Date) -> Result<Date, ConversionError> {
    Date::from_ymd(
        date.year(),
        u32::from(u8::from(date.month())),
        u32::from(date.day()),
    )
}

fn read_time(time: Time) -> Option<::time::Time> {
    let (hour, minute, second, micro) = time.hms_micro();
    ::time::Time::from_hms_micro(
        u8::try_from(hour).ok()?,
        u8::try_from(minute).ok()?,
        u8::try_from(second).ok()?,
        micro,
    )
    .ok()
}

fn write_time(time: &::time::Time) -> Result<Time, ConversionError> {
    let (hour, minute, second, micro) = time.as_hms_micro();
    Time::from_hms_micro(hour.into(), minute.into(), second.into(), micro)
}

/// The instant `unix_micros` after the Unix epoch, at offset +00:00.
fn utc(unix_micros: Option<i64>) -> Option<OffsetDateTime> {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(unix_micros?) * 1000).ok()
}

/// Microseconds since the Unix epoch, floored (time's ±9999 years fit `i64` easily).
fn unix_micros(instant: OffsetDateTime) -> i64 {
    let micros = instant.unix_timestamp_nanos().div_euclid(1000);
    i64::try_from(micros).unwrap_or(if micros < 0 { i64::MIN } else { i64::MAX })
}

convert_through!(::time::Date, Date, oid::DATE, "time::Date",
    read: read_date, write: write_date);

convert_through!(::time::Time, Time, oid::TIME, "time::Time",
    read: read_time, write: write_time);

convert_through!(PrimitiveDateTime, Timestamp, oid::TIMESTAMP, "time::PrimitiveDateTime",
    read: |t| utc(t.unix_micros()).map(|utc| PrimitiveDateTime::new(utc.date(), utc.time())),
    write: |t| Timestamp::from_unix_micros(unix_micros(t.assume_utc())));

convert_through!(OffsetDateTime, TimestampTz, oid::TIMESTAMPTZ, "time::OffsetDateTime",
    read: |t| utc(t.unix_micros()),
    write: |t| TimestampTz::from_unix_micros(unix_micros(*t)));

#[cfg(test)]
mod tests {
    use super::super::test_support::binary;
    use super::*;
    use crate::types::{ConversionErrorKind, Format, FromSql, ToSql};
    use ::time::macros::{date, datetime, time};
    use bytes::BytesMut;

    #[test]
    fn golden_values() {
        // date_send('0044-03-15 BC') = fff49d7b; time's year -43 is 44 BC.
        let ides = ::time::Date::from_calendar_date(-43, ::time::Month::March, 15).unwrap();
        assert_eq!(&binary(&ides, oid::DATE)[..], 0xfff49d7bu32.to_be_bytes());
        assert_eq!(
            ::time::Date::from_sql(oid::DATE, Format::Text, b"0044-03-15 BC"),
            Ok(ides)
        );
        let value = ::time::Date::from_calendar_date(9999, ::time::Month::December, 31).unwrap();
        let raw = binary(&value, oid::DATE);
        assert_eq!(
            ::time::Date::from_sql(oid::DATE, Format::Binary, &raw),
            Ok(value)
        );
        // timestamptz_send('2024-03-05 13:45:10.5+00') = 0002b5e8d1cf86a0.
        let instant = OffsetDateTime::from_unix_timestamp_nanos(1_709_646_310_500_000_000).unwrap();
        assert_eq!(
            &binary(&instant, oid::TIMESTAMPTZ)[..],
            0x0002b5e8d1cf86a0u64.to_be_bytes()
        );
        assert_eq!(
            OffsetDateTime::from_sql(
                oid::TIMESTAMPTZ,
                Format::Text,
                b"2024-03-05 10:15:10.5-03:30"
            ),
            Ok(instant)
        );
    }

    #[test]
    fn out_of_range_is_an_error() {
        for raw in [&b"infinity"[..], b"-infinity", b"10000-01-01"] {
            let err = ::time::Date::from_sql(oid::DATE, Format::Text, raw).unwrap_err();
            assert_eq!(err.kind(), ConversionErrorKind::OutOfRange, "{err}");
        }
        let err = ::time::Time::from_sql(oid::TIME, Format::Text, b"24:00:00").unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::OutOfRange, "{err}");
        let err =
            PrimitiveDateTime::from_sql(oid::TIMESTAMP, Format::Text, b"-infinity").unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::OutOfRange, "{err}");
        // time reaches 9999 BC; PostgreSQL starts at 4714 BC.
        let err = date!(-9999 - 01 - 01)
            .to_sql_binary(oid::DATE, &mut BytesMut::new())
            .unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::OutOfRange, "{err}");
        assert_eq!(err.rust_type(), "time::Date");
    }

    #[test]
    fn nanoseconds_are_cut_towards_the_past() {
        let value = datetime!(1969-12-31 23:59:59.999_999_999);
        let raw = binary(&value, oid::TIMESTAMP);
        let back = PrimitiveDateTime::from_sql(oid::TIMESTAMP, Format::Binary, &raw).unwrap();
        assert_eq!(back, datetime!(1969-12-31 23:59:59.999_999));
        let t = time!(12:00:00.000_000_999);
        assert_eq!(&binary(&t, oid::TIME)[..], 43_200_000_000i64.to_be_bytes());
    }
}
