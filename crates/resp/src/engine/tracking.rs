//! Client-side caching (CLIENT TRACKING): which clients read which keys, broadcast prefixes, and the invalidations a change owes them.
//!
//! Like Redis, the table is keyed by key name across databases: a client that read `k` in
//! any database is told when `k` changes in any database. A key is forgotten once its
//! invalidation is queued (the client must read it again to hear of the next change).

use std::collections::{HashMap, HashSet};

use super::{Key, Store};

/// How one client tracks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrackOptions {
    /// Client the invalidations go to (0: the client itself).
    pub redirect: u64,
    /// BCAST: invalidations for every key matching `prefixes`, read or not.
    pub bcast: bool,
    /// PREFIX (with BCAST): the key prefixes to follow; empty: all keys.
    pub prefixes: Vec<Key>,
    /// OPTIN: only keys read right after CLIENT CACHING YES are tracked.
    pub optin: bool,
    /// OPTOUT: keys read right after CLIENT CACHING NO are not tracked.
    pub optout: bool,
    /// NOLOOP: no invalidations for the client's own writes.
    pub noloop: bool,
}

/// The tracking state of a store.
#[derive(Debug, Default)]
pub struct Tracking {
    /// Clients told when the key changes (default mode).
    keys: HashMap<Key, HashSet<u64>>,
    /// Options of every tracking client.
    clients: HashMap<u64, TrackOptions>,
    /// Clients in BCAST mode (a subset of `clients`).
    bcast: HashSet<u64>,
    /// Invalidations owed: the client and the key, or None after a flush (everything).
    pending: Vec<(u64, Option<Key>)>,
    /// The client running the current command (for NOLOOP).
    pub current: u64,
}

impl Tracking {
    /// Whether any client tracks (the one check on the write path when none does).
    #[inline]
    pub fn active(&self) -> bool {
        !self.clients.is_empty()
    }

    /// Options of a tracking client.
    pub fn options(&self, client: u64) -> Option<&TrackOptions> {
        self.clients.get(&client)
    }

    /// Starts (or restarts with new options) tracking for `client`.
    pub fn enable(&mut self, client: u64, options: TrackOptions) {
        if options.bcast {
            self.bcast.insert(client);
        } else {
            self.bcast.remove(&client);
        }
        self.clients.insert(client, options);
    }

    /// Stops tracking for `client` and forgets the keys it read.
    pub fn disable(&mut self, client: u64) {
        if self.clients.remove(&client).is_none() {
            return;
        }
        self.bcast.remove(&client);
        self.keys.retain(|_, readers| {
            readers.remove(&client);
            !readers.is_empty()
        });
        self.pending.retain(|(c, _)| *c != client);
    }

    /// Records that `client` read `key` (default mode).
    pub fn remember(&mut self, client: u64, key: &[u8]) {
        match self.keys.get_mut(key) {
            Some(readers) => {
                readers.insert(client);
            }
            None => {
                self.keys.insert(key.into(), HashSet::from([client]));
            }
        }
    }

    /// Queues the invalidations a change of `key` owes.
    pub fn invalidate(&mut self, key: &[u8]) {
        let current = self.current;
        let skip =
            |opts: Option<&TrackOptions>, c: u64| opts.is_some_and(|o| o.noloop && c == current);
        if let Some(readers) = self.keys.remove(key) {
            for c in readers {
                if !skip(self.clients.get(&c), c) {
                    self.pending.push((c, Some(key.into())));
                }
            }
        }
        for &c in &self.bcast {
            let Some(opts) = self.clients.get(&c) else {
                continue;
            };
            let matches =
                opts.prefixes.is_empty() || opts.prefixes.iter().any(|p| key.starts_with(p));
            if matches && !skip(Some(opts), c) {
                self.pending.push((c, Some(key.into())));
            }
        }
    }

    /// Queues a flush notice (invalidate everything) to every tracking client.
    pub fn flushed(&mut self) {
        self.keys.clear();
        let clients: Vec<u64> = self.clients.keys().copied().collect();
        for c in clients {
            self.pending.push((c, None));
        }
    }

    /// Takes the invalidations owed, grouped by client in first-owed order: a None key
    /// means everything.
    pub fn take_pending(&mut self) -> Vec<(u64, Vec<Option<Key>>)> {
        let mut grouped: Vec<(u64, Vec<Option<Key>>)> = Vec::new();
        for (c, key) in self.pending.drain(..) {
            match grouped.iter_mut().find(|(g, _)| *g == c) {
                Some((_, keys)) => keys.push(key),
                None => grouped.push((c, vec![key])),
            }
        }
        grouped
    }

    /// Whether invalidations are waiting.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }
}

impl Store {
    /// Hook of `Store::touch`: a tracked key changed.
    #[inline]
    pub(super) fn tracking_touch(&mut self, key: &[u8]) {
        if self.tracking.active() {
            self.tracking.invalidate(key);
        }
    }

    /// Hook of the flushes: every tracking client must drop its whole cache.
    pub(super) fn tracking_flush(&mut self) {
        if self.tracking.active() {
            self.tracking.flushed();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_key_is_invalidated_once_and_noloop_skips_the_writer() {
        let mut t = Tracking::default();
        t.enable(1, TrackOptions::default());
        t.enable(
            2,
            TrackOptions {
                noloop: true,
                ..TrackOptions::default()
            },
        );
        t.remember(1, b"k");
        t.remember(2, b"k");
        t.current = 2;
        t.invalidate(b"k");
        t.invalidate(b"k");
        assert_eq!(t.take_pending(), vec![(1, vec![Some(Key::from(b"k"))])]);
    }

    #[test]
    fn bcast_matches_prefixes_without_reads() {
        let mut t = Tracking::default();
        t.enable(
            3,
            TrackOptions {
                bcast: true,
                prefixes: vec![Key::from(b"user:")],
                ..TrackOptions::default()
            },
        );
        t.invalidate(b"user:1");
        t.invalidate(b"order:1");
        assert_eq!(
            t.take_pending(),
            vec![(3, vec![Some(Key::from(b"user:1"))])]
        );
        t.flushed();
        assert_eq!(t.take_pending(), vec![(3, vec![None])]);
        t.disable(3);
        assert!(!t.active());
    }
}
