//! What COMMAND reports of each command and subcommand (Redis 7.0's arity, flags, ACL
//! categories, tips and key specs, from `redis-7.0-command-info.txt`), limited to what Sluice
//! answers, and the key specs' evaluation behind COMMAND GETKEYS and GETKEYSANDFLAGS.

use std::collections::HashMap;
use std::sync::LazyLock;

use super::{key_specs, lookup};

/// Subcommands of commands Sluice answers that it does not answer itself (the Lua debugger).
const NOT_ANSWERED: &[&str] = &["script|debug"];

/// What Sluice answers beyond Redis 7.0, in the file's format: CLIENT SETINFO (Redis 7.2),
/// which clients such as redis-py send on connecting.
const SLUICE_ONLY: &str = "client|setinfo 4 noscript,loading,stale 0 0 0 slow,connection \
request_policy:all_nodes,response_policy:all_succeeded -";

/// Where a key spec's search starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Begin {
    /// At this argument.
    Index(i32),
    /// After this keyword, searched from `startfrom` (negative: from the end, backwards).
    Keyword(&'static str, i32),
    Unknown,
}

/// How a key spec's keys follow its start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Find {
    /// Up to `last` (relative to the start; negative: from the end), every `step`; with
    /// `limit`, a negative `last` covers only 1/limit of the rest.
    Range {
        last: i32,
        step: i32,
        limit: i32,
    },
    /// A count at `index` (relative to the start), keys from `first` after it, every `step`.
    Keynum {
        index: i32,
        first: i32,
        step: i32,
    },
    Unknown,
}

/// One key spec: how to find some of a command's keys, and what the command does with them.
#[derive(Debug, Clone)]
pub(crate) struct KeySpec {
    pub flags: Vec<&'static str>,
    pub begin: Begin,
    pub find: Find,
}

/// COMMAND INFO's fields of one command or subcommand.
#[derive(Debug, Clone)]
pub(crate) struct Info {
    /// `get`, or `config|get` for a subcommand.
    pub name: &'static str,
    pub arity: i32,
    pub flags: Vec<&'static str>,
    pub first_key: i32,
    pub last_key: i32,
    pub step: i32,
    pub categories: Vec<&'static str>,
    pub tips: Vec<&'static str>,
    pub specs: Vec<KeySpec>,
    /// Indexes of the subcommands Sluice answers, in name order.
    pub subcommands: Vec<usize>,
}

impl Info {
    pub fn has_flag(&self, flag: &str) -> bool {
        self.flags.contains(&flag)
    }
}

/// Every command and subcommand Sluice answers.
pub(crate) struct Infos {
    pub all: Vec<Info>,
    by_name: HashMap<&'static str, usize>,
    /// The top-level commands, in Sluice's table order.
    pub top: Vec<usize>,
}

static INFOS: LazyLock<Infos> = LazyLock::new(answered);

pub(crate) fn infos() -> &'static Infos {
    &INFOS
}

impl Infos {
    /// A command (`get`) or subcommand (`config|get`) by its lower-case full name.
    pub fn get(&self, name: &str) -> Option<&Info> {
        self.by_name.get(name).map(|&i| &self.all[i])
    }

    /// The command an argument vector calls: a subcommand when its container has them (none
    /// when that subcommand is unknown), else the command.
    pub fn of_call(&self, argv: &[&[u8]]) -> Option<&Info> {
        let name = String::from_utf8_lossy(argv.first()?).to_ascii_lowercase();
        let info = self.get(&name)?;
        if info.subcommands.is_empty() || argv.len() < 2 {
            return Some(info);
        }
        let sub = String::from_utf8_lossy(argv[1]).to_ascii_lowercase();
        self.get(&format!("{name}|{sub}"))
    }
}

fn list(field: &'static str) -> Vec<&'static str> {
    if field == "-" {
        Vec::new()
    } else {
        field.split(',').collect()
    }
}

fn numbers<const N: usize>(text: &str) -> Option<[i32; N]> {
    let mut out = [0; N];
    let mut parts = text.split(',');
    for slot in &mut out {
        *slot = parts.next()?.parse().ok()?;
    }
    Some(out)
}

fn spec(text: &'static str) -> Option<KeySpec> {
    let mut parts = text.splitn(3, '/');
    let flags = parts.next()?;
    let begin = parts.next()?;
    let find = parts.next()?;
    let begin = match begin.split_at_checked(1)? {
        ("i", pos) => Begin::Index(pos.parse().ok()?),
        ("k", rest) => {
            let (keyword, from) = rest.rsplit_once('@')?;
            Begin::Keyword(keyword, from.parse().ok()?)
        }
        _ => Begin::Unknown,
    };
    let find = match find.split_at_checked(1)? {
        ("r", rest) => {
            let [last, step, limit] = numbers(rest)?;
            Find::Range { last, step, limit }
        }
        ("n", rest) => {
            let [index, first, step] = numbers(rest)?;
            Find::Keynum { index, first, step }
        }
        _ => Find::Unknown,
    };
    let flags = if flags == "-" {
        Vec::new()
    } else {
        flags.split('+').collect()
    };
    Some(KeySpec { flags, begin, find })
}

/// Redis 7.0's whole catalog: every command and subcommand of the file, answered by Sluice or
/// not (ACL rules may name any of them), by name, without subcommand links.
static REDIS: LazyLock<Vec<Info>> = LazyLock::new(|| {
    let text = include_str!("../../redis-7.0-command-info.txt");
    let mut all: Vec<Info> = text.lines().filter_map(parse_line).collect();
    all.sort_by_key(|info| info.name);
    all
});

/// Every command and subcommand of Redis 7.0, in name order (subcommands after their command).
pub(crate) fn redis_catalog() -> &'static [Info] {
    &REDIS
}

/// One line of the file; None for a comment or a malformed line (the file is generated; a
/// test reads it all).
fn parse_line(line: &'static str) -> Option<Info> {
    if line.starts_with('#') {
        return None;
    }
    let fields: Vec<&'static str> = line.split(' ').collect();
    let [
        name,
        arity,
        flags,
        first,
        last,
        step,
        categories,
        tips,
        specs,
    ] = fields[..]
    else {
        return None;
    };
    let (Ok(arity), Ok(first_key), Ok(last_key), Ok(step)) =
        (arity.parse(), first.parse(), last.parse(), step.parse())
    else {
        return None;
    };
    let specs = if specs == "-" {
        Vec::new()
    } else {
        specs.split(';').filter_map(spec).collect()
    };
    Some(Info {
        name,
        arity,
        flags: list(flags),
        first_key,
        last_key,
        step,
        categories: list(categories),
        tips: list(tips),
        specs,
        subcommands: Vec::new(),
    })
}

/// Redis's catalog with Sluice's own additions, kept to the commands Sluice's table has and
/// their answered subcommands.
fn answered() -> Infos {
    let mut all: Vec<Info> = redis_catalog()
        .iter()
        .cloned()
        .chain(SLUICE_ONLY.lines().filter_map(parse_line))
        .filter(|info| {
            let top = info.name.split('|').next().unwrap_or(info.name);
            lookup(top.as_bytes()).is_some() && !NOT_ANSWERED.contains(&info.name)
        })
        .collect();
    all.sort_by_key(|info| info.name);
    let by_name: HashMap<&'static str, usize> =
        all.iter().enumerate().map(|(i, c)| (c.name, i)).collect();
    for i in 0..all.len() {
        if let Some((parent, _)) = all[i].name.split_once('|')
            && let Some(&p) = by_name.get(parent)
        {
            all[p].subcommands.push(i);
        }
    }
    let top = super::COMMANDS
        .iter()
        .filter_map(|c| by_name.get(c.name).copied())
        .collect();
    Infos { all, by_name, top }
}

/// A key's position in the argument vector (the command name at 0) and its spec's flags.
pub(crate) type KeyRef = (usize, Vec<&'static str>);

/// The keys of a call found with its key specs, as Redis's getKeysUsingKeySpecs finds them;
/// None when a spec does not fit the arguments (or is incomplete), for the command's own rule.
fn keys_by_specs(info: &Info, argv: &[&[u8]]) -> Option<Vec<KeyRef>> {
    let of = |spec: &KeySpec| {
        let has = |flag: &str| spec.flags.contains(&flag);
        (!has("not_key")).then_some((spec.begin, spec.find, has("incomplete")))
    };
    let found = key_specs::spec_positions(&info.specs, of, key_specs::slice_argv(argv))?;
    Some(
        found
            .into_iter()
            .map(|(pos, spec)| (pos, info.specs[spec].flags.clone()))
            .collect(),
    )
}

/// SORT and SORT_RO: the sorted key, and (SORT) the last STORE's destination.
fn sort_keys(argv: &[&[u8]], store_allowed: bool) -> Vec<KeyRef> {
    let mut keys = vec![(1, vec!["RO", "access"])];
    let mut store = None;
    let mut i = 2;
    while i < argv.len() {
        let arg = argv[i];
        if arg.eq_ignore_ascii_case(b"limit") {
            i += 2;
        } else if arg.eq_ignore_ascii_case(b"get") || arg.eq_ignore_ascii_case(b"by") {
            i += 1;
        } else if store_allowed && arg.eq_ignore_ascii_case(b"store") && i + 1 < argv.len() {
            store = Some(i + 1);
        }
        i += 1;
    }
    keys.extend(store.map(|s| (s, vec!["OW", "update"])));
    keys
}

/// MIGRATE's keys (see [`key_specs::migrate_positions`]).
fn migrate_keys(argv: &[&[u8]]) -> Vec<KeyRef> {
    key_specs::migrate_positions(key_specs::slice_argv(argv))
        .map(|k| (k, vec!["RW", "access", "delete"]))
        .collect()
}

/// The keys of a call and their flags, as COMMAND GETKEYSANDFLAGS reports them, or Redis's
/// error text.
pub(crate) fn key_refs(argv: &[&[u8]]) -> Result<Vec<KeyRef>, &'static str> {
    let Some(info) = infos().of_call(argv) else {
        return Err("ERR Invalid command specified");
    };
    if info.specs.iter().all(|s| s.flags.contains(&"not_key")) {
        return Err("ERR The command has no key arguments");
    }
    let argc = argv.len() as i64;
    let arity = i64::from(info.arity);
    if (arity > 0 && argc != arity) || argc < -arity {
        return Err("ERR Invalid number of arguments specified for command");
    }
    let variable = info
        .specs
        .iter()
        .any(|s| s.flags.contains(&"variable_flags"));
    let keys = match (variable, info.name) {
        (true, "set") => {
            let get = argv.iter().skip(3).any(|a| a.eq_ignore_ascii_case(b"get"));
            let flags = if get {
                vec!["RW", "access", "update"]
            } else {
                vec!["OW", "update"]
            };
            vec![(1, flags)]
        }
        (true, "bitfield") => vec![(1, bitfield_flags(argv))],
        _ => match keys_by_specs(info, argv) {
            Some(keys) => keys,
            None if info.name == "sort" => sort_keys(argv, true),
            None if info.name == "sort_ro" => sort_keys(argv, false),
            None if info.name == "migrate" => migrate_keys(argv),
            None => Vec::new(),
        },
    };
    if keys.is_empty() && !info.has_flag("no_mandatory_keys") {
        return Err("ERR Invalid arguments specified for command");
    }
    Ok(keys)
}

/// BITFIELD's key flags: it only reads when every operation is a GET.
fn bitfield_flags(argv: &[&[u8]]) -> Vec<&'static str> {
    if key_specs::bitfield_writes(key_specs::slice_argv(argv)) {
        vec!["RW", "access", "update"]
    } else {
        vec!["RO", "access"]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(call: &str) -> Result<String, &'static str> {
        let argv: Vec<&[u8]> = call.split(' ').map(str::as_bytes).collect();
        key_refs(&argv).map(|refs| {
            let shown: Vec<String> = refs
                .iter()
                .map(|(i, flags)| {
                    format!(
                        "{}:{}",
                        call.split(' ').nth(*i).unwrap_or("?"),
                        flags.join("+")
                    )
                })
                .collect();
            shown.join(" ")
        })
    }

    #[test]
    fn every_line_of_the_file_is_read() {
        let text = include_str!("../../redis-7.0-command-info.txt");
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let fields: Vec<&str> = line.split(' ').collect();
            assert_eq!(fields.len(), 9, "{line}");
            if fields[8] != "-" {
                for s in fields[8].split(';') {
                    let s: &'static str = Box::leak(s.to_owned().into_boxed_str());
                    assert!(spec(s).is_some(), "{line}");
                }
            }
        }
        for c in super::super::COMMANDS.iter() {
            assert!(
                infos().get(c.name).is_some(),
                "{} has no COMMAND INFO",
                c.name
            );
        }
    }

    #[test]
    fn keys_and_flags_as_redis_finds_them() {
        assert_eq!(keys("set k1 v1").unwrap(), "k1:OW+update");
        assert_eq!(keys("set k1 v1 get").unwrap(), "k1:RW+access+update");
        assert_eq!(
            keys("mset k1 v1 k2 v2").unwrap(),
            "k1:OW+update k2:OW+update"
        );
        assert_eq!(
            keys("LMOVE k1 k2 left right").unwrap(),
            "k1:RW+access+delete k2:RW+insert"
        );
        assert_eq!(
            keys("sort k1 store k2").unwrap(),
            "k1:RO+access k2:OW+update"
        );
        assert_eq!(
            keys("sort abc store invalid store stillbad store def").unwrap(),
            "abc:RO+access def:OW+update"
        );
        assert_eq!(keys("memory usage key").unwrap(), "key:RO");
        assert_eq!(
            keys("migrate h 1 k 0 10 copy auth keys").unwrap(),
            "k:RW+access+delete",
            "KEYS here is AUTH's password"
        );
        assert!(
            keys("migrate h 1 k 0 10 keys a b").is_err(),
            "KEYS needs an empty key"
        );
        assert_eq!(keys("xgroup create key g $").unwrap(), "key:RW+insert");
        assert_eq!(keys("eval s 1 key").unwrap(), "key:RW+access+update");
        assert_eq!(keys("eval s 0").unwrap(), "");
        assert_eq!(
            keys("xread count 1 streams a b 0 0").unwrap(),
            "a:RO+access b:RO+access"
        );
        assert_eq!(
            keys("zunionstore d 2 a b weights 1 2").unwrap(),
            "d:OW+update a:RO+access b:RO+access"
        );
        assert_eq!(keys("bitfield k get u8 0").unwrap(), "k:RO+access");
        assert_eq!(keys("nosuch a"), Err("ERR Invalid command specified"));
        assert_eq!(keys("ping"), Err("ERR The command has no key arguments"));
        assert_eq!(
            keys("get a b"),
            Err("ERR Invalid number of arguments specified for command")
        );
        assert_eq!(
            keys("zunionstore d 5 a"),
            Err("ERR Invalid arguments specified for command")
        );
    }
}
