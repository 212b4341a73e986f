//! Writing dates and times in PostgreSQL's ISO output style, which its input also reads.

use super::civil::{CivilDateTime, split_time};
use std::fmt::{self, Write};

/// Writes `YYYY-MM-DD` with the year as PostgreSQL shows it (at least 4 digits, 1 BC as
/// `0001`); returns whether ` BC` must follow the whole value.
pub(crate) fn write_date(
    f: &mut impl Write,
    year: i32,
    month: u32,
    day: u32,
) -> Result<bool, fmt::Error> {
    let bc = year <= 0;
    let shown = if bc {
        1 - i64::from(year)
    } else {
        i64::from(year)
    };
    write!(f, "{shown:04}-{month:02}-{day:02}")?;
    Ok(bc)
}

/// Writes `HH:MM:SS`, then `.` and the microseconds without trailing zeros if not zero.
pub(crate) fn write_time(f: &mut impl Write, micros_of_day: i64) -> fmt::Result {
    let (hour, minute, second, microsecond) = split_time(micros_of_day);
    write!(f, "{hour:02}:{minute:02}:{second:02}")?;
    write_fraction(f, microsecond)
}

/// Writes `.ffffff` with trailing zeros removed, or nothing for 0.
pub(crate) fn write_fraction(f: &mut impl Write, microsecond: u32) -> fmt::Result {
    if microsecond == 0 {
        return Ok(());
    }
    let mut digits = microsecond;
    let mut width = 6;
    while digits % 10 == 0 {
        digits /= 10;
        width -= 1;
    }
    write!(f, ".{digits:0width$}")
}

/// Writes a date and time (`2024-03-05 13:45:10.5`) and any `suffix` (a UTC offset) before
/// the ` BC` marker, as `timestamp_out`/`timestamptz_out` do.
pub(crate) fn write_date_time(
    f: &mut impl Write,
    civil: &CivilDateTime,
    suffix: &str,
) -> fmt::Result {
    let bc = write_date(f, civil.year, civil.month, civil.day)?;
    write!(
        f,
        " {:02}:{:02}:{:02}",
        civil.hour, civil.minute, civil.second
    )?;
    write_fraction(f, civil.microsecond)?;
    f.write_str(suffix)?;
    if bc {
        f.write_str(" BC")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_drop_trailing_zeros() {
        let mut out = String::new();
        write_time(&mut out, 49_510_123_456).unwrap();
        assert_eq!(out, "13:45:10.123456");
        out.clear();
        write_time(&mut out, 3_723_500_000).unwrap();
        assert_eq!(out, "01:02:03.5");
        out.clear();
        write_time(&mut out, 86_400_000_000).unwrap();
        assert_eq!(out, "24:00:00");
        out.clear();
        write_fraction(&mut out, 10).unwrap();
        assert_eq!(out, ".00001");
    }

    #[test]
    fn bc_years_count_from_one() {
        let mut out = String::new();
        assert!(write_date(&mut out, 0, 12, 31).unwrap());
        assert_eq!(out, "0001-12-31");
        out.clear();
        assert!(!write_date(&mut out, 294_276, 1, 2).unwrap());
        assert_eq!(out, "294276-01-02");
    }
}
