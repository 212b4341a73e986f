//! `std::time::SystemTime` ↔ timestamptz (and timestamp, read as UTC).

use super::{Timestamp, TimestampTz};
use crate::types::{ConversionError, Format, FromSql, IsNull, Oid, ToSql, oid};
use bytes::BytesMut;
use std::time::SystemTime;

fn decode_system_time(oid: Oid, format: Format, raw: &[u8]) -> Result<SystemTime, ConversionError> {
    match oid {
        oid::TIMESTAMPTZ => {
            SystemTime::try_from(TimestampTz::from_sql_unescaped(oid, format, raw)?)
        }
        oid::TIMESTAMP => SystemTime::try_from(Timestamp::from_sql_unescaped(oid, format, raw)?),
        _ => Err(ConversionError::wrong_type(oid, "SystemTime")),
    }
}

/// Reads timestamptz, and timestamp as if it were UTC; the infinities are out of range.
impl<'a> FromSql<'a> for SystemTime {
    fn accepts(oid: Oid) -> bool {
        matches!(oid, oid::TIMESTAMPTZ | oid::TIMESTAMP)
    }

    fn from_sql(oid: Oid, format: Format, raw: &'a [u8]) -> Result<Self, ConversionError> {
        decode_system_time(oid, format, raw)
    }

    fn from_sql_unescaped(oid: Oid, format: Format, raw: &[u8]) -> Result<Self, ConversionError> {
        decode_system_time(oid, format, raw)
    }
}

/// Writes timestamptz (and timestamp, as the UTC wall-clock time), truncated to microseconds.
impl ToSql for SystemTime {
    fn accepts_binary(&self, oid: Oid) -> bool {
        matches!(oid, oid::TIMESTAMPTZ | oid::TIMESTAMP)
    }

    fn to_sql_binary(&self, oid: Oid, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        match oid {
            oid::TIMESTAMPTZ => TimestampTz::try_from(*self)?.to_sql_binary(oid, out),
            oid::TIMESTAMP => Timestamp::try_from(*self)?.to_sql_binary(oid, out),
            _ => Err(ConversionError::wrong_type(oid, "SystemTime")),
        }
    }

    fn to_sql_text(&self, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        TimestampTz::try_from(*self)?.to_sql_text(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn reads_and_writes_instants() {
        let instant = UNIX_EPOCH + Duration::from_micros(1_709_646_310_500_000);
        let mut out = BytesMut::new();
        instant.to_sql_binary(oid::TIMESTAMPTZ, &mut out).unwrap();
        // timestamptz_send('2024-03-05 13:45:10.5+00') = 0002b5e8d1cf86a0.
        assert_eq!(&out[..], 0x0002b5e8d1cf86a0u64.to_be_bytes());
        assert_eq!(
            SystemTime::from_sql(oid::TIMESTAMPTZ, Format::Binary, &out),
            Ok(instant)
        );
        out.clear();
        instant.to_sql_text(&mut out).unwrap();
        assert_eq!(&out[..], b"2024-03-05 13:45:10.5+00");
        assert_eq!(
            SystemTime::from_sql(oid::TIMESTAMP, Format::Text, b"2024-03-05 13:45:10.5"),
            Ok(instant)
        );
        assert!(SystemTime::from_sql(oid::TIMESTAMPTZ, Format::Text, b"infinity").is_err());
        assert!(SystemTime::from_sql(oid::DATE, Format::Text, b"2024-03-05").is_err());
    }
}
