//! Privilege drop: which unprivileged user runs PostgreSQL when we are root, and file ownership.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{EmbeddedError, Result};

/// Whether this process runs with effective user id 0.
pub fn running_as_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// The unprivileged account that runs the server (PostgreSQL refuses to run as root).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerUser {
    /// Login name.
    pub name: String,
    /// User id.
    pub uid: u32,
    /// Primary group id.
    pub gid: u32,
}

impl ServerUser {
    /// The user to run the server as: `None` when this process is not root (the server then runs
    /// as ourselves); else `postgres` when /etc/passwd has it, else `nobody`.
    pub fn for_this_process() -> Result<Option<ServerUser>> {
        if !running_as_root() {
            return Ok(None);
        }
        let passwd = fs::read_to_string("/etc/passwd")
            .map_err(|e| EmbeddedError::io("read", "/etc/passwd", e))?;
        let user = find_user(&passwd, "postgres")
            .or_else(|| find_user(&passwd, "nobody"))
            .ok_or(EmbeddedError::NoServerUser)?;
        Ok(Some(user))
    }
}

/// Finds `name` in the text of an /etc/passwd file. Malformed lines are skipped.
pub fn find_user(passwd: &str, name: &str) -> Option<ServerUser> {
    passwd.lines().find_map(|line| {
        let mut fields = line.split(':');
        let login = fields.next()?;
        if login != name {
            return None;
        }
        let _password = fields.next()?;
        let uid = fields.next()?.trim().parse().ok()?;
        let gid = fields.next()?.trim().parse().ok()?;
        Some(ServerUser {
            name: login.to_owned(),
            uid,
            gid,
        })
    })
}

/// Makes `command` run as `user` (when given). Std resets the supplementary groups when it
/// changes the user as root, so the child keeps none of ours.
pub fn run_as(command: &mut Command, user: Option<&ServerUser>) {
    if let Some(user) = user {
        command.uid(user.uid).gid(user.gid);
    }
}

/// Hands `path` to `user` (when given).
pub fn give_to(path: &Path, user: Option<&ServerUser>) -> Result<()> {
    if let Some(user) = user {
        std::os::unix::fs::chown(path, Some(user.uid), Some(user.gid))
            .map_err(|e| EmbeddedError::io("change the owner of", path, e))?;
    }
    Ok(())
}

/// Sets the permission bits of `path`.
pub fn set_mode(path: &Path, mode: u32) -> Result<()> {
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
        .map_err(|e| EmbeddedError::io("set permissions of", path, e))
}

/// Creates directory `path` (not its parents) with `mode`, owned by `user` when given.
pub fn create_private_dir(path: &Path, mode: u32, user: Option<&ServerUser>) -> Result<()> {
    match fs::create_dir(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && path.is_dir() => {}
        Err(e) => return Err(EmbeddedError::io("create directory", path, e)),
    }
    set_mode(path, mode)?;
    give_to(path, user)
}

/// Checks that `user` can traverse every existing ancestor of `path`, so the server can reach
/// it. Uses owner, primary group and other bits (supplementary groups are ignored, which can
/// only make the check stricter).
pub fn check_reachable(path: &Path, user: Option<&ServerUser>) -> Result<()> {
    let Some(user) = user else {
        return Ok(());
    };
    for dir in path.ancestors().skip(1) {
        let Ok(meta) = fs::metadata(dir) else {
            continue;
        };
        let mode = meta.mode();
        let can_traverse = if meta.uid() == user.uid {
            mode & 0o100 != 0
        } else if meta.gid() == user.gid {
            mode & 0o010 != 0
        } else {
            mode & 0o001 != 0
        };
        if !can_traverse {
            return Err(EmbeddedError::UnreachableDirectory {
                path: path.to_path_buf(),
                blocked: dir.to_path_buf(),
                user: user.name.clone(),
            });
        }
    }
    Ok(())
}

/// The first of `candidates` whose ancestors `user` can traverse.
pub fn first_reachable(candidates: &[PathBuf], user: Option<&ServerUser>) -> Result<PathBuf> {
    let mut first_error = None;
    for dir in candidates {
        // Check the directory itself too: we will create entries inside it.
        match check_reachable(&dir.join("x"), user) {
            Ok(()) => return Ok(dir.clone()),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    Err(first_error.unwrap_or(EmbeddedError::NoDataDirectory))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const PASSWD: &str = "root:x:0:0:root:/root:/bin/bash\n\
        broken line\n\
        nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n\
        postgres:x:101:104:PostgreSQL administrator,,,:/var/lib/postgresql:/bin/bash\n";

    #[test]
    fn finds_users_and_skips_malformed_lines() {
        assert_eq!(
            find_user(PASSWD, "postgres"),
            Some(ServerUser {
                name: "postgres".into(),
                uid: 101,
                gid: 104
            })
        );
        assert_eq!(find_user(PASSWD, "nobody").map(|u| u.uid), Some(65534));
        assert_eq!(find_user(PASSWD, "broken line"), None);
        assert_eq!(find_user(PASSWD, "missing"), None);
        assert_eq!(
            find_user("postgres:x:notanumber:1::/:/bin/sh", "postgres"),
            None
        );
    }

    #[test]
    fn unreachable_directory_is_reported_with_the_blocking_ancestor() {
        let root = tempfile::tempdir().expect("tempdir");
        let blocked = root.path().join("blocked");
        fs::create_dir(&blocked).expect("mkdir");
        set_mode(&blocked, 0o700).expect("chmod");
        let stranger = ServerUser {
            name: "stranger".into(),
            uid: 4_000_000,
            gid: 4_000_000,
        };
        set_mode(root.path(), 0o755).expect("chmod");
        let err = check_reachable(&blocked.join("data"), Some(&stranger))
            .expect_err("a 0700 directory of another user is not traversable");
        match err {
            EmbeddedError::UnreachableDirectory { blocked: b, .. } => assert_eq!(b, blocked),
            other => panic!("unexpected error {other}"),
        }
        check_reachable(&root.path().join("data"), Some(&stranger)).expect("0755 is traversable");
        check_reachable(&blocked.join("data"), None).expect("no user switch, nothing to check");
    }

    proptest! {
        #[test]
        fn find_user_never_panics_and_only_returns_the_asked_name(
            text in "[a-z0-9:\n ,]{0,200}", name in "[a-z]{1,8}"
        ) {
            if let Some(user) = find_user(&text, &name) {
                prop_assert_eq!(user.name, name);
            }
        }

        #[test]
        fn find_user_reads_back_a_written_line(
            name in "[a-z_][a-z0-9_]{0,15}", uid in any::<u32>(), gid in any::<u32>()
        ) {
            let text = format!("other:x:1:1::/:/bin/sh\n{name}:x:{uid}:{gid}:gecos:/home:/bin/sh\n");
            let found = find_user(&text, &name);
            let expected = if name == "other" { (1, 1) } else { (uid, gid) };
            prop_assert_eq!(found.map(|u| (u.uid, u.gid)), Some(expected));
        }
    }
}
