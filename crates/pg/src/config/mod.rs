//! Connection settings: libpq-style conninfo strings and URLs, `PG*` variables, `~/.pgpass`.
//!
//! Interim minimal version (key=value only) while the full module is built on its own branch.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// A host to connect to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Host {
    /// A TCP host name or address.
    Tcp(String),
    /// A unix socket directory.
    Unix(PathBuf),
}

/// libpq's sslmode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SslMode {
    /// No TLS.
    Disable,
    /// TLS only if the server insists.
    Allow,
    /// TLS if the server supports it.
    Prefer,
    /// TLS, unverified.
    Require,
    /// TLS with a verified chain.
    VerifyCa,
    /// TLS with a verified chain and host name.
    VerifyFull,
}

/// libpq's channel_binding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelBinding {
    /// Never.
    Disable,
    /// When available.
    Prefer,
    /// Always.
    Require,
}

/// libpq's target_session_attrs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetSessionAttrs {
    /// Any server.
    Any,
    /// A server accepting writes.
    ReadWrite,
    /// A read-only server.
    ReadOnly,
    /// A primary.
    Primary,
    /// A standby.
    Standby,
    /// A standby if there is one.
    PreferStandby,
}

/// A configuration error.
#[derive(Debug)]
pub struct ConfigError(String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

/// One host/port to try.
#[derive(Clone, Debug)]
pub struct Target {
    /// The host.
    pub host: Host,
    /// The address to use instead of resolving the host.
    pub hostaddr: Option<std::net::IpAddr>,
    /// The port.
    pub port: u16,
}

/// Connection settings.
#[derive(Clone, Debug)]
pub struct Config {
    host: Host,
    port: u16,
    user: String,
    password: Option<String>,
    dbname: Option<String>,
    options: Option<String>,
    application_name: Option<String>,
    connect_timeout: Option<Duration>,
    ssl_mode: SslMode,
    ssl_root_cert: Option<PathBuf>,
    channel_binding: ChannelBinding,
    prepare_threshold: u32,
    statement_cache_capacity: usize,
    read_buffer_size: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config::new()
    }
}

impl Config {
    /// Defaults only.
    pub fn new() -> Config {
        Config {
            host: Host::Tcp("localhost".into()),
            port: 5432,
            user: std::env::var("USER").unwrap_or_else(|_| "postgres".into()),
            password: None,
            dbname: None,
            options: None,
            application_name: None,
            connect_timeout: None,
            ssl_mode: SslMode::Prefer,
            ssl_root_cert: None,
            channel_binding: ChannelBinding::Prefer,
            prepare_threshold: 5,
            statement_cache_capacity: 256,
            read_buffer_size: 256 * 1024,
        }
    }

    /// Parses `key=value` pairs (interim).
    pub fn parse(s: &str) -> Result<Config, ConfigError> {
        let mut c = Config::new();
        for pair in s.split_whitespace() {
            let (k, v) = pair.split_once('=').ok_or_else(|| ConfigError(format!("bad {pair}")))?;
            match k {
                "host" if v.starts_with('/') => c.host = Host::Unix(v.into()),
                "host" => c.host = Host::Tcp(v.into()),
                "port" => c.port = v.parse().map_err(|_| ConfigError("port".into()))?,
                "user" => c.user = v.into(),
                "password" => c.password = Some(v.into()),
                "dbname" => c.dbname = Some(v.into()),
                "options" => c.options = Some(v.into()),
                "application_name" => c.application_name = Some(v.into()),
                "connect_timeout" => {
                    c.connect_timeout = Some(Duration::from_secs(
                        v.parse().map_err(|_| ConfigError("connect_timeout".into()))?,
                    ))
                }
                "sslmode" => {
                    c.ssl_mode = match v {
                        "disable" => SslMode::Disable,
                        "allow" => SslMode::Allow,
                        "prefer" => SslMode::Prefer,
                        "require" => SslMode::Require,
                        "verify-ca" => SslMode::VerifyCa,
                        "verify-full" => SslMode::VerifyFull,
                        _ => return Err(ConfigError("sslmode".into())),
                    }
                }
                "sslrootcert" => c.ssl_root_cert = Some(v.into()),
                "channel_binding" => {
                    c.channel_binding = match v {
                        "disable" => ChannelBinding::Disable,
                        "prefer" => ChannelBinding::Prefer,
                        "require" => ChannelBinding::Require,
                        _ => return Err(ConfigError("channel_binding".into())),
                    }
                }
                _ => return Err(ConfigError(format!("invalid connection option \"{k}\""))),
            }
        }
        Ok(c)
    }

    /// Host/port pairs to try.
    pub fn targets(&self) -> Vec<Target> {
        vec![Target { host: self.host.clone(), hostaddr: None, port: self.port }]
    }
    /// User name.
    pub fn user(&self) -> &str {
        &self.user
    }
    /// Database name.
    pub fn dbname(&self) -> &str {
        self.dbname.as_deref().unwrap_or(&self.user)
    }
    /// Explicit password.
    pub fn password(&self) -> Option<&str> {
        self.password.as_deref()
    }
    /// Password for a target.
    pub fn password_for(&self, _target: &Target) -> Option<String> {
        self.password.clone()
    }
    /// Startup options.
    pub fn options(&self) -> Option<&str> {
        self.options.as_deref()
    }
    /// application_name.
    pub fn application_name(&self) -> Option<&str> {
        self.application_name.as_deref()
    }
    /// Connect timeout.
    pub fn connect_timeout(&self) -> Option<Duration> {
        self.connect_timeout
    }
    /// sslmode.
    pub fn ssl_mode(&self) -> SslMode {
        self.ssl_mode
    }
    /// Root certificate.
    pub fn ssl_root_cert(&self) -> Option<&Path> {
        self.ssl_root_cert.as_deref()
    }
    /// Client certificate.
    pub fn ssl_cert(&self) -> Option<&Path> {
        None
    }
    /// Client key.
    pub fn ssl_key(&self) -> Option<&Path> {
        None
    }
    /// channel_binding.
    pub fn channel_binding(&self) -> ChannelBinding {
        self.channel_binding
    }
    /// keepalives.
    pub fn keepalives(&self) -> bool {
        true
    }
    /// keepalives_idle.
    pub fn keepalives_idle(&self) -> Option<Duration> {
        None
    }
    /// target_session_attrs.
    pub fn target_session_attrs(&self) -> TargetSessionAttrs {
        TargetSessionAttrs::Any
    }
    /// Automatic preparation threshold.
    pub fn prepare_threshold(&self) -> u32 {
        self.prepare_threshold
    }
    /// Sets the automatic preparation threshold.
    pub fn set_prepare_threshold(&mut self, n: u32) -> &mut Self {
        self.prepare_threshold = n;
        self
    }
    /// Statement cache capacity.
    pub fn statement_cache_capacity(&self) -> usize {
        self.statement_cache_capacity
    }
    /// Sets the statement cache capacity.
    pub fn set_statement_cache_capacity(&mut self, n: usize) -> &mut Self {
        self.statement_cache_capacity = n;
        self
    }
    /// Read buffer size.
    pub fn read_buffer_size(&self) -> usize {
        self.read_buffer_size
    }
    /// Sets the read buffer size.
    pub fn set_read_buffer_size(&mut self, n: usize) -> &mut Self {
        self.read_buffer_size = n.max(64 * 1024);
        self
    }
}

impl std::str::FromStr for Config {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Config, ConfigError> {
        Config::parse(s)
    }
}
