//! Tests of `Config`: password and TLS files, the builder, rendering, load balancing, libpq quirks.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::defaults::OsDefaults;
use super::keywords::RawSettings;
use super::tests::{TempDir, error, no_sockets, parse, parse_env, tcp};
use super::*;

#[test]
fn default_ssl_files_come_from_home() {
    let home = TempDir::new("sslhome");
    let dir = home.path().join(".postgresql");
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["root.crt", "postgresql.crt", "postgresql.key"] {
        std::fs::write(dir.join(name), "x").unwrap();
    }
    let env = [("HOME", home.path().to_str().unwrap())];
    let c = parse_env("sslmode=verify-ca", &env);
    assert_eq!(c.ssl_root_cert(), Some(dir.join("root.crt").as_path()));
    assert_eq!(c.ssl_cert(), Some(dir.join("postgresql.crt").as_path()));
    assert_eq!(c.ssl_key(), Some(dir.join("postgresql.key").as_path()));
    let c = parse_env("sslmode=require", &env);
    assert_eq!(
        c.ssl_root_cert(),
        None,
        "only verify-* modes use the default root file"
    );
    let c = parse_env("sslmode=verify-full sslrootcert=/mine.crt sslkey=/k", &env);
    assert_eq!(c.ssl_root_cert(), Some(Path::new("/mine.crt")));
    assert_eq!(c.ssl_key(), Some(Path::new("/k")));
}

#[test]
fn application_name_falls_back() {
    assert_eq!(
        parse("fallback_application_name=fb").application_name(),
        Some("fb")
    );
    let c = parse("fallback_application_name=fb application_name=app");
    assert_eq!(c.application_name(), Some("app"));
    assert_eq!(c.fallback_application_name(), Some("fb"));
    assert_eq!(parse("").application_name(), None);
}

#[test]
fn empty_password_means_none() {
    assert_eq!(parse("password=''").password(), None);
    assert_eq!(parse_env("", &[("PGPASSWORD", "")]).password(), None);
}

#[cfg(unix)]
fn write_pgpass(dir: &TempDir, contents: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.path().join("pgpass");
    std::fs::write(&path, contents).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path
}

#[cfg(unix)]
#[test]
fn password_file_lookup_per_target() {
    let dir = TempDir::new("pgpass");
    let file = write_pgpass(
        &dir,
        "# hostname:port:database:username:password\n\
         a:5432:db:u:pw-a\n\
         b:6000:db:u:pw-b-6000\n\
         localhost:5432:db:u:pw-local\n\
         /run/custom:5432:db:u:pw-custom\n\
         192.0.2.9:5432:db:u:pw-addr\n\
         *:*:other:*:pw-other-db\n",
    );
    let passfile = file.to_str().unwrap();
    let c = parse(&format!(
        "host=a,b,c,/var/run/postgresql,/run/custom port=5432,6000,5432,5432,5432 user=u dbname=db passfile={passfile}"
    ));
    let found: Vec<Option<String>> = c.targets().iter().map(|t| c.password_for(t)).collect();
    assert_eq!(
        found,
        vec![
            Some("pw-a".into()),
            Some("pw-b-6000".into()),
            None,
            Some("pw-local".into()),
            Some("pw-custom".into())
        ]
    );
    // A target given only by address is matched on the address.
    let c = parse(&format!(
        "hostaddr=192.0.2.9 user=u dbname=db passfile={passfile}"
    ));
    assert_eq!(c.password_for(&c.targets()[0]).as_deref(), Some("pw-addr"));
    // dbname defaults to the user for matching too.
    let c = parse(&format!("host=zzz user=other passfile={passfile}"));
    assert_eq!(
        c.password_for(&c.targets()[0]).as_deref(),
        Some("pw-other-db")
    );
    // The default host (a socket directory or localhost) matches "localhost".
    let c = parse_env("user=u dbname=db", &[("PGPASSFILE", passfile)]);
    let target = c.targets_with(&no_sockets).remove(0);
    assert_eq!(c.password_for(&target).as_deref(), Some("pw-local"));
    // A given password wins and the file is not needed.
    let c = parse(&format!(
        "host=a user=u dbname=db password=given passfile={passfile}"
    ));
    assert_eq!(c.password_for(&c.targets()[0]).as_deref(), Some("given"));
    assert_eq!(
        c.password_from_file(&c.targets()[0]).as_deref(),
        Some("pw-a")
    );
}

#[cfg(unix)]
#[test]
fn password_file_defaults_to_home_pgpass() {
    let home = TempDir::new("pgpass-home");
    let _ = write_pgpass(&home, "");
    std::fs::rename(home.path().join("pgpass"), home.path().join(".pgpass")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    let path = home.path().join(".pgpass");
    std::fs::write(&path, "*:*:*:*:from-home\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let c = parse_env("host=x user=u", &[("HOME", home.path().to_str().unwrap())]);
    assert_eq!(
        c.password_for(&c.targets()[0]).as_deref(),
        Some("from-home")
    );
}

#[test]
fn debug_redacts_passwords() {
    let c = parse("password=hunter2 sslpassword=keysecret user=u");
    let shown = format!("{c:?}");
    assert!(!shown.contains("hunter2"), "{shown}");
    assert!(!shown.contains("keysecret"), "{shown}");
    assert_eq!(shown.matches("<redacted>").count(), 2, "{shown}");
    assert!(shown.contains("user: \"u\""), "{shown}");
}

#[test]
fn builder_configures_directly() {
    let mut c = Config::new();
    c.host("127.0.0.1")
        .port(5433)
        .set_user("postgres")
        .set_password("pw")
        .set_dbname("test")
        .set_application_name("sluice")
        .set_options("-c search_path=app")
        .set_ssl_mode(SslMode::Disable)
        .set_ssl_root_cert("/ca.pem")
        .set_connect_timeout(Some(Duration::from_millis(500)));
    assert_eq!(c.targets(), vec![tcp("127.0.0.1", 5433)]);
    assert_eq!(
        (c.user(), c.dbname(), c.password()),
        ("postgres", "test", Some("pw"))
    );
    assert_eq!(c.application_name(), Some("sluice"));
    assert_eq!(c.options(), Some("-c search_path=app"));
    assert_eq!(c.ssl_mode(), SslMode::Disable);
    assert_eq!(c.ssl_root_cert(), Some(Path::new("/ca.pem")));
    assert_eq!(c.connect_timeout(), Some(Duration::from_secs(2)));
    c.host("/run/pg,h3").hostaddr("192.0.2.3".parse().unwrap());
    let targets = c.targets();
    assert_eq!(targets.len(), 3);
    assert_eq!(targets[1].host, Host::Unix("/run/pg".into()));
    assert_eq!(targets[2].port, 5433, "new hosts take the last port");
    assert_eq!(targets[2].hostaddr, Some("192.0.2.3".parse().unwrap()));
    c.set_connect_timeout(Some(Duration::ZERO));
    assert_eq!(c.connect_timeout(), None);
    c.set_connect_timeout(Some(Duration::from_millis(3001)));
    assert_eq!(c.connect_timeout(), Some(Duration::from_secs(4)));
}

#[test]
fn tuning_knobs() {
    let mut c = Config::new();
    c.set_prepare_threshold(0)
        .set_statement_cache_capacity(10)
        .set_read_buffer_size(1024);
    assert_eq!(c.prepare_threshold(), 0);
    assert_eq!(c.statement_cache_capacity(), 10);
    assert_eq!(c.read_buffer_size(), MIN_READ_BUFFER_SIZE);
    c.set_read_buffer_size(1 << 20);
    assert_eq!(c.read_buffer_size(), 1 << 20);
}

#[test]
fn random_load_balancing_permutes_hosts() {
    let c = parse("host=a,b,c,d,e load_balance_hosts=random");
    let listed = c.targets_with(&no_sockets);
    let mut orders = std::collections::HashSet::new();
    for _ in 0..50 {
        let mut shuffled = c.targets();
        orders.insert(
            shuffled
                .iter()
                .map(|t| t.host.to_string())
                .collect::<String>(),
        );
        shuffled.sort_by_key(|t| t.host.to_string());
        assert_eq!(shuffled, listed);
    }
    assert!(orders.len() > 1, "50 shuffles of 5 hosts gave one order");
    let fixed = parse("host=a,b,c,d,e");
    assert!((0..10).all(|_| fixed.targets() == listed));
}

#[test]
fn no_user_is_an_error() {
    let raw = RawSettings::default();
    let e = resolve::resolve(&raw, &OsDefaults::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoUser);
    assert!(e.to_string().contains("set PGUSER"), "{e}");
    let mut raw = RawSettings::default();
    raw.set(
        keywords::Keyword::User,
        "given".into(),
        error::Origin::Text(0),
    );
    let c = resolve::resolve(&raw, &OsDefaults::default()).unwrap();
    assert_eq!(c.user(), "given");
    assert_eq!(c.passfile(), None, "no home, no default password file");
}

#[test]
fn rendering_round_trips_a_parsed_config() {
    let c = parse(
        "host=a,/tmp,@abs hostaddr=192.0.2.1,, port=1,2,3 user='o\\'neil' password='p w' dbname=d options='-c x=1' \
         connect_timeout=9 sslmode=verify-ca sslrootcert=/ca keepalives=0 keepalives_idle=4 tcp_user_timeout=250 \
         target_session_attrs=read-write load_balance_hosts=random channel_binding=require",
    );
    let again = parse(&c.to_conninfo_string());
    assert_eq!(c, again);
}

#[test]
fn from_str_parses_with_the_process_environment() {
    let c: Config = "user=fromstr host=h port=7".parse().unwrap();
    assert_eq!(c.user(), "fromstr");
    assert_eq!(c.targets(), vec![tcp("h", 7)]);
    let e = "nonsense".parse::<Config>().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Syntax);
}

/// Odd corners where libpq's behaviour was checked against psql 15's libpq on this machine.
#[test]
fn libpq_quirks() {
    // Blanks after '=' are skipped, so the next pair becomes the value.
    let c = parse("host= port=1 user=u");
    assert_eq!(c.targets(), vec![tcp("port=1", 5432)]);
    // An '@' anywhere before the first '/' starts the host part, even inside the query.
    let c = parse("postgresql://127.0.0.1?user=postgres@x");
    assert_eq!(c.user(), "127.0.0.1?user=postgres");
    assert_eq!(c.targets(), vec![tcp("x", 5432)]);
    // A trailing comma adds a default host with the default port.
    let c = parse("postgresql://127.0.0.1:5433,/test");
    let targets = c.targets_with(&no_sockets);
    assert_eq!(
        targets,
        vec![tcp("127.0.0.1", 5433), tcp("localhost", 5432)]
    );
    assert_eq!(c.dbname(), "test");
    let e = error("port=5432, host=127.0.0.1");
    assert!(
        e.to_string()
            .starts_with("could not match 2 port numbers to 1 hosts"),
        "{e}"
    );
}
