//! sluice-resp-store: the Redis keyspace kept in PostgreSQL tables, served from memory.
//!
//! [`PgStore::open`] takes the schema's owner lock, creates or checks the tables, loads the
//! keyspace into a tracked [`sluice_resp::engine::Store`] and starts the writer; the Redis gate
//! is then given [`PgStore::persistence`]. Every flush takes the keys changed since the last
//! one (a key written many times is written once) and replaces their rows, or only the rows of
//! the elements that changed, in one transaction sent in one round trip, notifying followers
//! when there are some. [`PgStore::follow`] opens a read-only follower of the schema's owner
//! instead (`follow.rs`). See docs/redis-store.md.

mod chunks;
mod codec;
mod follow;
mod load;
mod lock;
mod notify;
mod partial;
mod schema;
mod stream_meta;
mod write;
mod writer;

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use sluice_pg::{Config, Connection};
use sluice_resp::durable::{AppendFsync, Durability, Persistence};
use sluice_resp::engine::Store;
use tokio::sync::watch;

pub use follow::APPLICATION as FOLLOWER_APPLICATION;
pub use load::Loaded;
pub use lock::APPLICATION;
pub use schema::VERSION as SCHEMA_VERSION;
#[doc(hidden)]
pub use schema::create_at_version;

/// What failed, named with the step.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("Redis store: {step}: {source}")]
    Pg {
        step: &'static str,
        #[source]
        source: sluice_pg::Error,
    },
    #[error(
        "Redis store: schema {schema:?} is owned by another Sluice ({holder}); stop it, or give this one another [resp] schema"
    )]
    Locked { schema: String, holder: String },
    #[error(
        "Redis store: schema {schema:?} has version {found}, newer than this Sluice knows ({known})"
    )]
    NewerSchema {
        schema: String,
        found: i32,
        known: i32,
    },
    #[error(
        "Redis store: schema {schema:?} holds no Redis store at version {known} (found {found}); a follower never creates or migrates it: start its owner (follow = false) first"
    )]
    NotFollowable {
        schema: String,
        found: i32,
        known: i32,
    },
    #[error("Redis store: loading the keyspace: {0}")]
    Load(&'static str),
    #[error("Redis store: {0}")]
    Malformed(#[from] codec::Malformed),
    #[error("Redis store: loading the keyspace: list {key} of database {db}: {source}")]
    List {
        db: usize,
        /// The key as text, non-UTF-8 bytes escaped.
        key: String,
        #[source]
        source: codec::Malformed,
    },
}

impl Error {
    fn pg(step: &'static str, source: sluice_pg::Error) -> Self {
        Error::Pg { step, source }
    }

    /// The error in words Redis clients may read (`-MISCONF` replies, INFO's
    /// `sluice_last_error`): the step and what failed, as
    /// [`sluice_pg::Error::public_message`] says it, never PostgreSQL's address or the
    /// operating system's error text, which `Display` keeps for the log.
    pub fn public_message(&self) -> String {
        match self {
            Error::Pg { step, source } => {
                format!("Redis store: {step}: {}", source.public_message())
            }
            other => other.to_string(),
        }
    }
}

/// Settings of the store.
#[derive(Debug, Clone)]
pub struct StoreConfig {
    /// The schema holding the tables (`[resp] schema`).
    pub schema: String,
    /// When writes are committed (`[resp] appendfsync`).
    pub appendfsync: AppendFsync,
    /// Number of Redis databases.
    pub databases: usize,
    /// Longest wait of an `always` write for its commit.
    pub write_timeout: Duration,
    /// Keys allowed to wait unwritten while PostgreSQL fails before writes are refused.
    pub max_unsaved_keys: usize,
    /// At shutdown, how long the last flush is retried.
    pub final_flush_wait: Duration,
    /// Follow the schema's owner read-only (`[resp] follow`) instead of owning it.
    pub follow: bool,
}

impl Default for StoreConfig {
    fn default() -> Self {
        Self {
            schema: "sluice_redis".to_string(),
            appendfsync: AppendFsync::EverySec,
            databases: 16,
            write_timeout: Duration::from_secs(5),
            max_unsaved_keys: 1_000_000,
            final_flush_wait: Duration::from_secs(10),
            follow: false,
        }
    }
}

/// An open store: the lock held, the keyspace loaded, the writer running.
#[derive(Debug)]
pub struct PgStore {
    persistence: Persistence,
    loaded: Loaded,
    stop: watch::Sender<bool>,
    writer: tokio::task::JoinHandle<()>,
}

impl PgStore {
    /// Takes the owner lock, migrates the schema, loads the keyspace and starts the writer;
    /// with [`StoreConfig::follow`], [`PgStore::follow`]s instead.
    pub async fn open(pg: &Config, config: StoreConfig) -> Result<PgStore, Error> {
        if config.follow {
            return Self::follow(pg, config).await;
        }
        let lock = lock::acquire(pg, &config.schema).await?;
        let mut conn = connect(pg).await?;
        schema::migrate(&mut conn, &config.schema).await?;
        let mut store = Store::tracked(config.databases);
        let (loaded, known) =
            load::load(&mut conn, &config.schema, &mut store, load::Scope::All).await?;
        let functions = load::load_functions(&mut conn, &config.schema).await?;
        for_writing(&mut conn).await?;
        tracing::info!(
            keys = loaded.keys,
            elements = loaded.elements,
            millis = loaded.millis,
            schema = %config.schema,
            "Redis keyspace loaded from PostgreSQL"
        );
        let store = Arc::new(Mutex::new(store));
        let durability = Arc::new(Durability::new(
            config.appendfsync,
            config.write_timeout,
            config.max_unsaved_keys,
        ));
        let (stop, stopped) = watch::channel(false);
        let writer = writer::Writer::new(
            pg.clone(),
            config.schema.clone(),
            store.clone(),
            durability.clone(),
            lock,
            conn,
            known,
        );
        let writer = tokio::spawn(writer.run(stopped, config.final_flush_wait));
        Ok(PgStore {
            persistence: Persistence {
                store,
                durability,
                sink: "postgres",
                functions,
                replica: None,
            },
            loaded,
            stop,
            writer,
        })
    }

    /// A read-only follower of the schema's owner: LISTENs, loads the keyspace, then keeps it
    /// current from the owner's notifications. It takes no owner lock and writes nothing; the
    /// gate refuses writes (READONLY). The schema must exist at this build's version.
    pub async fn follow(pg: &Config, config: StoreConfig) -> Result<PgStore, Error> {
        let (host, port) = pg
            .targets()
            .first()
            .map_or((String::new(), 0), |t| (t.host.to_string(), t.port));
        let replica = Arc::new(sluice_resp::replica::Replica::new(host, port));
        let store = Arc::new(Mutex::new(Store::new(config.databases)));
        let follower = follow::Follower::new(
            pg.clone(),
            config.schema.clone(),
            config.databases,
            store.clone(),
            replica.clone(),
        );
        let (session, loaded) = follower.start().await?;
        let functions = {
            let mut conn = connect(pg).await?;
            let functions = load::load_functions(&mut conn, &config.schema).await?;
            let _ = conn.close().await;
            functions
        };
        tracing::info!(
            keys = loaded.keys,
            elements = loaded.elements,
            millis = loaded.millis,
            schema = %config.schema,
            "Redis keyspace loaded from PostgreSQL, following its owner"
        );
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(follower.run(session, stopped));
        Ok(PgStore {
            persistence: Persistence {
                store,
                // Nothing is tracked: every SAVE finds its generation (0) committed.
                durability: Arc::new(Durability::new(
                    config.appendfsync,
                    config.write_timeout,
                    config.max_unsaved_keys,
                )),
                sink: "postgres",
                functions,
                replica: Some(replica),
            },
            loaded,
            stop,
            writer: task,
        })
    }

    /// What the Redis gate is given ([`sluice_resp::Config::persistence`]).
    pub fn persistence(&self) -> Persistence {
        self.persistence.clone()
    }

    /// What the start-up load found.
    pub fn loaded(&self) -> Loaded {
        self.loaded
    }

    /// Stops the writer after a last flush (call after the gate stopped), releasing the lock.
    pub async fn close(self) {
        let _ = self.stop.send(true);
        let _ = self.writer.await;
    }

    /// Stops the writer without a last flush, as a crash would (tests of what `always` keeps).
    pub fn abandon(self) {
        self.writer.abort();
    }
}

/// A connection of the store, named so a refused second instance can say who holds the lock.
/// Readies a connection for the writer's statements. Their plans are cached from the first
/// flush, often made while the tables were nearly empty, when a sequential scan is cheapest; the
/// cached plan then scanned the whole `keys` table at every flush as it grew (SET with random
/// keys under `always`: 24 k falling to 2 k writes/s over 100 k keys). Every statement of a flush
/// finds its rows by an index, so sequential scans are ruled out for this session.
async fn for_writing(conn: &mut Connection) -> Result<(), Error> {
    conn.batch_execute("SET enable_seqscan = off")
        .await
        .map_err(|e| Error::pg("readying the writer's connection", e))
}

/// A connection for the writer.
async fn connect_writer(pg: &Config) -> Result<Connection, Error> {
    let mut conn = connect(pg).await?;
    for_writing(&mut conn).await?;
    Ok(conn)
}

async fn connect(pg: &Config) -> Result<Connection, Error> {
    connect_as(pg, APPLICATION).await
}

/// A connection named `application`.
async fn connect_as(pg: &Config, application: &str) -> Result<Connection, Error> {
    let mut conn = Connection::connect_with(pg)
        .await
        .map_err(|e| Error::pg("connecting", e))?;
    conn.batch_execute(&format!(
        "SET application_name = {}",
        sluice_pg::sql::quote_literal(application)
    ))
    .await
    .map_err(|e| Error::pg("naming the connection", e))?;
    Ok(conn)
}
