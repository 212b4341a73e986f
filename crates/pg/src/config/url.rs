//! The `postgresql://` URI syntax: user-info, host lists, IPv6 brackets, percent-decoding, query parameters.

use super::error::{ConfigError, ErrorKind, Origin};
use super::keywords::{Keyword, RawSettings};

const PREFIXES: [&str; 2] = ["postgresql://", "postgres://"];

/// Whether `s` is a URI (libpq compares the scheme case-sensitively).
pub(crate) fn is_uri(s: &str) -> bool {
    PREFIXES.iter().any(|p| s.starts_with(p))
}

/// Parses `postgresql://[user[:password]@][netloc][:port][,...][/dbname][?param=value&...]`
/// into `out`, following libpq's `conninfo_uri_parse_options`:
///
/// * user-info is recognised only when an `@` comes before the first `/`;
/// * each netloc is `host[:port]` or `[ipv6][:port]`, separated by commas; an empty host or port
///   means the default (the lists keep their empty entries so positions line up);
/// * every component is percent-decoded (`%00` is refused);
/// * query parameters may name any keyword and override the parts before them; `ssl=true` means
///   `sslmode=require` (for JDBC compatibility, as libpq).
pub(crate) fn parse(s: &str, out: &mut RawSettings) -> Result<(), ConfigError> {
    let Some(prefix) = PREFIXES.iter().find(|p| s.starts_with(*p)) else {
        return Err(ConfigError::new(
            ErrorKind::Syntax,
            Origin::Text(0),
            "a connection URI must start with postgresql:// or postgres://",
        ));
    };
    let bytes = s.as_bytes();
    let at = |i: usize| bytes.get(i).copied();
    let mut p = prefix.len();

    // User-info: only if an '@' comes before the first '/'.
    let mut look = p;
    while at(look).is_some_and(|b| b != b'@' && b != b'/') {
        look += 1;
    }
    if at(look) == Some(b'@') {
        let mut user_end = p;
        while at(user_end).is_some_and(|b| b != b':' && b != b'@') {
            user_end += 1;
        }
        let user = slice(s, p, user_end);
        if !user.is_empty() {
            let user = decode(user, p, Secret::No)?;
            out.set(Keyword::User, user, Origin::Text(p));
        }
        if at(user_end) == Some(b':') {
            let password = slice(s, user_end + 1, look);
            if !password.is_empty() {
                let password = decode(password, user_end + 1, Secret::Yes)?;
                out.set(Keyword::Password, password, Origin::Text(user_end + 1));
            }
        }
        p = look + 1;
    }

    // Host list.
    let hosts_start = p;
    let mut hosts = String::new();
    let mut ports = String::new();
    let mut ports_start = None;
    let terminator = loop {
        let (host, host_at) = if at(p) == Some(b'[') {
            let open = p;
            p += 1;
            let start = p;
            while at(p).is_some_and(|b| b != b']') {
                p += 1;
            }
            if at(p).is_none() {
                return Err(syntax(
                    open,
                    "end of string reached when looking for matching \"]\" in IPv6 host address in URI",
                ));
            }
            if p == start {
                return Err(syntax(open, "IPv6 host address may not be empty in URI"));
            }
            let host = slice(s, start, p);
            p += 1;
            if let Some(b) = at(p)
                && !matches!(b, b':' | b'/' | b'?' | b',')
            {
                let c = s.get(p..).and_then(|r| r.chars().next()).unwrap_or('?');
                return Err(syntax(
                    p,
                    format!("unexpected character \"{c}\" in URI (expected \":\" or \"/\")"),
                ));
            }
            (host, start)
        } else {
            let start = p;
            while at(p).is_some_and(|b| !matches!(b, b':' | b'/' | b'?' | b',')) {
                p += 1;
            }
            (slice(s, start, p), start)
        };
        hosts.push_str(&decode(host, host_at, Secret::No)?);
        let mut term = at(p);
        if term == Some(b':') {
            p += 1;
            let start = p;
            ports_start.get_or_insert(start);
            while at(p).is_some_and(|b| !matches!(b, b'/' | b'?' | b',')) {
                p += 1;
            }
            ports.push_str(&decode(slice(s, start, p), start, Secret::No)?);
            term = at(p);
        }
        if term != Some(b',') {
            break term;
        }
        p += 1;
        hosts.push(',');
        ports.push(',');
    };
    if !hosts.is_empty() {
        out.set(Keyword::Host, hosts, Origin::Text(hosts_start));
    }
    if !ports.is_empty() {
        let origin = Origin::Text(ports_start.unwrap_or(hosts_start));
        out.set(Keyword::Port, ports, origin);
    }

    // Database name; an empty one is not stored, so PGDATABASE still applies (as libpq).
    let mut terminator = terminator;
    if terminator == Some(b'/') {
        p += 1;
        let start = p;
        while at(p).is_some_and(|b| b != b'?') {
            p += 1;
        }
        let dbname = slice(s, start, p);
        if !dbname.is_empty() {
            out.set(
                Keyword::Dbname,
                decode(dbname, start, Secret::No)?,
                Origin::Text(start),
            );
        }
        terminator = at(p);
    }

    if terminator == Some(b'?') {
        parse_query(s, p + 1, out)?;
    }
    Ok(())
}

/// Parses `key=value&key=value` starting at byte `start` of `s`.
fn parse_query(s: &str, start: usize, out: &mut RawSettings) -> Result<(), ConfigError> {
    let mut offset = start;
    let query = slice(s, start, s.len());
    let mut rest = query;
    while !rest.is_empty() {
        let (param, next) = match rest.find('&') {
            Some(amp) => (slice(rest, 0, amp), slice(rest, amp + 1, rest.len())),
            None => (rest, ""),
        };
        let Some(eq) = param.find('=') else {
            return Err(syntax(
                offset,
                format!("missing key/value separator \"=\" in URI query parameter: \"{param}\""),
            ));
        };
        let raw_key = slice(param, 0, eq);
        let raw_value = slice(param, eq + 1, param.len());
        if raw_value.contains('=') {
            return Err(syntax(
                offset,
                format!("extra key/value separator \"=\" in URI query parameter: \"{raw_key}\""),
            ));
        }
        let key = decode(raw_key, offset, Secret::No)?;
        let value_at = offset + eq + 1;
        let secret = if key == "password" || key == "sslpassword" {
            Secret::Yes
        } else {
            Secret::No
        };
        let mut value = decode(raw_value, value_at, secret)?;
        let keyword = if key == "ssl" && value == "true" {
            value = "require".to_owned();
            Keyword::Sslmode
        } else {
            Keyword::lookup(&key, Origin::Text(offset), |k| {
                format!("invalid URI query parameter: \"{k}\"")
            })?
        };
        out.set(keyword, value, Origin::Text(value_at));
        offset += param.len() + 1;
        rest = next;
    }
    Ok(())
}

fn slice(s: &str, from: usize, to: usize) -> &str {
    s.get(from..to).unwrap_or_default()
}

fn syntax(offset: usize, message: impl Into<String>) -> ConfigError {
    ConfigError::new(ErrorKind::Syntax, Origin::Text(offset), message)
}

/// Whether a component holds a secret, so error messages must not quote it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Secret {
    Yes,
    No,
}

/// Percent-decodes `text`, which starts at byte `offset` of the URI. `+` stays `+` (libpq does
/// not treat it as a space).
fn decode(text: &str, offset: usize, secret: Secret) -> Result<String, ConfigError> {
    if !text.contains('%') {
        return Ok(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b != b'%' {
            decoded.push(b);
            i += 1;
            continue;
        }
        let hex = |j: usize| bytes.get(j).and_then(|&h| (h as char).to_digit(16));
        let (Some(hi), Some(lo)) = (hex(i + 1), hex(i + 2)) else {
            let shown = if secret == Secret::Yes {
                String::new()
            } else {
                format!(" in \"{text}\"")
            };
            return Err(
                syntax(offset + i, format!("invalid percent-encoded token{shown}"))
                    .with_hint("write % as %25; a % must be followed by two hex digits"),
            );
        };
        let value = (hi << 4 | lo) as u8;
        if value == 0 {
            return Err(syntax(
                offset + i,
                "forbidden value %00 in percent-encoded value",
            ));
        }
        decoded.push(value);
        i += 3;
    }
    String::from_utf8(decoded).map_err(|_| {
        syntax(offset, "percent-decoded value is not valid UTF-8")
            .with_hint("percent-encode text as UTF-8 bytes")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(s: &str) -> RawSettings {
        let mut raw = RawSettings::default();
        parse(s, &mut raw).unwrap();
        raw
    }

    fn text(raw: &RawSettings, k: Keyword) -> Option<&str> {
        raw.get(k).map(|v| v.text.as_str())
    }

    fn error(s: &str) -> ConfigError {
        let mut raw = RawSettings::default();
        parse(s, &mut raw).unwrap_err()
    }

    #[test]
    fn full_uri() {
        let raw = parsed(
            "postgresql://alice:s%40cret@db.example.com:5433/my%20db?sslmode=require&application_name=x",
        );
        assert_eq!(text(&raw, Keyword::User), Some("alice"));
        assert_eq!(text(&raw, Keyword::Password), Some("s@cret"));
        assert_eq!(text(&raw, Keyword::Host), Some("db.example.com"));
        assert_eq!(text(&raw, Keyword::Port), Some("5433"));
        assert_eq!(text(&raw, Keyword::Dbname), Some("my db"));
        assert_eq!(text(&raw, Keyword::Sslmode), Some("require"));
        assert_eq!(text(&raw, Keyword::ApplicationName), Some("x"));
    }

    #[test]
    fn short_scheme_and_empty_uri() {
        let raw = parsed("postgres://");
        assert_eq!(raw.get(Keyword::Host), None);
        assert_eq!(raw.get(Keyword::Dbname), None);
        let raw = parsed("postgres://h");
        assert_eq!(text(&raw, Keyword::Host), Some("h"));
        assert!(!is_uri("POSTGRESQL://h"));
        assert!(!is_uri("postgresql:/h"));
    }

    #[test]
    fn multiple_hosts_keep_empty_port_entries() {
        let raw = parsed("postgresql://host1:5432,host2,[::1]:5434/db");
        assert_eq!(text(&raw, Keyword::Host), Some("host1,host2,::1"));
        assert_eq!(text(&raw, Keyword::Port), Some("5432,,5434"));
        assert_eq!(text(&raw, Keyword::Dbname), Some("db"));
    }

    #[test]
    fn ipv6_host() {
        let raw = parsed("postgresql://[2001:db8::1234]/database");
        assert_eq!(text(&raw, Keyword::Host), Some("2001:db8::1234"));
        assert_eq!(raw.get(Keyword::Port), None);
        let raw = parsed("postgresql://[::1]:6000");
        assert_eq!(text(&raw, Keyword::Port), Some("6000"));
    }

    #[test]
    fn unix_socket_dir_as_encoded_host_or_query() {
        let raw = parsed("postgresql://%2Fvar%2Frun%2Fpostgresql/db");
        assert_eq!(text(&raw, Keyword::Host), Some("/var/run/postgresql"));
        assert_eq!(text(&raw, Keyword::Dbname), Some("db"));
        let raw = parsed("postgresql:///db?host=/tmp&port=5433");
        assert_eq!(text(&raw, Keyword::Host), Some("/tmp"));
        assert_eq!(text(&raw, Keyword::Port), Some("5433"));
    }

    #[test]
    fn user_info_without_password_and_empty_parts() {
        let raw = parsed("postgresql://bob@/");
        assert_eq!(text(&raw, Keyword::User), Some("bob"));
        assert_eq!(raw.get(Keyword::Host), None);
        assert_eq!(raw.get(Keyword::Dbname), None);
        let raw = parsed("postgresql://:pw@h");
        assert_eq!(raw.get(Keyword::User), None);
        assert_eq!(text(&raw, Keyword::Password), Some("pw"));
        // An '@' after the first '/' is not user-info.
        let raw = parsed("postgresql://h/db@x");
        assert_eq!(raw.get(Keyword::User), None);
        assert_eq!(text(&raw, Keyword::Dbname), Some("db@x"));
    }

    #[test]
    fn query_overrides_and_ssl_true() {
        let raw = parsed("postgresql://a/b?host=c&dbname=d&ssl=true");
        assert_eq!(text(&raw, Keyword::Host), Some("c"));
        assert_eq!(text(&raw, Keyword::Dbname), Some("d"));
        assert_eq!(text(&raw, Keyword::Sslmode), Some("require"));
        let raw = parsed("postgresql://a?options=-c%20x%3Dy&");
        assert_eq!(text(&raw, Keyword::Options), Some("-c x=y"));
    }

    #[test]
    fn plus_is_not_a_space() {
        let raw = parsed("postgresql://h?application_name=a+b");
        assert_eq!(text(&raw, Keyword::ApplicationName), Some("a+b"));
    }

    #[test]
    fn unknown_query_parameter_is_named() {
        let e = error("postgresql://h/db?foo=1");
        assert_eq!(e.kind(), ErrorKind::UnknownOption);
        assert_eq!(e.keyword(), Some("foo"));
        assert_eq!(
            e.to_string(),
            "invalid URI query parameter: \"foo\" (at byte 18 of the connection string)"
        );
        let e = error("postgresql://h/db?ssl=false");
        assert_eq!(e.keyword(), Some("ssl"));
    }

    #[test]
    fn query_separator_errors() {
        let e = error("postgresql://h?sslmode");
        assert!(
            e.to_string().starts_with(
                "missing key/value separator \"=\" in URI query parameter: \"sslmode\""
            ),
            "{e}"
        );
        let e = error("postgresql://h?a=b=c");
        assert!(
            e.to_string()
                .starts_with("extra key/value separator \"=\" in URI query parameter: \"a\""),
            "{e}"
        );
        let e = error("postgresql://h?port=1&&user=x");
        assert_eq!(e.position(), Some(22));
    }

    #[test]
    fn ipv6_errors() {
        let e = error("postgresql://[::1");
        assert!(e.to_string().contains("matching \"]\""), "{e}");
        assert_eq!(e.position(), Some(13));
        let e = error("postgresql://[]/db");
        assert!(
            e.to_string()
                .starts_with("IPv6 host address may not be empty"),
            "{e}"
        );
        let e = error("postgresql://[::1]x");
        assert_eq!(
            e.to_string(),
            "unexpected character \"x\" in URI (expected \":\" or \"/\") (at byte 18 of the connection string)"
        );
    }

    #[test]
    fn percent_errors_do_not_echo_passwords() {
        let e = error("postgresql://u:se%zzcret@h");
        assert_eq!(e.kind(), ErrorKind::Syntax);
        assert_eq!(e.position(), Some(17));
        assert!(!e.to_string().contains("cret"), "{e}");
        let e = error("postgresql://h/d%0");
        assert!(
            e.to_string()
                .contains("invalid percent-encoded token in \"d%0\""),
            "{e}"
        );
        let e = error("postgresql://h/d%00");
        assert!(e.to_string().starts_with("forbidden value %00"), "{e}");
        let e = error("postgresql://h/d%ff");
        assert!(e.to_string().contains("not valid UTF-8"), "{e}");
    }
}
