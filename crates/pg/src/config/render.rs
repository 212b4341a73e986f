//! Rendering a `Config` back into a conninfo string that parses to the same settings.

use std::time::Duration;

use super::Config;
use super::conninfo::push_pair;

impl Config {
    /// Every libpq setting of this `Config` as a conninfo string, each value single-quoted, so
    /// that parsing it (with the same `HOME`) gives an equal `Config`. sluice-pg's own tuning
    /// knobs are not included (they are not keywords).
    ///
    /// **The result contains the passwords** when they are set: do not log it.
    pub fn to_conninfo_string(&self) -> String {
        let mut out = String::new();
        let hosts = &self.hosts;
        if hosts.len() > 1 || hosts.iter().any(|h| h.host.is_some()) {
            let list: Vec<&str> = hosts
                .iter()
                .map(|h| h.host.as_deref().unwrap_or(""))
                .collect();
            push_pair(&mut out, "host", &list.join(","));
        }
        if hosts.iter().any(|h| h.hostaddr.is_some()) {
            let list: Vec<String> = hosts
                .iter()
                .map(|h| h.hostaddr.map(|a| a.to_string()).unwrap_or_default())
                .collect();
            push_pair(&mut out, "hostaddr", &list.join(","));
        }
        let ports: Vec<String> = match hosts.split_first() {
            Some((first, rest)) if rest.iter().all(|h| h.port == first.port) => {
                vec![first.port.to_string()]
            }
            _ => hosts.iter().map(|h| h.port.to_string()).collect(),
        };
        push_pair(&mut out, "port", &ports.join(","));
        push_pair(&mut out, "user", &self.user);
        let optional = [
            ("password", self.password.as_deref()),
            ("dbname", self.dbname.as_deref()),
            ("options", self.options.as_deref()),
            ("application_name", self.application_name.as_deref()),
            (
                "fallback_application_name",
                self.fallback_application_name.as_deref(),
            ),
            ("sslpassword", self.ssl_password.as_deref()),
        ];
        for (keyword, value) in optional {
            if let Some(value) = value {
                push_pair(&mut out, keyword, value);
            }
        }
        let paths = [
            ("passfile", &self.passfile),
            ("sslrootcert", &self.ssl_root_cert),
            ("sslcert", &self.ssl_cert),
            ("sslkey", &self.ssl_key),
        ];
        for (keyword, path) in paths {
            if let Some(path) = path {
                push_pair(&mut out, keyword, &path.to_string_lossy());
            }
        }
        let seconds = |d: Option<Duration>| d.map_or(0, |d| d.as_secs_f64().ceil() as u64);
        let numbers = [
            ("connect_timeout", seconds(self.connect_timeout)),
            ("keepalives", u64::from(self.keepalives)),
            ("keepalives_idle", seconds(self.keepalives_idle)),
            ("keepalives_interval", seconds(self.keepalives_interval)),
            (
                "keepalives_count",
                self.keepalives_count.map_or(0, u64::from),
            ),
            (
                "tcp_user_timeout",
                self.tcp_user_timeout
                    .map_or(0, |d| d.as_millis().try_into().unwrap_or(u64::MAX)),
            ),
        ];
        for (keyword, number) in numbers {
            push_pair(&mut out, keyword, &number.to_string());
        }
        push_pair(&mut out, "sslmode", self.ssl_mode.as_str());
        push_pair(&mut out, "channel_binding", self.channel_binding.as_str());
        push_pair(
            &mut out,
            "target_session_attrs",
            self.target_session_attrs.as_str(),
        );
        push_pair(
            &mut out,
            "load_balance_hosts",
            self.load_balance_hosts.as_str(),
        );
        out
    }
}
