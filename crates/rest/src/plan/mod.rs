//! From a parsed request and the schema cache to what will run: every name checked against the
//! cache, embedded resources resolved through relationships.

pub mod call;
pub mod embed;
pub mod read;
pub mod write;

pub use read::*;
