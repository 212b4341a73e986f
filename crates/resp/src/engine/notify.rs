//! Keyspace notification classes (`notify-keyspace-events` letters) and the events a store queues for publishing.
//!
//! The engine does not publish: it queues `KeyEvent`s (from commands, lazy and active expiry,
//! eviction) and the layer that owns the pub/sub hub drains and publishes them after each
//! command, so the store lock is never held together with the hub's for longer than a drain.

use super::{Key, Store};

/// `K`: publish to `__keyspace@<db>__:<key>`.
pub const KEYSPACE: u32 = 1;
/// `E`: publish to `__keyevent@<db>__:<event>`.
pub const KEYEVENT: u32 = 1 << 1;
/// `g`: generic commands (DEL, EXPIRE, RENAME, ...).
pub const GENERIC: u32 = 1 << 2;
/// `$`: string commands.
pub const STRING: u32 = 1 << 3;
/// `l`: list commands.
pub const LIST: u32 = 1 << 4;
/// `s`: set commands.
pub const SET: u32 = 1 << 5;
/// `h`: hash commands.
pub const HASH: u32 = 1 << 6;
/// `z`: sorted-set commands.
pub const ZSET: u32 = 1 << 7;
/// `x`: keys expiring.
pub const EXPIRED: u32 = 1 << 8;
/// `e`: keys evicted for maxmemory.
pub const EVICTED: u32 = 1 << 9;
/// `t`: stream commands.
pub const STREAM: u32 = 1 << 10;
/// `m`: lookups of missing keys.
pub const KEY_MISS: u32 = 1 << 11;
/// `d`: module events (none in Sluice; accepted as Redis accepts it).
pub const MODULE: u32 = 1 << 13;
/// `n`: keys created.
pub const NEW: u32 = 1 << 14;
/// The `A` alias: every class but key misses and new keys.
pub const ALL: u32 =
    GENERIC | STRING | LIST | SET | HASH | ZSET | EXPIRED | EVICTED | STREAM | MODULE;

/// The class letters in the order CONFIG GET shows them.
const LETTERS: [(u32, char); 10] = [
    (GENERIC, 'g'),
    (STRING, '$'),
    (LIST, 'l'),
    (SET, 's'),
    (HASH, 'h'),
    (ZSET, 'z'),
    (EXPIRED, 'x'),
    (EVICTED, 'e'),
    (STREAM, 't'),
    (MODULE, 'd'),
];

/// The flags of a `notify-keyspace-events` value; None when it has an unknown letter.
pub fn parse_flags(text: &str) -> Option<u32> {
    let mut flags = 0;
    for c in text.chars() {
        flags |= match c {
            'A' => ALL,
            'K' => KEYSPACE,
            'E' => KEYEVENT,
            'm' => KEY_MISS,
            'n' => NEW,
            other => LETTERS.iter().find(|(_, l)| *l == other)?.0,
        };
    }
    Some(flags)
}

/// The canonical text of `flags` (what CONFIG GET replies).
pub fn flags_text(flags: u32) -> String {
    let mut text = String::new();
    if flags & ALL == ALL {
        text.push('A');
    } else {
        for (flag, letter) in LETTERS {
            if flags & flag != 0 {
                text.push(letter);
            }
        }
        if flags & NEW != 0 {
            text.push('n');
        }
    }
    for (flag, letter) in [(KEYSPACE, 'K'), (KEYEVENT, 'E'), (KEY_MISS, 'm')] {
        if flags & flag != 0 {
            text.push(letter);
        }
    }
    text
}

/// An event waiting to be published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyEvent {
    /// The database of the key.
    pub db: usize,
    /// Redis's event name (`set`, `expired`, ...).
    pub event: &'static [u8],
    /// The key.
    pub key: Key,
}

/// Engine-side events a database records for the store to queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pending {
    /// The key expired (lazily or actively).
    Expired,
    /// The key was created.
    New,
}

/// Which engine-side events a database records.
#[derive(Debug, Clone, Copy, Default)]
pub struct DbEvents {
    /// Record `expired` events.
    pub expired: bool,
    /// Record `new` events.
    pub new: bool,
}

impl Store {
    /// Turns notifications on for the classes in `flags` (0 turns them off).
    pub fn set_notify(&mut self, flags: u32) {
        let publishing = flags & (KEYSPACE | KEYEVENT) != 0;
        self.notify = if publishing { flags } else { 0 };
        let events = DbEvents {
            expired: publishing && flags & EXPIRED != 0,
            new: publishing && flags & NEW != 0,
        };
        for i in 0..self.db_count() {
            let db = self.db(i);
            db.events = events;
            db.pending.clear();
        }
        self.events.clear();
        self.touched.clear();
    }

    /// Whether events of `class` are published.
    #[inline]
    pub fn notifies(&self, class: u32) -> bool {
        self.notify & class != 0
    }

    /// Queues `event` on `key` if its class is published.
    pub fn key_event(&mut self, db: usize, class: u32, event: &'static [u8], key: &[u8]) {
        if self.notify & class != 0 {
            self.events.push(KeyEvent {
                db,
                event,
                key: key.into(),
            });
        }
    }

    /// Takes the queued events, those the databases recorded (expired, new keys) included.
    pub fn take_events(&mut self) -> Vec<KeyEvent> {
        if self.notify == 0 {
            return Vec::new();
        }
        // What the databases recorded happened first (a key expires or is created before the
        // command's own event about it).
        let mut all = Vec::new();
        for i in 0..self.db_count() {
            let pending = std::mem::take(&mut self.db(i).pending);
            for (kind, key) in pending {
                let event: &'static [u8] = match kind {
                    Pending::Expired => b"expired",
                    Pending::New => b"new",
                };
                all.push(KeyEvent { db: i, event, key });
            }
        }
        all.append(&mut self.events);
        all
    }

    /// Takes the keys changed since the last call (recorded while notifications are on).
    pub fn take_touched(&mut self) -> Vec<(usize, Key)> {
        std::mem::take(&mut self.touched)
    }

    /// The flags in force (CONFIG GET notify-keyspace-events reads the parameter instead).
    pub fn notify_flags(&self) -> u32 {
        self.notify
    }
}

/// The channel and message of each publication of `event` under `flags`: the keyspace one
/// (`__keyspace@<db>__:<key>`, message the event) and the keyevent one
/// (`__keyevent@<db>__:<event>`, message the key).
pub fn publications(flags: u32, event: &KeyEvent) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::with_capacity(2);
    if flags & KEYSPACE != 0 {
        let mut channel = format!("__keyspace@{}__:", event.db).into_bytes();
        channel.extend_from_slice(&event.key);
        out.push((channel, event.event.to_vec()));
    }
    if flags & KEYEVENT != 0 {
        let mut channel = format!("__keyevent@{}__:", event.db).into_bytes();
        channel.extend_from_slice(event.event);
        out.push((channel, event.key.to_vec()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_round_trip_in_redis_order() {
        assert_eq!(parse_flags("KEA").map(flags_text).as_deref(), Some("AKE"));
        assert_eq!(parse_flags("Elg$").map(flags_text).as_deref(), Some("g$lE"));
        assert_eq!(parse_flags("nmxK").map(flags_text).as_deref(), Some("xnKm"));
        assert_eq!(parse_flags("").map(flags_text).as_deref(), Some(""));
        assert_eq!(parse_flags("Q"), None);
    }

    #[test]
    fn publications_name_db_key_and_event() {
        let e = KeyEvent {
            db: 3,
            event: b"set",
            key: b"k".into(),
        };
        assert_eq!(
            publications(KEYSPACE | KEYEVENT | STRING, &e),
            vec![
                (b"__keyspace@3__:k".to_vec(), b"set".to_vec()),
                (b"__keyevent@3__:set".to_vec(), b"k".to_vec())
            ]
        );
    }
}
