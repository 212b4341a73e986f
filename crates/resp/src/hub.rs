//! Pub/sub hub: channel and pattern subscribers, message fan-out to connection queues.

use std::collections::HashMap;

use bytes::Bytes;
use tokio::sync::mpsc;

use crate::engine::Key;

/// A message on its way to a subscriber; encoded by the subscriber's connection for its protocol.
#[derive(Debug, Clone)]
pub struct PushMsg {
    /// The pattern that matched, for `pmessage`.
    pub pattern: Option<Bytes>,
    pub channel: Bytes,
    pub payload: Bytes,
}

type Subscribers = HashMap<u64, mpsc::UnboundedSender<PushMsg>>;

/// All subscriptions of the server.
#[derive(Debug, Default)]
pub struct Hub {
    channels: HashMap<Key, Subscribers>,
    patterns: HashMap<Key, Subscribers>,
}

impl Hub {
    pub fn subscribe(&mut self, channel: &[u8], client: u64, tx: &mpsc::UnboundedSender<PushMsg>) {
        self.channels
            .entry(channel.into())
            .or_default()
            .insert(client, tx.clone());
    }

    pub fn unsubscribe(&mut self, channel: &[u8], client: u64) {
        if let Some(subs) = self.channels.get_mut(channel) {
            subs.remove(&client);
            if subs.is_empty() {
                self.channels.remove(channel);
            }
        }
    }

    pub fn psubscribe(&mut self, pattern: &[u8], client: u64, tx: &mpsc::UnboundedSender<PushMsg>) {
        self.patterns
            .entry(pattern.into())
            .or_default()
            .insert(client, tx.clone());
    }

    pub fn punsubscribe(&mut self, pattern: &[u8], client: u64) {
        if let Some(subs) = self.patterns.get_mut(pattern) {
            subs.remove(&client);
            if subs.is_empty() {
                self.patterns.remove(pattern);
            }
        }
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
                    channel: channel_bytes.clone(),
                    payload: payload.clone(),
                };
                if tx.send(msg).is_ok() {
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
                    channel: channel_bytes.clone(),
                    payload: payload.clone(),
                };
                if tx.send(msg).is_ok() {
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
