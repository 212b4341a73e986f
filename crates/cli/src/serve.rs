//! `sluice serve`: runs Sluice's gates, on its embedded PostgreSQL unless a database is given.

use crate::config::{self, Settings};
use anyhow::{Context, Result};
use clap::Args;
use sluice_embedded::{Cluster, ClusterOptions, default_data_dir};
use sluice_http::view::ViewMount;
use sluice_http::{Mount, Router};
use sluice_pg::Pool;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::watch;

/// Options of `sluice serve`. Every setting also has a key in the config file and a
/// `SLUICE_<SECTION>_<KEY>` variable (see sluice.toml); a flag beats a variable, a variable the
/// file, the file the default.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The config file (TOML; see sluice.toml for every key).
    #[arg(
        short = 'c',
        long = "config",
        env = "SLUICE_CONFIG",
        value_name = "FILE"
    )]
    pub config: Option<PathBuf>,

    /// Database URL or conninfo string; without it Sluice runs its embedded PostgreSQL
    /// [database.url, SLUICE_DATABASE_URL or DATABASE_URL].
    #[arg(short = 'd', long = "database", value_name = "URL")]
    pub database: Option<String>,

    /// Data directory of the embedded PostgreSQL (default: /var/lib/sluice/pgdata as root, else
    /// ~/.local/share/sluice/pgdata) [database.data_dir, SLUICE_DATA_DIR].
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,

    /// Port of the embedded PostgreSQL on 127.0.0.1 (default: the one it used last, else free)
    /// [database.pg_port, SLUICE_PG_PORT].
    #[arg(long, value_name = "PORT")]
    pub pg_port: Option<u16>,

    /// Most connections to PostgreSQL [pool.size].
    #[arg(long = "pool-size", value_name = "N")]
    pub pool_size: Option<usize>,

    /// Serve HTTP (views, ops endpoints, Influx) on this address (default 127.0.0.1:8080)
    /// [http.listen].
    #[arg(long = "http", value_name = "ADDR")]
    pub http: Option<SocketAddr>,

    /// Mount a view file at a URL prefix: `/films=views/films.json`; repeatable [views].
    #[arg(long = "views", value_name = "PREFIX=FILE")]
    pub views: Vec<String>,

    /// Serve the Redis protocol (RESP2/RESP3) on this address, e.g. 127.0.0.1:6380. With the
    /// in-memory engine it needs no database; given alone, no HTTP gate runs [resp.listen].
    #[arg(long = "resp", value_name = "ADDR")]
    pub resp: Option<SocketAddr>,

    /// Password Redis clients must give with AUTH or HELLO (Redis's requirepass)
    /// [resp.password, SLUICE_RESP_PASSWORD].
    #[arg(long = "resp-password", value_name = "PASSWORD")]
    pub resp_password: Option<String>,

    /// Worker threads of the main runtime (default: 1 when Redis connections have their own
    /// threads and no HTTP gate runs, else one per core) [runtime.threads].
    #[arg(long = "threads", value_name = "N")]
    pub threads: Option<usize>,

    /// Threads serving Redis connections, each with its own single-threaded runtime that owns
    /// its connections (Redis's model; measured the most CPU-efficient on 2 cores). Raise it on
    /// machines with many cores; 0 serves connections on the main runtime's workers (default 1)
    /// [resp.io_threads].
    #[arg(long = "resp-io-threads", value_name = "N")]
    pub resp_io_threads: Option<usize>,

    /// Microseconds a Redis connection thread keeps polling its sockets after its last request
    /// before it sleeps: a request that lands meanwhile is taken at once, without a cross-core
    /// wake-up (default 50, 0 on a one-core machine; 0 never polls; an idle server sleeps at
    /// once) [resp.busy_poll_us].
    #[arg(long = "resp-busy-poll-us", value_name = "MICROSECONDS")]
    pub resp_busy_poll_us: Option<u64>,
}

impl ServeArgs {
    /// The flags as a table shaped like the config file.
    fn layer(&self) -> toml::Table {
        let mut table = toml::Table::new();
        let mut put = |section: &str, key: &str, value: Option<String>| {
            if let Some(value) = value {
                config::set(&mut table, section, key, value);
            }
        };
        put("database", "url", self.database.clone());
        put(
            "database",
            "data_dir",
            self.data_dir
                .as_ref()
                .map(|d| d.to_string_lossy().into_owned()),
        );
        put("database", "pg_port", self.pg_port.map(|p| p.to_string()));
        put("pool", "size", self.pool_size.map(|n| n.to_string()));
        put("http", "listen", self.http.map(|a| a.to_string()));
        put("resp", "listen", self.resp.map(|a| a.to_string()));
        put("resp", "password", self.resp_password.clone());
        put(
            "resp",
            "io_threads",
            self.resp_io_threads.map(|n| n.to_string()),
        );
        put(
            "resp",
            "busy_poll_us",
            self.resp_busy_poll_us.map(|n| n.to_string()),
        );
        put("runtime", "threads", self.threads.map(|n| n.to_string()));
        for pair in &self.views {
            let (prefix, file) = pair.split_once('=').unwrap_or((pair, ""));
            put("views", prefix, Some(file.to_string()));
        }
        table
    }
}

pub fn run(args: ServeArgs) -> Result<()> {
    let settings = config::resolve(
        args.config.as_deref(),
        |name| std::env::var(name).ok(),
        args.layer(),
    )?;
    // Views are checked before anything starts: a bad file stops serve at once.
    let views = load_views(&settings)?;

    let mut builder = tokio::runtime::Builder::new_multi_thread();
    // With connection threads, the main runtime only accepts and runs the expiry cycle; one
    // worker is enough, and idle extra workers measurably raised CPU per request.
    let default_workers = if settings.http.is_none() && settings.resp_io_threads > 0 {
        1
    } else {
        std::thread::available_parallelism().map_or(2, |n| n.get())
    };
    builder.worker_threads(settings.threads.unwrap_or(default_workers).max(1));
    let runtime = builder
        .enable_all()
        .build()
        .context("starting the async runtime")?;

    let needs_database = settings.http.is_some();
    let (url, cluster) = match (&settings.database_url, needs_database) {
        (_, false) => (None, None),
        (Some(url), true) => (Some(url.clone()), None),
        (None, true) => {
            let cluster = start_embedded(&settings)?;
            (Some(cluster.url()), Some(cluster))
        }
    };
    let result = runtime.block_on(serve(settings, views, url));
    // Connection threads and tasks of the gates end with the runtime, before PostgreSQL stops.
    drop(runtime);
    drop(cluster); // Stops the embedded server.
    result
}

/// A view file read and checked, waiting for the pool to be mounted.
struct LoadedView {
    prefix: String,
    view: sluice_http::view::model::View,
}

/// Reads and checks every view file; the error names the file, the JSON path and the problem.
fn load_views(settings: &Settings) -> Result<Vec<LoadedView>> {
    settings
        .views
        .iter()
        .map(|(prefix, file)| {
            let view = sluice_http::view::load_file(file)
                .with_context(|| format!("loading the view for {prefix}"))?;
            Ok(LoadedView {
                prefix: prefix.clone(),
                view,
            })
        })
        .collect()
}

fn start_embedded(settings: &Settings) -> Result<Cluster> {
    let dir = match &settings.data_dir {
        Some(dir) => dir.clone(),
        None => default_data_dir().context("choosing a data directory")?,
    };
    eprintln!(
        "sluice: starting the embedded PostgreSQL in {}",
        dir.display()
    );
    let mut options = ClusterOptions::persistent(&dir).stop_on_drop(true);
    if let Some(port) = settings.pg_port {
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

async fn serve(settings: Settings, views: Vec<LoadedView>, url: Option<String>) -> Result<()> {
    let (stop, stopped) = watch::channel(false);
    let mut gates = tokio::task::JoinSet::new();
    if let Some(addr) = settings.resp {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding the Redis gate to {addr}"))?;
        let local = listener.local_addr()?;
        tracing::info!(addr = %local, "Redis protocol gate listening");
        println!("sluice: Redis protocol on {local}");
        let config = sluice_resp::Config {
            password: settings.resp_password.clone(),
            io_threads: settings.resp_io_threads,
            busy_poll: settings.resp_busy_poll,
            ..sluice_resp::Config::default()
        };
        gates.spawn(run_resp(listener, config, wait_for(stopped.clone())));
    }
    let pool = match &url {
        Some(url) => Some(
            Pool::connect(url, settings.pool.clone())
                .with_context(|| format!("the database URL {url}"))?,
        ),
        None => None,
    };
    if let (Some(addr), Some(pool)) = (settings.http, &pool) {
        describe(pool).await?;
        let mut router = Router::new();
        router.database(pool.clone());
        for LoadedView { prefix, view } in views {
            let mount: Arc<dyn Mount> = Arc::new(ViewMount::new(view, pool.clone()));
            router.mount(&prefix, mount);
        }
        if settings.influx.enabled {
            let config = sluice_influx::InfluxConfig {
                tags_as_jsonb: settings.influx.tags_as_jsonb,
                tokens: settings.influx.tokens.clone(),
            };
            sluice_influx::InfluxApi::new(pool.clone(), config).mount_all(&mut router);
            println!("sluice: InfluxDB write API on /write and /api/v2/write");
        }
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding the HTTP gate to {addr}"))?;
        let local = listener.local_addr()?;
        tracing::info!(addr = %local, "HTTP gate listening");
        println!("sluice: HTTP on http://{local}");
        let options = settings.server.clone();
        let shutdown = wait_for(stopped.clone());
        gates.spawn(async move {
            sluice_http::run(listener, router, options, shutdown)
                .await
                .context("running the HTTP gate")
        });
    }
    if gates.is_empty() {
        println!("sluice: no gate is enabled; press Ctrl-C to stop");
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
    if let Some(pool) = pool {
        pool.close().await;
    }
    Ok(())
}

/// Shows what Sluice is running on; fails early when the database cannot be reached.
async fn describe(pool: &Pool) -> Result<()> {
    let mut conn = pool.get().await.context("connecting to the database")?;
    let row = conn
        .query_one(
            "SELECT current_setting('server_version'), current_database(), \
             (SELECT count(*) FROM pg_catalog.pg_tables \
              WHERE schemaname NOT IN ('pg_catalog', 'information_schema'))",
            &[],
        )
        .await?;
    let version: &str = row.get(0)?;
    let database: &str = row.get(1)?;
    let tables: i64 = row.get(2)?;
    println!(
        "sluice {}: connected to PostgreSQL {version}, database \"{database}\" ({tables} user tables)",
        env!("CARGO_PKG_VERSION")
    );
    Ok(())
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
