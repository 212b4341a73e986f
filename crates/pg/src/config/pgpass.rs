//! The password file (`~/.pgpass`, `passfile`, `PGPASSFILE`): line parsing, matching, and libpq's permission check.

use std::path::Path;

/// One of the four matching fields of a password-file line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Field {
    /// `*`: matches anything.
    Any,
    /// A literal value, with `\:` and `\\` escapes removed.
    Literal(String),
}

impl Field {
    fn matches(&self, value: &str) -> bool {
        match self {
            Field::Any => true,
            Field::Literal(literal) => literal == value,
        }
    }
}

/// A parsed `hostname:port:database:username:password` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) host: Field,
    pub(crate) port: Field,
    pub(crate) database: Field,
    pub(crate) user: Field,
    pub(crate) password: String,
}

/// What a connection is matched on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Key<'a> {
    pub(crate) host: &'a str,
    pub(crate) port: &'a str,
    pub(crate) database: &'a str,
    pub(crate) user: &'a str,
}

impl Entry {
    fn matches(&self, key: &Key<'_>) -> bool {
        self.host.matches(key.host)
            && self.port.matches(key.port)
            && self.database.matches(key.database)
            && self.user.matches(key.user)
    }
}

/// Parses one line. Returns `None` for comments (`#` in the first column), blank lines and lines
/// with fewer than four unescaped `:` (libpq skips those too).
///
/// As libpq: a field is the wildcard only when it is exactly `*` (`\*` is a literal star); a `\`
/// escapes the next character; the password ends at the next unescaped `:` (anything after it is
/// ignored) and a trailing lone `\` in it is kept.
pub(crate) fn parse_line(line: &str) -> Option<Entry> {
    if line.starts_with('#') || line.is_empty() {
        return None;
    }
    let mut chars = line.chars();
    let mut next_field = || -> Option<Field> {
        let mut raw_star = true;
        let mut seen = 0usize;
        let mut value = String::new();
        loop {
            let c = chars.next()?;
            match c {
                ':' => break,
                '\\' => {
                    value.push(chars.next()?);
                    raw_star = false;
                }
                other => {
                    raw_star &= other == '*';
                    value.push(other);
                }
            }
            seen += 1;
        }
        Some(if raw_star && seen == 1 {
            Field::Any
        } else {
            Field::Literal(value)
        })
    };
    let host = next_field()?;
    let port = next_field()?;
    let database = next_field()?;
    let user = next_field()?;
    let mut password = String::new();
    while let Some(c) = chars.next() {
        match c {
            ':' => break,
            '\\' => match chars.next() {
                Some(escaped) => password.push(escaped),
                None => password.push('\\'),
            },
            other => password.push(other),
        }
    }
    Some(Entry {
        host,
        port,
        database,
        user,
        password,
    })
}

/// The password of the first line of `contents` that matches `key`.
pub(crate) fn find_password(contents: &str, key: &Key<'_>) -> Option<String> {
    contents
        .lines()
        .filter_map(parse_line)
        .find(|entry| entry.matches(key))
        .map(|entry| entry.password)
}

/// Looks `key` up in the password file at `path`. A missing file gives `None` quietly; a file
/// that is not a plain file, or that grants any access to group or others, is ignored with a
/// warning, as libpq does.
pub(crate) fn lookup(path: &Path, key: &Key<'_>) -> Option<String> {
    let metadata = std::fs::metadata(path).ok()?;
    if !metadata.is_file() {
        tracing::warn!(
            path = %path.display(),
            "password file is not a plain file; ignoring it"
        );
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if metadata.permissions().mode() & 0o077 != 0 {
            tracing::warn!(
                path = %path.display(),
                "password file has group or world access; permissions should be u=rw (0600) or less; ignoring it"
            );
            return None;
        }
    }
    let bytes = std::fs::read(path).ok()?;
    find_password(&String::from_utf8_lossy(&bytes), key)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(s: &str) -> Field {
        Field::Literal(s.to_owned())
    }

    const KEY: Key<'static> = Key {
        host: "db.example.com",
        port: "5432",
        database: "app",
        user: "alice",
    };

    #[test]
    fn parses_fields_wildcards_and_escapes() {
        let e = parse_line(r"h\:x:*:\*:u\\1:p\:w\\d:ignored").unwrap();
        assert_eq!(e.host, lit("h:x"));
        assert_eq!(e.port, Field::Any);
        assert_eq!(e.database, lit("*"));
        assert_eq!(e.user, lit(r"u\1"));
        assert_eq!(e.password, r"p:w\d");
        assert_eq!(parse_line("a:b:c:d:pw\\").unwrap().password, "pw\\");
        assert_eq!(parse_line("**:b:c:d:e").unwrap().host, lit("**"));
        assert_eq!(parse_line("::::").unwrap().host, lit(""));
    }

    #[test]
    fn skips_comments_blank_and_short_lines() {
        assert_eq!(parse_line("# a:b:c:d:e"), None);
        assert_eq!(parse_line(""), None);
        assert_eq!(parse_line("a:b:c:d"), None);
        assert_eq!(parse_line("a:b:c\\:d:e"), None);
        assert_eq!(parse_line("a:b:c:d\\"), None);
        assert!(parse_line(" # not a comment:b:c:d:e").is_some());
    }

    #[test]
    fn first_match_wins() {
        let file = "# hostname:port:database:username:password\n\
                    other:5432:app:alice:wrong-host\n\
                    db.example.com:5433:app:alice:wrong-port\n\
                    db.example.com:5432:*:bob:wrong-user\n\
                    db.example.com:*:app:alice:right\r\n\
                    *:*:*:*:fallback\n";
        assert_eq!(find_password(file, &KEY).as_deref(), Some("right"));
        let other = Key {
            user: "carol",
            ..KEY
        };
        assert_eq!(find_password(file, &other).as_deref(), Some("fallback"));
        assert_eq!(find_password("x:y:z:w:v", &KEY), None);
    }

    #[test]
    fn escaped_colon_in_host_matches() {
        let key = Key {
            host: "fe80::1",
            ..KEY
        };
        assert_eq!(
            find_password("fe80\\:\\:1:5432:app:alice:v6", &key).as_deref(),
            Some("v6")
        );
    }

    #[cfg(unix)]
    #[test]
    fn file_permissions_are_checked() {
        use std::os::unix::fs::PermissionsExt;
        let dir = crate::config::tests::TempDir::new("pgpass-perm");
        let path = dir.path().join("pgpass");
        std::fs::write(&path, "*:*:*:*:secret\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(lookup(&path, &KEY).as_deref(), Some("secret"));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        assert_eq!(lookup(&path, &KEY), None);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o604)).unwrap();
        assert_eq!(lookup(&path, &KEY), None);
        assert_eq!(
            lookup(dir.path(), &KEY),
            None,
            "a directory is not a password file"
        );
        assert_eq!(lookup(&dir.path().join("missing"), &KEY), None);
    }
}
