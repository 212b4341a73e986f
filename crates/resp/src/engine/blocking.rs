//! Clients blocked in BLPOP/BRPOP/BLMOVE: FIFO queues per key, served after each write.

use std::collections::{HashMap, VecDeque};

use tokio::sync::oneshot;

use super::{Key, Store};

/// What a blocked client does once its key has elements.
#[derive(Debug, Clone)]
pub enum BlockOp {
    /// BLPOP (left) or BRPOP.
    Pop { left: bool },
    /// BLMOVE/BRPOPLPUSH into `dst`.
    Move {
        dst: Key,
        from_left: bool,
        to_left: bool,
    },
}

/// What a blocked client receives.
#[derive(Debug)]
pub enum BlockedReply {
    Popped { key: Key, value: Key },
    Moved(Key),
    WrongType,
}

#[derive(Debug)]
struct Waiter {
    db: usize,
    keys: Vec<Key>,
    op: BlockOp,
    tx: oneshot::Sender<BlockedReply>,
}

/// The blocked clients of a store.
#[derive(Debug, Default)]
pub struct Blocking {
    next_id: u64,
    waiters: HashMap<u64, Waiter>,
    queues: HashMap<(usize, Key), VecDeque<u64>>,
    ready: Vec<(usize, Key)>,
}

impl Blocking {
    /// Blocks a client on `keys`; returns the id to unblock it with on timeout.
    pub fn block(
        &mut self,
        db: usize,
        keys: Vec<Key>,
        op: BlockOp,
        tx: oneshot::Sender<BlockedReply>,
    ) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        for key in &keys {
            let queue = self.queues.entry((db, key.clone())).or_default();
            if !queue.contains(&id) {
                queue.push_back(id);
            }
        }
        self.waiters.insert(id, Waiter { db, keys, op, tx });
        id
    }

    /// Removes a blocked client (timeout, disconnect or served); false if it was not blocked.
    pub fn unblock(&mut self, id: u64) -> bool {
        self.take(id).is_some()
    }

    fn take(&mut self, id: u64) -> Option<Waiter> {
        let waiter = self.waiters.remove(&id)?;
        for key in &waiter.keys {
            let slot = (waiter.db, key.clone());
            if let Some(queue) = self.queues.get_mut(&slot) {
                queue.retain(|&w| w != id);
                if queue.is_empty() {
                    self.queues.remove(&slot);
                }
            }
        }
        Some(waiter)
    }

    /// Number of blocked clients (INFO blocked_clients).
    pub fn len(&self) -> usize {
        self.waiters.len()
    }

    pub fn is_empty(&self) -> bool {
        self.waiters.is_empty()
    }

    pub(super) fn signal(&mut self, db: usize, key: &[u8]) {
        if self.queues.is_empty() {
            return;
        }
        let slot = (db, Key::from(key));
        if self.queues.contains_key(&slot) {
            self.ready.push(slot);
        }
    }

    pub(super) fn signal_db(&mut self, db: usize) {
        let keys: Vec<_> = self
            .queues
            .keys()
            .filter(|(d, _)| *d == db)
            .cloned()
            .collect();
        self.ready.extend(keys);
    }

    pub(super) fn has_ready(&self) -> bool {
        !self.ready.is_empty()
    }

    pub(super) fn take_ready(&mut self) -> Vec<(usize, Key)> {
        std::mem::take(&mut self.ready)
    }

    fn front(&self, db: usize, key: &[u8]) -> Option<u64> {
        self.queues
            .get(&(db, Key::from(key)))
            .and_then(|q| q.front().copied())
    }
}

/// Serves the clients blocked on one key, oldest first, while the list has elements.
pub(super) fn serve_key(store: &mut Store, db: usize, key: &[u8]) {
    while let Some(id) = store.blocking.front(db, key) {
        let Some(waiter) = store.blocking.waiters.get(&id) else {
            // A stale id (cannot happen while `take` cleans queues); drop it and go on.
            if let Some(q) = store.blocking.queues.get_mut(&(db, Key::from(key))) {
                q.retain(|&w| w != id);
            }
            continue;
        };
        if waiter.tx.is_closed() {
            store.blocking.unblock(id);
            continue;
        }
        let op = waiter.op.clone();
        match store.db(db).list(key) {
            Ok(Some(list)) if !list.is_empty() => {}
            _ => return,
        }
        let reply = match op {
            BlockOp::Pop { left } => {
                let Some(value) = pop(store, db, key, left) else {
                    return;
                };
                BlockedReply::Popped {
                    key: key.into(),
                    value,
                }
            }
            BlockOp::Move {
                dst,
                from_left,
                to_left,
            } => {
                if store.db(db).list(&dst).is_err() {
                    BlockedReply::WrongType
                } else {
                    let Some(value) = pop(store, db, key, from_left) else {
                        return;
                    };
                    if let Ok(list) = store.db(db).list_or_new(&dst) {
                        if to_left {
                            list.push_front(value.clone())
                        } else {
                            list.push_back(value.clone())
                        }
                    }
                    store.touch(db, &dst);
                    store.list_pushed(db, &dst);
                    BlockedReply::Moved(value)
                }
            }
        };
        let Some(waiter) = store.blocking.take(id) else {
            return;
        };
        if let Err(BlockedReply::Popped { value, .. }) = waiter.tx.send(reply) {
            // The client went away between the check and the send: give the element back.
            if let BlockOp::Pop { left } = waiter.op
                && let Ok(list) = store.db(db).list_or_new(key)
            {
                if left {
                    list.push_front(value)
                } else {
                    list.push_back(value)
                }
            }
        }
    }
}

fn pop(store: &mut Store, db: usize, key: &[u8], left: bool) -> Option<Key> {
    let d = store.db(db);
    let list = d.list(key).ok()??;
    let value = if left {
        list.pop_front()
    } else {
        list.pop_back()
    }?;
    d.remove_if_empty(key);
    store.touch(db, key);
    Some(value)
}
