//! [`Timestamp`] and [`TimestampTz`]: microseconds since 2000-01-01 00:00:00 (UTC for tz).

use super::civil::{CivilDateTime, USECS_PER_DAY};
use super::format::write_date_time;
use super::parse::{Special, parse_timestamp};
use super::text_error;
use super::{Date, Time};
use crate::types::binary::{PG_EPOCH_UNIX_MICROS, encode_timestamp};
use crate::types::wire::fixed;
use crate::types::{ConversionError, Format, FromSql, IsNull, Oid, ToSql, oid};
use bytes::BytesMut;
use std::fmt;
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The earliest timestamp PostgreSQL stores: 4714-11-24 00:00:00 BC.
const MIN_MICROS: i64 = -211_813_488_000_000_000;
/// The first timestamp past PostgreSQL's range: 294277-01-01 00:00:00.
const END_MICROS: i64 = 9_223_371_331_200_000_000;
/// Microseconds from 1970-01-01 to 2000-01-01.
const UNIX_TO_PG_MICROS: i128 = PG_EPOCH_UNIX_MICROS as i128;

macro_rules! timestamp_type {
    (
        $(#[$doc:meta])*
        $name:ident, $oid:path, $rust:literal, suffix $suffix:literal, offsets $offsets:literal
    ) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(i64);

        impl $name {
            /// `infinity`: later than every timestamp.
            pub const INFINITY: $name = $name(i64::MAX);
            /// `-infinity`: earlier than every timestamp.
            pub const NEG_INFINITY: $name = $name(i64::MIN);
            /// The earliest finite value PostgreSQL stores, 4714-11-24 00:00:00 BC.
            pub const MIN: $name = $name(MIN_MICROS);
            /// The latest finite value PostgreSQL stores, 294276-12-31 23:59:59.999999.
            pub const MAX: $name = $name(END_MICROS - 1);
            /// PostgreSQL's epoch, 2000-01-01 00:00:00.
            pub const PG_EPOCH: $name = $name(0);

            /// The value `micros` after 2000-01-01 00:00:00, as the server stores it (not
            /// range checked; `i64::MAX`/`MIN` are the infinities).
            pub const fn from_pg_micros(micros: i64) -> $name {
                $name(micros)
            }

            /// Microseconds since 2000-01-01 00:00:00.
            pub const fn pg_micros(self) -> i64 {
                self.0
            }

            /// Whether this is neither infinity.
            pub const fn is_finite(self) -> bool {
                self.0 != i64::MAX && self.0 != i64::MIN
            }

            /// The value of these civil fields; out of range when a field is invalid or the
            /// value is outside 4714-11-24 BC ..= 294276-12-31 23:59:59.999999.
            pub fn from_civil(civil: CivilDateTime) -> Result<$name, ConversionError> {
                civil
                    .validate()
                    .map_err(|detail| ConversionError::out_of_range($oid, $rust, detail))?;
                $name::checked(civil.pg_micros())
            }

            /// The value `unix_micros` after 1970-01-01 00:00:00; out of range outside
            /// 4714-11-24 BC ..= 294276-12-31 23:59:59.999999.
            pub fn from_unix_micros(unix_micros: i64) -> Result<$name, ConversionError> {
                $name::checked(i128::from(unix_micros) - UNIX_TO_PG_MICROS)
            }

            /// Microseconds since 1970-01-01 00:00:00; `None` for the infinities and for the
            /// values after 294247-01-10, whose count overflows `i64`.
            pub fn unix_micros(self) -> Option<i64> {
                if self.is_finite() { self.0.checked_add(PG_EPOCH_UNIX_MICROS) } else { None }
            }

            /// The civil fields, or `None` for the infinities.
            pub fn to_civil(self) -> Option<CivilDateTime> {
                self.is_finite().then(|| CivilDateTime::from_pg_micros(self.0))
            }

            /// Midnight of `date` plus `time`; the infinities of `date` give the infinities.
            pub fn new(date: Date, time: Time) -> Result<$name, ConversionError> {
                match date {
                    Date::INFINITY => Ok($name::INFINITY),
                    Date::NEG_INFINITY => Ok($name::NEG_INFINITY),
                    _ => $name::checked(
                        i128::from(date.pg_days()) * i128::from(USECS_PER_DAY)
                            + i128::from(time.micros()),
                    ),
                }
            }

            /// The calendar date, with the infinities of dates for the infinities.
            pub fn date(self) -> Date {
                match self {
                    $name::INFINITY => Date::INFINITY,
                    $name::NEG_INFINITY => Date::NEG_INFINITY,
                    // |micros / USECS_PER_DAY| < 2^27, so the day count fits i32.
                    _ => Date::from_pg_days(self.0.div_euclid(USECS_PER_DAY) as i32),
                }
            }

            /// The time of day, or `None` for the infinities.
            pub fn time(self) -> Option<Time> {
                if !self.is_finite() {
                    return None;
                }
                Time::from_micros(self.0.rem_euclid(USECS_PER_DAY)).ok()
            }

            /// A microsecond count as a value, when PostgreSQL can store it.
            pub(crate) fn checked(micros: i128) -> Result<$name, ConversionError> {
                match i64::try_from(micros) {
                    Ok(micros) if (MIN_MICROS..END_MICROS).contains(&micros) => Ok($name(micros)),
                    _ => Err(ConversionError::out_of_range(
                        $oid,
                        $rust,
                        format!(
                            "{micros} microseconds since 2000-01-01 is outside \
                             4714-11-24 BC ..= 294276-12-31 23:59:59.999999"
                        ),
                    )),
                }
            }

            /// The value unchanged if it is an infinity or inside PostgreSQL's range.
            fn check_range(self) -> Result<$name, ConversionError> {
                if self.is_finite() { $name::checked(i128::from(self.0)) } else { Ok(self) }
            }

            /// Parses ISO-style text for a value of type `oid`.
            fn parse_for(oid: Oid, raw: &[u8]) -> Result<$name, ConversionError> {
                match parse_timestamp(raw, $offsets).map_err(|e| text_error(oid, $rust, raw, e))? {
                    Special::Infinity => Ok($name::INFINITY),
                    Special::NegInfinity => Ok($name::NEG_INFINITY),
                    Special::Finite(micros) => $name::checked(micros),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self.to_civil() {
                    Some(civil) => write_date_time(f, &civil, $suffix),
                    None if self.0 > 0 => f.write_str("infinity"),
                    None => f.write_str("-infinity"),
                }
            }
        }

        impl FromStr for $name {
            type Err = ConversionError;

            fn from_str(text: &str) -> Result<$name, ConversionError> {
                $name::parse_for($oid, text.as_bytes())
            }
        }

        impl TryFrom<SystemTime> for $name {
            type Error = ConversionError;

            /// Truncates to whole microseconds (towards the past).
            fn try_from(time: SystemTime) -> Result<$name, ConversionError> {
                let unix_micros = match time.duration_since(UNIX_EPOCH) {
                    Ok(after) => i128::try_from(after.as_micros()).unwrap_or(i128::MAX),
                    Err(before) => {
                        let before = before.duration();
                        let micros = i128::try_from(before.as_micros()).unwrap_or(i128::MAX);
                        -micros - i128::from(before.subsec_nanos() % 1000 != 0)
                    }
                };
                $name::checked(unix_micros.saturating_sub(UNIX_TO_PG_MICROS))
            }
        }

        impl TryFrom<$name> for SystemTime {
            type Error = ConversionError;

            /// Out of range for the infinities and for instants the platform cannot hold.
            fn try_from(value: $name) -> Result<SystemTime, ConversionError> {
                let unix_micros = i128::from(value.0) + UNIX_TO_PG_MICROS;
                let magnitude = Duration::from_micros(u64::try_from(unix_micros.unsigned_abs()).unwrap_or(u64::MAX));
                let time = if !value.is_finite() {
                    None
                } else if unix_micros >= 0 {
                    UNIX_EPOCH.checked_add(magnitude)
                } else {
                    UNIX_EPOCH.checked_sub(magnitude)
                };
                time.ok_or_else(|| {
                    ConversionError::out_of_range(
                        $oid,
                        "SystemTime",
                        format!("{value} cannot be represented as a SystemTime"),
                    )
                })
            }
        }

        impl<'a> FromSql<'a> for $name {
            fn accepts(oid: Oid) -> bool {
                oid == $oid
            }

            fn from_sql(oid: Oid, format: Format, raw: &'a [u8]) -> Result<Self, ConversionError> {
                $name::decode(oid, format, raw)
            }

            fn from_sql_unescaped(oid: Oid, format: Format, raw: &[u8]) -> Result<Self, ConversionError> {
                $name::decode(oid, format, raw)
            }
        }

        impl $name {
            fn decode(oid: Oid, format: Format, raw: &[u8]) -> Result<$name, ConversionError> {
                match format {
                    _ if oid != $oid => Err(ConversionError::wrong_type(oid, $rust)),
                    Format::Binary => Ok($name(i64::from_be_bytes(fixed(oid, $rust, raw)?))),
                    Format::Text => $name::parse_for(oid, raw),
                }
            }
        }

        impl ToSql for $name {
            fn accepts_binary(&self, oid: Oid) -> bool {
                oid == $oid
            }

            fn to_sql_binary(&self, oid: Oid, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
                if oid != $oid {
                    return Err(ConversionError::wrong_type(oid, $rust));
                }
                encode_timestamp(out, self.check_range()?.0);
                Ok(IsNull::No)
            }

            fn to_sql_text(&self, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
                use std::fmt::Write as _;
                let value = self.check_range()?;
                write!(out, "{value}").map_err(|_| {
                    ConversionError::invalid($oid, $rust, "could not format the timestamp")
                })?;
                Ok(IsNull::No)
            }
        }
    };
}

timestamp_type! {
    /// A PostgreSQL `timestamp` (without time zone): microseconds since 2000-01-01 00:00:00,
    /// or one of the infinities (`i64::MAX`/`MIN`). Text is `2024-03-05 13:45:10.5`.
    Timestamp, oid::TIMESTAMP, "Timestamp", suffix "", offsets false
}

timestamp_type! {
    /// A PostgreSQL `timestamptz`: microseconds since 2000-01-01 00:00:00 UTC, or one of the
    /// infinities. Text input applies the UTC offset (`+05:30`; none means UTC); text output
    /// is in UTC: `2024-03-05 13:45:10.5+00`.
    TimestampTz, oid::TIMESTAMPTZ, "TimestampTz", suffix "+00", offsets true
}

impl TimestampTz {
    /// The instant whose UTC wall-clock reading is `utc`.
    pub const fn from_utc(utc: Timestamp) -> TimestampTz {
        TimestampTz(utc.0)
    }

    /// The UTC wall-clock reading of this instant.
    pub const fn to_utc(self) -> Timestamp {
        Timestamp(self.0)
    }
}

#[cfg(test)]
mod tests;
