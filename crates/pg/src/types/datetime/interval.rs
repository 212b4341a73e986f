//! [`Interval`]: PostgreSQL `interval`, as months, days and microseconds.

use super::civil::{USECS_PER_HOUR, USECS_PER_MINUTE, USECS_PER_SECOND};
use super::format::write_fraction;
use super::interval_parse::parse_interval;
use super::text_error;
use crate::types::wire::fixed;
use crate::types::{ConversionError, Format, FromSql, IsNull, Oid, ToSql, oid};
use bytes::{BufMut, BytesMut};
use std::fmt::{self, Write};
use std::str::FromStr;

/// A PostgreSQL `interval`: months, days and microseconds, kept apart because their lengths
/// vary (a month is 28 to 31 days, a day 23 to 25 hours across time-zone changes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Interval {
    /// Months (years are 12 months).
    pub months: i32,
    /// Days.
    pub days: i32,
    /// Microseconds (hours, minutes, seconds).
    pub microseconds: i64,
}

impl Interval {
    /// The zero interval, `00:00:00`.
    pub const ZERO: Interval = Interval {
        months: 0,
        days: 0,
        microseconds: 0,
    };
    /// `infinity` (PostgreSQL 17 and later store it as every field at its maximum).
    pub const INFINITY: Interval = Interval {
        months: i32::MAX,
        days: i32::MAX,
        microseconds: i64::MAX,
    };
    /// `-infinity` (PostgreSQL 17 and later).
    pub const NEG_INFINITY: Interval = Interval {
        months: i32::MIN,
        days: i32::MIN,
        microseconds: i64::MIN,
    };

    /// An interval of `months`, `days` and `microseconds`.
    pub const fn new(months: i32, days: i32, microseconds: i64) -> Interval {
        Interval {
            months,
            days,
            microseconds,
        }
    }

    /// Whether this is neither infinity.
    pub fn is_finite(self) -> bool {
        self != Interval::INFINITY && self != Interval::NEG_INFINITY
    }

    /// Writes the postgres IntervalStyle text; `safe_time` spells out an `i64::MIN` time as
    /// microseconds, since PostgreSQL prints that value as text its own input rejects.
    fn write_postgres_style(&self, f: &mut impl Write, safe_time: bool) -> fmt::Result {
        if *self == Interval::INFINITY {
            return f.write_str("infinity");
        }
        if *self == Interval::NEG_INFINITY {
            return f.write_str("-infinity");
        }
        let mut is_zero = true;
        let mut is_before = false;
        let mut part = |f: &mut dyn Write, value: i64, unit: &str| -> fmt::Result {
            if value == 0 {
                return Ok(());
            }
            let space = if is_zero { "" } else { " " };
            let plus = if is_before && value > 0 { "+" } else { "" };
            let plural = if value == 1 { "" } else { "s" };
            write!(f, "{space}{plus}{value} {unit}{plural}")?;
            is_before = value < 0;
            is_zero = false;
            Ok(())
        };
        part(f, i64::from(self.months / 12), "year")?;
        part(f, i64::from(self.months % 12), "mon")?;
        part(f, i64::from(self.days), "day")?;
        let time = self.microseconds;
        if safe_time && time == i64::MIN {
            part(f, time, "microsecond")?;
            return Ok(());
        }
        if is_zero || time != 0 {
            let space = if is_zero { "" } else { " " };
            let sign = if time < 0 {
                "-"
            } else if is_before {
                "+"
            } else {
                ""
            };
            let magnitude = time.unsigned_abs();
            let hours = magnitude / USECS_PER_HOUR as u64;
            let minutes = magnitude / USECS_PER_MINUTE as u64 % 60;
            let seconds = magnitude / USECS_PER_SECOND as u64 % 60;
            // Below one million, so it fits u32.
            let micros = (magnitude % USECS_PER_SECOND as u64) as u32;
            write!(f, "{space}{sign}{hours:02}:{minutes:02}:{seconds:02}")?;
            write_fraction(f, micros)?;
        }
        Ok(())
    }
}

impl fmt::Display for Interval {
    /// As PostgreSQL writes it in IntervalStyle postgres (the default):
    /// `1 year 2 mons 3 days 04:05:06.789`, `-1 days +02:00:00`, `00:00:00`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_postgres_style(f, false)
    }
}

impl FromStr for Interval {
    type Err = ConversionError;

    /// Parses the output of every IntervalStyle (postgres, postgres_verbose, sql_standard,
    /// iso_8601) and ISO 8601 designators such as `P1Y2M3DT4H5M6.5S`.
    fn from_str(text: &str) -> Result<Interval, ConversionError> {
        Interval::parse_for(oid::INTERVAL, text.as_bytes())
    }
}

impl Interval {
    fn parse_for(oid: Oid, raw: &[u8]) -> Result<Interval, ConversionError> {
        parse_interval(raw).map_err(|e| text_error(oid, "Interval", raw, e))
    }

    fn decode(oid: Oid, format: Format, raw: &[u8]) -> Result<Interval, ConversionError> {
        match (oid, format) {
            (oid::INTERVAL, Format::Binary) => {
                let bytes: [u8; 16] = fixed(oid, "Interval", raw)?;
                let [
                    t0,
                    t1,
                    t2,
                    t3,
                    t4,
                    t5,
                    t6,
                    t7,
                    d0,
                    d1,
                    d2,
                    d3,
                    m0,
                    m1,
                    m2,
                    m3,
                ] = bytes;
                Ok(Interval {
                    microseconds: i64::from_be_bytes([t0, t1, t2, t3, t4, t5, t6, t7]),
                    days: i32::from_be_bytes([d0, d1, d2, d3]),
                    months: i32::from_be_bytes([m0, m1, m2, m3]),
                })
            }
            (oid::INTERVAL, Format::Text) => Interval::parse_for(oid, raw),
            _ => Err(ConversionError::wrong_type(oid, "Interval")),
        }
    }
}

impl<'a> FromSql<'a> for Interval {
    fn accepts(oid: Oid) -> bool {
        oid == oid::INTERVAL
    }

    fn from_sql(oid: Oid, format: Format, raw: &'a [u8]) -> Result<Self, ConversionError> {
        Interval::decode(oid, format, raw)
    }

    fn from_sql_unescaped(oid: Oid, format: Format, raw: &[u8]) -> Result<Self, ConversionError> {
        Interval::decode(oid, format, raw)
    }
}

impl ToSql for Interval {
    fn accepts_binary(&self, oid: Oid) -> bool {
        oid == oid::INTERVAL
    }

    fn to_sql_binary(&self, oid: Oid, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        if oid != oid::INTERVAL {
            return Err(ConversionError::wrong_type(oid, "Interval"));
        }
        out.put_i64(self.microseconds);
        out.put_i32(self.days);
        out.put_i32(self.months);
        Ok(IsNull::No)
    }

    /// The postgres style, which PostgreSQL reads back identically whatever its IntervalStyle
    /// (a negative leading field is always followed by explicitly signed fields).
    fn to_sql_text(&self, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        self.write_postgres_style(out, true).map_err(|_| {
            ConversionError::invalid(oid::INTERVAL, "Interval", "could not format the interval")
        })?;
        Ok(IsNull::No)
    }
}

#[cfg(test)]
mod tests;
