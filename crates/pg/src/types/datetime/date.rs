//! [`Date`]: PostgreSQL `date`, days since 2000-01-01.

use super::civil::{CivilDateTime, check_date, civil_from_pg_days, pg_days_from_civil};
use super::format::write_date;
use super::parse::{Special, parse_date};
use super::text_error;
use crate::types::wire::fixed;
use crate::types::{ConversionError, Format, FromSql, IsNull, Oid, ToSql, oid};
use bytes::{BufMut, BytesMut};
use std::fmt;
use std::str::FromStr;

/// A PostgreSQL `date`: days since 2000-01-01, or one of the infinities (`i32::MAX`/`MIN`).
/// Ordered as PostgreSQL orders dates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date(i32);

impl Date {
    /// `infinity`: later than every date.
    pub const INFINITY: Date = Date(i32::MAX);
    /// `-infinity`: earlier than every date.
    pub const NEG_INFINITY: Date = Date(i32::MIN);
    /// The earliest finite date PostgreSQL stores, 4714-11-24 BC.
    pub const MIN: Date = Date(-2_451_545);
    /// The latest finite date PostgreSQL stores, 5874897-12-31.
    pub const MAX: Date = Date(2_145_031_948);
    /// PostgreSQL's epoch, 2000-01-01.
    pub const PG_EPOCH: Date = Date(0);

    /// The date `days` after 2000-01-01, as the server stores it (not range checked).
    pub const fn from_pg_days(days: i32) -> Date {
        Date(days)
    }

    /// Days since 2000-01-01 (`i32::MAX`/`MIN` for the infinities).
    pub const fn pg_days(self) -> i32 {
        self.0
    }

    /// Whether this is neither infinity.
    pub const fn is_finite(self) -> bool {
        self.0 != i32::MAX && self.0 != i32::MIN
    }

    /// The date of an astronomical `year` (0 is 1 BC), `month` and `day`; out of range when
    /// the date does not exist or is outside 4714-11-24 BC ..= 5874897-12-31.
    pub fn from_ymd(year: i32, month: u32, day: u32) -> Result<Date, ConversionError> {
        let out_of_range =
            |detail: String| ConversionError::out_of_range(oid::DATE, "Date", detail);
        check_date(i64::from(year), month, day).map_err(out_of_range)?;
        Date::checked(pg_days_from_civil(i64::from(year), month, day))
    }

    /// (astronomical year, month, day), or `None` for the infinities.
    pub fn ymd(self) -> Option<(i32, u32, u32)> {
        let (year, month, day) = civil_from_pg_days(i64::from(self.0));
        // |days| < 2^31, so the year is far inside i32.
        self.is_finite().then_some((year as i32, month, day))
    }

    /// The date as civil fields at midnight, or `None` for the infinities.
    pub fn to_civil(self) -> Option<CivilDateTime> {
        self.ymd()
            .map(|(year, month, day)| CivilDateTime::date(year, month, day))
    }

    /// A day count as a date, when PostgreSQL can store it.
    pub(crate) fn checked(days: i64) -> Result<Date, ConversionError> {
        match i32::try_from(days) {
            Ok(days) if (Date::MIN.0..=Date::MAX.0).contains(&days) => Ok(Date(days)),
            _ => Err(ConversionError::out_of_range(
                oid::DATE,
                "Date",
                format!("day {days} since 2000-01-01 is outside 4714-11-24 BC ..= 5874897-12-31"),
            )),
        }
    }

    /// Parses `date_out` text (DateStyle ISO) for a value of type `oid`.
    pub(crate) fn parse_for(oid: Oid, raw: &[u8]) -> Result<Date, ConversionError> {
        match parse_date(raw).map_err(|e| text_error(oid, "Date", raw, e))? {
            Special::Infinity => Ok(Date::INFINITY),
            Special::NegInfinity => Ok(Date::NEG_INFINITY),
            Special::Finite(days) => Date::checked(days),
        }
    }
}

impl fmt::Display for Date {
    /// As `date_out` writes it in DateStyle ISO: `2024-03-05`, `0044-03-15 BC`, `infinity`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.ymd() {
            None if self.0 > 0 => f.write_str("infinity"),
            None => f.write_str("-infinity"),
            Some((year, month, day)) => {
                if write_date(f, year, month, day)? {
                    f.write_str(" BC")?;
                }
                Ok(())
            }
        }
    }
}

impl FromStr for Date {
    type Err = ConversionError;

    /// Parses the ISO style: `2024-03-05`, `0044-03-15 BC`, `infinity`, `-infinity`.
    fn from_str(text: &str) -> Result<Date, ConversionError> {
        Date::parse_for(oid::DATE, text.as_bytes())
    }
}

fn decode_date(oid: Oid, format: Format, raw: &[u8]) -> Result<Date, ConversionError> {
    match (oid, format) {
        (oid::DATE, Format::Binary) => Ok(Date(i32::from_be_bytes(fixed(oid, "Date", raw)?))),
        (oid::DATE, Format::Text) => Date::parse_for(oid, raw),
        _ => Err(ConversionError::wrong_type(oid, "Date")),
    }
}

impl<'a> FromSql<'a> for Date {
    fn accepts(oid: Oid) -> bool {
        oid == oid::DATE
    }

    fn from_sql(oid: Oid, format: Format, raw: &'a [u8]) -> Result<Self, ConversionError> {
        decode_date(oid, format, raw)
    }

    fn from_sql_unescaped(oid: Oid, format: Format, raw: &[u8]) -> Result<Self, ConversionError> {
        decode_date(oid, format, raw)
    }
}

impl ToSql for Date {
    fn accepts_binary(&self, oid: Oid) -> bool {
        oid == oid::DATE
    }

    fn to_sql_binary(&self, oid: Oid, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        if oid != oid::DATE {
            return Err(ConversionError::wrong_type(oid, "Date"));
        }
        if self.is_finite() {
            Date::checked(i64::from(self.0))?;
        }
        out.put_i32(self.0);
        Ok(IsNull::No)
    }

    fn to_sql_text(&self, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        if self.is_finite() {
            Date::checked(i64::from(self.0))?;
        }
        use std::fmt::Write as _;
        write!(out, "{self}").map_err(|_| {
            ConversionError::invalid(oid::DATE, "Date", "could not format the date")
        })?;
        Ok(IsNull::No)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ConversionErrorKind;
    use proptest::prelude::*;

    // Golden pairs from PostgreSQL 15: `select d::text, encode(date_send(d), 'hex')`.
    const GOLDEN: [(&str, u32); 10] = [
        ("2000-01-01", 0x00000000),
        ("2024-02-29", 0x00002279),
        ("infinity", 0x7fffffff),
        ("-infinity", 0x80000000),
        ("0044-03-15 BC", 0xfff49d7b),
        ("4714-11-24 BC", 0xffda97a7),
        ("5874897-12-31", 0x7fda970c),
        ("0001-01-01", 0xfff4dbf9),
        ("0001-12-31 BC", 0xfff4dbf8),
        ("1999-12-31", 0xffffffff),
    ];

    #[test]
    fn golden_text_and_binary() {
        for (text, bits) in GOLDEN {
            let binary = bits.to_be_bytes();
            let date = Date::from_sql(oid::DATE, Format::Binary, &binary).unwrap();
            assert_eq!(
                Date::from_sql(oid::DATE, Format::Text, text.as_bytes()),
                Ok(date),
                "{text}"
            );
            assert_eq!(date.to_string(), text);
            let mut out = BytesMut::new();
            date.to_sql_binary(oid::DATE, &mut out).unwrap();
            assert_eq!(&out[..], binary);
            out.clear();
            date.to_sql_text(&mut out).unwrap();
            assert_eq!(&out[..], text.as_bytes());
        }
        assert_eq!(Date::from_ymd(-4713, 11, 24), Ok(Date::MIN));
        assert_eq!(Date::from_ymd(5_874_897, 12, 31), Ok(Date::MAX));
    }

    #[test]
    fn civil_fields() {
        let leap = Date::from_ymd(2024, 2, 29).unwrap();
        assert_eq!(leap.ymd(), Some((2024, 2, 29)));
        assert_eq!(leap.to_civil(), Some(CivilDateTime::date(2024, 2, 29)));
        assert_eq!(Date::INFINITY.ymd(), None);
        assert!(Date::NEG_INFINITY < Date::MIN && Date::MAX < Date::INFINITY);
        let err = Date::from_ymd(2023, 2, 29).unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::OutOfRange);
        assert!(err.to_string().contains("day 29"), "{err}");
        assert!(Date::from_ymd(-4713, 11, 23).is_err());
        assert!(Date::from_ymd(5_874_898, 1, 1).is_err());
    }

    #[test]
    fn out_of_range_values_are_not_sent() {
        let mut out = BytesMut::new();
        let err = Date::from_pg_days(Date::MAX.pg_days() + 1).to_sql_binary(oid::DATE, &mut out);
        assert_eq!(err.unwrap_err().kind(), ConversionErrorKind::OutOfRange);
        let err = Date::from_pg_days(Date::MIN.pg_days() - 1).to_sql_text(&mut out);
        assert_eq!(err.unwrap_err().kind(), ConversionErrorKind::OutOfRange);
        assert!(out.is_empty());
    }

    #[test]
    fn text_errors() {
        let err = Date::from_sql(oid::DATE, Format::Text, b"05.03.2024").unwrap_err();
        assert!(err.to_string().contains("DateStyle German"), "{err}");
        let err = Date::from_sql(oid::DATE, Format::Text, b"2024-03-05 12:00").unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::Invalid);
        assert!(err.to_string().contains("offset 10"), "{err}");
    }

    proptest! {
        #[test]
        fn round_trips_both_formats(days in prop_oneof![
            Date::MIN.pg_days()..=Date::MAX.pg_days(),
            Just(i32::MAX),
            Just(i32::MIN),
        ]) {
            let date = Date::from_pg_days(days);
            let mut out = BytesMut::new();
            date.to_sql_binary(oid::DATE, &mut out).unwrap();
            prop_assert_eq!(Date::from_sql(oid::DATE, Format::Binary, &out), Ok(date));
            out.clear();
            date.to_sql_text(&mut out).unwrap();
            prop_assert_eq!(Date::from_sql(oid::DATE, Format::Text, &out), Ok(date));
        }

        #[test]
        fn never_panics_on_arbitrary_bytes(raw: Vec<u8>) {
            let _ = Date::from_sql(oid::DATE, Format::Binary, &raw);
            let _ = Date::from_sql(oid::DATE, Format::Text, &raw);
        }

        #[test]
        fn display_never_panics(days: i32) {
            let _ = Date::from_pg_days(days).to_string();
        }
    }
}
