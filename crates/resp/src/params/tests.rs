use super::*;

fn set(p: &mut Params, pairs: &[(&str, &str)]) -> Result<(), String> {
    let pairs: Vec<(&[u8], &[u8])> = pairs
        .iter()
        .map(|(n, v)| (n.as_bytes(), v.as_bytes()))
        .collect();
    p.set_all(&pairs).map_err(|e| e.to_string())
}

#[test]
fn set_and_get() {
    let mut p = Params::new(16, 7000, None);
    set(
        &mut p,
        &[("stream-node-max-bytes", "1kb"), ("LUA-time-limit", "100")],
    )
    .unwrap();
    assert_eq!(p.get("stream-node-max-bytes"), Some("1024"));
    assert_eq!(p.get("busy-reply-threshold"), Some("100"));
    set(&mut p, &[("maxmemory", "10mb")]).unwrap();
    assert_eq!(p.get("maxmemory"), Some("10485760"));
    set(&mut p, &[("notify-keyspace-events", "KEA")]).unwrap();
    assert_eq!(p.get("notify-keyspace-events"), Some("AKE"));
    assert_eq!(
        set(&mut p, &[("notify-keyspace-events", "Kq")]).unwrap_err(),
        "ERR CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - Invalid event class character. Use 'Ag$lshzxeKEtmdn'."
    );
    assert_eq!(
        set(&mut p, &[("DIR", "/tmp")]).unwrap_err(),
        "ERR CONFIG SET failed (possibly related to argument 'DIR') - can't set protected config"
    );
    assert_eq!(
        set(&mut p, &[("daemonize", "yes")]).unwrap_err(),
        "ERR CONFIG SET failed (possibly related to argument 'daemonize') - can't set immutable config"
    );
    assert_eq!(
        set(&mut p, &[("lua-time-limit", "1"), ("LUA-time-limit", "2")]).unwrap_err(),
        "ERR CONFIG SET failed (possibly related to argument 'LUA-time-limit') - duplicate parameter"
    );
    assert_eq!(
        set(&mut p, &[("stream-node-max-entries", "x")]).unwrap_err(),
        "ERR CONFIG SET failed (possibly related to argument 'stream-node-max-entries') - argument couldn't be parsed into an integer"
    );
    assert_eq!(
        set(&mut p, &[("nope", "1")]).unwrap_err(),
        "ERR Unknown option or number of arguments for CONFIG SET - 'nope'"
    );
    assert_eq!(p.matching(&[b"maxmemory*"]).len(), 5);
}

#[test]
fn kept_parameters_round_trip_and_aliases_share_a_value() {
    let mut p = Params::new(16, 7000, None);
    set(
        &mut p,
        &[("appendfsync", "everysec"), ("activedefrag", "YES")],
    )
    .unwrap();
    assert_eq!(p.get("activedefrag"), Some("yes"));
    set(&mut p, &[("slave-read-only", "no")]).unwrap();
    assert_eq!(p.get("replica-read-only"), Some("no"));
    let shown = p.matching(&[b"*read-only"]);
    assert_eq!(shown.len(), 2, "{shown:?}");
    // A value error names the parameter as the client spelled it (lower-case).
    assert_eq!(
        set(&mut p, &[("SLAVE-read-only", "maybe")]).unwrap_err(),
        "ERR CONFIG SET failed (possibly related to argument 'slave-read-only') - argument must be 'yes' or 'no'"
    );
}

#[test]
fn values_are_checked_as_redis_checks_them() {
    let mut p = Params::new(16, 7000, None);
    assert_eq!(
        set(
            &mut p,
            &[
                ("maxmemory", "10000001"),
                ("maxmemory-clients", "200%"),
                ("client-query-buffer-limit", "invalid")
            ]
        )
        .unwrap_err(),
        "ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - percentage argument must be less or equal to 100"
    );
    assert_eq!(p.get("maxmemory"), Some("0"), "nothing set when one fails");
    set(&mut p, &[("maxmemory-clients", "10%")]).unwrap();
    assert_eq!(p.get("maxmemory-clients"), Some("10%"));
    set(
        &mut p,
        &[("save", "3000 5"), ("repl-backlog-size", "10000002")],
    )
    .unwrap();
    assert_eq!(p.get("save"), Some("3000 5"));
    assert!(
        set(&mut p, &[("save", "0 5")])
            .unwrap_err()
            .ends_with("Invalid save parameters")
    );
    set(&mut p, &[("save", "")]).unwrap();
    assert_eq!(p.get("save"), Some(""));
    set(
        &mut p,
        &[("client-output-buffer-limit", "replica 1mb 2mb 30")],
    )
    .unwrap();
    assert_eq!(
        p.get("client-output-buffer-limit"),
        Some("normal 0 0 0 slave 1048576 2097152 30 pubsub 33554432 8388608 60")
    );
    set(&mut p, &[("shutdown-on-sigterm", "now NOSAVE")]).unwrap();
    assert_eq!(p.get("shutdown-on-sigterm"), Some("nosave now"));
    assert!(
        set(&mut p, &[("shutdown-on-sigterm", "save nosave")])
            .unwrap_err()
            .ends_with("can't be used simultaneously")
    );
    set(&mut p, &[("oom-score-adj", "relative")]).unwrap();
    assert_eq!(p.get("oom-score-adj"), Some("yes"));
    assert_eq!(
        set(&mut p, &[("hash-max-listpack-entries", "-1")]).unwrap_err(),
        "ERR CONFIG SET failed (possibly related to argument 'hash-max-listpack-entries') - argument must be between 0 and 9223372036854775807 inclusive"
    );
    set(
        &mut p,
        &[("latency-tracking-info-percentiles", "50 99.90 100")],
    )
    .unwrap();
    assert_eq!(
        p.get("latency-tracking-info-percentiles"),
        Some("50 99.9 100")
    );
}

#[test]
fn the_listener_is_fixed_and_hidden_parameters_need_their_name() {
    let mut p = Params::new(16, 7000, None);
    set(&mut p, &[("port", "7000")]).unwrap();
    assert!(
        set(&mut p, &[("maxmemory", "1"), ("port", "7001")])
            .unwrap_err()
            .starts_with("ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port")
    );
    assert_eq!(p.get("maxmemory"), Some("0"));
    assert!(
        p.matching(&[b"*"])
            .iter()
            .all(|(n, _)| n != "key-load-delay")
    );
    assert_eq!(p.matching(&[b"key-load-delay"]).len(), 1);
    // Every value CONFIG GET * shows can be set back (Redis's "CONFIG sanity").
    let all: Vec<(String, String)> = p
        .matching(&[b"*"])
        .into_iter()
        .map(|(n, v)| (n, v.to_owned()))
        .collect();
    for (name, value) in &all {
        let row = &table::ROWS[find(name.as_bytes()).unwrap()];
        if matches!(row.access, Access::Modifiable | Access::Fixed) {
            set(&mut p, &[(name, value)]).unwrap_or_else(|e| panic!("{name} {value}: {e}"));
        }
    }
    let again: Vec<(String, String)> = p
        .matching(&[b"*"])
        .into_iter()
        .map(|(n, v)| (n, v.to_owned()))
        .collect();
    assert_eq!(all, again);
}

#[test]
fn encoding_thresholds_keep_both_names_and_save_takes_pairs() {
    let mut p = Params::new(16, 7000, None);
    set(&mut p, &[("zset-max-ziplist-entries", "3")]).unwrap();
    assert_eq!(p.get("zset-max-listpack-entries"), Some("3"));
    set(&mut p, &[("hash-max-listpack-value", "9")]).unwrap();
    assert_eq!(p.get("hash-max-ziplist-value"), Some("9"));
    set(
        &mut p,
        &[("list-max-ziplist-size", "1"), ("list-compress-depth", "2")],
    )
    .unwrap();
    assert_eq!(p.get("list-max-listpack-size"), Some("1"));
    set(&mut p, &[("save", "")]).unwrap();
    assert_eq!(p.get("save"), Some(""));
    set(&mut p, &[("save", "900 1 300 10")]).unwrap();
    assert_eq!(p.get("save"), Some("900 1 300 10"));
    // Redis 7.0 splits on single spaces: a doubled one is an empty word, refused.
    assert!(set(&mut p, &[("save", "900  1")]).is_err());
    assert_eq!(
        set(&mut p, &[("save", "900")]).unwrap_err(),
        "ERR CONFIG SET failed (possibly related to argument 'save') - Invalid save parameters"
    );
    assert_eq!(p.get("save"), Some("900 1 300 10"));
}
