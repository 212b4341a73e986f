//! The write API's integration tests as one binary (memory.rs measures the process's peak
//! memory, so it stays a binary of its own).

mod clients;
mod common;
mod duplicates;
mod endpoints;
mod limits;
mod outage;
mod ownership;
mod partial;
mod policies;
mod retention;
mod write;
