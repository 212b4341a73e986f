//! Connection settings: libpq-style conninfo strings and URLs, `PG*` variables, `~/.pgpass`.
//!
//! [`Config::parse`] accepts what `psql` accepts — `host=db port=5433 user=app` or
//! `postgresql://app@db:5433/mydb?sslmode=require` — fills the gaps from the `PG*` environment
//! variables and then from libpq's defaults, and refuses anything it would not act on: unknown
//! keywords, invalid values, and libpq features sluice-pg lacks are errors naming the keyword and
//! where it was, never silently ignored.
//!
//! Precedence, as in libpq: a value in the string wins over the environment variable, which wins
//! over the default. A keyword given with an empty value (`host=''`) counts as given, so its
//! variable is not read, and then means "the default".

mod conninfo;
mod defaults;
mod error;
mod keywords;
mod modes;
mod pgpass;
mod render;
mod resolve;
mod setters;
mod url;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_files;

use std::fmt;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

pub use defaults::socket_file_name;
pub use error::{ConfigError, ErrorKind};
pub use modes::{ChannelBinding, LoadBalanceHosts, SslMode, TargetSessionAttrs};

use defaults::{DEFAULT_PORT, OsDefaults};
use keywords::RawSettings;

/// Default for [`Config::prepare_threshold`].
pub const DEFAULT_PREPARE_THRESHOLD: u32 = 5;
/// Default for [`Config::statement_cache_capacity`].
pub const DEFAULT_STATEMENT_CACHE_CAPACITY: usize = 256;
/// Default for [`Config::read_buffer_size`].
pub const DEFAULT_READ_BUFFER_SIZE: usize = 256 * 1024;
/// Smallest accepted [`Config::read_buffer_size`]; smaller requests are raised to it.
pub const MIN_READ_BUFFER_SIZE: usize = 64 * 1024;

/// Where a server is reached: a TCP host name (or address) or a Unix-socket directory.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Host {
    /// A host name or a numeric address, connected to over TCP.
    Tcp(String),
    /// The directory holding the server's socket file `.s.PGSQL.<port>`. A path starting with
    /// `@` names a directory in Linux's abstract socket namespace (the `@` stands for the
    /// leading NUL byte of the socket address).
    Unix(PathBuf),
}

impl Host {
    /// Classifies a `host` value as libpq does: a leading `/` or `@` means a socket directory.
    pub fn from_keyword_value(host: &str) -> Host {
        if host.starts_with('/') || host.starts_with('@') {
            Host::Unix(PathBuf::from(host))
        } else {
            Host::Tcp(host.to_owned())
        }
    }

    /// For a Unix-socket host, the socket file for `port`: `<dir>/.s.PGSQL.<port>`.
    pub fn socket_path(&self, port: u16) -> Option<PathBuf> {
        match self {
            Host::Unix(dir) => Some(dir.join(socket_file_name(port))),
            Host::Tcp(_) => None,
        }
    }

    /// Whether this is a socket in Linux's abstract namespace (a directory written `@name`).
    pub fn is_abstract_socket(&self) -> bool {
        matches!(self, Host::Unix(dir) if dir.as_os_str().as_encoded_bytes().first() == Some(&b'@'))
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Tcp(name) => f.write_str(name),
            Host::Unix(dir) => write!(f, "{}", dir.display()),
        }
    }
}

/// One server to try, in connection order.
///
/// When `hostaddr` is set, connect over TCP to that address and port, whatever `host` is: `host`
/// then only names the server (for TLS `verify-full` checks and the password file), as in libpq.
/// A target given only by `hostaddr` has `host` = `Host::Tcp(<the address>)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Target {
    /// The server's name or socket directory.
    pub host: Host,
    /// A numeric address to connect to instead of resolving `host`.
    pub hostaddr: Option<IpAddr>,
    /// The TCP port, or the number in the socket file name.
    pub port: u16,
}

impl Target {
    /// The socket file to connect to, for a Unix-socket target without `hostaddr`.
    pub fn socket_path(&self) -> Option<PathBuf> {
        match self.hostaddr {
            Some(_) => None,
            None => self.host.socket_path(self.port),
        }
    }
}

/// One entry of the host list as given: `None` parts mean "the default".
#[derive(Debug, Clone, PartialEq, Eq)]
struct HostSpec {
    host: Option<String>,
    hostaddr: Option<IpAddr>,
    port: u16,
}

impl HostSpec {
    const DEFAULT: HostSpec = HostSpec {
        host: None,
        hostaddr: None,
        port: DEFAULT_PORT,
    };
}

/// Everything needed to open a connection: servers to try, credentials, TLS and timeouts, and
/// sluice-pg's own tuning knobs.
///
/// Build one with [`Config::parse`] (a conninfo string or URI, plus the environment), with
/// [`Config::from_env`], or with [`Config::new`] and the setters in code.
///
/// `Debug` shows everything except the passwords, which appear as `<redacted>`.
#[derive(Clone, PartialEq, Eq)]
pub struct Config {
    hosts: Vec<HostSpec>,
    user: String,
    dbname: Option<String>,
    password: Option<String>,
    passfile: Option<PathBuf>,
    options: Option<String>,
    application_name: Option<String>,
    fallback_application_name: Option<String>,
    connect_timeout: Option<Duration>,
    ssl_mode: SslMode,
    ssl_root_cert: Option<PathBuf>,
    ssl_cert: Option<PathBuf>,
    ssl_key: Option<PathBuf>,
    ssl_password: Option<String>,
    /// `~/.postgresql/root.crt`, `postgresql.crt`, `postgresql.key`, where they exist.
    ssl_default_root_cert: Option<PathBuf>,
    ssl_default_cert: Option<PathBuf>,
    ssl_default_key: Option<PathBuf>,
    channel_binding: ChannelBinding,
    keepalives: bool,
    keepalives_idle: Option<Duration>,
    keepalives_interval: Option<Duration>,
    keepalives_count: Option<u32>,
    tcp_user_timeout: Option<Duration>,
    target_session_attrs: TargetSessionAttrs,
    load_balance_hosts: LoadBalanceHosts,
    prepare_threshold: u32,
    statement_cache_capacity: usize,
    read_buffer_size: usize,
}

impl Config {
    /// libpq's defaults with no `PG*` variable applied: the default socket directory or
    /// `localhost`, port 5432, the operating-system user (found in `/etc/passwd`, else `USER` or
    /// `LOGNAME`; empty if none), `~/.pgpass`, `sslmode=prefer`.
    pub fn new() -> Config {
        let process_env = |var: &str| match var {
            "HOME" | "USER" | "LOGNAME" => std::env::var(var).ok(),
            _ => None,
        };
        Config::with_defaults(&OsDefaults::detect(&process_env, false))
    }

    fn with_defaults(os: &OsDefaults) -> Config {
        Config {
            hosts: vec![HostSpec::DEFAULT],
            user: os.user.clone().unwrap_or_default(),
            dbname: None,
            password: None,
            passfile: os.passfile(),
            options: None,
            application_name: None,
            fallback_application_name: None,
            connect_timeout: None,
            ssl_mode: SslMode::Prefer,
            ssl_root_cert: None,
            ssl_cert: None,
            ssl_key: None,
            ssl_password: None,
            ssl_default_root_cert: os.existing_postgresql_file("root.crt"),
            ssl_default_cert: os.existing_postgresql_file("postgresql.crt"),
            ssl_default_key: os.existing_postgresql_file("postgresql.key"),
            channel_binding: ChannelBinding::Prefer,
            keepalives: true,
            keepalives_idle: None,
            keepalives_interval: None,
            keepalives_count: None,
            tcp_user_timeout: None,
            target_session_attrs: TargetSessionAttrs::Any,
            load_balance_hosts: LoadBalanceHosts::Disable,
            prepare_threshold: DEFAULT_PREPARE_THRESHOLD,
            statement_cache_capacity: DEFAULT_STATEMENT_CACHE_CAPACITY,
            read_buffer_size: DEFAULT_READ_BUFFER_SIZE,
        }
    }

    /// Parses a conninfo string (`host=db user=app`) or a URI (`postgresql://app@db/mydb`), then
    /// applies the process's `PG*` environment variables and libpq's defaults.
    pub fn parse(s: &str) -> Result<Config, ConfigError> {
        Config::parse_with_env(s, &|var| std::env::var(var).ok())
    }

    /// As [`Config::parse`], reading environment variables through `env` instead of the process
    /// environment (tests pass a map; `&|_| None` means an empty environment). `HOME`, `USER`
    /// and `LOGNAME` are read through it too.
    pub fn parse_with_env(
        s: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        let mut raw = RawSettings::default();
        if url::is_uri(s) {
            url::parse(s, &mut raw)?;
        } else {
            conninfo::parse(s, &mut raw)?;
        }
        raw.fill_from_env(env);
        let user_known = raw
            .get(keywords::Keyword::User)
            .is_some_and(|v| !v.text.is_empty());
        resolve::resolve(&raw, &OsDefaults::detect(env, user_known))
    }

    /// The settings from the environment and defaults alone: `Config::parse("")`.
    pub fn from_env() -> Result<Config, ConfigError> {
        Config::parse("")
    }

    /// The servers to try, in connection order: as listed, or shuffled anew on each call when
    /// `load_balance_hosts=random`. A host left empty becomes the default: the
    /// `/var/run/postgresql` socket directory if it exists, else `/tmp` if a socket for the port
    /// is there, else `localhost`.
    pub fn targets(&self) -> Vec<Target> {
        let mut targets = self.targets_with(&|path| path.exists());
        if self.load_balance_hosts == LoadBalanceHosts::Random {
            shuffle(&mut targets);
        }
        targets
    }

    /// The targets in listed order, with `exists` answering the default-socket probes.
    fn targets_with(&self, exists: &dyn Fn(&Path) -> bool) -> Vec<Target> {
        self.hosts
            .iter()
            .map(|spec| {
                let host = match (&spec.host, spec.hostaddr) {
                    (Some(host), _) => Host::from_keyword_value(host),
                    (None, Some(addr)) => Host::Tcp(addr.to_string()),
                    (None, None) => defaults::default_host(spec.port, exists),
                };
                Target {
                    host,
                    hostaddr: spec.hostaddr,
                    port: spec.port,
                }
            })
            .collect()
    }

    /// The user name to log in as.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// The database to connect to; defaults to the user name.
    pub fn dbname(&self) -> &str {
        self.dbname.as_deref().unwrap_or(&self.user)
    }

    /// The password given in the string, `PGPASSWORD` or a setter (an empty one counts as none).
    pub fn password(&self) -> Option<&str> {
        self.password.as_deref()
    }

    /// The password to use for `target`: the given one, else the first matching line of the
    /// password file.
    pub fn password_for(&self, target: &Target) -> Option<String> {
        match &self.password {
            Some(password) => Some(password.clone()),
            None => self.password_from_file(target),
        }
    }

    /// The password-file entry for `target` alone, ignoring any given password. A connection
    /// whose password came from here can say so when authentication fails, as libpq does.
    ///
    /// The host matched is the target's host name (or `hostaddr` when no name was given); a
    /// Unix-socket connection to a default socket directory (`/var/run/postgresql`, `/tmp`)
    /// matches `localhost`, another socket directory matches its path.
    pub fn password_from_file(&self, target: &Target) -> Option<String> {
        let path = self.passfile.as_deref()?;
        let host = match &target.host {
            Host::Tcp(name) => name.clone(),
            Host::Unix(dir) if defaults::is_default_socket_dir(dir) => "localhost".to_owned(),
            Host::Unix(dir) => dir.to_string_lossy().into_owned(),
        };
        let port = target.port.to_string();
        let key = pgpass::Key {
            host: &host,
            port: &port,
            database: self.dbname(),
            user: &self.user,
        };
        pgpass::lookup(path, &key)
    }

    /// The password file consulted by [`Config::password_for`]: `passfile`, `PGPASSFILE`, else
    /// `~/.pgpass`.
    pub fn passfile(&self) -> Option<&Path> {
        self.passfile.as_deref()
    }

    /// Command-line options sent to the server at startup (`options`, `PGOPTIONS`).
    pub fn options(&self) -> Option<&str> {
        self.options.as_deref()
    }

    /// The `application_name` to report: the given one, else `fallback_application_name`.
    pub fn application_name(&self) -> Option<&str> {
        self.application_name
            .as_deref()
            .or(self.fallback_application_name.as_deref())
    }

    /// The fallback application name alone.
    pub fn fallback_application_name(&self) -> Option<&str> {
        self.fallback_application_name.as_deref()
    }

    /// How long to wait for each host; `None` waits indefinitely. Whole seconds, at least two
    /// (libpq turns `connect_timeout=1` into 2 s and `0` or less into no timeout).
    pub fn connect_timeout(&self) -> Option<Duration> {
        self.connect_timeout
    }

    /// The TLS mode.
    pub fn ssl_mode(&self) -> SslMode {
        self.ssl_mode
    }

    /// The root certificates to verify the server with: `sslrootcert`, else
    /// `~/.postgresql/root.crt` when it exists and the mode is `verify-ca` or `verify-full`.
    /// The special value `system` means the platform's trust store; see
    /// [`Config::ssl_uses_system_roots`].
    pub fn ssl_root_cert(&self) -> Option<&Path> {
        self.ssl_root_cert.as_deref().or_else(|| {
            self.ssl_mode
                .verifies_certificate()
                .then_some(self.ssl_default_root_cert.as_deref())
                .flatten()
        })
    }

    /// Whether `sslrootcert=system`: verify against the platform's trusted roots (libpq then
    /// requires `sslmode=verify-full`, and defaults to it).
    pub fn ssl_uses_system_roots(&self) -> bool {
        self.ssl_root_cert.as_deref() == Some(Path::new("system"))
    }

    /// The client certificate: `sslcert`, else `~/.postgresql/postgresql.crt` when it exists.
    pub fn ssl_cert(&self) -> Option<&Path> {
        self.ssl_cert
            .as_deref()
            .or(self.ssl_default_cert.as_deref())
    }

    /// The client key: `sslkey`, else `~/.postgresql/postgresql.key` when it exists.
    pub fn ssl_key(&self) -> Option<&Path> {
        self.ssl_key.as_deref().or(self.ssl_default_key.as_deref())
    }

    /// The password protecting the client key (`sslpassword`).
    pub fn ssl_password(&self) -> Option<&str> {
        self.ssl_password.as_deref()
    }

    /// The SCRAM channel-binding policy.
    pub fn channel_binding(&self) -> ChannelBinding {
        self.channel_binding
    }

    /// Whether TCP keepalives are enabled (default true).
    pub fn keepalives(&self) -> bool {
        self.keepalives
    }

    /// Idle time before the first keepalive probe; `None` keeps the system default.
    pub fn keepalives_idle(&self) -> Option<Duration> {
        self.keepalives_idle
    }

    /// Time between keepalive probes; `None` keeps the system default.
    pub fn keepalives_interval(&self) -> Option<Duration> {
        self.keepalives_interval
    }

    /// Unanswered probes before the connection is considered dead; `None` keeps the default.
    pub fn keepalives_count(&self) -> Option<u32> {
        self.keepalives_count
    }

    /// `TCP_USER_TIMEOUT`: how long sent data may stay unacknowledged; `None` keeps the default.
    pub fn tcp_user_timeout(&self) -> Option<Duration> {
        self.tcp_user_timeout
    }

    /// Which kind of server the connection must reach.
    pub fn target_session_attrs(&self) -> TargetSessionAttrs {
        self.target_session_attrs
    }

    /// Whether [`Config::targets`] shuffles the hosts.
    pub fn load_balance_hosts(&self) -> LoadBalanceHosts {
        self.load_balance_hosts
    }

    /// Executions of the same SQL text after which it is prepared automatically; 0 disables
    /// automatic preparation. Not a libpq keyword: set in code only.
    pub fn prepare_threshold(&self) -> u32 {
        self.prepare_threshold
    }

    /// Prepared statements kept per connection. Not a libpq keyword: set in code only.
    pub fn statement_cache_capacity(&self) -> usize {
        self.statement_cache_capacity
    }

    /// Size of the connection's read buffer in bytes (at least [`MIN_READ_BUFFER_SIZE`]).
    /// Not a libpq keyword: set in code only.
    pub fn read_buffer_size(&self) -> usize {
        self.read_buffer_size
    }
}

impl Default for Config {
    fn default() -> Config {
        Config::new()
    }
}

impl FromStr for Config {
    type Err = ConfigError;

    fn from_str(s: &str) -> Result<Config, ConfigError> {
        Config::parse(s)
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let redacted = |secret: &Option<String>| secret.as_ref().map(|_| "<redacted>");
        f.debug_struct("Config")
            .field("hosts", &self.hosts)
            .field("user", &self.user)
            .field("dbname", &self.dbname)
            .field("password", &redacted(&self.password))
            .field("passfile", &self.passfile)
            .field("options", &self.options)
            .field("application_name", &self.application_name)
            .field("fallback_application_name", &self.fallback_application_name)
            .field("connect_timeout", &self.connect_timeout)
            .field("ssl_mode", &self.ssl_mode)
            .field("ssl_root_cert", &self.ssl_root_cert())
            .field("ssl_cert", &self.ssl_cert())
            .field("ssl_key", &self.ssl_key())
            .field("ssl_password", &redacted(&self.ssl_password))
            .field("channel_binding", &self.channel_binding)
            .field("keepalives", &self.keepalives)
            .field("keepalives_idle", &self.keepalives_idle)
            .field("keepalives_interval", &self.keepalives_interval)
            .field("keepalives_count", &self.keepalives_count)
            .field("tcp_user_timeout", &self.tcp_user_timeout)
            .field("target_session_attrs", &self.target_session_attrs)
            .field("load_balance_hosts", &self.load_balance_hosts)
            .field("prepare_threshold", &self.prepare_threshold)
            .field("statement_cache_capacity", &self.statement_cache_capacity)
            .field("read_buffer_size", &self.read_buffer_size)
            .finish()
    }
}

/// Shuffles `items` (Fisher–Yates) with a seed from the standard library's per-instance random
/// hasher keys; good enough to spread connections, no dependency needed.
fn shuffle<T>(items: &mut [T]) {
    use std::hash::{BuildHasher, Hasher};
    let mut state = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish()
        | 1;
    for i in (1..items.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let j = (state % (i as u64 + 1)) as usize;
        items.swap(i, j);
    }
}
