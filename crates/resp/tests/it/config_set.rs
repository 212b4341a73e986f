//! CONFIG SET takes every parameter Redis 7.0 takes, with Redis's checks and errors: what
//! Sluice acts on applies, the rest is kept and shown (COMPAT.md lists which), what Sluice fixes
//! at start (its listener, its store) refuses a change, and protected and immutable parameters
//! are refused as Redis refuses them.

use crate::common;

use common::{RawClient, Sluice};

fn error_of(reply: &[u8]) -> String {
    assert!(reply.starts_with(b"-"), "expected an error, got {reply:?}");
    String::from_utf8_lossy(&reply[1..reply.len() - 2]).into_owned()
}

/// The bulk strings of a flat array or map reply.
fn bulk_strings(reply: &[u8]) -> Vec<String> {
    let (_, elements) = common::split_aggregate(reply).expect("an aggregate");
    elements
        .iter()
        .map(|e| {
            let start = e.windows(2).position(|w| w == b"\r\n").expect("a bulk") + 2;
            String::from_utf8_lossy(&e[start..e.len() - 2]).into_owned()
        })
        .collect()
}

fn get(c: &mut RawClient, name: &str) -> Vec<u8> {
    c.call(&["CONFIG", "GET", name])
}

#[test]
fn parameters_sluice_does_not_act_on_are_kept_and_start_values_are_fixed() {
    let server = Sluice::start();
    let mut c = RawClient::connect(server.port).expect("connect");
    for (name, value, shown) in [
        ("save", "100 10 60 1000", "100 10 60 1000"),
        ("timeout", "10", "10"),
        ("maxclients", "5", "5"),
        ("hash-max-listpack-entries", "1", "1"),
        ("activedefrag", "YES", "yes"),
        (
            "client-output-buffer-limit",
            "pubsub 1mb 0 0",
            "normal 0 0 0 slave 268435456 67108864 60 pubsub 1048576 0 0",
        ),
    ] {
        assert_eq!(
            c.call(&["CONFIG", "SET", name, value]),
            b"+OK\r\n",
            "{name}"
        );
        let expected = format!(
            "*2\r\n${}\r\n{name}\r\n${}\r\n{shown}\r\n",
            name.len(),
            shown.len()
        );
        assert_eq!(String::from_utf8_lossy(&get(&mut c, name)), expected);
    }
    // The in-memory server: no store, so appendonly is no; it cannot be turned on at run time.
    assert_eq!(
        get(&mut c, "appendonly"),
        b"*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n"
    );
    assert_eq!(c.call(&["CONFIG", "SET", "appendonly", "no"]), b"+OK\r\n");
    assert_eq!(
        error_of(&c.call(&["CONFIG", "SET", "appendonly", "yes"])),
        "ERR CONFIG SET failed (possibly related to argument 'appendonly') - Sluice sets this at start (its [resp] store settings)"
    );
    let port = server.port.to_string();
    assert_eq!(c.call(&["CONFIG", "SET", "port", &port]), b"+OK\r\n");
    // All or nothing: the port fails as Redis fails to listen, and maxmemory is not set.
    assert!(
        error_of(&c.call(&["CONFIG", "SET", "maxmemory", "10000001", "port", "1"]))
            .starts_with("ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port")
    );
    assert_eq!(
        get(&mut c, "maxmemory"),
        b"*2\r\n$9\r\nmaxmemory\r\n$1\r\n0\r\n"
    );
    // Value checks and Redis's wording.
    assert_eq!(
        error_of(&c.call(&[
            "CONFIG",
            "SET",
            "maxmemory",
            "10000001",
            "maxmemory-clients",
            "200%",
            "client-query-buffer-limit",
            "invalid"
        ])),
        "ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - percentage argument must be less or equal to 100"
    );
    assert_eq!(
        error_of(&c.call(&["CONFIG", "SET", "maxmemory"])),
        "ERR wrong number of arguments for 'config|set' command"
    );
    assert_eq!(
        error_of(&c.call(&["CONFIG", "SET", "maxmemory", "1", "hz"])),
        "ERR syntax error"
    );
    // Hidden parameters answer only to their exact name; aliases are shown with their names.
    let all = String::from_utf8_lossy(&get(&mut c, "*")).into_owned();
    assert!(!all.contains("key-load-delay"));
    assert!(all.contains("\r\nslaveof\r\n") && all.contains("\r\nreplicaof\r\n"));
    assert_eq!(
        get(&mut c, "key-load-delay"),
        b"*2\r\n$14\r\nkey-load-delay\r\n$1\r\n0\r\n"
    );
    // Writes are not limited while maxmemory is 0 (the default).
    let big = vec![b'x'; 1 << 20];
    for i in 0..20 {
        assert_eq!(
            c.call(&[b"SET".as_slice(), format!("k{i}").as_bytes(), &big]),
            b"+OK\r\n"
        );
    }
}

#[test]
fn every_parameter_config_get_shows_can_be_set_back() {
    let server = Sluice::start();
    let mut c = RawClient::connect(server.port).expect("connect");
    let all = bulk_strings(&get(&mut c, "*"));
    assert!(all.len() > 300, "{} names and values", all.len());
    for pair in all.chunks_exact(2) {
        let (name, value) = (&pair[0], &pair[1]);
        let reply = c.call(&["CONFIG", "SET", name, value]);
        let immutable = String::from_utf8_lossy(&reply).contains("can't set");
        assert!(
            reply == b"+OK\r\n" || immutable,
            "{name} {value}: {reply:?}"
        );
        if immutable {
            continue;
        }
        let again = bulk_strings(&get(&mut c, name));
        assert_eq!(again, [name.clone(), value.clone()], "{name}");
    }
}

#[test]
fn protected_and_immutable_parameters_are_refused_as_redis_does() {
    let server = Sluice::start();
    let mut c = RawClient::connect(server.port).expect("connect");
    for name in ["dir", "dbfilename", "Dir"] {
        assert_eq!(
            error_of(&c.call(&["CONFIG", "SET", name, "/tmp"])),
            format!(
                "ERR CONFIG SET failed (possibly related to argument '{name}') - can't set protected config"
            )
        );
    }
    for name in [
        "daemonize",
        "databases",
        "enable-debug-command",
        "enable-protected-configs",
        "replicaof",
    ] {
        assert_eq!(
            error_of(&c.call(&["CONFIG", "SET", name, "1"])),
            format!(
                "ERR CONFIG SET failed (possibly related to argument '{name}') - can't set immutable config"
            )
        );
    }
}

#[test]
fn implemented_parameters_apply() {
    let server = Sluice::start();
    let mut c = RawClient::connect(server.port).expect("connect");
    assert_eq!(
        c.call(&["CONFIG", "SET", "lua-time-limit", "250"]),
        b"+OK\r\n"
    );
    assert_eq!(
        c.call(&["CONFIG", "GET", "busy-reply-threshold"]),
        b"*2\r\n$20\r\nbusy-reply-threshold\r\n$3\r\n250\r\n"
    );
    assert_eq!(
        c.call(&["CONFIG", "SET", "proto-max-bulk-len", "1mb"]),
        b"+OK\r\n"
    );
    // Only the bulk's length goes out: the server answers it and closes the connection, so a
    // client still writing the megabyte could see the close first.
    c.send_raw(format!("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n${}\r\n", (1 << 20) + 1).as_bytes());
    let reply = c.read_reply();
    assert!(
        reply.starts_with(b"-ERR Protocol error: invalid bulk length"),
        "{reply:?}"
    );
}
