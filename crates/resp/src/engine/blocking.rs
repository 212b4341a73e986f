//! Blocked clients (BLPOP, BRPOP, BLMOVE, BLMPOP, BZPOPMIN/MAX, BZMPOP, XREAD and XREADGROUP
//! with BLOCK): FIFO queues per key, served after each write.

use std::collections::{HashMap, VecDeque};

use tokio::sync::oneshot;

use super::stream::StreamId;
use super::stream_read::{GroupRead, deliver_new};
use super::{Key, ListEdit, Store, Value};
use crate::reply::Out;

/// What a blocked client does once its key has elements.
#[derive(Debug, Clone)]
pub enum BlockOp {
    /// BLPOP (left) or BRPOP.
    Pop {
        /// True for BLPOP (the head), false for BRPOP (the tail).
        left: bool,
    },
    /// BLMOVE/BRPOPLPUSH into `dst`.
    Move {
        /// The list the element is pushed onto.
        dst: Key,
        /// Pop from the source's head (LEFT) rather than its tail.
        from_left: bool,
        /// Push onto the destination's head rather than its tail.
        to_left: bool,
    },
    /// BLMPOP: up to `count` elements from one end.
    LMPop {
        /// Pop from the head (LEFT) rather than the tail.
        left: bool,
        /// At most this many elements.
        count: usize,
        /// The client speaks RESP3: the reply is encoded when the client is served.
        resp3: bool,
    },
    /// BZPOPMIN/BZPOPMAX (`count` None: `[key, member, score]`) and BZMPOP (`count` Some:
    /// `[key, [[member, score], ...]]`).
    ZPop {
        /// BZPOPMAX or BZMPOP MAX: the highest scores first.
        max: bool,
        /// None for BZPOPMIN/BZPOPMAX, BZMPOP's COUNT otherwise.
        count: Option<usize>,
        /// The client speaks RESP3: the reply is encoded when the client is served.
        resp3: bool,
    },
    /// XREAD / XREADGROUP with BLOCK.
    Stream(Box<StreamWait>),
}

/// What a client blocked in XREAD or XREADGROUP waits for.
#[derive(Debug, Clone)]
pub struct StreamWait {
    /// Per key (in the waiter's key order), entries must be above this ID; ignored for groups,
    /// which wait for entries above the group's last delivered ID.
    pub ids: Vec<StreamId>,
    /// At most this many entries (0: all).
    pub count: usize,
    /// XREADGROUP: (group, consumer, NOACK).
    pub group: Option<(Key, Key, bool)>,
    /// The client speaks RESP3: entries are encoded when the client is served.
    pub resp3: bool,
}

/// What a blocked client receives.
#[derive(Debug)]
pub enum BlockedReply {
    /// BLPOP/BRPOP's answer: the key served and the element popped from it.
    Popped {
        /// The key the element came from.
        key: Key,
        /// The popped element.
        value: Key,
    },
    /// BLMOVE's answer: the element moved.
    Moved(Key),
    /// The key came to hold another type; the client gets a WRONGTYPE error.
    WrongType,
    /// A whole reply, already encoded in the client's protocol.
    Encoded(Vec<u8>),
    /// Unblocked as if the timeout had passed (CLIENT UNBLOCK ... TIMEOUT).
    TimedOut,
}

#[derive(Debug)]
struct Waiter {
    /// The blocked client's id (CLIENT UNBLOCK), 0 when not recorded.
    owner: u64,
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
        self.waiters.insert(
            id,
            Waiter {
                owner: 0,
                db,
                keys,
                op,
                tx,
            },
        );
        id
    }

    /// Records which client waits as `id` (for CLIENT UNBLOCK).
    pub fn set_owner(&mut self, id: u64, client: u64) {
        if let Some(w) = self.waiters.get_mut(&id) {
            w.owner = client;
        }
    }

    /// CLIENT UNBLOCK: ends the wait of client `client` with `reply`; false if it is not blocked.
    pub fn unblock_client(&mut self, client: u64, reply: BlockedReply) -> bool {
        let Some(id) = self
            .waiters
            .iter()
            .find(|(_, w)| w.owner == client && client != 0)
            .map(|(id, _)| *id)
        else {
            return false;
        };
        match self.take(id) {
            Some(waiter) => {
                let _ = waiter.tx.send(reply);
                true
            }
            None => false,
        }
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

    /// True when no client is blocked.
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
}

/// Serves the clients blocked on one key, oldest first, while the key has what they wait for.
pub(super) fn serve_key(store: &mut Store, db: usize, key: &[u8]) {
    let waiting: Vec<u64> = match store.blocking.queues.get(&(db, Key::from(key))) {
        Some(queue) => queue.iter().copied().collect(),
        None => return,
    };
    for id in waiting {
        let Some(waiter) = store.blocking.waiters.get(&id) else {
            continue;
        };
        if waiter.tx.is_closed() {
            store.blocking.unblock(id);
            continue;
        }
        let op = waiter.op.clone();
        let events = served_events(&op);
        let position = waiter.keys.iter().position(|k| k.as_slice() == key);
        let reply = match op {
            BlockOp::Pop { left } => {
                if !list_has_elements(store, db, key) {
                    continue;
                }
                let Some(value) = pop(store, db, key, left) else {
                    continue;
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
                if !list_has_elements(store, db, key) {
                    continue;
                }
                if store.db(db).list(&dst).is_err() {
                    BlockedReply::WrongType
                } else {
                    let Some(value) = pop(store, db, key, from_left) else {
                        continue;
                    };
                    if let Ok(list) = store.db(db).list_or_new(&dst) {
                        if to_left {
                            list.push_front(value.clone())
                        } else {
                            list.push_back(value.clone())
                        }
                    }
                    let pushed = ListEdit::Push {
                        left: to_left,
                        n: 1,
                    };
                    store.touch_list(db, &dst, &[pushed]);
                    store.list_pushed(db, &dst);
                    BlockedReply::Moved(value)
                }
            }
            BlockOp::LMPop { left, count, resp3 } => {
                if !list_has_elements(store, db, key) {
                    continue;
                }
                let mut out = Out {
                    buf: Vec::new(),
                    resp3,
                };
                let d = store.db(db);
                let Ok(Some(list)) = d.list(key) else {
                    continue;
                };
                let n = count.min(list.len());
                out.array(2);
                out.bulk(key);
                out.array(n);
                for _ in 0..n {
                    if let Some(v) = if left {
                        list.pop_front()
                    } else {
                        list.pop_back()
                    } {
                        out.bulk(&v);
                    }
                }
                d.remove_if_empty(key);
                store.touch_list(db, key, &[ListEdit::Pop { left, n }]);
                BlockedReply::Encoded(out.buf)
            }
            BlockOp::ZPop { max, count, resp3 } => {
                let d = store.db(db);
                let Ok(Some(zset)) = d.zset(key) else {
                    continue;
                };
                if zset.is_empty() {
                    continue;
                }
                let mut out = Out {
                    buf: Vec::new(),
                    resp3,
                };
                match count {
                    None => {
                        let Some((member, score)) = zset.pop(max) else {
                            continue;
                        };
                        out.array(3);
                        out.bulk(key);
                        out.bulk(&member);
                        out.double(score);
                    }
                    Some(count) => {
                        let n = count.min(zset.len());
                        out.array(2);
                        out.bulk(key);
                        out.array(n);
                        for _ in 0..n {
                            if let Some((member, score)) = zset.pop(max) {
                                out.array(2);
                                out.bulk(&member);
                                out.double(score);
                            }
                        }
                    }
                }
                d.remove_if_empty(key);
                store.touch(db, key);
                BlockedReply::Encoded(out.buf)
            }
            BlockOp::Stream(wait) => {
                let Some(reply) = serve_stream(store, db, key, &wait, position) else {
                    continue;
                };
                reply
            }
        };
        if !matches!(reply, BlockedReply::WrongType) {
            emit_served(store, db, key, events);
        }
        let Some(waiter) = store.blocking.take(id) else {
            continue;
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

fn list_has_elements(store: &mut Store, db: usize, key: &[u8]) -> bool {
    matches!(store.db(db).list(key), Ok(Some(list)) if !list.is_empty())
}

/// The reply for a client blocked in XREAD/XREADGROUP if `key` now serves it.
fn serve_stream(
    store: &mut Store,
    db: usize,
    key: &[u8],
    wait: &StreamWait,
    position: Option<usize>,
) -> Option<BlockedReply> {
    let mut out = Out {
        buf: Vec::new(),
        resp3: wait.resp3,
    };
    let now = super::now_ms();
    let stream = match store.db(db).get(key).map(|e| &mut e.value) {
        Some(Value::Stream(stream)) => stream,
        // A group reader learns that its stream went away; a plain reader keeps waiting.
        _ if wait.group.is_some() => {
            out.error("UNBLOCKED the stream key no longer exists");
            return Some(BlockedReply::Encoded(out.buf));
        }
        _ => return None,
    };
    let gt = match &wait.group {
        Some((group, _, _)) => match stream.groups.get(group.as_slice()) {
            Some(g) => g.last_id,
            None => {
                out.error("NOGROUP the consumer group this client was blocked on no longer exists");
                return Some(BlockedReply::Encoded(out.buf));
            }
        },
        None => *wait.ids.get(position?)?,
    };
    if stream.last_id <= gt {
        return None;
    }
    if wait.resp3 {
        out.map(1);
    } else {
        out.array(1);
        out.array(2);
    }
    out.bulk(key);
    match &wait.group {
        Some((group, consumer, noack)) => {
            if let Some(g) = stream.groups.get_mut(group.as_slice()) {
                g.touch_consumer(consumer, now);
            }
            let read = GroupRead {
                group,
                consumer,
                noack: *noack,
                count: wait.count,
                now,
            };
            deliver_new(&mut out, stream, gt, read);
            store.changed_unwatched(db, key, 1);
        }
        None => {
            let start = gt.next()?;
            super::stream_read::write_range(
                &mut out,
                stream,
                start,
                StreamId::MAX,
                wait.count,
                false,
            );
        }
    }
    Some(BlockedReply::Encoded(out.buf))
}

/// The keyspace events of serving a blocked command: on the source key (followed by `del`
/// when it is emptied), and for BLMOVE on the destination.
type ServedEvents = Option<(u32, &'static [u8], Option<(Key, &'static [u8])>)>;

fn served_events(op: &BlockOp) -> ServedEvents {
    use super::notify::{LIST, ZSET};
    let side = |left: bool, l: &'static [u8], r: &'static [u8]| if left { l } else { r };
    Some(match op {
        BlockOp::Pop { left } | BlockOp::LMPop { left, .. } => {
            (LIST, side(*left, b"lpop", b"rpop"), None)
        }
        BlockOp::Move {
            dst,
            from_left,
            to_left,
        } => (
            LIST,
            side(*from_left, b"lpop", b"rpop"),
            Some((dst.clone(), side(*to_left, b"lpush", b"rpush"))),
        ),
        BlockOp::ZPop { max, .. } => (ZSET, side(*max, b"zpopmax", b"zpopmin"), None),
        BlockOp::Stream(_) => return None,
    })
}

fn emit_served(store: &mut Store, db: usize, key: &[u8], events: ServedEvents) {
    if store.notify_flags() == 0 {
        return;
    }
    let Some((class, event, dst)) = events else {
        return;
    };
    store.key_event(db, class, event, key);
    if !store.db(db).contains(key) {
        store.key_event(db, super::notify::GENERIC, b"del", key);
    }
    if let Some((dst, push)) = dst {
        store.key_event(db, class, push, &dst);
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
    store.touch_list(db, key, &[ListEdit::Pop { left, n: 1 }]);
    Some(value)
}
