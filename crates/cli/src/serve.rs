//! `sluice serve`: runs Sluice's gates, on its embedded PostgreSQL unless a database is given.

use anyhow::{Context, Result};
use clap::Args;
use sluice_embedded::{Cluster, ClusterOptions, default_data_dir};
use sluice_pg::Connection;
use std::net::SocketAddr;
use std::path::PathBuf;
use tokio::sync::watch;

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

impl ServeArgs {
    /// Whether a gate that needs PostgreSQL runs. The Redis gate's memory engine needs none; with
    /// no gate at all, serve checks the database with a demo query.
    fn needs_database(&self) -> bool {
        self.resp.is_none()
    }
}

pub fn run(args: ServeArgs) -> Result<()> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    // With connection threads, the main runtime only accepts and runs the expiry cycle; one
    // worker is enough, and idle extra workers measurably raised CPU per request.
    let default_workers = if args.resp.is_some() && args.resp_io_threads > 0 {
        1
    } else {
        std::thread::available_parallelism().map_or(2, |n| n.get())
    };
    builder.worker_threads(args.threads.unwrap_or(default_workers).max(1));
    let runtime = builder
        .enable_all()
        .build()
        .context("starting the async runtime")?;

    let (url, cluster) = match (&args.database, args.needs_database()) {
        (_, false) => (None, None),
        (Some(url), true) => (Some(url.clone()), None),
        (None, true) => {
            let cluster = start_embedded(&args)?;
            (Some(cluster.url()), Some(cluster))
        }
    };
    let result = runtime.block_on(serve(args, url));
    drop(cluster); // Stops the embedded server.
    result
}

fn start_embedded(args: &ServeArgs) -> Result<Cluster> {
    let dir = match &args.data_dir {
        Some(dir) => dir.clone(),
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
    Ok(cluster)
}

async fn serve(args: ServeArgs, url: Option<String>) -> Result<()> {
    let (stop, stopped) = watch::channel(false);
    let mut gates = tokio::task::JoinSet::new();
    if let Some(addr) = args.resp {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding the Redis gate to {addr}"))?;
        tracing::info!(addr = %listener.local_addr()?, "Redis protocol gate listening");
        let config = sluice_resp::Config {
            password: args.resp_password.clone(),
            io_threads: args.resp_io_threads,
            ..sluice_resp::Config::default()
        };
        gates.spawn(run_resp(listener, config, wait_for(stopped.clone())));
    }
    let conn = match &url {
        Some(url) => Some(demo(url).await?),
        None => None,
    };
    if gates.is_empty() {
        println!("sluice: no gate is enabled (try --resp 127.0.0.1:6380); press Ctrl-C to stop");
    }
    tokio::select! {
        () = shutdown_signal() => {}
        Some(done) = gates.join_next() => done.context("a gate panicked")??,
    }
    tracing::info!("shutting down");
    let _ = stop.send(true);
    while let Some(done) = gates.join_next().await {
        done.context("a gate panicked")??;
    }
    if let Some(conn) = conn {
        conn.close().await?;
    }
    Ok(())
}

/// Connects and shows what Sluice is running on.
async fn demo(url: &str) -> Result<Connection> {
    let mut conn = Connection::connect(url)
        .await
        .with_context(|| format!("connecting to {url}"))?;
    let rows = conn
        .query(
            "SELECT current_setting('server_version'), current_database(), \
             (SELECT count(*) FROM pg_catalog.pg_tables \
              WHERE schemaname NOT IN ('pg_catalog', 'information_schema'))",
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
    Ok(conn)
}

/// Runs the Redis gate on `listener` until `shutdown`; the part of `serve` that needs no database.
pub async fn run_resp(
    listener: tokio::net::TcpListener,
    config: sluice_resp::Config,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<()> {
    sluice_resp::run(listener, config, shutdown)
        .await
        .context("running the Redis gate")
}

/// Resolves once `stop` says so (or its sender is gone).
async fn wait_for(mut stop: watch::Receiver<bool>) {
    let _ = stop.wait_for(|&s| s).await;
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
