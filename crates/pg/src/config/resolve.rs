//! Turning raw keyword values (string, then environment) into a checked `Config`, as libpq's `connectOptions2` does.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use super::defaults::{DEFAULT_PORT, OsDefaults};
use super::error::{ConfigError, ErrorKind, Origin};
use super::keywords::{Keyword, RawSettings, RawValue};
use super::modes::{ChannelBinding, LoadBalanceHosts, SslMode, TargetSessionAttrs};
use super::{Config, HostSpec};

/// Builds a `Config` from the collected raw values and the machine's defaults.
pub(crate) fn resolve(raw: &RawSettings, os: &OsDefaults) -> Result<Config, ConfigError> {
    let mut config = Config::with_defaults(os);
    let given = |keyword| raw.get(keyword).filter(|v: &&RawValue| !v.text.is_empty());
    let text = |keyword| given(keyword).map(|v| v.text.clone());

    if let Some(user) = text(Keyword::User) {
        config.user = user;
    } else if config.user.is_empty() {
        return Err(ConfigError::new(
            ErrorKind::NoUser,
            Origin::Default,
            "could not determine the user name to connect as: the operating-system user has no /etc/passwd entry and USER and LOGNAME are unset",
        )
        .with_keyword("user")
        .with_hint("give user= in the connection string or set PGUSER"));
    }
    config.dbname = text(Keyword::Dbname);
    config.password = text(Keyword::Password);
    if let Some(passfile) = text(Keyword::Passfile) {
        config.passfile = Some(PathBuf::from(passfile));
    }
    config.options = text(Keyword::Options);
    config.application_name = text(Keyword::ApplicationName);
    config.fallback_application_name = text(Keyword::FallbackApplicationName);
    config.hosts = resolve_hosts(raw)?;

    if let Some(v) = raw.get(Keyword::ConnectTimeout) {
        config.connect_timeout = match c_int(v, Keyword::ConnectTimeout)? {
            ..=0 => None,
            seconds => Some(Duration::from_secs(seconds.max(2).unsigned_abs().into())),
        };
    }

    config.ssl_root_cert = text(Keyword::Sslrootcert).map(PathBuf::from);
    config.ssl_cert = text(Keyword::Sslcert).map(PathBuf::from);
    config.ssl_key = text(Keyword::Sslkey).map(PathBuf::from);
    config.ssl_password = text(Keyword::Sslpassword);
    let system_roots = config.ssl_uses_system_roots();
    config.ssl_mode = match raw.get(Keyword::Sslmode) {
        Some(v) => choice(
            v,
            Keyword::Sslmode,
            SslMode::from_keyword_value,
            SslMode::accepted,
        )?,
        // With the system trust store, libpq defaults to the only mode that makes sense for it.
        None if system_roots => SslMode::VerifyFull,
        None => SslMode::Prefer,
    };
    if system_roots && config.ssl_mode != SslMode::VerifyFull {
        let origin = raw
            .get(Keyword::Sslmode)
            .map_or(Origin::Default, |v| v.origin);
        return Err(ConfigError::new(
            ErrorKind::InvalidValue,
            origin,
            format!(
                "weak sslmode \"{}\" may not be used with sslrootcert=system (use \"verify-full\")",
                config.ssl_mode
            ),
        )
        .with_keyword("sslmode"));
    }
    if let Some(v) = raw.get(Keyword::ChannelBinding) {
        config.channel_binding = choice(
            v,
            Keyword::ChannelBinding,
            ChannelBinding::from_keyword_value,
            ChannelBinding::accepted,
        )?;
    }
    if let Some(v) = raw.get(Keyword::TargetSessionAttrs) {
        config.target_session_attrs = choice(
            v,
            Keyword::TargetSessionAttrs,
            TargetSessionAttrs::from_keyword_value,
            TargetSessionAttrs::accepted,
        )?;
    }
    if let Some(v) = raw.get(Keyword::LoadBalanceHosts) {
        config.load_balance_hosts = choice(
            v,
            Keyword::LoadBalanceHosts,
            LoadBalanceHosts::from_keyword_value,
            LoadBalanceHosts::accepted,
        )?;
    }

    if let Some(v) = raw.get(Keyword::Keepalives) {
        config.keepalives = c_int(v, Keyword::Keepalives)? != 0;
    }
    config.keepalives_idle = positive(raw, Keyword::KeepalivesIdle)?.map(Duration::from_secs);
    config.keepalives_interval =
        positive(raw, Keyword::KeepalivesInterval)?.map(Duration::from_secs);
    config.keepalives_count =
        positive(raw, Keyword::KeepalivesCount)?.map(|n| u32::try_from(n).unwrap_or(u32::MAX));
    config.tcp_user_timeout = positive(raw, Keyword::TcpUserTimeout)?.map(Duration::from_millis);

    if let Some(v) = given(Keyword::ClientEncoding) {
        check_client_encoding(v)?;
    }
    if let Some(v) = raw.get(Keyword::Gssencmode) {
        check_gssencmode(v)?;
    }
    Ok(config)
}

/// Splits the host, hostaddr and port lists and pairs them up (libpq's rules: the host count is
/// hostaddr's if given, else host's, else one; a single port serves every host).
fn resolve_hosts(raw: &RawSettings) -> Result<Vec<HostSpec>, ConfigError> {
    let list = |keyword| -> Option<(&RawValue, Vec<&str>)> {
        let value = raw.get(keyword).filter(|v| !v.text.is_empty())?;
        Some((value, value.text.split(',').collect()))
    };
    let names = list(Keyword::Host);
    let addrs = list(Keyword::Hostaddr);
    let ports = list(Keyword::Port);

    let count = match (&addrs, &names) {
        (Some((_, addrs)), _) => addrs.len(),
        (None, Some((_, names))) => names.len(),
        (None, None) => 1,
    };
    if let (Some((_, addr_list)), Some((name_value, name_list))) = (&addrs, &names)
        && name_list.len() != addr_list.len()
    {
        return Err(ConfigError::new(
            ErrorKind::HostCountMismatch,
            name_value.origin,
            format!(
                "could not match {} host names to {} hostaddr values",
                name_list.len(),
                addr_list.len()
            ),
        )
        .with_keyword("host")
        .with_hint(
            "give one hostaddr per host, leaving an entry empty to resolve that host's name",
        ));
    }
    if let Some((port_value, port_list)) = &ports
        && port_list.len() != 1
        && port_list.len() != count
    {
        return Err(ConfigError::new(
            ErrorKind::HostCountMismatch,
            port_value.origin,
            format!(
                "could not match {} port numbers to {} hosts",
                port_list.len(),
                count
            ),
        )
        .with_keyword("port")
        .with_hint("give one port for all hosts or one port per host"));
    }

    let mut specs = Vec::with_capacity(count);
    for i in 0..count {
        let host = names
            .as_ref()
            .and_then(|(_, list)| list.get(i))
            .filter(|h| !h.is_empty())
            .map(|h| (*h).to_owned());
        let hostaddr = match &addrs {
            Some((value, list)) => parse_hostaddr(value, list.get(i).copied().unwrap_or(""))?,
            None => None,
        };
        let port = match &ports {
            Some((value, list)) => {
                let entry = if list.len() == 1 {
                    list.first()
                } else {
                    list.get(i)
                };
                parse_port(value, entry.copied().unwrap_or(""))?
            }
            None => DEFAULT_PORT,
        };
        specs.push(HostSpec {
            host,
            hostaddr,
            port,
        });
    }
    Ok(specs)
}

fn parse_hostaddr(value: &RawValue, entry: &str) -> Result<Option<IpAddr>, ConfigError> {
    if entry.is_empty() {
        return Ok(None);
    }
    entry.parse::<IpAddr>().map(Some).map_err(|_| {
        ConfigError::new(
            ErrorKind::InvalidValue,
            value.origin,
            format!("could not parse network address \"{entry}\""),
        )
        .with_keyword("hostaddr")
        .with_hint("hostaddr takes numeric IPv4 or IPv6 addresses; put host names in host")
    })
}

fn parse_port(value: &RawValue, entry: &str) -> Result<u16, ConfigError> {
    if entry.is_empty() {
        return Ok(DEFAULT_PORT);
    }
    let number =
        parse_c_int(entry).ok_or_else(|| invalid_integer(value.origin, entry, Keyword::Port))?;
    u16::try_from(number)
        .ok()
        .filter(|port| *port != 0)
        .ok_or_else(|| {
            ConfigError::new(
                ErrorKind::InvalidValue,
                value.origin,
                format!("invalid port number: \"{entry}\""),
            )
            .with_keyword("port")
            .with_hint("ports are 1 to 65535")
        })
}

/// A value from a fixed set of spellings.
fn choice<T>(
    value: &RawValue,
    keyword: Keyword,
    parse: fn(&str) -> Option<T>,
    accepted: fn() -> String,
) -> Result<T, ConfigError> {
    parse(&value.text).ok_or_else(|| {
        ConfigError::new(
            ErrorKind::InvalidValue,
            value.origin,
            format!("invalid {} value: \"{}\"", keyword.name(), value.text),
        )
        .with_keyword(keyword.name())
        .with_hint(format!("accepted values: {}", accepted()))
    })
}

/// An integer setting where zero or less means "not set" (libpq's keepalive and timeout rules).
fn positive(raw: &RawSettings, keyword: Keyword) -> Result<Option<u64>, ConfigError> {
    match raw.get(keyword) {
        None => Ok(None),
        Some(v) => Ok(u64::try_from(c_int(v, keyword)?).ok().filter(|n| *n > 0)),
    }
}

fn c_int(value: &RawValue, keyword: Keyword) -> Result<i32, ConfigError> {
    parse_c_int(&value.text).ok_or_else(|| invalid_integer(value.origin, &value.text, keyword))
}

fn invalid_integer(origin: Origin, text: &str, keyword: Keyword) -> ConfigError {
    ConfigError::new(
        ErrorKind::InvalidValue,
        origin,
        format!(
            "invalid integer value \"{text}\" for connection option \"{}\"",
            keyword.name()
        ),
    )
    .with_keyword(keyword.name())
    .with_hint("write a decimal integer, e.g. 10")
}

/// Parses an integer as libpq's `parse_int_param` does with `strtol`: leading and trailing
/// whitespace allowed, an optional sign, decimal digits, and it must fit in a C `int`.
pub(crate) fn parse_c_int(text: &str) -> Option<i32> {
    let is_space = |c: char| matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r');
    let trimmed = text.trim_matches(is_space);
    let digits = trimmed
        .strip_prefix('-')
        .or_else(|| trimmed.strip_prefix('+'))
        .unwrap_or(trimmed);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // i64 first so that long runs of leading zeros and out-of-range values are told apart.
    let magnitude = digits
        .trim_start_matches('0')
        .parse::<i64>()
        .ok()
        .or_else(|| digits.bytes().all(|b| b == b'0').then_some(0))?;
    let signed = if trimmed.starts_with('-') {
        -magnitude
    } else {
        magnitude
    };
    i32::try_from(signed).ok()
}

/// sluice-pg exchanges all text as UTF-8, so only UTF-8 spellings are accepted. PostgreSQL
/// compares encoding names ignoring case and punctuation, and knows `UNICODE` as an alias.
fn check_client_encoding(value: &RawValue) -> Result<(), ConfigError> {
    let normalized: String = value
        .text
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    if normalized == "utf8" || normalized == "unicode" {
        return Ok(());
    }
    Err(ConfigError::new(
        ErrorKind::Unsupported,
        value.origin,
        format!("unsupported client_encoding value: \"{}\"", value.text),
    )
    .with_keyword("client_encoding")
    .with_hint(
        "sluice-pg exchanges all text as UTF-8 and lets the server convert from the database's encoding, so only UTF8 is accepted; remove client_encoding or set it to UTF8",
    ))
}

/// sluice-pg has no GSSAPI: `disable` and `prefer` both mean "no GSS encryption", as in a libpq
/// built without GSSAPI; `require` cannot be honoured.
fn check_gssencmode(value: &RawValue) -> Result<(), ConfigError> {
    match value.text.as_str() {
        "disable" | "prefer" => Ok(()),
        "require" => Err(ConfigError::new(
            ErrorKind::Unsupported,
            value.origin,
            "gssencmode value \"require\" invalid when GSSAPI support is not compiled in",
        )
        .with_keyword("gssencmode")
        .with_hint("sluice-pg has no GSSAPI support; use gssencmode=disable or prefer")),
        other => Err(ConfigError::new(
            ErrorKind::InvalidValue,
            value.origin,
            format!("invalid gssencmode value: \"{other}\""),
        )
        .with_keyword("gssencmode")
        .with_hint("accepted values: disable, prefer, require")),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_c_int;

    #[test]
    fn c_integers() {
        assert_eq!(parse_c_int("10"), Some(10));
        assert_eq!(parse_c_int(" \t-7 \n"), Some(-7));
        assert_eq!(parse_c_int("+3"), Some(3));
        assert_eq!(parse_c_int("000000000000000000000042"), Some(42));
        assert_eq!(parse_c_int("0000"), Some(0));
        assert_eq!(parse_c_int("2147483647"), Some(i32::MAX));
        assert_eq!(parse_c_int("-2147483648"), Some(i32::MIN));
        assert_eq!(parse_c_int("2147483648"), None);
        assert_eq!(parse_c_int("99999999999999999999999"), None);
        assert_eq!(parse_c_int(""), None);
        assert_eq!(parse_c_int("-"), None);
        assert_eq!(parse_c_int("1 2"), None);
        assert_eq!(parse_c_int("0x10"), None);
        assert_eq!(parse_c_int("5s"), None);
    }
}
