//! `sluice-bench`: end-to-end benchmarks that run Sluice and its peers side by side in one run.

mod driver;
mod export;
mod floor;
mod http;
mod influx;
mod peers;
mod pool;
mod replicas;
mod report;
mod resp;
mod rest;
mod rest_auth;
mod runs;
mod setup;

use clap::{Parser, Subcommand};

/// Runs Sluice and the tool a user would otherwise pick side by side, alternating and repeating,
/// and prints each figure with the ratio.
#[derive(Debug, Parser)]
#[command(name = "sluice-bench", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The driver: bulk read, point selects, pipelining (sluice-pg vs tokio-postgres, psql, pgbench
    /// and a floor client that only frames the messages).
    Driver(driver::DriverArgs),
    /// sluice export / import vs psql COPY on pgbench data.
    Export(export::ExportArgs),
    /// The HTTP gateway: view GETs vs pgbench, a whole table vs export, PUT vs import, PATCH RSS.
    Http(http::HttpArgs),
    /// Influx line protocol ingest: 4 writers posting to the write API vs `psql \copy` of the same rows.
    Influx(influx::InfluxArgs),
    /// The pool: 64 tasks over 8 connections vs dedicated connections, deadpool, bb8; pipelining.
    Pool(pool::PoolArgs),
    /// The automatic REST API: point GETs vs a view and pgbench, a whole table vs export and
    /// PostgREST's json_agg, a bulk POST vs import and PostgREST's statement, seed 001's load,
    /// the schema cache's load.
    Rest(rest::RestArgs),
    /// Read replicas: REST GET by key on the primary alone, twice (the noise floor), with reads
    /// routed to the primary itself as a replica (the routing overhead) and to a real streaming
    /// replica (with each server's share of the transactions).
    Replicas(replicas::ReplicasArgs),
    /// The Redis gate against redis-server: redis-benchmark side by side, paired variants, the
    /// data types, RSS after loading.
    Resp(resp::RespArgs),
    /// One measured REST piece in a child process.
    #[command(hide = true)]
    RestWorker(rest::RestWorkerArgs),
    /// One measured run in a child process (used by the benchmarks themselves).
    #[command(hide = true)]
    Worker(runs::WorkerArgs),
    /// One measured pool run in a child process.
    #[command(hide = true)]
    PoolWorker(runs::WorkerArgs),
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Driver(args) => driver::run(args),
        Command::Export(args) => export::run(args),
        Command::Worker(args) => driver::worker(args),
        Command::Http(args) => http::run(args),
        Command::Influx(args) => influx::run(args),
        Command::Pool(args) => pool::run(args),
        Command::PoolWorker(args) => pool::worker(args),
        Command::Replicas(args) => replicas::run(args),
        Command::Rest(args) => rest::run(args),
        Command::RestWorker(args) => rest::worker(args),
        Command::Resp(args) => resp::run(args),
    }
}
