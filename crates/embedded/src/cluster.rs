//! `Cluster`: a running private PostgreSQL server, its addresses and its lifecycle.

use std::net::TcpListener;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use crate::auth::{self, SUPERUSER, Secret};
use crate::binaries::{Binaries, find_binaries, find_binaries_for_version, parse_pg_version_file};
use crate::commands::{Programs, last_lines};
use crate::conf::{self, SLUICE_CONF, ServerSettings};
use crate::error::{EmbeddedError, Result};
use crate::options::{ClusterOptions, Storage, temporary_bases};
use crate::pidfile::{self, process_alive};
#[cfg(feature = "test-support")]
use crate::roles::Role;
use crate::template;
use crate::tls;
use crate::user::{
    ServerUser, check_reachable, create_private_dir, first_reachable, give_to, set_mode,
};
use crate::watchdog::Watchdog;

/// Longest unix socket path the kernel accepts (`sun_path` is 108 bytes with the NUL).
const MAX_SOCKET_PATH: usize = 107;
/// How many free ports to try when another process takes the one we picked.
const PORT_ATTEMPTS: usize = 8;
/// The address the server listens on.
const HOST: &str = "127.0.0.1";

/// A private PostgreSQL server listening on 127.0.0.1 and on a unix socket.
///
/// A temporary cluster (from [`ClusterOptions::temporary`]) is stopped and deleted when dropped;
/// a watchdog process does the same if this process dies first (panic, abort, `SIGKILL`). A
/// persistent one keeps running after drop unless [`ClusterOptions::stop_on_drop`] was set.
///
/// Only its owner gets in: every connection, over 127.0.0.1 or the unix socket, authenticates
/// with SCRAM. The superuser is `postgres`; its password is generated when the cluster is
/// initialised and kept in `sluice.pgpass` in the data directory (mode 0600), and the socket
/// lives in a directory only the server user can enter. When this process is root, the server
/// runs as the `postgres` system user (or `nobody`), which owns the files.
#[derive(Debug)]
pub struct Cluster {
    pub(crate) programs: Programs,
    pub(crate) data_dir: PathBuf,
    pub(crate) socket_dir: PathBuf,
    pub(crate) log_file: PathBuf,
    pub(crate) port: u16,
    pub(crate) ca_cert: Option<PathBuf>,
    pub(crate) password: Secret,
    pub(crate) test_roles: bool,
    pub(crate) tls: bool,
    pub(crate) settings: Vec<(String, String)>,
    pub(crate) temp_root: Option<TempDir>,
    pub(crate) watchdog: Option<Watchdog>,
    pub(crate) stop_on_drop: bool,
    pub(crate) released: bool,
    /// Streaming replicas started by [`Cluster::start_replicas`]; stopped before this server.
    pub(crate) replicas: Vec<Cluster>,
}

impl Cluster {
    /// Finds (or installs) the server binaries, initialises the cluster if needed and starts it;
    /// returns once it accepts connections.
    pub fn start(options: ClusterOptions) -> Result<Cluster> {
        options.check()?;
        match options.storage.clone() {
            Storage::Temporary => Self::start_temporary(options),
            Storage::Persistent(dir) => Self::start_persistent(options, &dir),
        }
    }

    fn start_temporary(options: ClusterOptions) -> Result<Cluster> {
        let binaries = find_binaries()?;
        let user = ServerUser::for_this_process()?;
        let base = first_reachable(&temporary_bases(), user.as_ref())?;
        let root = tempfile::Builder::new()
            .prefix("sluice-pg-")
            .tempdir_in(&base)
            .map_err(|e| EmbeddedError::io("create a temporary directory in", &base, e))?;
        set_mode(root.path(), 0o700)?;
        give_to(root.path(), user.as_ref())?;
        let data_dir = root.path().join("data");
        let socket_dir = match &options.socket_dir {
            Some(dir) => dir.clone(),
            None => root.path().join("socket"),
        };
        // The watchdog comes first, so even a death during initdb leaves nothing behind.
        let watchdog = Watchdog::spawn(
            &binaries.pg_ctl(),
            &data_dir,
            Some(root.path()),
            user.as_ref(),
        )?;
        let mut cluster = Cluster::new(binaries, user, data_dir, socket_dir, &options);
        cluster.temp_root = Some(root);
        cluster.watchdog = Some(watchdog);
        cluster.stop_on_drop = true;
        // From here on an error drops `cluster`, which stops and removes what was made.
        cluster.create_socket_dir()?;
        cluster.initialise(Some(&base))?;
        cluster.launch(options.port, None)?;
        Ok(cluster)
    }

    fn start_persistent(options: ClusterOptions, dir: &Path) -> Result<Cluster> {
        let data_dir =
            std::path::absolute(dir).map_err(|e| EmbeddedError::io("resolve", dir, e))?;
        let user = ServerUser::for_this_process()?;
        let version_file = data_dir.join("PG_VERSION");
        let existing =
            match std::fs::read_to_string(&version_file) {
                Ok(text) => Some(parse_pg_version_file(&text).ok_or_else(|| {
                    EmbeddedError::BadVersionFile {
                        path: version_file.clone(),
                        content: text.trim().chars().take(40).collect(),
                    }
                })?),
                Err(_) => None,
            };
        let binaries = match existing {
            Some(major) => find_binaries_for_version(major, &data_dir)?,
            None => find_binaries()?,
        };
        let socket_dir = options
            .socket_dir
            .clone()
            .unwrap_or_else(|| data_dir.clone());
        let mut cluster = Cluster::new(binaries, user, data_dir.clone(), socket_dir, &options);
        cluster.stop_on_drop = options.stop_on_drop;
        let ca = data_dir.join(tls::CA_CERT);
        cluster.ca_cert = ca.is_file().then_some(ca);

        if existing.is_some() {
            let upgrade = auth::upgrade_needed(&data_dir)?;
            let running = pidfile::read(&data_dir)?.filter(|r| process_alive(r.pid));
            if upgrade.any() && running.is_some() {
                eprintln!(
                    "sluice-embedded: stopping the PostgreSQL server of {} to upgrade its \
                     authentication (it trusted local connections)",
                    data_dir.display()
                );
                cluster.programs.pg_ctl_stop(&data_dir, "fast")?;
            } else if let Some(running) = running {
                if let Some(requested) = options.port
                    && requested != running.port
                {
                    cluster.released = true;
                    return Err(EmbeddedError::AlreadyRunningOnOtherPort {
                        data_dir,
                        running_port: running.port,
                        requested_port: requested,
                    });
                }
                cluster.port = running.port;
                if !running.socket_dir.as_os_str().is_empty() {
                    cluster.socket_dir = running.socket_dir;
                }
                cluster.password = Secret(auth::read_password(&data_dir)?.unwrap_or_default());
                cluster.arm_watchdog(None)?;
                return Ok(cluster);
            }
            cluster.upgrade_auth(upgrade)?;
            conf::ensure_included(&data_dir.join("postgresql.conf"))?;
            #[cfg(feature = "test-support")]
            if cluster.tls {
                cluster.ca_cert = Some(tls::ensure_files(&data_dir, cluster.user())?);
            }
        } else {
            if std::fs::read_dir(&data_dir).is_ok_and(|mut entries| entries.next().is_some()) {
                cluster.released = true;
                return Err(EmbeddedError::NotADataDirectory { path: data_dir });
            }
            if let Some(parent) = data_dir.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| EmbeddedError::io("create directory", parent, e))?;
            }
            check_reachable(&data_dir, cluster.user())?;
            create_private_dir(&data_dir, 0o700, cluster.user())?;
            cluster.initialise(None)?;
        }
        cluster.password = Secret(auth::read_password(&data_dir)?.ok_or(
            EmbeddedError::BadPasswordFile {
                path: auth::password_file(&data_dir),
            },
        )?);
        if auth::foreign_hba_trusts(&data_dir) {
            eprintln!(
                "sluice-embedded: warning: {} was not written by Sluice and trusts some \
                 connections (no password); anyone who can reach the server may get in",
                data_dir.join("pg_hba.conf").display()
            );
        }
        let recorded = std::fs::read_to_string(data_dir.join(SLUICE_CONF))
            .ok()
            .and_then(|text| conf::recorded_port(&text));
        cluster.arm_watchdog(None)?;
        cluster.create_socket_dir()?;
        cluster.launch(options.port, recorded)?;
        Ok(cluster)
    }

    fn new(
        binaries: Binaries,
        user: Option<ServerUser>,
        data_dir: PathBuf,
        socket_dir: PathBuf,
        options: &ClusterOptions,
    ) -> Cluster {
        Cluster {
            programs: Programs { binaries, user },
            log_file: data_dir.join("log").join("postgresql.log"),
            data_dir,
            socket_dir,
            port: 0,
            ca_cert: None,
            password: Secret::default(),
            test_roles: options.test_roles,
            tls: options.tls,
            settings: options.settings.clone(),
            temp_root: None,
            watchdog: None,
            stop_on_drop: false,
            released: false,
            replicas: Vec::new(),
        }
    }

    fn user(&self) -> Option<&ServerUser> {
        self.programs.user.as_ref()
    }

    fn arm_watchdog(&mut self, remove: Option<&Path>) -> Result<()> {
        if self.stop_on_drop && self.watchdog.is_none() {
            self.watchdog = Some(Watchdog::spawn(
                &self.programs.binaries.pg_ctl(),
                &self.data_dir,
                remove,
                self.user(),
            )?);
        }
        Ok(())
    }

    pub(crate) fn create_socket_dir(&self) -> Result<()> {
        if !self.socket_dir.exists() {
            check_reachable(&self.socket_dir, self.user())?;
            create_private_dir(&self.socket_dir, 0o700, self.user())?;
        }
        Ok(())
    }

    /// initdb (or a copy of this process's template, made in `template_base`), then our
    /// configuration, TLS files and test roles.
    fn initialise(&mut self, template_base: Option<&Path>) -> Result<()> {
        if let Some(base) = template_base {
            template::initialise_from_template(
                &self.programs,
                &self.data_dir,
                self.test_roles,
                base,
            )?;
            self.write_hba()?;
        } else {
            self.programs.initdb(&self.data_dir)?;
            conf::ensure_included(&self.data_dir.join("postgresql.conf"))?;
            self.write_hba()?;
            let roles = conf::test_roles_sql(self.test_roles);
            auth::set_superuser_password(&self.programs, &self.data_dir, &roles)?;
        }
        self.password = Secret(auth::read_password(&self.data_dir)?.ok_or(
            EmbeddedError::BadPasswordFile {
                path: auth::password_file(&self.data_dir),
            },
        )?);
        #[cfg(feature = "test-support")]
        if self.tls {
            self.ca_cert = Some(tls::ensure_files(&self.data_dir, self.user())?);
        }
        Ok(())
    }

    fn write_hba(&self) -> Result<()> {
        let hba = self.data_dir.join("pg_hba.conf");
        std::fs::write(&hba, conf::render_hba(self.test_roles, self.tls))
            .map_err(|e| EmbeddedError::io("write", &hba, e))
    }

    /// Brings a stopped data directory made by an older Sluice (trusting local connections,
    /// the superuser without a password) to today's rules, saying so on stderr.
    fn upgrade_auth(&mut self, upgrade: auth::Upgrade) -> Result<()> {
        if upgrade.hba {
            self.write_hba()?;
        }
        if upgrade.password {
            auth::set_superuser_password(&self.programs, &self.data_dir, "")?;
        }
        if upgrade.any() {
            eprintln!(
                "sluice-embedded: upgraded the authentication of {}: connections need SCRAM \
                 now{}{}",
                self.data_dir.display(),
                if upgrade.hba {
                    ", pg_hba.conf no longer trusts local connections"
                } else {
                    ""
                },
                if upgrade.password {
                    format!(
                        ", the superuser's new password is in {}",
                        auth::password_file(&self.data_dir).display()
                    )
                } else {
                    String::new()
                },
            );
        }
        Ok(())
    }

    /// Picks the port (requested, else `preferred` when free, else a free one), writes
    /// sluice.conf and starts the server, trying other ports when another process wins a race
    /// for the one picked.
    pub(crate) fn launch(&mut self, requested: Option<u16>, preferred: Option<u16>) -> Result<()> {
        let attempts = if requested.is_some() {
            1
        } else {
            PORT_ATTEMPTS
        };
        let mut last_error = None;
        for attempt in 0..attempts {
            self.port = match (requested, preferred) {
                (Some(port), _) => port,
                (None, Some(port)) if attempt == 0 && port_is_free(port) => port,
                _ => free_port()?,
            };
            match self.try_start_server() {
                Ok(()) => return Ok(()),
                Err(StartError::PortTaken(error)) => last_error = Some(error),
                Err(StartError::Other(error)) => return Err(error),
            }
        }
        let port = self.port;
        Err(last_error.unwrap_or(EmbeddedError::PortInUse {
            port,
            detail: String::new(),
        }))
    }

    fn write_settings(&self) -> Result<()> {
        let text = conf::render_settings(&ServerSettings {
            port: self.port,
            socket_dir: &self.socket_dir,
            tls: self.tls && self.ca_cert.is_some(),
            extra: &self.settings,
        })?;
        let path = self.data_dir.join(SLUICE_CONF);
        std::fs::write(&path, text).map_err(|e| EmbeddedError::io("write", &path, e))?;
        set_mode(&path, 0o600)?;
        give_to(&path, self.user())
    }

    fn check_socket_path(&self) -> Result<()> {
        let path = self.socket_dir.join(format!(".s.PGSQL.{}", self.port));
        let len = path.as_os_str().len();
        if len > MAX_SOCKET_PATH {
            return Err(EmbeddedError::SocketPathTooLong {
                path,
                len,
                max: MAX_SOCKET_PATH,
            });
        }
        Ok(())
    }

    // ----- lifecycle -----

    /// Starts the server again after [`Cluster::stop_server`], on the same port and socket.
    /// Does nothing when it is running. Fails with [`EmbeddedError::PortInUse`] when another
    /// process took the port meanwhile.
    pub fn start_server(&self) -> Result<()> {
        self.try_start_server().map_err(StartError::into_error)
    }

    fn try_start_server(&self) -> std::result::Result<(), StartError> {
        if self.server_pid().is_some() {
            return Ok(());
        }
        self.check_socket_path()?;
        self.write_settings()?;
        let log_dir = self.data_dir.join("log");
        create_private_dir(&log_dir, 0o700, self.user())?;
        let log_start = std::fs::metadata(&self.log_file).map_or(0, |m| m.len());
        let output = self.programs.pg_ctl_start(&self.data_dir, &self.log_file)?;
        if output.status.success() {
            return Ok(());
        }
        let log = std::fs::read(&self.log_file).unwrap_or_default();
        let new_log = log.get(log_start as usize..).unwrap_or_default();
        let new_log = String::from_utf8_lossy(new_log);
        let mut tail = last_lines(&new_log, 25);
        let printed = String::from_utf8_lossy(&output.stderr);
        if !printed.trim().is_empty() {
            tail.push_str("\npg_ctl: ");
            tail.push_str(printed.trim());
        }
        if new_log.contains("Address already in use") {
            return Err(StartError::PortTaken(EmbeddedError::PortInUse {
                port: self.port,
                detail: format!(" (server log: {})", last_lines(&new_log, 3)),
            }));
        }
        Err(StartError::Other(EmbeddedError::ServerStart {
            data_dir: self.data_dir.clone(),
            status: format!("pg_ctl start exited with {}", output.status),
            log: self.log_file.clone(),
            tail,
        }))
    }

    /// Stops the server (`pg_ctl stop -m fast`, falling back to `-m immediate`), keeping the
    /// data, port and socket for [`Cluster::start_server`]. Does nothing when it is not running.
    pub fn stop_server(&self) -> Result<()> {
        if self.server_pid().is_none() {
            return Ok(());
        }
        match self.programs.pg_ctl_stop(&self.data_dir, "fast") {
            Ok(()) => Ok(()),
            Err(fast) => self
                .programs
                .pg_ctl_stop(&self.data_dir, "immediate")
                .map_err(|immediate| EmbeddedError::ServerStop {
                    data_dir: self.data_dir.clone(),
                    reason: format!("{fast}; then {immediate}"),
                }),
        }
    }

    /// Stops and starts the server; same port, socket and data.
    pub fn restart(&self) -> Result<()> {
        self.stop_server()?;
        self.start_server()
    }

    /// Stops the server and, for a temporary cluster, deletes its files. Unlike dropping, this
    /// reports failures.
    pub fn stop(mut self) -> Result<()> {
        let replicas = self.stop_replicas();
        let stopped = self.shut_down();
        let removed = self.release(stopped.is_ok());
        replicas.and(stopped).and(removed)
    }

    /// Stops the server for good: a temporary cluster's data is about to be deleted, so it
    /// skips the shutdown checkpoint (`-m immediate`); a persistent one stops cleanly.
    fn shut_down(&self) -> Result<()> {
        if self.temp_root.is_none() || self.server_pid().is_none() {
            return self.stop_server();
        }
        self.programs
            .pg_ctl_stop(&self.data_dir, "immediate")
            .map_err(|e| EmbeddedError::ServerStop {
                data_dir: self.data_dir.clone(),
                reason: e.to_string(),
            })
    }

    fn release(&mut self, stopped: bool) -> Result<()> {
        self.released = true;
        if let Some(watchdog) = self.watchdog.take() {
            if stopped {
                watchdog.disarm();
            } else {
                // Let the watchdog try its immediate stop and removal before we return.
                drop(watchdog);
            }
        }
        if let Some(root) = self.temp_root.take() {
            let path = root.path().to_path_buf();
            if path.exists() {
                root.close()
                    .map_err(|e| EmbeddedError::io("remove", path, e))?;
            }
        }
        Ok(())
    }

    // ----- addresses -----

    /// The TCP port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The TCP host, `127.0.0.1`.
    pub fn host(&self) -> &'static str {
        HOST
    }

    /// The directory holding the unix socket `.s.PGSQL.<port>`.
    pub fn socket_dir(&self) -> &Path {
        &self.socket_dir
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The server log file (`<data dir>/log/postgresql.log`).
    pub fn log_file(&self) -> &Path {
        &self.log_file
    }

    /// The directory of the server binaries in use; `psql` is usually next to them.
    pub fn bin_dir(&self) -> &Path {
        self.programs.binaries.bin_dir()
    }

    /// The server binaries in use.
    pub fn binaries(&self) -> &Binaries {
        &self.programs.binaries
    }

    /// `postgres://postgres@127.0.0.1:<port>/postgres?passfile=<password file>`: the
    /// superuser's URL. The password stays in [`Cluster::password_file`], which libpq (psql,
    /// pgbench, Python drivers) and sluice-pg read through `passfile`, so the URL is safe to
    /// print and to put on a command line. [`Cluster::url_with_password`] is for clients
    /// without pgpass support.
    pub fn url(&self) -> String {
        format!(
            "postgres://{SUPERUSER}@{HOST}:{}/postgres?passfile={}",
            self.port,
            percent_encode(&self.password_file().to_string_lossy())
        )
    }

    /// `postgres://postgres:<password>@127.0.0.1:<port>/postgres`: the superuser's URL with
    /// the password in it. Keep it out of logs and command lines (`ps` shows those to every
    /// user); prefer [`Cluster::url`].
    pub fn url_with_password(&self) -> String {
        format!(
            "postgres://{SUPERUSER}:{}@{HOST}:{}/postgres",
            self.password.0, self.port
        )
    }

    /// The superuser's URL over the unix socket (the socket directory percent-encoded as the
    /// host, understood by libpq, sluice-pg and tokio-postgres), the password in its file as
    /// for [`Cluster::url`].
    pub fn socket_url(&self) -> String {
        format!(
            "postgres://{SUPERUSER}@{}:{}/postgres?passfile={}",
            percent_encode(&self.socket_dir.to_string_lossy()),
            self.port,
            percent_encode(&self.password_file().to_string_lossy())
        )
    }

    /// The superuser's password (generated at initialisation). Keep it out of logs.
    pub fn password(&self) -> &str {
        &self.password.0
    }

    /// The file holding the superuser's password, in pgpass format (`*:*:*:postgres:<password>`),
    /// mode 0600 and owned by the server user: point `PGPASSFILE` at it.
    pub fn password_file(&self) -> PathBuf {
        auth::password_file(&self.data_dir)
    }

    /// A shell command line that opens psql on this cluster as the superuser, its password read
    /// from [`Cluster::password_file`] (so the line itself holds no secret).
    pub fn psql_command(&self) -> String {
        let psql = self
            .programs
            .binaries
            .program("psql")
            .map_or_else(|| "psql".to_owned(), |p| shell_quote(&p.to_string_lossy()));
        format!(
            "PGPASSFILE={} {psql} -h {HOST} -p {} -U {SUPERUSER} postgres",
            shell_quote(&self.password_file().to_string_lossy()),
            self.port
        )
    }

    /// `postgres://<role>:<password>@127.0.0.1:<port>/<dbname>`. The TLS role also needs
    /// `sslmode=require` (or stricter, with [`Cluster::ca_cert_path`]) on the client.
    #[cfg(feature = "test-support")]
    pub fn url_for(&self, role: &Role, dbname: &str) -> String {
        format!(
            "postgres://{}:{}@{HOST}:{}/{}",
            percent_encode(role.name),
            percent_encode(role.password()),
            self.port,
            percent_encode(dbname)
        )
    }

    /// The CA certificate that signed the server certificate, when TLS is on.
    pub fn ca_cert_path(&self) -> Option<&Path> {
        self.ca_cert.as_deref()
    }

    /// Whether the test roles were requested for this cluster.
    pub fn has_test_roles(&self) -> bool {
        self.test_roles
    }

    /// The postmaster's process id while the server runs.
    pub fn server_pid(&self) -> Option<u32> {
        pidfile::read(&self.data_dir)
            .ok()
            .flatten()
            .map(|p| p.pid)
            .filter(|pid| process_alive(*pid))
    }

    /// The watchdog's process id (temporary clusters and those stopped on drop).
    pub fn watchdog_pid(&self) -> Option<u32> {
        self.watchdog.as_ref().map(Watchdog::pid)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if self.released {
            return;
        }
        if let Err(error) = self.stop_replicas() {
            eprintln!("sluice-embedded: while dropping the replicas: {error}");
        }
        let stopped = !self.stop_on_drop || self.shut_down().is_ok();
        if let Err(error) = self.release(stopped) {
            eprintln!("sluice-embedded: while dropping the cluster: {error}");
        }
    }
}

/// Why starting the server failed: the port was taken (another port may work), or something
/// else.
#[derive(Debug)]
enum StartError {
    /// Another process holds the port.
    PortTaken(EmbeddedError),
    /// Anything else.
    Other(EmbeddedError),
}

impl StartError {
    fn into_error(self) -> EmbeddedError {
        match self {
            StartError::PortTaken(e) | StartError::Other(e) => e,
        }
    }
}

impl From<EmbeddedError> for StartError {
    fn from(error: EmbeddedError) -> Self {
        StartError::Other(error)
    }
}

/// A port on 127.0.0.1 that was free a moment ago (the kernel picked it for port 0).
fn free_port() -> Result<u16> {
    let listener = TcpListener::bind((HOST, 0))
        .map_err(|e| EmbeddedError::io("bind a free port on", "127.0.0.1", e))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| EmbeddedError::io("read the address of", "127.0.0.1", e))
}

fn port_is_free(port: u16) -> bool {
    TcpListener::bind((HOST, port)).is_ok()
}

/// Quotes `text` for a POSIX shell when it holds anything but safe characters.
fn shell_quote(text: &str) -> String {
    let safe = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+:,@%".contains(&b));
    if safe {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// Percent-encodes everything but RFC 3986 unreserved characters.
fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_encoding_keeps_unreserved_characters() {
        assert_eq!(percent_encode("/tmp/a b"), "%2Ftmp%2Fa%20b");
        assert_eq!(percent_encode("tls-Secret-4"), "tls-Secret-4");
        assert_eq!(percent_encode("é"), "%C3%A9");
    }

    #[test]
    fn shell_quoting_leaves_plain_paths_alone() {
        assert_eq!(
            shell_quote("/var/lib/sluice/pgdata"),
            "/var/lib/sluice/pgdata"
        );
        assert_eq!(shell_quote("/tmp/a b"), "'/tmp/a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
