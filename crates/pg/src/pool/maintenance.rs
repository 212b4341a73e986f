//! The pool's background task: closes expired and long-idle connections, checks idle ones for a
//! server that went away, and keeps `min_idle` connections open.

use super::guard::Place;
use super::shared::Shared;
use crate::conn::Connection;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// Runs until the pool is closed or every handle to it is gone.
pub(crate) async fn run(pool: Weak<Shared>) {
    let tick = match pool.upgrade() {
        Some(shared) => shared.settings.maintenance_tick(),
        None => return,
    };
    let mut interval = tokio::time::interval(tick);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        interval.tick().await;
        let Some(shared) = pool.upgrade() else {
            return;
        };
        if shared.is_closed() {
            return;
        }
        maintain(&shared).await;
    }
}

async fn maintain(shared: &Arc<Shared>) {
    let (retire, check) = shared.take_for_maintenance(Instant::now());
    for slot in retire {
        close_politely(shared, slot.conn).await;
        shared.free_place();
    }
    for mut slot in check {
        if slot.conn.check_idle() {
            shared.put_idle(slot);
        } else {
            shared.close_connection(slot.conn);
            shared.free_place();
        }
    }
    while shared.reserve_for_min_idle() {
        let place = Place::new(shared);
        if shared.begin_attempt().is_err() {
            break;
        }
        let timeout = shared.settings.acquire_timeout();
        match tokio::time::timeout(timeout, Connection::connect_with(&shared.config)).await {
            Ok(Ok(conn)) => {
                let slot = shared.opened(conn);
                place.keep();
                shared.put_idle(slot);
            }
            Ok(Err(e)) => {
                shared.connect_failed(e);
                break;
            }
            Err(_) => {
                shared.connect_failed(crate::error::Error::new(
                    crate::error::ErrorKind::Timeout,
                    format!("opening a connection took longer than {timeout:?}"),
                ));
                break;
            }
        }
    }
}

/// Closes an idle connection with a Terminate (bounded, so a dead peer cannot stall the task).
async fn close_politely(shared: &Shared, conn: Connection) {
    shared.count_closed();
    let _ = tokio::time::timeout(Duration::from_secs(1), conn.close()).await;
}
