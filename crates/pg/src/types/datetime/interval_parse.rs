//! Parsing interval text in every IntervalStyle PostgreSQL writes (postgres,
//! postgres_verbose, sql_standard, iso_8601), plus ISO 8601 designator input.

use super::Interval;
use super::civil::{USECS_PER_DAY, USECS_PER_HOUR, USECS_PER_MINUTE, USECS_PER_SECOND};
use super::parse::TextError;

/// The interval units, with the size of one in months, days or microseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    Months(i64),
    Days(i64),
    Micros(i64),
}

/// Unit names as `DecodeUnits` knows them, matched without regard to case.
const UNITS: &[(&[u8], Unit)] = &[
    // What the postgres and postgres_verbose styles write comes first.
    (b"years", Unit::Months(12)),
    (b"year", Unit::Months(12)),
    (b"mons", Unit::Months(1)),
    (b"mon", Unit::Months(1)),
    (b"days", Unit::Days(1)),
    (b"day", Unit::Days(1)),
    (b"hours", Unit::Micros(USECS_PER_HOUR)),
    (b"mins", Unit::Micros(USECS_PER_MINUTE)),
    (b"secs", Unit::Micros(USECS_PER_SECOND)),
    (b"hour", Unit::Micros(USECS_PER_HOUR)),
    (b"min", Unit::Micros(USECS_PER_MINUTE)),
    (b"sec", Unit::Micros(USECS_PER_SECOND)),
    (b"millennium", Unit::Months(12_000)),
    (b"millennia", Unit::Months(12_000)),
    (b"millenniums", Unit::Months(12_000)),
    (b"mil", Unit::Months(12_000)),
    (b"mils", Unit::Months(12_000)),
    (b"century", Unit::Months(1_200)),
    (b"centuries", Unit::Months(1_200)),
    (b"cent", Unit::Months(1_200)),
    (b"c", Unit::Months(1_200)),
    (b"decade", Unit::Months(120)),
    (b"decades", Unit::Months(120)),
    (b"dec", Unit::Months(120)),
    (b"decs", Unit::Months(120)),
    (b"yr", Unit::Months(12)),
    (b"yrs", Unit::Months(12)),
    (b"y", Unit::Months(12)),
    (b"month", Unit::Months(1)),
    (b"months", Unit::Months(1)),
    (b"week", Unit::Days(7)),
    (b"weeks", Unit::Days(7)),
    (b"w", Unit::Days(7)),
    (b"d", Unit::Days(1)),
    (b"hr", Unit::Micros(USECS_PER_HOUR)),
    (b"hrs", Unit::Micros(USECS_PER_HOUR)),
    (b"h", Unit::Micros(USECS_PER_HOUR)),
    (b"minute", Unit::Micros(USECS_PER_MINUTE)),
    (b"minutes", Unit::Micros(USECS_PER_MINUTE)),
    (b"m", Unit::Micros(USECS_PER_MINUTE)),
    (b"second", Unit::Micros(USECS_PER_SECOND)),
    (b"seconds", Unit::Micros(USECS_PER_SECOND)),
    (b"s", Unit::Micros(USECS_PER_SECOND)),
    (b"millisecond", Unit::Micros(1_000)),
    (b"milliseconds", Unit::Micros(1_000)),
    (b"ms", Unit::Micros(1_000)),
    (b"msec", Unit::Micros(1_000)),
    (b"msecs", Unit::Micros(1_000)),
    (b"mseconds", Unit::Micros(1_000)),
    (b"microsecond", Unit::Micros(1)),
    (b"microseconds", Unit::Micros(1)),
    (b"us", Unit::Micros(1)),
    (b"usec", Unit::Micros(1)),
    (b"usecs", Unit::Micros(1)),
    (b"useconds", Unit::Micros(1)),
];

fn unit_named(word: &[u8]) -> Option<Unit> {
    UNITS
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(word))
        .map(|&(_, unit)| unit)
}

/// A signed decimal number as written: integer digits and fraction digits kept exact.
#[derive(Clone, Copy, Debug)]
struct Number<'a> {
    negative: bool,
    explicit_sign: bool,
    integer: i128,
    fraction: &'a [u8],
}

/// Reads `[+-]digits[.digits]` at the start of `raw`; returns it and the bytes used.
fn number(raw: &[u8]) -> Option<(Number<'_>, usize)> {
    let (negative, explicit_sign, start) = match raw.first() {
        Some(b'-') => (true, true, 1),
        Some(b'+') => (false, true, 1),
        _ => (false, false, 0),
    };
    let digits = raw[start..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    // Twenty-five digits overflow every field; refuse more rather than overflow i128.
    if digits > 25 {
        return None;
    }
    let integer = raw[start..start + digits]
        .iter()
        .fold(0i128, |acc, &d| acc * 10 + i128::from(d - b'0'));
    let mut used = start + digits;
    let mut fraction: &[u8] = &[];
    if raw.get(used) == Some(&b'.') {
        let count = raw[used + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        fraction = &raw[used + 1..used + 1 + count];
        used += 1 + count;
    }
    if digits == 0 && fraction.is_empty() {
        return None;
    }
    Some((
        Number {
            negative,
            explicit_sign,
            integer,
            fraction,
        },
        used,
    ))
}

/// `fraction` digits × `scale`, as (whole part, remainder numerator, denominator).
fn scale_fraction(fraction: &[u8], scale: i128) -> (i128, i128, i128) {
    // 18 digits keep every product inside i128; further digits are below a microsecond.
    let kept = &fraction[..fraction.len().min(18)];
    let numerator = kept
        .iter()
        .fold(0i128, |acc, &d| acc * 10 + i128::from(d - b'0'));
    let denominator = 10i128.pow(kept.len() as u32);
    let scaled = numerator * scale;
    (scaled / denominator, scaled % denominator, denominator)
}

/// `numerator / denominator × unit`, rounded half away from zero.
fn round_ratio(numerator: i128, denominator: i128, unit: i128) -> i128 {
    (2 * numerator * unit + denominator) / (2 * denominator)
}

/// The running total of an interval's three fields, wide enough not to overflow.
#[derive(Clone, Copy, Debug, Default)]
struct Total {
    months: i128,
    days: i128,
    micros: i128,
}

impl Total {
    /// Adds `number` of `unit`, spreading fractions down as PostgreSQL does: fractional
    /// months become days of 30, fractional days microseconds of a 24-hour day.
    fn add(&mut self, number: Number<'_>, unit: Unit) {
        let mut part = Total::default();
        if number.fraction.is_empty() {
            // Whole numbers need none of the fraction arithmetic below.
            match unit {
                Unit::Months(months) => part.months = number.integer * i128::from(months),
                Unit::Days(days) => part.days = number.integer * i128::from(days),
                Unit::Micros(micros) => part.micros = number.integer * i128::from(micros),
            }
            let part = if number.negative {
                part.negated()
            } else {
                part
            };
            *self = self.plus(part);
            return;
        }
        if let Unit::Micros(micros) = unit {
            // Up to six decimals of a unit of whole seconds are whole microseconds.
            let power = 10i64.pow(number.fraction.len().min(7) as u32);
            if number.fraction.len() <= 6 && micros % power == 0 {
                let fraction = number
                    .fraction
                    .iter()
                    .fold(0i64, |acc, &d| acc * 10 + i64::from(d - b'0'));
                part.micros =
                    number.integer * i128::from(micros) + i128::from(fraction * (micros / power));
                let part = if number.negative {
                    part.negated()
                } else {
                    part
                };
                *self = self.plus(part);
                return;
            }
        }
        match unit {
            Unit::Months(months) => {
                part.months = number.integer * i128::from(months);
                let (whole, rest, denominator) =
                    scale_fraction(number.fraction, i128::from(months));
                part.months += whole;
                if months >= 12 {
                    // Fractional years round to whole months (AdjustFractYears).
                    part.months += round_ratio(rest, denominator, 1);
                } else {
                    // Fractional months are days of 30, truncated, and the rest microseconds.
                    part.days += rest * 30 / denominator;
                    let rest_days = rest * 30 % denominator;
                    part.micros += round_ratio(rest_days, denominator, i128::from(USECS_PER_DAY));
                }
            }
            Unit::Days(days) => {
                part.days = number.integer * i128::from(days);
                let (whole, rest, denominator) = scale_fraction(number.fraction, i128::from(days));
                part.days += whole;
                part.micros += round_ratio(rest, denominator, i128::from(USECS_PER_DAY));
            }
            Unit::Micros(micros) => {
                part.micros = number.integer * i128::from(micros);
                let (whole, rest, denominator) =
                    scale_fraction(number.fraction, i128::from(micros));
                part.micros += whole + round_ratio(rest, denominator, 1);
            }
        }
        let part = if number.negative {
            part.negated()
        } else {
            part
        };
        *self = self.plus(part);
    }

    fn negated(self) -> Total {
        Total {
            months: -self.months,
            days: -self.days,
            micros: -self.micros,
        }
    }

    /// The sum, each field clamped far outside any valid interval so that no amount of
    /// input can overflow the accumulator.
    fn plus(self, other: Total) -> Total {
        const LIMIT: i128 = 1 << 100;
        let add = |a: i128, b: i128| a.saturating_add(b).clamp(-LIMIT, LIMIT);
        Total {
            months: add(self.months, other.months),
            days: add(self.days, other.days),
            micros: add(self.micros, other.micros),
        }
    }

    fn into_interval(self) -> Result<Interval, TextError> {
        let range = |field: &str| TextError::Field(format!("interval {field} out of range"));
        Ok(Interval {
            months: i32::try_from(self.months).map_err(|_| range("months"))?,
            days: i32::try_from(self.days).map_err(|_| range("days"))?,
            microseconds: i64::try_from(self.micros).map_err(|_| range("time"))?,
        })
    }
}

/// Parses interval text in any IntervalStyle's output, or ISO 8601 designators.
pub(crate) fn parse_interval(raw: &[u8]) -> Result<Interval, TextError> {
    let text = raw.trim_ascii();
    let lead = raw.len() - raw.trim_ascii_start().len();
    if text.eq_ignore_ascii_case(b"infinity") || text.eq_ignore_ascii_case(b"+infinity") {
        return Ok(Interval::INFINITY);
    }
    if text.eq_ignore_ascii_case(b"-infinity") {
        return Ok(Interval::NEG_INFINITY);
    }
    match text.first() {
        None => Err(TextError::Syntax {
            offset: 0,
            expected: "an interval",
        }),
        Some(b'P' | b'p') => parse_iso8601(text, lead),
        Some(_) => parse_fields(text, lead),
    }
}

/// One whitespace-separated piece of postgres-style text and its offset in the input.
struct Word<'a> {
    text: &'a [u8],
    offset: usize,
}

/// The words of `text`, without allocating.
struct Words<'a> {
    text: &'a [u8],
    pos: usize,
    lead: usize,
}

impl<'a> Iterator for Words<'a> {
    type Item = Word<'a>;

    fn next(&mut self) -> Option<Word<'a>> {
        let rest = self.text.get(self.pos..)?;
        let start = self.pos + rest.iter().position(|b| !b.is_ascii_whitespace())?;
        let len = self.text[start..]
            .iter()
            .position(u8::is_ascii_whitespace)
            .unwrap_or(self.text.len() - start);
        self.pos = start + len;
        Some(Word {
            text: &self.text[start..start + len],
            offset: self.lead + start,
        })
    }
}

/// A field of postgres, postgres_verbose or sql_standard text, with whether it was signed.
struct Field {
    total: Total,
    explicit_sign: bool,
    negative: bool,
    /// Year-month (`1-2`) or a day count before a time: only sql_standard writes these.
    sql_standard: bool,
}

fn parse_fields(text: &[u8], lead: usize) -> Result<Interval, TextError> {
    let mut words = Words { text, pos: 0, lead }.peekable();
    if words.peek().is_some_and(|w| w.text == b"@") {
        words.next();
    }
    // The first field apart from the sum of the rest: sql_standard's leading '-' may apply
    // to all of the rest.
    let mut first: Option<Field> = None;
    let mut rest = Total::default();
    let mut rest_signed = false;
    let mut sql_standard = false;
    let mut ago = false;
    while let Some(word) = words.next() {
        let syntax = |expected| TextError::Syntax {
            offset: word.offset,
            expected,
        };
        if word.text.eq_ignore_ascii_case(b"ago") && words.peek().is_none() {
            ago = true;
            continue;
        }
        let field = if word.text.contains(&b':') {
            time_field(word.text).ok_or(syntax("a time such as 04:05:06.789"))?
        } else if let Some(field) = year_month_field(word.text) {
            field
        } else {
            let (number, used) = number(word.text).ok_or(syntax("a number"))?;
            let glued = &word.text[used..];
            let unit_word = if glued.is_empty() {
                words.peek().map(|w| w.text)
            } else {
                Some(glued)
            };
            let mut total = Total::default();
            let sql_standard = match unit_word.and_then(unit_named) {
                Some(unit) => {
                    if glued.is_empty() {
                        words.next();
                    }
                    total.add(number, unit);
                    false
                }
                None if !glued.is_empty() => {
                    return Err(syntax("a number and a unit such as days"));
                }
                // A bare number before a time is sql_standard's day count; else seconds.
                None if words.peek().is_some_and(|w| w.text.contains(&b':')) => {
                    total.add(number, Unit::Days(1));
                    true
                }
                None => {
                    total.add(number, Unit::Micros(USECS_PER_SECOND));
                    false
                }
            };
            Field {
                total,
                explicit_sign: number.explicit_sign,
                negative: number.negative,
                sql_standard,
            }
        };
        sql_standard |= field.sql_standard;
        if first.is_none() {
            first = Some(field);
        } else {
            rest = rest.plus(field.total);
            rest_signed |= field.explicit_sign;
        }
    }
    let first = first.ok_or(TextError::Syntax {
        offset: lead,
        expected: "interval fields",
    })?;
    // sql_standard writes one leading '-' for "all fields negative" when no other field
    // carries a sign of its own.
    let all_negative = sql_standard && first.negative && !rest_signed;
    let mut total = first
        .total
        .plus(if all_negative { rest.negated() } else { rest });
    if ago {
        total = total.negated();
    }
    total.into_interval()
}

/// `[+-]H:MM[:SS[.ffffff]]`, the hours unbounded.
fn time_field(word: &[u8]) -> Option<Field> {
    let (negative, explicit_sign, body) = match word {
        [b'-', rest @ ..] => (true, true, rest),
        [b'+', rest @ ..] => (false, true, rest),
        _ => (false, false, word),
    };
    let mut parts = body.splitn(3, |&b| b == b':');
    let hours = parts.next()?;
    let minutes = parts.next()?;
    let seconds = parts.next().unwrap_or(b"0");
    let all_digits = |digits: &[u8], max: usize| {
        !digits.is_empty() && digits.len() <= max && digits.iter().all(u8::is_ascii_digit)
    };
    if !all_digits(hours, 25) || !all_digits(minutes, 2) {
        return None;
    }
    let (second, used) = number(seconds)?;
    if used != seconds.len() || second.explicit_sign || second.integer > 60 {
        return None;
    }
    let positive = |digits: &[u8]| Number {
        negative: false,
        explicit_sign: false,
        integer: digits
            .iter()
            .fold(0i128, |a, &d| a * 10 + i128::from(d - b'0')),
        fraction: &[],
    };
    if positive(minutes).integer > 59 {
        return None;
    }
    let mut total = Total::default();
    total.add(positive(hours), Unit::Micros(USECS_PER_HOUR));
    total.add(positive(minutes), Unit::Micros(USECS_PER_MINUTE));
    total.add(second, Unit::Micros(USECS_PER_SECOND));
    let total = if negative { total.negated() } else { total };
    Some(Field {
        total,
        explicit_sign,
        negative,
        sql_standard: false,
    })
}

/// sql_standard's `[+-]Y-M`.
fn year_month_field(word: &[u8]) -> Option<Field> {
    let (negative, explicit_sign, body) = match word {
        [b'-', rest @ ..] => (true, true, rest),
        [b'+', rest @ ..] => (false, true, rest),
        _ => (false, false, word),
    };
    let dash = body.iter().position(|&b| b == b'-')?;
    let (years, months) = (&body[..dash], &body[dash + 1..]);
    let digits_ok = |d: &[u8]| !d.is_empty() && d.len() <= 12 && d.iter().all(u8::is_ascii_digit);
    if !digits_ok(years) || !digits_ok(months) {
        return None;
    }
    let value = |d: &[u8]| d.iter().fold(0i128, |a, &x| a * 10 + i128::from(x - b'0'));
    let mut total = Total {
        months: value(years) * 12 + value(months),
        ..Total::default()
    };
    if negative {
        total = total.negated();
    }
    Some(Field {
        total,
        explicit_sign,
        negative,
        sql_standard: true,
    })
}

/// ISO 8601 designators: `P1Y2M3W4DT5H6M7.5S`, each number signed and possibly fractional.
fn parse_iso8601(text: &[u8], lead: usize) -> Result<Interval, TextError> {
    let mut total = Total::default();
    let mut position = 1;
    let mut in_time = false;
    let mut any = false;
    while position < text.len() {
        let syntax = |at: usize, expected| TextError::Syntax {
            offset: lead + at,
            expected,
        };
        if !in_time && matches!(text[position], b'T' | b't') {
            in_time = true;
            position += 1;
            continue;
        }
        let (number, used) = number(&text[position..]).ok_or(syntax(position, "a number"))?;
        position += used;
        let designator = text.get(position).map(u8::to_ascii_uppercase);
        let unit = match (in_time, designator) {
            (false, Some(b'Y')) => Unit::Months(12),
            (false, Some(b'M')) => Unit::Months(1),
            (false, Some(b'W')) => Unit::Days(7),
            (false, Some(b'D')) => Unit::Days(1),
            (true, Some(b'H')) => Unit::Micros(USECS_PER_HOUR),
            (true, Some(b'M')) => Unit::Micros(USECS_PER_MINUTE),
            (true, Some(b'S')) => Unit::Micros(USECS_PER_SECOND),
            (false, _) => return Err(syntax(position, "a designator Y, M, W or D")),
            (true, _) => return Err(syntax(position, "a designator H, M or S")),
        };
        total.add(number, unit);
        position += 1;
        any = true;
    }
    if !any {
        return Err(TextError::Syntax {
            offset: lead + position,
            expected: "a number and a designator",
        });
    }
    total.into_interval()
}
