//! The private cluster's integration tests as one binary.

mod access;
mod cluster;
mod common;
mod replicas;
mod watchdog;
