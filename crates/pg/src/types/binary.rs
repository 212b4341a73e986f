//! The binary wire layouts of timestamps, numerics and jsonb, as free functions: the `ToSql`
//! impls write through them, and so do writers that build binary COPY data by hand (the
//! Influx writer), so each layout is known in one place.

use super::numeric::{SIGN_NEGATIVE, SIGN_POSITIVE};
use bytes::{BufMut, BytesMut};

/// Microseconds from the Unix epoch (1970-01-01) to PostgreSQL's epoch (2000-01-01).
pub const PG_EPOCH_UNIX_MICROS: i64 = 946_684_800_000_000;

/// The version byte that starts a binary jsonb value.
pub const JSONB_VERSION: u8 = 1;

/// Microseconds since 2000-01-01 of an instant given in nanoseconds since the Unix epoch,
/// cut towards the past (PostgreSQL keeps microseconds; flooring keeps instants ordered).
#[inline]
pub const fn pg_micros_from_unix_nanos(nanos: i64) -> i64 {
    nanos.div_euclid(1000) - PG_EPOCH_UNIX_MICROS
}

/// A timestamp or timestamptz (`timestamp_send`): microseconds since 2000-01-01 00:00:00,
/// `i64::MAX`/`MIN` for the infinities; 8 bytes, no length prefix.
#[inline]
pub fn encode_timestamp(out: &mut BytesMut, pg_micros: i64) {
    out.put_i64(pg_micros);
}

/// A finite numeric (`numeric_send`) from its base-10000 `digits`, most significant first,
/// without leading or trailing zero digits: the count, the `weight` of the first digit (in
/// powers of 10000), the sign, the display scale, then the digits. No length prefix.
#[inline]
pub fn encode_numeric(
    out: &mut BytesMut,
    negative: bool,
    weight: i16,
    dscale: u16,
    digits: impl ExactSizeIterator<Item = u16>,
) {
    // The callers pass at most a few thousand digits (the numeric limits), so the count fits.
    let count = u16::try_from(digits.len()).unwrap_or(u16::MAX);
    out.reserve(8 + 2 * usize::from(count));
    out.put_u16(count);
    out.put_i16(if count == 0 { 0 } else { weight });
    out.put_u16(if negative && count > 0 {
        SIGN_NEGATIVE
    } else {
        SIGN_POSITIVE
    });
    out.put_u16(dscale);
    for digit in digits.take(usize::from(count)) {
        out.put_u16(digit);
    }
}

/// An unsigned integer as a numeric with display scale 0.
#[inline]
pub fn encode_numeric_u64(out: &mut BytesMut, value: u64) {
    // u64::MAX has 20 decimal digits: five base-10000 digits, least significant first here.
    let mut digits = [0u16; 5];
    let mut count = 0;
    let mut rest = value;
    while rest > 0 {
        digits[count] = (rest % 10_000) as u16;
        rest /= 10_000;
        count += 1;
    }
    let weight = count.saturating_sub(1) as i16;
    let trailing_zeros = digits[..count].iter().take_while(|&&d| d == 0).count();
    let stored = &digits[trailing_zeros..count];
    encode_numeric(out, false, weight, 0, stored.iter().rev().copied());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Numeric, ToSql, oid};
    use proptest::prelude::*;

    #[test]
    fn numeric_u64_golden() {
        // numeric_send(12345) = 0002 0001 0000 0000 0001 0929: digits 1|2345, weight 1.
        let mut out = BytesMut::new();
        encode_numeric_u64(&mut out, 12345);
        assert_eq!(&out[..], [0, 2, 0, 1, 0, 0, 0, 0, 0, 1, 0x09, 0x29]);
    }

    #[test]
    fn unix_nanos_floor_to_microseconds() {
        assert_eq!(pg_micros_from_unix_nanos(-1), -1 - PG_EPOCH_UNIX_MICROS);
        assert_eq!(pg_micros_from_unix_nanos(999), -PG_EPOCH_UNIX_MICROS);
        assert_eq!(pg_micros_from_unix_nanos(PG_EPOCH_UNIX_MICROS * 1000), 0);
        let mut out = BytesMut::new();
        encode_timestamp(&mut out, -2);
        assert_eq!(&out[..], (-2i64).to_be_bytes());
    }

    proptest! {
        /// The u64 fast path writes what the general encoder writes for the same digits.
        #[test]
        fn numeric_u64_matches_the_general_encoder(
            value in prop_oneof![any::<u64>(), Just(0), Just(10_000), Just(u64::MAX)]
        ) {
            let mut fast = BytesMut::new();
            encode_numeric_u64(&mut fast, value);
            let mut general = BytesMut::new();
            Numeric::from(value).to_sql_binary(oid::NUMERIC, &mut general).unwrap();
            prop_assert_eq!(&fast[..], &general[..]);
        }
    }
}
