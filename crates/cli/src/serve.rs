//! `sluice serve`: runs Sluice against a database, its embedded PostgreSQL by default.

use anyhow::{Context, Result};
use clap::Args;
use sluice_embedded::{Cluster, ClusterOptions, default_data_dir};
use sluice_pg::Connection;
use std::path::PathBuf;

/// Options of `sluice serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Database URL or conninfo string; without it Sluice runs its embedded PostgreSQL.
    #[arg(short = 'd', long = "database", env = "DATABASE_URL")]
    pub database: Option<String>,
    /// Data directory of the embedded PostgreSQL (default: /var/lib/sluice/pgdata as root, else
    /// ~/.local/share/sluice/pgdata).
    #[arg(long, env = "SLUICE_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// Port of the embedded PostgreSQL on 127.0.0.1 (default: the one it used last, else free).
    #[arg(long, env = "SLUICE_PG_PORT")]
    pub pg_port: Option<u16>,
}

pub fn run(args: ServeArgs) -> Result<()> {
    let (url, cluster) = match args.database {
        Some(url) => (url, None),
        None => {
            let dir = match args.data_dir {
                Some(dir) => dir,
                None => default_data_dir().context("choosing a data directory")?,
            };
            eprintln!(
                "sluice: starting the embedded PostgreSQL in {}",
                dir.display()
            );
            let mut options = ClusterOptions::persistent(&dir).stop_on_drop(true);
            if let Some(port) = args.pg_port {
                options = options.port(port);
            }
            let cluster = Cluster::start(options).context("starting the embedded PostgreSQL")?;
            eprintln!(
                "sluice: PostgreSQL is listening at {} (log: {})",
                cluster.url(),
                cluster.log_file().display()
            );
            (cluster.url(), Some(cluster))
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let result = runtime.block_on(serve(&url));
    drop(cluster); // Stops the embedded server.
    result
}

async fn serve(url: &str) -> Result<()> {
    let mut conn = Connection::connect(url)
        .await
        .with_context(|| format!("connecting to {url}"))?;
    let rows = conn
        .query(
            "SELECT current_setting('server_version'), current_database(), \
             (SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema'))",
            &[],
        )
        .await?;
    let row = rows.get(0).context("the demo query returned no row")?;
    let version: &str = row.get(0)?;
    let database: &str = row.get(1)?;
    let tables: i64 = row.get(2)?;
    println!(
        "sluice {}: connected to PostgreSQL {version}, database \"{database}\" ({tables} user tables)",
        env!("CARGO_PKG_VERSION")
    );
    println!("sluice: no gateway is enabled yet; press Ctrl-C to stop");
    shutdown_signal().await;
    eprintln!("sluice: shutting down");
    conn.close().await?;
    Ok(())
}

/// Resolves on SIGINT or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = ctrl_c => {}
                _ = term.recv() => {}
            }
        }
        Err(_) => {
            let _ = ctrl_c.await;
        }
    }
}
