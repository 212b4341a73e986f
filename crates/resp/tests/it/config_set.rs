//! CONFIG SET applies only what Sluice implements: every other parameter is refused with the
//! error Redis 7.0 gives (unknown, protected, immutable), and CONFIG GET keeps its value.

use crate::common;

use common::{RawClient, Sluice};

fn error_of(reply: &[u8]) -> String {
    assert!(reply.starts_with(b"-"), "expected an error, got {reply:?}");
    String::from_utf8_lossy(&reply[1..reply.len() - 2]).into_owned()
}

#[test]
fn unimplemented_parameters_are_refused_and_keep_their_value() {
    let server = Sluice::start();
    let mut c = RawClient::connect(server.port).expect("connect");
    for (name, value) in [
        ("appendonly", "yes"),
        ("timeout", "10"),
        ("maxclients", "5"),
        ("activedefrag", "yes"),
    ] {
        let before = c.call(&["CONFIG", "GET", name]);
        assert_eq!(
            error_of(&c.call(&["CONFIG", "SET", name, value])),
            format!("ERR Unknown option or number of arguments for CONFIG SET - '{name}'")
        );
        assert_eq!(c.call(&["CONFIG", "GET", name]), before, "{name} changed");
    }
    // All or nothing: a refused parameter leaves the good one unset.
    assert!(
        c.call(&[
            "CONFIG",
            "SET",
            "stream-node-max-entries",
            "7",
            "appendonly",
            "yes"
        ])
        .starts_with(b"-")
    );
    assert_eq!(
        c.call(&["CONFIG", "GET", "stream-node-max-entries"]),
        b"*2\r\n$23\r\nstream-node-max-entries\r\n$3\r\n100\r\n"
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
        "port",
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
