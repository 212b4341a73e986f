//! The connection keywords sluice-pg accepts, their `PG*` variables, and the raw values collected for them.

use super::error::{ConfigError, ErrorKind, Origin};

/// A connection keyword that sluice-pg accepts in a conninfo string or URI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Keyword {
    Host,
    Hostaddr,
    Port,
    Dbname,
    User,
    Password,
    Passfile,
    Options,
    ApplicationName,
    FallbackApplicationName,
    ConnectTimeout,
    Sslmode,
    Sslrootcert,
    Sslcert,
    Sslkey,
    Sslpassword,
    ChannelBinding,
    Keepalives,
    KeepalivesIdle,
    KeepalivesInterval,
    KeepalivesCount,
    TcpUserTimeout,
    TargetSessionAttrs,
    LoadBalanceHosts,
    ClientEncoding,
    Gssencmode,
}

impl Keyword {
    pub(crate) const ALL: [Keyword; 26] = [
        Keyword::Host,
        Keyword::Hostaddr,
        Keyword::Port,
        Keyword::Dbname,
        Keyword::User,
        Keyword::Password,
        Keyword::Passfile,
        Keyword::Options,
        Keyword::ApplicationName,
        Keyword::FallbackApplicationName,
        Keyword::ConnectTimeout,
        Keyword::Sslmode,
        Keyword::Sslrootcert,
        Keyword::Sslcert,
        Keyword::Sslkey,
        Keyword::Sslpassword,
        Keyword::ChannelBinding,
        Keyword::Keepalives,
        Keyword::KeepalivesIdle,
        Keyword::KeepalivesInterval,
        Keyword::KeepalivesCount,
        Keyword::TcpUserTimeout,
        Keyword::TargetSessionAttrs,
        Keyword::LoadBalanceHosts,
        Keyword::ClientEncoding,
        Keyword::Gssencmode,
    ];

    /// The keyword as written in a connection string.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Keyword::Host => "host",
            Keyword::Hostaddr => "hostaddr",
            Keyword::Port => "port",
            Keyword::Dbname => "dbname",
            Keyword::User => "user",
            Keyword::Password => "password",
            Keyword::Passfile => "passfile",
            Keyword::Options => "options",
            Keyword::ApplicationName => "application_name",
            Keyword::FallbackApplicationName => "fallback_application_name",
            Keyword::ConnectTimeout => "connect_timeout",
            Keyword::Sslmode => "sslmode",
            Keyword::Sslrootcert => "sslrootcert",
            Keyword::Sslcert => "sslcert",
            Keyword::Sslkey => "sslkey",
            Keyword::Sslpassword => "sslpassword",
            Keyword::ChannelBinding => "channel_binding",
            Keyword::Keepalives => "keepalives",
            Keyword::KeepalivesIdle => "keepalives_idle",
            Keyword::KeepalivesInterval => "keepalives_interval",
            Keyword::KeepalivesCount => "keepalives_count",
            Keyword::TcpUserTimeout => "tcp_user_timeout",
            Keyword::TargetSessionAttrs => "target_session_attrs",
            Keyword::LoadBalanceHosts => "load_balance_hosts",
            Keyword::ClientEncoding => "client_encoding",
            Keyword::Gssencmode => "gssencmode",
        }
    }

    /// The environment variable libpq reads when the keyword is not in the string.
    pub(crate) fn env_var(self) -> Option<&'static str> {
        Some(match self {
            Keyword::Host => "PGHOST",
            Keyword::Hostaddr => "PGHOSTADDR",
            Keyword::Port => "PGPORT",
            Keyword::Dbname => "PGDATABASE",
            Keyword::User => "PGUSER",
            Keyword::Password => "PGPASSWORD",
            Keyword::Passfile => "PGPASSFILE",
            Keyword::Options => "PGOPTIONS",
            Keyword::ApplicationName => "PGAPPNAME",
            Keyword::ConnectTimeout => "PGCONNECT_TIMEOUT",
            Keyword::Sslmode => "PGSSLMODE",
            Keyword::Sslrootcert => "PGSSLROOTCERT",
            Keyword::Sslcert => "PGSSLCERT",
            Keyword::Sslkey => "PGSSLKEY",
            Keyword::Sslpassword => "PGSSLPASSWORD",
            Keyword::ChannelBinding => "PGCHANNELBINDING",
            Keyword::TargetSessionAttrs => "PGTARGETSESSIONATTRS",
            Keyword::LoadBalanceHosts => "PGLOADBALANCEHOSTS",
            Keyword::ClientEncoding => "PGCLIENTENCODING",
            Keyword::Gssencmode => "PGGSSENCMODE",
            Keyword::FallbackApplicationName
            | Keyword::Keepalives
            | Keyword::KeepalivesIdle
            | Keyword::KeepalivesInterval
            | Keyword::KeepalivesCount
            | Keyword::TcpUserTimeout => return None,
        })
    }

    fn from_name(name: &str) -> Option<Keyword> {
        Keyword::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Looks a keyword up, or explains why it is refused. `unknown_message` is the libpq wording
    /// for an unknown keyword in this syntax (conninfo and URI differ).
    pub(crate) fn lookup(
        name: &str,
        origin: Origin,
        unknown_message: impl FnOnce(&str) -> String,
    ) -> Result<Keyword, ConfigError> {
        if let Some(keyword) = Keyword::from_name(name) {
            return Ok(keyword);
        }
        let owned = name.to_owned();
        if let Some(setter) = driver_setting(name) {
            return Err(
                ConfigError::new(ErrorKind::UnknownOption, origin, unknown_message(name))
                    .with_keyword(owned)
                    .with_hint(format!(
                        "\"{name}\" is a sluice-pg driver setting, not a libpq keyword: set it in code with Config::{setter}"
                    )),
            );
        }
        if LIBPQ_UNSUPPORTED.contains(&name) {
            let hint = if name == "service" {
                "sluice-pg does not read pg_service.conf: write the service's settings into the connection string"
            } else {
                "remove it from the connection string"
            };
            return Err(ConfigError::new(
                ErrorKind::Unsupported,
                origin,
                format!(
                    "connection option \"{name}\" is known to libpq but not supported by sluice-pg"
                ),
            )
            .with_keyword(owned)
            .with_hint(hint));
        }
        Err(
            ConfigError::new(ErrorKind::UnknownOption, origin, unknown_message(name))
                .with_keyword(owned),
        )
    }
}

/// Driver tuning knobs that are deliberately not accepted in strings, with their setter.
fn driver_setting(name: &str) -> Option<&'static str> {
    match name {
        "prepare_threshold" => Some("set_prepare_threshold"),
        "statement_cache_capacity" => Some("set_statement_cache_capacity"),
        "read_buffer_size" => Some("set_read_buffer_size"),
        _ => None,
    }
}

/// Keywords libpq accepts that sluice-pg does not implement: refused with a clear message rather
/// than silently ignored, so nobody believes e.g. `sslcrl` is being checked.
const LIBPQ_UNSUPPORTED: &[&str] = &[
    "service",
    "requirepeer",
    "require_auth",
    "replication",
    "krbsrvname",
    "gsslib",
    "gssdelegation",
    "sslcrl",
    "sslcrldir",
    "sslsni",
    "sslcompression",
    "sslcertmode",
    "sslnegotiation",
    "sslkeylogfile",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
    "min_protocol_version",
    "max_protocol_version",
    "requiressl",
    "scram_client_key",
    "scram_server_key",
    "oauth_issuer",
    "oauth_client_id",
    "oauth_client_secret",
    "oauth_scope",
];

/// One value as found in the string or the environment, before interpretation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawValue {
    pub(crate) text: String,
    pub(crate) origin: Origin,
}

/// The raw value of every keyword: from the string first (last occurrence wins, as in libpq),
/// then from the environment for keywords the string did not set.
#[derive(Debug, Clone, Default)]
pub(crate) struct RawSettings {
    values: [Option<RawValue>; Keyword::ALL.len()],
}

impl RawSettings {
    pub(crate) fn set(&mut self, keyword: Keyword, text: String, origin: Origin) {
        if let Some(slot) = self.values.get_mut(keyword as usize) {
            *slot = Some(RawValue { text, origin });
        }
    }

    pub(crate) fn get(&self, keyword: Keyword) -> Option<&RawValue> {
        self.values.get(keyword as usize).and_then(Option::as_ref)
    }

    /// Fills keywords the string left unset from their `PG*` variable. As in libpq, a variable
    /// set to the empty string still counts as set.
    pub(crate) fn fill_from_env(&mut self, env: &dyn Fn(&str) -> Option<String>) {
        for keyword in Keyword::ALL {
            if self.get(keyword).is_some() {
                continue;
            }
            if let Some(var) = keyword.env_var()
                && let Some(text) = env(var)
            {
                self.set(keyword, text, Origin::Env(var));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_keyword_round_trips_through_its_name() {
        for (index, keyword) in Keyword::ALL.into_iter().enumerate() {
            assert_eq!(keyword as usize, index, "ALL must follow declaration order");
            assert_eq!(Keyword::from_name(keyword.name()), Some(keyword));
        }
    }

    #[test]
    fn driver_settings_are_refused_with_the_setter_named() {
        let e = Keyword::lookup("prepare_threshold", Origin::Text(3), |n| format!("bad {n}"))
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::UnknownOption);
        assert!(
            e.to_string().contains("Config::set_prepare_threshold"),
            "{e}"
        );
    }

    #[test]
    fn libpq_keywords_not_implemented_are_unsupported() {
        let e = Keyword::lookup("sslcrl", Origin::Text(0), |n| n.to_owned()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unsupported);
        assert_eq!(e.keyword(), Some("sslcrl"));
    }

    #[test]
    fn string_values_win_over_environment() {
        let mut raw = RawSettings::default();
        raw.set(Keyword::Port, "1".into(), Origin::Text(5));
        raw.fill_from_env(&|var| Some(format!("env-{var}")));
        assert_eq!(raw.get(Keyword::Port).map(|v| v.text.as_str()), Some("1"));
        let host = raw.get(Keyword::Host).cloned();
        assert_eq!(
            host,
            Some(RawValue {
                text: "env-PGHOST".into(),
                origin: Origin::Env("PGHOST")
            })
        );
        assert_eq!(raw.get(Keyword::Keepalives), None);
    }
}
