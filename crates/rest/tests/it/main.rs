//! The REST API's integration tests as one binary (alloc.rs replaces the global allocator to
//! count allocations, so it stays a binary of its own).

mod bulk;
mod clients;
mod common;
mod computed;
mod grammar_props;
mod jwt_claims;
mod jwt_keys;
mod openapi;
mod outage;
mod overload;
mod read_your_writes;
mod replica_faults;
mod replicas;
mod schema_notify;
mod spec;
