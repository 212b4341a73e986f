//! The Redis server's integration tests as one binary.

mod acl_clients;
mod clients;
mod common;
mod compat;
mod config_set;
mod differential;
mod dump_restore;
mod frame_props;
mod introspect_clients;
mod memory_clients;
mod migrate;
mod refusals;
mod script_clients;
mod script_limits;
mod scripting;
mod server_cmds;
mod tcl_types;
mod tls_clients;
mod tracking;
mod types_clients;
