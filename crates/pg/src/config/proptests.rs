//! Property tests: conninfo rendering round-trips, URI percent-encoding round-trips, and no parser panics on any input.

use std::net::IpAddr;
use std::time::Duration;

use proptest::prelude::*;

use super::tests::env_of;
use super::*;

fn base_env() -> impl Fn(&str) -> Option<String> {
    env_of(&[("USER", "tester")])
}

/// Any text without commas (a comma always separates hosts).
fn host_name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z][a-z0-9.-]{0,20}",
        "/[a-z/ ]{0,15}",
        "@[a-z]{1,8}",
        any::<String>().prop_map(|s| s.replace(',', "")),
    ]
}

fn ip() -> impl Strategy<Value = IpAddr> {
    prop_oneof![
        any::<[u8; 4]>().prop_map(IpAddr::from),
        any::<[u8; 16]>().prop_map(IpAddr::from),
    ]
}

/// A text value as a user might write it, quotes, backslashes, spaces and all.
fn text() -> impl Strategy<Value = String> {
    prop_oneof!["[a-zA-Z0-9 '\\\\=\t_-]{0,24}", any::<String>(),]
}

fn path() -> impl Strategy<Value = String> {
    "/[a-zA-Z0-9 ./'\\\\_-]{0,20}"
}

fn secs() -> impl Strategy<Value = Option<Duration>> {
    proptest::option::of((0u64..100_000).prop_map(Duration::from_secs))
}

prop_compose! {
    fn config()(
        hosts in proptest::collection::vec(
            (proptest::option::of(host_name()), proptest::option::of(ip())), 1..4),
        port in 1u16..,
        user in "[a-zA-Z0-9 '\\\\_]{1,16}",
        strings in proptest::collection::vec(text(), 6),
        paths in proptest::collection::vec(proptest::option::of(path()), 3),
        timeouts in (secs(), secs(), secs(), proptest::option::of(0u32..100_000), proptest::option::of(0u64..10_000_000)),
        ssl_mode in proptest::sample::select(SslMode::ALL),
        channel_binding in proptest::sample::select(ChannelBinding::ALL),
        target in proptest::sample::select(TargetSessionAttrs::ALL),
        balance in proptest::sample::select(LoadBalanceHosts::ALL),
        keepalives in any::<bool>(),
    ) -> Config {
        let mut c = Config::parse_with_env("", &base_env()).unwrap();
        for (host, addr) in &hosts {
            c.host(host.as_deref().unwrap_or(""));
            if let Some(addr) = addr {
                c.hostaddr(*addr);
            }
        }
        c.port(port).set_user(&user);
        c.set_password(&strings[0])
            .set_dbname(&strings[1])
            .set_options(&strings[2])
            .set_application_name(&strings[3])
            .set_fallback_application_name(&strings[4])
            .set_ssl_password(&strings[5]);
        if let Some(p) = &paths[0] { c.set_ssl_root_cert(p); }
        if let Some(p) = &paths[1] { c.set_ssl_cert(p); }
        if let Some(p) = &paths[2] { c.set_ssl_key(p); }
        let (connect, idle, interval, count, user_timeout) = timeouts;
        c.set_connect_timeout(connect)
            .set_keepalives_idle(idle)
            .set_keepalives_interval(interval)
            .set_keepalives_count(count)
            .set_tcp_user_timeout(user_timeout.map(Duration::from_millis))
            .set_ssl_mode(ssl_mode)
            .set_channel_binding(channel_binding)
            .set_target_session_attrs(target)
            .set_load_balance_hosts(balance)
            .set_keepalives(keepalives);
        c
    }
}

fn percent_encode(s: &str) -> String {
    s.bytes().map(|b| format!("%{b:02X}")).collect()
}

proptest! {
    #[test]
    fn conninfo_round_trip(c in config()) {
        let rendered = c.to_conninfo_string();
        let parsed = Config::parse_with_env(&rendered, &base_env());
        prop_assert!(parsed.is_ok(), "{rendered}: {parsed:?}");
        prop_assert_eq!(parsed.ok(), Some(c));
    }

    #[test]
    fn uri_components_are_percent_decoded(
        user in "[^\u{0}]{1,12}",
        password in "[^\u{0}]{1,12}",
        dbname in "[^\u{0}]{1,12}",
        app in "[^\u{0}]{0,12}",
    ) {
        let uri = format!(
            "postgresql://{}:{}@h/{}?application_name={}",
            percent_encode(&user), percent_encode(&password), percent_encode(&dbname), percent_encode(&app)
        );
        let c = Config::parse_with_env(&uri, &base_env()).unwrap();
        prop_assert_eq!(c.user(), user.as_str());
        prop_assert_eq!(c.password(), Some(password.as_str()));
        prop_assert_eq!(c.dbname(), dbname.as_str());
        prop_assert_eq!(c.application_name(), (!app.is_empty()).then_some(app.as_str()));
    }

    #[test]
    fn conninfo_parser_never_panics(s in any::<String>()) {
        let _ = Config::parse_with_env(&s, &base_env());
    }

    #[test]
    fn conninfo_parser_never_panics_on_near_miss_input(s in "[a-z_= '\\\\,:/@0-9.-]{0,60}") {
        let _ = Config::parse_with_env(&s, &base_env());
        let _ = Config::parse_with_env(&format!("host=a {s}"), &base_env());
    }

    #[test]
    fn uri_parser_never_panics(s in any::<String>(), prefix in prop_oneof!["postgresql://", "postgres://"]) {
        let _ = Config::parse_with_env(&format!("{prefix}{s}"), &base_env());
    }

    #[test]
    fn uri_parser_never_panics_on_near_miss_input(s in "[a-z0-9:@/?&=%,\\[\\].\u{e9}]{0,60}") {
        let _ = Config::parse_with_env(&format!("postgresql://{s}"), &base_env());
    }

    #[test]
    fn pgpass_line_parser_never_panics(line in any::<String>(), near in "[a-z*:\\\\#]{0,30}") {
        let _ = pgpass::parse_line(&line);
        let _ = pgpass::parse_line(&near);
        let key = pgpass::Key { host: "a", port: "5432", database: "b", user: "c" };
        let _ = pgpass::find_password(&format!("{line}\n{near}"), &key);
    }

    #[test]
    fn pgpass_escaped_fields_match_themselves(
        fields in proptest::collection::vec("[a-z:\\\\*]{1,8}", 4),
        password in "[a-z:\\\\]{0,8}",
    ) {
        let escape = |s: &str| s.replace('\\', "\\\\").replace(':', "\\:");
        let line = format!(
            "{}:{}:{}:{}:{}",
            escape(&fields[0]), escape(&fields[1]), escape(&fields[2]), escape(&fields[3]), escape(&password)
        );
        let key = pgpass::Key { host: &fields[0], port: &fields[1], database: &fields[2], user: &fields[3] };
        prop_assert_eq!(pgpass::find_password(&line, &key), Some(password));
    }
}
