//! SHUTDOWN, ROLE and LOLWUT as Redis 7.0 answers them: SHUTDOWN's flags checked, refused inside
//! MULTI, then the gate stops and the client's connection closes without a reply.

use std::time::Duration;

use crate::common::{RawClient, Sluice};

fn text(reply: &[u8]) -> String {
    String::from_utf8_lossy(reply).into_owned()
}

#[test]
fn role_is_a_primary_without_replicas() {
    let server = Sluice::start();
    let mut c = RawClient::connect(server.port).expect("connect");
    assert_eq!(
        text(&c.call(&["ROLE"])),
        "*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n"
    );
    assert!(text(&c.call(&["ROLE", "x"])).starts_with("-ERR wrong number of arguments"));
}

#[test]
fn lolwut_ends_with_the_version() {
    let server = Sluice::start();
    let mut c = RawClient::connect(server.port).expect("connect");
    let reply = text(&c.call(&["LOLWUT"]));
    assert!(reply.ends_with("Redis ver. 7.0.15\n\r\n"), "{reply:?}");
    assert!(text(&c.call(&["LOLWUT", "VERSION", "5"])).contains("Redis ver. 7.0.15"));
    assert!(text(&c.call(&["LOLWUT", "VERSION", "x"])).starts_with("-ERR value is not an integer"));
    assert_eq!(text(&c.call(&["LOLWUT", "x"])), "-ERR syntax error\r\n");
}

#[test]
fn shutdown_checks_its_flags_then_stops_the_gate() {
    let server = Sluice::start();
    let mut c = RawClient::connect(server.port).expect("connect");
    for bad in [
        &["SHUTDOWN", "SAVE", "NOSAVE"][..],
        &["SHUTDOWN", "ABORT", "NOW"],
        &["SHUTDOWN", "LATER"],
    ] {
        assert_eq!(text(&c.call(bad)), "-ERR syntax error\r\n", "{bad:?}");
    }
    assert_eq!(
        text(&c.call(&["SHUTDOWN", "ABORT"])),
        "-ERR No shutdown in progress.\r\n"
    );
    assert_eq!(c.call(&["MULTI"]), b"+OK\r\n");
    assert!(
        text(&c.call(&["SHUTDOWN"])).starts_with("-ERR Command not allowed inside a transaction")
    );
    assert_eq!(c.call(&["DISCARD"]), b"+OK\r\n");
    assert!(
        !server.stops_within(Duration::from_millis(100)),
        "stopped before SHUTDOWN"
    );
    assert_eq!(c.call(&["SET", "k", "v"]), b"+OK\r\n");
    c.send_raw(&RawClient::encode(&["SHUTDOWN", "NOSAVE", "NOW", "FORCE"]));
    assert!(c.is_closed(), "SHUTDOWN answered instead of closing");
    assert!(
        server.stops_within(Duration::from_secs(10)),
        "the gate did not stop"
    );
    assert!(RawClient::connect(server.port).is_err(), "still accepting");
}
