//! sluice-pg: a PostgreSQL wire-protocol driver that allocates rarely and does I/O rarely.

pub mod config;
pub mod protocol;
pub mod types;
