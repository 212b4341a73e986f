//! ACL LOG: the refusals (commands, keys, channels, failed AUTHs), similar ones within a minute
//! counted in one entry, newest first, at most acllog-max-len.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// What was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    Command,
    Key,
    Channel,
    Auth,
}

impl Reason {
    pub fn name(self) -> &'static str {
        match self {
            Reason::Command => "command",
            Reason::Key => "key",
            Reason::Channel => "channel",
            Reason::Auth => "auth",
        }
    }
}

/// Where the refused command came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    Toplevel,
    Multi,
    Lua,
}

impl Context {
    pub fn name(self) -> &'static str {
        match self {
            Context::Toplevel => "toplevel",
            Context::Multi => "multi",
            Context::Lua => "lua",
        }
    }
}

/// One entry of the log.
#[derive(Debug, Clone)]
pub struct LogEntry {
    pub count: u64,
    pub reason: Reason,
    pub context: Context,
    /// The command, key, channel, or `AUTH`.
    pub object: Vec<u8>,
    pub username: Vec<u8>,
    pub at: Instant,
    /// The client's CLIENT LIST line at the last refusal.
    pub client_info: String,
}

/// Entries within this of each other, otherwise alike, are counted as one.
const GROUPING: Duration = Duration::from_secs(60);
/// How many of the newest entries a new one is compared with.
const SCAN: usize = 10;

/// The log itself.
#[derive(Debug)]
pub struct AclLog {
    entries: VecDeque<LogEntry>,
    pub max_len: usize,
}

impl Default for AclLog {
    fn default() -> Self {
        Self {
            entries: VecDeque::new(),
            max_len: 128,
        }
    }
}

impl AclLog {
    pub fn add(&mut self, entry: LogEntry) {
        let similar = self.entries.iter().take(SCAN).position(|e| {
            e.reason == entry.reason
                && e.context == entry.context
                && e.object == entry.object
                && e.username == entry.username
                && entry.at.saturating_duration_since(e.at) <= GROUPING
        });
        if let Some(i) = similar
            && let Some(mut found) = self.entries.remove(i)
        {
            found.count += 1;
            found.at = entry.at;
            found.client_info = entry.client_info;
            self.entries.push_front(found);
            return;
        }
        self.entries.push_front(entry);
        self.entries.truncate(self.max_len);
    }

    pub fn reset(&mut self) {
        self.entries.clear();
    }

    /// The newest `count` entries.
    pub fn newest(&self, count: usize) -> impl Iterator<Item = &LogEntry> {
        self.entries.iter().take(count)
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn set_max_len(&mut self, max: usize) {
        self.max_len = max;
        self.entries.truncate(max);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(object: &str) -> LogEntry {
        LogEntry {
            count: 1,
            reason: Reason::Command,
            context: Context::Toplevel,
            object: object.as_bytes().to_vec(),
            username: b"u".to_vec(),
            at: Instant::now(),
            client_info: String::new(),
        }
    }

    #[test]
    fn groups_alike_entries_and_keeps_the_newest() {
        let mut log = AclLog::default();
        log.add(entry("get"));
        log.add(entry("set"));
        log.add(entry("get"));
        let first: Vec<_> = log
            .newest(10)
            .map(|e| (e.object.clone(), e.count))
            .collect();
        assert_eq!(first, [(b"get".to_vec(), 2), (b"set".to_vec(), 1)]);
        log.set_max_len(1);
        assert_eq!(log.len(), 1);
        for i in 0..5 {
            log.add(entry(&format!("c{i}")));
        }
        assert_eq!(log.len(), 1);
    }
}
