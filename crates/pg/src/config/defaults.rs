//! Defaults found on the machine: the OS user name and home directory, the default socket directory, `~/.postgresql` files.

use std::path::{Path, PathBuf};

use super::Host;

/// The port libpq uses when none is given.
pub(crate) const DEFAULT_PORT: u16 = 5432;

/// Socket directories tried, in order, when no host is given. The first is where Debian-family
/// PostgreSQL packages put the socket; the second is PostgreSQL's own default.
pub(crate) const DEBIAN_SOCKET_DIR: &str = "/var/run/postgresql";
pub(crate) const UPSTREAM_SOCKET_DIR: &str = "/tmp";

/// The file name of a server's socket inside its socket directory.
pub fn socket_file_name(port: u16) -> String {
    format!(".s.PGSQL.{port}")
}

/// The host used when none is given, for a given port: `/var/run/postgresql` if it exists, else
/// `/tmp` if a server socket for `port` exists there, else TCP to `localhost`. `exists` answers
/// for a path (the real one is [`Path::exists`]; tests pass their own).
pub(crate) fn default_host(port: u16, exists: &dyn Fn(&Path) -> bool) -> Host {
    if exists(Path::new(DEBIAN_SOCKET_DIR)) {
        return Host::Unix(PathBuf::from(DEBIAN_SOCKET_DIR));
    }
    if exists(&Path::new(UPSTREAM_SOCKET_DIR).join(socket_file_name(port))) {
        return Host::Unix(PathBuf::from(UPSTREAM_SOCKET_DIR));
    }
    Host::Tcp("localhost".to_owned())
}

/// Whether `dir` is one of the socket directories a connection without `host` may use; libpq
/// matches such connections against `localhost` in the password file.
pub(crate) fn is_default_socket_dir(dir: &Path) -> bool {
    dir == Path::new(DEBIAN_SOCKET_DIR) || dir == Path::new(UPSTREAM_SOCKET_DIR)
}

/// One `/etc/passwd` entry: the parts sluice-pg needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PasswdEntry {
    pub(crate) name: String,
    pub(crate) home: String,
}

/// Finds the entry for `uid` in the text of an `/etc/passwd` file
/// (`name:password:uid:gid:gecos:home:shell` lines).
pub(crate) fn passwd_entry(passwd: &str, uid: u32) -> Option<PasswdEntry> {
    passwd.lines().find_map(|line| {
        let mut fields = line.split(':');
        let name = fields.next()?;
        let entry_uid = fields.nth(1)?.trim().parse::<u32>().ok()?;
        let home = fields.nth(2)?;
        (entry_uid == uid && !name.is_empty() && !name.starts_with('#')).then(|| PasswdEntry {
            name: name.to_owned(),
            home: home.to_owned(),
        })
    })
}

/// The effective uid of this process, read without unsafe code: `/proc/self` belongs to it.
fn effective_uid() -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata("/proc/self").ok().map(|m| m.uid())
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// The operating-system facts that supply defaults: the user name (for `user`, and through it
/// `dbname`) and the home directory (for `~/.pgpass` and `~/.postgresql/*`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct OsDefaults {
    pub(crate) user: Option<String>,
    pub(crate) home: Option<PathBuf>,
}

impl OsDefaults {
    /// Looks the effective user up in `/etc/passwd`; falls back to `USER`/`LOGNAME` for the name.
    /// The home directory is `HOME` when set and non-empty (as libpq), else the passwd entry's.
    /// When the caller already knows the user name and `HOME` is set, `/etc/passwd` is not read.
    pub(crate) fn detect(env: &dyn Fn(&str) -> Option<String>, user_known: bool) -> OsDefaults {
        let home_known = env("HOME").is_some_and(|h| !h.is_empty());
        let passwd = if user_known && home_known {
            None
        } else {
            effective_uid().and_then(|uid| {
                let text = std::fs::read_to_string("/etc/passwd").ok()?;
                passwd_entry(&text, uid)
            })
        };
        OsDefaults::from_parts(passwd, env)
    }

    pub(crate) fn from_parts(
        passwd: Option<PasswdEntry>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> OsDefaults {
        let non_empty = |var: &str| env(var).filter(|v| !v.is_empty());
        let user = passwd
            .as_ref()
            .map(|p| p.name.clone())
            .or_else(|| non_empty("USER"))
            .or_else(|| non_empty("LOGNAME"));
        let home = non_empty("HOME")
            .or_else(|| passwd.map(|p| p.home).filter(|h| !h.is_empty()))
            .map(PathBuf::from);
        OsDefaults { user, home }
    }

    /// `~/.pgpass`.
    pub(crate) fn passfile(&self) -> Option<PathBuf> {
        self.home.as_ref().map(|h| h.join(".pgpass"))
    }

    /// `~/.postgresql/<name>` if that file exists.
    pub(crate) fn existing_postgresql_file(&self, name: &str) -> Option<PathBuf> {
        let path = self.home.as_ref()?.join(".postgresql").join(name);
        path.is_file().then_some(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PASSWD: &str = "root:x:0:0:root:/root:/bin/bash\n\
                          # comment:x:5:5::/c:/bin/sh\n\
                          broken line\n\
                          alice:x:1000:1000:Alice,,,:/home/alice:/bin/bash\n";

    #[test]
    fn passwd_lookup_by_uid() {
        assert_eq!(
            passwd_entry(PASSWD, 1000),
            Some(PasswdEntry {
                name: "alice".into(),
                home: "/home/alice".into()
            })
        );
        assert_eq!(passwd_entry(PASSWD, 0).map(|e| e.name), Some("root".into()));
        assert_eq!(passwd_entry(PASSWD, 5), None);
        assert_eq!(passwd_entry(PASSWD, 42), None);
    }

    #[test]
    fn user_falls_back_to_user_then_logname() {
        let env = |v: &str| match v {
            "USER" => Some(String::new()),
            "LOGNAME" => Some("lg".to_owned()),
            _ => None,
        };
        let d = OsDefaults::from_parts(None, &env);
        assert_eq!(d.user.as_deref(), Some("lg"));
        assert_eq!(d.home, None);
        let env = |v: &str| (v == "USER").then(|| "us".to_owned());
        assert_eq!(
            OsDefaults::from_parts(None, &env).user.as_deref(),
            Some("us")
        );
        let passwd = passwd_entry(PASSWD, 1000);
        let d = OsDefaults::from_parts(passwd, &env);
        assert_eq!(d.user.as_deref(), Some("alice"));
        assert_eq!(d.home, Some(PathBuf::from("/home/alice")));
    }

    #[test]
    fn home_prefers_the_home_variable() {
        let env = |v: &str| (v == "HOME").then(|| "/h".to_owned());
        let d = OsDefaults::from_parts(passwd_entry(PASSWD, 1000), &env);
        assert_eq!(d.home, Some(PathBuf::from("/h")));
        assert_eq!(d.passfile(), Some(PathBuf::from("/h/.pgpass")));
    }

    #[test]
    fn detect_finds_the_real_user() {
        // Whatever machine this runs on, the process has some user.
        let d = OsDefaults::detect(&|v| std::env::var(v).ok(), false);
        assert!(d.user.is_some_and(|u| !u.is_empty()));
    }

    #[test]
    fn default_host_order() {
        let only = |wanted: &'static str| move |p: &Path| p == Path::new(wanted);
        assert_eq!(
            default_host(5432, &only("/var/run/postgresql")),
            Host::Unix("/var/run/postgresql".into())
        );
        assert_eq!(
            default_host(5433, &only("/tmp/.s.PGSQL.5433")),
            Host::Unix("/tmp".into())
        );
        assert_eq!(
            default_host(5432, &only("/tmp/.s.PGSQL.5433")),
            Host::Tcp("localhost".into())
        );
    }
}
