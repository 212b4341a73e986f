//! Tests of `Config` as a whole: precedence, hosts and ports, value rules, error messages, password lookup.

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use super::defaults::OsDefaults;
use super::*;

/// A directory under the system temp dir, removed on drop (no `tempfile` dev-dependency needed).
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    pub(crate) fn new(tag: &str) -> TempDir {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("sluice-pg-config-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// An environment holding only `pairs`, plus a `HOME` with no `.pgpass` or `.postgresql`.
pub(crate) fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let mut vars: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    if !vars.iter().any(|(k, _)| k == "HOME") {
        vars.push(("HOME".into(), "/nonexistent/sluice-test-home".into()));
    }
    move |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
}

pub(crate) fn parse(s: &str) -> Config {
    Config::parse_with_env(s, &env_of(&[])).unwrap()
}

pub(crate) fn parse_env(s: &str, pairs: &[(&str, &str)]) -> Config {
    Config::parse_with_env(s, &env_of(pairs)).unwrap()
}

pub(crate) fn error(s: &str) -> ConfigError {
    Config::parse_with_env(s, &env_of(&[])).unwrap_err()
}

pub(crate) fn error_env(s: &str, pairs: &[(&str, &str)]) -> ConfigError {
    Config::parse_with_env(s, &env_of(pairs)).unwrap_err()
}

pub(crate) fn tcp(host: &str, port: u16) -> Target {
    Target {
        host: Host::Tcp(host.into()),
        hostaddr: None,
        port,
    }
}

pub(crate) fn no_sockets(_: &Path) -> bool {
    false
}

#[test]
fn conninfo_and_uri_give_the_same_config() {
    let a =
        parse("host=db.example.com port=5433 user=app dbname=sales password=pw sslmode=require");
    let b = parse("postgresql://app:pw@db.example.com:5433/sales?sslmode=require");
    let c = parse("postgres://app:pw@db.example.com:5433/sales?sslmode=require");
    assert_eq!(a, b);
    assert_eq!(b, c);
    assert_eq!(a.targets(), vec![tcp("db.example.com", 5433)]);
    assert_eq!(a.user(), "app");
    assert_eq!(a.dbname(), "sales");
    assert_eq!(a.password(), Some("pw"));
    assert_eq!(a.ssl_mode(), SslMode::Require);
}

#[test]
fn defaults_without_string_or_environment() {
    let c = parse("");
    let os = OsDefaults::detect(&env_of(&[]), false);
    assert_eq!(c.user(), os.user.as_deref().unwrap());
    assert_eq!(c.dbname(), c.user(), "dbname defaults to the user");
    assert_eq!(c.targets_with(&no_sockets), vec![tcp("localhost", 5432)]);
    assert_eq!(c.password(), None);
    assert_eq!(c.ssl_mode(), SslMode::Prefer);
    assert_eq!(c.channel_binding(), ChannelBinding::Prefer);
    assert_eq!(c.connect_timeout(), None);
    assert!(c.keepalives());
    assert_eq!(c.keepalives_idle(), None);
    assert_eq!(c.target_session_attrs(), TargetSessionAttrs::Any);
    assert_eq!(c.load_balance_hosts(), LoadBalanceHosts::Disable);
    assert_eq!(
        c.passfile(),
        Some(Path::new("/nonexistent/sluice-test-home/.pgpass"))
    );
    assert_eq!(c.ssl_root_cert(), None);
    assert_eq!(c.prepare_threshold(), 5);
    assert_eq!(c.statement_cache_capacity(), 256);
    assert_eq!(c.read_buffer_size(), 256 * 1024);
    assert_eq!(Config::from_env().is_ok(), Config::parse("").is_ok());
}

#[test]
fn default_host_is_the_socket_directory_when_present() {
    let c = parse("port=5433");
    let debian = |p: &Path| p == Path::new("/var/run/postgresql");
    let target = c.targets_with(&debian).remove(0);
    assert_eq!(target.host, Host::Unix("/var/run/postgresql".into()));
    assert_eq!(
        target.socket_path(),
        Some(PathBuf::from("/var/run/postgresql/.s.PGSQL.5433"))
    );
    let tmp = |p: &Path| p == Path::new("/tmp/.s.PGSQL.5433");
    assert_eq!(c.targets_with(&tmp)[0].host, Host::Unix("/tmp".into()));
}

#[test]
fn string_wins_over_environment_which_wins_over_defaults() {
    let env = [
        ("PGUSER", "envuser"),
        ("PGPORT", "6000"),
        ("PGHOST", "envhost"),
    ];
    let c = parse_env("user=stringuser", &env);
    assert_eq!(c.user(), "stringuser");
    assert_eq!(c.targets(), vec![tcp("envhost", 6000)]);
    let c = parse_env("postgresql://urluser@urlhost", &env);
    assert_eq!(c.user(), "urluser");
    assert_eq!(c.targets(), vec![tcp("urlhost", 6000)]);
    // An empty value counts as given: the variable is not read, and the default applies.
    let c = parse_env("host='' port=''", &env);
    assert_eq!(c.targets_with(&no_sockets), vec![tcp("localhost", 5432)]);
}

#[test]
fn every_environment_variable_is_read() {
    let dir = TempDir::new("env");
    let env = [
        ("PGHOST", "h1,h2"),
        ("PGHOSTADDR", "10.0.0.1,10.0.0.2"),
        ("PGPORT", "7000"),
        ("PGDATABASE", "envdb"),
        ("PGUSER", "envuser"),
        ("PGPASSWORD", "envpw"),
        ("PGPASSFILE", "/etc/sluice-pgpass"),
        ("PGOPTIONS", "-c geqo=off"),
        ("PGAPPNAME", "envapp"),
        ("PGSSLMODE", "verify-ca"),
        ("PGSSLROOTCERT", "/r.crt"),
        ("PGSSLCERT", "/c.crt"),
        ("PGSSLKEY", "/c.key"),
        ("PGSSLPASSWORD", "keypw"),
        ("PGCHANNELBINDING", "require"),
        ("PGCONNECT_TIMEOUT", "7"),
        ("PGTARGETSESSIONATTRS", "standby"),
        ("PGLOADBALANCEHOSTS", "random"),
        ("PGCLIENTENCODING", "UTF8"),
        ("HOME", dir.path().to_str().unwrap()),
    ];
    let c = parse_env("", &env);
    let mut targets = c.targets();
    targets.sort_by_key(|t| t.hostaddr);
    assert_eq!(
        targets,
        vec![
            Target {
                host: Host::Tcp("h1".into()),
                hostaddr: Some("10.0.0.1".parse().unwrap()),
                port: 7000
            },
            Target {
                host: Host::Tcp("h2".into()),
                hostaddr: Some("10.0.0.2".parse().unwrap()),
                port: 7000
            },
        ]
    );
    assert_eq!(c.dbname(), "envdb");
    assert_eq!(c.user(), "envuser");
    assert_eq!(c.password(), Some("envpw"));
    assert_eq!(c.passfile(), Some(Path::new("/etc/sluice-pgpass")));
    assert_eq!(c.options(), Some("-c geqo=off"));
    assert_eq!(c.application_name(), Some("envapp"));
    assert_eq!(c.ssl_mode(), SslMode::VerifyCa);
    assert_eq!(c.ssl_root_cert(), Some(Path::new("/r.crt")));
    assert_eq!(c.ssl_cert(), Some(Path::new("/c.crt")));
    assert_eq!(c.ssl_key(), Some(Path::new("/c.key")));
    assert_eq!(c.ssl_password(), Some("keypw"));
    assert_eq!(c.channel_binding(), ChannelBinding::Require);
    assert_eq!(c.connect_timeout(), Some(Duration::from_secs(7)));
    assert_eq!(c.target_session_attrs(), TargetSessionAttrs::Standby);
    assert_eq!(c.load_balance_hosts(), LoadBalanceHosts::Random);
}

#[test]
fn multiple_hosts_and_ports() {
    let c = parse("host=a,b,c port=6000");
    assert_eq!(
        c.targets(),
        vec![tcp("a", 6000), tcp("b", 6000), tcp("c", 6000)]
    );
    let c = parse("host=a,b,c port=1,2,3");
    assert_eq!(c.targets(), vec![tcp("a", 1), tcp("b", 2), tcp("c", 3)]);
    let c = parse("postgresql://a:1,b,[::1]:3/db");
    assert_eq!(
        c.targets(),
        vec![tcp("a", 1), tcp("b", 5432), tcp("::1", 3)]
    );
    let c = parse("host=a,,b");
    let targets = c.targets_with(&no_sockets);
    assert_eq!(
        targets,
        vec![tcp("a", 5432), tcp("localhost", 5432), tcp("b", 5432)]
    );

    let e = error("host=a,b,c port=1,2");
    assert_eq!(e.kind(), ErrorKind::HostCountMismatch);
    assert_eq!(e.keyword(), Some("port"));
    assert_eq!(
        e.to_string(),
        "could not match 2 port numbers to 3 hosts (at byte 16 of the connection string); give one port for all hosts or one port per host"
    );
    let e = error("port=1,2");
    assert!(
        e.to_string()
            .starts_with("could not match 2 port numbers to 1 hosts"),
        "{e}"
    );
}

#[test]
fn hostaddr_pairs_with_host() {
    let c = parse("host=a,b hostaddr=192.0.2.1,2001:db8::1 port=5");
    let targets = c.targets();
    assert_eq!(targets[0].host, Host::Tcp("a".into()));
    assert_eq!(
        targets[0].hostaddr,
        Some("192.0.2.1".parse::<IpAddr>().unwrap())
    );
    assert_eq!(
        targets[1].hostaddr,
        Some("2001:db8::1".parse::<IpAddr>().unwrap())
    );
    let c = parse("hostaddr=192.0.2.7");
    assert_eq!(
        c.targets(),
        vec![Target {
            host: Host::Tcp("192.0.2.7".into()),
            hostaddr: Some("192.0.2.7".parse().unwrap()),
            port: 5432
        }]
    );
    // hostaddr decides the count; an empty entry resolves that host's name.
    let c = parse("host=a,b hostaddr=,192.0.2.2");
    assert_eq!(c.targets()[0].hostaddr, None);

    let e = error("host=a,b hostaddr=192.0.2.1");
    assert_eq!(e.kind(), ErrorKind::HostCountMismatch);
    assert!(
        e.to_string()
            .starts_with("could not match 2 host names to 1 hostaddr values"),
        "{e}"
    );
    let e = error("hostaddr=db.example.com");
    assert_eq!(e.kind(), ErrorKind::InvalidValue);
    assert_eq!(e.keyword(), Some("hostaddr"));
    assert!(
        e.to_string()
            .starts_with("could not parse network address \"db.example.com\""),
        "{e}"
    );
}

#[test]
fn unix_socket_hosts() {
    let c = parse("host=/run/pg port=6000");
    let t = c.targets().remove(0);
    assert_eq!(t.host, Host::Unix("/run/pg".into()));
    assert_eq!(
        t.socket_path(),
        Some(PathBuf::from("/run/pg/.s.PGSQL.6000"))
    );
    assert!(!t.host.is_abstract_socket());
    let c = parse("postgresql://%2Fvar%2Frun%2Fpostgresql/db");
    assert_eq!(
        c.targets()[0].host,
        Host::Unix("/var/run/postgresql".into())
    );
    assert_eq!(c.dbname(), "db");
    let c = parse("postgresql:///db?host=/tmp&port=5433");
    assert_eq!(c.targets()[0].host, Host::Unix("/tmp".into()));
    assert_eq!(c.targets()[0].port, 5433);
    let c = parse("host=@pgabstract");
    assert!(c.targets()[0].host.is_abstract_socket());
    assert_eq!(Host::Tcp("x".into()).socket_path(5432), None);
}

#[test]
fn port_errors() {
    for (s, message) in [
        ("port=0", "invalid port number: \"0\""),
        ("port=65536", "invalid port number: \"65536\""),
        ("port=-1", "invalid port number: \"-1\""),
        (
            "port=abc",
            "invalid integer value \"abc\" for connection option \"port\"",
        ),
        (
            "postgresql://h:x1/db",
            "invalid integer value \"x1\" for connection option \"port\"",
        ),
    ] {
        let e = error(s);
        assert_eq!(e.keyword(), Some("port"), "{s}");
        assert!(e.to_string().starts_with(message), "{s}: {e}");
    }
    assert_eq!(parse("port=' 6000 '").targets()[0].port, 6000);
}

#[test]
fn enumerated_values_and_their_errors() {
    assert_eq!(parse("sslmode=verify-full").ssl_mode(), SslMode::VerifyFull);
    assert_eq!(parse("sslmode=disable").ssl_mode(), SslMode::Disable);
    assert_eq!(
        parse("channel_binding=disable").channel_binding(),
        ChannelBinding::Disable
    );
    assert_eq!(
        parse("target_session_attrs=prefer-standby").target_session_attrs(),
        TargetSessionAttrs::PreferStandby
    );
    assert_eq!(
        parse("load_balance_hosts=random").load_balance_hosts(),
        LoadBalanceHosts::Random
    );

    let e = error("sslmode=bogus");
    assert_eq!(e.kind(), ErrorKind::InvalidValue);
    assert_eq!(
        e.to_string(),
        "invalid sslmode value: \"bogus\" (at byte 8 of the connection string); accepted values: disable, allow, prefer, require, verify-ca, verify-full"
    );
    let e = error_env("", &[("PGSSLMODE", "REQUIRE")]);
    assert_eq!(
        e.to_string(),
        "invalid sslmode value: \"REQUIRE\" (from environment variable PGSSLMODE); accepted values: disable, allow, prefer, require, verify-ca, verify-full"
    );
    assert_eq!(e.env_var(), Some("PGSSLMODE"));
    let e = error("sslmode=");
    assert!(
        e.to_string().starts_with("invalid sslmode value: \"\""),
        "{e}"
    );
    let e = error("channel_binding=yes");
    assert!(
        e.to_string()
            .ends_with("accepted values: disable, prefer, require"),
        "{e}"
    );
    let e = error("target_session_attrs=master");
    assert!(
        e.to_string().ends_with(
            "accepted values: any, read-write, read-only, primary, standby, prefer-standby"
        ),
        "{e}"
    );
    let e = error("postgresql://h?load_balance_hosts=on");
    assert_eq!(e.keyword(), Some("load_balance_hosts"));
    assert!(
        e.to_string().ends_with("accepted values: disable, random"),
        "{e}"
    );
}

#[test]
fn timeouts_and_keepalives() {
    assert_eq!(
        parse("connect_timeout=10").connect_timeout(),
        Some(Duration::from_secs(10))
    );
    assert_eq!(
        parse("connect_timeout=1").connect_timeout(),
        Some(Duration::from_secs(2))
    );
    assert_eq!(parse("connect_timeout=0").connect_timeout(), None);
    assert_eq!(parse("connect_timeout=-3").connect_timeout(), None);
    let e = error("connect_timeout=10s");
    assert_eq!(
        e.to_string(),
        "invalid integer value \"10s\" for connection option \"connect_timeout\" (at byte 16 of the connection string); write a decimal integer, e.g. 10"
    );
    let e = error_env("", &[("PGCONNECT_TIMEOUT", "")]);
    assert_eq!(e.env_var(), Some("PGCONNECT_TIMEOUT"));

    let c = parse(
        "keepalives=0 keepalives_idle=30 keepalives_interval=5 keepalives_count=3 tcp_user_timeout=1500",
    );
    assert!(!c.keepalives());
    assert_eq!(c.keepalives_idle(), Some(Duration::from_secs(30)));
    assert_eq!(c.keepalives_interval(), Some(Duration::from_secs(5)));
    assert_eq!(c.keepalives_count(), Some(3));
    assert_eq!(c.tcp_user_timeout(), Some(Duration::from_millis(1500)));
    let c = parse("keepalives=7 keepalives_idle=0 keepalives_count=-1 tcp_user_timeout=0");
    assert!(c.keepalives());
    assert_eq!(c.keepalives_idle(), None);
    assert_eq!(c.keepalives_count(), None);
    assert_eq!(c.tcp_user_timeout(), None);
    assert_eq!(error("keepalives=yes").keyword(), Some("keepalives"));
}

#[test]
fn client_encoding_accepts_only_utf8() {
    for ok in ["UTF8", "utf8", "UTF-8", "unicode", "''"] {
        parse(&format!("client_encoding={ok}"));
    }
    let e = error("client_encoding=LATIN1");
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert_eq!(e.keyword(), Some("client_encoding"));
    let text = e.to_string();
    assert!(
        text.starts_with("unsupported client_encoding value: \"LATIN1\""),
        "{text}"
    );
    assert!(text.contains("exchanges all text as UTF-8"), "{text}");
    let e = error_env("", &[("PGCLIENTENCODING", "SQL_ASCII")]);
    assert_eq!(e.env_var(), Some("PGCLIENTENCODING"));
}

#[test]
fn gssencmode_without_gssapi() {
    parse("gssencmode=disable");
    parse("gssencmode=prefer");
    let e = error("gssencmode=require");
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert!(
        e.to_string().contains("GSSAPI support is not compiled in"),
        "{e}"
    );
    assert_eq!(error("gssencmode=x").kind(), ErrorKind::InvalidValue);
}

#[test]
fn unknown_and_unsupported_keywords() {
    let e = error("host=a foo=1");
    assert_eq!(e.kind(), ErrorKind::UnknownOption);
    assert_eq!(
        e.to_string(),
        "invalid connection option \"foo\" (at byte 7 of the connection string)"
    );
    let e = error("postgresql://h?foo=1");
    assert_eq!(
        e.to_string(),
        "invalid URI query parameter: \"foo\" (at byte 15 of the connection string)"
    );
    for tuning in [
        "prepare_threshold",
        "statement_cache_capacity",
        "read_buffer_size",
    ] {
        let e = error(&format!("{tuning}=1"));
        assert_eq!(e.kind(), ErrorKind::UnknownOption);
        assert!(e.to_string().contains("driver setting"), "{e}");
    }
    let e = error("service=mydb");
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert!(e.to_string().contains("pg_service.conf"), "{e}");
}

#[test]
fn system_root_certificates_require_verify_full() {
    let c = parse("sslrootcert=system");
    assert_eq!(c.ssl_mode(), SslMode::VerifyFull);
    assert!(c.ssl_uses_system_roots());
    let e = error("sslrootcert=system sslmode=require");
    assert_eq!(
        e.to_string(),
        "weak sslmode \"require\" may not be used with sslrootcert=system (use \"verify-full\") (at byte 27 of the connection string)"
    );
}
