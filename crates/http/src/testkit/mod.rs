//! What test suites of the HTTP gates share: spec files of exchanges and their runner.

pub mod spec;
