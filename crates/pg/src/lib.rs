//! sluice-pg: a PostgreSQL wire-protocol driver that allocates rarely and does I/O rarely.
//!
//! - One big read buffer per connection, filled with as much as the kernel has; rows come out in
//!   [`RowBlock`]s whose fields are slices of that buffer (no allocation per row or field).
//! - One write per request: Parse/Bind/Execute/Sync together, a transaction's BEGIN with its
//!   first statement, a dropped transaction's ROLLBACK with the next request.
//! - Statements are prepared automatically once the same SQL has run N times
//!   ([`config::Config::set_prepare_threshold`]); pipelines batch many statements per round trip.
//!
//! # Which Rust types to use
//!
//! Integers, floats, `bool`, strings, bytes, `Vec<T>` for arrays and `Option<T>` for NULL work
//! as they are (the table in [`types`] has every pairing). For the rest, application code
//! should use the ecosystem's types, each behind an optional feature named as rust-postgres
//! names it:
//!
//! | feature | PostgreSQL | Rust |
//! |---|---|---|
//! | `with-chrono-0_4` | date, time, timestamp, timestamptz | `chrono::{NaiveDate, NaiveTime, NaiveDateTime}`, `DateTime<Utc>` / `<FixedOffset>` / `<Local>` |
//! | `with-time-0_3` | date, time, timestamp, timestamptz | `time::{Date, Time, PrimitiveDateTime, OffsetDateTime}` |
//! | `with-jiff-0_2` | date, time, timestamp, timestamptz, interval | `jiff::civil::{Date, Time, DateTime}`, `jiff::{Timestamp, Span}` |
//! | `with-uuid-1` | uuid | `uuid::Uuid` |
//! | `with-serde_json-1` | json, jsonb | `serde_json::Value` |
//! | `decimal` | numeric | `rust_decimal::Decimal` |
//!
//! They convert through Sluice's own [`types::Date`], [`types::Timestamp`], [`types::Interval`]
//! ... (which stay, and which are what to use when a value may be `infinity`, lie outside the
//! other crate's years, or be an interval of mixed signs): such a value is an out-of-range
//! [`types::ConversionError`], never a panic or a wrong value. A timestamptz carries no zone on
//! the wire, so it reads as an instant (UTC, or `+00:00` for a fixed offset); writes keep the
//! instant and cut nanoseconds to the server's microseconds.
//!
//! ```
//! # #[cfg(feature = "with-chrono-0_4")]
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! # let url = sluice_embedded::test_database().url();
//! use chrono::{DateTime, NaiveDate, Utc};
//!
//! let mut conn = sluice_pg::Connection::connect(url).await?;
//! let row = conn
//!     .query_one(
//!         "SELECT date '2024-02-29', $1::timestamptz + interval '1 day'",
//!         &[&"2024-03-05T13:45:10.5-03:30".parse::<DateTime<Utc>>().unwrap()],
//!     )
//!     .await?;
//! let day: NaiveDate = row.get(0)?;
//! let later: DateTime<Utc> = row.get(1)?;
//! assert_eq!(day, NaiveDate::from_ymd_opt(2024, 2, 29).unwrap());
//! assert_eq!(later.to_rfc3339(), "2024-03-06T17:15:10.500+00:00");
//! # Ok::<_, sluice_pg::Error>(())
//! # }).unwrap();
//! ```

#![warn(missing_docs)]

pub mod catalog;
pub mod config;
mod conn;
mod copy;
mod error;
pub mod lsn;
mod pipeline;
pub mod pool;
pub mod protocol;
mod query;
mod rows;
mod simple;
pub mod sql;
mod statement;
mod stream;
mod transaction;
pub mod types;

pub use catalog::TypeInfo;
pub use config::Config;
pub use conn::{CancelToken, Connection, Notification};
pub use copy::{BINARY_HEADER, BinaryCopyWriter, CopyIn, CopyOut};
pub use error::{DbError, Error, ErrorKind, ErrorPosition, Result, Severity, sqlstate};
pub use lsn::Lsn;
pub use pipeline::{Pipeline, SyncMode};
pub use pool::{Pool, PoolError, PoolErrorKind, PoolSettings, PooledConnection};
pub use protocol::backend::TransactionStatus;
pub use query::Params;
pub use rows::{
    BlockRows, Column, ColumnIndex, Columns, CommandTag, OwnedRow, Row, RowBlock, Rows,
};
pub use statement::Statement;
pub use stream::RowStream;
pub use transaction::{IsolationLevel, Transaction, TransactionOptions};
pub use types::{Format, FromSql, ToSql};
