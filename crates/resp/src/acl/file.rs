//! The ACL file (Redis's aclfile: one `user <name> <rules...>` line per user) read by ACL LOAD
//! and at start, written by ACL SAVE; and users declared in the configuration.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;

use super::User;
use super::rules::{RuleError, Rules, has_spaces, merge_selectors};

/// Why users could not be loaded or saved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// ACL LOAD or SAVE without an aclfile.
    #[error(
        "This Redis instance is not configured to use an ACL file. You may want to specify users \
         via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis \
         configuration file set) in order to store users in the Redis configuration."
    )]
    NoFile,
    /// The file or declarations hold errors: nothing was changed. Redis's wording, each error
    /// naming its file and line.
    #[error("{0}")]
    Invalid(String),
    /// Writing the file failed.
    #[error(
        "There was an error trying to save the ACLs. Please check the server logs for more information"
    )]
    Save,
}

/// Reads `path`: every user's rules, or all the errors found.
pub fn read(path: &Path, allchannels: bool) -> Result<BTreeMap<Vec<u8>, Rules>, LoadError> {
    let name = path.display().to_string();
    let text = std::fs::read(path).map_err(|e| {
        LoadError::Invalid(format!("Error loading ACLs, opening file '{name}': {e}"))
    })?;
    let lines: Vec<&[u8]> = text.split(|&c| c == b'\n').collect();
    parse(&name, &lines, true, allchannels)
}

/// Users declared in the configuration, each `<name> <rules...>` (a leading `user` is allowed).
pub fn parse_declared(
    lines: &[String],
    allchannels: bool,
) -> Result<BTreeMap<Vec<u8>, Rules>, LoadError> {
    let lines: Vec<Vec<u8>> = lines
        .iter()
        .map(|l| {
            let l = l.trim();
            if l.split(' ').next() == Some("user") {
                l.as_bytes().to_vec()
            } else {
                format!("user {l}").into_bytes()
            }
        })
        .collect();
    let lines: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
    parse("[resp] users", &lines, false, allchannels)
}

fn parse(
    source: &str,
    lines: &[&[u8]],
    numbered: bool,
    allchannels: bool,
) -> Result<BTreeMap<Vec<u8>, Rules>, LoadError> {
    let mut users = BTreeMap::new();
    let mut errors = String::new();
    for (i, line) in lines.iter().enumerate() {
        let at = if numbered {
            format!("{source}:{}", i + 1)
        } else {
            format!("{source}[{i}]")
        };
        let line = trim(line);
        if line.is_empty() {
            continue;
        }
        let argv: Vec<&[u8]> = line.split(|&c| c == b' ').collect();
        if argv.len() < 2 || argv[0] != b"user" {
            errors.push_str(&format!(
                "{at} should start with user keyword followed by the username. "
            ));
            continue;
        }
        let name = argv[1];
        if has_spaces(name) {
            errors.push_str(&format!(
                "'{at}: username '{}' contains invalid characters. ",
                String::from_utf8_lossy(name)
            ));
            continue;
        }
        if users.contains_key(name) {
            errors.push_str(&format!(
                "WARNING: Duplicate user '{}' found on line {}. ",
                String::from_utf8_lossy(name),
                i + 1
            ));
            continue;
        }
        let Ok(ops) = merge_selectors(&argv[2..]) else {
            errors.push_str(&format!(
                "{at}: Unmatched parenthesis in selector definition."
            ));
            continue;
        };
        let mut rules = Rules::new(allchannels);
        let mut syntax_error = false;
        for op in &ops {
            let op = trim(op);
            match rules.apply(op, allchannels) {
                Ok(()) => {}
                Err(e @ RuleError::Unknown) => errors.push_str(&format!(
                    "{at}: Error in applying operation '{}': {e}. ",
                    String::from_utf8_lossy(op)
                )),
                Err(e) if !syntax_error => {
                    errors.push_str(&format!("{at}: {e}. "));
                    syntax_error = true;
                }
                Err(_) => {}
            }
        }
        users.insert(name.to_vec(), rules);
    }
    if errors.is_empty() {
        Ok(users)
    } else {
        errors.push_str(
            "WARNING: ACL errors detected, no change to the previously active ACL rules was \
             performed",
        );
        Err(LoadError::Invalid(errors))
    }
}

/// The file parser on raw lines (property tests and the fuzz target).
pub fn parse_lines(source: &str, lines: &[&[u8]]) -> Result<BTreeMap<Vec<u8>, Rules>, LoadError> {
    parse(source, lines, true, false)
}

fn trim(s: &[u8]) -> &[u8] {
    let is_space = |c: &u8| matches!(c, b' ' | b'\t' | b'\r' | b'\n');
    let start = s.iter().position(|c| !is_space(c)).unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|c| !is_space(c))
        .map_or(start, |e| e + 1);
    &s[start..end]
}

/// Writes every user as a `user` line, through a temporary file renamed over `path`.
pub fn write(path: &Path, users: &[Arc<User>]) -> Result<(), LoadError> {
    let mut text = Vec::new();
    for user in users {
        text.extend_from_slice(b"user ");
        text.extend_from_slice(&user.name);
        text.push(b' ');
        text.extend_from_slice(&user.rules().describe());
        text.push(b'\n');
    }
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    let written = std::fs::File::create(&tmp)
        .and_then(|mut f| f.write_all(&text).and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = written {
        tracing::warn!(path = %path.display(), error = %e, "ACL SAVE failed");
        let _ = std::fs::remove_file(&tmp);
        return Err(LoadError::Save);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_redis_acl_files_and_reports_every_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("users.acl");
        std::fs::write(
            &path,
            "user alice on allcommands allkeys &* >alice\n\
             user bob on -@all +@set +acl ~set* &* >bob\n\n\
             user default on nopass ~* &* +@all\n",
        )
        .expect("write");
        let users = read(&path, false).expect("valid file");
        assert_eq!(users.len(), 3);
        assert!(users[b"alice".as_slice()].password_matches(b"alice"));
        std::fs::write(
            &path,
            "user alice on nopass\nuser alice off\nbob on\nuser carol +nosuch bogus\n",
        )
        .expect("write");
        let Err(LoadError::Invalid(text)) = read(&path, false) else {
            panic!("errors expected");
        };
        assert!(
            text.contains("Duplicate user 'alice' found on line 2"),
            "{text}"
        );
        assert!(
            text.contains("users.acl:3 should start with user keyword"),
            "{text}"
        );
        assert!(
            text.contains("Error in applying operation '+nosuch'"),
            "{text}"
        );
        assert!(text.contains("users.acl:4: Syntax error. "), "{text}");
        assert!(text.ends_with("no change to the previously active ACL rules was performed"));
    }

    #[test]
    fn declared_users_take_redis_user_directives() {
        let users = parse_declared(
            &[
                "app on >pw ~app:* +@read".to_owned(),
                "user ops on nopass +@all ~*".to_owned(),
            ],
            false,
        )
        .expect("valid");
        assert!(users.contains_key(b"app".as_slice()) && users.contains_key(b"ops".as_slice()));
        assert!(parse_declared(&["x on".to_owned(), "x off".to_owned()], false).is_err());
    }
}
