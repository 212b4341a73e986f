//! The HTTP gateway's integration tests as one binary (memory_budget.rs measures the process's
//! peak memory, so it stays a binary of its own).

mod load;
mod server_limits;
mod server_ops;
mod server_support;
mod spec;
mod stream;
mod tls;
mod view_outage;
mod view_read_your_writes;
mod view_replicas;
mod view_roles;
mod write_copy;
mod write_object;
mod write_rows;
mod write_stream;
mod write_support;
