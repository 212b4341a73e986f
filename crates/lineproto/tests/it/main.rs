//! The parser's integration tests as one binary (alloc.rs installs a counting global allocator,
//! so it stays a binary of its own).

mod common;
mod compat;
mod conformance;
mod roundtrip;
