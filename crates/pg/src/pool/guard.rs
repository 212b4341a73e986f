//! The connection a caller holds, and the small guards that keep the pool's books right when an
//! acquire is abandoned halfway (a dropped future, a timeout).

use super::shared::{Grant, Shared, Slot};
use crate::conn::Connection;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use tokio::sync::oneshot;

/// A connection lent by a [`Pool`](super::Pool). Dereferences to [`Connection`]; dropping it
/// gives the connection back (synchronously, without waiting on anything):
///
/// - clean: the rollback of an open transaction and the session reset are queued in front of
///   its next request, and it goes to the oldest waiter or back to the idle set;
/// - a request still in flight (its future was dropped: the client went away): a task of its
///   own drains the response, cancelling the query if it does not end within a few
///   milliseconds, and only then is the connection lent again — or closed when that fails;
/// - broken (I/O error, protocol error, FATAL from the server): closed, and its place goes to
///   the oldest waiter, who opens a new one.
pub struct PooledConnection {
    /// `None` only once the connection has left (dropped or detached).
    slot: Option<Box<Slot>>,
    shared: Arc<Shared>,
}

impl PooledConnection {
    pub(crate) fn new(slot: Box<Slot>, shared: Arc<Shared>) -> PooledConnection {
        PooledConnection {
            slot: Some(slot),
            shared,
        }
    }

    /// Takes the connection out of the pool for good; its place is freed for a new one.
    pub fn detach(mut self) -> Connection {
        match self.slot.take() {
            Some(slot) => {
                self.shared.free_place();
                self.shared.count_closed();
                slot.conn
            }
            None => unreachable!("a PooledConnection holds its connection until dropped"),
        }
    }
}

impl Deref for PooledConnection {
    type Target = Connection;

    #[inline]
    fn deref(&self) -> &Connection {
        match &self.slot {
            Some(slot) => &slot.conn,
            None => unreachable!("a PooledConnection holds its connection until dropped"),
        }
    }
}

impl DerefMut for PooledConnection {
    #[inline]
    fn deref_mut(&mut self) -> &mut Connection {
        match &mut self.slot {
            Some(slot) => &mut slot.conn,
            None => unreachable!("a PooledConnection holds its connection until dropped"),
        }
    }
}

impl Drop for PooledConnection {
    #[inline]
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            self.shared.give_back(slot);
        }
    }
}

impl std::fmt::Debug for PooledConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PooledConnection")
            .field("connection", &self.slot.as_ref().map(|s| &s.conn))
            .finish()
    }
}

/// A place in the pool (counted in its size) held while a connection is being opened. Dropped
/// without [`Place::keep`] (the open failed, or the acquire was abandoned), it goes to the next
/// waiter or is freed.
pub(crate) struct Place<'a> {
    shared: &'a Shared,
    kept: bool,
}

impl<'a> Place<'a> {
    pub(crate) fn new(shared: &'a Shared) -> Place<'a> {
        Place {
            shared,
            kept: false,
        }
    }

    /// The place now belongs to an open connection.
    pub(crate) fn keep(mut self) {
        self.kept = true;
    }
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        if !self.kept {
            self.shared.free_place();
        }
    }
}

/// A waiter's end of the queue. Dropped (served, timed out, or abandoned), it stops the queue
/// from sending to it and gives back anything sent in the meantime, so nothing is lost.
pub(crate) struct Waiting<'a> {
    pub(crate) rx: oneshot::Receiver<Grant>,
    shared: &'a Shared,
}

impl<'a> Waiting<'a> {
    pub(crate) fn new(rx: oneshot::Receiver<Grant>, shared: &'a Shared) -> Waiting<'a> {
        Waiting { rx, shared }
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.rx.close();
        if let Ok(grant) = self.rx.try_recv() {
            self.shared.return_grant(grant);
        }
        self.shared.stop_waiting();
    }
}
