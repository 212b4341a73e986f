//! Server parameters for CONFIG GET/SET: Redis 7.0's names, aliases, defaults and value checks,
//! and which of them Sluice acts on (the rest are kept and shown, and COMPAT.md lists them).

mod table;

use std::collections::HashMap;
use std::sync::LazyLock;

/// A numeric parameter's range and the forms its values may take.
#[derive(Debug, Clone, Copy)]
struct Num {
    min: i128,
    max: i128,
    /// Accepts Redis's units (1k, 5mb, 2gb).
    memory: bool,
    /// Accepts a percentage (`10%`), kept as a negative number as Redis does.
    percent: bool,
    octal: bool,
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Bool,
    Text,
    /// One of the names; `multi`: several space-separated names whose values are OR-ed.
    Enum {
        options: &'static [(&'static str, u32)],
        multi: bool,
    },
    Int(Num),
    /// `save`: pairs of seconds and changes.
    Save,
    /// `client-output-buffer-limit`: class, hard, soft, seconds; given classes replace theirs.
    OutputBufferLimit,
    /// `oom-score-adj-values`: three integers in -2000..=2000.
    OomValues,
    /// `notify-keyspace-events`: class letters, shown in Redis's canonical order.
    Events,
    /// Space-separated words (bind, replicaof).
    Words,
    /// `latency-tracking-info-percentiles`: numbers in 0..=100.
    Percentiles,
}

/// Whether CONFIG SET may change a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    Modifiable,
    /// Redis's IMMUTABLE_CONFIG (fixed at start).
    Immutable,
    /// Redis's PROTECTED_CONFIG with `enable-protected-configs no`.
    Protected,
    /// Redis may change it at run time, Sluice only at start (its listener, its store): the
    /// current value is accepted, another is refused.
    Fixed,
}

/// What setting a parameter does in Sluice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Sluice acts on it as Redis does.
    Acts,
    /// Changes what OBJECT ENCODING and MEMORY USAGE report (the thresholds of Redis's compact
    /// encodings); Sluice's own layouts do not depend on it.
    Reported,
    /// Replication: Sluice has no replicas of its own (the PostgreSQL store has them).
    Replication,
    /// Redis Cluster: Sluice is a standalone server.
    Cluster,
    /// RDB and AOF files: Sluice writes none (its store is PostgreSQL).
    Files,
    /// Tuning of Redis's own internals (threads, hashing, defragmentation, encodings).
    Internal,
    /// The process: logging, daemonizing, signals, CPU affinity.
    Process,
    /// A limit or check Redis enforces and Sluice does not (yet).
    NotEnforced,
}

impl Effect {
    /// What COMPAT.md says of a parameter with this effect.
    pub fn describe(self) -> &'static str {
        match self {
            Effect::Acts => "acts as in Redis",
            Effect::Reported => "kept; changes only what OBJECT ENCODING and MEMORY USAGE report",
            Effect::Replication => "kept, no effect: replication (Sluice has no Redis replicas)",
            Effect::Cluster => "kept, no effect: Redis Cluster (Sluice is standalone)",
            Effect::Files => "kept, no effect: RDB/AOF files (Sluice writes none)",
            Effect::Internal => "kept, no effect: Redis's internals",
            Effect::Process => "kept, no effect: the process (logging, signals, CPU)",
            Effect::NotEnforced => "kept, not enforced by Sluice",
        }
    }
}

#[derive(Debug)]
struct Row {
    name: &'static str,
    alias: Option<&'static str>,
    kind: Kind,
    access: Access,
    effect: Effect,
    default: &'static str,
    /// Only an exact CONFIG GET shows it, not a pattern.
    hidden: bool,
}

/// Row index by lower-case name and alias.
static INDEX: LazyLock<HashMap<&'static str, usize>> = LazyLock::new(|| {
    let mut index = HashMap::new();
    for (i, row) in table::ROWS.iter().enumerate() {
        index.insert(row.name, i);
        if let Some(alias) = row.alias {
            index.insert(alias, i);
        }
    }
    index
});

fn find(name: &[u8]) -> Option<usize> {
    find_named(name).map(|(i, _)| i)
}

/// The row of a name or alias, and that name as the table spells it.
fn find_named(name: &[u8]) -> Option<(usize, &'static str)> {
    // The server's own lookups (on hot paths: PFADD, XADD, scripts) use lower-case names.
    if let Some((known_as, i)) = std::str::from_utf8(name)
        .ok()
        .and_then(|n| INDEX.get_key_value(n))
    {
        return Some((*i, *known_as));
    }
    let lower = String::from_utf8_lossy(name).to_ascii_lowercase();
    let (known_as, i) = INDEX.get_key_value(lower.as_str())?;
    Some((*i, *known_as))
}

/// Every parameter with its alias and what it does in Sluice, for COMPAT.md.
pub fn described() -> impl Iterator<Item = (&'static str, Option<&'static str>, &'static str)> {
    table::ROWS.iter().map(|row| {
        let what = match row.access {
            Access::Fixed => "set at start (the current value is accepted, another refused)",
            Access::Immutable => "immutable, as in Redis",
            Access::Protected => "protected, as in Redis (enable-protected-configs no)",
            Access::Modifiable if row.name.starts_with("min-replicas-") => {
                "acts: Sluice has no Redis replicas, so with both above 0 writes get NOREPLICAS"
            }
            Access::Modifiable if row.name == "client-output-buffer-limit" => {
                "kept; Sluice enforces Redis's default pub/sub hard limit (32 MB) whatever is set"
            }
            Access::Modifiable => row.effect.describe(),
        };
        (row.name, row.alias, what)
    })
}

/// Why CONFIG SET refused; the message follows Redis's wording.
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
    /// One per row of the table, as CONFIG GET shows it.
    values: Vec<String>,
}

impl Params {
    /// Defaults, with `databases`, `port`, `requirepass` and `dir` from the server.
    pub fn new(databases: usize, port: u16, password: Option<&str>) -> Self {
        let mut params = Self {
            values: table::ROWS.iter().map(|r| r.default.to_owned()).collect(),
        };
        params.start_value("databases", &databases.to_string());
        params.start_value("port", &port.to_string());
        params.start_value("requirepass", password.unwrap_or_default());
        if let Ok(dir) = std::env::current_dir() {
            params.start_value("dir", &dir.to_string_lossy());
        }
        params
    }

    /// Sets a value the server decided at start (its listener, its store), whatever its access.
    pub fn start_value(&mut self, name: &str, value: &str) {
        if let Some(i) = find(name.as_bytes())
            && let Some(slot) = self.values.get_mut(i)
        {
            *slot = value.to_owned();
        }
    }

    /// A parameter's value by name or alias.
    pub fn get(&self, name: &str) -> Option<&str> {
        find(name.as_bytes())
            .and_then(|i| self.values.get(i))
            .map(String::as_str)
    }

    /// Name/value pairs for CONFIG GET's arguments, as Redis replies them: a name without glob
    /// characters is looked up (hidden ones too) and answered under the name given; a pattern
    /// matches names and aliases that are not hidden. No parameter twice.
    pub fn matching(&self, patterns: &[&[u8]]) -> Vec<(String, &str)> {
        let mut chosen: Vec<(String, usize)> = Vec::new();
        let mut add = |name: String, i: usize| {
            if !chosen.iter().any(|(n, _)| n.eq_ignore_ascii_case(&name)) {
                chosen.push((name, i));
            }
        };
        for pattern in patterns {
            if !pattern.iter().any(|c| matches!(c, b'[' | b'*' | b'?')) {
                if let Some(i) = find(pattern) {
                    add(String::from_utf8_lossy(pattern).into_owned(), i);
                }
                continue;
            }
            for (i, row) in table::ROWS.iter().enumerate() {
                if row.hidden {
                    continue;
                }
                for name in std::iter::once(row.name).chain(row.alias) {
                    if crate::glob::matches(pattern, name.as_bytes(), true) {
                        add(name.to_owned(), i);
                    }
                }
            }
        }
        chosen
            .into_iter()
            .filter_map(|(name, i)| Some((name, self.values.get(i)?.as_str())))
            .collect()
    }

    /// Sets several parameters at once, all or none (CONFIG SET p1 v1 p2 v2 ...). As Redis: the
    /// first unknown name wins, then the first immutable, protected or repeated one; then the
    /// values are checked in order.
    pub fn set_all(&mut self, pairs: &[(&[u8], &[u8])]) -> Result<(), ParamError> {
        let mut chosen: Vec<(usize, &'static str, &[u8])> = Vec::with_capacity(pairs.len());
        for (name, value) in pairs {
            let given = || String::from_utf8_lossy(name).into_owned();
            let Some((i, known_as)) = find_named(name) else {
                return Err(ParamError::Unknown(given()));
            };
            let refused = |why: &str| ParamError::Invalid(given(), why.to_owned());
            match table::ROWS[i].access {
                Access::Immutable => return Err(refused("can't set immutable config")),
                Access::Protected => return Err(refused("can't set protected config")),
                Access::Modifiable | Access::Fixed => {}
            }
            // As Redis, a parameter and its alias are not duplicates of each other.
            if chosen.iter().any(|(j, n, _)| *j == i && *n == known_as) {
                return Err(refused("duplicate parameter"));
            }
            chosen.push((i, known_as, value));
        }
        let mut staged = Vec::with_capacity(chosen.len());
        for (i, known_as, value) in chosen {
            let invalid = |why: String| ParamError::Invalid(known_as.to_owned(), why);
            let current = self.values.get(i).map_or("", String::as_str);
            let value = normalize(table::ROWS[i].kind, value, current).map_err(invalid)?;
            staged.push((i, known_as, value));
        }
        // A change Sluice cannot make (its listener, its store) fails as Redis fails to apply.
        for (i, known_as, value) in &staged {
            let row = &table::ROWS[*i];
            if row.access == Access::Fixed && self.values.get(*i) != Some(value) {
                let why = match row.name {
                    "port" => {
                        "Unable to listen on this port: Sluice keeps the port it was started with"
                    }
                    "bind" => {
                        "Failed to bind to specified addresses: Sluice keeps the addresses it was started with"
                    }
                    _ => "Sluice sets this at start (its [resp] store settings)",
                };
                return Err(ParamError::Invalid((*known_as).to_owned(), why.to_owned()));
            }
        }
        for (i, _, value) in staged {
            if let Some(slot) = self.values.get_mut(i) {
                *slot = value;
            }
        }
        Ok(())
    }
}

/// Checks a value against its parameter's kind; returns it as CONFIG GET shows it. `current` is
/// the value now (a buffer limit given for some classes keeps the others').
fn normalize(kind: Kind, value: &[u8], current: &str) -> Result<String, String> {
    let value = String::from_utf8_lossy(value).into_owned();
    // Redis splits the values of multi-argument parameters on single spaces.
    let words = || -> Vec<&str> {
        if value.is_empty() {
            Vec::new()
        } else {
            value.split(' ').collect()
        }
    };
    Ok(match kind {
        Kind::Bool => match value.to_ascii_lowercase().as_str() {
            "yes" => "yes".to_owned(),
            "no" => "no".to_owned(),
            _ => return Err("argument must be 'yes' or 'no'".to_owned()),
        },
        Kind::Text => value,
        Kind::Enum { options, multi } => enum_value(options, multi, &words())?,
        Kind::Int(num) => number(num, &value)?,
        Kind::Save => {
            let words = words();
            let valid = words.len() % 2 == 0
                && words.iter().enumerate().all(|(i, w)| {
                    w.parse::<i64>()
                        .is_ok_and(|n| if i % 2 == 0 { n >= 1 } else { n >= 0 })
                });
            if !valid {
                return Err("Invalid save parameters".to_owned());
            }
            let numbers: Vec<String> = words
                .iter()
                .filter_map(|w| w.parse::<i64>().ok())
                .map(|n| n.to_string())
                .collect();
            numbers.join(" ")
        }
        Kind::OutputBufferLimit => output_buffer_limit(&words(), current)?,
        Kind::OomValues => {
            let words = words();
            if words.len() != 3 {
                return Err("wrong number of arguments".to_owned());
            }
            let mut shown = Vec::with_capacity(3);
            for w in words {
                match w.parse::<i64>() {
                    Ok(n) if (-2000..=2000).contains(&n) => shown.push(n.to_string()),
                    _ => {
                        return Err("Invalid oom-score-adj-values, elements must be between -2000 and 2000.".to_owned());
                    }
                }
            }
            shown.join(" ")
        }
        Kind::Events => match crate::engine::notify::parse_flags(&value) {
            Some(flags) => crate::engine::notify::flags_text(flags),
            None => return Err("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.".to_owned()),
        },
        Kind::Words => words().join(" "),
        Kind::Percentiles => {
            let mut shown = Vec::new();
            for w in words() {
                let Some(p) = crate::num::parse_f64(w.as_bytes()) else {
                    return Err("Invalid latency-tracking-info-percentiles parameters".to_owned());
                };
                if !(0.0..=100.0).contains(&p) {
                    return Err(
                        "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"
                            .to_owned(),
                    );
                }
                let text = format!("{p:.6}");
                shown.push(text.trim_end_matches('0').trim_end_matches('.').to_owned());
            }
            shown.join(" ")
        }
    })
}

/// An enum parameter's value: one name, or (multi) several whose flags are OR-ed, shown as
/// Redis shows them: the first name of an exact value, else the names of the flags set.
fn enum_value(options: &[(&str, u32)], multi: bool, words: &[&str]) -> Result<String, String> {
    let mut value = 0;
    let valid = !words.is_empty() && (multi || words.len() == 1);
    for w in words.iter().filter(|_| valid) {
        match options.iter().find(|(n, _)| n.eq_ignore_ascii_case(w)) {
            Some((_, v)) => value |= v,
            None => value = u32::MAX,
        }
    }
    if !valid || value == u32::MAX {
        let names: Vec<&str> = options.iter().map(|(n, _)| *n).collect();
        return Err(format!(
            "argument(s) must be one of the following: {}",
            names.join(", ")
        ));
    }
    if std::ptr::eq(options, table::SHUTDOWN) && value & 1 != 0 && value & 2 != 0 {
        return Err("shutdown options SAVE and NOSAVE can't be used simultaneously".to_owned());
    }
    if let Some((name, _)) = options.iter().find(|(_, v)| *v == value) {
        return Ok((*name).to_owned());
    }
    let names: Vec<&str> = options
        .iter()
        .filter(|(_, v)| *v != 0 && value & v == *v)
        .map(|(n, _)| *n)
        .collect();
    Ok(names.join(" "))
}

/// A numeric value, parsed as Redis's numericParseString does and bounds-checked.
fn number(num: Num, value: &str) -> Result<String, String> {
    let parsed: Option<i128> = if num.memory {
        parse_memory(value)
    } else {
        None
    };
    let parsed = parsed
        .or_else(|| {
            let digits = value
                .strip_suffix('%')
                .filter(|_| num.percent && value.len() > 1)?;
            let n = crate::num::parse_i64(digits.as_bytes()).filter(|n| *n >= 0)?;
            Some(-i128::from(n))
        })
        .or_else(|| {
            num.octal
                .then(|| i64::from_str_radix(value, 8).ok().map(i128::from))
                .flatten()
        })
        .or_else(|| {
            (!num.memory && !num.percent && !num.octal)
                .then(|| crate::num::parse_i64(value.as_bytes()).map(i128::from))
                .flatten()
        });
    let Some(n) = parsed else {
        return Err(match (num.memory, num.percent, num.octal) {
            (true, true, _) => "argument must be a memory or percent value",
            (true, false, _) => "argument must be a memory value",
            (_, _, true) => "argument couldn't be parsed as an octal number",
            _ => "argument couldn't be parsed into an integer",
        }
        .to_owned());
    };
    if num.percent && n < 0 {
        if n < num.min {
            return Err(format!(
                "percentage argument must be less or equal to {}",
                -num.min
            ));
        }
        return Ok(format!("{}%", -n));
    }
    if n < num.min || n > num.max {
        return Err(if num.octal {
            format!(
                "argument must be between {:o} and {:o} inclusive",
                num.min, num.max
            )
        } else {
            format!(
                "argument must be between {} and {} inclusive",
                num.min, num.max
            )
        });
    }
    Ok(if num.octal {
        format!("{n:o}")
    } else {
        n.to_string()
    })
}

/// `client-output-buffer-limit`: the given classes (normal, replica or slave, pubsub) replace
/// theirs in `current`.
fn output_buffer_limit(words: &[&str], current: &str) -> Result<String, String> {
    const CLASSES: [&str; 3] = ["normal", "slave", "pubsub"];
    if !words.len().is_multiple_of(4) {
        return Err("Wrong number of arguments in buffer limit configuration.".to_owned());
    }
    let mut limits: Vec<[String; 3]> = CLASSES
        .iter()
        .map(|class| {
            let parts: Vec<&str> = current.split(' ').collect();
            let at = parts.iter().position(|p| p == class).unwrap_or(parts.len());
            let field = |k: usize| parts.get(at + k).copied().unwrap_or("0").to_owned();
            [field(1), field(2), field(3)]
        })
        .collect();
    for group in words.chunks_exact(4) {
        let class = match group[0].to_ascii_lowercase().as_str() {
            "normal" => 0,
            "slave" | "replica" => 1,
            "pubsub" => 2,
            _ => {
                return Err(
                    "Invalid client class specified in buffer limit configuration.".to_owned(),
                );
            }
        };
        let hard = parse_memory(group[1]);
        let soft = parse_memory(group[2]);
        let seconds = group[3].parse::<i64>().ok().filter(|s| *s >= 0);
        let (Some(hard), Some(soft), Some(seconds)) = (hard, soft, seconds) else {
            return Err(
                "Error in hard, soft or soft_seconds setting in buffer limit configuration."
                    .to_owned(),
            );
        };
        limits[class] = [hard.to_string(), soft.to_string(), seconds.to_string()];
    }
    let shown: Vec<String> = CLASSES
        .iter()
        .zip(&limits)
        .map(|(class, [h, s, sec])| format!("{class} {h} {s} {sec}"))
        .collect();
    Ok(shown.join(" "))
}

/// Parses "100", "1k", "1kb", "5mb", "2gb" as Redis's memtoull does (no sign).
fn parse_memory(value: &str) -> Option<i128> {
    let split = value
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(value.len());
    let (digits, unit) = value.split_at(split);
    if digits.is_empty() {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    let mul: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => 1024,
        "m" => 1000 * 1000,
        "mb" => 1024 * 1024,
        "g" => 1000 * 1000 * 1000,
        "gb" => 1024 * 1024 * 1024,
        _ => return None,
    };
    Some(i128::from(n.wrapping_mul(mul)))
}

#[cfg(test)]
mod tests;
