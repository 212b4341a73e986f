//! The Redis store's integration tests as one binary: a real PostgreSQL (the test kit's private
//! cluster) and the `redis` crate as the client.

mod chunks;
mod common;
mod durability;
mod faults;
mod follower;
mod outage;
mod owner;
mod parts;
mod plans;
mod random;
mod regrid;
mod roundtrip;
mod views;
