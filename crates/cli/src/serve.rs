//! `sluice serve`: runs Sluice against a database, the embedded cluster by default.

use std::net::SocketAddr;

use anyhow::Context as _;
use clap::Args;

/// Options of `sluice serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Database URL or conninfo string; without it Sluice runs its embedded PostgreSQL.
    #[arg(short = 'd', long = "database", env = "DATABASE_URL")]
    pub database: Option<String>,

    /// Serve the Redis protocol (RESP2/RESP3) on this address, e.g. 127.0.0.1:6380. With the
    /// in-memory engine it needs no database.
    #[arg(long = "resp", value_name = "ADDR")]
    pub resp: Option<SocketAddr>,

    /// Password Redis clients must give with AUTH or HELLO (Redis's requirepass).
    #[arg(
        long = "resp-password",
        env = "SLUICE_RESP_PASSWORD",
        value_name = "PASSWORD"
    )]
    pub resp_password: Option<String>,

    /// Worker threads of the main runtime (default: 1 when Redis connections have their own
    /// threads, else one per core).
    #[arg(long = "threads", value_name = "N")]
    pub threads: Option<usize>,

    /// Threads serving Redis connections, each with its own single-threaded runtime that owns
    /// its connections (Redis's model; measured the most CPU-efficient on 2 cores). Raise it on
    /// machines with many cores; 0 serves connections on the main runtime's workers.
    #[arg(long = "resp-io-threads", value_name = "N", default_value_t = 1)]
    pub resp_io_threads: usize,
}

pub fn run(args: ServeArgs) -> anyhow::Result<()> {
    let Some(resp_addr) = args.resp else {
        anyhow::bail!("serve is not built yet beyond the Redis gate: pass --resp ADDR")
    };
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    // With connection threads, the main runtime only accepts and runs the expiry cycle; one
    // worker is enough, and idle extra workers measurably raised CPU per request (bench/README).
    let default_workers = if args.resp_io_threads > 0 {
        1
    } else {
        std::thread::available_parallelism().map_or(2, |n| n.get())
    };
    builder.worker_threads(args.threads.unwrap_or(default_workers).max(1));
    let runtime = builder
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let config = sluice_resp::Config {
        password: args.resp_password,
        ..sluice_resp::Config::default()
    };
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(resp_addr)
            .await
            .with_context(|| format!("binding the Redis gate to {resp_addr}"))?;
        tracing::info!(addr = %listener.local_addr()?, "Redis protocol gate listening");
        run_resp(listener, config, shutdown_signal()).await
    })
}

/// Runs the Redis gate on `listener` until `shutdown`; the part of `serve` that needs no database.
pub async fn run_resp(
    listener: tokio::net::TcpListener,
    config: sluice_resp::Config,
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    sluice_resp::run(listener, config, shutdown)
        .await
        .context("running the Redis gate")
}

/// Completes on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => {
                    let _ = ctrl_c.await;
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
    tracing::info!("shutting down");
}
