//! Server parameters for CONFIG GET/SET: Redis's names, defaults and value checks.

use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy)]
enum Kind {
    Bool,
    /// An integer; memory sizes accept Redis's units (kb, mb, gb).
    Int {
        memory: bool,
        min: i64,
        max: i64,
    },
    Enum(&'static [&'static str]),
    Text,
    /// notify-keyspace-events: class letters, shown in Redis's canonical order.
    Events,
    /// save: pairs of "seconds changes", or empty for none.
    Save,
}

/// Whether CONFIG SET may change a parameter. What Sluice applies is `Live`; so are the
/// encoding thresholds (OBJECT ENCODING and MEMORY USAGE report by them), the list node shape
/// (Sluice keeps one list layout, which Redis 7.0 always reports as a quicklist) and `save`
/// (Sluice's store is not a snapshot schedule: it is kept as applications set it). The rest
/// are reported by CONFIG GET but refused as Redis 7.0 refuses them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Live,
    /// Not implemented: refused as an unknown parameter, as Redis does for one it lacks.
    Unsupported,
    /// Redis's PROTECTED_CONFIG with `enable-protected-configs no`.
    Protected,
    /// Redis's IMMUTABLE_CONFIG (fixed at start).
    Immutable,
}

const POLICIES: &[&str] = &[
    "volatile-lru",
    "volatile-lfu",
    "volatile-random",
    "volatile-ttl",
    "allkeys-lru",
    "allkeys-lfu",
    "allkeys-random",
    "noeviction",
];
const LOGLEVELS: &[&str] = &["debug", "verbose", "notice", "warning"];
const APPENDFSYNC: &[&str] = &["always", "everysec", "no"];
const MEM: Kind = Kind::Int {
    memory: true,
    min: 0,
    max: i64::MAX,
};
const INT: Kind = Kind::Int {
    memory: false,
    min: i64::MIN,
    max: i64::MAX,
};
const UINT: Kind = Kind::Int {
    memory: false,
    min: 0,
    max: i64::MAX,
};

use Status::{Immutable, Live, Protected, Unsupported};

#[rustfmt::skip]
const PARAMS: &[(&str, Status, Kind, &str)] = &[
    ("acl-pubsub-default", Live, Kind::Enum(&["allchannels", "resetchannels"]), "resetchannels"),
    ("aclfile", Immutable, Kind::Text, ""),
    ("acllog-max-len", Live, UINT, "128"),
    ("activedefrag", Unsupported, Kind::Bool, "no"),
    ("activerehashing", Unsupported, Kind::Bool, "yes"),
    ("appendfilename", Immutable, Kind::Text, "appendonly.aof"),
    ("appendfsync", Unsupported, Kind::Enum(APPENDFSYNC), "everysec"),
    ("appendonly", Unsupported, Kind::Bool, "no"),
    ("bind", Unsupported, Kind::Text, "* -::*"),
    ("busy-reply-threshold", Live, UINT, "5000"),
    ("client-output-buffer-limit", Unsupported, Kind::Text, "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"),
    ("client-query-buffer-limit", Unsupported, MEM, "1073741824"),
    ("cluster-enabled", Immutable, Kind::Text, "no"),
    ("daemonize", Immutable, Kind::Text, "no"),
    ("databases", Immutable, Kind::Text, "16"),
    ("dbfilename", Protected, Kind::Text, "dump.rdb"),
    ("dir", Protected, Kind::Text, "/"),
    ("enable-debug-command", Immutable, Kind::Text, "no"),
    ("enable-protected-configs", Immutable, Kind::Text, "no"),
    ("hash-max-listpack-entries", Live, UINT, "128"),
    ("hash-max-listpack-value", Live, UINT, "64"),
    ("hash-max-ziplist-entries", Live, UINT, "128"),
    ("hash-max-ziplist-value", Live, UINT, "64"),
    ("hll-sparse-max-bytes", Live, MEM, "3000"),
    ("hz", Unsupported, Kind::Int { memory: false, min: 0, max: i64::MAX }, "10"),
    ("io-threads", Immutable, Kind::Text, "1"),
    ("latency-monitor-threshold", Unsupported, UINT, "0"),
    ("lfu-decay-time", Live, Kind::Int { memory: false, min: 0, max: i32::MAX as i64 }, "1"),
    ("lfu-log-factor", Live, Kind::Int { memory: false, min: 0, max: i32::MAX as i64 }, "10"),
    ("lazyfree-lazy-eviction", Unsupported, Kind::Bool, "no"),
    ("lazyfree-lazy-expire", Unsupported, Kind::Bool, "no"),
    ("lazyfree-lazy-server-del", Unsupported, Kind::Bool, "no"),
    ("lazyfree-lazy-user-del", Unsupported, Kind::Bool, "no"),
    ("lazyfree-lazy-user-flush", Unsupported, Kind::Bool, "no"),
    ("list-compress-depth", Live, UINT, "0"),
    ("list-max-listpack-size", Live, INT, "-2"),
    ("list-max-ziplist-size", Live, INT, "-2"),
    ("logfile", Immutable, Kind::Text, ""),
    ("loglevel", Unsupported, Kind::Enum(LOGLEVELS), "notice"),
    ("lua-time-limit", Live, UINT, "5000"),
    ("maxclients", Unsupported, UINT, "10000"),
    ("maxmemory", Live, MEM, "0"),
    ("maxmemory-policy", Live, Kind::Enum(POLICIES), "noeviction"),
    ("maxmemory-samples", Live, Kind::Int { memory: false, min: 1, max: i32::MAX as i64 }, "5"),
    ("notify-keyspace-events", Live, Kind::Events, ""),
    ("port", Immutable, Kind::Text, "6379"),
    ("proto-max-bulk-len", Live, Kind::Int { memory: true, min: 1024 * 1024, max: i64::MAX }, "536870912"),
    ("protected-mode", Unsupported, Kind::Bool, "yes"),
    ("repl-diskless-sync", Unsupported, Kind::Bool, "yes"),
    ("replica-read-only", Unsupported, Kind::Bool, "yes"),
    ("requirepass", Live, Kind::Text, ""),
    ("save", Live, Kind::Save, "3600 1 300 100 60 10000"),
    ("set-max-intset-entries", Live, UINT, "512"),
    ("set-max-listpack-entries", Live, UINT, "128"),
    ("slowlog-log-slower-than", Live, INT, "10000"),
    ("slowlog-max-len", Live, UINT, "128"),
    ("stop-writes-on-bgsave-error", Unsupported, Kind::Bool, "yes"),
    ("stream-node-max-bytes", Live, MEM, "4096"),
    ("stream-node-max-entries", Live, UINT, "100"),
    ("tcp-backlog", Immutable, Kind::Text, "511"),
    ("tcp-keepalive", Unsupported, UINT, "300"),
    ("timeout", Unsupported, UINT, "0"),
    ("zset-max-listpack-entries", Live, UINT, "128"),
    ("zset-max-listpack-value", Live, UINT, "64"),
    ("zset-max-ziplist-entries", Live, UINT, "128"),
    ("zset-max-ziplist-value", Live, UINT, "64"),
];

/// Why CONFIG SET refused a value; the message follows Redis's wording.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamError {
    #[error("ERR Unknown option or number of arguments for CONFIG SET - '{0}'")]
    Unknown(String),
    #[error("ERR CONFIG SET failed (possibly related to argument '{0}') - {1}")]
    Invalid(String, String),
}

/// Current parameter values.
#[derive(Debug, Clone)]
pub struct Params {
    values: BTreeMap<&'static str, String>,
}

impl Params {
    /// Defaults, with `databases`, `port` and `requirepass` from the server's configuration.
    pub fn new(databases: usize, port: u16, password: Option<&str>) -> Self {
        let mut values: BTreeMap<&'static str, String> = PARAMS
            .iter()
            .map(|(name, _, _, default)| (*name, (*default).to_owned()))
            .collect();
        values.insert("databases", databases.to_string());
        values.insert("port", port.to_string());
        values.insert("requirepass", password.unwrap_or_default().to_owned());
        Self { values }
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    /// Name/value pairs matching `patterns` (case-insensitive globs), pattern by pattern as
    /// Redis replies them: an exact name first-come, a glob's matches in name order; no repeats.
    pub fn matching(&self, patterns: &[&[u8]]) -> Vec<(&'static str, &str)> {
        let mut found: Vec<(&'static str, &str)> = Vec::new();
        for pattern in patterns {
            for (name, value) in &self.values {
                if crate::glob::matches(pattern, name.as_bytes(), true)
                    && !found.iter().any(|(n, _)| n == name)
                {
                    found.push((name, value.as_str()));
                }
            }
        }
        found
    }

    /// Sets several parameters at once, all or none (CONFIG SET p1 v1 p2 v2 ...). As Redis, the
    /// first refused name decides the error: unknown (or not implemented), immutable,
    /// protected, repeated; then values are checked.
    pub fn set_all(&mut self, pairs: &[(&[u8], &[u8])]) -> Result<(), ParamError> {
        let mut chosen: Vec<(&'static str, Kind, &[u8])> = Vec::with_capacity(pairs.len());
        for (name, value) in pairs {
            let given = || String::from_utf8_lossy(name).into_owned();
            let lower = String::from_utf8_lossy(name).to_ascii_lowercase();
            let found = PARAMS.iter().find(|(n, _, _, _)| *n == lower);
            let &(canonical, status, kind, _) = match found {
                Some(row) if row.1 != Status::Unsupported => row,
                _ => return Err(ParamError::Unknown(given())),
            };
            let refused = |why: &str| ParamError::Invalid(given(), why.to_owned());
            match status {
                Status::Immutable => return Err(refused("can't set immutable config")),
                Status::Protected => return Err(refused("can't set protected config")),
                Status::Live | Status::Unsupported => {}
            }
            if chosen.iter().any(|(n, _, _)| *n == canonical) {
                return Err(refused("duplicate parameter"));
            }
            chosen.push((canonical, kind, value));
        }
        let mut staged = Vec::with_capacity(chosen.len());
        for (canonical, kind, value) in chosen {
            staged.push((canonical, normalize(canonical, kind, value)?));
        }
        for (name, value) in staged {
            if let Some(alias) = alias_of(name) {
                self.values.insert(alias, value.clone());
            }
            self.values.insert(name, value);
        }
        Ok(())
    }
}

/// The parameters Redis 7.0 keeps under two names (the old name first).
const ALIASES: &[(&str, &str)] = &[
    ("lua-time-limit", "busy-reply-threshold"),
    ("hash-max-ziplist-entries", "hash-max-listpack-entries"),
    ("hash-max-ziplist-value", "hash-max-listpack-value"),
    ("zset-max-ziplist-entries", "zset-max-listpack-entries"),
    ("zset-max-ziplist-value", "zset-max-listpack-value"),
    ("list-max-ziplist-size", "list-max-listpack-size"),
];

/// The other name of a parameter Redis keeps under two.
fn alias_of(name: &str) -> Option<&'static str> {
    ALIASES.iter().find_map(|&(old, new)| {
        if name == old {
            Some(new)
        } else if name == new {
            Some(old)
        } else {
            None
        }
    })
}

/// Checks a value against its parameter's kind; returns it as CONFIG GET shows it.
fn normalize(canonical: &str, kind: Kind, value: &[u8]) -> Result<String, ParamError> {
    let value = String::from_utf8_lossy(value).into_owned();
    let invalid = |why: &str| ParamError::Invalid(canonical.to_owned(), why.to_owned());
    Ok(match kind {
        Kind::Bool => match value.to_ascii_lowercase().as_str() {
            "yes" => "yes".to_owned(),
            "no" => "no".to_owned(),
            _ => return Err(invalid("argument must be 'yes' or 'no'")),
        },
        Kind::Enum(options) => {
            let lower = value.to_ascii_lowercase();
            if !options.contains(&lower.as_str()) {
                return Err(invalid(&format!(
                    "argument(s) must be one of the following: {}",
                    options.join(", ")
                )));
            }
            lower
        }
        Kind::Int { memory, min, max } => {
            let parsed = if memory {
                parse_memory(&value)
            } else {
                value.parse::<i64>().ok()
            };
            let Some(n) = parsed else {
                return Err(invalid("argument couldn't be parsed into an integer"));
            };
            if n < min || n > max {
                return Err(invalid(&format!(
                    "argument must be between {min} and {max} inclusive"
                )));
            }
            n.to_string()
        }
        Kind::Text => value,
        Kind::Save => {
            let words: Vec<&str> = value.split_ascii_whitespace().collect();
            let pairs_of_ints = words.len().is_multiple_of(2)
                && words.iter().all(|w| w.parse::<i64>().is_ok_and(|n| n >= 0));
            if !pairs_of_ints {
                return Err(invalid("Invalid save parameters"));
            }
            words.join(" ")
        }
        Kind::Events => match crate::engine::notify::parse_flags(&value) {
            Some(flags) => crate::engine::notify::flags_text(flags),
            None => {
                return Err(invalid(
                    "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.",
                ));
            }
        },
    })
}

/// Parses "100", "1k", "1kb", "5mb", "2gb" as Redis's memtoull does.
fn parse_memory(value: &str) -> Option<i64> {
    let lower = value.to_ascii_lowercase();
    let split = lower
        .find(|c: char| !c.is_ascii_digit() && c != '-')
        .unwrap_or(lower.len());
    let (digits, unit) = lower.split_at(split);
    let n: i64 = digits.parse().ok()?;
    let mul: i64 = match unit {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => 1024,
        "m" => 1000 * 1000,
        "mb" => 1024 * 1024,
        "g" => 1000 * 1000 * 1000,
        "gb" => 1024 * 1024 * 1024,
        _ => return None,
    };
    n.checked_mul(mul)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_and_get() {
        let mut p = Params::new(16, 7000, None);
        p.set_all(&[
            (b"stream-node-max-bytes", b"1kb"),
            (b"LUA-time-limit", b"100"),
        ])
        .unwrap();
        assert_eq!(p.get("stream-node-max-bytes"), Some("1024"));
        assert_eq!(p.get("busy-reply-threshold"), Some("100"));
        assert_eq!(
            p.set_all(&[(b"appendonly", b"yes")])
                .unwrap_err()
                .to_string(),
            "ERR Unknown option or number of arguments for CONFIG SET - 'appendonly'"
        );
        p.set_all(&[(b"maxmemory", b"10mb")]).unwrap();
        assert_eq!(p.get("maxmemory"), Some("10485760"));
        p.set_all(&[(b"notify-keyspace-events", b"KEA")]).unwrap();
        assert_eq!(p.get("notify-keyspace-events"), Some("AKE"));
        assert_eq!(
            p.set_all(&[(b"notify-keyspace-events", b"Kq")])
                .unwrap_err()
                .to_string(),
            "ERR CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - Invalid event class character. Use 'Ag$lshzxeKEtmdn'."
        );
        assert_eq!(
            p.set_all(&[(b"DIR", b"/tmp")]).unwrap_err().to_string(),
            "ERR CONFIG SET failed (possibly related to argument 'DIR') - can't set protected config"
        );
        assert_eq!(
            p.set_all(&[(b"lua-time-limit", b"1"), (b"LUA-time-limit", b"2")])
                .unwrap_err()
                .to_string(),
            "ERR CONFIG SET failed (possibly related to argument 'LUA-time-limit') - duplicate parameter"
        );
        assert_eq!(
            p.set_all(&[(b"stream-node-max-entries", b"x")])
                .unwrap_err()
                .to_string(),
            "ERR CONFIG SET failed (possibly related to argument 'stream-node-max-entries') - argument couldn't be parsed into an integer"
        );
        assert!(matches!(
            p.set_all(&[(b"nope", b"1")]),
            Err(ParamError::Unknown(_))
        ));
        assert_eq!(p.matching(&[b"maxmemory*"]).len(), 3);
    }

    #[test]
    fn encoding_thresholds_keep_both_names_and_save_takes_pairs() {
        let mut p = Params::new(16, 7000, None);
        p.set_all(&[(b"zset-max-ziplist-entries", b"3")]).unwrap();
        assert_eq!(p.get("zset-max-listpack-entries"), Some("3"));
        p.set_all(&[(b"hash-max-listpack-value", b"9")]).unwrap();
        assert_eq!(p.get("hash-max-ziplist-value"), Some("9"));
        p.set_all(&[
            (b"list-max-ziplist-size", b"1"),
            (b"list-compress-depth", b"2"),
        ])
        .unwrap();
        assert_eq!(p.get("list-max-listpack-size"), Some("1"));
        p.set_all(&[(b"save", b"")]).unwrap();
        assert_eq!(p.get("save"), Some(""));
        p.set_all(&[(b"save", b"900  1 300 10")]).unwrap();
        assert_eq!(p.get("save"), Some("900 1 300 10"));
        assert_eq!(
            p.set_all(&[(b"save", b"900")]).unwrap_err().to_string(),
            "ERR CONFIG SET failed (possibly related to argument 'save') - Invalid save parameters"
        );
        assert_eq!(p.get("save"), Some("900 1 300 10"));
    }
}
