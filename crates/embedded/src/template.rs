//! A per-process template data directory, so only the first temporary cluster pays for initdb.
//!
//! initdb takes most of a cluster's start time (about 0.7 s of 1 s); copying a freshly
//! initialised data directory takes a small fraction of that. The template (initdb, and the
//! test roles when asked) is built once per process and per (install, roles) choice, under a
//! lock so parallel tests wait for one initdb instead of running many at once. It lives in a
//! temporary directory that the process never removes itself: a watchdog removes it when the
//! process exits, like a temporary cluster's.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::auth;
use crate::commands::Programs;
use crate::conf;
use crate::error::{EmbeddedError, Result};
use crate::user::{ServerUser, give_to, set_mode};
use crate::watchdog::Watchdog;

struct Template {
    bin_dir: PathBuf,
    test_roles: bool,
    data_dir: PathBuf,
    // Held for the life of the process; its end (process exit) removes the template.
    _watchdog: Watchdog,
}

static TEMPLATES: Mutex<Vec<Template>> = Mutex::new(Vec::new());

/// The template data directories this process made (for tests that check their removal).
pub fn template_dirs() -> Vec<PathBuf> {
    TEMPLATES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .iter()
        .map(|t| t.data_dir.clone())
        .collect()
}

/// Fills `data_dir` (which must not exist) with a copy of the template for this install and
/// roles choice, building the template first if this process has none yet. `base` is where
/// temporary directories go.
pub fn initialise_from_template(
    programs: &Programs,
    data_dir: &Path,
    test_roles: bool,
    base: &Path,
) -> Result<()> {
    let mut templates = TEMPLATES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let bin_dir = programs.binaries.bin_dir();
    let existing = templates
        .iter()
        .find(|t| t.bin_dir == bin_dir && t.test_roles == test_roles)
        .map(|t| t.data_dir.clone());
    let source = match existing {
        Some(dir) => dir,
        None => {
            let template = build(programs, test_roles, base)?;
            let dir = template.data_dir.clone();
            templates.push(template);
            dir
        }
    };
    drop(templates);
    copy_tree(&source, data_dir, programs.user.as_ref())
}

fn build(programs: &Programs, test_roles: bool, base: &Path) -> Result<Template> {
    let root = tempfile::Builder::new()
        .prefix("sluice-pg-template-")
        .tempdir_in(base)
        .map_err(|e| EmbeddedError::io("create a temporary directory in", base, e))?;
    set_mode(root.path(), 0o700)?;
    give_to(root.path(), programs.user.as_ref())?;
    let data_dir = root.path().join("data");
    let watchdog = Watchdog::spawn(
        &programs.binaries.pg_ctl(),
        &data_dir,
        Some(root.path()),
        programs.user.as_ref(),
    )?;
    // From here the watchdog owns the removal (also if the steps below fail).
    let _root = root.keep();
    programs.initdb(&data_dir)?;
    conf::ensure_included(&data_dir.join("postgresql.conf"))?;
    // The superuser's password (and its file) are part of the template: the clusters of one
    // process share it, as they share their owner.
    let roles = crate::conf::test_roles_sql(test_roles);
    auth::set_superuser_password(programs, &data_dir, &roles)?;
    Ok(Template {
        bin_dir: programs.binaries.bin_dir().to_path_buf(),
        test_roles,
        data_dir,
        _watchdog: watchdog,
    })
}

/// Copies directory `from` to `to` (which must not exist), keeping permission bits, giving the
/// copies to `user` when given.
fn copy_tree(from: &Path, to: &Path, user: Option<&ServerUser>) -> Result<()> {
    let mode = fs::metadata(from)
        .map_err(|e| EmbeddedError::io("read", from, e))?
        .permissions()
        .mode();
    fs::create_dir(to).map_err(|e| EmbeddedError::io("create directory", to, e))?;
    set_mode(to, mode & 0o7777)?;
    give_to(to, user)?;
    let entries = fs::read_dir(from).map_err(|e| EmbeddedError::io("list", from, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| EmbeddedError::io("list", from, e))?;
        let source = entry.path();
        let target = to.join(entry.file_name());
        let kind = entry
            .file_type()
            .map_err(|e| EmbeddedError::io("read", &source, e))?;
        if kind.is_dir() {
            copy_tree(&source, &target, user)?;
        } else if kind.is_file() {
            // fs::copy keeps the permission bits.
            fs::copy(&source, &target).map_err(|e| EmbeddedError::io("copy", &source, e))?;
            give_to(&target, user)?;
        } else if kind.is_symlink() {
            let link = fs::read_link(&source).map_err(|e| EmbeddedError::io("read", &source, e))?;
            std::os::unix::fs::symlink(&link, &target)
                .map_err(|e| EmbeddedError::io("create symlink", &target, e))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_tree_keeps_structure_and_modes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let from = dir.path().join("from");
        fs::create_dir_all(from.join("sub")).expect("mkdir");
        fs::write(from.join("sub").join("file"), "data").expect("write");
        set_mode(&from.join("sub").join("file"), 0o600).expect("chmod");
        set_mode(&from, 0o700).expect("chmod");
        let to = dir.path().join("to");
        copy_tree(&from, &to, None).expect("copy");
        assert_eq!(
            fs::read_to_string(to.join("sub/file")).expect("read"),
            "data"
        );
        let mode = |p: &Path| fs::metadata(p).expect("stat").permissions().mode() & 0o777;
        assert_eq!(mode(&to.join("sub/file")), 0o600);
        assert_eq!(mode(&to), 0o700);
        assert!(
            copy_tree(&from, &to, None).is_err(),
            "the target must not exist"
        );
    }
}
