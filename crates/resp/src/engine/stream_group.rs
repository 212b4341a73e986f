//! Stream consumer groups: the last delivered ID, the pending entries list (PEL) and consumers.

use std::collections::{BTreeMap, BTreeSet};

use super::Key;
use super::stream::StreamId;

/// A delivered, not yet acknowledged entry.
#[derive(Debug, Clone)]
pub struct Nack {
    /// The consumer that owns it.
    pub consumer: Key,
    /// Milliseconds since the epoch of the last delivery.
    pub delivery_time: i64,
    /// How many times it was delivered (XPENDING, XCLAIM's RETRYCOUNT).
    pub delivery_count: u64,
}

/// A consumer of a group.
#[derive(Debug, Clone, Default)]
pub struct Consumer {
    /// Milliseconds since the epoch of the last time it read or claimed.
    pub seen_time: i64,
    /// Its pending entries (a subset of the group's PEL).
    pub pel: BTreeSet<StreamId>,
}

/// A consumer group.
#[derive(Debug, Clone, Default)]
pub struct Group {
    /// The last ID delivered to the group: XREADGROUP's `>` reads entries above it.
    pub last_id: StreamId,
    /// Entries read by the group (for the lag), -1 when unknown.
    pub entries_read: i64,
    /// The pending entries list: entries delivered and not yet acknowledged, by ID.
    pub pel: BTreeMap<StreamId, Nack>,
    /// The group's consumers by name.
    pub consumers: BTreeMap<Key, Consumer>,
}

impl Group {
    /// A group with no consumers and nothing pending that delivers the entries above `last_id`.
    pub fn new(last_id: StreamId, entries_read: i64) -> Self {
        Self {
            last_id,
            entries_read,
            pel: BTreeMap::new(),
            consumers: BTreeMap::new(),
        }
    }

    /// The consumer named `name`, its seen time refreshed to `now`; created when missing.
    /// Returns whether it was created.
    pub fn touch_consumer(&mut self, name: &[u8], now: i64) -> bool {
        match self.consumers.get_mut(name) {
            Some(c) => {
                c.seen_time = now;
                false
            }
            None => {
                self.consumers.insert(
                    name.into(),
                    Consumer {
                        seen_time: now,
                        pel: BTreeSet::new(),
                    },
                );
                true
            }
        }
    }

    /// Records a delivery of `id` to `consumer` (which must exist): a new pending entry, or an
    /// existing one moved to it with its count reset to 1 (XREADGROUP's semantics).
    pub fn deliver(&mut self, id: StreamId, consumer: &[u8], now: i64) {
        if let Some(nack) = self.pel.get_mut(&id) {
            if nack.consumer.as_slice() != consumer
                && let Some(old) = self.consumers.get_mut(nack.consumer.as_slice())
            {
                old.pel.remove(&id);
            }
            nack.consumer = consumer.into();
            nack.delivery_time = now;
            nack.delivery_count = 1;
        } else {
            self.pel.insert(
                id,
                Nack {
                    consumer: consumer.into(),
                    delivery_time: now,
                    delivery_count: 1,
                },
            );
        }
        if let Some(c) = self.consumers.get_mut(consumer) {
            c.pel.insert(id);
        }
    }

    /// Moves the pending entry `id` to `consumer` (XCLAIM/XAUTOCLAIM); the caller sets times.
    pub fn reassign(&mut self, id: StreamId, consumer: &[u8]) {
        let Some(nack) = self.pel.get_mut(&id) else {
            return;
        };
        if nack.consumer.as_slice() != consumer {
            if let Some(old) = self.consumers.get_mut(nack.consumer.as_slice()) {
                old.pel.remove(&id);
            }
            nack.consumer = consumer.into();
        }
        if let Some(c) = self.consumers.get_mut(consumer) {
            c.pel.insert(id);
        }
    }

    /// Acknowledges `id`; false if it was not pending.
    pub fn ack(&mut self, id: StreamId) -> bool {
        let Some(nack) = self.pel.remove(&id) else {
            return false;
        };
        if let Some(c) = self.consumers.get_mut(nack.consumer.as_slice()) {
            c.pel.remove(&id);
        }
        true
    }

    /// Deletes a consumer and its pending entries; returns how many it had, None if absent.
    pub fn delete_consumer(&mut self, name: &[u8]) -> Option<usize> {
        let consumer = self.consumers.remove(name)?;
        for id in &consumer.pel {
            self.pel.remove(id);
        }
        Some(consumer.pel.len())
    }

    /// Approximate bytes held (MEMORY USAGE).
    pub fn heap_size(&self) -> usize {
        let pel =
            self.pel.len() * (std::mem::size_of::<StreamId>() + std::mem::size_of::<Nack>() + 16);
        let consumers: usize = self
            .consumers
            .iter()
            .map(|(k, c)| k.len() + 64 + c.pel.len() * (std::mem::size_of::<StreamId>() + 8))
            .sum();
        std::mem::size_of::<Group>() + pel + consumers
    }
}
