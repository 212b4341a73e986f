//! sluice-rest: the automatic REST API over PostgreSQL, in PostgREST's dialect.
//!
//! A request flows down the layers: [`request`] parses the URL grammar and headers (sans-I/O);
//! the plan checks every name against the [`schema`] cache and resolves embedding; SQL is
//! rendered from the plan with every value a bind parameter; the driver runs it in one
//! transaction; the response streams rows out through `sluice-formats`' encoders.

#![warn(missing_docs)]

pub mod api;
pub mod auth;
pub mod config;
pub mod error;
pub mod plan;
pub mod request;
pub mod response;
pub mod schema;
pub mod sql;

pub use config::{RestConfig, TxEnd};
pub use error::ApiError;
