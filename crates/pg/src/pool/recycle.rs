//! Cleaning a connection given back with a request still in flight (the caller's future was
//! dropped: typically the client went away) before anyone else may use it.

use super::shared::{Shared, Slot};
use std::sync::Arc;
use std::time::Duration;

/// How long a nearly finished response may take to arrive before the query is cancelled: a
/// cancel request costs the server a new connection, a short wait usually costs nothing.
const GRACE: Duration = Duration::from_millis(10);
/// How long the cancel request and the drain after it may take before the connection is
/// closed instead (a query can ignore cancellation for a while, e.g. in some system calls).
const CANCEL_TIMEOUT: Duration = Duration::from_secs(5);

/// Cleans `slot` in a task of its own; without a runtime to run it, closes the connection.
pub(crate) fn spawn(shared: &Arc<Shared>, slot: Box<Slot>) {
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => {
            let shared = shared.clone();
            runtime.spawn(async move {
                let slot = settle(slot).await;
                shared.give_back(slot);
            });
        }
        Err(_) => {
            shared.close_connection(slot.conn);
            shared.free_place();
        }
    }
}

/// Reads the abandoned response to its end, cancelling the query when it does not end within the
/// grace period. A connection that still is not settled is marked broken, so giving it back
/// closes it.
async fn settle(mut slot: Box<Slot>) -> Box<Slot> {
    let conn = &mut slot.conn;
    if let Ok(result) = tokio::time::timeout(GRACE, conn.finish_pending()).await {
        if result.is_err() {
            conn.io.mark_broken();
        }
        return slot;
    }
    let token = conn.cancel_token();
    let settled = async {
        // If the cancel request fails, the drain below may still succeed (the query may end).
        let _ = token.cancel().await;
        conn.finish_pending().await
    };
    if !matches!(
        tokio::time::timeout(CANCEL_TIMEOUT, settled).await,
        Ok(Ok(()))
    ) {
        slot.conn.io.mark_broken();
    }
    slot
}
