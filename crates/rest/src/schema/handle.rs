//! The schema cache in use: an immutable snapshot that requests take without waiting, replaced
//! whole when a reload has built the next one off the request path. Reloads come from
//! `NOTIFY pgrst, 'reload schema'` or `'reload config'` (PostgREST's channel), SIGUSR1, DDL through an event trigger
//! Sluice installs, or a request for a relation or function the snapshot does not know (at most
//! once per interval, so unknown names cannot make the server reload continuously).

use super::SchemaCache;
use parking_lot::RwLock;
use sluice_pg::{Connection, Pool};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The channel PostgREST listens on; migration scripts already notify it.
pub const CHANNEL: &str = "pgrst";

/// Notifications arriving within this window after one are served by the same reload.
const DEBOUNCE: Duration = Duration::from_millis(50);

/// Why a reload failed.
#[derive(Debug, thiserror::Error)]
pub enum ReloadError {
    /// No connection could be had from the pool.
    #[error("no connection to load the schema cache: {0}")]
    Pool(#[from] sluice_pg::PoolError),
    /// The catalog queries failed.
    #[error("loading the schema cache: {0}")]
    Load(#[from] sluice_pg::Error),
}

/// The current schema cache and how to rebuild it.
pub struct SchemaHandle {
    current: RwLock<Arc<SchemaCache>>,
    pool: Pool,
    scope: LoadScope,
    /// Held while a reload runs; holds when the last one finished.
    reloading: tokio::sync::Mutex<Option<Instant>>,
}

impl SchemaHandle {
    /// Loads the cache of what `scope` says once.
    pub async fn load(pool: Pool, scope: LoadScope) -> Result<Arc<SchemaHandle>, ReloadError> {
        let cache = build(&pool, &scope).await?;
        Ok(Arc::new(SchemaHandle {
            current: RwLock::new(Arc::new(cache)),
            pool,
            scope,
            reloading: tokio::sync::Mutex::new(Some(Instant::now())),
        }))
    }

    /// The snapshot to serve a request with.
    pub fn current(&self) -> Arc<SchemaCache> {
        self.current.read().clone()
    }

    /// Builds a new cache and swaps it in; requests keep the old one meanwhile.
    pub async fn reload(&self) -> Result<(), ReloadError> {
        let mut last = self.reloading.lock().await;
        self.rebuild(&mut last).await
    }

    /// Reloads unless one finished less than `min_interval` ago; a reload already running is
    /// waited for instead. Whether a reload ran.
    pub async fn refresh(&self, min_interval: Duration) -> bool {
        let mut last = self.reloading.lock().await;
        if last.is_some_and(|at| at.elapsed() < min_interval) {
            return false;
        }
        match self.rebuild(&mut last).await {
            Ok(()) => true,
            Err(error) => {
                tracing::warn!(%error, "reloading the schema cache failed; the old one stays");
                false
            }
        }
    }

    async fn rebuild(&self, last: &mut Option<Instant>) -> Result<(), ReloadError> {
        let started = Instant::now();
        let cache = build(&self.pool, &self.scope).await?;
        let tables = cache.tables.len();
        *self.current.write() = Arc::new(cache);
        *last = Some(Instant::now());
        tracing::info!(
            tables,
            millis = started.elapsed().as_millis() as u64,
            "schema cache reloaded"
        );
        Ok(())
    }

    /// Listens on [`CHANNEL`] on a connection of its own and reloads on `reload schema` (an
    /// empty payload too, as PostgREST does); on a lost connection it reconnects with backoff
    /// and reloads, since notifications may have been missed. Also reloads on SIGUSR1.
    pub fn spawn_listeners(self: &Arc<Self>) {
        let handle = self.clone();
        tokio::spawn(async move { handle.listen().await });
        let handle = self.clone();
        tokio::spawn(async move {
            let Ok(mut signals) =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::user_defined1())
            else {
                return;
            };
            while signals.recv().await.is_some() {
                if let Err(error) = handle.reload().await {
                    tracing::warn!(%error, "reloading the schema cache on SIGUSR1 failed");
                }
            }
        });
    }

    async fn listen(self: Arc<Self>) {
        let mut backoff = Duration::from_millis(100);
        let mut first = true;
        loop {
            match self.listen_once(first).await {
                Ok(()) => return,
                Err(error) => {
                    tracing::warn!(%error, "the schema cache's LISTEN connection failed; retrying");
                }
            }
            first = false;
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(10));
        }
    }

    async fn listen_once(&self, first: bool) -> Result<(), ReloadError> {
        let mut conn = Connection::connect_with(self.pool.config()).await?;
        conn.batch_execute(&format!("LISTEN {CHANNEL}")).await?;
        if !first {
            self.reload().await?;
        }
        loop {
            let notification = conn.wait_for_notification().await?;
            match notification.payload.trim() {
                "" | "reload schema" => {}
                // The roles' settings are read with the cache; Sluice's own, at start.
                "reload config" => tracing::info!(
                    "NOTIFY pgrst, 'reload config': reloading the roles' settings with the schema \
                     cache (sluice.toml is read at start only)"
                ),
                _ => continue,
            }
            // A burst of DDL sends a burst of notifications: one reload serves them all.
            let deadline = tokio::time::Instant::now() + DEBOUNCE;
            while let Ok(Ok(_)) =
                tokio::time::timeout_at(deadline, conn.wait_for_notification()).await
            {}
            self.reload().await?;
        }
    }
}

/// What a load of the schema cache reads, from the REST settings.
#[derive(Debug, Clone)]
pub struct LoadScope {
    /// The exposed schemas.
    pub schemas: Vec<String>,
    /// The extra search path, where computed fields are also looked for.
    pub extra_search_path: Vec<String>,
    /// The settings functions' `SET` clauses hoist to a call's transaction.
    pub hoisted_tx_settings: Vec<String>,
}

impl LoadScope {
    /// The scope the REST settings give.
    pub fn of(config: &crate::RestConfig) -> LoadScope {
        LoadScope {
            schemas: config.schemas.clone(),
            extra_search_path: config.extra_search_path.clone(),
            hoisted_tx_settings: config.hoisted_tx_settings.clone(),
        }
    }
}

async fn build(pool: &Pool, scope: &LoadScope) -> Result<SchemaCache, ReloadError> {
    let mut conn = pool.get().await?;
    Ok(super::load_searching(
        &mut conn,
        &scope.schemas,
        &scope.extra_search_path,
        &scope.hoisted_tx_settings,
    )
    .await?)
}

/// Installs (or replaces) the event triggers that notify [`CHANNEL`] after DDL, so schema
/// changes reach the cache of every Sluice on the database without anyone asking. Commands that
/// touch only temporary objects are left out: the staging tables of bulk writes (REST, views,
/// the Influx merge) are `CREATE TEMP TABLE ... ON COMMIT DROP`, and a reload of every
/// gateway's cache for each of them would be a reload per write. Needs a superuser; the
/// functions live in the schema `sluice`, outside the exposed ones.
pub async fn install_ddl_trigger(conn: &mut Connection) -> Result<(), sluice_pg::Error> {
    conn.batch_execute(
        "CREATE SCHEMA IF NOT EXISTS sluice;
         CREATE OR REPLACE FUNCTION sluice.notify_schema_change() RETURNS event_trigger
           LANGUAGE plpgsql AS $$
           BEGIN
             IF EXISTS (SELECT FROM pg_catalog.pg_event_trigger_ddl_commands() AS c
                        WHERE c.schema_name IS NULL OR c.schema_name !~ '^pg_temp') THEN
               NOTIFY pgrst, 'reload schema';
             END IF;
           END $$;
         CREATE OR REPLACE FUNCTION sluice.notify_schema_drop() RETURNS event_trigger
           LANGUAGE plpgsql AS $$
           BEGIN
             IF EXISTS (SELECT FROM pg_catalog.pg_event_trigger_dropped_objects() AS d
                        WHERE NOT d.is_temporary) THEN
               NOTIFY pgrst, 'reload schema';
             END IF;
           END $$;
         DROP EVENT TRIGGER IF EXISTS sluice_schema_change_end;
         CREATE EVENT TRIGGER sluice_schema_change_end ON ddl_command_end
           EXECUTE FUNCTION sluice.notify_schema_change();
         DROP EVENT TRIGGER IF EXISTS sluice_schema_change_drop;
         CREATE EVENT TRIGGER sluice_schema_change_drop ON sql_drop
           EXECUTE FUNCTION sluice.notify_schema_drop();",
    )
    .await
}
