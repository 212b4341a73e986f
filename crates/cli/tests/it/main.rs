//! The `sluice` binary's integration tests as one binary.

mod export_import;
mod export_import_errors;
mod export_import_support;
mod export_replica;
mod gateways;
mod lp;
mod serve;
mod serve_memory;
mod serve_redis_store;
mod serve_resp_tls;
mod serve_support;
mod serve_tls;
