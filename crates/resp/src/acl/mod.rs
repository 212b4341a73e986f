//! Redis 7.0's ACLs: users, their rules, the permission check run before each command, the ACL
//! log, and the ACL file.
//!
//! Each connection holds its user; a user whose rules allow every command, key and channel
//! (the `default` user unless changed) is marked unrestricted, and the check is one atomic
//! load for it.

mod catalog;
#[rustfmt::skip]
pub mod categories;
mod file;
mod log;
pub mod rules;
mod selector;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::{Mutex, RwLock};

pub use catalog::CATALOG;
pub use file::LoadError;
pub use log::{Context, LogEntry, Reason};
use rules::{RuleError, Rules};

use crate::cmd::{Args, Command, flags};

/// A user: its name and rules. Connections authenticated as it hold it; changed rules apply to
/// them at their next command.
#[derive(Debug)]
pub struct User {
    pub name: Vec<u8>,
    rules: RwLock<Rules>,
    /// Every command, key and channel is allowed: the permission check is skipped.
    unrestricted: AtomicBool,
    /// Deleted (ACL DELUSER, ACL LOAD): its connections are closed.
    removed: AtomicBool,
}

impl User {
    fn new(name: Vec<u8>, rules: Rules) -> Arc<Self> {
        let unrestricted = rules.unrestricted();
        Arc::new(Self {
            name,
            rules: RwLock::new(rules),
            unrestricted: AtomicBool::new(unrestricted),
            removed: AtomicBool::new(false),
        })
    }

    /// True when the permission check may be skipped.
    #[inline]
    pub fn is_unrestricted(&self) -> bool {
        self.unrestricted.load(Ordering::Relaxed)
    }

    pub fn is_removed(&self) -> bool {
        self.removed.load(Ordering::Acquire)
    }

    pub fn rules(&self) -> Rules {
        self.rules.read().clone()
    }

    fn set_rules(&self, rules: Rules) {
        let unrestricted = rules.unrestricted();
        *self.rules.write() = rules;
        self.unrestricted.store(unrestricted, Ordering::Relaxed);
    }

    fn remove(&self) {
        self.unrestricted.store(false, Ordering::Relaxed);
        self.removed.store(true, Ordering::Release);
    }

    /// Whether this user may run `cmd` with `args`.
    pub fn check(&self, cmd: &Command, args: &Args<'_>) -> Result<(), Denied> {
        let id = CATALOG.resolve(cmd, args);
        check_rules(
            &self.rules.read(),
            id,
            cmd.flags & flags::NO_AUTH != 0,
            args,
        )
    }

    /// Whether a selector that allows command `id` also grants read access to every key
    /// (`~*`, `%R~*`, allkeys).
    pub fn reads_every_key(&self, id: usize) -> bool {
        self.rules.read().selectors.iter().any(|s| {
            s.allows(id)
                && (s.allkeys
                    || s.patterns
                        .iter()
                        .any(|p| p.pattern == b"*" && p.access & catalog::KEY_READ != 0))
        })
    }

    /// Whether this user may run the catalog's command `id` with `args` (ACL DRYRUN, which
    /// also answers for Redis commands Sluice lacks).
    pub fn check_id(&self, id: usize, no_auth: bool, args: &Args<'_>) -> Result<(), Denied> {
        check_rules(&self.rules.read(), id, no_auth, args)
    }

    pub fn name_text(&self) -> String {
        String::from_utf8_lossy(&self.name).into_owned()
    }
}

/// Why a command was refused, and the argument at fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Denied {
    /// The command (or subcommand) is not allowed; the catalog id of what was checked.
    Command(usize),
    /// A key argument matches no pattern with the access the command needs.
    Key(usize),
    /// A channel argument matches no channel pattern.
    Channel(usize),
}

impl Denied {
    fn rank(self) -> (u8, usize) {
        match self {
            Denied::Command(_) => (1, 0),
            Denied::Key(pos) => (2, pos),
            Denied::Channel(pos) => (4, pos),
        }
    }

    /// The command's full name, or the argument at fault.
    pub fn object(self, args: &Args<'_>) -> Vec<u8> {
        match self {
            Denied::Command(id) => CATALOG
                .get(id)
                .map(|c| c.name.as_bytes().to_vec())
                .unwrap_or_default(),
            Denied::Key(pos) | Denied::Channel(pos) => args.get(pos).to_vec(),
        }
    }

    pub fn reason(self) -> Reason {
        match self {
            Denied::Command(_) => Reason::Command,
            Denied::Key(_) => Reason::Key,
            Denied::Channel(_) => Reason::Channel,
        }
    }

    /// The NOPERM error a client gets, word for word Redis 7.0's.
    pub fn error(self) -> String {
        match self {
            Denied::Command(id) => format!(
                "NOPERM this user has no permissions to run the '{}' command",
                CATALOG.get(id).map_or("", |c| c.name.as_str())
            ),
            Denied::Key(_) => {
                "NOPERM this user has no permissions to access one of the keys used as arguments"
                    .to_owned()
            }
            Denied::Channel(_) => "NOPERM this user has no permissions to access one of the \
                                   channels used as arguments"
                .to_owned(),
        }
    }

    /// The reason a script's redis.call gets.
    pub fn script_error(self) -> &'static str {
        match self {
            Denied::Command(_) => {
                "The user executing the script can't run this command or subcommand"
            }
            Denied::Key(_) => {
                "The user executing the script can't access at least one of the keys mentioned \
                 in the command arguments"
            }
            Denied::Channel(_) => {
                "The user executing the script can't publish to the channel mentioned in the \
                 command"
            }
        }
    }
}

/// Whether `rules` allow `cmd` with `args`: any selector allowing it is enough; else the most
/// telling refusal (channel over key over command, the last argument at fault).
fn check_rules(rules: &Rules, id: usize, no_auth: bool, args: &Args<'_>) -> Result<(), Denied> {
    let mut worst: Option<Denied> = None;
    for selector in &rules.selectors {
        match check_selector(selector, id, no_auth, args) {
            Ok(()) => return Ok(()),
            Err(d) => {
                if worst.is_none_or(|w| d.rank() > w.rank()) {
                    worst = Some(d);
                }
            }
        }
    }
    Err(worst.unwrap_or(Denied::Command(id)))
}

fn check_selector(
    selector: &rules::Selector,
    id: usize,
    no_auth: bool,
    args: &Args<'_>,
) -> Result<(), Denied> {
    if !no_auth && !selector.allows(id) {
        let first_arg_ok = selector.first_args.get(&id).is_some_and(|allowed| {
            let at = if CATALOG.get(id).is_some_and(|c| c.parent.is_some()) {
                2
            } else {
                1
            };
            args.len() > at && allowed.iter().any(|a| a.eq_ignore_ascii_case(args.get(at)))
        });
        if !first_arg_ok {
            return Err(Denied::Command(id));
        }
    }
    if !selector.allkeys
        && let Some(entry) = CATALOG.get(id)
    {
        let mut denied = None;
        catalog::each_key(entry, args, |pos, access| {
            let key = args.get(pos);
            let ok = selector.patterns.iter().any(|p| {
                p.access & access == access && crate::glob::matches(&p.pattern, key, false)
            });
            if !ok {
                denied = Some(Denied::Key(pos));
            }
            ok
        });
        if let Some(d) = denied {
            return Err(d);
        }
    }
    if !selector.allchannels
        && let Some(entry) = CATALOG.get(id)
    {
        let mut denied = None;
        catalog::each_channel(entry, args, |pos, is_pattern| {
            let channel = args.get(pos);
            let ok = selector.channels.iter().any(|p| {
                if is_pattern {
                    p.as_slice() == channel
                } else {
                    crate::glob::matches(p, channel, false)
                }
            });
            if !ok {
                denied = Some(Denied::Channel(pos));
            }
            ok
        });
        if let Some(d) = denied {
            return Err(d);
        }
    }
    Ok(())
}

/// Why ACL SETUSER refused its arguments (the text after `ERR `).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetUserError(pub String);

/// The server's users, the ACL log and the ACL file.
#[derive(Debug)]
pub struct Acl {
    users: RwLock<BTreeMap<Vec<u8>, Arc<User>>>,
    default: Arc<User>,
    pub log: Mutex<log::AclLog>,
    /// Where ACL SAVE and ACL LOAD write and read (Redis's aclfile), if anywhere.
    pub file: Option<PathBuf>,
    /// acl-pubsub-default is allchannels: new users may use every channel.
    pub pubsub_allchannels: AtomicBool,
}

impl Acl {
    /// The default user only, with `password` as requirepass sets it.
    pub fn new(password: Option<&str>, file: Option<PathBuf>) -> Self {
        let default = User::new(b"default".to_vec(), Rules::default_user());
        let acl = Self {
            users: RwLock::new(BTreeMap::from([(b"default".to_vec(), default.clone())])),
            default,
            log: Mutex::new(log::AclLog::default()),
            file,
            pubsub_allchannels: AtomicBool::new(false),
        };
        acl.set_default_password(password.map(str::as_bytes));
        acl
    }

    pub fn default_user(&self) -> Arc<User> {
        self.default.clone()
    }

    /// New connections start authenticated as `default` when it is on and needs no password.
    pub fn default_authenticates(&self) -> bool {
        let rules = self.default.rules.read();
        rules.enabled && rules.nopass
    }

    /// requirepass: the default user's only password, or nopass when empty.
    pub fn set_default_password(&self, password: Option<&[u8]>) {
        let mut rules = self.default.rules();
        let _ = rules.apply(b"resetpass", false);
        match password.filter(|p| !p.is_empty()) {
            Some(p) => {
                let mut op = b">".to_vec();
                op.extend_from_slice(p);
                let _ = rules.apply(&op, false);
            }
            None => {
                let _ = rules.apply(b"nopass", false);
            }
        }
        self.default.set_rules(rules);
    }

    pub fn user(&self, name: &[u8]) -> Option<Arc<User>> {
        self.users.read().get(name).cloned()
    }

    /// Every user, by name.
    pub fn users(&self) -> Vec<Arc<User>> {
        self.users.read().values().cloned().collect()
    }

    /// The user `name` when `password` is one of its and it is on.
    pub fn authenticate(&self, name: &[u8], password: &[u8]) -> Option<Arc<User>> {
        let user = self.user(name)?;
        let ok = {
            let rules = user.rules.read();
            rules.enabled && rules.password_matches(password)
        };
        ok.then_some(user)
    }

    fn allchannels(&self) -> bool {
        self.pubsub_allchannels.load(Ordering::Relaxed)
    }

    /// ACL SETUSER: applies every op to a copy of the user (a new one when it does not exist)
    /// and keeps it only when all of them apply. Returns the user and whether its channel
    /// permissions were narrowed (its subscribers are then checked again).
    pub fn set_user(&self, name: &[u8], ops: &[&[u8]]) -> Result<Arc<User>, SetUserError> {
        if rules::has_spaces(name) {
            return Err(SetUserError(
                "Usernames can't contain spaces or null characters".to_owned(),
            ));
        }
        let merged = rules::merge_selectors(ops).map_err(|at| {
            SetUserError(format!(
                "Unmatched parenthesis in acl selector starting at '{}'.",
                String::from_utf8_lossy(&at)
            ))
        })?;
        let allchannels = self.allchannels();
        let mut users = self.users.write();
        let existing = users.get(name).cloned();
        let mut rules = match &existing {
            Some(user) => user.rules(),
            None => Rules::new(allchannels),
        };
        for op in &merged {
            rules.apply(op, allchannels).map_err(|e: RuleError| {
                SetUserError(format!(
                    "Error in ACL SETUSER modifier '{}': {e}",
                    String::from_utf8_lossy(op)
                ))
            })?;
        }
        Ok(match existing {
            Some(user) => {
                user.set_rules(rules);
                user
            }
            None => {
                let user = User::new(name.to_vec(), rules);
                users.insert(name.to_vec(), user.clone());
                user
            }
        })
    }

    /// ACL DELUSER: the users removed (their connections are to be closed by the caller).
    pub fn delete(&self, names: &[&[u8]]) -> Vec<Arc<User>> {
        let mut users = self.users.write();
        let removed: Vec<Arc<User>> = names.iter().filter_map(|n| users.remove(*n)).collect();
        for user in &removed {
            user.remove();
        }
        removed
    }

    /// Replaces every user with `loaded` (the default user keeps its identity, with the loaded
    /// rules or a fresh default's); returns the users removed.
    fn replace_all(&self, mut loaded: BTreeMap<Vec<u8>, Rules>) -> Vec<Arc<User>> {
        let default_rules = loaded
            .remove(b"default".as_slice())
            .unwrap_or_else(Rules::default_user);
        self.default.set_rules(default_rules);
        let mut fresh = BTreeMap::from([(b"default".to_vec(), self.default.clone())]);
        for (name, rules) in loaded {
            fresh.insert(name.clone(), User::new(name, rules));
        }
        let old = std::mem::replace(&mut *self.users.write(), fresh);
        let removed: Vec<Arc<User>> = old
            .into_values()
            .filter(|u| !Arc::ptr_eq(u, &self.default))
            .collect();
        for user in &removed {
            user.remove();
        }
        removed
    }

    /// Users declared at start (`[resp] users`, Redis's `user` directives): each `name rules...`.
    pub fn declare(&self, lines: &[String]) -> Result<(), LoadError> {
        let parsed = file::parse_declared(lines, self.allchannels())?;
        self.replace_all(parsed);
        Ok(())
    }

    /// ACL LOAD (and start with an aclfile): reads the file; on any error nothing changes.
    pub fn load_file(&self) -> Result<Vec<Arc<User>>, LoadError> {
        let path = self.file.as_ref().ok_or(LoadError::NoFile)?;
        let loaded = file::read(path, self.allchannels())?;
        Ok(self.replace_all(loaded))
    }

    /// ACL SAVE: writes every user to the file (through a temporary file and a rename).
    pub fn save_file(&self) -> Result<(), LoadError> {
        let path = self.file.as_ref().ok_or(LoadError::NoFile)?;
        file::write(path, &self.users())
    }
}

/// The fuzz target `acl_rules`: `data` split at newlines is read as an ACL file, and split at
/// spaces applied as ACL SETUSER ops; what a user's description says must load back.
#[doc(hidden)]
pub fn fuzz(data: &[u8]) {
    let lines: Vec<&[u8]> = data.split(|&c| c == b'\n').collect();
    if let Ok(users) = file::parse_lines("fuzz.acl", &lines) {
        for rules in users.values() {
            reload(rules);
        }
    }
    let ops: Vec<&[u8]> = data.split(|&c| c == b' ').collect();
    if let Ok(merged) = rules::merge_selectors(&ops) {
        let mut rules = Rules::new(false);
        if merged.iter().all(|op| rules.apply(op, false).is_ok()) {
            reload(&rules);
        }
    }
}

/// Describes `rules` and applies the description to a fresh user; panics if it does not load.
fn reload(rules: &Rules) {
    let described = rules.describe();
    let ops: Vec<&[u8]> = described.split(|&c| c == b' ').collect();
    let merged = rules::merge_selectors(&ops).unwrap_or_default();
    let mut again = Rules::new(false);
    for op in &merged {
        if let Err(e) = again.apply(op, false) {
            panic!(
                "the description {:?} does not load back: {e}",
                String::from_utf8_lossy(&described)
            );
        }
    }
    assert_eq!(
        again.describe(),
        described,
        "the description changed on reload"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setuser_is_all_or_nothing_and_default_follows_requirepass() {
        let acl = Acl::new(None, None);
        assert!(acl.default_authenticates());
        assert!(acl.default_user().is_unrestricted());
        acl.set_default_password(Some(b"pw"));
        assert!(!acl.default_authenticates());
        assert!(acl.authenticate(b"default", b"pw").is_some());
        assert!(acl.authenticate(b"default", b"no").is_none());
        // Changing the password keeps the fast path: permissions did not change.
        assert!(acl.default_user().is_unrestricted());

        let err = acl
            .set_user(b"alice", &[b"on", b">a", b"bogus"])
            .expect_err("a bad op");
        assert_eq!(err.0, "Error in ACL SETUSER modifier 'bogus': Syntax error");
        assert!(acl.user(b"alice").is_none(), "nothing applied");
        let alice = acl.set_user(b"alice", &[b">a"]).expect("valid");
        assert!(
            acl.authenticate(b"alice", b"a").is_none(),
            "users start off"
        );
        acl.set_user(b"alice", &[b"on"]).expect("valid");
        assert!(acl.authenticate(b"alice", b"a").is_some());
        assert!(!alice.is_unrestricted());
        assert_eq!(acl.delete(&[b"alice", b"nobody"]).len(), 1);
        assert!(alice.is_removed());
    }
}
