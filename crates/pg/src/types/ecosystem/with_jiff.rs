//! jiff 0.2 (feature `with-jiff-0_2`): `civil::Date` ↔ date, `civil::Time` ↔ time,
//! `civil::DateTime` ↔ timestamp, `Timestamp` ↔ timestamptz, `Span` ↔ interval.
//!
//! jiff's years stop at ±9999. Nanoseconds are cut to microseconds when writing, towards the
//! past for instants and towards zero for spans. An interval whose months, days and time have
//! different signs (`1 mon -1 day`) cannot be a `Span`, which has one sign: reading one is an
//! out-of-range error (read it as [`Interval`](crate::types::Interval) instead).

use super::convert_through;
use crate::types::{
    CivilDateTime, ConversionError, Date, Interval, Time, Timestamp, TimestampTz, oid,
};
use ::jiff::Span;
use ::jiff::civil;

fn read_civil_date(year: i32, month: u32, day: u32) -> Option<civil::Date> {
    civil::Date::new(
        i16::try_from(year).ok()?,
        i8::try_from(month).ok()?,
        i8::try_from(day).ok()?,
    )
    .ok()
}

fn read_civil_time(hour: u32, minute: u32, second: u32, micro: u32) -> Option<civil::Time> {
    civil::Time::new(
        i8::try_from(hour).ok()?,
        i8::try_from(minute).ok()?,
        i8::try_from(second).ok()?,
        i32::try_from(micro).ok()? * 1000,
    )
    .ok()
}

/// A time's fields as u32s (jiff keeps them in range, so they are non-negative).
fn time_fields(time: civil::Time) -> (u32, u32, u32, u32) {
    let field = |value: i32| u32::try_from(value).unwrap_or(0);
    (
        field(time.hour().into()),
        field(time.minute().into()),
        field(time.second().into()),
        field(time.subsec_nanosecond() / 1000),
    )
}

fn write_civil_date(date: &civil::Date) -> Result<Date, ConversionError> {
    let field = |value: i8| u32::try_from(value).unwrap_or(0);
    Date::from_ymd(date.year().into(), field(date.month()), field(date.day()))
}

fn write_civil_time(time: &civil::Time) -> Result<Time, ConversionError> {
    let (hour, minute, second, micro) = time_fields(*time);
    Time::from_hms_micro(hour, minute, second, micro)
}

fn read_datetime(value: Timestamp) -> Option<civil::DateTime> {
    let c = value.to_civil()?;
    Some(civil::DateTime::from_parts(
        read_civil_date(c.year, c.month, c.day)?,
        read_civil_time(c.hour, c.minute, c.second, c.microsecond)?,
    ))
}

fn write_datetime(value: &civil::DateTime) -> Result<Timestamp, ConversionError> {
    let date = write_civil_date(&value.date())?;
    let (year, month, day) = date.ymd().unwrap_or((2000, 1, 1));
    let (hour, minute, second, micro) = time_fields(value.time());
    Timestamp::from_civil(CivilDateTime::date(year, month, day).at(hour, minute, second, micro))
}

fn read_instant(value: TimestampTz) -> Option<::jiff::Timestamp> {
    ::jiff::Timestamp::from_microsecond(value.unix_micros()?).ok()
}

fn write_instant(value: &::jiff::Timestamp) -> Result<TimestampTz, ConversionError> {
    let micros = value.as_nanosecond().div_euclid(1000);
    // jiff's ±9999 years are far inside i64 microseconds.
    TimestampTz::from_unix_micros(i64::try_from(micros).unwrap_or(i64::MAX))
}

/// An interval as a span of months, days, hours, minutes, seconds and microseconds, when its
/// parts share one sign and each fits jiff's limits.
fn read_span(value: Interval) -> Option<Span> {
    if !value.is_finite() {
        return None;
    }
    let signs = [
        i64::from(value.months).signum(),
        i64::from(value.days).signum(),
        value.microseconds.signum(),
    ];
    if signs.contains(&1) && signs.contains(&-1) {
        return None;
    }
    let micros = value.microseconds;
    Span::new()
        .try_months(value.months)
        .and_then(|s| s.try_days(value.days))
        .and_then(|s| s.try_hours(micros / 3_600_000_000))
        .and_then(|s| s.try_minutes(micros / 60_000_000 % 60))
        .and_then(|s| s.try_seconds(micros / 1_000_000 % 60))
        .and_then(|s| s.try_microseconds(micros % 1_000_000))
        .ok()
}

fn write_span(span: &Span) -> Result<Interval, ConversionError> {
    let too_big = || {
        ConversionError::out_of_range(
            oid::INTERVAL,
            "jiff::Span",
            format!("{span} does not fit an interval"),
        )
    };
    let months = i32::from(span.get_years())
        .checked_mul(12)
        .and_then(|m| m.checked_add(span.get_months()))
        .ok_or_else(too_big)?;
    let days = span
        .get_weeks()
        .checked_mul(7)
        .and_then(|d| d.checked_add(span.get_days()))
        .ok_or_else(too_big)?;
    // jiff bounds every unit to about ±20 000 years, so these sums fit i128 easily.
    let nanos = i128::from(span.get_hours()) * 3_600_000_000_000
        + i128::from(span.get_minutes()) * 60_000_000_000
        + i128::from(span.get_seconds()) * 1_000_000_000
        + i128::from(span.get_milliseconds()) * 1_000_000
        + i128::from(span.get_microseconds()) * 1000
        + i128::from(span.get_nanoseconds());
    let micros = i64::try_from(nanos / 1000).map_err(|_| too_big())?;
    Ok(Interval::new(months, days, micros))
}

convert_through!(civil::Date, Date, oid::DATE, "jiff::civil::Date",
    read: |d| { let (y, m, day) = d.ymd()?; read_civil_date(y, m, day) },
    write: write_civil_date);

convert_through!(civil::Time, Time, oid::TIME, "jiff::civil::Time",
    read: |t| { let (h, m, s, us) = t.hms_micro(); read_civil_time(h, m, s, us) },
    write: write_civil_time);

convert_through!(civil::DateTime, Timestamp, oid::TIMESTAMP, "jiff::civil::DateTime",
    read: read_datetime, write: write_datetime);

convert_through!(::jiff::Timestamp, TimestampTz, oid::TIMESTAMPTZ, "jiff::Timestamp",
    read: read_instant, write: write_instant);

convert_through!(Span, Interval, oid::INTERVAL, "jiff::Span",
    read: read_span, write: write_span);

#[cfg(test)]
mod tests {
    use super::super::test_support::binary;
    use super::*;
    use crate::types::{ConversionErrorKind, Format, FromSql, ToSql};
    use bytes::BytesMut;

    #[test]
    fn golden_values() {
        let ides = civil::date(-43, 3, 15);
        assert_eq!(&binary(&ides, oid::DATE)[..], 0xfff49d7bu32.to_be_bytes());
        assert_eq!(
            civil::Date::from_sql(oid::DATE, Format::Text, b"0044-03-15 BC"),
            Ok(ides)
        );
        let instant = ::jiff::Timestamp::from_microsecond(1_709_646_310_500_000).unwrap();
        assert_eq!(
            &binary(&instant, oid::TIMESTAMPTZ)[..],
            0x0002b5e8d1cf86a0u64.to_be_bytes()
        );
        let value = civil::date(9999, 12, 31).at(23, 59, 59, 999_999_000);
        let raw = binary(&value, oid::TIMESTAMP);
        assert_eq!(
            civil::DateTime::from_sql(oid::TIMESTAMP, Format::Binary, &raw),
            Ok(value)
        );
    }

    #[test]
    fn spans_match_intervals() {
        let span = Span::new()
            .months(14)
            .days(3)
            .hours(4)
            .minutes(5)
            .seconds(6)
            .microseconds(7);
        let raw = binary(&span, oid::INTERVAL);
        let interval = Interval::from_sql(oid::INTERVAL, Format::Binary, &raw).unwrap();
        assert_eq!(interval, Interval::new(14, 3, 14_706_000_007));
        let back = Span::from_sql(oid::INTERVAL, Format::Binary, &raw).unwrap();
        assert_eq!(back.fieldwise(), span.fieldwise());
        let negative = Span::from_sql(oid::INTERVAL, Format::Text, b"-1 days -00:00:01").unwrap();
        assert_eq!(
            negative.fieldwise(),
            Span::new().days(-1).seconds(-1).fieldwise()
        );
    }

    #[test]
    fn unrepresentable_values_are_out_of_range() {
        for raw in [&b"1 mon -1 days"[..], b"infinity", b"178000000 years"] {
            let err = Span::from_sql(oid::INTERVAL, Format::Text, raw).unwrap_err();
            assert_eq!(
                err.kind(),
                ConversionErrorKind::OutOfRange,
                "{raw:?}: {err}"
            );
            assert_eq!(err.rust_type(), "jiff::Span");
        }
        for raw in [&b"infinity"[..], b"10000-01-01"] {
            let err = civil::Date::from_sql(oid::DATE, Format::Text, raw).unwrap_err();
            assert_eq!(err.kind(), ConversionErrorKind::OutOfRange, "{err}");
        }
        let err = civil::Time::from_sql(oid::TIME, Format::Text, b"24:00:00").unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::OutOfRange);
        let err = civil::date(-9999, 1, 1)
            .to_sql_binary(oid::DATE, &mut BytesMut::new())
            .unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::OutOfRange);
    }
}
