//! sluice-resp: the Redis protocol gate (RESP2/RESP3) over an in-memory engine.
//!
//! Layers: [`frame`] parses requests without I/O, [`reply`] encodes replies, `cmd` holds one
//! file per command family, [`engine`] is the keyspace boundary, `conn` drives one socket.

#![warn(missing_docs)]

mod acl;
mod arrival;
mod busy_poll;
pub mod cmd;
mod conn;
pub mod durable;
pub mod engine;
pub mod frame;
pub mod glob;
mod hub;
pub mod num;
mod observe;
mod params;
mod pause;
pub mod replica;
pub mod reply;
mod script;
mod session;
mod shared;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;

pub use acl::LoadError;
#[doc(hidden)]
pub use acl::fuzz as fuzz_acl;
pub use frame::{Parsed, ProtocolError, RequestParser};
pub use script::harness::ScriptHarness;

/// Every CONFIG parameter Sluice knows, its alias, and what setting it does in Sluice (for
/// COMPAT.md).
pub fn config_parameters()
-> impl Iterator<Item = (&'static str, Option<&'static str>, &'static str)> {
    params::described()
}

/// Configuration of the RESP gate.
#[derive(Debug, Clone)]
pub struct Config {
    /// Password required by AUTH/HELLO (Redis's requirepass); none means no auth.
    pub password: Option<String>,
    /// Number of databases (SELECT 0..n-1); Redis's default is 16.
    pub databases: usize,
    /// Connection threads, each a one-worker runtime that owns its connections (no cross-thread
    /// wake-ups); 0 runs connections as tasks on the caller's runtime.
    pub io_threads: usize,
    /// How long a connection thread keeps polling its sockets after its last request before it
    /// sleeps (see `busy_poll.rs`); zero sleeps at once. Only for connection threads
    /// (`io_threads` > 0).
    pub busy_poll: Duration,
    /// A store kept in a persistence sink (`[resp] store = "postgres"`), loaded before `run`
    /// is called; none keeps the keyspace in memory only.
    pub persistence: Option<durable::Persistence>,
    /// TLS on the listener (Redis 6's tls-port); none serves plain TCP. Reloading it (SIGHUP
    /// in `sluice serve`) changes what new connections are served; open ones keep theirs.
    pub tls: Option<Arc<sluice_tls::Tls>>,
    /// Redis's aclfile: users are loaded from it at start and by ACL LOAD, written by ACL SAVE.
    pub aclfile: Option<std::path::PathBuf>,
    /// Users declared in the configuration (Redis's `user` directives, each `name rules...`);
    /// not with `aclfile`.
    pub users: Vec<String>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            password: None,
            databases: 16,
            io_threads: 0,
            busy_poll: busy_poll::default_window(),
            persistence: None,
            tls: None,
            aclfile: None,
            users: Vec::new(),
        }
    }
}

/// Errors of the gate itself (per-connection errors close that connection only).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The listener's local address could not be read.
    #[error("reading the listener's local address failed: {0}")]
    LocalAddr(#[source] std::io::Error),
    /// A connection thread or its runtime could not be started.
    #[error("starting a connection thread failed: {0}")]
    Runtime(#[source] std::io::Error),
    /// The Lua interpreters for EVAL and FUNCTION could not be created.
    #[error(transparent)]
    Scripting(#[from] script::StartError),
    /// The ACL file or the users declared could not be loaded.
    #[error("loading the Redis users: {0}")]
    Acl(#[source] acl::LoadError),
}

/// A follower's gate: installs the primary's function libraries each time they change.
async fn follow_libraries(
    shared: Arc<shared::Shared>,
    replica: Arc<replica::Replica>,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        tokio::select! {
            _ = stop.changed() => return,
            libraries = replica.next_libraries() => {
                if let Err(error) = shared.scripting.replace_libraries(&libraries).await {
                    tracing::error!(%error, "the primary's function libraries could not be installed; the previous ones stay");
                }
            }
        }
    }
}

/// Serves RESP clients accepted on `listener` until `shutdown` completes. Each connection runs
/// in its own task on the current tokio runtime; an active-expiry task samples keys with a TTL
/// ten times a second.
pub async fn run(
    listener: TcpListener,
    config: Config,
    shutdown: impl Future<Output = ()>,
) -> Result<(), Error> {
    let local = listener.local_addr().map_err(Error::LocalAddr)?;
    let shared = Arc::new(shared::Shared::new(&config, local.port())?);
    load_users(&shared.acl, &config)?;
    {
        let mut params = shared.params.write();
        params.start_value("bind", &local.ip().to_string());
        if let Some(aclfile) = &config.aclfile {
            params.start_value("aclfile", &aclfile.to_string_lossy());
        }
    }
    let (stop_tx, stop_rx) = watch::channel(false);
    let expiry = tokio::spawn(expiry_loop(shared.clone(), stop_rx.clone()));
    if let Some(replica) = config.persistence.as_ref().and_then(|p| p.replica.clone()) {
        tokio::spawn(follow_libraries(shared.clone(), replica, stop_rx.clone()));
    }
    let io_threads = (0..config.io_threads)
        .map(|i| io_thread(i, config.busy_poll, shared.clone(), stop_rx.clone()))
        .collect::<Result<Vec<_>, _>>()?;
    let mut next_thread = 0;
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            () = shared.shutdown.notified() => {
                tracing::info!("SHUTDOWN asked by a Redis client");
                break;
            }
            accepted = listener.accept() => match accepted {
                Ok((stream, addr)) => {
                    let tls = match &config.tls {
                        // A poisoned lock has no acceptor: the connection is dropped.
                        Some(tls) => match tls.acceptor() {
                            Some(acceptor) => Some(acceptor),
                            None => continue,
                        },
                        None => None,
                    };
                    if io_threads.is_empty() {
                        tokio::spawn(serve_logged(stream, addr, tls, shared.clone(), stop_rx.clone()));
                    } else {
                        // Round robin over the connection threads.
                        next_thread = (next_thread + 1) % io_threads.len();
                        match stream.into_std() {
                            Ok(std_stream) => {
                                let _ = io_threads[next_thread].send((std_stream, addr, tls));
                            }
                            Err(e) => tracing::warn!(%addr, error = %e, "handing a connection to its thread failed"),
                        }
                    }
                }
                Err(e) => {
                    // Out of file descriptors and similar: wait a little instead of spinning.
                    tracing::warn!(error = %e, "accepting a RESP connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
        }
    }
    let _ = stop_tx.send(true);
    let _ = expiry.await;
    Ok(())
}

/// Loads the users of the ACL file or the configuration (Redis refuses both at once).
fn load_users(acl: &acl::Acl, config: &Config) -> Result<(), Error> {
    match (&config.aclfile, config.users.is_empty()) {
        (Some(_), false) => Err(Error::Acl(acl::LoadError::Invalid(
            "users are declared both in the configuration and in an ACL file: declare them in \
             one place only"
                .to_owned(),
        ))),
        (Some(_), true) => acl.load_file().map(|_| ()).map_err(Error::Acl),
        (None, false) => acl.declare(&config.users).map_err(Error::Acl),
        (None, true) => Ok(()),
    }
}

/// How long a client may take over its TLS handshake before it is dropped.
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves one accepted connection: plain, or after its TLS handshake (run here, on the
/// connection's own thread, so a slow handshake holds up no one else).
async fn serve_logged(
    stream: tokio::net::TcpStream,
    addr: SocketAddr,
    tls: Option<sluice_tls::TlsAcceptor>,
    shared: Arc<shared::Shared>,
    stop: watch::Receiver<bool>,
) {
    let result = match tls {
        None => conn::serve(stream, addr, shared, stop).await,
        Some(acceptor) => {
            match tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, conn::accept_tls(stream, &acceptor))
                .await
            {
                Ok(Ok((stream, laddr))) => {
                    conn::serve_stream(stream, addr, laddr, shared, stop).await
                }
                Ok(Err(e)) => {
                    tracing::debug!(%addr, error = %e, "RESP TLS handshake failed");
                    Ok(())
                }
                Err(_) => {
                    tracing::debug!(%addr, "RESP TLS handshake timed out");
                    Ok(())
                }
            }
        }
    };
    if let Err(e) = result {
        tracing::debug!(%addr, error = %e, "RESP connection ended with an error");
    }
}

/// A connection handed to a connection thread, with its TLS acceptor when the listener has one.
type Handed = (
    std::net::TcpStream,
    SocketAddr,
    Option<sluice_tls::TlsAcceptor>,
);
type Handoff = tokio::sync::mpsc::UnboundedSender<Handed>;

/// Starts a connection thread: a runtime with one worker serving the connections handed to it.
///
/// One worker, so a connection's wake-ups stay on its thread; a multi-thread runtime rather than
/// a current-thread one, so a script that runs long can hand the worker's other connections to
/// a fresh thread (`tokio::task::block_in_place`, see `script::runner`) while it goes on running
/// where it started: short scripts run inline, with no hand-off at all.
fn io_thread(
    index: usize,
    busy_poll: Duration,
    shared: Arc<shared::Shared>,
    mut stop: watch::Receiver<bool>,
) -> Result<Handoff, Error> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Handed>();
    let arrivals = Arc::new(arrival::Arrivals::default());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name(format!("sluice-resp-{index}"))
        .enable_all()
        .build()
        .map_err(Error::Runtime)?;
    std::thread::Builder::new()
        .name(format!("sluice-resp-accept-{index}"))
        .spawn(move || {
            runtime.block_on(async move {
                if !busy_poll.is_zero() {
                    tokio::spawn(busy_poll::poll_after_work(busy_poll));
                }
                loop {
                    tokio::select! {
                        handed = rx.recv() => {
                            let Some((std_stream, addr, tls)) = handed else { return };
                            match tokio::net::TcpStream::from_std(std_stream) {
                                Ok(stream) => {
                                    let conn = serve_logged(stream, addr, tls, shared.clone(), stop.clone());
                                    tokio::spawn(arrival::InArrivalOrder::new(arrivals.clone(), conn));
                                }
                                Err(e) => tracing::warn!(%addr, error = %e, "registering a connection failed"),
                            }
                        }
                        _ = stop.changed() => return,
                    }
                }
            });
        })
        .map_err(Error::Runtime)?;
    Ok(tx)
}

async fn expiry_loop(shared: Arc<shared::Shared>, mut stop: watch::Receiver<bool>) {
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = stop.changed() => return,
            _ = tick.tick() => {
                engine::memory::tick_lru_clock();
                // A script holding the store must not stall this runtime (it also accepts
                // connections, including the one bringing SCRIPT KILL): skip the cycle.
                let active = shared.active_expire.load(std::sync::atomic::Ordering::Relaxed);
                if let Some(mut store) = shared.store.try_lock().filter(|_| active) {
                    let removed = store.expire_cycle(Duration::from_millis(2));
                    shared.stats.expired_active.fetch_add(removed as u64, std::sync::atomic::Ordering::Relaxed);
                    let flags = store.notify_flags();
                    if flags != 0 {
                        let events = store.take_events();
                        drop(store);
                        cmd::notify::publish(&shared.hub, events, flags);
                    }
                }
            }
        }
    }
}
