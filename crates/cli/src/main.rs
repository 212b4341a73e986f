//! The `sluice` binary: command-line parsing and dispatch to the subcommands.

use clap::{Parser, Subcommand};

mod export;
mod import;
mod lp;
mod serve;
mod settings;

/// PostgreSQL behind the protocols applications already speak.
#[derive(Debug, Parser)]
#[command(name = "sluice", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run Sluice (on its embedded PostgreSQL unless a database is given).
    Serve(serve::ServeArgs),
    /// InfluxDB line protocol tools.
    Lp(lp::LpArgs),
    /// Run a query and write its rows as CSJ, CSV, TSV, JSON Lines or JSON.
    Export(export::ExportArgs),
    /// Load CSJ, CSV, TSV or JSON Lines into a table through COPY, all or nothing.
    Import(import::ImportArgs),
}

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("SLUICE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => serve::run(args),
        Command::Lp(args) => lp::run(args),
        Command::Export(args) => export::run(args),
        Command::Import(args) => import::run(args),
    }
}
