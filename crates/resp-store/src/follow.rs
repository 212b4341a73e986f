//! A read-only follower: the keyspace loaded, then kept current from the owner's notifications.
//!
//! The follower's session LISTENs on the schema's channel and takes the shared follower lock
//! before it loads anything, so no commit after its load goes unheard (see [`crate::notify`]
//! for how the owner learns it must notify). Each batch of notifications names keys; they are
//! read again from the tables in one snapshot and put in place, or removed, without marking
//! anything for a writer (the store is not tracked). If the session breaks, a new one LISTENs
//! and the whole keyspace is read again into a new copy, swapped in once complete while the old
//! one keeps being served.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use sluice_pg::sql::{quote_ident, quote_literal};
use sluice_pg::{Config, Connection};
use sluice_resp::engine::Store;
use sluice_resp::replica::Replica;
use tokio::sync::watch;

use crate::load::{Loaded, Scope};
use crate::notify::{FOLLOW_CLASS, Token};
use crate::partial::{self, PartKey, PartRead};
use crate::{Error, load, schema};

/// Application name of a follower's session (find it in `pg_stat_activity`).
pub const APPLICATION: &str = "sluice redis follower";

/// How long a new session waits for the owner's greeting before it loads anyway (the owner
/// looks for followers every second; without an owner nothing changes meanwhile). A greeting
/// heard after the load makes it read everything again.
const GREETING_WAIT: Duration = Duration::from_secs(3);
/// Re-reads start at most this often: notifications arriving sooner are gathered into the
/// next read (under a steady stream of commits the owner sends hundreds a second, and a read
/// per commit would load PostgreSQL and the machine as much as the owner's own writes). An
/// idle follower reads at once.
const MIN_READ_INTERVAL: Duration = Duration::from_millis(10);
/// A batch naming more keys than this is served by reading everything again.
const MAX_REREAD: usize = 50_000;
/// First and longest pause between attempts to open a session again.
const RETRY_FIRST: Duration = Duration::from_millis(100);
const RETRY_MAX: Duration = Duration::from_secs(2);

/// What the follower task owns.
pub struct Follower {
    pg: Config,
    schema: String,
    channel: String,
    databases: usize,
    store: Arc<Mutex<Store>>,
    replica: Arc<Replica>,
}

/// A session LISTENing on the channel and holding the follower lock.
pub struct Session {
    conn: Connection,
    /// Its backend's pid, which the owner's greeting names.
    pid: i32,
    /// Whether the owner greeted this session (every commit since is heard).
    greeted: bool,
}

impl Follower {
    /// A follower of `schema` serving `store`, its link shown in `replica`.
    pub fn new(
        pg: Config,
        schema: String,
        databases: usize,
        store: Arc<Mutex<Store>>,
        replica: Arc<Replica>,
    ) -> Self {
        let channel = crate::notify::channel(&schema);
        Self {
            pg,
            schema,
            channel,
            databases,
            store,
            replica,
        }
    }

    /// Opens a session and loads the keyspace into the store (the start: errors are the
    /// caller's).
    pub async fn start(&self) -> Result<(Session, Loaded), Error> {
        let mut session = self.session().await?;
        let (store, loaded) = self.catch_up(&mut session).await?;
        crate::writer::lock_store(&self.store)
            .await
            .replace_dbs(store);
        self.replica.set_link(true);
        Ok((session, loaded))
    }

    /// Follows the owner until `stop`, opening a new session whenever one breaks.
    pub async fn run(self, mut session: Session, mut stop: watch::Receiver<bool>) {
        let mut retry = RETRY_FIRST;
        loop {
            let result = tokio::select! {
                _ = stop.changed() => return,
                r = self.listen(&mut session) => r,
            };
            self.replica.set_link(false);
            if let Err(e) = result {
                tracing::warn!(error = %e, "the Redis store follower lost its session; reconnecting");
            }
            loop {
                let opened = tokio::select! {
                    _ = stop.changed() => return,
                    r = self.reopen() => r,
                };
                match opened {
                    Ok(s) => {
                        session = s;
                        retry = RETRY_FIRST;
                        tracing::info!(schema = %self.schema, "the Redis store follower is following again");
                        break;
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "the Redis store follower could not reconnect; retrying");
                        tokio::select! {
                            _ = stop.changed() => return,
                            () = tokio::time::sleep(retry) => {}
                        }
                        retry = (retry * 2).min(RETRY_MAX);
                    }
                }
            }
        }
    }

    /// A new session, the keyspace read again and swapped in.
    async fn reopen(&self) -> Result<Session, Error> {
        let mut session = self.session().await?;
        let (store, _) = self.catch_up(&mut session).await?;
        // Libraries changed while the session was down were not heard either.
        let libraries = load::load_functions(&mut session.conn, &self.schema).await?;
        crate::writer::lock_store(&self.store)
            .await
            .replace_dbs(store);
        self.replica.offer_libraries(libraries);
        self.replica.reloaded();
        self.replica.set_link(true);
        Ok(session)
    }

    /// Connects, LISTENs, takes the follower lock, checks the schema.
    async fn session(&self) -> Result<Session, Error> {
        let mut conn = crate::connect_as(&self.pg, APPLICATION).await?;
        // LISTEN first, committed on its own: the lock is what makes the owner greet this
        // session, and LISTEN in the same implicit transaction would only take effect after
        // the lock is seen, so the greeting could go unheard.
        conn.batch_execute(&format!("LISTEN {}", quote_ident(&self.channel)))
            .await
            .map_err(|e| Error::pg("listening for the owner's changes", e))?;
        conn.batch_execute(&format!(
            "SELECT pg_advisory_lock_shared({FOLLOW_CLASS}, hashtext({}))",
            quote_literal(&self.schema)
        ))
        .await
        .map_err(|e| Error::pg("taking the follower lock", e))?;
        let step = "reading the session's pid";
        let pid: i32 = conn
            .query_one("SELECT pg_backend_pid()", &[])
            .await
            .map_err(|e| Error::pg(step, e))?
            .get(0)
            .map_err(|e| Error::pg(step, e))?;
        schema::check_followable(&mut conn, &self.schema).await?;
        Ok(Session {
            conn,
            pid,
            greeted: false,
        })
    }

    /// Waits a while for the owner's greeting, then reads the whole keyspace into a new store.
    async fn catch_up(&self, session: &mut Session) -> Result<(Store, Loaded), Error> {
        let deadline = tokio::time::Instant::now() + GREETING_WAIT;
        while !session.greeted {
            match tokio::time::timeout_at(deadline, session.conn.wait_for_notification()).await {
                Err(_) => break,
                Ok(n) => {
                    let n = n.map_err(|e| Error::pg("listening for the owner's changes", e))?;
                    session.greeted |= greets(&n.payload, session.pid);
                }
            }
        }
        // What was heard so far committed before the load's snapshot: the load has it.
        for n in session.conn.take_notifications() {
            session.greeted |= greets(&n.payload, session.pid);
        }
        if !session.greeted {
            tracing::info!(
                schema = %self.schema,
                "no owner greeted the Redis store follower yet; loading what the tables hold"
            );
        }
        let mut store = Store::new(self.databases);
        let loaded = self.read(&mut session.conn, &mut store, Scope::All).await?;
        Ok((store, loaded))
    }

    /// Reads `scope` in one snapshot.
    async fn read(
        &self,
        conn: &mut Connection,
        store: &mut Store,
        scope: Scope<'_>,
    ) -> Result<Loaded, Error> {
        conn.batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            .await
            .map_err(|e| Error::pg("reading the keys", e))?;
        let (loaded, _) = load::load(conn, &self.schema, store, scope).await?;
        conn.batch_execute("COMMIT")
            .await
            .map_err(|e| Error::pg("reading the keys", e))?;
        Ok(loaded)
    }

    /// Applies batches of notifications until the session fails.
    async fn listen(&self, session: &mut Session) -> Result<(), Error> {
        let step = "listening for the owner's changes";
        let mut last_read = tokio::time::Instant::now() - MIN_READ_INTERVAL;
        loop {
            let first = session
                .conn
                .wait_for_notification()
                .await
                .map_err(|e| Error::pg(step, e))?;
            tokio::time::sleep_until(last_read + MIN_READ_INTERVAL).await;
            last_read = tokio::time::Instant::now();
            let mut batch = vec![first];
            // Whatever else has arrived: the timeout polls the (cancel-safe) wait once.
            while let Ok(n) =
                tokio::time::timeout(Duration::ZERO, session.conn.wait_for_notification()).await
            {
                batch.push(n.map_err(|e| Error::pg(step, e))?);
            }
            let mut everything = false;
            let mut functions = false;
            let mut cleared = BTreeSet::new();
            let mut keys = HashSet::new();
            let mut parts: HashMap<(i32, Vec<u8>), BTreeSet<Vec<u8>>> = HashMap::new();
            for n in &batch {
                for token in crate::notify::parse(&n.payload) {
                    match token {
                        Token::Key(db, key) => {
                            keys.insert((db, key));
                        }
                        Token::Part(db, key, members) => {
                            parts.entry((db, key)).or_default().extend(members);
                        }
                        Token::Cleared(db) => {
                            cleared.insert(db);
                        }
                        Token::All => everything = true,
                        Token::Functions => functions = true,
                        Token::Hello(pids) => {
                            // A greeting after the load: commits between the load and the
                            // owner's look may have gone unheard.
                            if !session.greeted && pids.contains(&session.pid) {
                                session.greeted = true;
                                everything = true;
                            }
                        }
                    }
                }
            }
            if functions || everything {
                // Everything read again may follow missed notifications: libraries too.
                let libraries = load::load_functions(&mut session.conn, &self.schema).await?;
                self.replica.offer_libraries(libraries);
            }
            // A key also named whole, or in a database emptied in this batch, is read whole.
            parts.retain(|key, _| !keys.contains(key) && !cleared.contains(&key.0));
            if everything || keys.len() + parts.len() > MAX_REREAD {
                let mut store = Store::new(self.databases);
                self.read(&mut session.conn, &mut store, Scope::All).await?;
                crate::writer::lock_store(&self.store)
                    .await
                    .replace_dbs(store);
                self.replica.reloaded();
                self.replica.heard(batch.len() as u64, 0, 0);
                continue;
            }
            let mut keys: Vec<(i32, Vec<u8>)> = keys.into_iter().collect();
            let parts: Vec<PartKey> = parts
                .into_iter()
                .map(|(key, members)| (key, members.into_iter().collect()))
                .collect();
            let members: usize = parts.iter().map(|(_, m)| m.len()).sum();
            let mut scratch = Store::new(self.databases);
            let read = self
                .read_changes(&mut session.conn, &mut scratch, &mut keys, &parts)
                .await?;
            let mut retry = Vec::new();
            {
                let mut store = crate::writer::lock_store(&self.store).await;
                // Emptied first: the keys named in the batch are read as they are now, after.
                for &db in &cleared {
                    if let Ok(db) = usize::try_from(db)
                        && db < store.db_count()
                    {
                        store.flush_db(db);
                    }
                }
                for (db, key) in &keys {
                    let Ok(db) = usize::try_from(*db) else {
                        continue;
                    };
                    let entry = scratch.take_loaded(db, key);
                    store.follow_key(db, key, entry);
                }
                for (((db, key), _), read) in parts.iter().zip(read) {
                    let Ok(index) = usize::try_from(*db) else {
                        continue;
                    };
                    match read {
                        PartRead::Gone => store.follow_key(index, key, None),
                        // Read whole with the keys named whole.
                        PartRead::Whole => {}
                        PartRead::Members(expire_at, elements) => {
                            if !store.follow_part(index, key, expire_at, &elements) {
                                retry.push((*db, key.clone()));
                            }
                        }
                    }
                }
            }
            // A key written in part that is not here as that type (it expired here first, say)
            // is read whole, in a snapshot of its own: it is read again at its next change.
            if !retry.is_empty() {
                let mut scratch = Store::new(self.databases);
                self.read(&mut session.conn, &mut scratch, Scope::Keys(&retry))
                    .await?;
                let mut store = crate::writer::lock_store(&self.store).await;
                for (db, key) in &retry {
                    if let Ok(db) = usize::try_from(*db) {
                        let entry = scratch.take_loaded(db, key);
                        store.follow_key(db, key, entry);
                    }
                }
            }
            self.replica.heard(
                batch.len() as u64,
                (keys.len() + retry.len()) as u64,
                members as u64,
            );
        }
    }

    /// Reads, in one snapshot, the keys written in part (their named members) and the keys
    /// named whole, adding to `keys` those written in part that must be read whole.
    async fn read_changes(
        &self,
        conn: &mut Connection,
        scratch: &mut Store,
        keys: &mut Vec<(i32, Vec<u8>)>,
        parts: &[PartKey],
    ) -> Result<Vec<PartRead>, Error> {
        if keys.is_empty() && parts.is_empty() {
            return Ok(Vec::new());
        }
        let step = "reading the changed keys";
        conn.batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            .await
            .map_err(|e| Error::pg(step, e))?;
        let read = match parts.is_empty() {
            true => Vec::new(),
            false => partial::read(conn, &self.schema, self.databases, parts).await?,
        };
        for (((db, key), _), read) in parts.iter().zip(&read) {
            if matches!(read, PartRead::Whole) {
                keys.push((*db, key.clone()));
            }
        }
        if !keys.is_empty() {
            load::load(conn, &self.schema, scratch, Scope::Keys(keys)).await?;
        }
        conn.batch_execute("COMMIT")
            .await
            .map_err(|e| Error::pg(step, e))?;
        Ok(read)
    }
}

/// Whether `payload` holds the owner's greeting of backend `pid`.
fn greets(payload: &str, pid: i32) -> bool {
    crate::notify::parse(payload).any(|t| matches!(t, Token::Hello(pids) if pids.contains(&pid)))
}
