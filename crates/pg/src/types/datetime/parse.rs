//! Parsing dates, times and timestamps in PostgreSQL's ISO output style (DateStyle ISO).

use super::civil::{
    USECS_PER_DAY, USECS_PER_HOUR, USECS_PER_MINUTE, USECS_PER_SECOND, check_date,
    pg_days_from_civil,
};

/// Why a date/time text did not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TextError {
    /// Unexpected input at a byte offset; what was expected there.
    Syntax {
        offset: usize,
        expected: &'static str,
    },
    /// Well formed, but a field is out of range.
    Field(String),
    /// The text is another DateStyle's output (named).
    DateStyle(&'static str),
}

/// A parsed date or timestamp: one of the infinities, or a finite value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Special<T> {
    Infinity,
    NegInfinity,
    Finite(T),
}

/// A byte cursor with the position kept for error offsets.
pub(crate) struct Cursor<'a> {
    raw: &'a [u8],
    pub(crate) pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(raw: &'a [u8]) -> Cursor<'a> {
        Cursor { raw, pos: 0 }
    }

    pub(crate) fn peek(&self) -> Option<u8> {
        self.raw.get(self.pos).copied()
    }

    pub(crate) fn rest(&self) -> &'a [u8] {
        self.raw.get(self.pos..).unwrap_or_default()
    }

    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.raw.len()
    }

    /// Consumes `byte` if it is next.
    pub(crate) fn eat(&mut self, byte: u8) -> bool {
        let found = self.peek() == Some(byte);
        self.pos += usize::from(found);
        found
    }

    pub(crate) fn error(&self, expected: &'static str) -> TextError {
        TextError::Syntax {
            offset: self.pos,
            expected,
        }
    }

    pub(crate) fn expect(&mut self, byte: u8, expected: &'static str) -> Result<(), TextError> {
        if self.eat(byte) {
            Ok(())
        } else {
            Err(self.error(expected))
        }
    }

    /// Reads `min..=max` ASCII digits as a number; returns it and the digit count.
    pub(crate) fn digits(
        &mut self,
        min: usize,
        max: usize,
        expected: &'static str,
    ) -> Result<(i64, usize), TextError> {
        let count = self
            .rest()
            .iter()
            .take(max)
            .take_while(|b| b.is_ascii_digit())
            .count();
        if count < min {
            return Err(self.error(expected));
        }
        let value = self.rest()[..count]
            .iter()
            .fold(0i64, |acc, &d| acc * 10 + i64::from(d - b'0'));
        self.pos += count;
        Ok((value, count))
    }

    /// Reads `.digits` if present, as microseconds rounded half up from the 7th digit.
    pub(crate) fn fraction_micros(&mut self) -> Result<i64, TextError> {
        if !self.eat(b'.') {
            return Ok(0);
        }
        let digits = self
            .rest()
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if digits == 0 {
            return Err(self.error("digits after the decimal point"));
        }
        let taken = &self.rest()[..digits];
        let mut micros = 0i64;
        for index in 0..6 {
            micros = micros * 10 + taken.get(index).map_or(0, |d| i64::from(d - b'0'));
        }
        if taken.get(6).is_some_and(|&d| d >= b'5') {
            micros += 1;
        }
        self.pos += digits;
        Ok(micros)
    }
}

/// `infinity`/`-infinity` (and `+infinity`), which dates and timestamps share.
pub(crate) fn special_value<T>(raw: &[u8]) -> Option<Special<T>> {
    let word = raw.trim_ascii();
    if word.eq_ignore_ascii_case(b"infinity") || word.eq_ignore_ascii_case(b"+infinity") {
        Some(Special::Infinity)
    } else if word.eq_ignore_ascii_case(b"-infinity") {
        Some(Special::NegInfinity)
    } else {
        None
    }
}

/// Reads `YYYY-MM-DD` (the year has one or more digits); returns the year as written.
fn date_fields(cursor: &mut Cursor<'_>) -> Result<(i64, u32, u32), TextError> {
    let (year, year_digits) = cursor.digits(1, 9, "a year")?;
    if !cursor.eat(b'-') {
        return Err(style_or(cursor, "'-' after the year"));
    }
    let (month, _) = cursor.digits(1, 2, "a month")?;
    cursor.expect(b'-', "'-' after the month")?;
    let (day, day_digits) = cursor.digits(1, 2, "a day")?;
    if cursor.peek().is_some_and(|b| b.is_ascii_digit()) {
        // `21-11-2026`: DateStyle Postgres writes day-month-year (or month-day-year).
        return Err(if year_digits <= 2 && day_digits == 2 {
            TextError::DateStyle("Postgres")
        } else {
            cursor.error("at most two digits of day")
        });
    }
    // Both fit: at most two digits each.
    Ok((year, month as u32, day as u32))
}

/// The error for a mismatch where another DateStyle's output would explain it.
fn style_or(cursor: &Cursor<'_>, expected: &'static str) -> TextError {
    match cursor.peek() {
        Some(b'/') => TextError::DateStyle("SQL"),
        Some(b'.') => TextError::DateStyle("German"),
        _ => cursor.error(expected),
    }
}

/// Converts a displayed year and its ` BC` marker to an astronomical year.
fn astronomical_year(year: i64, bc: bool) -> Result<i64, TextError> {
    if year == 0 {
        return Err(TextError::Field(
            "year 0 does not exist (1 BC is followed by 1 AD)".into(),
        ));
    }
    Ok(if bc { 1 - year } else { year })
}

/// Consumes a trailing ` BC` or ` AD`; returns whether it was BC.
fn era_suffix(cursor: &mut Cursor<'_>) -> bool {
    let rest = cursor.rest();
    if rest.len() == 3 && rest[0] == b' ' {
        if rest[1..].eq_ignore_ascii_case(b"BC") {
            cursor.pos += 3;
            return true;
        }
        if rest[1..].eq_ignore_ascii_case(b"AD") {
            cursor.pos += 3;
        }
    }
    false
}

/// Checks that nothing follows a value.
fn finish(cursor: &Cursor<'_>) -> Result<(), TextError> {
    if cursor.at_end() {
        Ok(())
    } else {
        Err(cursor.error("the end of the value"))
    }
}

/// Fails early with a DateStyle hint when the text starts like Postgres style (`Tue Mar 05`).
fn reject_named_styles(raw: &[u8]) -> Result<(), TextError> {
    if raw.first().is_some_and(u8::is_ascii_alphabetic) {
        return Err(TextError::DateStyle("Postgres"));
    }
    Ok(())
}

/// Parses `date_out` text: `2024-03-05`, `0044-03-15 BC`, `infinity`. Returns days since 2000.
pub(crate) fn parse_date(raw: &[u8]) -> Result<Special<i64>, TextError> {
    if let Some(special) = special_value(raw) {
        return Ok(special);
    }
    reject_named_styles(raw)?;
    let mut cursor = Cursor::new(raw);
    let (year, month, day) = date_fields(&mut cursor)?;
    let bc = era_suffix(&mut cursor);
    finish(&cursor)?;
    let year = astronomical_year(year, bc)?;
    check_date(year, month, day).map_err(TextError::Field)?;
    Ok(Special::Finite(pg_days_from_civil(year, month, day)))
}

/// Reads `HH:MM[:SS[.ffffff]]`; returns microseconds since midnight (up to 24:00:00).
fn time_fields(cursor: &mut Cursor<'_>) -> Result<i64, TextError> {
    let (hour, _) = cursor.digits(1, 2, "an hour")?;
    cursor.expect(b':', "':' after the hour")?;
    let (minute, _) = cursor.digits(2, 2, "two digits of minute")?;
    let (mut second, mut micros) = (0, 0);
    if cursor.eat(b':') {
        second = cursor.digits(2, 2, "two digits of second")?.0;
        micros = cursor.fraction_micros()?;
    }
    // PostgreSQL accepts second 60 (a leap second rolls into the next minute).
    if minute > 59 || second > 60 {
        return Err(TextError::Field(format!(
            "time {hour:02}:{minute:02}:{second:02} is not valid"
        )));
    }
    let total =
        hour * USECS_PER_HOUR + minute * USECS_PER_MINUTE + second * USECS_PER_SECOND + micros;
    if total > USECS_PER_DAY {
        return Err(TextError::Field(format!(
            "time {hour:02}:{minute:02}:{second:02} is after 24:00:00"
        )));
    }
    Ok(total)
}

/// Parses `time_out` text: `13:45:10.123456`, `24:00:00`.
pub(crate) fn parse_time(raw: &[u8]) -> Result<i64, TextError> {
    let mut cursor = Cursor::new(raw);
    let micros = time_fields(&mut cursor)?;
    finish(&cursor)?;
    Ok(micros)
}

/// Reads a UTC offset (`+01`, `+05:30`, `-03:30:15`, `+0530`, `Z`) if present; returns it in
/// seconds east of UTC.
fn utc_offset(cursor: &mut Cursor<'_>) -> Result<Option<i64>, TextError> {
    let sign = match cursor.peek() {
        Some(b'+') => 1,
        Some(b'-') => -1,
        Some(b'Z' | b'z') => {
            cursor.pos += 1;
            return Ok(Some(0));
        }
        _ => return Ok(None),
    };
    cursor.pos += 1;
    let (hours, hour_digits) = cursor.digits(1, 2, "the hours of a UTC offset")?;
    let mut minutes = 0;
    let mut seconds = 0;
    if cursor.eat(b':') {
        minutes = cursor.digits(2, 2, "two digits of offset minutes")?.0;
        if cursor.eat(b':') {
            seconds = cursor.digits(2, 2, "two digits of offset seconds")?.0;
        }
    } else if hour_digits == 2 && cursor.peek().is_some_and(|b| b.is_ascii_digit()) {
        minutes = cursor.digits(2, 2, "two digits of offset minutes")?.0;
    }
    // timestamptz_in's limit on a displacement is 15:59:59.
    if hours > 15 || minutes > 59 || seconds > 59 {
        return Err(TextError::Field(format!(
            "UTC offset {hours:02}:{minutes:02}:{seconds:02} is out of range (at most 15:59:59)"
        )));
    }
    Ok(Some(sign * (hours * 3600 + minutes * 60 + seconds)))
}

/// Parses `timestamp_out`/`timestamptz_out` text (`2024-03-05 13:45:10.5`,
/// `1999-01-08 04:05:06+05:53:28 BC`). With `with_offset`, a UTC offset may follow the time
/// and is applied (none means UTC); without, an offset is an error. Returns microseconds
/// since 2000-01-01 00:00:00 UTC, unchecked against PostgreSQL's range.
pub(crate) fn parse_timestamp(raw: &[u8], with_offset: bool) -> Result<Special<i128>, TextError> {
    if let Some(special) = special_value(raw) {
        return Ok(special);
    }
    reject_named_styles(raw)?;
    let mut cursor = Cursor::new(raw);
    let (year, month, day) = date_fields(&mut cursor)?;
    let mut micros_of_day = 0;
    let mut offset_seconds = 0;
    if cursor.eat(b' ') || cursor.eat(b'T') || cursor.eat(b't') {
        micros_of_day = time_fields(&mut cursor)?;
        let offset_at = cursor.pos;
        if let Some(offset) = utc_offset(&mut cursor)? {
            if !with_offset {
                return Err(TextError::Syntax {
                    offset: offset_at,
                    expected: "no UTC offset (timestamp without time zone)",
                });
            }
            offset_seconds = offset;
        }
    }
    let bc = era_suffix(&mut cursor);
    finish(&cursor)?;
    let year = astronomical_year(year, bc)?;
    check_date(year, month, day).map_err(TextError::Field)?;
    let days = pg_days_from_civil(year, month, day);
    let local = i128::from(days) * i128::from(USECS_PER_DAY) + i128::from(micros_of_day);
    Ok(Special::Finite(
        local - i128::from(offset_seconds) * i128::from(USECS_PER_SECOND),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_eras() {
        assert_eq!(parse_date(b"2000-01-01"), Ok(Special::Finite(0)));
        assert_eq!(parse_date(b"2024-1-5"), Ok(Special::Finite(8770)));
        assert_eq!(parse_date(b"0001-12-31 BC"), Ok(Special::Finite(-730_120)));
        assert_eq!(parse_date(b"-infinity"), Ok(Special::NegInfinity));
        assert!(matches!(
            parse_date(b"0000-01-01"),
            Err(TextError::Field(_))
        ));
        assert!(matches!(
            parse_date(b"2023-02-29"),
            Err(TextError::Field(_))
        ));
        assert_eq!(
            parse_date(b"2024-01-01x"),
            Err(TextError::Syntax {
                offset: 10,
                expected: "the end of the value"
            })
        );
    }

    #[test]
    fn other_datestyles_are_named() {
        assert_eq!(parse_date(b"21/11/2026"), Err(TextError::DateStyle("SQL")));
        assert_eq!(
            parse_date(b"21.11.2026"),
            Err(TextError::DateStyle("German"))
        );
        assert_eq!(
            parse_date(b"21-11-2026"),
            Err(TextError::DateStyle("Postgres"))
        );
        assert_eq!(
            parse_timestamp(b"Sat 21 Nov 12:53:25.37602 2026 UTC", true),
            Err(TextError::DateStyle("Postgres"))
        );
        assert_eq!(
            parse_timestamp(b"21/11/2026 12:53:25.37602 UTC", true),
            Err(TextError::DateStyle("SQL"))
        );
    }

    #[test]
    fn times() {
        assert_eq!(parse_time(b"13:45:10.123456"), Ok(49_510_123_456));
        assert_eq!(parse_time(b"24:00:00"), Ok(USECS_PER_DAY));
        assert_eq!(parse_time(b"13:45"), Ok(49_500_000_000));
        assert_eq!(parse_time(b"00:00:00.0000005"), Ok(1));
        assert!(matches!(parse_time(b"24:00:01"), Err(TextError::Field(_))));
        assert!(matches!(parse_time(b"12:60:00"), Err(TextError::Field(_))));
        assert!(parse_time(b"12:00:").is_err());
        assert!(parse_time(b"12:00:00.").is_err());
    }

    #[test]
    fn offsets_are_applied() {
        let utc = parse_timestamp(b"2024-03-05 13:45:10.5", true);
        assert_eq!(parse_timestamp(b"2024-03-05 14:45:10.5+01", true), utc);
        assert_eq!(parse_timestamp(b"2024-03-05 19:15:10.5+05:30", true), utc);
        assert_eq!(
            parse_timestamp(b"2024-03-05 10:14:55.5-03:30:15", true),
            utc
        );
        assert_eq!(parse_timestamp(b"2024-03-05T19:15:10.5+0530", true), utc);
        assert_eq!(parse_timestamp(b"2024-03-05T13:45:10.5Z", true), utc);
        assert!(parse_timestamp(b"2024-03-05 13:45:10.5+01", false).is_err());
        assert!(matches!(
            parse_timestamp(b"2024-03-05 13:45:10+16", true),
            Err(TextError::Field(_))
        ));
    }
}
