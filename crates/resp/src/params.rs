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

#[rustfmt::skip]
const PARAMS: &[(&str, Kind, &str)] = &[
    ("activedefrag", Kind::Bool, "no"),
    ("activerehashing", Kind::Bool, "yes"),
    ("appendfilename", Kind::Immutable, "appendonly.aof"),
    ("appendfsync", Kind::Enum(APPENDFSYNC), "everysec"),
    ("appendonly", Kind::Bool, "no"),
    ("bind", Kind::Text, "* -::*"),
    ("busy-reply-threshold", UINT, "5000"),
    ("client-output-buffer-limit", Kind::Text, "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"),
    ("client-query-buffer-limit", MEM, "1073741824"),
    ("cluster-enabled", Kind::Immutable, "no"),
    ("daemonize", Kind::Immutable, "no"),
    ("databases", Kind::Immutable, "16"),
    ("dbfilename", Kind::Text, "dump.rdb"),
    ("dir", Kind::Text, "/"),
    ("enable-debug-command", Kind::Immutable, "no"),
    ("hash-max-listpack-entries", UINT, "128"),
    ("hash-max-listpack-value", UINT, "64"),
    ("hash-max-ziplist-entries", UINT, "128"),
    ("hash-max-ziplist-value", UINT, "64"),
    ("hll-sparse-max-bytes", MEM, "3000"),
    ("hz", Kind::Int { memory: false, min: 0, max: i64::MAX }, "10"),
    ("io-threads", Kind::Immutable, "1"),
    ("latency-monitor-threshold", UINT, "0"),
    ("lazyfree-lazy-eviction", Kind::Bool, "no"),
    ("lazyfree-lazy-expire", Kind::Bool, "no"),
    ("lazyfree-lazy-server-del", Kind::Bool, "no"),
    ("lazyfree-lazy-user-del", Kind::Bool, "no"),
    ("lazyfree-lazy-user-flush", Kind::Bool, "no"),
    ("list-compress-depth", UINT, "0"),
    ("list-max-listpack-size", INT, "-2"),
    ("list-max-ziplist-size", INT, "-2"),
    ("logfile", Kind::Immutable, ""),
    ("loglevel", Kind::Enum(LOGLEVELS), "notice"),
    ("lua-time-limit", UINT, "5000"),
    ("maxclients", UINT, "10000"),
    ("maxmemory", MEM, "0"),
    ("maxmemory-policy", Kind::Enum(POLICIES), "noeviction"),
    ("maxmemory-samples", UINT, "5"),
    ("notify-keyspace-events", Kind::Text, ""),
    ("port", Kind::Immutable, "6379"),
    ("proto-max-bulk-len", Kind::Int { memory: true, min: 1024 * 1024, max: i64::MAX }, "536870912"),
    ("protected-mode", Kind::Bool, "yes"),
    ("repl-diskless-sync", Kind::Bool, "yes"),
    ("replica-read-only", Kind::Bool, "yes"),
    ("requirepass", Kind::Text, ""),
    ("save", Kind::Text, "3600 1 300 100 60 10000"),
    ("set-max-intset-entries", UINT, "512"),
    ("set-max-listpack-entries", UINT, "128"),
    ("slowlog-log-slower-than", INT, "10000"),
    ("slowlog-max-len", UINT, "128"),
    ("stop-writes-on-bgsave-error", Kind::Bool, "yes"),
    ("stream-node-max-bytes", MEM, "4096"),
    ("stream-node-max-entries", UINT, "100"),
    ("tcp-backlog", Kind::Immutable, "511"),
    ("tcp-keepalive", UINT, "300"),
    ("timeout", UINT, "0"),
    ("zset-max-listpack-entries", UINT, "128"),
    ("zset-max-listpack-value", UINT, "64"),
    ("zset-max-ziplist-entries", UINT, "128"),
    ("zset-max-ziplist-value", UINT, "64"),
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
            .map(|(name, _, default)| (*name, (*default).to_owned()))
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

    /// Sets several parameters at once, all or none (CONFIG SET p1 v1 p2 v2 ...).
    pub fn set_all(&mut self, pairs: &[(&[u8], &[u8])]) -> Result<(), ParamError> {
        let mut staged = Vec::with_capacity(pairs.len());
        for (name, value) in pairs {
            let lower = String::from_utf8_lossy(name).to_ascii_lowercase();
            let Some(&(canonical, kind, _)) = PARAMS.iter().find(|(n, _, _)| *n == lower) else {
                return Err(ParamError::Unknown(
                    String::from_utf8_lossy(name).into_owned(),
                ));
            };
            let value = String::from_utf8_lossy(value).into_owned();
            let invalid = |why: &str| ParamError::Invalid(canonical.to_owned(), why.to_owned());
            let normalized = match kind {
                Kind::Immutable => return Err(invalid("can't set immutable config")),
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
            };
            staged.push((canonical, normalized));
        }
        for (name, value) in staged {
            self.values.insert(name, value);
        }
        Ok(())
    }
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
            (b"maxmemory", b"100mb"),
            (b"MAXMEMORY-policy", b"allkeys-lru"),
        ])
        .unwrap();
        assert_eq!(p.get("maxmemory"), Some("104857600"));
        assert_eq!(p.get("maxmemory-policy"), Some("allkeys-lru"));
        assert_eq!(
            p.set_all(&[(b"hz", b"x")]).unwrap_err().to_string(),
            "ERR CONFIG SET failed (possibly related to argument 'hz') - argument couldn't be parsed into an integer"
        );
        assert!(matches!(
            p.set_all(&[(b"nope", b"1")]),
            Err(ParamError::Unknown(_))
        ));
        assert_eq!(p.matching(&[b"maxmemory*"]).len(), 3);
    }
}
