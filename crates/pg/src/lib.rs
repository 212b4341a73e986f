//! sluice-pg: a PostgreSQL wire-protocol driver that allocates rarely and does I/O rarely.
//!
//! - One big read buffer per connection, filled with as much as the kernel has; rows come out in
//!   [`RowBlock`]s whose fields are slices of that buffer (no allocation per row or field).
//! - One write per request: Parse/Bind/Execute/Sync together, a transaction's BEGIN with its
//!   first statement, a dropped transaction's ROLLBACK with the next request.
//! - Statements are prepared automatically once the same SQL has run N times
//!   ([`config::Config::set_prepare_threshold`]); pipelines batch many statements per round trip.

pub mod catalog;
pub mod config;
mod conn;
mod copy;
mod error;
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
