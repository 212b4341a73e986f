//! The commands ACLs know: every command and subcommand of Redis 7.0 with an id for the users'
//! command bitmaps, its categories, and where its keys and channels are in its arguments.

use std::collections::HashMap;
use std::sync::LazyLock;

use crate::cmd::command_info::{Begin, Find, Info, KeySpec, redis_catalog};
use crate::cmd::{Args, COMMANDS, Command};

/// A key read by a command (Redis's ACCESS key-spec flag): needs a `%R~` or `~` pattern.
pub const KEY_READ: u8 = 1;
/// A key written by a command (INSERT, DELETE or UPDATE): needs a `%W~` or `~` pattern.
pub const KEY_WRITE: u8 = 2;

/// One of a command's key specs.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// [`KEY_READ`] and/or [`KEY_WRITE`].
    pub access: u8,
    pub begin: Begin,
    pub find: Find,
    /// False when the spec may miss keys or their access depends on other arguments: the
    /// command's own key finder is used instead.
    pub exact: bool,
}

impl Spec {
    /// What ACLs need of one of Redis's key specs (None for a spec of non-key arguments).
    fn of(spec: &KeySpec) -> Option<Spec> {
        let has = |names: &[&str]| spec.flags.iter().any(|f| names.contains(f));
        if has(&["not_key"]) {
            return None;
        }
        let mut access = 0;
        if has(&["access"]) {
            access |= KEY_READ;
        }
        if has(&["insert", "delete", "update"]) {
            access |= KEY_WRITE;
        }
        Some(Spec {
            access,
            begin: spec.begin,
            find: spec.find,
            exact: !has(&["incomplete", "variable_flags"]),
        })
    }
}

/// A command's ACL categories from their names.
fn categories_of(info: &Info) -> u32 {
    info.categories
        .iter()
        .filter_map(|c| super::categories::NAMES.iter().find(|(name, _)| name == c))
        .fold(0, |bits, (_, bit)| bits | bit)
}

/// One command or subcommand as ACLs see it.
#[derive(Debug)]
pub struct AclCommand {
    /// `get`, or `client|kill` for a subcommand.
    pub name: String,
    pub arity: i32,
    pub categories: u32,
    pub keys: Vec<Spec>,
    pub parent: Option<usize>,
    pub subcommands: Vec<usize>,
    /// Not in Redis's catalog: keys come from Sluice's command table, read and written.
    pub derived: bool,
}

/// Every command ACL rules may name, by id.
#[derive(Debug)]
pub struct Catalog {
    pub commands: Vec<AclCommand>,
    by_name: HashMap<Vec<u8>, usize>,
    /// The id of each command of Sluice's table, by its index there.
    of_table: Vec<usize>,
}

/// The catalog, built once.
pub static CATALOG: LazyLock<Catalog> = LazyLock::new(Catalog::build);

impl Catalog {
    fn build() -> Self {
        let redis = redis_catalog();
        let mut catalog = Catalog {
            commands: Vec::with_capacity(redis.len() + 8),
            by_name: HashMap::new(),
            of_table: Vec::new(),
        };
        for info in redis {
            let parent = info
                .name
                .split_once('|')
                .and_then(|(parent, _)| catalog.by_name.get(parent.as_bytes()).copied());
            catalog.add(AclCommand {
                name: info.name.to_owned(),
                arity: info.arity,
                categories: categories_of(info),
                keys: info.specs.iter().filter_map(Spec::of).collect(),
                parent,
                subcommands: Vec::new(),
                derived: false,
            });
        }
        for cmd in COMMANDS.iter() {
            let id = match catalog.by_name.get(cmd.name.as_bytes()) {
                Some(&id) => id,
                None => catalog.add(AclCommand {
                    name: cmd.name.to_owned(),
                    arity: cmd.arity,
                    categories: super::categories::derived(cmd),
                    keys: Vec::new(),
                    parent: None,
                    subcommands: Vec::new(),
                    derived: true,
                }),
            };
            if catalog.of_table.len() <= cmd.index {
                catalog.of_table.resize(cmd.index + 1, 0);
            }
            catalog.of_table[cmd.index] = id;
        }
        catalog
    }

    fn add(&mut self, command: AclCommand) -> usize {
        let id = self.commands.len();
        if let Some(parent) = command.parent
            && let Some(p) = self.commands.get_mut(parent)
        {
            p.subcommands.push(id);
        }
        self.by_name.insert(command.name.as_bytes().to_vec(), id);
        self.commands.push(command);
        id
    }

    /// Words of a command bitmap.
    pub fn words(&self) -> usize {
        self.commands.len().div_ceil(64)
    }

    /// The command or subcommand (`config|get`) named `name`, any case.
    pub fn lookup(&self, name: &[u8]) -> Option<usize> {
        self.by_name.get(&name.to_ascii_lowercase()).copied()
    }

    pub fn get(&self, id: usize) -> Option<&AclCommand> {
        self.commands.get(id)
    }

    /// The id a call of `cmd` with `args` is checked as: its subcommand's when it has
    /// subcommands and the one named exists, else its own.
    pub fn resolve(&self, cmd: &Command, args: &Args<'_>) -> usize {
        let id = self.of_table.get(cmd.index).copied().unwrap_or(0);
        self.resolve_sub(id, args)
    }

    /// A call of the catalog's command `name` (one Sluice may not answer, for ACL DRYRUN), its
    /// subcommand resolved.
    pub fn resolve_name(&self, name: &[u8], args: &Args<'_>) -> Option<usize> {
        let id = self.lookup(name)?;
        Some(self.resolve_sub(id, args))
    }

    fn resolve_sub(&self, id: usize, args: &Args<'_>) -> usize {
        let Some(entry) = self.commands.get(id) else {
            return id;
        };
        let cmd_name = entry.name.as_str();
        if entry.subcommands.is_empty() || args.len() < 2 {
            return id;
        }
        let mut full = [0u8; 64];
        let (name, sub) = (cmd_name.as_bytes(), args.get(1));
        let len = name.len() + 1 + sub.len();
        let Some(dst) = full.get_mut(..len) else {
            return id;
        };
        dst[..name.len()].copy_from_slice(name);
        dst[name.len()] = b'|';
        for (d, s) in dst[name.len() + 1..].iter_mut().zip(sub) {
            *d = s.to_ascii_lowercase();
        }
        self.by_name.get(&dst[..]).copied().unwrap_or(id)
    }
}

/// Calls `visit(position, access)` for each key argument of a call of `entry` with `args`;
/// stops at the first `false` and returns it.
pub fn each_key(
    entry: &AclCommand,
    args: &Args<'_>,
    mut visit: impl FnMut(usize, u8) -> bool,
) -> bool {
    match entry.name.as_str() {
        // Their keys' access depends on the arguments (Redis's VARIABLE_FLAGS).
        "set" => {
            let get = args.from(3).any(|a| a.eq_ignore_ascii_case(b"get"));
            return visit(1, if get { KEY_READ | KEY_WRITE } else { KEY_WRITE });
        }
        "bitfield" => {
            let writes = args
                .from(2)
                .any(|a| a.eq_ignore_ascii_case(b"set") || a.eq_ignore_ascii_case(b"incrby"));
            return visit(
                1,
                if writes {
                    KEY_READ | KEY_WRITE
                } else {
                    KEY_READ
                },
            );
        }
        "migrate" => return migrate_keys(args).all(|pos| visit(pos, KEY_READ | KEY_WRITE)),
        _ => {}
    }
    if !entry.derived && entry.keys.iter().all(|s| s.exact) {
        match spec_keys(&entry.keys, args) {
            SpecKeys::Found(keys) => {
                return keys.into_iter().all(|(pos, access)| visit(pos, access));
            }
            SpecKeys::Invalid => return true,
            SpecKeys::Unknown => {}
        }
    }
    // The command's own key finder: the first key takes the first spec's access, the others
    // the last's (SORT's STORE destination).
    let argv: Vec<&[u8]> = args.from(0).collect();
    let Ok(positions) = crate::cmd::key_positions(&argv) else {
        return true;
    };
    let first = entry
        .keys
        .first()
        .map_or(KEY_READ | KEY_WRITE, |s| s.access);
    let rest = entry.keys.last().map_or(KEY_READ | KEY_WRITE, |s| s.access);
    positions
        .into_iter()
        .enumerate()
        .all(|(i, pos)| visit(pos, if i == 0 { first } else { rest }))
}

/// MIGRATE's keys: the key argument, or those after KEYS when it is empty (past AUTH and AUTH2
/// and their passwords), as Redis finds them.
fn migrate_keys(args: &Args<'_>) -> std::ops::Range<usize> {
    let n = args.len();
    if !args.get(3).is_empty() {
        return 3..4.min(n);
    }
    let mut i = 6;
    while i < n {
        if args.is(i, "auth") {
            i += 1;
        } else if args.is(i, "auth2") {
            i += 2;
        } else if args.is(i, "keys") {
            return i + 1..n;
        }
        i += 1;
    }
    0..0
}

/// What a command's key specs say about a call.
enum SpecKeys {
    Found(Vec<(usize, u8)>),
    /// A key count that does not fit the arguments: a syntax error the command reports, and no
    /// keys to check (as Redis's key finders answer).
    Invalid,
    /// A spec cannot say: the command's own key finder is asked, as Redis does.
    Unknown,
}

fn spec_keys(specs: &[Spec], args: &Args<'_>) -> SpecKeys {
    let argc = args.len() as i64;
    let mut keys = Vec::new();
    for spec in specs {
        let first = match spec.begin {
            Begin::Index(i) => i64::from(i),
            Begin::Keyword(word, from) => {
                let from = i64::from(from);
                let start = if from > 0 { from } else { argc + from };
                let is_word = |i: &i64| args.get(*i as usize).eq_ignore_ascii_case(word.as_bytes());
                // As Redis searches: never the last argument forwards, nor the first backwards.
                let found = if from > 0 {
                    (start..argc - 1).find(is_word)
                } else {
                    (2..=start).rev().find(is_word)
                };
                match found {
                    Some(i) => i + 1,
                    // No keyword, no keys of this spec.
                    None => continue,
                }
            }
            Begin::Unknown => return SpecKeys::Unknown,
        };
        let (first, last, step) = match spec.find {
            Find::Range { last, step, limit } => {
                let last = i64::from(last);
                let end = if last >= 0 {
                    first + last
                } else if limit == 0 {
                    argc + last
                } else {
                    first + ((argc - first) / i64::from(limit) + last)
                };
                (first, end, i64::from(step.max(1)))
            }
            Find::Keynum {
                index,
                first: offset,
                step,
            } => {
                let count = crate::num::parse_i64(args.get((first + i64::from(index)) as usize));
                let start = first + i64::from(offset);
                match count {
                    Some(count) if count >= 0 && start + count <= argc => {
                        (start, start + count - 1, i64::from(step.max(1)))
                    }
                    _ => return SpecKeys::Invalid,
                }
            }
            Find::Unknown => return SpecKeys::Unknown,
        };
        if last < first {
            // Zero keys (numkeys 0), or past the end: a syntax error the command reports.
            continue;
        }
        if last >= argc || first >= argc {
            return SpecKeys::Unknown;
        }
        let mut pos = first;
        while pos <= last {
            keys.push((pos as usize, spec.access));
            pos += step;
        }
    }
    SpecKeys::Found(keys)
}

/// Calls `visit(position, is_pattern)` for each channel a call of `entry` publishes or
/// subscribes to; stops at the first `false` and returns it.
pub fn each_channel(
    entry: &AclCommand,
    args: &Args<'_>,
    mut visit: impl FnMut(usize, bool) -> bool,
) -> bool {
    match entry.name.as_str() {
        "publish" | "spublish" => visit(1, false),
        "subscribe" | "ssubscribe" => (1..args.len()).all(|i| visit(i, false)),
        "psubscribe" => (1..args.len()).all(|i| visit(i, true)),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::lookup;

    fn keys_of(line: &str) -> Vec<(String, u8)> {
        let parts: Vec<&[u8]> = line.split(' ').map(str::as_bytes).collect();
        let mut data = Vec::new();
        let mut spans = Vec::new();
        for p in &parts {
            let start = data.len();
            data.extend_from_slice(p);
            spans.push(start..data.len());
        }
        let args = Args::new(&data, &spans);
        let name = parts[0].to_ascii_lowercase();
        let id = CATALOG.resolve_name(&name, &args).expect("a command");
        let entry = CATALOG.get(id).expect("in the catalog");
        let mut found = Vec::new();
        each_key(entry, &args, |pos, access| {
            found.push((String::from_utf8_lossy(args.get(pos)).into_owned(), access));
            true
        });
        found
    }

    #[test]
    fn keys_and_their_access_follow_redis_key_specs() {
        assert_eq!(keys_of("GET k"), [("k".into(), KEY_READ)]);
        assert_eq!(keys_of("SET k v"), [("k".into(), KEY_WRITE)]);
        assert_eq!(keys_of("SET k v GET"), [("k".into(), KEY_READ | KEY_WRITE)]);
        assert_eq!(keys_of("LPUSH l a"), [("l".into(), KEY_WRITE)]);
        assert_eq!(
            keys_of("COPY a b"),
            [("a".into(), KEY_READ), ("b".into(), KEY_WRITE)]
        );
        assert_eq!(
            keys_of("MSET a 1 b 2"),
            [("a".into(), KEY_WRITE), ("b".into(), KEY_WRITE)]
        );
        assert_eq!(
            keys_of("XREAD COUNT 2 STREAMS s1 s2 0 0"),
            [("s1".into(), KEY_READ), ("s2".into(), KEY_READ)]
        );
        assert_eq!(
            keys_of("EVAL x 2 a b c"),
            [
                ("a".into(), KEY_READ | KEY_WRITE),
                ("b".into(), KEY_READ | KEY_WRITE)
            ]
        );
        assert_eq!(keys_of("EVAL x 0"), []);
        // A count that does not fit the arguments: no keys, as Redis's key finder answers.
        assert_eq!(keys_of("EVAL x 3 a b"), []);
        assert_eq!(keys_of("ZUNIONSTORE d 5 a b"), []);
        assert_eq!(
            keys_of("MIGRATE h p k 0 5"),
            [("k".into(), KEY_READ | KEY_WRITE)]
        );
        assert_eq!(
            keys_of("MIGRATE h p  0 5 AUTH2 u pw KEYS a b"),
            [
                ("a".into(), KEY_READ | KEY_WRITE),
                ("b".into(), KEY_READ | KEY_WRITE)
            ]
        );
        assert_eq!(
            keys_of("GEORADIUS src 0 0 1 m STOREDIST dst"),
            [("src".into(), KEY_READ), ("dst".into(), KEY_WRITE)]
        );
        assert_eq!(
            keys_of("SORT src BY w STORE dst"),
            [("src".into(), KEY_READ), ("dst".into(), KEY_WRITE)]
        );
        assert_eq!(keys_of("OBJECT ENCODING k"), [("k".into(), 0)]);
        assert_eq!(keys_of("BITFIELD b GET u8 0"), [("b".into(), KEY_READ)]);
        assert_eq!(keys_of("SPUBLISH ch m"), []);
    }

    #[test]
    fn subcommands_resolve_to_their_own_entry() {
        let data = b"CLIENTKILLid";
        let spans = [0..6, 6..10, 10..12];
        let args = Args::new(data, &spans);
        let client = lookup(b"client").expect("client");
        let id = CATALOG.resolve(client, &args);
        assert_eq!(
            CATALOG.get(id).map(|c| c.name.as_str()),
            Some("client|kill")
        );
        let every_command_is_known = COMMANDS
            .iter()
            .all(|c| CATALOG.lookup(c.name.as_bytes()).is_some());
        assert!(every_command_is_known);
    }
}
