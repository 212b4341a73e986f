//! sluice-resp: the Redis protocol gate (RESP2/RESP3) over an in-memory engine.
//!
//! Layers: [`frame`] parses requests without I/O, [`reply`] encodes replies, `cmd` holds one
//! file per command family, [`engine`] is the keyspace boundary, `conn` drives one socket.

pub mod cmd;
mod conn;
pub mod engine;
pub mod frame;
pub mod glob;
mod hub;
pub mod num;
mod params;
pub mod reply;
mod session;
mod shared;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;

pub use frame::{Parsed, ProtocolError, RequestParser};

/// Configuration of the RESP gate.
#[derive(Debug, Clone)]
pub struct Config {
    /// Password required by AUTH/HELLO (Redis's requirepass); none means no auth.
    pub password: Option<String>,
    /// Number of databases (SELECT 0..n-1); Redis's default is 16.
    pub databases: usize,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            password: None,
            databases: 16,
        }
    }
}

/// Errors of the gate itself (per-connection errors close that connection only).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("reading the listener's local address failed: {0}")]
    LocalAddr(#[source] std::io::Error),
}

/// Serves RESP clients accepted on `listener` until `shutdown` completes. Each connection runs
/// in its own task on the current tokio runtime; an active-expiry task samples keys with a TTL
/// ten times a second.
pub async fn run(
    listener: TcpListener,
    config: Config,
    shutdown: impl Future<Output = ()>,
) -> Result<(), Error> {
    let port = listener.local_addr().map_err(Error::LocalAddr)?.port();
    let shared = Arc::new(shared::Shared::new(&config, port));
    let (stop_tx, stop_rx) = watch::channel(false);
    let expiry = tokio::spawn(expiry_loop(shared.clone(), stop_rx.clone()));
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, addr)) => {
                    let shared = shared.clone();
                    let stop = stop_rx.clone();
                    tokio::spawn(async move {
                        if let Err(e) = conn::serve(stream, addr, shared, stop).await {
                            tracing::debug!(%addr, error = %e, "RESP connection ended with an error");
                        }
                    });
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

async fn expiry_loop(shared: Arc<shared::Shared>, mut stop: watch::Receiver<bool>) {
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = stop.changed() => return,
            _ = tick.tick() => {
                let removed = shared.store.lock().expire_cycle(Duration::from_millis(2));
                shared.stats.expired_active.fetch_add(removed as u64, std::sync::atomic::Ordering::Relaxed);
            }
        }
    }
}
