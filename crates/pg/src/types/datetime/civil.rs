//! Calendar arithmetic: proleptic Gregorian dates ↔ day numbers, and [`CivilDateTime`].

use std::fmt;

/// Days from 1970-01-01 to PostgreSQL's epoch 2000-01-01.
pub(crate) const UNIX_TO_PG_DAYS: i64 = 10_957;
/// Microseconds in one day.
pub(crate) const USECS_PER_DAY: i64 = 86_400_000_000;
/// Microseconds in one hour, minute and second.
pub(crate) const USECS_PER_HOUR: i64 = 3_600_000_000;
pub(crate) const USECS_PER_MINUTE: i64 = 60_000_000;
pub(crate) const USECS_PER_SECOND: i64 = 1_000_000;

/// A calendar date and time of day, with the year in astronomical numbering: year 0 is 1 BC,
/// year -1 is 2 BC, and so on (PostgreSQL's text shows these as `0001 BC`, `0002 BC`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CivilDateTime {
    /// Astronomical year: 0 is 1 BC.
    pub year: i32,
    /// 1 to 12.
    pub month: u32,
    /// 1 to the length of the month.
    pub day: u32,
    /// 0 to 23.
    pub hour: u32,
    /// 0 to 59.
    pub minute: u32,
    /// 0 to 59.
    pub second: u32,
    /// 0 to 999 999.
    pub microsecond: u32,
}

impl CivilDateTime {
    /// Midnight at the start of the given date.
    pub const fn date(year: i32, month: u32, day: u32) -> CivilDateTime {
        CivilDateTime {
            year,
            month,
            day,
            hour: 0,
            minute: 0,
            second: 0,
            microsecond: 0,
        }
    }

    /// The same date at the given time of day.
    pub const fn at(self, hour: u32, minute: u32, second: u32, microsecond: u32) -> CivilDateTime {
        CivilDateTime {
            hour,
            minute,
            second,
            microsecond,
            ..self
        }
    }

    /// Checks each field against the calendar; `Err` names the first field out of range.
    pub(crate) fn validate(&self) -> Result<(), String> {
        check_date(i64::from(self.year), self.month, self.day)?;
        if self.hour > 23 || self.minute > 59 || self.second > 59 || self.microsecond > 999_999 {
            return Err(format!(
                "time of day {:02}:{:02}:{:02}.{:06} is not valid",
                self.hour, self.minute, self.second, self.microsecond
            ));
        }
        Ok(())
    }

    /// Microseconds since 2000-01-01 00:00:00, for fields already validated.
    pub(crate) fn pg_micros(&self) -> i128 {
        let days = pg_days_from_civil(i64::from(self.year), self.month, self.day);
        i128::from(days) * i128::from(USECS_PER_DAY)
            + i128::from(time_micros(
                self.hour,
                self.minute,
                self.second,
                self.microsecond,
            ))
    }

    /// The civil fields of `micros` since 2000-01-01 00:00:00 (any i64 is in range).
    pub(crate) fn from_pg_micros(micros: i64) -> CivilDateTime {
        let days = micros.div_euclid(USECS_PER_DAY);
        let (year, month, day) = civil_from_pg_days(days);
        let (hour, minute, second, microsecond) = split_time(micros.rem_euclid(USECS_PER_DAY));
        // |micros| / USECS_PER_DAY is below 2^27 days, so the year fits i32 easily.
        let year = i32::try_from(year).unwrap_or(if year < 0 { i32::MIN } else { i32::MAX });
        CivilDateTime {
            year,
            month,
            day,
            hour,
            minute,
            second,
            microsecond,
        }
    }
}

impl fmt::Display for CivilDateTime {
    /// ISO 8601 with an astronomical year: `2024-03-05T13:45:10.500000`, `-0043-03-15T...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.year < 0 {
            write!(f, "-{:04}", self.year.unsigned_abs())?;
        } else {
            write!(f, "{:04}", self.year)?;
        }
        write!(
            f,
            "-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}",
            self.month, self.day, self.hour, self.minute, self.second, self.microsecond
        )
    }
}

/// Whether `year` (astronomical) is a leap year in the proleptic Gregorian calendar.
pub(crate) fn is_leap_year(year: i64) -> bool {
    year.rem_euclid(4) == 0 && (year.rem_euclid(100) != 0 || year.rem_euclid(400) == 0)
}

/// The number of days in `month` of `year`.
pub(crate) fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// Checks that `month` and `day` exist in `year`.
pub(crate) fn check_date(year: i64, month: u32, day: u32) -> Result<(), String> {
    if !(1..=12).contains(&month) {
        return Err(format!("month {month} is not between 1 and 12"));
    }
    if day == 0 || day > days_in_month(year, month) {
        return Err(format!("day {day} does not exist in {year:04}-{month:02}"));
    }
    Ok(())
}

/// Days since 2000-01-01 of a valid proleptic Gregorian date (Howard Hinnant's algorithm).
pub(crate) fn pg_days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_from_march = i64::from((month + 9) % 12);
    let day_of_year = (153 * month_from_march + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468 - UNIX_TO_PG_DAYS
}

/// The (astronomical year, month, day) of `days` since 2000-01-01.
pub(crate) fn civil_from_pg_days(days: i64) -> (i64, u32, u32) {
    let z = days + UNIX_TO_PG_DAYS + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    // Both are small and non-negative by construction.
    let day = (day_of_year - (153 * month_from_march + 2) / 5 + 1) as u32;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Microseconds since midnight of a time of day.
pub(crate) fn time_micros(hour: u32, minute: u32, second: u32, microsecond: u32) -> i64 {
    i64::from(hour) * USECS_PER_HOUR
        + i64::from(minute) * USECS_PER_MINUTE
        + i64::from(second) * USECS_PER_SECOND
        + i64::from(microsecond)
}

/// (hour, minute, second, microsecond) of `micros` in 0..=USECS_PER_DAY.
pub(crate) fn split_time(micros: i64) -> (u32, u32, u32, u32) {
    let micros = micros.clamp(0, USECS_PER_DAY);
    // Each quotient is bounded by the clamp: hour ≤ 24, the rest below 60 or 10^6.
    (
        (micros / USECS_PER_HOUR) as u32,
        (micros / USECS_PER_MINUTE % 60) as u32,
        (micros / USECS_PER_SECOND % 60) as u32,
        (micros % USECS_PER_SECOND) as u32,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // Golden day numbers from PostgreSQL 15: `select date_send(d)` as a signed integer.
    #[test]
    fn golden_day_numbers() {
        for (year, month, day, days) in [
            (2000, 1, 1, 0),
            (2024, 2, 29, 0x2279),
            (1999, 12, 31, -1),
            (-43, 3, 15, 0xfff49d7bu32 as i32),
            (-4713, 11, 24, 0xffda97a7u32 as i32),
            (5_874_897, 12, 31, 0x7fda970c),
            (1, 1, 1, 0xfff4dbf9u32 as i32),
            (0, 12, 31, 0xfff4dbf8u32 as i32),
        ] {
            assert_eq!(
                pg_days_from_civil(year, month, day),
                i64::from(days),
                "{year}-{month}-{day}"
            );
            assert_eq!(civil_from_pg_days(i64::from(days)), (year, month, day));
        }
    }

    #[test]
    fn leap_years_and_month_lengths() {
        assert!(is_leap_year(2000) && is_leap_year(2024) && is_leap_year(0) && is_leap_year(-4));
        assert!(!is_leap_year(1900) && !is_leap_year(2023) && !is_leap_year(-1));
        assert!(check_date(2024, 2, 29).is_ok());
        assert!(check_date(2023, 2, 29).is_err());
        assert!(check_date(2023, 13, 1).is_err());
        assert!(check_date(2023, 4, 31).is_err());
        assert!(check_date(2023, 1, 0).is_err());
    }

    #[test]
    fn civil_display_is_iso_with_astronomical_year() {
        let civil = CivilDateTime::date(-43, 3, 15).at(1, 2, 3, 4);
        assert_eq!(civil.to_string(), "-0043-03-15T01:02:03.000004");
        assert!(CivilDateTime::date(2023, 2, 29).validate().is_err());
        assert!(
            CivilDateTime::date(2023, 2, 28)
                .at(24, 0, 0, 0)
                .validate()
                .is_err()
        );
    }

    proptest! {
        #[test]
        fn day_numbers_round_trip(days in -100_000_000i64..100_000_000) {
            let (year, month, day) = civil_from_pg_days(days);
            prop_assert!(check_date(year, month, day).is_ok());
            prop_assert_eq!(pg_days_from_civil(year, month, day), days);
        }

        #[test]
        fn micros_round_trip(micros: i64) {
            let civil = CivilDateTime::from_pg_micros(micros);
            prop_assert!(civil.validate().is_ok());
            prop_assert_eq!(civil.pg_micros(), i128::from(micros));
        }
    }
}
