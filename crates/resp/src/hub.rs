//! Pub/sub hub: channel, pattern and shard-channel subscribers, message fan-out to connection queues.

use std::collections::{HashMap, HashSet};

use bytes::Bytes;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio::sync::mpsc;

use crate::engine::Key;

/// What kind of push a [`PushMsg`] is.
#[derive(Debug, Clone)]
pub enum PushKind {
    /// PUBLISH to a subscribed channel (`message`).
    Message,
    /// PUBLISH to a channel matching this pattern (`pmessage`).
    PMessage(Bytes),
    /// SPUBLISH to a subscribed shard channel (`smessage`).
    SMessage,
    /// Client-side caching: these keys changed, or (None) everything was flushed. RESP3
    /// clients get an `invalidate` push, RESP2 ones a message on `__redis__:invalidate`.
    Invalidate(Option<Vec<Bytes>>),
}

/// A message on its way to a subscriber; encoded by the subscriber's connection for its protocol.
#[derive(Debug, Clone)]
pub struct PushMsg {
    pub kind: PushKind,
    pub channel: Bytes,
    pub payload: Bytes,
}

impl PushMsg {
    /// Bytes this message holds while queued (what the output limit counts).
    pub fn size(&self) -> usize {
        let extra = match &self.kind {
            PushKind::PMessage(p) => p.len(),
            PushKind::Invalidate(Some(keys)) => keys.iter().map(|k| k.len() + 16).sum(),
            _ => 0,
        };
        self.channel.len() + self.payload.len() + extra + 32
    }

    /// A client-side caching invalidation of `keys` (None: everything).
    pub fn invalidate(keys: Option<Vec<Bytes>>) -> Self {
        Self {
            kind: PushKind::Invalidate(keys),
            channel: Bytes::from_static(b"__redis__:invalidate"),
            payload: Bytes::new(),
        }
    }
}

/// Redis's hard output limit for pub/sub clients (client-output-buffer-limit pubsub 32mb).
pub const PUBSUB_BACKLOG_LIMIT: usize = 32 * 1024 * 1024;

/// How much a subscriber has queued and not yet written, and whether it went over the limit.
#[derive(Debug, Default)]
pub struct Backlog {
    pub bytes: AtomicUsize,
    pub overflowed: AtomicBool,
    /// Wakes the subscriber's connection when it overflows.
    pub overflow: tokio::sync::Notify,
}

/// A subscriber's queue: messages go to its connection, which encodes them for its protocol.
/// A subscriber that falls more than [`PUBSUB_BACKLOG_LIMIT`] behind is disconnected, as Redis
/// does, instead of growing memory without bound.
#[derive(Debug, Clone)]
pub struct PushQueue {
    tx: mpsc::UnboundedSender<PushMsg>,
    pub backlog: Arc<Backlog>,
}

impl PushQueue {
    pub fn new() -> (Self, mpsc::UnboundedReceiver<PushMsg>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (
            Self {
                tx,
                backlog: Arc::default(),
            },
            rx,
        )
    }

    /// Queues a message; false when the subscriber is gone or over its limit.
    pub fn send(&self, msg: PushMsg) -> bool {
        let size = msg.size();
        if self.backlog.bytes.load(Ordering::Relaxed) + size > PUBSUB_BACKLOG_LIMIT {
            if !self.backlog.overflowed.swap(true, Ordering::Relaxed) {
                self.backlog.overflow.notify_one();
            }
            return false;
        }
        self.backlog.bytes.fetch_add(size, Ordering::Relaxed);
        self.tx.send(msg).is_ok()
    }
}

type Subscribers = HashMap<u64, PushQueue>;

/// All subscriptions of the server.
#[derive(Debug, Default)]
pub struct Hub {
    channels: HashMap<Key, Subscribers>,
    patterns: HashMap<Key, Subscribers>,
    /// Shard channels (SSUBSCRIBE): a namespace of their own, without patterns. A single
    /// node owns every slot, so all of them live here.
    shards: HashMap<Key, Subscribers>,
}

impl Hub {
    /// The subscribers by pattern when `pattern`, else by channel.
    fn table(&mut self, pattern: bool) -> &mut HashMap<Key, Subscribers> {
        if pattern {
            &mut self.patterns
        } else {
            &mut self.channels
        }
    }

    /// Each subscribed client's channels, shard channels and patterns (`true` for a pattern),
    /// for ACL SETUSER to find subscriptions a user's new rules no longer allow.
    pub fn subscriptions_of_clients(&self) -> HashMap<u64, Vec<(Key, bool)>> {
        let mut by_client: HashMap<u64, Vec<(Key, bool)>> = HashMap::new();
        let tables = [
            (&self.channels, false),
            (&self.shards, false),
            (&self.patterns, true),
        ];
        for (table, pattern) in tables {
            for (name, subscribers) in table {
                for client in subscribers.keys() {
                    by_client
                        .entry(*client)
                        .or_default()
                        .push((name.clone(), pattern));
                }
            }
        }
        by_client
    }

    /// Adds `client` to the subscribers of a channel, or of a pattern when `pattern`.
    pub fn subscribe(&mut self, pattern: bool, name: &[u8], client: u64, tx: &PushQueue) {
        self.table(pattern)
            .entry(name.into())
            .or_default()
            .insert(client, tx.clone());
    }

    /// Removes `client` from a channel (a pattern when `pattern`), and the name once unused.
    pub fn unsubscribe(&mut self, pattern: bool, name: &[u8], client: u64) {
        let table = self.table(pattern);
        if let Some(subs) = table.get_mut(name) {
            subs.remove(&client);
            if subs.is_empty() {
                table.remove(name);
            }
        }
    }

    /// Removes `client` from all its `channels`, `patterns` and `shards`, emptying them
    /// (RESET, disconnect).
    pub fn leave(
        &mut self,
        client: u64,
        channels: &mut HashSet<Key>,
        patterns: &mut HashSet<Key>,
        shards: &mut HashSet<Key>,
    ) {
        for name in channels.drain() {
            self.unsubscribe(false, &name, client);
        }
        for name in patterns.drain() {
            self.unsubscribe(true, &name, client);
        }
        for name in shards.drain() {
            self.shard_unsubscribe(&name, client);
        }
    }

    /// Adds `client` to the subscribers of a shard channel (SSUBSCRIBE).
    pub fn shard_subscribe(&mut self, name: &[u8], client: u64, tx: &PushQueue) {
        self.shards
            .entry(name.into())
            .or_default()
            .insert(client, tx.clone());
    }

    /// Removes `client` from a shard channel, and the channel once unused.
    pub fn shard_unsubscribe(&mut self, name: &[u8], client: u64) {
        if let Some(subs) = self.shards.get_mut(name) {
            subs.remove(&client);
            if subs.is_empty() {
                self.shards.remove(name);
            }
        }
    }

    /// Sends `payload` to the subscribers of shard channel `channel` (SPUBLISH); returns how
    /// many received it.
    pub fn shard_publish(&self, channel: &[u8], payload: &[u8]) -> usize {
        let Some(subs) = self.shards.get(channel) else {
            return 0;
        };
        let channel = Bytes::copy_from_slice(channel);
        let payload = Bytes::copy_from_slice(payload);
        subs.values()
            .filter(|tx| {
                tx.send(PushMsg {
                    kind: PushKind::SMessage,
                    channel: channel.clone(),
                    payload: payload.clone(),
                })
            })
            .count()
    }

    /// Shard channels with a subscriber matching `pattern` (PUBSUB SHARDCHANNELS).
    pub fn shard_channels(&self, pattern: Option<&[u8]>) -> Vec<Key> {
        self.shards
            .keys()
            .filter(|c| pattern.is_none_or(|p| crate::glob::matches(p, c, false)))
            .cloned()
            .collect()
    }

    /// Whether `client` subscribes to `channel` (RESP2 invalidations need `__redis__:invalidate`).
    pub fn is_subscribed(&self, channel: &[u8], client: u64) -> bool {
        self.channels
            .get(channel)
            .is_some_and(|subs| subs.contains_key(&client))
    }

    /// Subscribers of one shard channel (PUBSUB SHARDNUMSUB).
    pub fn shard_numsub(&self, channel: &[u8]) -> usize {
        self.shards.get(channel).map_or(0, HashMap::len)
    }

    /// Sends `payload` to the subscribers of `channel` and of matching patterns; returns how many
    /// received it.
    pub fn publish(&self, channel: &[u8], payload: &[u8]) -> usize {
        let mut receivers = 0;
        let channel_bytes = Bytes::copy_from_slice(channel);
        let payload = Bytes::copy_from_slice(payload);
        if let Some(subs) = self.channels.get(channel) {
            for tx in subs.values() {
                let msg = PushMsg {
                    kind: PushKind::Message,
                    channel: channel_bytes.clone(),
                    payload: payload.clone(),
                };
                if tx.send(msg) {
                    receivers += 1;
                }
            }
        }
        for (pattern, subs) in &self.patterns {
            if !crate::glob::matches(pattern, channel, false) {
                continue;
            }
            let pattern = Bytes::copy_from_slice(pattern);
            for tx in subs.values() {
                let msg = PushMsg {
                    kind: PushKind::PMessage(pattern.clone()),
                    channel: channel_bytes.clone(),
                    payload: payload.clone(),
                };
                if tx.send(msg) {
                    receivers += 1;
                }
            }
        }
        receivers
    }

    /// Channels with at least one subscriber matching `pattern` (PUBSUB CHANNELS).
    pub fn channels(&self, pattern: Option<&[u8]>) -> Vec<Key> {
        self.channels
            .keys()
            .filter(|c| pattern.is_none_or(|p| crate::glob::matches(p, c, false)))
            .cloned()
            .collect()
    }

    /// Subscribers of one channel (PUBSUB NUMSUB).
    pub fn numsub(&self, channel: &[u8]) -> usize {
        self.channels.get(channel).map_or(0, HashMap::len)
    }

    /// Number of patterns subscribed to (PUBSUB NUMPAT).
    pub fn numpat(&self) -> usize {
        self.patterns.len()
    }
}
