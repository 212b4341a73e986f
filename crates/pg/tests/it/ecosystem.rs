//! The ecosystem's types (chrono, time, jiff, uuid; features `with-*`) through a real server:
//! parameters as text of unknown type and in binary, results in both formats, the server's own
//! literals, BC dates, year 9999, microseconds, negative offsets, and infinity refused.
#![allow(clippy::unwrap_used)]

use crate::common;

use sluice_pg::{ErrorKind, Format, FromSql, ToSql};
use std::fmt::Debug;

use common::typed_sessions as sessions;

/// Each `(value, server text)` goes to the server as a parameter and comes back equal in both
/// formats, shown as `server text`; the server's literal of that text decodes to the value.
async fn round_trip<T>(sql_type: &str, cases: &[(T, &str)])
where
    T: ToSql + for<'a> FromSql<'a> + PartialEq + Debug,
{
    for conn in &mut sessions().await {
        for (value, shown) in cases {
            for format in [Format::Text, Format::Binary] {
                let sql = format!("SELECT $1::{sql_type}, $1::{sql_type}::text");
                let row = conn
                    .query_one_with(&sql, &[value], format)
                    .await
                    .unwrap_or_else(|e| panic!("{sql_type} {value:?} {format:?}: {e}"));
                let back: T = row
                    .get(0)
                    .unwrap_or_else(|e| panic!("{sql_type} {value:?} {format:?}: {e}"));
                assert_eq!(&back, value, "{sql_type} in {format:?}");
                assert_eq!(row.get::<&str>(1).unwrap(), *shown, "{sql_type} as text");
                let literal = format!("SELECT '{shown}'::{sql_type}");
                let row = conn.query_one_with(&literal, &[], format).await.unwrap();
                let decoded: T = row
                    .get(0)
                    .unwrap_or_else(|e| panic!("{literal} in {format:?}: {e}"));
                assert_eq!(&decoded, value, "{literal} in {format:?}");
            }
        }
    }
}

/// Each server literal is refused for `T` in both formats with an out-of-range conversion
/// error, not a panic or a wrong value.
#[cfg_attr(
    not(any(
        feature = "with-chrono-0_4",
        feature = "with-time-0_3",
        feature = "with-jiff-0_2"
    )),
    allow(dead_code)
)]
async fn refused<T: for<'a> FromSql<'a> + Debug>(literals: &[&str]) {
    let conn = &mut sessions().await[1];
    for literal in literals {
        for format in [Format::Text, Format::Binary] {
            let row = conn
                .query_one_with(&format!("SELECT {literal}"), &[], format)
                .await
                .unwrap();
            let err = row.get::<T>(0).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Conversion, "{literal}: {err}");
            assert!(err.to_string().contains("out of range"), "{literal}: {err}");
        }
    }
}

#[cfg(feature = "with-chrono-0_4")]
mod chrono_types {
    use super::*;
    use chrono::{
        DateTime, FixedOffset, Local, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Utc,
    };

    fn date(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    fn at(date: NaiveDate, h: u32, m: u32, s: u32, micro: u32) -> NaiveDateTime {
        date.and_hms_micro_opt(h, m, s, micro).unwrap()
    }

    #[tokio::test]
    async fn dates_times_and_timestamps() {
        round_trip(
            "date",
            &[
                (date(2000, 1, 1), "2000-01-01"),
                (date(-43, 3, 15), "0044-03-15 BC"),
                (date(0, 12, 31), "0001-12-31 BC"),
                (date(9999, 12, 31), "9999-12-31"),
            ],
        )
        .await;
        round_trip(
            "time",
            &[
                (NaiveTime::MIN, "00:00:00"),
                (
                    NaiveTime::from_hms_micro_opt(23, 59, 59, 999_999).unwrap(),
                    "23:59:59.999999",
                ),
                (
                    NaiveTime::from_hms_micro_opt(13, 45, 10, 500_000).unwrap(),
                    "13:45:10.5",
                ),
            ],
        )
        .await;
        round_trip(
            "timestamp",
            &[
                (
                    at(date(2024, 2, 29), 13, 45, 10, 500_000),
                    "2024-02-29 13:45:10.5",
                ),
                (
                    at(date(-43, 3, 15), 1, 2, 3, 4),
                    "0044-03-15 01:02:03.000004 BC",
                ),
                (
                    at(date(9999, 12, 31), 23, 59, 59, 999_999),
                    "9999-12-31 23:59:59.999999",
                ),
                (
                    at(date(1969, 12, 31), 23, 59, 59, 999_999),
                    "1969-12-31 23:59:59.999999",
                ),
            ],
        )
        .await;
        round_trip(
            "date[]",
            &[(
                vec![date(2000, 1, 1), date(-43, 3, 15)],
                "{2000-01-01,\"0044-03-15 BC\"}",
            )],
        )
        .await;
    }

    #[tokio::test]
    async fn instants_in_every_zone_type() {
        let utc = Utc.with_ymd_and_hms(2024, 3, 5, 13, 45, 10).unwrap()
            + chrono::Duration::microseconds(1);
        round_trip("timestamptz", &[(utc, "2024-03-05 13:45:10.000001+00")]).await;
        let ancient = Utc.from_utc_datetime(&at(date(-43, 3, 15), 12, 0, 0, 0));
        round_trip("timestamptz", &[(ancient, "0044-03-15 12:00:00+00 BC")]).await;
        // A negative offset: the same instant, shown in UTC.
        let west = FixedOffset::west_opt(3 * 3600 + 1800).unwrap();
        let fixed = west.with_ymd_and_hms(2024, 3, 5, 10, 15, 10).unwrap();
        round_trip("timestamptz", &[(fixed, "2024-03-05 13:45:10+00")]).await;
        let local = utc.with_timezone(&Local);
        round_trip("timestamptz", &[(local, "2024-03-05 13:45:10.000001+00")]).await;
    }

    /// A session whose TimeZone is 3:30 west of UTC sends text with `-03:30`; the instant is
    /// read correctly.
    #[tokio::test]
    async fn text_with_a_negative_offset() {
        let mut conn = common::connect().await;
        conn.batch_execute("SET TIME ZONE INTERVAL '-03:30' HOUR TO MINUTE")
            .await
            .unwrap();
        let row = conn
            .query_one_with(
                "SELECT '2024-03-05 13:45:10.5+00'::timestamptz, \
                        '2024-03-05 13:45:10.5+00'::timestamptz::text",
                &[],
                Format::Text,
            )
            .await
            .unwrap();
        assert_eq!(row.get::<&str>(1).unwrap(), "2024-03-05 10:15:10.5-03:30");
        let expected = Utc.with_ymd_and_hms(2024, 3, 5, 13, 45, 10).unwrap()
            + chrono::Duration::milliseconds(500);
        assert_eq!(row.get::<DateTime<Utc>>(0).unwrap(), expected);
        assert_eq!(row.get::<DateTime<FixedOffset>>(0).unwrap(), expected);
    }

    #[tokio::test]
    async fn infinity_and_far_years_are_refused() {
        refused::<NaiveDate>(&[
            "'infinity'::date",
            "'-infinity'::date",
            "'5874897-12-31'::date",
        ])
        .await;
        refused::<NaiveDateTime>(&["'infinity'::timestamp", "'294276-12-31'::timestamp"]).await;
        refused::<DateTime<Utc>>(&["'-infinity'::timestamptz"]).await;
        refused::<NaiveTime>(&["'24:00:00'::time"]).await;
    }
}

#[cfg(feature = "with-time-0_3")]
mod time_types {
    use super::*;
    use time::macros::{date, datetime, time};
    use time::{OffsetDateTime, PrimitiveDateTime, UtcOffset};

    #[tokio::test]
    async fn dates_times_and_timestamps() {
        round_trip(
            "date",
            &[
                (date!(2000 - 01 - 01), "2000-01-01"),
                (date!(-0043 - 03 - 15), "0044-03-15 BC"),
                (date!(9999 - 12 - 31), "9999-12-31"),
            ],
        )
        .await;
        round_trip(
            "time",
            &[
                (time!(0:00), "00:00:00"),
                (time!(23:59:59.999_999), "23:59:59.999999"),
            ],
        )
        .await;
        round_trip::<PrimitiveDateTime>(
            "timestamp",
            &[
                (datetime!(2024-02-29 13:45:10.5), "2024-02-29 13:45:10.5"),
                (
                    datetime!(-0043-03-15 01:02:03.000_004),
                    "0044-03-15 01:02:03.000004 BC",
                ),
                (
                    datetime!(9999-12-31 23:59:59.999_999),
                    "9999-12-31 23:59:59.999999",
                ),
            ],
        )
        .await;
        let west = UtcOffset::from_hms(-3, -30, 0).unwrap();
        round_trip::<OffsetDateTime>(
            "timestamptz",
            &[
                (
                    datetime!(2024-03-05 13:45:10.000_001 UTC),
                    "2024-03-05 13:45:10.000001+00",
                ),
                (
                    datetime!(2024-03-05 10:15:10).assume_offset(west),
                    "2024-03-05 13:45:10+00",
                ),
            ],
        )
        .await;
    }

    #[tokio::test]
    async fn infinity_and_far_years_are_refused() {
        refused::<time::Date>(&["'infinity'::date", "'10000-01-01'::date"]).await;
        refused::<PrimitiveDateTime>(&["'-infinity'::timestamp"]).await;
        refused::<OffsetDateTime>(&["'infinity'::timestamptz"]).await;
        refused::<time::Time>(&["'24:00:00'::time"]).await;
    }
}

#[cfg(feature = "with-jiff-0_2")]
mod jiff_types {
    use super::*;
    use jiff::civil::{date, time};
    use jiff::{Span, Timestamp};

    #[tokio::test]
    async fn dates_times_and_timestamps() {
        round_trip(
            "date",
            &[
                (date(2000, 1, 1), "2000-01-01"),
                (date(-43, 3, 15), "0044-03-15 BC"),
                (date(9999, 12, 31), "9999-12-31"),
            ],
        )
        .await;
        round_trip(
            "time",
            &[
                (time(0, 0, 0, 0), "00:00:00"),
                (time(23, 59, 59, 999_999_000), "23:59:59.999999"),
            ],
        )
        .await;
        round_trip(
            "timestamp",
            &[
                (
                    date(2024, 2, 29).at(13, 45, 10, 500_000_000),
                    "2024-02-29 13:45:10.5",
                ),
                (
                    date(-43, 3, 15).at(1, 2, 3, 4000),
                    "0044-03-15 01:02:03.000004 BC",
                ),
                (
                    date(9999, 12, 31).at(23, 59, 59, 999_999_000),
                    "9999-12-31 23:59:59.999999",
                ),
            ],
        )
        .await;
        let instant = Timestamp::from_microsecond(1_709_646_310_000_001).unwrap();
        round_trip("timestamptz", &[(instant, "2024-03-05 13:45:10.000001+00")]).await;
    }

    /// Span has no `PartialEq` (its units are compared field by field), so it is checked here
    /// rather than with `round_trip`.
    #[tokio::test]
    async fn spans_as_intervals() {
        let cases = [
            (
                Span::new()
                    .years(1)
                    .months(2)
                    .days(3)
                    .hours(4)
                    .minutes(5)
                    .seconds(6)
                    .microseconds(7),
                "1 year 2 mons 3 days 04:05:06.000007",
            ),
            (Span::new().days(-1).seconds(-1), "-1 days -00:00:01"),
            (Span::new(), "00:00:00"),
        ];
        for conn in &mut sessions().await {
            for (span, shown) in &cases {
                for format in [Format::Text, Format::Binary] {
                    let row = conn
                        .query_one_with("SELECT $1::interval, $1::interval::text", &[span], format)
                        .await
                        .unwrap();
                    assert_eq!(row.get::<&str>(1).unwrap(), *shown);
                    let back: Span = row.get(0).unwrap();
                    // Years come back as months: compare what the server shows.
                    let again = conn
                        .query_one("SELECT $1::interval::text", &[&back])
                        .await
                        .unwrap();
                    assert_eq!(again.get::<&str>(0).unwrap(), *shown, "{format:?}");
                }
            }
        }
        refused::<Span>(&["'1 mon -1 days'::interval"]).await;
    }

    #[tokio::test]
    async fn infinity_and_far_years_are_refused() {
        refused::<jiff::civil::Date>(&["'infinity'::date", "'10000-01-01'::date"]).await;
        refused::<jiff::civil::DateTime>(&["'-infinity'::timestamp"]).await;
        refused::<Timestamp>(&["'infinity'::timestamptz"]).await;
        refused::<jiff::civil::Time>(&["'24:00:00'::time"]).await;
    }
}

#[cfg(feature = "with-uuid-1")]
#[tokio::test]
async fn uuids() {
    let value = uuid::Uuid::from_u128(0xa0ee_bc99_9c0b_4ef8_bb6d_6bb9_bd38_0a11);
    round_trip(
        "uuid",
        &[
            (value, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
            (uuid::Uuid::nil(), "00000000-0000-0000-0000-000000000000"),
        ],
    )
    .await;
    round_trip(
        "uuid[]",
        &[(vec![value], "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}")],
    )
    .await;
}
