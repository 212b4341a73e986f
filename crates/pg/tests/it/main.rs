//! The driver's integration tests as one binary (memory.rs and hostile.rs measure the process's
//! peak memory, so each stays a binary of its own).

mod auth;
mod common;
mod copy;
mod large;
mod pipeline;
mod pool;
mod pool_restart;
mod restart;
mod session;
mod statements;
mod types;
