//! Pub/sub hub: channel, pattern and shard-channel subscribers, message fan-out to connection queues.

use std::collections::{HashMap, HashSet};

use bytes::Bytes;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio::sync::mpsc;

use crate::engine::Key;

/// A message on its way to a subscriber; encoded by the subscriber's connection for its protocol.
#[derive(Debug, Clone)]
pub struct PushMsg {
    /// The pattern that matched, for `pmessage`.
    pub pattern: Option<Bytes>,
    /// Published with SPUBLISH to a shard channel (`smessage`).
    pub shard: bool,
    pub channel: Bytes,
    pub payload: Bytes,
}

impl PushMsg {
    /// Bytes this message holds while queued (what the output limit counts).
    pub fn size(&self) -> usize {
        self.channel.len() + self.payload.len() + self.pattern.as_ref().map_or(0, Bytes::len) + 32
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
    fn send(&self, msg: PushMsg) -> bool {
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
                    pattern: None,
                    shard: true,
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
                    pattern: None,
                    shard: false,
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
                    pattern: Some(pattern.clone()),
                    shard: false,
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
