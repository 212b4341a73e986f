//! `sluice serve`: runs Sluice against a database, the embedded cluster by default.

use clap::Args;

/// Options of `sluice serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Database URL or conninfo string; without it Sluice runs its embedded PostgreSQL.
    #[arg(short = 'd', long = "database", env = "DATABASE_URL")]
    pub database: Option<String>,
}

pub fn run(args: ServeArgs) -> anyhow::Result<()> {
    let _ = args;
    anyhow::bail!("serve is not built yet")
}
