//! Builder-style setters for code that configures a connection directly; values follow libpq's rules.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use super::defaults::DEFAULT_PORT;
use super::{
    ChannelBinding, Config, HostSpec, LoadBalanceHosts, MIN_READ_BUFFER_SIZE, SslMode,
    TargetSessionAttrs,
};

/// An empty string means "not set", as in libpq.
fn non_empty(value: &str) -> Option<String> {
    (!value.is_empty()).then(|| value.to_owned())
}

fn non_empty_path(path: PathBuf) -> Option<PathBuf> {
    (!path.as_os_str().is_empty()).then_some(path)
}

/// Rounds up to whole units of `unit` (libpq's timeouts are whole seconds or milliseconds);
/// zero means "not set".
fn whole(duration: Option<Duration>, unit: Duration) -> Option<Duration> {
    let duration = duration.filter(|d| !d.is_zero())?;
    let units = duration.as_nanos().div_ceil(unit.as_nanos());
    // libpq reads these settings as a C int.
    let units = u32::try_from(units.min(i32::MAX as u128)).unwrap_or(i32::MAX as u32);
    Some(unit.saturating_mul(units))
}

impl Config {
    /// Adds a server to try (a name, a numeric address, or a socket directory starting with `/`
    /// or `@`). The first call replaces the default host; later calls append, so hosts are
    /// tried in the order added. As with the `host` keyword, commas separate several hosts, and
    /// an empty entry means the default host. A new host gets the port of the last host.
    pub fn host(&mut self, host: &str) -> &mut Config {
        let only_default = self.hosts.len() == 1 && self.hosts.first() == Some(&HostSpec::DEFAULT);
        let port = self.hosts.last().map_or(DEFAULT_PORT, |h| h.port);
        if only_default {
            self.hosts.clear();
        }
        for name in host.split(',') {
            self.hosts.push(HostSpec {
                host: non_empty(name),
                hostaddr: None,
                port,
            });
        }
        self
    }

    /// Sets the numeric address of the last host added (libpq's `hostaddr`): connect there
    /// without a name lookup, and keep the host name for TLS checks and the password file.
    pub fn hostaddr(&mut self, addr: IpAddr) -> &mut Config {
        if let Some(last) = self.hosts.last_mut() {
            last.hostaddr = Some(addr);
        }
        self
    }

    /// Sets the port of every host, including hosts added later.
    pub fn port(&mut self, port: u16) -> &mut Config {
        for spec in &mut self.hosts {
            spec.port = port;
        }
        self
    }

    /// Sets the user name. (Named `set_*` because `user()` is the getter.)
    pub fn set_user(&mut self, user: &str) -> &mut Config {
        self.user = user.to_owned();
        self
    }

    /// Sets the password; an empty one means none (then the password file is consulted).
    pub fn set_password(&mut self, password: &str) -> &mut Config {
        self.password = non_empty(password);
        self
    }

    /// Sets the database; an empty name means the default (the user name).
    pub fn set_dbname(&mut self, dbname: &str) -> &mut Config {
        self.dbname = non_empty(dbname);
        self
    }

    /// Sets the password file; `None` disables password-file lookups.
    pub fn set_passfile(&mut self, passfile: Option<PathBuf>) -> &mut Config {
        self.passfile = passfile.and_then(non_empty_path);
        self
    }

    /// Sets the command-line options sent at startup (e.g. `-c search_path=app`).
    pub fn set_options(&mut self, options: &str) -> &mut Config {
        self.options = non_empty(options);
        self
    }

    /// Sets `application_name`; empty means none (the fallback name then applies).
    pub fn set_application_name(&mut self, name: &str) -> &mut Config {
        self.application_name = non_empty(name);
        self
    }

    /// Sets `fallback_application_name`, used when no `application_name` is given.
    pub fn set_fallback_application_name(&mut self, name: &str) -> &mut Config {
        self.fallback_application_name = non_empty(name);
        self
    }

    /// Sets the per-host connect timeout. As libpq: whole seconds (rounded up), at least two;
    /// `None` or zero waits indefinitely.
    pub fn set_connect_timeout(&mut self, timeout: Option<Duration>) -> &mut Config {
        self.connect_timeout =
            whole(timeout, Duration::from_secs(1)).map(|d| d.max(Duration::from_secs(2)));
        self
    }

    /// Sets the TLS mode.
    pub fn set_ssl_mode(&mut self, mode: SslMode) -> &mut Config {
        self.ssl_mode = mode;
        self
    }

    /// Sets the root-certificate file (`sslrootcert`); `system` means the platform's trust
    /// store and should go with [`SslMode::VerifyFull`]. An empty path restores the default.
    pub fn set_ssl_root_cert(&mut self, path: impl Into<PathBuf>) -> &mut Config {
        self.ssl_root_cert = non_empty_path(path.into());
        self
    }

    /// Sets the client-certificate file (`sslcert`). An empty path restores the default.
    pub fn set_ssl_cert(&mut self, path: impl Into<PathBuf>) -> &mut Config {
        self.ssl_cert = non_empty_path(path.into());
        self
    }

    /// Sets the client-key file (`sslkey`). An empty path restores the default.
    pub fn set_ssl_key(&mut self, path: impl Into<PathBuf>) -> &mut Config {
        self.ssl_key = non_empty_path(path.into());
        self
    }

    /// Sets the password of the client key (`sslpassword`).
    pub fn set_ssl_password(&mut self, password: &str) -> &mut Config {
        self.ssl_password = non_empty(password);
        self
    }

    /// Sets the channel-binding policy.
    pub fn set_channel_binding(&mut self, policy: ChannelBinding) -> &mut Config {
        self.channel_binding = policy;
        self
    }

    /// Turns TCP keepalives on or off.
    pub fn set_keepalives(&mut self, on: bool) -> &mut Config {
        self.keepalives = on;
        self
    }

    /// Sets the keepalive idle time (whole seconds, rounded up; `None` or zero: system default).
    pub fn set_keepalives_idle(&mut self, idle: Option<Duration>) -> &mut Config {
        self.keepalives_idle = whole(idle, Duration::from_secs(1));
        self
    }

    /// Sets the keepalive probe interval (whole seconds, rounded up; `None` or zero: default).
    pub fn set_keepalives_interval(&mut self, interval: Option<Duration>) -> &mut Config {
        self.keepalives_interval = whole(interval, Duration::from_secs(1));
        self
    }

    /// Sets the number of unanswered probes (`None` or zero: system default; at most `i32::MAX`).
    pub fn set_keepalives_count(&mut self, count: Option<u32>) -> &mut Config {
        self.keepalives_count = count.filter(|n| *n > 0).map(|n| n.min(i32::MAX as u32));
        self
    }

    /// Sets `TCP_USER_TIMEOUT` (whole milliseconds, rounded up; `None` or zero: default).
    pub fn set_tcp_user_timeout(&mut self, timeout: Option<Duration>) -> &mut Config {
        self.tcp_user_timeout = whole(timeout, Duration::from_millis(1));
        self
    }

    /// Sets which kind of server the connection must reach.
    pub fn set_target_session_attrs(&mut self, attrs: TargetSessionAttrs) -> &mut Config {
        self.target_session_attrs = attrs;
        self
    }

    /// Sets whether hosts are tried in a random order.
    pub fn set_load_balance_hosts(&mut self, mode: LoadBalanceHosts) -> &mut Config {
        self.load_balance_hosts = mode;
        self
    }

    /// Sets after how many executions SQL text is prepared automatically; 0 disables it.
    pub fn set_prepare_threshold(&mut self, executions: u32) -> &mut Config {
        self.prepare_threshold = executions;
        self
    }

    /// Sets how many prepared statements a connection keeps.
    pub fn set_statement_cache_capacity(&mut self, statements: usize) -> &mut Config {
        self.statement_cache_capacity = statements;
        self
    }

    /// Sets the read-buffer size in bytes; values below [`MIN_READ_BUFFER_SIZE`] are raised to it.
    pub fn set_read_buffer_size(&mut self, bytes: usize) -> &mut Config {
        self.read_buffer_size = bytes.max(MIN_READ_BUFFER_SIZE);
        self
    }
}
