//! A selector of ACL rules: the commands, key patterns and channel patterns it allows, and the
//! SETUSER ops that change it.

use std::collections::BTreeMap;

use super::catalog::{CATALOG, KEY_READ, KEY_WRITE};
use super::categories;
use super::rules::{RuleError, has_spaces};

/// A key pattern with the access it grants (`~` both, `%R~` read, `%W~` write).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyPattern {
    pub pattern: Vec<u8>,
    pub access: u8,
}

/// Commands, keys and channels a user may use; a user is allowed what any of its selectors
/// allows.
#[derive(Debug, Clone)]
pub struct Selector {
    /// One bit per catalog id.
    pub allowed: Vec<u64>,
    /// Set by `+@all` and cleared only by `-@all`: commands added later would be allowed too
    /// (ACL GETUSER then starts the description with `+@all`).
    pub future: bool,
    /// First arguments allowed for a command otherwise refused (`+select|0`).
    pub first_args: BTreeMap<usize, Vec<Vec<u8>>>,
    pub allkeys: bool,
    pub patterns: Vec<KeyPattern>,
    pub allchannels: bool,
    pub channels: Vec<Vec<u8>>,
}

impl Selector {
    /// A selector that allows nothing; `allchannels` follows acl-pubsub-default.
    pub fn new(allchannels: bool) -> Self {
        Self {
            allowed: vec![0; CATALOG.words()],
            future: false,
            first_args: BTreeMap::new(),
            allkeys: false,
            patterns: Vec::new(),
            allchannels,
            channels: Vec::new(),
        }
    }

    pub fn allows(&self, id: usize) -> bool {
        self.allowed
            .get(id / 64)
            .is_some_and(|w| w & (1 << (id % 64)) != 0)
    }

    fn set_bit(&mut self, id: usize, on: bool) {
        if let Some(w) = self.allowed.get_mut(id / 64) {
            if on {
                *w |= 1 << (id % 64);
            } else {
                *w &= !(1 << (id % 64));
            }
        }
    }

    /// Every command in the catalog is allowed.
    pub fn all_commands(&self) -> bool {
        self.future && (0..CATALOG.commands.len()).all(|id| self.allows(id))
    }

    /// Allows or refuses a command, its subcommands with it.
    fn change(&mut self, id: usize, allow: bool) {
        self.set_bit(id, allow);
        self.first_args.remove(&id);
        if let Some(cmd) = CATALOG.get(id) {
            for &sub in &cmd.subcommands {
                self.set_bit(sub, allow);
            }
        }
    }

    fn change_category(&mut self, category: u32, allow: bool) {
        for (id, cmd) in CATALOG.commands.iter().enumerate() {
            if cmd.categories & category != 0 {
                self.change(id, allow);
            }
        }
    }

    /// Applies one op: the key, channel and command rules.
    pub fn apply(&mut self, op: &[u8]) -> Result<(), RuleError> {
        let is = |word: &str| op.eq_ignore_ascii_case(word.as_bytes());
        if is("allkeys") || op == b"~*" {
            self.allkeys = true;
            self.patterns.clear();
        } else if is("resetkeys") {
            self.allkeys = false;
            self.patterns.clear();
        } else if is("allchannels") || op == b"&*" {
            self.allchannels = true;
            self.channels.clear();
        } else if is("resetchannels") {
            self.allchannels = false;
            self.channels.clear();
        } else if is("allcommands") || is("+@all") {
            self.allowed.iter_mut().for_each(|w| *w = u64::MAX);
            self.future = true;
            self.first_args.clear();
        } else if is("nocommands") || is("-@all") {
            self.allowed.iter_mut().for_each(|w| *w = 0);
            self.future = false;
            self.first_args.clear();
        } else if let Some(&first) = op.first().filter(|&&c| c == b'~' || c == b'%') {
            if self.allkeys {
                return Err(RuleError::KeyAfterAll);
            }
            let (access, pattern) = if first == b'%' {
                key_pattern_access(op)?
            } else {
                (KEY_READ | KEY_WRITE, &op[1..])
            };
            if has_spaces(pattern) {
                return Err(RuleError::Syntax);
            }
            match self.patterns.iter_mut().find(|p| p.pattern == pattern) {
                Some(existing) => existing.access |= access,
                None => self.patterns.push(KeyPattern {
                    pattern: pattern.to_vec(),
                    access,
                }),
            }
            // Read and write access to `*` is allkeys, and is described as `~*`: taken as such
            // here, so that what ACL LIST and ACL SAVE write always loads back.
            if self
                .patterns
                .iter()
                .any(|p| p.pattern == b"*" && p.access == KEY_READ | KEY_WRITE)
            {
                self.allkeys = true;
                self.patterns.clear();
            }
        } else if let Some(pattern) = op.strip_prefix(b"&") {
            if self.allchannels {
                return Err(RuleError::ChannelAfterAll);
            }
            if has_spaces(pattern) {
                return Err(RuleError::Syntax);
            }
            if !self.channels.iter().any(|c| c == pattern) {
                self.channels.push(pattern.to_vec());
            }
        } else if let Some(category) = op.strip_prefix(b"+@").or_else(|| op.strip_prefix(b"-@")) {
            let bit = categories::by_name(category).ok_or(RuleError::Unknown)?;
            self.change_category(bit, op[0] == b'+');
        } else if let Some(name) = op.strip_prefix(b"+") {
            self.allow_command(name)?;
        } else if let Some(name) = op.strip_prefix(b"-") {
            let id = CATALOG.lookup(name).ok_or(RuleError::Unknown)?;
            self.change(id, false);
        } else {
            return Err(RuleError::Syntax);
        }
        Ok(())
    }

    /// `+name`, `+name|subcommand` or `+name|first-arg`.
    fn allow_command(&mut self, name: &[u8]) -> Result<(), RuleError> {
        let Some(bar) = name.iter().rposition(|&c| c == b'|') else {
            let id = CATALOG.lookup(name).ok_or(RuleError::Unknown)?;
            self.change(id, true);
            return Ok(());
        };
        let (command, arg) = (&name[..bar], &name[bar + 1..]);
        let id = CATALOG.lookup(command).ok_or(RuleError::Unknown)?;
        let entry = CATALOG.get(id).ok_or(RuleError::Unknown)?;
        if entry.parent.is_some() {
            return Err(RuleError::SubcommandFirstArg);
        }
        if arg.is_empty() {
            return Err(RuleError::Syntax);
        }
        if !entry.subcommands.is_empty() {
            let sub = CATALOG.lookup(name).ok_or(RuleError::Unknown)?;
            self.change(sub, true);
            return Ok(());
        }
        if self.allows(id) {
            // The whole command is allowed already: a first argument adds nothing.
            return Ok(());
        }
        let allowed = self.first_args.entry(id).or_default();
        if !allowed.iter().any(|a| a.eq_ignore_ascii_case(arg)) {
            allowed.push(arg.to_vec());
        }
        Ok(())
    }

    /// The selector as rules ACL SETUSER takes back: keys, channels, then commands (bytes:
    /// patterns may be binary).
    pub fn describe(&self) -> Vec<u8> {
        let mut text = Vec::new();
        if self.allkeys {
            text.extend_from_slice(b"~* ");
        } else {
            for p in &self.patterns {
                text.extend_from_slice(&pattern_text(p));
                text.push(b' ');
            }
        }
        if self.allchannels {
            text.extend_from_slice(b"&* ");
        } else {
            text.extend_from_slice(b"resetchannels ");
            for c in &self.channels {
                text.push(b'&');
                text.extend_from_slice(c);
                text.push(b' ');
            }
        }
        text.extend_from_slice(&self.describe_commands());
        text
    }

    /// ACL GETUSER's `keys`: `~*`, or the patterns.
    pub fn keys_text(&self) -> Vec<u8> {
        if self.allkeys {
            return b"~*".to_vec();
        }
        let parts: Vec<Vec<u8>> = self.patterns.iter().map(pattern_text).collect();
        parts.join(&b' ')
    }

    /// ACL GETUSER's `channels`: `&*`, or the patterns.
    pub fn channels_text(&self) -> Vec<u8> {
        if self.allchannels {
            return b"&*".to_vec();
        }
        let parts: Vec<Vec<u8>> = self
            .channels
            .iter()
            .map(|c| [b"&", c.as_slice()].concat())
            .collect();
        parts.join(&b' ')
    }

    /// The command rules that rebuild this selector's bitmap: `+@all` or `-@all`, the
    /// categories that fit best, then single commands, as Redis describes them.
    pub fn describe_commands(&self) -> Vec<u8> {
        let additive = !self.future;
        let mut rules: Vec<Vec<u8>> = vec![if additive {
            b"-@all".to_vec()
        } else {
            b"+@all".to_vec()
        }];
        let mut fake = Selector::new(false);
        let _ = fake.apply(if additive { b"-@all" } else { b"+@all" });
        // Categories already applied are taken out of `pending` by the inverse op, so later
        // rounds count only what is left to explain.
        let mut pending = self.clone();
        let mut applied = [false; categories::NAMES.len()];
        loop {
            let mut best: Option<(usize, usize, usize)> = None;
            for (j, &(_, bit)) in categories::NAMES.iter().enumerate() {
                if applied[j] {
                    continue;
                }
                let (on, off) = pending.count(bit);
                let (diff, same) = if additive { (off, on) } else { (on, off) };
                let better = match best {
                    None => true,
                    Some((_, min_diff, max_same)) => {
                        diff < min_diff || (diff == min_diff && same > max_same)
                    }
                };
                if same > diff && better {
                    best = Some((j, diff, same));
                }
            }
            let Some((j, _, _)) = best else { break };
            let (name, bit) = categories::NAMES[j];
            fake.change_category(bit, additive);
            pending.change_category(bit, !additive);
            rules.push(format!("{}@{name}", if additive { '+' } else { '-' }).into_bytes());
            applied[j] = true;
        }
        for (id, cmd) in CATALOG.commands.iter().enumerate() {
            if cmd.parent.is_some() {
                continue;
            }
            for id in std::iter::once(id).chain(cmd.subcommands.iter().copied()) {
                let mine = self.allows(id);
                if mine != fake.allows(id) {
                    if let Some(c) = CATALOG.get(id) {
                        rules.push(
                            format!("{}{}", if mine { '+' } else { '-' }, c.name).into_bytes(),
                        );
                    }
                    fake.change(id, mine);
                }
            }
            if !self.allows(id)
                && let Some(args) = self.first_args.get(&id)
            {
                for arg in args {
                    rules.push([format!("+{}|", cmd.name).as_bytes(), arg].concat());
                }
            }
        }
        rules.join(&b' ')
    }

    /// Commands of `category` this selector allows and refuses.
    fn count(&self, category: u32) -> (usize, usize) {
        let mut counts = (0, 0);
        for (id, cmd) in CATALOG.commands.iter().enumerate() {
            if cmd.categories & category != 0 {
                if self.allows(id) {
                    counts.0 += 1;
                } else {
                    counts.1 += 1;
                }
            }
        }
        counts
    }
}

fn pattern_text(p: &KeyPattern) -> Vec<u8> {
    let prefix: &[u8] = match p.access {
        KEY_READ => b"%R~",
        KEY_WRITE => b"%W~",
        _ => b"~",
    };
    [prefix, p.pattern.as_slice()].concat()
}

/// `%R~`, `%W~`, `%RW~` and the pattern after them.
fn key_pattern_access(op: &[u8]) -> Result<(u8, &[u8]), RuleError> {
    let mut access = 0;
    for (i, &c) in op.iter().enumerate().skip(1) {
        match c.to_ascii_uppercase() {
            b'R' if access & KEY_READ == 0 => access |= KEY_READ,
            b'W' if access & KEY_WRITE == 0 => access |= KEY_WRITE,
            // `%~` grants nothing (Redis aborts describing such a pattern): refused.
            b'~' if access != 0 => return Ok((access, &op[i + 1..])),
            _ => return Err(RuleError::Syntax),
        }
    }
    Err(RuleError::Syntax)
}
