//! The server configuration we write: `sluice.conf` (included from postgresql.conf) and pg_hba.conf.

use std::fmt::Write as _;
use std::path::Path;

use crate::error::{EmbeddedError, Result};
#[cfg(feature = "test-support")]
use crate::roles::TEST_ROLES;

/// File name of our settings file in the data directory, rewritten at every start.
pub const SLUICE_CONF: &str = "sluice.conf";
const INCLUDE_LINE: &str = "include_if_exists = 'sluice.conf'";

/// Everything that goes into `sluice.conf`.
#[derive(Debug, Clone)]
pub struct ServerSettings<'a> {
    /// TCP port on 127.0.0.1.
    pub port: u16,
    /// Directory of the unix socket.
    pub socket_dir: &'a Path,
    /// Whether `ssl = on` (with server.crt / server.key in the data directory).
    pub tls: bool,
    /// Extra `name = value` settings, in order (later ones win).
    pub extra: &'a [(String, String)],
}

/// Renders `sluice.conf`. Fails on a setting name or value that cannot be written safely.
pub fn render_settings(settings: &ServerSettings<'_>) -> Result<String> {
    let mut out = String::from(
        "# Written by sluice-embedded at every start; changes here are overwritten.\n\
         # Put lasting changes in postgresql.auto.conf (ALTER SYSTEM), which wins over this file.\n",
    );
    let socket_dir = settings
        .socket_dir
        .to_str()
        .ok_or(EmbeddedError::InvalidSetting {
            name: "unix_socket_directories".to_owned(),
            reason: "the socket directory path is not valid UTF-8",
        })?;
    let fixed = [
        ("listen_addresses", "127.0.0.1"),
        ("unix_socket_directories", socket_dir),
        ("ssl", if settings.tls { "on" } else { "off" }),
    ];
    let _ = writeln!(out, "port = {}", settings.port);
    for (name, value) in fixed {
        push_setting(&mut out, name, value)?;
    }
    if settings.tls {
        push_setting(&mut out, "ssl_cert_file", "server.crt")?;
        push_setting(&mut out, "ssl_key_file", "server.key")?;
    }
    for (name, value) in settings.extra {
        push_setting(&mut out, name, value)?;
    }
    Ok(out)
}

/// Checks a setting before it is accepted into the options.
pub fn validate_setting(name: &str, value: &str) -> Result<()> {
    let mut scratch = String::new();
    push_setting(&mut scratch, name, value)
}

fn push_setting(out: &mut String, name: &str, value: &str) -> Result<()> {
    let name_ok = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    if !name_ok {
        return Err(EmbeddedError::InvalidSetting {
            name: name.to_owned(),
            reason: "a setting name holds only ASCII letters, digits, `_` and `.`",
        });
    }
    if name == "port" {
        return Err(EmbeddedError::InvalidSetting {
            name: name.to_owned(),
            reason: "set the port with ClusterOptions::port",
        });
    }
    if value.contains(['\n', '\r', '\0']) {
        return Err(EmbeddedError::InvalidSetting {
            name: name.to_owned(),
            reason: "a value cannot hold line breaks or NUL",
        });
    }
    let quoted = value.replace('\\', "\\\\").replace('\'', "''");
    let _ = writeln!(out, "{name} = '{quoted}'");
    Ok(())
}

/// The port recorded in a `sluice.conf` text, if any (last one wins, as in the server).
pub fn recorded_port(text: &str) -> Option<u16> {
    text.lines()
        .filter_map(|line| {
            let (name, value) = line.split_once('=')?;
            if name.trim() != "port" {
                return None;
            }
            value.trim().trim_matches('\'').parse().ok()
        })
        .next_back()
}

/// Appends the include of `sluice.conf` to `postgresql.conf` unless it is already there.
pub fn ensure_included(postgresql_conf: &Path) -> Result<()> {
    let text = std::fs::read_to_string(postgresql_conf)
        .map_err(|e| EmbeddedError::io("read", postgresql_conf, e))?;
    if text.lines().any(|l| l.trim() == INCLUDE_LINE) {
        return Ok(());
    }
    let mut text = text;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("\n# Settings chosen by sluice-embedded (port, socket, TLS, ...).\n");
    text.push_str(INCLUDE_LINE);
    text.push('\n');
    std::fs::write(postgresql_conf, text)
        .map_err(|e| EmbeddedError::io("write", postgresql_conf, e))
}

/// The first line of every pg_hba.conf we write; a file without it is the user's own.
const HBA_HEADER: &str = "# Written by sluice-embedded";

/// Whether `hba` is a pg_hba.conf written by this crate (today's or an older one).
pub fn is_our_hba(hba: &str) -> bool {
    hba.starts_with(HBA_HEADER)
}

/// The SQL creating the test roles and the test database when `wanted` (only test clusters,
/// feature `test-support`, have them), else nothing.
pub fn test_roles_sql(wanted: bool) -> String {
    #[cfg(feature = "test-support")]
    if wanted {
        return crate::roles::setup_sql();
    }
    let _ = wanted;
    String::new()
}

/// Renders pg_hba.conf: every connection, over the unix socket or 127.0.0.1, authenticates
/// with SCRAM (the superuser's password is in the password file); the test roles (when
/// created) use their own method, and the TLS role must use TLS. Nothing is trusted.
pub fn render_hba(test_roles: bool, tls: bool) -> String {
    // Without the test kit no cluster has test roles or TLS.
    #[cfg(not(feature = "test-support"))]
    let _ = (test_roles, tls);
    let mut out = format!(
        "{HBA_HEADER} when the cluster was created or upgraded.\n\
         # Nothing is trusted: the superuser's password is in sluice.pgpass (mode 0600).\n\
         # TYPE    DATABASE     USER             ADDRESS        METHOD\n\
         local     all          all                             scram-sha-256\n\
         local     replication  all                             scram-sha-256\n"
    );
    #[cfg(feature = "test-support")]
    if test_roles {
        for role in TEST_ROLES {
            let method = role.method.hba_keyword();
            if role.tls_only {
                if tls {
                    let _ = writeln!(
                        out,
                        "hostssl   all          {:<16} 127.0.0.1/32   {method}",
                        role.name
                    );
                }
                let _ = writeln!(
                    out,
                    "hostnossl all          {:<16} 127.0.0.1/32   reject",
                    role.name
                );
            } else {
                let _ = writeln!(
                    out,
                    "host      all          {:<16} 127.0.0.1/32   {method}",
                    role.name
                );
            }
        }
    }
    out.push_str(
        "host      all          all              127.0.0.1/32   scram-sha-256\n\
         host      replication  all              127.0.0.1/32   scram-sha-256\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn settings_are_quoted_and_validated() {
        let extra = vec![
            ("fsync".to_owned(), "off".to_owned()),
            ("application_name".to_owned(), r"it's a \ test".to_owned()),
        ];
        let text = render_settings(&ServerSettings {
            port: 5555,
            socket_dir: Path::new("/tmp/sock"),
            tls: true,
            extra: &extra,
        })
        .expect("render");
        assert!(text.contains("port = 5555\n"));
        assert!(text.contains("unix_socket_directories = '/tmp/sock'\n"));
        assert!(text.contains("ssl = 'on'\n"));
        assert!(text.contains("fsync = 'off'\n"));
        assert!(text.contains(r"application_name = 'it''s a \\ test'"));
        assert_eq!(recorded_port(&text), Some(5555));

        assert!(validate_setting("bad name", "x").is_err());
        assert!(validate_setting("work_mem", "1\n2").is_err());
        assert!(validate_setting("port", "1").is_err());
        assert!(validate_setting("auto_explain.log_min_duration", "0").is_ok());
    }

    #[test]
    fn hba_trusts_nobody_and_puts_the_test_roles_first() {
        let hba = render_hba(true, true);
        assert!(is_our_hba(&hba));
        assert!(!hba.contains("trust\n"), "{hba}");
        for line in hba.lines().filter(|l| !l.starts_with('#')) {
            let method = line.split_whitespace().last().expect("a method");
            assert!(
                ["scram-sha-256", "md5", "password", "reject"].contains(&method),
                "{line}"
            );
        }
        let position = |needle: &str| hba.find(needle).expect(needle);
        assert!(position("hostssl   all          sluice_tls") < position("hostnossl"));
        assert!(
            position("sluice_md5       127.0.0.1/32   md5")
                < position("all              127.0.0.1/32   scram-sha-256")
        );
        let no_tls = render_hba(true, false);
        assert!(!no_tls.contains("hostssl"));
        assert!(no_tls.contains("sluice_tls       127.0.0.1/32   reject"));
        assert!(!render_hba(false, true).contains("sluice_"));
    }

    #[test]
    fn include_is_added_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let conf = dir.path().join("postgresql.conf");
        std::fs::write(&conf, "max_connections = 100").expect("write");
        ensure_included(&conf).expect("first");
        ensure_included(&conf).expect("second");
        let text = std::fs::read_to_string(&conf).expect("read");
        assert_eq!(text.matches(INCLUDE_LINE).count(), 1);
        assert!(text.starts_with("max_connections = 100\n"));
    }

    proptest! {
        #[test]
        fn recorded_port_never_panics(text in "\\PC{0,200}") {
            let _ = recorded_port(&text);
        }

        #[test]
        fn rendered_port_reads_back(port in 1u16.., value in "[^\n\r\0]{0,40}") {
            let extra = vec![("application_name".to_owned(), value)];
            let text = render_settings(&ServerSettings {
                port,
                socket_dir: Path::new("/s"),
                tls: false,
                extra: &extra,
            }).expect("render");
            prop_assert_eq!(recorded_port(&text), Some(port));
            // One line per setting: values cannot break out of their line.
            prop_assert_eq!(text.lines().count(), 2 + 4 + 1);
        }
    }
}
