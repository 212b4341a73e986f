//! Timestamps: precision, scaling to nanoseconds, InfluxDB's range, and the default time.

use std::fmt;
use std::str::FromStr;

use crate::error::{ErrorKind, Fail};
use crate::number::{DigitsError, parse_i64};

/// The smallest time InfluxDB accepts, in nanoseconds (`i64::MIN + 2`).
pub const MIN_TIME_NS: i64 = i64::MIN + 2;
/// The largest time InfluxDB accepts, in nanoseconds (`i64::MAX - 1`).
pub const MAX_TIME_NS: i64 = i64::MAX - 1;

/// The unit of the timestamps in a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Precision {
    /// `ns` (the default).
    #[default]
    Nanoseconds,
    /// `us` / `u`.
    Microseconds,
    /// `ms`.
    Milliseconds,
    /// `s`.
    Seconds,
}

impl Precision {
    /// Nanoseconds in one unit.
    pub fn nanos(self) -> i64 {
        match self {
            Precision::Nanoseconds => 1,
            Precision::Microseconds => 1_000,
            Precision::Milliseconds => 1_000_000,
            Precision::Seconds => 1_000_000_000,
        }
    }

    /// The name InfluxDB's v2 API uses (`ns`, `us`, `ms`, `s`).
    pub fn as_str(self) -> &'static str {
        match self {
            Precision::Nanoseconds => "ns",
            Precision::Microseconds => "us",
            Precision::Milliseconds => "ms",
            Precision::Seconds => "s",
        }
    }

    /// Truncates a nanosecond time down to a whole number of units (towards minus infinity,
    /// as Go's `time.Truncate` does for InfluxDB's default time).
    pub fn truncate(self, ns: i64) -> i64 {
        ns - ns.rem_euclid(self.nanos())
    }

    /// Scales a timestamp in this precision to nanoseconds, if it stays in InfluxDB's range.
    pub fn to_nanos(self, value: i64) -> Option<i64> {
        value
            .checked_mul(self.nanos())
            .filter(|ns| (MIN_TIME_NS..=MAX_TIME_NS).contains(ns))
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A precision name that is not one of `ns`, `us`, `ms`, `s` (or v1's `n`, `u`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownPrecision(pub String);

impl fmt::Display for UnknownPrecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown precision {:?}: expected ns, us, ms or s",
            self.0
        )
    }
}

impl std::error::Error for UnknownPrecision {}

impl FromStr for Precision {
    type Err = UnknownPrecision;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "ns" | "n" => Ok(Precision::Nanoseconds),
            "us" | "u" => Ok(Precision::Microseconds),
            "ms" => Ok(Precision::Milliseconds),
            "s" => Ok(Precision::Seconds),
            other => Err(UnknownPrecision(other.to_owned())),
        }
    }
}

/// Parses a timestamp token (`-?[0-9]+`) in `precision` and returns it in nanoseconds.
#[inline(always)]
pub(crate) fn parse_timestamp(token: &str, at: usize, precision: Precision) -> Result<i64, Fail> {
    let end = at + token.len();
    match parse_i64(token.as_bytes()) {
        Ok(value) => match precision.to_nanos(value) {
            Some(ns) => Ok(ns),
            None => Err(Fail::span(ErrorKind::TimestampOutOfRange, at, end)),
        },
        Err(DigitsError::Overflow) => Err(Fail::span(ErrorKind::TimestampOutOfRange, at, end)),
        Err(DigitsError::Syntax) => Err(Fail::span(ErrorKind::InvalidTimestamp, at, end)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_by_precision() {
        let p = |s: &str| s.parse::<Precision>().unwrap();
        assert_eq!(parse_timestamp("1", 0, p("ns")), Ok(1));
        assert_eq!(parse_timestamp("1", 0, p("us")), Ok(1_000));
        assert_eq!(parse_timestamp("1", 0, p("ms")), Ok(1_000_000));
        assert_eq!(parse_timestamp("-2", 0, p("s")), Ok(-2_000_000_000));
        assert_eq!(
            parse_timestamp("1465839830100400200", 0, p("ns")),
            Ok(1_465_839_830_100_400_200)
        );
        assert!("h".parse::<Precision>().is_err());
    }

    #[test]
    fn enforces_influxdb_range() {
        let ns = Precision::Nanoseconds;
        assert_eq!(
            parse_timestamp("9223372036854775806", 0, ns),
            Ok(MAX_TIME_NS)
        );
        assert_eq!(
            parse_timestamp("-9223372036854775806", 0, ns),
            Ok(MIN_TIME_NS)
        );
        for bad in [
            "9223372036854775807",
            "-9223372036854775807",
            "-9223372036854775808",
            "99999999999999999999",
        ] {
            assert_eq!(
                parse_timestamp(bad, 0, ns).unwrap_err().kind,
                ErrorKind::TimestampOutOfRange,
                "{bad}"
            );
        }
        assert_eq!(
            parse_timestamp("9223372037", 0, Precision::Seconds)
                .unwrap_err()
                .kind,
            ErrorKind::TimestampOutOfRange
        );
        assert_eq!(
            parse_timestamp("9223372036", 0, Precision::Seconds),
            Ok(9_223_372_036_000_000_000)
        );
    }

    #[test]
    fn rejects_non_integers() {
        for bad in ["", "-", "+1", "1.5", "1e9", "12a", "0x1"] {
            assert_eq!(
                parse_timestamp(bad, 0, Precision::Nanoseconds)
                    .unwrap_err()
                    .kind,
                ErrorKind::InvalidTimestamp,
                "{bad}"
            );
        }
    }

    #[test]
    fn truncates_towards_minus_infinity() {
        assert_eq!(Precision::Seconds.truncate(1_999_999_999), 1_000_000_000);
        assert_eq!(Precision::Seconds.truncate(-1), -1_000_000_000);
        assert_eq!(Precision::Milliseconds.truncate(1_234_567), 1_000_000);
        assert_eq!(Precision::Nanoseconds.truncate(-7), -7);
    }
}
