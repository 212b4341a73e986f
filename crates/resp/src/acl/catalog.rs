//! The commands ACLs know: every command and subcommand of Redis 7.0 with an id for the users'
//! command bitmaps, its categories, and where its keys and channels are in its arguments.

use std::collections::HashMap;
use std::sync::LazyLock;

use crate::cmd::command_info::{Begin, Find, Info, KeySpec, redis_catalog};
use crate::cmd::{Args, COMMANDS, Command, key_specs};

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
            let writes = key_specs::bitfield_writes(argv_of(args));
            return visit(
                1,
                if writes {
                    KEY_READ | KEY_WRITE
                } else {
                    KEY_READ
                },
            );
        }
        "migrate" => {
            return key_specs::migrate_positions(argv_of(args))
                .all(|pos| visit(pos, KEY_READ | KEY_WRITE));
        }
        _ => {}
    }
    if !entry.derived && entry.keys.iter().all(|s| s.exact) {
        let of = |spec: &Spec| Some((spec.begin, spec.find, false));
        if let Some(keys) = key_specs::spec_positions(&entry.keys, of, argv_of(args)) {
            return keys
                .into_iter()
                .all(|(pos, spec)| visit(pos, entry.keys[spec].access));
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

/// A call's arguments for the key finders of [`key_specs`].
fn argv_of<'x>(args: &Args<'x>) -> key_specs::Argv<'x, impl Fn(usize) -> &'x [u8]> {
    let args = *args;
    key_specs::Argv {
        count: args.len(),
        arg: move |i| args.get(i),
    }
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
