//! `sluice serve`'s settings: the TOML file, `SLUICE_*` variables and flags, merged in that order.
//!
//! Every setting has a file key `section.key` and a variable `SLUICE_SECTION_KEY` (see
//! [`KEYS`]); a flag beats a variable, a variable beats the file, the file beats the default.
//! Each source is checked on its own first, so an error names where the bad value came from.

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;
use toml::{Table, Value};

/// Every setting: (section, key, what it is). The variable is `SLUICE_{SECTION}_{KEY}`.
pub const KEYS: &[(&str, &str, &str)] = &[
    (
        "database",
        "url",
        "database URL or conninfo; empty: the embedded PostgreSQL",
    ),
    (
        "database",
        "data_dir",
        "data directory of the embedded PostgreSQL",
    ),
    ("database", "pg_port", "port of the embedded PostgreSQL"),
    ("pool", "size", "most database connections"),
    ("pool", "min_idle", "connections kept open while unused"),
    ("pool", "acquire_timeout", "longest wait for a connection"),
    (
        "pool",
        "max_lifetime",
        "connections are replaced after this (0: never)",
    ),
    (
        "pool",
        "idle_timeout",
        "idle connections are closed after this (0: never)",
    ),
    ("http", "listen", "address of the HTTP gate"),
    ("http", "body_limit", "largest request body (413 beyond)"),
    (
        "http",
        "body_timeout",
        "longest wait for the next chunk of a body (408 beyond)",
    ),
    (
        "http",
        "header_timeout",
        "longest wait for a request head or the next request",
    ),
    (
        "http",
        "max_connections",
        "most HTTP connections served at once",
    ),
    (
        "http",
        "keep_alive",
        "keep connections open between requests",
    ),
    (
        "http",
        "shutdown_timeout",
        "longest wait for in-flight requests at shutdown",
    ),
    ("http", "access_log", "log one line per request"),
    ("resp", "listen", "address of the Redis protocol gate"),
    (
        "resp",
        "password",
        "password Redis clients give with AUTH or HELLO",
    ),
    ("resp", "io_threads", "threads serving Redis connections"),
    (
        "resp",
        "busy_poll_us",
        "microseconds a Redis connection thread polls after its last request before sleeping (0: never)",
    ),
    (
        "influx",
        "enabled",
        "mount the InfluxDB write API (/write, /api/v2/write, /ping, /health, /query)",
    ),
    (
        "influx",
        "token",
        "tokens Influx clients may send, comma-separated (empty: none)",
    ),
    ("influx", "tags_as_jsonb", "store tags in one jsonb column"),
    ("runtime", "threads", "worker threads of the main runtime"),
];

/// Older variable names still read, below their `SLUICE_SECTION_KEY` names.
const ALIASES: &[(&str, &str, &str)] = &[
    ("DATABASE_URL", "database", "url"),
    ("SLUICE_DATA_DIR", "database", "data_dir"),
    ("SLUICE_PG_PORT", "database", "pg_port"),
];

/// The file's shape; every key optional. Numbers, booleans, durations and sizes may also be
/// written as strings, which is how variables and flags arrive.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Layer {
    database: DatabaseLayer,
    pool: PoolLayer,
    http: HttpLayer,
    views: BTreeMap<String, PathBuf>,
    resp: RespLayer,
    influx: InfluxLayer,
    runtime: RuntimeLayer,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct DatabaseLayer {
    url: Option<String>,
    data_dir: Option<PathBuf>,
    #[serde(deserialize_with = "lenient")]
    pg_port: Option<u16>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct PoolLayer {
    #[serde(deserialize_with = "lenient")]
    size: Option<usize>,
    #[serde(deserialize_with = "lenient")]
    min_idle: Option<usize>,
    #[serde(deserialize_with = "lenient")]
    acquire_timeout: Option<Span>,
    #[serde(deserialize_with = "lenient")]
    max_lifetime: Option<Span>,
    #[serde(deserialize_with = "lenient")]
    idle_timeout: Option<Span>,
    #[serde(deserialize_with = "lenient")]
    reset: Option<ResetMode>,
}

/// What a connection given back to the pool forgets before its next request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResetMode {
    /// Session state too (settings, temporary tables, listens, advisory locks, held cursors):
    /// safe for any SQL, at the price of a reset in front of the next statement.
    Session,
    /// Only an open transaction (rolled back): for views whose SQL changes no session state.
    Transaction,
}

impl FromStr for ResetMode {
    type Err = String;
    fn from_str(text: &str) -> Result<ResetMode, String> {
        match text.trim() {
            "session" => Ok(ResetMode::Session),
            "transaction" => Ok(ResetMode::Transaction),
            other => Err(format!("{other:?} is not session or transaction")),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct HttpLayer {
    #[serde(deserialize_with = "lenient")]
    listen: Option<SocketAddr>,
    #[serde(deserialize_with = "lenient")]
    body_limit: Option<Size>,
    #[serde(deserialize_with = "lenient")]
    body_timeout: Option<Span>,
    #[serde(deserialize_with = "lenient")]
    header_timeout: Option<Span>,
    #[serde(deserialize_with = "lenient")]
    max_connections: Option<usize>,
    #[serde(deserialize_with = "lenient")]
    keep_alive: Option<bool>,
    #[serde(deserialize_with = "lenient")]
    shutdown_timeout: Option<Span>,
    #[serde(deserialize_with = "lenient")]
    access_log: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct RespLayer {
    #[serde(deserialize_with = "lenient")]
    listen: Option<SocketAddr>,
    password: Option<String>,
    #[serde(deserialize_with = "lenient")]
    io_threads: Option<usize>,
    #[serde(deserialize_with = "lenient")]
    busy_poll_us: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct InfluxLayer {
    #[serde(deserialize_with = "lenient")]
    enabled: Option<bool>,
    token: Option<String>,
    #[serde(deserialize_with = "lenient")]
    tags_as_jsonb: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct RuntimeLayer {
    #[serde(deserialize_with = "lenient")]
    threads: Option<usize>,
}

/// A value given natively in TOML or as text (variables, flags, quoted in the file).
#[derive(Deserialize)]
#[serde(untagged)]
enum NativeOrText<T> {
    Native(T),
    Text(String),
}

fn lenient<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + FromStr,
    T::Err: std::fmt::Display,
{
    match NativeOrText::<T>::deserialize(deserializer)? {
        NativeOrText::Native(value) => Ok(Some(value)),
        NativeOrText::Text(text) => text
            .trim()
            .parse()
            .map(Some)
            .map_err(|error| serde::de::Error::custom(format!("{text:?}: {error}"))),
    }
}

/// A duration: `250ms`, `5s`, `2m`, `1h`, or a number of seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span(pub Duration);

impl FromStr for Span {
    type Err = String;
    fn from_str(text: &str) -> Result<Span, String> {
        let text = text.trim();
        let split = text
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(text.len());
        let (number, unit) = text.split_at(split);
        let number: f64 = number
            .parse()
            .map_err(|_| "expected a duration such as 500ms, 5s, 2m or 1h".to_string())?;
        let seconds = match unit.trim() {
            "" | "s" => number,
            "ms" => number / 1000.0,
            "m" | "min" => number * 60.0,
            "h" => number * 3600.0,
            other => return Err(format!("unknown duration unit {other:?} (ms, s, m or h)")),
        };
        Duration::try_from_secs_f64(seconds)
            .map(Span)
            .map_err(|error| error.to_string())
    }
}

impl<'de> Deserialize<'de> for Span {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Span, D::Error> {
        let seconds = f64::deserialize(deserializer)?;
        Duration::try_from_secs_f64(seconds)
            .map(Span)
            .map_err(serde::de::Error::custom)
    }
}

/// A size in bytes: `1048576`, `64KiB`, `256MiB`, `1GiB` (KB/MB/GB are powers of 1000).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size(pub u64);

impl FromStr for Size {
    type Err = String;
    fn from_str(text: &str) -> Result<Size, String> {
        let text = text.trim();
        let split = text
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len());
        let (number, unit) = text.split_at(split);
        let number: u64 = number
            .parse()
            .map_err(|_| "expected a size such as 1048576, 64KiB or 256MiB".to_string())?;
        let factor: u64 = match unit.trim() {
            "" | "B" => 1,
            "KiB" => 1 << 10,
            "MiB" => 1 << 20,
            "GiB" => 1 << 30,
            "KB" | "kB" => 1_000,
            "MB" => 1_000_000,
            "GB" => 1_000_000_000,
            other => return Err(format!("unknown size unit {other:?} (B, KiB, MiB, GiB)")),
        };
        number
            .checked_mul(factor)
            .map(Size)
            .ok_or_else(|| "the size is too large".to_string())
    }
}

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Size, D::Error> {
        u64::deserialize(deserializer).map(Size)
    }
}

/// The resolved settings `serve` runs with.
#[derive(Debug, Clone)]
pub struct Settings {
    pub database_url: Option<String>,
    pub data_dir: Option<PathBuf>,
    pub pg_port: Option<u16>,
    pub pool: sluice_pg::PoolSettings,
    /// The HTTP gate's address, when it runs.
    pub http: Option<SocketAddr>,
    pub server: sluice_http::ServerOptions,
    /// `(prefix, view file)`, in prefix order.
    pub views: Vec<(String, PathBuf)>,
    pub resp: Option<SocketAddr>,
    pub resp_password: Option<String>,
    pub resp_io_threads: usize,
    pub resp_busy_poll: std::time::Duration,
    pub influx: InfluxSettings,
    pub threads: Option<usize>,
}

/// The Influx gate's settings (the gate reads what it needs).
#[derive(Debug, Clone, Default)]
pub struct InfluxSettings {
    pub enabled: bool,
    /// Accepted tokens (the `token` key, comma-separated); empty: no authentication.
    pub tokens: Vec<String>,
    pub tags_as_jsonb: bool,
}

/// Where the HTTP gate listens when nothing says otherwise.
pub const DEFAULT_HTTP: &str = "127.0.0.1:8080";

/// The settings from the file (if any), the variables `env` gives, and the flags `flags`
/// (a table shaped like the file, values as text).
pub fn resolve(
    file: Option<&Path>,
    env: impl Fn(&str) -> Option<String>,
    flags: Table,
) -> Result<Settings> {
    let file_table = match file {
        Some(path) => read_file(path)?,
        None => Table::new(),
    };
    let env_table = env_layer(&env);
    check(&file_table).with_context(|| match file {
        Some(path) => format!("in {}", path.display()),
        None => String::new(),
    })?;
    check(&env_table).context("in the SLUICE_* environment variables")?;
    check(&flags).context("in the command-line options")?;
    let merged = overlay(overlay(file_table, env_table), flags);
    let layer: Layer = Value::Table(merged)
        .try_into()
        .context("merging the settings")?;
    Ok(settle(layer))
}

/// The file as a table, with view paths made relative to the file's folder.
fn read_file(path: &Path) -> Result<Table> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the config file {}", path.display()))?;
    let mut table: Table = toml::from_str(&text)
        .with_context(|| format!("parsing the config file {}", path.display()))?;
    let base = path.parent().unwrap_or(Path::new("."));
    if let Some(Value::Table(views)) = table.get_mut("views") {
        for (_, value) in views.iter_mut() {
            if let Value::String(file) = value {
                let resolved = base.join(file.as_str()).to_string_lossy().into_owned();
                *value = Value::String(resolved);
            }
        }
    }
    Ok(table)
}

/// Variables as a table of text values. `SLUICE_VIEWS` holds `prefix=file` pairs separated
/// by commas.
fn env_layer(env: &impl Fn(&str) -> Option<String>) -> Table {
    let mut table = Table::new();
    for (variable, section, key) in ALIASES {
        if let Some(value) = env(variable) {
            set(&mut table, section, key, value);
        }
    }
    for (section, key, _) in KEYS {
        let variable = format!("SLUICE_{}_{}", section, key).to_uppercase();
        if let Some(value) = env(&variable) {
            set(&mut table, section, key, value);
        }
    }
    if let Some(views) = env("SLUICE_VIEWS") {
        for pair in views.split(',').filter(|pair| !pair.trim().is_empty()) {
            let (prefix, file) = pair.split_once('=').unwrap_or((pair, ""));
            set(&mut table, "views", prefix.trim(), file.trim().to_string());
        }
    }
    table
}

/// Sets `section.key` to a text value in a file-shaped table.
pub fn set(table: &mut Table, section: &str, key: &str, value: String) {
    let entry = table
        .entry(section.to_string())
        .or_insert_with(|| Value::Table(Table::new()));
    if let Value::Table(section) = entry {
        section.insert(key.to_string(), Value::String(value));
    }
}

/// `upper` over `lower`, key by key within each section.
fn overlay(mut lower: Table, upper: Table) -> Table {
    for (name, value) in upper {
        match (lower.get_mut(&name), value) {
            (Some(Value::Table(low)), Value::Table(up)) => {
                for (key, value) in up {
                    low.insert(key, value);
                }
            }
            (_, value) => {
                lower.insert(name, value);
            }
        }
    }
    lower
}

fn check(table: &Table) -> Result<()> {
    let _: Layer = Value::Table(table.clone()).try_into()?;
    for (prefix, _) in table
        .get("views")
        .and_then(Value::as_table)
        .into_iter()
        .flatten()
    {
        if !prefix.starts_with('/') {
            bail!("the view prefix {prefix:?} must start with /");
        }
    }
    Ok(())
}

/// Applies the defaults.
fn settle(layer: Layer) -> Settings {
    let mut pool = sluice_pg::PoolSettings::default();
    if let Some(size) = layer.pool.size {
        pool.set_max_size(size.max(1));
    }
    if let Some(min_idle) = layer.pool.min_idle {
        pool.set_min_idle(min_idle);
    }
    if let Some(Span(timeout)) = layer.pool.acquire_timeout {
        pool.set_acquire_timeout(timeout);
    }
    let never_if_zero = |span: Span| (!span.0.is_zero()).then_some(span.0);
    if let Some(span) = layer.pool.max_lifetime {
        pool.set_max_lifetime(never_if_zero(span));
    }
    if let Some(span) = layer.pool.idle_timeout {
        pool.set_idle_timeout(never_if_zero(span));
    }
    pool.set_reset(match layer.pool.reset.unwrap_or(ResetMode::Session) {
        ResetMode::Session => sluice_pg::pool::Reset::Session,
        ResetMode::Transaction => sluice_pg::pool::Reset::TransactionOnly,
    });
    let defaults = sluice_http::ServerOptions::default();
    let h = &layer.http;
    let server = sluice_http::ServerOptions {
        body_limit: h.body_limit.map_or(defaults.body_limit, |s| {
            usize::try_from(s.0).unwrap_or(usize::MAX)
        }),
        body_timeout: h.body_timeout.map_or(defaults.body_timeout, |s| s.0),
        header_timeout: h.header_timeout.map_or(defaults.header_timeout, |s| s.0),
        max_connections: h.max_connections.unwrap_or(defaults.max_connections),
        keep_alive: h.keep_alive.unwrap_or(defaults.keep_alive),
        shutdown_timeout: h
            .shutdown_timeout
            .map_or(defaults.shutdown_timeout, |s| s.0),
        access_log: h.access_log.unwrap_or(defaults.access_log),
    };
    let influx = InfluxSettings {
        // On by default: Telegraf and InfluxDB clients expect the write API on the HTTP listener.
        enabled: layer.influx.enabled.unwrap_or(true),
        tokens: layer
            .influx
            .token
            .iter()
            .flat_map(|t| t.split(','))
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect(),
        tags_as_jsonb: layer.influx.tags_as_jsonb.unwrap_or(false),
    };
    // HTTP runs unless the Redis gate was asked for alone (it needs no database).
    let wants_http = h.listen.is_some()
        || !layer.views.is_empty()
        || layer.influx.enabled == Some(true)
        || layer.resp.listen.is_none();
    let http = wants_http.then(|| {
        h.listen.unwrap_or_else(|| {
            DEFAULT_HTTP
                .parse()
                .unwrap_or(SocketAddr::from(([127, 0, 0, 1], 8080)))
        })
    });
    Settings {
        database_url: layer.database.url.filter(|url| !url.is_empty()),
        data_dir: layer.database.data_dir,
        pg_port: layer.database.pg_port,
        pool,
        http,
        server,
        views: layer.views.into_iter().collect(),
        resp: layer.resp.listen,
        resp_password: layer.resp.password.filter(|p| !p.is_empty()),
        resp_io_threads: layer.resp.io_threads.unwrap_or(1),
        resp_busy_poll: layer.resp.busy_poll_us.map_or(
            sluice_resp::Config::default().busy_poll,
            std::time::Duration::from_micros,
        ),
        influx,
        threads: layer.runtime.threads,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(pairs: &[(&str, &str, &str)]) -> Table {
        let mut table = Table::new();
        for (section, key, value) in pairs {
            set(&mut table, section, key, value.to_string());
        }
        table
    }

    fn file(text: &str) -> tempfile_path::TempToml {
        tempfile_path::TempToml::new(text)
    }

    /// A config file in the system's temp folder, removed on drop.
    mod tempfile_path {
        pub struct TempToml(pub std::path::PathBuf);
        impl TempToml {
            pub fn new(text: &str) -> TempToml {
                static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
                let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let path = std::env::temp_dir()
                    .join(format!("sluice-config-{}-{n}.toml", std::process::id()));
                std::fs::write(&path, text).unwrap();
                TempToml(path)
            }
        }
        impl Drop for TempToml {
            fn drop(&mut self) {
                let _ = std::fs::remove_file(&self.0);
            }
        }
    }

    const FILE: &str = r#"
        [database]
        url = "postgres://file/db"
        [pool]
        size = 3
        acquire_timeout = "250ms"
        [http]
        listen = "127.0.0.1:9001"
        body_limit = "1MiB"
        header_timeout = 2
        [views]
        "/films" = "views/films.json"
    "#;

    #[test]
    fn flag_beats_env_beats_file_beats_default() {
        let config = file(FILE);
        let env = |name: &str| match name {
            "SLUICE_POOL_SIZE" => Some("4".to_string()),
            "SLUICE_HTTP_LISTEN" => Some("127.0.0.1:9002".to_string()),
            "DATABASE_URL" => Some("postgres://alias/db".to_string()),
            _ => None,
        };
        let flags = table(&[("http", "listen", "127.0.0.1:9003")]);
        let s = resolve(Some(&config.0), env, flags).unwrap();
        assert_eq!(
            s.http,
            Some("127.0.0.1:9003".parse().unwrap()),
            "flag over env"
        );
        assert_eq!(s.pool.max_size(), 4, "env over file");
        assert_eq!(
            s.database_url.as_deref(),
            Some("postgres://alias/db"),
            "env alias over file"
        );
        assert_eq!(
            s.pool.acquire_timeout(),
            Duration::from_millis(250),
            "file over default"
        );
        assert_eq!(s.server.body_limit, 1 << 20);
        assert_eq!(s.pool.reset(), sluice_pg::pool::Reset::Session, "default");
        assert_eq!(s.server.header_timeout, Duration::from_secs(2));
        let defaults = sluice_http::ServerOptions::default();
        assert_eq!(
            s.server.max_connections, defaults.max_connections,
            "default"
        );
        let (prefix, path) = s.views.first().unwrap();
        assert_eq!(prefix, "/films");
        assert_eq!(path, &config.0.parent().unwrap().join("views/films.json"));
    }

    #[test]
    fn the_redis_busy_poll_defaults_and_can_be_turned_off() {
        let none = |_: &str| None;
        let s = resolve(None, none, Table::new()).unwrap();
        assert_eq!(s.resp_busy_poll, sluice_resp::Config::default().busy_poll);
        let env = |name: &str| (name == "SLUICE_RESP_BUSY_POLL_US").then(|| "0".to_string());
        let s = resolve(None, env, Table::new()).unwrap();
        assert_eq!(s.resp_busy_poll, Duration::ZERO);
        let flags = table(&[("resp", "busy_poll_us", "35")]);
        let s = resolve(None, none, flags).unwrap();
        assert_eq!(s.resp_busy_poll, Duration::from_micros(35));
    }

    #[test]
    fn the_sluice_name_beats_its_alias() {
        let env = |name: &str| match name {
            "SLUICE_DATABASE_URL" => Some("postgres://sluice/db".to_string()),
            "DATABASE_URL" => Some("postgres://alias/db".to_string()),
            _ => None,
        };
        let s = resolve(None, env, Table::new()).unwrap();
        assert_eq!(s.database_url.as_deref(), Some("postgres://sluice/db"));
    }

    #[test]
    fn errors_name_their_source() {
        let env = |name: &str| (name == "SLUICE_POOL_SIZE").then(|| "many".to_string());
        let error = format!("{:#}", resolve(None, env, Table::new()).unwrap_err());
        assert!(error.contains("SLUICE_* environment variables"), "{error}");
        let config = file("[http]\nlisten = 12\n");
        let error = format!(
            "{:#}",
            resolve(Some(&config.0), |_| None, Table::new()).unwrap_err()
        );
        assert!(error.contains(&config.0.display().to_string()), "{error}");
        let config = file("[http]\nlissen = \"127.0.0.1:1\"\n");
        let error = format!(
            "{:#}",
            resolve(Some(&config.0), |_| None, Table::new()).unwrap_err()
        );
        assert!(error.contains("lissen"), "{error}");
        let flags = table(&[("views", "films", "f.json")]);
        let error = format!("{:#}", resolve(None, |_| None, flags).unwrap_err());
        assert!(
            error.contains("command-line") && error.contains("films"),
            "{error}"
        );
    }

    #[test]
    fn the_redis_gate_alone_runs_without_http() {
        let flags = table(&[("resp", "listen", "127.0.0.1:6390")]);
        let s = resolve(None, |_| None, flags).unwrap();
        assert_eq!(s.http, None);
        let mut flags = table(&[("resp", "listen", "127.0.0.1:6390")]);
        set(&mut flags, "views", "/a", "a.json".into());
        let s = resolve(None, |_| None, flags).unwrap();
        assert_eq!(s.http, Some(DEFAULT_HTTP.parse().unwrap()));
        let s = resolve(None, |_| None, Table::new()).unwrap();
        assert_eq!(s.http, Some(DEFAULT_HTTP.parse().unwrap()));
    }

    #[test]
    fn spans_and_sizes() {
        assert_eq!(
            "500ms".parse::<Span>().unwrap().0,
            Duration::from_millis(500)
        );
        assert_eq!(
            "1.5s".parse::<Span>().unwrap().0,
            Duration::from_millis(1500)
        );
        assert_eq!("2m".parse::<Span>().unwrap().0, Duration::from_secs(120));
        assert_eq!("7".parse::<Span>().unwrap().0, Duration::from_secs(7));
        assert!("5 parsecs".parse::<Span>().is_err());
        assert!("".parse::<Span>().is_err());
        assert_eq!("256MiB".parse::<Size>().unwrap().0, 256 << 20);
        assert_eq!("10MB".parse::<Size>().unwrap().0, 10_000_000);
        assert_eq!("123".parse::<Size>().unwrap().0, 123);
        assert!("1EiB".parse::<Size>().is_err());
        assert!("99999999999999GiB".parse::<Size>().is_err());
    }

    #[test]
    fn the_sample_config_names_every_key() {
        let sample = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sluice.toml");
        let text = std::fs::read_to_string(&sample).unwrap();
        let table: Table = toml::from_str(&text).unwrap();
        for (section, key, _) in KEYS {
            let present = table
                .get(*section)
                .and_then(Value::as_table)
                .is_some_and(|s| s.contains_key(*key));
            // Keys without a useful sample value are shown commented out.
            let commented = text.contains(&format!("# {key} = "));
            assert!(present || commented, "sluice.toml lacks {section}.{key}");
        }
        resolve(Some(&sample), |_| None, Table::new()).unwrap();
    }
}
