//! [`Time`]: PostgreSQL `time` (without time zone), microseconds since midnight.

use super::civil::{USECS_PER_DAY, split_time, time_micros};
use super::format::write_time;
use super::parse::parse_time;
use super::text_error;
use crate::types::wire::fixed;
use crate::types::{ConversionError, Format, FromSql, IsNull, Oid, ToSql, oid};
use bytes::{BufMut, BytesMut};
use std::fmt;
use std::str::FromStr;

/// A PostgreSQL `time`: microseconds since midnight, from 00:00:00 to 24:00:00 inclusive.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(i64);

impl Time {
    /// 00:00:00.
    pub const MIDNIGHT: Time = Time(0);
    /// 24:00:00, the end of the day, which PostgreSQL allows.
    pub const END_OF_DAY: Time = Time(USECS_PER_DAY);

    /// The time `micros` after midnight; out of range unless in 0 ..= 24:00:00.
    pub fn from_micros(micros: i64) -> Result<Time, ConversionError> {
        if (0..=USECS_PER_DAY).contains(&micros) {
            Ok(Time(micros))
        } else {
            Err(ConversionError::out_of_range(
                oid::TIME,
                "Time",
                format!("{micros} microseconds is outside 00:00:00 ..= 24:00:00"),
            ))
        }
    }

    /// Microseconds since midnight.
    pub const fn micros(self) -> i64 {
        self.0
    }

    /// The time of day from its fields; 24:00:00 is allowed, as in PostgreSQL.
    pub fn from_hms_micro(
        hour: u32,
        minute: u32,
        second: u32,
        microsecond: u32,
    ) -> Result<Time, ConversionError> {
        if hour > 24 || minute > 59 || second > 59 || microsecond > 999_999 {
            return Err(ConversionError::out_of_range(
                oid::TIME,
                "Time",
                format!("{hour:02}:{minute:02}:{second:02}.{microsecond:06} is not a time of day"),
            ));
        }
        Time::from_micros(time_micros(hour, minute, second, microsecond))
    }

    /// (hour, minute, second, microsecond); the hour is 24 only for 24:00:00.
    pub fn hms_micro(self) -> (u32, u32, u32, u32) {
        split_time(self.0)
    }
}

impl fmt::Display for Time {
    /// As `time_out` writes it: `13:45:10.123456`, `01:02:03.5`, `24:00:00`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_time(f, self.0)
    }
}

impl FromStr for Time {
    type Err = ConversionError;

    /// Parses `HH:MM[:SS[.ffffff]]`.
    fn from_str(text: &str) -> Result<Time, ConversionError> {
        parse_time(text.as_bytes())
            .map(Time)
            .map_err(|e| text_error(oid::TIME, "Time", text.as_bytes(), e))
    }
}

fn decode_time(oid: Oid, format: Format, raw: &[u8]) -> Result<Time, ConversionError> {
    match (oid, format) {
        (oid::TIME, Format::Binary) => {
            let micros = i64::from_be_bytes(fixed(oid, "Time", raw)?);
            Time::from_micros(micros)
                .map_err(|e| ConversionError::invalid(oid, "Time", e.detail().to_owned()))
        }
        (oid::TIME, Format::Text) => parse_time(raw)
            .map(Time)
            .map_err(|e| text_error(oid, "Time", raw, e)),
        _ => Err(ConversionError::wrong_type(oid, "Time")),
    }
}

impl<'a> FromSql<'a> for Time {
    fn accepts(oid: Oid) -> bool {
        oid == oid::TIME
    }

    fn from_sql(oid: Oid, format: Format, raw: &'a [u8]) -> Result<Self, ConversionError> {
        decode_time(oid, format, raw)
    }

    fn from_sql_unescaped(oid: Oid, format: Format, raw: &[u8]) -> Result<Self, ConversionError> {
        decode_time(oid, format, raw)
    }
}

impl ToSql for Time {
    fn accepts_binary(&self, oid: Oid) -> bool {
        oid == oid::TIME
    }

    fn to_sql_binary(&self, oid: Oid, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        if oid != oid::TIME {
            return Err(ConversionError::wrong_type(oid, "Time"));
        }
        out.put_i64(self.0);
        Ok(IsNull::No)
    }

    fn to_sql_text(&self, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        use std::fmt::Write as _;
        write!(out, "{self}").map_err(|_| {
            ConversionError::invalid(oid::TIME, "Time", "could not format the time")
        })?;
        Ok(IsNull::No)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ConversionErrorKind;
    use proptest::prelude::*;

    // Golden pairs from PostgreSQL 15: `select t::text, encode(time_send(t), 'hex')`.
    const GOLDEN: [(&str, u64); 5] = [
        ("00:00:00", 0x0000000000000000),
        ("13:45:10.123456", 0x0000000b870887c0),
        ("24:00:00", 0x000000141dd76000),
        ("23:59:59.999999", 0x000000141dd75fff),
        ("01:02:03.5", 0x00000000ddf019e0),
    ];

    #[test]
    fn golden_text_and_binary() {
        for (text, bits) in GOLDEN {
            let binary = bits.to_be_bytes();
            let time = Time::from_sql(oid::TIME, Format::Binary, &binary).unwrap();
            assert_eq!(
                Time::from_sql(oid::TIME, Format::Text, text.as_bytes()),
                Ok(time),
                "{text}"
            );
            assert_eq!(time.to_string(), text);
            let mut out = BytesMut::new();
            time.to_sql_binary(oid::TIME, &mut out).unwrap();
            assert_eq!(&out[..], binary);
        }
    }

    #[test]
    fn fields_and_limits() {
        let time = Time::from_hms_micro(13, 45, 10, 123_456).unwrap();
        assert_eq!(time.hms_micro(), (13, 45, 10, 123_456));
        assert_eq!(Time::from_hms_micro(24, 0, 0, 0), Ok(Time::END_OF_DAY));
        assert_eq!(Time::END_OF_DAY.hms_micro(), (24, 0, 0, 0));
        assert!(Time::from_hms_micro(24, 0, 0, 1).is_err());
        assert!(Time::from_hms_micro(1, 60, 0, 0).is_err());
        let err = Time::from_sql(oid::TIME, Format::Binary, &(-1i64).to_be_bytes()).unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::Invalid);
    }

    proptest! {
        #[test]
        fn round_trips_both_formats(micros in 0..=USECS_PER_DAY) {
            let time = Time::from_micros(micros).unwrap();
            let mut out = BytesMut::new();
            time.to_sql_binary(oid::TIME, &mut out).unwrap();
            prop_assert_eq!(Time::from_sql(oid::TIME, Format::Binary, &out), Ok(time));
            out.clear();
            time.to_sql_text(&mut out).unwrap();
            prop_assert_eq!(Time::from_sql(oid::TIME, Format::Text, &out), Ok(time));
        }

        #[test]
        fn never_panics_on_arbitrary_bytes(raw: Vec<u8>) {
            let _ = Time::from_sql(oid::TIME, Format::Binary, &raw);
            let _ = Time::from_sql(oid::TIME, Format::Text, &raw);
        }
    }
}
