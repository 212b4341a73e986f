//! Tests of the settings: precedence, errors naming their source, flags, the reference file.

use super::value::{Size, Span};
use super::*;
use clap::{Args, FromArgMatches};
use std::time::Duration;

/// Flags as `sluice serve` would parse them.
fn flags(argv: &[&str]) -> SettingFlags {
    let cmd = SettingFlags::augment_args(clap::Command::new("serve"));
    let matches = cmd
        .try_get_matches_from(std::iter::once("serve").chain(argv.iter().copied()))
        .unwrap();
    SettingFlags::from_arg_matches(&matches).unwrap()
}

fn resolve_flags(argv: &[&str]) -> anyhow::Result<Settings> {
    resolve(None, |_| None, &flags(argv).given, &[])
}

/// A config file in the system's temp folder, removed on drop.
struct TempToml(std::path::PathBuf);

impl TempToml {
    fn new(text: &str) -> TempToml {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("sluice-config-{}-{n}.toml", std::process::id()));
        std::fs::write(&path, text).unwrap();
        TempToml(path)
    }
}

impl Drop for TempToml {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
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
    let config = TempToml::new(FILE);
    let env = |name: &str| match name {
        "SLUICE_POOL_SIZE" => Some("4".to_string()),
        "SLUICE_HTTP_LISTEN" => Some("127.0.0.1:9002".to_string()),
        "DATABASE_URL" => Some("postgres://alias/db".to_string()),
        _ => None,
    };
    let given = flags(&["--http", "127.0.0.1:9003"]).given;
    let s = resolve(Some(&config.0), env, &given, &[]).unwrap();
    assert_eq!(
        s.http_listen(),
        Some("127.0.0.1:9003".parse().unwrap()),
        "flag over env"
    );
    let pool = s.pool_settings();
    assert_eq!(pool.max_size(), 4, "env over file");
    assert_eq!(
        s.database_url(),
        Some("postgres://alias/db"),
        "env alias over file"
    );
    assert_eq!(
        pool.acquire_timeout(),
        Duration::from_millis(250),
        "file over default"
    );
    let server = s.server_options();
    assert_eq!(server.body_limit, 1 << 20);
    assert_eq!(pool.reset(), sluice_pg::pool::Reset::Session, "default");
    assert_eq!(server.header_timeout, Duration::from_secs(2));
    let defaults = sluice_http::ServerOptions::default();
    assert_eq!(server.max_connections, defaults.max_connections, "default");
    let (prefix, path) = s.views.first().unwrap();
    assert_eq!(prefix, "/films");
    assert_eq!(path, &config.0.parent().unwrap().join("views/films.json"));
}

#[test]
fn the_redis_busy_poll_defaults_and_can_be_turned_off() {
    let none = |_: &str| None;
    let s = resolve(None, none, &[], &[]).unwrap();
    let default = sluice_resp::Config::default().busy_poll;
    assert_eq!(s.resp_config().busy_poll, default);
    let env = |name: &str| (name == "SLUICE_RESP_BUSY_POLL_US").then(|| "0".to_string());
    let s = resolve(None, env, &[], &[]).unwrap();
    assert_eq!(s.resp_config().busy_poll, Duration::ZERO);
    let s = resolve_flags(&["--resp-busy-poll-us", "35"]).unwrap();
    assert_eq!(s.resp_config().busy_poll, Duration::from_micros(35));
}

#[test]
fn the_sluice_name_beats_its_alias() {
    let env = |name: &str| match name {
        "SLUICE_DATABASE_URL" => Some("postgres://sluice/db".to_string()),
        "DATABASE_URL" => Some("postgres://alias/db".to_string()),
        _ => None,
    };
    let s = resolve(None, env, &[], &[]).unwrap();
    assert_eq!(s.database_url(), Some("postgres://sluice/db"));
}

#[test]
fn errors_name_their_source() {
    let env = |name: &str| (name == "SLUICE_POOL_SIZE").then(|| "many".to_string());
    let error = format!("{:#}", resolve(None, env, &[], &[]).unwrap_err());
    assert!(error.contains("SLUICE_* environment variables"), "{error}");
    assert!(error.contains("SLUICE_POOL_SIZE"), "{error}");
    let config = TempToml::new("[http]\nlisten = 12\n");
    let error = format!(
        "{:#}",
        resolve(Some(&config.0), |_| None, &[], &[]).unwrap_err()
    );
    assert!(error.contains(&config.0.display().to_string()), "{error}");
    assert!(error.contains("http.listen"), "{error}");
    let config = TempToml::new("[http]\nlissen = \"127.0.0.1:1\"\n");
    let error = format!(
        "{:#}",
        resolve(Some(&config.0), |_| None, &[], &[]).unwrap_err()
    );
    assert!(error.contains("lissen"), "{error}");
    let config = TempToml::new("[htttp]\nlisten = \"127.0.0.1:1\"\n");
    let error = format!(
        "{:#}",
        resolve(Some(&config.0), |_| None, &[], &[]).unwrap_err()
    );
    assert!(error.contains("htttp"), "{error}");
    let error = format!(
        "{:#}",
        resolve(None, |_| None, &[], &["films=f.json".to_string()]).unwrap_err()
    );
    assert!(
        error.contains("command-line") && error.contains("films"),
        "{error}"
    );
    let error = format!("{:#}", resolve_flags(&["--pool-size", "x"]).unwrap_err());
    assert!(
        error.contains("command-line") && error.contains("--pool-size"),
        "{error}"
    );
}

#[test]
fn a_bad_value_is_reported_even_where_a_higher_source_overrides_it() {
    let config = TempToml::new("[pool]\nsize = \"lots\"\n");
    let given = flags(&["--pool-size", "3"]).given;
    let error = format!(
        "{:#}",
        resolve(Some(&config.0), |_| None, &given, &[]).unwrap_err()
    );
    assert!(error.contains("pool.size"), "{error}");
}

#[test]
fn the_redis_gate_alone_runs_without_http() {
    let s = resolve_flags(&["--resp", "127.0.0.1:6390"]).unwrap();
    assert_eq!(s.http_listen(), None);
    let views = ["/a=a.json".to_string()];
    let s = resolve(
        None,
        |_| None,
        &flags(&["--resp", "127.0.0.1:6390"]).given,
        &views,
    )
    .unwrap();
    assert_eq!(s.http_listen(), Some(DEFAULT_HTTP));
    let s = resolve_flags(&[]).unwrap();
    assert_eq!(s.http_listen(), Some(DEFAULT_HTTP));
}

#[test]
fn switches_take_an_optional_value_and_lists_split_on_commas() {
    let s = resolve_flags(&["--influx-tags-as-jsonb", "--influx-token", "a, b"]).unwrap();
    assert!(s.influx.tags_as_jsonb);
    assert_eq!(s.influx_config().tokens, ["a", "b"]);
    let s = resolve_flags(&["--influx-enabled=false"]).unwrap();
    assert!(!s.influx.enabled);
    let config = TempToml::new("[influx]\ntoken = [\"x\", \"y\"]\n");
    let s = resolve(Some(&config.0), |_| None, &[], &[]).unwrap();
    assert_eq!(s.influx.token, ["x", "y"]);
}

#[test]
fn influx_write_rules_reach_the_write_api() {
    let defaults = resolve_flags(&[]).unwrap().influx_config();
    assert!(defaults.databases.is_empty());
    assert!(defaults.accept_partial);
    assert_eq!(
        defaults.max_columns_per_table,
        sluice_influx::DEFAULT_MAX_COLUMNS_PER_TABLE
    );
    let s = resolve_flags(&[
        "--influx-databases",
        "telegraf, public",
        "--influx-max-columns-per-table",
        "900",
        "--influx-accept-partial=false",
        "--influx-duplicates",
        "keep",
        "--influx-retention",
        "30d",
        "--influx-database-retention",
        "telegraf=7d,metrics=INF",
    ])
    .unwrap();
    let config = s.influx_config();
    assert_eq!(config.duplicates, sluice_influx::Duplicates::Keep);
    assert_eq!(defaults.duplicates, sluice_influx::Duplicates::Merge);
    let day = std::time::Duration::from_secs(86_400);
    assert_eq!(defaults.retention, None);
    assert_eq!(config.retention, Some(30 * day));
    assert_eq!(config.retention_of("telegraf"), Some(7 * day));
    assert_eq!(config.retention_of("metrics"), None);
    assert_eq!(config.retention_of("other"), Some(30 * day));
    assert!(resolve_flags(&["--influx-retention", "5m"]).is_err());
    assert!(resolve_flags(&["--influx-database-retention", "x=1y"]).is_err());
    assert_eq!(config.databases, ["telegraf", "public"]);
    assert_eq!(config.max_columns_per_table, 900);
    assert!(!config.accept_partial);
}

#[test]
fn flags_and_variables_are_unique_and_named_after_their_keys() {
    let mut flags = std::collections::BTreeSet::new();
    let mut variables = std::collections::BTreeSet::new();
    for key in keys() {
        assert!(flags.insert(key.flag()), "two keys share --{}", key.flag());
        assert!(
            variables.insert(key.variable()),
            "two keys share {}",
            key.variable()
        );
        assert!(!key.doc.is_empty(), "{} has no doc", key.path());
        assert_eq!(key.variable(), key.variable().to_uppercase());
    }
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
    for text in ["250ms", "5s", "2m", "1h", "90s", "0s", "1.5s"] {
        let span: Span = text.parse().unwrap();
        assert_eq!(span.to_string().parse::<Span>().unwrap(), span, "{text}");
    }
    for text in ["1", "1000", "64KiB", "256MiB", "1GiB"] {
        let size: Size = text.parse().unwrap();
        assert_eq!(size.to_string(), text);
    }
}

/// The shipped sluice.toml is the reference the table generates: every key, its doc and its
/// real default. Regenerate it with `cargo run -- serve --example > sluice.toml`.
#[test]
fn the_shipped_sluice_toml_is_the_reference() {
    let shipped = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sluice.toml");
    let text = std::fs::read_to_string(&shipped).unwrap();
    assert!(
        text == reference_file(),
        "sluice.toml differs from the settings table: run `cargo run -- serve --example > \
         sluice.toml`"
    );
    let from_file = resolve(Some(&shipped), |_| None, &[], &[]).unwrap();
    let defaults = Settings::default();
    for key in keys() {
        assert_eq!(
            from_file.value_of(key.section, key.name),
            defaults.value_of(key.section, key.name),
            "sluice.toml's {} is not its default",
            key.path()
        );
    }
    for line in text.lines() {
        assert!(
            line.len() <= 100,
            "a line of sluice.toml is too long: {line}"
        );
    }
}

#[test]
fn the_dump_reads_back_as_the_same_settings() {
    let s = resolve_flags(&["--pool-size", "7", "--influx-token", "t1,t2"]).unwrap();
    let dumped = TempToml::new(&dump(&s));
    let again = resolve(Some(&dumped.0), |_| None, &[], &[]).unwrap();
    for key in keys() {
        assert_eq!(
            again.value_of(key.section, key.name),
            s.value_of(key.section, key.name),
            "{}",
            key.path()
        );
    }
}

#[test]
fn replicas_come_from_repeated_flags_a_comma_list_or_the_file() {
    let s = resolve_flags(&[]).unwrap();
    assert!(s.database.replicas.is_empty());
    assert_eq!(s.database.max_replica_lag, Span(Duration::from_secs(10)));
    assert_eq!(s.database.embedded_replicas, 0);
    let s = resolve_flags(&[
        "--replica-url",
        "postgres://a/app",
        "--replica-url",
        "postgres://b/app",
        "--database-max-replica-lag",
        "2s",
        "--replicas",
        "2",
    ])
    .unwrap();
    assert_eq!(
        s.database.replicas,
        ["postgres://a/app", "postgres://b/app"]
    );
    assert_eq!(s.database.max_replica_lag, Span(Duration::from_secs(2)));
    assert_eq!(s.database.embedded_replicas, 2);
    let s = resolve(
        None,
        |name| {
            (name == "SLUICE_DATABASE_REPLICAS").then(|| "postgres://a/x, postgres://b/x".into())
        },
        &[],
        &[],
    )
    .unwrap();
    assert_eq!(s.database.replicas, ["postgres://a/x", "postgres://b/x"]);
    let config =
        TempToml::new("[database]\nreplicas = [\"postgres://c/y\"]\nmax_replica_lag = \"500ms\"\n");
    let s = resolve(Some(&config.0), |_| None, &[], &[]).unwrap();
    assert_eq!(s.database.replicas, ["postgres://c/y"]);
    assert_eq!(s.database.max_replica_lag, Span(Duration::from_millis(500)));
}
