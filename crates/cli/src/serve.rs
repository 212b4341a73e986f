//! `sluice serve`: runs Sluice's gates, on its embedded PostgreSQL unless a database is given.

use crate::settings::{self, SettingFlags, Settings};
use anyhow::{Context, Result};
use clap::Args;
use sluice_embedded::{Cluster, ClusterOptions, default_data_dir};
use sluice_http::view::ViewMount;
use sluice_http::{Mount, Router};
use sluice_pg::Pool;
use sluice_pg::pool::{PRIMARY_APPLICATION_NAME, ReadPools};
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::watch;

/// Options of `sluice serve`. Every setting is also a key in the config file and a
/// `SLUICE_<SECTION>_<KEY>` variable (see sluice.toml); a flag beats a variable, a variable the
/// file, the file the default.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The config file (TOML; see sluice.toml or `--example` for every key).
    #[arg(
        short = 'c',
        long = "config",
        env = "SLUICE_CONFIG",
        value_name = "FILE"
    )]
    pub config: Option<PathBuf>,

    /// Mount a view file at a URL prefix: `/films=views/films.json`; repeatable [views,
    /// SLUICE_VIEWS].
    #[arg(long = "views", value_name = "PREFIX=FILE")]
    pub views: Vec<String>,

    /// Print the reference config file (every key, its doc and its default) and exit.
    #[arg(long)]
    pub example: bool,

    /// Print the settings as resolved from the file, the variables and the flags, and exit.
    #[arg(long)]
    pub dump_config: bool,

    #[command(flatten)]
    pub settings: SettingFlags,
}

pub fn run(args: ServeArgs) -> Result<()> {
    if args.example {
        print!("{}", settings::reference_file());
        return Ok(());
    }
    let settings = settings::resolve(
        args.config.as_deref(),
        |name| std::env::var(name).ok(),
        &args.settings.given,
        &args.views,
    )?;
    if args.dump_config {
        print!("{}", settings::dump(&settings));
        return Ok(());
    }
    // Views are checked before anything starts: a bad file stops serve at once.
    let views = load_views(&settings)?;
    let http = settings.http_listen();
    let resp_config = settings.resp_config();

    let mut builder = tokio::runtime::Builder::new_multi_thread();
    // With connection threads, the main runtime only accepts and runs the expiry cycle; one
    // worker is enough, and idle extra workers measurably raised CPU per request.
    let default_workers = if http.is_none() && resp_config.io_threads > 0 {
        1
    } else {
        std::thread::available_parallelism().map_or(2, |n| n.get())
    };
    builder.worker_threads(settings.runtime.threads.unwrap_or(default_workers).max(1));
    let runtime = builder
        .enable_all()
        .build()
        .context("starting the async runtime")?;

    let embedded_replicas = settings.database.embedded_replicas;
    if embedded_replicas > 0 && settings.database_url().is_some() {
        anyhow::bail!(
            "--replicas (database.embedded_replicas) starts replicas of the embedded PostgreSQL \
             and cannot be used with a database URL; give its replicas with --replica-url"
        );
    }
    let mut replica_urls = settings.database.replicas.clone();
    // The HTTP gate and a Redis store in PostgreSQL need a database.
    let needs_database = http.is_some() || settings.resp_store_config().is_some();
    let (url, cluster) = match (settings.database_url(), needs_database) {
        (_, false) => (None, None),
        (Some(url), true) => (Some(url.to_string()), None),
        (None, true) => {
            let mut cluster = start_embedded(&settings)?;
            if embedded_replicas > 0 {
                cluster
                    .start_replicas(embedded_replicas)
                    .context("starting the embedded replicas")?;
                for replica in cluster.replicas() {
                    eprintln!(
                        "sluice: replica listening at {} (log: {})",
                        replica.url(),
                        replica.log_file().display()
                    );
                    replica_urls.push(replica.url());
                }
            }
            // The password stays in its file: this URL may show in error messages.
            (Some(cluster.url()), Some(cluster))
        }
    };
    let result = runtime.block_on(serve(settings, views, url, replica_urls));
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
    let dir = match &settings.database.data_dir {
        Some(dir) => dir.clone(),
        None => default_data_dir().context("choosing a data directory")?,
    };
    eprintln!(
        "sluice: starting the embedded PostgreSQL in {}",
        dir.display()
    );
    let mut options = ClusterOptions::persistent(&dir).stop_on_drop(true);
    if let Some(port) = settings.database.pg_port {
        options = options.port(port);
    }
    let cluster = Cluster::start(options).context("starting the embedded PostgreSQL")?;
    eprintln!(
        "sluice: PostgreSQL is listening at {} (log: {})",
        cluster.url(),
        cluster.log_file().display()
    );
    eprintln!("sluice: connect with psql: {}", cluster.psql_command());
    Ok(cluster)
}

async fn serve(
    settings: Settings,
    views: Vec<LoadedView>,
    url: Option<String>,
    replica_urls: Vec<String>,
) -> Result<()> {
    let (stop, stopped) = watch::channel(false);
    let mut gates = tokio::task::JoinSet::new();
    let mut resp_store = None;
    if let Some(addr) = settings.resp.listen {
        let mut resp_config = settings.resp_config();
        resp_config.tls = settings.resp_tls()?;
        if let (Some(store_config), Some(url)) = (settings.resp_store_config(), &url) {
            // The keyspace is loaded before the listener opens: no client sees it half-loaded.
            let pg = sluice_pg::Config::parse(url).context(DATABASE_URL_UNREADABLE)?;
            let schema = store_config.schema.clone();
            let appendfsync = store_config.appendfsync;
            let follow = store_config.follow;
            let store = sluice_resp_store::PgStore::open(&pg, store_config).await?;
            let loaded = store.loaded();
            if follow {
                println!(
                    "sluice: Redis keyspace followed read-only from PostgreSQL schema \"{schema}\": \
                     {} keys loaded in {} ms",
                    loaded.keys, loaded.millis
                );
            } else {
                println!(
                    "sluice: Redis keyspace kept in PostgreSQL schema \"{schema}\" (appendfsync {}): \
                     {} keys loaded in {} ms",
                    appendfsync.name(),
                    loaded.keys,
                    loaded.millis
                );
            }
            resp_config.persistence = Some(store.persistence());
            resp_store = Some(store);
        }
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding the Redis gate to {addr}"))?;
        let local = listener.local_addr()?;
        let tls = if resp_config.tls.is_some() {
            " (TLS)"
        } else {
            ""
        };
        tracing::info!(addr = %local, tls = resp_config.tls.is_some(), "Redis protocol gate listening");
        println!("sluice: Redis protocol{tls} on {local}");
        if let Some(tls) = &resp_config.tls {
            spawn_tls_reload(tls.clone(), "Redis");
        }
        gates.spawn(run_resp(listener, resp_config, wait_for(stopped.clone())));
    }
    let pool = match &url {
        Some(url) => Some(primary_pool(url, &settings, !replica_urls.is_empty())?),
        None => None,
    };
    let mut replicas = None;
    if let (Some(addr), Some(pool)) = (settings.http_listen(), &pool) {
        describe(pool).await?;
        if !replica_urls.is_empty() {
            let max_lag = settings.database.max_replica_lag.0;
            let pools = ReadPools::connect(
                pool.clone(),
                &replica_urls,
                settings.pool_settings(),
                max_lag,
            )
            .await
            .context("checking the read replicas")?;
            pools.set_lsn_wait(settings.database.lsn_wait.0);
            println!(
                "sluice: table, view and view-file reads on {} replica(s) ({}), out beyond \
                 {max_lag:?} of lag",
                pools.replicas().len(),
                pools
                    .replicas()
                    .iter()
                    .map(|r| r.host().to_owned())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            replicas = Some(pools);
        }
        let mut router = Router::new();
        router.database(pool.clone());
        if let Some(replicas) = &replicas {
            router.replicas(replicas.clone());
        }
        let jwt = settings.jwt_config()?;
        let lsn = settings.lsn_options(replicas.is_some());
        for LoadedView { prefix, view } in views {
            let mut mount = ViewMount::new(view, pool.clone())
                .with_jwt(jwt.clone())
                .map_err(anyhow::Error::msg)?;
            if let Some(replicas) = &replicas {
                mount = mount.with_replicas(replicas.clone()).with_lsn(lsn);
            }
            let mount: Arc<dyn Mount> = Arc::new(mount);
            router.mount(&prefix, mount);
        }
        if settings.influx.enabled {
            let mut config = settings.influx_config();
            if settings.influx.jwt {
                config.jwt = Some(jwt.clone().ok_or_else(|| {
                    anyhow::anyhow!("[influx] jwt is set but [rest] jwt_secret is not")
                })?);
            }
            let api = sluice_influx::InfluxApi::with_lsn(pool.clone(), config, lsn);
            api.mount_all(&mut router);
            // Old partitions dropped, the next ones made ahead, hourly: a retention may come
            // from the configuration or from a client (InfluxQL, v2 buckets).
            api.spawn_retention(std::time::Duration::from_secs(3600));
            println!("sluice: InfluxDB write API on /write and /api/v2/write");
        }
        let rest_prefix = settings.rest.prefix.trim_end_matches('/').to_string();
        if settings.rest.enabled {
            let config = settings.rest_config()?;
            let reload_on_ddl = settings
                .rest
                .reload_on_ddl
                .unwrap_or(settings.database_url().is_none());
            if reload_on_ddl {
                let mut conn = pool.get().await.context("connecting to the database")?;
                if let Err(error) = sluice_rest::schema::install_ddl_trigger(&mut conn).await {
                    eprintln!(
                        "sluice: could not install the schema-change event trigger ({error}); \
                         reload with NOTIFY pgrst, 'reload schema' or SIGUSR1"
                    );
                }
            }
            let handle = sluice_rest::schema::SchemaHandle::load(
                pool.clone(),
                sluice_rest::schema::LoadScope::of(&config),
            )
            .await
            .context("loading the REST API's schema cache")?;
            handle.spawn_listeners();
            let source = sluice_rest::api::SchemaSource::Handle(handle);
            let mut api = sluice_rest::api::RestApi::new(pool.clone(), config, source);
            if let Some(replicas) = &replicas {
                api = api.with_replicas(replicas.clone()).with_lsn(lsn);
            }
            router.mount(&rest_prefix, Arc::new(api));
        }
        let tls = settings.http_tls()?;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding the HTTP gate to {addr}"))?;
        let local = listener.local_addr()?;
        let scheme = if tls.is_some() { "https" } else { "http" };
        tracing::info!(addr = %local, scheme, "HTTP gate listening");
        println!("sluice: HTTP on {scheme}://{local}");
        if settings.rest.enabled {
            println!(
                "sluice: REST API on {scheme}://{local}{rest_prefix}/ (schemas: {})",
                settings.rest.schemas.join(", ")
            );
        }
        if let Some(tls) = &tls {
            spawn_tls_reload(tls.clone(), "HTTP");
        }
        let mut options = settings.server_options();
        options.tls = tls;
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
    if let Some(store) = resp_store {
        // The last changes are committed before PostgreSQL (embedded or not) is let go.
        store.close().await;
    }
    if let Some(replicas) = replicas {
        replicas.close().await;
    }
    if let Some(pool) = pool {
        pool.close().await;
    }
    Ok(())
}

/// What a database URL that does not parse is reported as. The URL itself is not quoted: it may
/// hold a password, and the parse error names the option and the byte where it went wrong.
const DATABASE_URL_UNREADABLE: &str = "the database URL ([database] url, -d or DATABASE_URL)";

/// The primary's pool; with replicas its connections are named `sluice-primary` (unless the URL
/// names them), so `pg_stat_activity` tells them from the replicas' `sluice-replica-<i>`.
fn primary_pool(url: &str, settings: &Settings, with_replicas: bool) -> Result<Pool> {
    let mut config = sluice_pg::Config::parse(url)
        .map_err(anyhow::Error::new)
        .context(DATABASE_URL_UNREADABLE)?;
    if with_replicas && config.application_name().is_none() {
        config.set_application_name(PRIMARY_APPLICATION_NAME);
    }
    Ok(Pool::new(config, settings.pool_settings()))
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

/// Reads a gate's TLS certificate and key again on each SIGHUP (a renewed certificate is used
/// by the next connections; a bad file is logged and the one in use stays).
fn spawn_tls_reload(tls: Arc<sluice_tls::Tls>, gate: &'static str) {
    let Ok(mut hangups) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
    else {
        tracing::warn!(
            gate,
            "no SIGHUP handler: the TLS certificate is read at start only"
        );
        return;
    };
    tokio::spawn(async move {
        while hangups.recv().await.is_some() {
            match tls.reload() {
                Ok(()) => tracing::info!(gate, "SIGHUP: TLS certificate and key read again"),
                Err(error) => {
                    tracing::error!(gate, %error, "SIGHUP: keeping the TLS certificate in use")
                }
            }
        }
    });
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
