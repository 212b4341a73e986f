//! Writing dates and times in PostgreSQL's ISO output style, which its input also reads.

use super::civil::{CivilDateTime, split_time};
use std::fmt::{self, Write};

/// A stack buffer for one formatted value: digits are written by hand, which is several
/// times faster than `write!` with padding.
struct Buffer {
    bytes: [u8; 48],
    len: usize,
}

impl Buffer {
    fn new() -> Buffer {
        Buffer {
            bytes: [0; 48],
            len: 0,
        }
    }

    fn push(&mut self, byte: u8) {
        // Every value written here is far shorter than the buffer.
        if let Some(slot) = self.bytes.get_mut(self.len) {
            *slot = byte;
            self.len += 1;
        }
    }

    fn push_str(&mut self, text: &str) {
        text.bytes().for_each(|b| self.push(b));
    }

    /// `value` in decimal, zero-padded to at least `width` digits.
    fn push_number(&mut self, value: u64, width: usize) {
        let mut digits = [b'0'; 20];
        let mut start = digits.len();
        let mut rest = value;
        while rest > 0 || start == digits.len() {
            start -= 1;
            digits[start] = b'0' + (rest % 10) as u8;
            rest /= 10;
        }
        let start = start.min(digits.len().saturating_sub(width));
        digits[start..].iter().for_each(|&b| self.push(b));
    }

    fn push_date(&mut self, year: i32, month: u32, day: u32) -> bool {
        let bc = year <= 0;
        let shown = if bc {
            1 - i64::from(year)
        } else {
            i64::from(year)
        };
        self.push_number(shown.unsigned_abs(), 4);
        self.push(b'-');
        self.push_number(u64::from(month), 2);
        self.push(b'-');
        self.push_number(u64::from(day), 2);
        bc
    }

    fn push_time(&mut self, hour: u32, minute: u32, second: u32, microsecond: u32) {
        self.push_number(u64::from(hour), 2);
        self.push(b':');
        self.push_number(u64::from(minute), 2);
        self.push(b':');
        self.push_number(u64::from(second), 2);
        self.push_fraction(microsecond);
    }

    fn push_fraction(&mut self, microsecond: u32) {
        if microsecond == 0 {
            return;
        }
        let mut digits = microsecond;
        let mut width = 6;
        while digits.is_multiple_of(10) {
            digits /= 10;
            width -= 1;
        }
        self.push(b'.');
        self.push_number(u64::from(digits), width);
    }

    fn write_to(&self, f: &mut impl Write) -> fmt::Result {
        // Only ASCII digits and punctuation were pushed, plus `suffix` text which is UTF-8.
        f.write_str(std::str::from_utf8(&self.bytes[..self.len]).map_err(|_| fmt::Error)?)
    }
}

/// Writes `YYYY-MM-DD` with the year as PostgreSQL shows it (at least 4 digits, 1 BC as
/// `0001`); returns whether ` BC` must follow the whole value.
pub(crate) fn write_date(
    f: &mut impl Write,
    year: i32,
    month: u32,
    day: u32,
) -> Result<bool, fmt::Error> {
    let mut buffer = Buffer::new();
    let bc = buffer.push_date(year, month, day);
    buffer.write_to(f)?;
    Ok(bc)
}

/// Writes `HH:MM:SS`, then `.` and the microseconds without trailing zeros if not zero.
pub(crate) fn write_time(f: &mut impl Write, micros_of_day: i64) -> fmt::Result {
    let (hour, minute, second, microsecond) = split_time(micros_of_day);
    let mut buffer = Buffer::new();
    buffer.push_time(hour, minute, second, microsecond);
    buffer.write_to(f)
}

/// Writes `.ffffff` with trailing zeros removed, or nothing for 0.
pub(crate) fn write_fraction(f: &mut impl Write, microsecond: u32) -> fmt::Result {
    let mut buffer = Buffer::new();
    buffer.push_fraction(microsecond);
    buffer.write_to(f)
}

/// Writes a date and time (`2024-03-05 13:45:10.5`) and any `suffix` (a UTC offset) before
/// the ` BC` marker, as `timestamp_out`/`timestamptz_out` do.
pub(crate) fn write_date_time(
    f: &mut impl Write,
    civil: &CivilDateTime,
    suffix: &str,
) -> fmt::Result {
    let mut buffer = Buffer::new();
    let bc = buffer.push_date(civil.year, civil.month, civil.day);
    buffer.push(b' ');
    buffer.push_time(civil.hour, civil.minute, civil.second, civil.microsecond);
    buffer.push_str(suffix);
    if bc {
        buffer.push_str(" BC");
    }
    buffer.write_to(f)
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
