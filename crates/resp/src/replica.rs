//! A read-only follower's state as the gate shows it: the link to the primary, ROLE, INFO.
//!
//! A sink that follows another instance's writes (`sluice-resp-store`'s follower) hands a
//! [`Replica`] in [`crate::durable::Persistence::replica`]: every command that writes is then
//! refused with Redis's replica error ([`READONLY`]), and ROLE and INFO replication answer as a
//! replica's do, the link being up while the follower hears the primary's changes.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};

/// The error of a write against a read-only replica, word for word Redis's.
pub const READONLY: &str = "READONLY You can't write against a read only replica.";

/// What a follower shares with the gate.
#[derive(Debug)]
pub struct Replica {
    /// Where the changes come from (INFO's `master_host`, ROLE), e.g. PostgreSQL's host.
    pub master_host: String,
    /// Its port.
    pub master_port: u16,
    link_up: AtomicBool,
    /// Unix ms of the last change heard or of the link's last state change.
    last_io_ms: AtomicI64,
    /// Unix ms since when the link is down (0 while up).
    down_since_ms: AtomicI64,
    notifications: AtomicU64,
    keys_reread: AtomicU64,
    members_reread: AtomicU64,
    reloads: AtomicU64,
    /// The primary's function libraries when they changed, until the gate installs them.
    libraries: parking_lot::Mutex<Option<crate::engine::Libraries>>,
    libraries_changed: tokio::sync::Notify,
}

impl Replica {
    /// A replica of `master_host:master_port`, its link down until [`Replica::set_link`].
    pub fn new(master_host: String, master_port: u16) -> Self {
        let now = crate::engine::now_ms();
        Self {
            master_host,
            master_port,
            link_up: AtomicBool::new(false),
            last_io_ms: AtomicI64::new(now),
            down_since_ms: AtomicI64::new(now),
            notifications: AtomicU64::new(0),
            keys_reread: AtomicU64::new(0),
            members_reread: AtomicU64::new(0),
            reloads: AtomicU64::new(0),
            libraries: parking_lot::Mutex::new(None),
            libraries_changed: tokio::sync::Notify::new(),
        }
    }

    /// Hands the primary's function libraries, read after they changed, to the gate (which
    /// replaces its own with them); a newer offer replaces one not yet taken.
    pub fn offer_libraries(&self, libraries: crate::engine::Libraries) {
        *self.libraries.lock() = Some(libraries);
        self.libraries_changed.notify_one();
    }

    /// The next libraries offered.
    pub async fn next_libraries(&self) -> crate::engine::Libraries {
        loop {
            if let Some(libraries) = self.libraries.lock().take() {
                return libraries;
            }
            self.libraries_changed.notified().await;
        }
    }

    /// Records the link's state.
    pub fn set_link(&self, up: bool) {
        let now = crate::engine::now_ms();
        let was = self.link_up.swap(up, Ordering::AcqRel);
        if was != up {
            self.down_since_ms
                .store(if up { 0 } else { now }, Ordering::Relaxed);
        }
        self.last_io_ms.store(now, Ordering::Relaxed);
    }

    /// Whether the link is up.
    pub fn link_up(&self) -> bool {
        self.link_up.load(Ordering::Acquire)
    }

    /// Records `notifications` heard, and the `keys` read again whole and the `members` of
    /// keys written in part read again because of them.
    pub fn heard(&self, notifications: u64, keys: u64, members: u64) {
        self.notifications
            .fetch_add(notifications, Ordering::Relaxed);
        self.keys_reread.fetch_add(keys, Ordering::Relaxed);
        self.members_reread.fetch_add(members, Ordering::Relaxed);
        self.last_io_ms
            .store(crate::engine::now_ms(), Ordering::Relaxed);
    }

    /// Records a whole reload of the keyspace.
    pub fn reloaded(&self) {
        self.reloads.fetch_add(1, Ordering::Relaxed);
    }

    /// The `# Replication` section of INFO.
    pub fn info_section(&self, text: &mut String) {
        use std::fmt::Write as _;
        let now = crate::engine::now_ms();
        let up = self.link_up();
        let secs = |ms: i64| (now.saturating_sub(ms) / 1000).max(0);
        let _ = write!(
            text,
            "# Replication\r\nrole:slave\r\nmaster_host:{}\r\nmaster_port:{}\r\n\
             master_link_status:{}\r\nmaster_last_io_seconds_ago:{}\r\nmaster_sync_in_progress:0\r\n",
            self.master_host,
            self.master_port,
            if up { "up" } else { "down" },
            if up {
                secs(self.last_io_ms.load(Ordering::Relaxed))
            } else {
                -1
            },
        );
        if !up {
            let since = self.down_since_ms.load(Ordering::Relaxed);
            let _ = write!(text, "master_link_down_since_seconds:{}\r\n", secs(since));
        }
        let _ = write!(
            text,
            "slave_read_repl_offset:0\r\nslave_repl_offset:0\r\nslave_priority:100\r\n\
             slave_read_only:1\r\nreplica_announced:1\r\nconnected_slaves:0\r\n\
             master_repl_offset:0\r\nsluice_follow_notifications:{}\r\n\
             sluice_follow_keys_reread:{}\r\nsluice_follow_members_reread:{}\r\n\
             sluice_follow_reloads:{}\r\n\r\n",
            self.notifications.load(Ordering::Relaxed),
            self.keys_reread.load(Ordering::Relaxed),
            self.members_reread.load(Ordering::Relaxed),
            self.reloads.load(Ordering::Relaxed),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_says_slave_and_the_link_state() {
        let r = Replica::new("db.example".into(), 5433);
        let mut text = String::new();
        r.info_section(&mut text);
        assert!(text.contains("role:slave\r\n"), "{text}");
        assert!(text.contains("master_link_status:down\r\n"), "{text}");
        assert!(text.contains("master_link_down_since_seconds:"), "{text}");
        r.set_link(true);
        r.heard(2, 5, 7);
        let mut text = String::new();
        r.info_section(&mut text);
        assert!(text.contains("master_link_status:up\r\n"), "{text}");
        assert!(!text.contains("master_link_down_since_seconds"), "{text}");
        assert!(text.contains("sluice_follow_keys_reread:5\r\n"), "{text}");
        assert!(
            text.contains("sluice_follow_members_reread:7\r\n"),
            "{text}"
        );
    }
}
