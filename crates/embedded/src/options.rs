//! `ClusterOptions`: what kind of cluster to start and how to configure it.

use std::path::{Path, PathBuf};

use crate::conf::validate_setting;
use crate::error::{EmbeddedError, Result};
use crate::user::running_as_root;

/// Where a cluster keeps its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Storage {
    /// A fresh cluster in a temporary directory, removed when the [`crate::Cluster`] is dropped
    /// (or, if the process dies, by its watchdog).
    Temporary,
    /// A cluster in this data directory, created on first use and reused afterwards.
    Persistent(PathBuf),
}

/// How to start a [`crate::Cluster`]. Build with [`ClusterOptions::temporary`] (for tests) or
/// [`ClusterOptions::persistent`] (for `sluice serve`), then adjust.
#[derive(Debug, Clone)]
pub struct ClusterOptions {
    pub(crate) storage: Storage,
    pub(crate) port: Option<u16>,
    pub(crate) tls: bool,
    pub(crate) test_roles: bool,
    pub(crate) settings: Vec<(String, String)>,
    pub(crate) socket_dir: Option<PathBuf>,
    pub(crate) stop_on_drop: bool,
    pub(crate) invalid_setting: Option<(String, String)>,
}

impl ClusterOptions {
    /// A throw-away cluster for tests (feature `test-support`): temporary directory, a free port, TLS on, the test roles
    /// and database, durability off (`fsync`, `synchronous_commit`, `full_page_writes`) and
    /// `max_connections = 200`. Stopped and removed on drop.
    #[cfg(feature = "test-support")]
    pub fn temporary() -> ClusterOptions {
        ClusterOptions {
            storage: Storage::Temporary,
            port: None,
            tls: true,
            test_roles: true,
            settings: [
                ("fsync", "off"),
                ("synchronous_commit", "off"),
                ("full_page_writes", "off"),
                ("max_connections", "200"),
            ]
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect(),
            socket_dir: None,
            stop_on_drop: true,
            invalid_setting: None,
        }
    }

    /// A lasting cluster in `data_dir`: initialised on first use, reused afterwards (or found
    /// already running). No TLS, no test roles, default durability; the unix socket lives in the
    /// data directory. The server keeps running when the [`crate::Cluster`] is dropped; stop it
    /// with [`crate::Cluster::stop`]. Without [`ClusterOptions::port`], the port used last time
    /// is reused when free, else a free one is picked.
    pub fn persistent(data_dir: impl Into<PathBuf>) -> ClusterOptions {
        ClusterOptions {
            storage: Storage::Persistent(data_dir.into()),
            port: None,
            tls: false,
            test_roles: false,
            settings: Vec::new(),
            socket_dir: None,
            stop_on_drop: false,
            invalid_setting: None,
        }
    }

    /// Listen on this TCP port on 127.0.0.1 (fails when taken). Default: a free port.
    pub fn port(mut self, port: u16) -> ClusterOptions {
        self.port = Some(port);
        self
    }

    /// Turn TLS on or off (server certificate for `localhost` signed by a private CA; feature
    /// `test-support`).
    #[cfg(feature = "test-support")]
    pub fn tls(mut self, on: bool) -> ClusterOptions {
        self.tls = on;
        self
    }

    /// Create (or not) the test roles of [`crate::TEST_ROLES`] and the `sluice_test` database
    /// when the cluster is initialised (feature `test-support`).
    #[cfg(feature = "test-support")]
    pub fn test_roles(mut self, on: bool) -> ClusterOptions {
        self.test_roles = on;
        self
    }

    /// Add a server setting (`postgresql.conf` syntax, value unquoted). Later ones win. An
    /// invalid name or value makes [`crate::Cluster::start`] fail.
    pub fn setting(mut self, name: impl Into<String>, value: impl Into<String>) -> ClusterOptions {
        let (name, value) = (name.into(), value.into());
        if validate_setting(&name, &value).is_err() && self.invalid_setting.is_none() {
            self.invalid_setting = Some((name.clone(), value.clone()));
        }
        self.settings.push((name, value));
        self
    }

    /// Put the unix socket in this directory (created if missing). Default: a private directory
    /// next to the data directory for temporary clusters, the data directory for persistent ones.
    pub fn socket_dir(mut self, dir: impl Into<PathBuf>) -> ClusterOptions {
        self.socket_dir = Some(dir.into());
        self
    }

    /// Whether dropping the [`crate::Cluster`] stops a server it started. Always true for
    /// temporary clusters; default false for persistent ones.
    pub fn stop_on_drop(mut self, on: bool) -> ClusterOptions {
        self.stop_on_drop = on;
        self
    }

    /// The storage chosen.
    pub fn storage(&self) -> &Storage {
        &self.storage
    }

    pub(crate) fn check(&self) -> Result<()> {
        if let Some((name, value)) = &self.invalid_setting {
            validate_setting(name, value)?;
        }
        Ok(())
    }
}

/// Environment variable naming the directory in which temporary clusters are made.
pub const TMPDIR_ENV: &str = "SLUICE_PG_TMPDIR";
/// Memory-backed directory preferred for temporary clusters when it has room.
const SHM_DIR: &str = "/dev/shm";
/// Free space `/dev/shm` must have to be used (a container's default of 64 MiB is too small).
const SHM_MIN_FREE_BYTES: u64 = 1 << 30;

/// Where temporary clusters go, best first: `$SLUICE_PG_TMPDIR` alone when set; else
/// `/dev/shm` when it has at least 1 GiB free (memory-backed: initdb and the copies of the
/// template are several times faster than on a busy disk); else the system temporary directory,
/// then `/tmp`.
pub(crate) fn temporary_bases() -> Vec<PathBuf> {
    if let Some(dir) = std::env::var_os(TMPDIR_ENV).filter(|d| !d.is_empty()) {
        return vec![PathBuf::from(dir)];
    }
    let mut bases = Vec::new();
    if rustix::fs::statvfs(SHM_DIR)
        .is_ok_and(|s| s.f_bavail.saturating_mul(s.f_frsize) >= SHM_MIN_FREE_BYTES)
        && rustix::fs::access(SHM_DIR, rustix::fs::Access::WRITE_OK).is_ok()
    {
        bases.push(PathBuf::from(SHM_DIR));
    }
    bases.push(std::env::temp_dir());
    bases.push(PathBuf::from("/tmp"));
    bases
}

/// The default data directory for `sluice serve`: `/var/lib/sluice/pgdata` when root, else
/// `$XDG_DATA_HOME/sluice/pgdata`, else `~/.local/share/sluice/pgdata`.
pub fn default_data_dir() -> Result<PathBuf> {
    if running_as_root() {
        return Ok(PathBuf::from("/var/lib/sluice/pgdata"));
    }
    let non_empty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(xdg) = non_empty("XDG_DATA_HOME").map(PathBuf::from)
        && xdg.is_absolute()
    {
        return Ok(xdg.join("sluice").join("pgdata"));
    }
    let home = non_empty("HOME").ok_or(EmbeddedError::NoDataDirectory)?;
    Ok(Path::new(&home).join(".local/share/sluice/pgdata"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builder_collects_settings_and_defers_errors_to_start() {
        let options = ClusterOptions::temporary()
            .port(6000)
            .tls(false)
            .setting("work_mem", "64MB");
        assert_eq!(options.port, Some(6000));
        assert!(!options.tls);
        assert_eq!(
            options.settings.last(),
            Some(&("work_mem".into(), "64MB".into()))
        );
        assert!(options.check().is_ok());
        let bad = ClusterOptions::temporary().setting("x y", "1");
        assert!(matches!(
            bad.check(),
            Err(EmbeddedError::InvalidSetting { .. })
        ));
    }

    #[test]
    fn default_data_dir_ends_in_sluice_pgdata() {
        let dir = default_data_dir().expect("HOME or root");
        assert!(dir.ends_with("sluice/pgdata"), "{}", dir.display());
    }
}
