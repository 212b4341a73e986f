//! A user's rules as ACL SETUSER writes them (Redis 7.0's syntax): flags, passwords, and
//! selectors of commands, key patterns and channel patterns; applied one op at a time.

use sha2::{Digest, Sha256};

pub use super::selector::Selector;

/// Why an ACL SETUSER op was refused, worded as Redis words it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    #[error("Unknown command or category name in ACL")]
    Unknown,
    #[error("Syntax error")]
    Syntax,
    #[error(
        "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not \
         have any effect. Try 'resetkeys' to start with an empty list of patterns"
    )]
    KeyAfterAll,
    #[error(
        "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does \
         not have any effect. Try 'resetchannels' to start with an empty list of channels"
    )]
    ChannelAfterAll,
    #[error("The password you are trying to remove from the user does not exist")]
    NoSuchPassword,
    #[error(
        "The password hash must be exactly 64 characters and contain only lowercase hexadecimal \
         characters"
    )]
    BadHash,
    #[error("Allowing first-arg of a subcommand is not supported")]
    SubcommandFirstArg,
}

/// Whether `s` holds white space or NUL (not allowed in names and patterns).
pub fn has_spaces(s: &[u8]) -> bool {
    s.iter()
        .any(|&c| c == 0 || c.is_ascii_whitespace() || c == 0x0b)
}

/// A password as Redis stores it: SHA-256, lower-case hex.
pub fn hash_password(password: &[u8]) -> String {
    let digest = Sha256::digest(password);
    let mut hex = String::with_capacity(64);
    for b in digest {
        hex.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        hex.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
    }
    hex
}

fn valid_hash(hash: &[u8]) -> bool {
    hash.len() == 64 && hash.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
}

/// Everything ACL SETUSER sets on a user.
#[derive(Debug, Clone)]
pub struct Rules {
    pub enabled: bool,
    pub nopass: bool,
    /// `sanitize-payload` (true) or `skip-sanitize-payload` (false), once either was given.
    pub sanitize: Option<bool>,
    /// SHA-256 hex of each password.
    pub passwords: Vec<String>,
    /// The root selector first, then those given in parentheses.
    pub selectors: Vec<Selector>,
}

impl Rules {
    /// A new user: off, no password, no commands, keys, nor channels (unless
    /// acl-pubsub-default is allchannels).
    pub fn new(allchannels: bool) -> Self {
        Self {
            enabled: false,
            nopass: false,
            sanitize: None,
            passwords: Vec::new(),
            selectors: vec![Selector::new(allchannels)],
        }
    }

    /// The default user of a fresh server: on, nopass, everything.
    pub fn default_user() -> Self {
        let mut rules = Rules::new(false);
        for op in ["+@all", "~*", "&*", "on", "nopass"] {
            let _ = rules.apply(op.as_bytes(), false);
        }
        rules
    }

    pub fn root(&self) -> &Selector {
        &self.selectors[0]
    }

    fn root_mut(&mut self) -> &mut Selector {
        &mut self.selectors[0]
    }

    /// Applies one op of ACL SETUSER; `allchannels` is acl-pubsub-default (for `reset` and new
    /// selectors).
    pub fn apply(&mut self, op: &[u8], allchannels: bool) -> Result<(), RuleError> {
        let is = |word: &str| op.eq_ignore_ascii_case(word.as_bytes());
        if op.is_empty() {
            return Ok(());
        }
        if is("on") {
            self.enabled = true;
        } else if is("off") {
            self.enabled = false;
        } else if is("skip-sanitize-payload") {
            self.sanitize = Some(false);
        } else if is("sanitize-payload") {
            self.sanitize = Some(true);
        } else if is("nopass") {
            self.nopass = true;
            self.passwords.clear();
        } else if is("resetpass") {
            self.nopass = false;
            self.passwords.clear();
        } else if let Some(&first) = op.first().filter(|&&c| c == b'>' || c == b'#') {
            let hash = if first == b'>' {
                hash_password(&op[1..])
            } else if valid_hash(&op[1..]) {
                String::from_utf8_lossy(&op[1..]).into_owned()
            } else {
                return Err(RuleError::BadHash);
            };
            if !self.passwords.contains(&hash) {
                self.passwords.push(hash);
            }
            self.nopass = false;
        } else if let Some(&first) = op.first().filter(|&&c| c == b'<' || c == b'!') {
            let hash = if first == b'<' {
                hash_password(&op[1..])
            } else if valid_hash(&op[1..]) {
                String::from_utf8_lossy(&op[1..]).into_owned()
            } else {
                return Err(RuleError::BadHash);
            };
            let at = self
                .passwords
                .iter()
                .position(|p| *p == hash)
                .ok_or(RuleError::NoSuchPassword)?;
            self.passwords.remove(at);
        } else if op.first() == Some(&b'(') && op.last() == Some(&b')') {
            let inner = &op[1..op.len() - 1];
            let mut selector = Selector::new(allchannels);
            for part in inner
                .split(|c| c.is_ascii_whitespace())
                .filter(|p| !p.is_empty())
            {
                // A rule ending with `)` would end the selector early when its description is
                // read back (ACL LIST, ACL SAVE): refused.
                if part.last() == Some(&b')') {
                    return Err(RuleError::Syntax);
                }
                selector.apply(part)?;
            }
            self.selectors.push(selector);
        } else if is("clearselectors") {
            self.selectors.truncate(1);
        } else if is("reset") {
            self.nopass = false;
            self.passwords.clear();
            let root = self.root_mut();
            let _ = root.apply(b"resetkeys");
            let _ = root.apply(b"resetchannels");
            if allchannels {
                let _ = root.apply(b"allchannels");
            }
            self.enabled = false;
            self.sanitize = Some(true);
            self.selectors.truncate(1);
            let _ = self.root_mut().apply(b"-@all");
        } else {
            self.root_mut().apply(op)?;
        }
        Ok(())
    }

    /// Whether `password` is one of the user's (any password with nopass).
    pub fn password_matches(&self, password: &[u8]) -> bool {
        if self.nopass {
            return true;
        }
        let hash = hash_password(password);
        // Compared in constant time, as Redis compares.
        self.passwords.iter().any(|p| {
            p.len() == hash.len()
                && p.bytes()
                    .zip(hash.bytes())
                    .fold(0u8, |d, (a, b)| d | (a ^ b))
                    == 0
        })
    }

    /// The flags ACL GETUSER lists, in Redis's order.
    pub fn flags(&self) -> Vec<&'static str> {
        let mut flags = vec![if self.enabled { "on" } else { "off" }];
        if self.nopass {
            flags.push("nopass");
        }
        match self.sanitize {
            Some(false) => flags.push("skip-sanitize-payload"),
            Some(true) => flags.push("sanitize-payload"),
            None => {}
        }
        flags
    }

    /// The user as an ACL LIST line (without `user <name> `): flags, password hashes, root
    /// selector, then the others in parentheses.
    pub fn describe(&self) -> Vec<u8> {
        let mut text = Vec::new();
        for flag in self.flags() {
            text.extend_from_slice(flag.as_bytes());
            text.push(b' ');
        }
        for p in &self.passwords {
            text.push(b'#');
            text.extend_from_slice(p.as_bytes());
            text.push(b' ');
        }
        text.extend_from_slice(&self.root().describe());
        for selector in &self.selectors[1..] {
            text.extend_from_slice(b" (");
            text.extend_from_slice(&selector.describe());
            text.push(b')');
        }
        text
    }

    /// Allows every command, key and channel (the check is skipped).
    pub fn unrestricted(&self) -> bool {
        let root = self.root();
        root.allkeys && root.allchannels && root.all_commands()
    }
}

/// Joins arguments split inside parentheses (`(~key` `+get)`) into one selector op, as Redis
/// does; the error names the argument whose parenthesis is never closed.
pub fn merge_selectors(ops: &[&[u8]]) -> Result<Vec<Vec<u8>>, Vec<u8>> {
    let mut merged = Vec::with_capacity(ops.len());
    let mut open: Option<(usize, Vec<u8>)> = None;
    for (i, op) in ops.iter().enumerate() {
        if let Some((_, selector)) = open.as_mut() {
            selector.push(b' ');
            selector.extend_from_slice(op);
            if op.last() == Some(&b')')
                && let Some((_, selector)) = open.take()
            {
                merged.push(selector);
            }
            continue;
        }
        if op.first() == Some(&b'(') && op.last() != Some(&b')') {
            open = Some((i, op.to_vec()));
            continue;
        }
        merged.push(op.to_vec());
    }
    match open {
        Some((i, _)) => Err(ops[i].to_vec()),
        None => Ok(merged),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acl::categories;

    fn text(bytes: Vec<u8>) -> String {
        String::from_utf8_lossy(&bytes).into_owned()
    }

    fn rules(ops: &[&str]) -> Rules {
        let mut r = Rules::new(false);
        for op in ops {
            r.apply(op.as_bytes(), false).expect("valid op");
        }
        r
    }

    #[test]
    fn describes_back_what_was_set() {
        let r = rules(&[
            "on", ">p1", "~a*", "%R~b*", "&ch", "+get", "+@hash", "-hdel",
        ]);
        let described = text(r.describe());
        assert!(
            described.starts_with(&format!(
                "on #{} ~a* %R~b* resetchannels &ch -@all +@hash",
                hash_password(b"p1")
            )),
            "{described}"
        );
        assert!(
            described.contains("+get") && described.contains("-hdel"),
            "{described}"
        );
        assert_eq!(
            text(rules(&["+@all", "-@string"]).root().describe_commands()),
            "+@all -@string"
        );
        assert_eq!(
            text(rules(&["-@all", "+@set"]).root().describe_commands()),
            "-@all +@set"
        );
        assert_eq!(
            text(rules(&["+memory|doctor"]).root().describe_commands()),
            "-@all +memory|doctor"
        );
        assert_eq!(
            text(
                rules(&["+memory|doctor", "+memory"])
                    .root()
                    .describe_commands()
            ),
            "-@all +memory"
        );
        assert_eq!(
            text(rules(&["+@all", "+client|id"]).root().describe_commands()),
            "+@all"
        );
        assert_eq!(
            text(rules(&["+@all", "-client|kill"]).root().describe_commands()),
            "+@all -client|kill"
        );
        assert_eq!(
            text(rules(&["+select|0"]).root().describe_commands()),
            "-@all +select|0"
        );
        assert_eq!(
            text(Rules::default_user().describe()),
            "on nopass ~* &* +@all"
        );
        assert_eq!(
            text(Rules::new(false).describe()),
            "off resetchannels -@all"
        );
        assert!(Rules::default_user().unrestricted());
    }

    #[test]
    fn every_category_alone_describes_as_itself() {
        for (name, _) in categories::NAMES {
            let minus = format!("-@{name}");
            let plus = format!("+@{name}");
            assert_eq!(
                text(rules(&["+@all", &minus]).root().describe_commands()),
                format!("+@all {minus}")
            );
            assert_eq!(
                text(rules(&["-@all", &plus]).root().describe_commands()),
                format!("-@all {plus}")
            );
        }
    }

    #[test]
    fn bad_ops_are_refused_with_redis_reasons() {
        let mut r = rules(&["~*", "&*"]);
        assert_eq!(r.apply(b"~a", false), Err(RuleError::KeyAfterAll));
        assert_eq!(r.apply(b"&a", false), Err(RuleError::ChannelAfterAll));
        assert_eq!(r.apply(b"bogus", false), Err(RuleError::Syntax));
        assert_eq!(r.apply(b"<nope", false), Err(RuleError::NoSuchPassword));
        assert_eq!(r.apply(b"#abc", false), Err(RuleError::BadHash));
        assert_eq!(r.apply(b"+@nocat", false), Err(RuleError::Unknown));
        assert_eq!(r.apply(b"+nocommand", false), Err(RuleError::Unknown));
        assert_eq!(
            r.apply(b"+config|get|x", false),
            Err(RuleError::SubcommandFirstArg)
        );
        assert_eq!(r.apply(b"+config|asdf", false), Err(RuleError::Unknown));
        assert_eq!(r.apply(b"+get|a|b", false), Err(RuleError::Unknown));
        assert_eq!(r.apply(b"+debug|", false), Err(RuleError::Syntax));
        assert_eq!(r.apply(b"%X~a", false), Err(RuleError::KeyAfterAll));
        let mut fresh = Rules::new(false);
        assert_eq!(fresh.apply(b"%X~a", false), Err(RuleError::Syntax));
        assert_eq!(fresh.apply(b"%~a", false), Err(RuleError::Syntax));
        assert!(fresh.apply(b"%RW~a", false).is_ok());
        assert_eq!(text(fresh.root().keys_text()), "~a");
    }

    #[test]
    fn passwords_and_selectors() {
        let r = rules(&[
            ">secret",
            "#34344e4d60c2b6d639b7bd22e18f2b0b91bc34bf0ac5f9952744435093cfb4e6",
        ]);
        assert!(r.password_matches(b"secret"));
        assert!(r.password_matches(b"passwd4"));
        assert!(!r.password_matches(b"other"));
        assert!(rules(&["nopass"]).password_matches(b"anything"));
        let ops: Vec<&[u8]> = vec![b"(~key1", b"+get", b")", b"(~k2 +set)", b"on"];
        let merged = merge_selectors(&ops).expect("balanced");
        assert_eq!(
            merged,
            [
                b"(~key1 +get )".to_vec(),
                b"(~k2 +set)".to_vec(),
                b"on".to_vec()
            ]
        );
        assert_eq!(merge_selectors(&[b"(~a".as_slice()]), Err(b"(~a".to_vec()));
        let mut r = Rules::new(false);
        for op in &merged {
            r.apply(op, false).expect("valid");
        }
        assert_eq!(r.selectors.len(), 3);
        // A pattern ending with `)` would end the selector early when read back: refused.
        assert_eq!(r.apply(b"(~rw*))", false), Err(RuleError::Syntax));
        assert_eq!(text(r.selectors[1].keys_text()), "~key1");
    }
}

#[cfg(test)]
mod props {
    use super::*;
    use crate::acl::catalog::{KEY_READ, KEY_WRITE};
    use crate::acl::categories;
    use proptest::prelude::*;

    /// An op: mostly ones ACL SETUSER knows (valid or not), sometimes any bytes.
    fn op() -> impl Strategy<Value = Vec<u8>> {
        let words = prop::sample::select(vec![
            "on",
            "off",
            "nopass",
            "resetpass",
            "reset",
            "allkeys",
            "resetkeys",
            "allchannels",
            "resetchannels",
            "allcommands",
            "nocommands",
            "+@all",
            "-@all",
            "clearselectors",
            "sanitize-payload",
            "skip-sanitize-payload",
            "~*",
            "&*",
            "+select|0",
            "+debug|object",
            "+client|id",
            "-client|kill",
            "+config|get",
            "-config",
            "+config|get|x",
            "+nosuch",
        ]);
        let command = prop::sample::select(vec![
            "get",
            "set",
            "client",
            "config",
            "memory|doctor",
            "eval",
            "sort",
            "publish",
            "acl",
        ]);
        let category = prop::sample::select(
            categories::NAMES
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>(),
        );
        prop_oneof![
            4 => words.prop_map(|w| w.as_bytes().to_vec()),
            3 => (prop::bool::ANY, command).prop_map(|(plus, c)| format!("{}{c}", if plus { '+' } else { '-' }).into_bytes()),
            3 => (prop::bool::ANY, category).prop_map(|(plus, c)| format!("{}@{c}", if plus { '+' } else { '-' }).into_bytes()),
            2 => ("(~|%R~|%W~|%RW~)", "[a-c*?]{0,3}").prop_map(|(p, k)| format!("{p}{k}").into_bytes()),
            2 => "&[a-c*]{0,3}".prop_map(String::into_bytes),
            1 => ">[a-z]{0,3}".prop_map(String::into_bytes),
            1 => "\\((~[a-c*]{1,2} )?[+-]@(read|write|string) ?\\)".prop_map(String::into_bytes),
            1 => prop::collection::vec(any::<u8>(), 0..12),
        ]
    }

    /// `%RW~*` is described as `~*`, which reads back as allkeys: the same keys (Redis too).
    fn all_keys(s: &Selector) -> bool {
        s.allkeys
            || s.patterns
                .iter()
                .any(|p| p.pattern == b"*" && p.access == KEY_READ | KEY_WRITE)
    }

    fn same(a: &Rules, b: &Rules) -> bool {
        a.enabled == b.enabled
            && a.nopass == b.nopass
            && a.sanitize == b.sanitize
            && a.passwords == b.passwords
            && a.selectors.len() == b.selectors.len()
            && a.selectors.iter().zip(&b.selectors).all(|(x, y)| {
                x.allowed == y.allowed
                    && x.future == y.future
                    && x.first_args == y.first_args
                    && all_keys(x) == all_keys(y)
                    && (all_keys(x) || x.patterns == y.patterns)
                    && x.allchannels == y.allchannels
                    && x.channels == y.channels
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// No op panics, and what ACL LIST says about a user rebuilds the same user (Redis
        /// aborts when its description does not; ACL SAVE and LOAD depend on it).
        #[test]
        fn describe_rebuilds_the_same_user(ops in prop::collection::vec(op(), 0..16)) {
            let mut rules = Rules::new(false);
            for op in &ops {
                let _ = rules.apply(op, false);
            }
            let described = rules.describe();
            let text = String::from_utf8_lossy(&described).into_owned();
            let parts: Vec<&[u8]> = described.split(|&c| c == b' ').collect();
            let merged = merge_selectors(&parts).expect("balanced parentheses");
            let mut again = Rules::new(false);
            for op in &merged {
                prop_assert!(again.apply(op, false).is_ok(), "{} in {text}", String::from_utf8_lossy(op));
            }
            prop_assert!(same(&rules, &again), "{text}\nbecame {}", String::from_utf8_lossy(&again.describe()));
        }

        /// ACL files of any bytes load or report errors; they never panic.
        #[test]
        fn acl_files_of_any_bytes(text in prop::collection::vec(any::<u8>(), 0..300)) {
            let lines: Vec<&[u8]> = text.split(|&c| c == b'\n').collect();
            let _ = super::super::file::parse_lines("test.acl", &lines);
        }
    }
}
