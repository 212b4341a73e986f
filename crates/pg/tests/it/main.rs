//! The driver's integration tests as one binary (memory.rs and hostile.rs measure the process's
//! peak memory, so each stays a binary of its own).

mod auth;
mod common;
mod copy;
#[cfg(any(
    feature = "with-chrono-0_4",
    feature = "with-time-0_3",
    feature = "with-jiff-0_2",
    feature = "with-uuid-1"
))]
mod ecosystem;
mod large;
mod pipeline;
mod pipeline_copy;
mod pool;
mod pool_restart;
mod replicas;
mod restart;
mod session;
mod statements;
mod types;
