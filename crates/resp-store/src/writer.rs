//! The writer task: takes snapshots of dirty keys on the appendfsync clock and commits them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use sluice_pg::{Config, Connection};
use sluice_resp::durable::{AppendFsync, Durability};
use sluice_resp::engine::Store;
use tokio::sync::watch;

use crate::notify::Followers;
use crate::write::{Known, Statements, encode, write};
use crate::{Error, lock};

/// How often `appendfsync no` flushes.
const NO_FSYNC_INTERVAL: Duration = Duration::from_secs(5);
/// Rows that expired are deleted this often: with nothing else to write, and between flushes
/// that delete nothing else (those skip the delete statement, see [`write`]).
const EXPIRY_SWEEP: Duration = Duration::from_secs(1);
/// First and longest pause between attempts while PostgreSQL cannot be written.
const RETRY_FIRST: Duration = Duration::from_millis(100);
const RETRY_MAX: Duration = Duration::from_secs(2);
/// How often the writer looks for followers (see [`crate::notify`]).
const FOLLOWER_LOOK: Duration = Duration::from_secs(1);

/// Everything the writer task owns.
pub struct Writer {
    pub pg: Config,
    pub schema: String,
    pub store: Arc<Mutex<Store>>,
    pub durability: Arc<Durability>,
    /// The connection holding the owner lock (re-taken after it breaks).
    pub lock: Option<Connection>,
    pub conn: Option<Connection>,
    pub statements: Statements,
    /// Each list's grid and where its first element is in PostgreSQL, which keys may have
    /// element rows.
    known: Known,
    last_write: Instant,
    /// When rows that expired were last deleted.
    last_sweep: Instant,
    retry: Duration,
    /// Whether followers listen, so flushes notify them; looked at every [`FOLLOWER_LOOK`].
    pub followers: Followers,
    channel: String,
    next_look: tokio::time::Instant,
}

impl Writer {
    pub fn new(
        pg: Config,
        schema: String,
        store: Arc<Mutex<Store>>,
        durability: Arc<Durability>,
        lock: Connection,
        conn: Connection,
        known: Known,
    ) -> Self {
        let statements = Statements::new(&schema);
        let channel = crate::notify::channel(&schema);
        Self {
            pg,
            schema,
            store,
            durability,
            lock: Some(lock),
            conn: Some(conn),
            statements,
            known,
            last_write: Instant::now(),
            last_sweep: Instant::now(),
            retry: RETRY_FIRST,
            followers: Followers::default(),
            channel,
            next_look: tokio::time::Instant::now(),
        }
    }

    /// Looks for followers when the last look is [`FOLLOWER_LOOK`] old (a failure is tried
    /// again a second later; what was known stays). Before a flush is encoded, so
    /// the flushes after a look that found a follower notify it.
    async fn look_for_followers(&mut self) {
        if tokio::time::Instant::now() < self.next_look {
            return;
        }
        self.next_look = tokio::time::Instant::now() + FOLLOWER_LOOK;
        // A broken connection is made again by the next flush (and reported by it).
        let Some(conn) = self.conn.as_mut().filter(|c| !c.is_broken()) else {
            return;
        };
        if let Err(e) = self.followers.look(conn, &self.schema, &self.channel).await {
            tracing::debug!(error = %e, "looking for the Redis store's followers failed");
        }
    }

    /// Runs until `stop`, then makes a last flush (retried for up to `final_wait`).
    pub async fn run(mut self, mut stop: watch::Receiver<bool>, final_wait: Duration) {
        let interval = match self.durability.policy() {
            AppendFsync::Always => EXPIRY_SWEEP,
            AppendFsync::EverySec => Duration::from_secs(1),
            AppendFsync::No => NO_FSYNC_INTERVAL,
        };
        let durability = self.durability.clone();
        let mut next_tick = tokio::time::Instant::now() + interval;
        loop {
            let failing = durability.failure().is_some();
            let wake_at = if failing {
                tokio::time::Instant::now() + self.retry
            } else {
                next_tick
            };
            // Followers are looked for every second even when the clock is slower (`no`).
            let look_at = self.next_look.max(tokio::time::Instant::now());
            tokio::select! {
                biased;
                _ = stop.changed() => break,
                () = durability.flush_requested(), if !failing => {
                    // Under everysec and no, a connection's wake-up is only SAVE's.
                    if durability.policy() != AppendFsync::Always && !durability.take_forced() {
                        continue;
                    }
                }
                () = tokio::time::sleep_until(wake_at) => {
                    next_tick = tokio::time::Instant::now() + interval;
                }
                () = tokio::time::sleep_until(look_at), if look_at < wake_at => {
                    self.look_for_followers().await;
                    continue;
                }
            }
            let _ = self.flush_once().await;
        }
        let deadline = Instant::now() + final_wait;
        loop {
            if self.flush_once().await.is_ok() || Instant::now() >= deadline {
                break;
            }
            tokio::time::sleep(self.retry).await;
        }
        if let Some(failure) = durability.failure() {
            tracing::error!(error = %failure, unsaved_keys = self.store.lock().dirty_len(), "the Redis store's last flush failed: changes since the last commit are lost");
        }
    }

    /// Takes the dirty keys and writes them; on failure they are given back for the next try.
    pub async fn flush_once(&mut self) -> Result<(), Error> {
        self.look_for_followers().await;
        let heads = &self.known.heads;
        let snapshot = lock_store(&self.store)
            .await
            .take_dirty_in_chunks(|db, key| {
                let db = i32::try_from(db).unwrap_or(i32::MAX);
                heads.get(&(db, key.to_vec())).copied().unwrap_or_default()
            });
        let Some(snapshot) = snapshot else {
            return Ok(());
        };
        if snapshot.is_empty() && self.last_write.elapsed() < EXPIRY_SWEEP {
            self.durability.set_clean(snapshot.generation);
            return Ok(());
        }
        self.durability.set_flushing(snapshot.generation);
        let encoded = encode(&snapshot, &self.known, self.followers.present());
        // The delete statement also sweeps expired rows: sent when the flush needs it, and
        // at least every EXPIRY_SWEEP.
        let delete = self.last_sweep.elapsed() >= EXPIRY_SWEEP || encoded.needs_deletes();
        match self.attempt(&encoded, delete).await {
            Ok(info) => {
                encoded.update_known(&mut self.known);
                self.followers.sent += encoded.notices();
                self.last_write = Instant::now();
                if delete {
                    self.last_sweep = self.last_write;
                }
                self.retry = RETRY_FIRST;
                if self.durability.failure().is_some() {
                    tracing::info!("the Redis store writes to PostgreSQL again");
                }
                self.durability.set_failure(None);
                self.durability.set_committed(snapshot.generation, info);
                Ok(())
            }
            Err(e) => {
                let unsaved = {
                    let mut store = lock_store(&self.store).await;
                    store.restore_dirty(&snapshot);
                    store.dirty_len()
                };
                // Logged when the writer starts failing and each time the reason changes (the
                // server down, then refusing the login, say); clients read the public words.
                let public = e.public_message();
                if self.durability.failure().as_deref() != Some(public.as_str()) {
                    tracing::error!(error = %e, unsaved_keys = unsaved, "writing the Redis store to PostgreSQL failed; retrying");
                }
                self.durability.set_failure(Some(public));
                self.retry = (self.retry * 2).min(RETRY_MAX);
                Err(e)
            }
        }
    }

    async fn attempt(
        &mut self,
        encoded: &crate::write::Encoded,
        delete: bool,
    ) -> Result<sluice_resp::durable::CommitInfo, Error> {
        if self.lock.as_ref().is_none_or(Connection::is_broken) {
            // The session holding the lock ended (PostgreSQL restarted): nobody may have taken
            // the schema meanwhile, or this instance must stop writing to it.
            self.lock = None;
            self.lock = Some(lock::acquire(&self.pg, &self.schema).await?);
        }
        if self.conn.as_ref().is_none_or(Connection::is_broken) {
            self.conn = None;
            self.conn = Some(crate::connect_writer(&self.pg).await?);
        }
        let Some(conn) = self.conn.as_mut() else {
            return Err(Error::Load("no connection"));
        };
        let result = write(conn, &self.statements, encoded, delete).await;
        if result.is_err() && conn.is_broken() {
            self.conn = None;
        }
        result
    }
}

/// The store lock, awaited without blocking the runtime's thread: a Lua script may hold the
/// store for long, and this thread may be the one that must serve SCRIPT KILL.
pub(crate) async fn lock_store(store: &Mutex<Store>) -> parking_lot::MutexGuard<'_, Store> {
    let mut tries = 0u32;
    loop {
        if let Some(guard) = store.try_lock() {
            return guard;
        }
        // Connections hold it for a batch at a time: retry at once for a while, then (a long
        // script) every millisecond.
        tries += 1;
        if tries < 256 {
            tokio::task::yield_now().await;
        } else {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
}
