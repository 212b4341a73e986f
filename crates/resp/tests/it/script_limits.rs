//! Scripting at scale: ten thousand cached scripts and functions, and redis.call with thousands
//! of arguments (mlua's reference stack holds about 8,000 handles; none of these may need one
//! each).

use std::time::Duration;

use crate::common;

use common::{RawClient, Sluice};

fn text(reply: &[u8]) -> String {
    String::from_utf8_lossy(reply).into_owned()
}

fn client(server: &Sluice) -> RawClient {
    RawClient::connect(server.port).expect("connect")
}

/// Every distinct script EVAL runs stays cached (as in Redis 7.0), well past the ~8,000 handles
/// mlua's reference stack holds: the cache keeps the compiled functions in a Lua table. (The
/// `script_eval` fuzz target found the limit.)
#[test]
fn ten_thousand_distinct_scripts_stay_cached() {
    let harness =
        sluice_resp::ScriptHarness::new(Duration::from_millis(50), 64 << 20).expect("harness");
    for i in 0..10_000 {
        let script = format!("return {i}");
        let reply = harness.eval(script.as_bytes(), b"0", &[], false);
        assert_eq!(reply, format!(":{i}\r\n").into_bytes(), "script {i}");
    }
}

/// Ten thousand functions in a hundred libraries, and two thousand more in one, stay callable
/// through FCALL, FUNCTION DUMP and RESTORE, and DELETE: the callbacks live in a Lua table, not
/// one mlua handle each (mlua's reference stack holds about 8,000). One library of ten thousand
/// would pass Redis's 500 ms limit on running a library's code in a debug build.
#[test]
fn ten_thousand_functions_load_and_run() {
    let server = Sluice::start();
    let mut c = client(&server);
    let mut code = String::from("#!lua name=big\n");
    for i in 0..2_000 {
        code.push_str(&format!(
            "redis.register_function('f{i}', function() return {i} end)\n"
        ));
    }
    assert_eq!(text(&c.call(&["FUNCTION", "LOAD", &code])), "$3\r\nbig\r\n");
    for i in [0, 1_234, 1_999] {
        assert_eq!(
            text(&c.call(&["FCALL", &format!("F{i}"), "0"])),
            format!(":{i}\r\n")
        );
    }
    for lib in 0..100 {
        let mut code = format!("#!lua name=lib{lib}\n");
        for f in 0..100 {
            let n = lib * 100 + f;
            code.push_str(&format!(
                "redis.register_function('g{n}', function() return {n} end)\n"
            ));
        }
        assert_eq!(
            text(&c.call(&["FUNCTION", "LOAD", &code])),
            format!("${}\r\nlib{lib}\r\n", format!("lib{lib}").len())
        );
    }
    assert_eq!(text(&c.call(&["FCALL", "g7777", "0"])), ":7777\r\n");
    // A function name is unique across libraries, whatever its case.
    assert_eq!(
        text(&c.call(&[
            "FUNCTION",
            "LOAD",
            "#!lua name=clash\nredis.register_function('G5', function() return 0 end)"
        ])),
        "-ERR Function G5 already exists\r\n"
    );
    assert_eq!(text(&c.call(&["FCALL", "g5", "0"])), ":5\r\n");
    let memory = text(&c.call(&["INFO", "memory"]));
    assert!(memory.contains("number_of_functions:12000"), "{memory}");
    let dump = c.call(&["FUNCTION", "DUMP"]);
    let payload = &dump[dump.iter().position(|&b| b == b'\n').unwrap() + 1..dump.len() - 2];
    assert_eq!(text(&c.call(&["FUNCTION", "FLUSH"])), "+OK\r\n");
    assert_eq!(
        text(&c.call(&["FCALL", "f1", "0"])),
        "-ERR Function not found\r\n"
    );
    assert_eq!(
        c.call(&[b"FUNCTION".as_slice(), b"RESTORE", payload]),
        b"+OK\r\n"
    );
    assert_eq!(text(&c.call(&["FCALL", "f1998", "0"])), ":1998\r\n");
    assert_eq!(text(&c.call(&["FCALL", "g9998", "0"])), ":9998\r\n");
    assert_eq!(text(&c.call(&["FUNCTION", "DELETE", "big"])), "+OK\r\n");
    assert_eq!(
        text(&c.call(&["FCALL", "f1", "0"])),
        "-ERR Function not found\r\n"
    );
    // Replacing a library drops the functions it no longer has.
    assert_eq!(
        text(&c.call(&[
            "FUNCTION",
            "LOAD",
            "REPLACE",
            "#!lua name=lib0\nredis.register_function('h0', function() return 'h' end)"
        ])),
        "$4\r\nlib0\r\n"
    );
    assert_eq!(
        text(&c.call(&["FCALL", "g0", "0"])),
        "-ERR Function not found\r\n"
    );
    assert_eq!(text(&c.call(&["FCALL", "h0", "0"])), "$1\r\nh\r\n");
}

/// redis.call takes as many arguments as a Lua call can carry (up to the 7,997 an `unpack` of
/// a table gives with two more), as in Redis, whichever way they reach Rust (on the stack for
/// short calls, in one table for long ones); a nil among them is refused either way.
#[test]
fn calls_with_thousands_of_arguments() {
    let server = Sluice::start();
    let mut c = client(&server);
    for n in [1, 3_999, 4_000, 7_997] {
        for call in ["call", "pcall"] {
            let script = format!(
                "local t = {{}} for i = 1, {n} do t[i] = tostring(i) end \
                 return redis.{call}('rpush', KEYS[1], unpack(t))"
            );
            let key = format!("{call}{n}");
            assert_eq!(
                text(&c.call(&["EVAL", &script, "1", &key])),
                format!(":{n}\r\n"),
                "{call} with {n}"
            );
        }
        let m = n.min(7_995);
        let script = format!(
            "local t = {{'rpush', 'k'}} for i = 1, {m} do t[i + 2] = 'x' end t[3] = nil \
             return redis.pcall(unpack(t, 1, {m} + 2))"
        );
        let reply = text(&c.call(&["EVAL", &script, "0"]));
        assert!(
            reply.contains("Lua redis lib command arguments must be strings or integers"),
            "{n}: {reply}"
        );
    }
}
