//! Finding PostgreSQL server binaries (initdb, pg_ctl, postgres) on this machine.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

use crate::error::{EmbeddedError, Result};
use crate::install;
use crate::user::running_as_root;

/// Environment variable naming a bin directory to use instead of searching.
pub const BIN_DIR_ENV: &str = "SLUICE_PG_BIN_DIR";
/// Environment variable that, when set to anything but `0`, forbids the automatic install.
pub const NO_INSTALL_ENV: &str = "SLUICE_PG_NO_INSTALL";

const SERVER_PROGRAMS: [&str; 3] = ["initdb", "pg_ctl", "postgres"];
const VERSIONED_ROOTS: [(&str, &str); 2] = [("/usr/lib/postgresql", "bin"), ("/usr/pgsql-", "bin")];

/// One directory holding a complete set of server binaries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binaries {
    bin_dir: PathBuf,
    major_version: u32,
}

impl Binaries {
    /// The directory that holds `initdb`, `pg_ctl` and `postgres` (symlinks resolved).
    pub fn bin_dir(&self) -> &Path {
        &self.bin_dir
    }

    /// Path of `initdb`.
    pub fn initdb(&self) -> PathBuf {
        self.bin_dir.join("initdb")
    }

    /// Path of `pg_ctl`.
    pub fn pg_ctl(&self) -> PathBuf {
        self.bin_dir.join("pg_ctl")
    }

    /// Path of `postgres`.
    pub fn postgres(&self) -> PathBuf {
        self.bin_dir.join("postgres")
    }

    /// Path of another program of the same install (`psql`, `pg_dump` ...), when it exists.
    pub fn program(&self, name: &str) -> Option<PathBuf> {
        let path = self.bin_dir.join(name);
        is_executable(&path).then_some(path)
    }

    /// The major version (`15` for 15.4, `9` for 9.6), from `postgres --version`.
    pub fn major_version(&self) -> u32 {
        self.major_version
    }

    /// Inspects `dir`: `Some` when it holds all three server programs and `postgres --version`
    /// answers.
    pub fn in_dir(dir: &Path) -> Option<Binaries> {
        if !holds_server_programs(dir) {
            return None;
        }
        // A PATH entry such as /usr/local/bin may hold symlinks into the real install; use the
        // real directory so its other programs (psql) are found next to them.
        let bin_dir = std::fs::canonicalize(dir.join("postgres"))
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf))
            .filter(|real| holds_server_programs(real))
            .unwrap_or_else(|| dir.to_path_buf());
        let output = Command::new(bin_dir.join("postgres"))
            .arg("--version")
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()?;
        let major_version = parse_version_output(&String::from_utf8_lossy(&output.stdout))?;
        Some(Binaries {
            bin_dir,
            major_version,
        })
    }
}

/// Finds server binaries, installing Debian's `postgresql` package when none is found and this
/// process is root (at most once per process).
///
/// Search order: `$SLUICE_PG_BIN_DIR` alone when set; else each `PATH` entry in order; then
/// `/usr/lib/postgresql/*/bin` and `/usr/pgsql-*/bin`, newest version first; then
/// `/usr/local/pgsql/bin`. The result is cached for the process.
pub fn find_binaries() -> Result<Binaries> {
    find_binaries_where(|_| true, None)
}

/// Like [`find_binaries`], but only accepts binaries of major version `major` (for an existing
/// data directory). No install is attempted for a specific version.
pub fn find_binaries_for_version(major: u32, data_dir: &Path) -> Result<Binaries> {
    find_binaries_where(|b| b.major_version == major, Some((major, data_dir)))
}

fn find_binaries_where(
    accept: impl Fn(&Binaries) -> bool,
    version: Option<(u32, &Path)>,
) -> Result<Binaries> {
    static FOUND: OnceLock<Vec<Binaries>> = OnceLock::new();
    static INSTALL_TRIED: Mutex<bool> = Mutex::new(false);

    if let Some(dir) = std::env::var_os(BIN_DIR_ENV).filter(|d| !d.is_empty()) {
        let dir = PathBuf::from(dir);
        for program in SERVER_PROGRAMS {
            if !is_executable(&dir.join(program)) {
                return Err(EmbeddedError::BadBinDir {
                    dir,
                    missing: program,
                });
            }
        }
        let found = Binaries::in_dir(&dir).ok_or(EmbeddedError::BadBinDir {
            dir: dir.clone(),
            missing: "postgres (it did not answer --version)",
        })?;
        return check_version(found, &accept, version);
    }

    if let Some(found) = FOUND.get() {
        return pick(found, &accept, version);
    }
    let mut install_tried = INSTALL_TRIED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(found) = FOUND.get() {
        return pick(found, &accept, version);
    }
    let candidates = search_all();
    if !candidates.is_empty() {
        return pick(FOUND.get_or_init(|| candidates), &accept, version);
    }
    let why_not = if *install_tried {
        "; an automatic install was already tried".to_owned()
    } else if !running_as_root() {
        "; not installing automatically because this process is not root".to_owned()
    } else if std::env::var_os(NO_INSTALL_ENV).is_some_and(|v| v != "0") {
        format!("; not installing automatically because {NO_INSTALL_ENV} is set")
    } else {
        *install_tried = true;
        install::install_postgresql()?;
        let candidates = search_all();
        if !candidates.is_empty() {
            return pick(FOUND.get_or_init(|| candidates), &accept, version);
        }
        "; the `postgresql` package was installed but its binaries were still not found".to_owned()
    };
    Err(EmbeddedError::BinariesNotFound {
        searched: "/usr/lib/postgresql/*/bin, /usr/pgsql-*/bin, /usr/local/pgsql/bin".to_owned(),
        why_not_installed: why_not,
    })
}

fn pick(
    found: &[Binaries],
    accept: &impl Fn(&Binaries) -> bool,
    version: Option<(u32, &Path)>,
) -> Result<Binaries> {
    match found.iter().find(|b| accept(b)) {
        Some(b) => Ok(b.clone()),
        None => match (version, found.first()) {
            (Some((data_version, data_dir)), Some(first)) => Err(EmbeddedError::VersionMismatch {
                data_dir: data_dir.to_path_buf(),
                data_version,
                found_version: first.major_version,
                found_bin_dir: first.bin_dir.clone(),
            }),
            _ => Err(EmbeddedError::BinariesNotFound {
                searched: "/usr/lib/postgresql/*/bin".to_owned(),
                why_not_installed: String::new(),
            }),
        },
    }
}

fn check_version(
    found: Binaries,
    accept: &impl Fn(&Binaries) -> bool,
    version: Option<(u32, &Path)>,
) -> Result<Binaries> {
    pick(std::slice::from_ref(&found), accept, version)
}

/// Every complete install found, in preference order, without duplicates.
fn search_all() -> Vec<Binaries> {
    let path_dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p: OsString| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    let mut dirs = path_dirs;
    for (prefix, bin) in VERSIONED_ROOTS {
        dirs.extend(versioned_dirs(Path::new(prefix), bin));
    }
    dirs.push(PathBuf::from("/usr/local/pgsql/bin"));

    let mut found: Vec<Binaries> = Vec::new();
    for dir in dirs {
        if let Some(b) = Binaries::in_dir(&dir)
            && !found.iter().any(|f| f.bin_dir == b.bin_dir)
        {
            found.push(b);
        }
    }
    found
}

/// `<root>/<version>/<bin>` for `/usr/lib/postgresql`, or `<prefix><version>/<bin>` for a
/// prefix such as `/usr/pgsql-`, sorted newest first.
fn versioned_dirs(prefix: &Path, bin: &str) -> Vec<PathBuf> {
    let (parent, name_prefix) = if prefix.is_dir() {
        (prefix.to_path_buf(), String::new())
    } else {
        let Some(parent) = prefix.parent() else {
            return Vec::new();
        };
        let name = prefix
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        (parent.to_path_buf(), name)
    };
    let Ok(entries) = std::fs::read_dir(&parent) else {
        return Vec::new();
    };
    let mut versions: Vec<(Vec<u32>, PathBuf)> = entries
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let name = entry.file_name().into_string().ok()?;
            let version = parse_dotted_version(name.strip_prefix(&name_prefix)?)?;
            Some((version, entry.path().join(bin)))
        })
        .collect();
    versions.sort_by(|a, b| b.0.cmp(&a.0));
    versions.into_iter().map(|(_, dir)| dir).collect()
}

fn holds_server_programs(dir: &Path) -> bool {
    SERVER_PROGRAMS
        .iter()
        .all(|program| is_executable(&dir.join(program)))
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `"15"` → `[15]`, `"9.6"` → `[9, 6]`; `None` for anything else.
pub fn parse_dotted_version(text: &str) -> Option<Vec<u32>> {
    if text.is_empty() {
        return None;
    }
    text.split('.').map(|part| part.parse().ok()).collect()
}

/// The major version from `postgres --version` output such as
/// `postgres (PostgreSQL) 15.4 (Debian 15.4-1)` or `postgres (PostgreSQL) 17beta1`.
/// Before version 10 the major version had two parts (9.6); they are reported as the first.
pub fn parse_version_output(text: &str) -> Option<u32> {
    let rest = text.split("(PostgreSQL)").nth(1)?.trim_start();
    let digits: &str = &rest[..rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len())];
    digits.parse().ok()
}

/// The major version recorded in a data directory's `PG_VERSION` file text (`"15\n"`, `"9.6\n"`).
pub fn parse_pg_version_file(text: &str) -> Option<u32> {
    parse_dotted_version(text.trim())?.first().copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_version_outputs() {
        assert_eq!(
            parse_version_output("postgres (PostgreSQL) 15.20 (Debian 15.20-0+deb12u1)\n"),
            Some(15)
        );
        assert_eq!(
            parse_version_output("postgres (PostgreSQL) 17beta1"),
            Some(17)
        );
        assert_eq!(
            parse_version_output("postgres (PostgreSQL) 9.6.24"),
            Some(9)
        );
        assert_eq!(parse_version_output("something else"), None);
        assert_eq!(parse_version_output("postgres (PostgreSQL) "), None);
    }

    #[test]
    fn parses_pg_version_files() {
        assert_eq!(parse_pg_version_file("15\n"), Some(15));
        assert_eq!(parse_pg_version_file("9.6\n"), Some(9));
        assert_eq!(parse_pg_version_file("x"), None);
        assert_eq!(parse_pg_version_file(""), None);
    }

    #[test]
    fn versioned_dirs_sort_numerically_newest_first() {
        let root = tempfile::tempdir().expect("tempdir");
        for v in ["9.6", "10", "15", "notaversion"] {
            std::fs::create_dir(root.path().join(v)).expect("mkdir");
        }
        let dirs = versioned_dirs(root.path(), "bin");
        let names: Vec<_> = dirs
            .iter()
            .map(|d| {
                d.parent()
                    .and_then(Path::file_name)
                    .map(|n| n.to_string_lossy())
            })
            .collect();
        assert_eq!(
            names,
            vec![Some("15".into()), Some("10".into()), Some("9.6".into())]
        );
    }

    #[test]
    fn finds_the_installed_binaries_here() {
        // The machines this crate is developed and tested on have PostgreSQL installed (or get
        // it installed by this call when root).
        let found = find_binaries().expect("binaries");
        assert!(found.initdb().is_file() && found.pg_ctl().is_file());
        assert!(found.major_version() >= 10);
        let real = std::fs::canonicalize(found.postgres()).expect("canonicalize");
        assert_eq!(
            real.parent(),
            Some(found.bin_dir()),
            "symlinks are resolved"
        );
        let again = find_binaries_for_version(found.major_version(), Path::new("/x"))
            .expect("same version");
        assert_eq!(again, found);
        let err = find_binaries_for_version(3, Path::new("/x")).expect_err("no PostgreSQL 3");
        assert!(
            matches!(
                err,
                EmbeddedError::VersionMismatch {
                    data_version: 3,
                    ..
                }
            ),
            "{err}"
        );
    }

    proptest! {
        #[test]
        fn version_parsers_never_panic(text in "\\PC{0,64}") {
            let _ = parse_version_output(&text);
            let _ = parse_pg_version_file(&text);
        }

        #[test]
        fn version_output_round_trips(major in 1u32..100_000, minor in 0u32..100) {
            let text = format!("postgres (PostgreSQL) {major}.{minor} (Debian)");
            prop_assert_eq!(parse_version_output(&text), Some(major));
            prop_assert_eq!(parse_pg_version_file(&format!("{major}\n")), Some(major));
        }
    }
}
