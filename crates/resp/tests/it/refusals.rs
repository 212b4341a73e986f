//! Commands refused before they run, as Redis 7.0 refuses them (its rejectCommand): EXEC gets
//! EXECABORT and leaves MULTI, SAVE is refused inside MULTI, scripts that declare flags are
//! refused over maxmemory (OOM) or without enough replicas (NOREPLICAS), FUNCTION LOAD is
//! refused over maxmemory, and a refusal inside a script counts once in INFO errorstats. Also:
//! every subcommand COMMAND LIST names is one Sluice answers.

use std::time::Duration;

use crate::common;

use common::{RawClient, Sluice};

fn text(reply: &[u8]) -> String {
    String::from_utf8_lossy(reply).into_owned()
}

fn info_line(c: &mut RawClient, section: &str, field: &str) -> String {
    let reply = text(&c.call(&["INFO", section]));
    reply
        .split("\r\n")
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn exec_while_a_script_is_busy_aborts_and_leaves_multi() {
    let server = Sluice::start();
    let mut c = RawClient::connect(server.port).expect("connect");
    let mut tx = RawClient::connect(server.port).expect("connect");
    assert_eq!(
        c.call(&["CONFIG", "SET", "lua-time-limit", "10"]),
        b"+OK\r\n"
    );
    assert_eq!(c.call(&["SET", "xx", "1"]), b"+OK\r\n");
    assert_eq!(tx.call(&["WATCH", "xx"]), b"+OK\r\n");
    assert_eq!(tx.call(&["MULTI"]), b"+OK\r\n");
    assert_eq!(tx.call(&["INCR", "xx"]), b"+QUEUED\r\n");
    let mut busy = RawClient::connect(server.port).expect("connect");
    busy.send_raw(&RawClient::encode(&["EVAL", "while true do end", "0"]));
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        text(&tx.call(&["EXEC"])),
        "-EXECABORT Transaction discarded because of: BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
    );
    assert_eq!(c.call(&["SCRIPT", "KILL"]), b"+OK\r\n");
    assert!(text(&busy.read_reply()).contains("Script killed by user"));
    assert_eq!(c.call(&["GET", "xx"]), b"$1\r\n1\r\n");
    // Out of MULTI, and the WATCH went with it: a change to xx fails nothing now.
    assert_eq!(tx.call(&["PING", "asdf"]), b"$4\r\nasdf\r\n");
    assert_eq!(c.call(&["SET", "xx", "2"]), b"+OK\r\n");
    assert_eq!(tx.call(&["MULTI"]), b"+OK\r\n");
    assert_eq!(tx.call(&["INCR", "xx"]), b"+QUEUED\r\n");
    assert_eq!(tx.call(&["EXEC"]), b"*1\r\n:3\r\n");
    // A command queued while busy fails the transaction, as any queueing error does.
    assert_eq!(tx.call(&["MULTI"]), b"+OK\r\n");
    busy.send_raw(&RawClient::encode(&["EVAL", "while true do end", "0"]));
    std::thread::sleep(Duration::from_millis(200));
    assert!(text(&tx.call(&["INCR", "xx"])).starts_with("-BUSY"));
    assert_eq!(c.call(&["SCRIPT", "KILL"]), b"+OK\r\n");
    let _ = busy.read_reply();
    assert_eq!(
        text(&tx.call(&["EXEC"])),
        "-EXECABORT Transaction discarded because of previous errors.\r\n"
    );
    // SAVE may not be queued.
    assert_eq!(tx.call(&["MULTI"]), b"+OK\r\n");
    assert_eq!(tx.call(&["SET", "foo", "bar"]), b"+QUEUED\r\n");
    assert_eq!(
        text(&tx.call(&["SAVE"])),
        "-ERR Command not allowed inside a transaction\r\n"
    );
    assert!(text(&tx.call(&["EXEC"])).starts_with("-EXECABORT"));
    assert_eq!(tx.call(&["GET", "foo"]), b"$-1\r\n");
}

#[test]
fn scripts_with_flags_are_refused_over_maxmemory_unless_they_allow_it() {
    let server = Sluice::start();
    let mut c = RawClient::connect(server.port).expect("connect");
    assert_eq!(c.call(&["SET", "x", "123"]), b"+OK\r\n");
    assert_eq!(c.call(&["CONFIG", "SET", "maxmemory", "1"]), b"+OK\r\n");
    let oom = "-OOM command not allowed when used memory > 'maxmemory'.\r\n";
    // Without a shebang only the commands inside decide.
    assert!(
        text(&c.call(&["EVAL", "redis.call('set','x',1) return 1", "1", "x"]))
            .starts_with(oom.trim_end())
    );
    assert_eq!(
        c.call(&["EVAL", "return redis.call('get','x')", "1", "x"]),
        b"$3\r\n123\r\n"
    );
    // With one, a script that may write does not start.
    assert_eq!(text(&c.call(&["EVAL", "#!lua flags=\nreturn 1", "0"])), oom);
    assert_eq!(
        c.call(&[
            "EVAL",
            "#!lua flags=allow-oom\nredis.call('set','x',1) return 1",
            "1",
            "x"
        ]),
        b":1\r\n"
    );
    assert_eq!(
        c.call(&[
            "EVAL",
            "#!lua flags=no-writes\nredis.call('get','x') return 1",
            "0"
        ]),
        b":1\r\n"
    );
    // FUNCTION LOAD and RESTORE may grow memory: refused; FUNCTION FLUSH is not.
    assert_eq!(
        text(&c.call(&[
            "FUNCTION",
            "LOAD",
            "#!lua name=lib\nredis.register_function('f', function() return 1 end)"
        ])),
        oom
    );
    assert_eq!(c.call(&["FUNCTION", "FLUSH"]), b"+OK\r\n");
    assert_eq!(c.call(&["CONFIG", "SET", "maxmemory", "0"]), b"+OK\r\n");
    assert_eq!(
        c.call(&[
            "FUNCTION",
            "LOAD",
            "#!lua name=lib\nredis.register_function('f', function() return 1 end)"
        ]),
        b"$3\r\nlib\r\n"
    );
    assert_eq!(c.call(&["CONFIG", "SET", "maxmemory", "1"]), b"+OK\r\n");
    assert_eq!(text(&c.call(&["FCALL", "f", "0"])), oom);
    assert_eq!(c.call(&["CONFIG", "SET", "maxmemory", "0"]), b"+OK\r\n");
    assert_eq!(c.call(&["FCALL", "f", "0"]), b":1\r\n");
}

#[test]
fn min_replicas_to_write_refuses_writes_as_redis_without_replicas() {
    let server = Sluice::start();
    let mut c = RawClient::connect(server.port).expect("connect");
    assert_eq!(c.call(&["SET", "x", "some value"]), b"+OK\r\n");
    assert_eq!(
        c.call(&["CONFIG", "SET", "min-replicas-to-write", "1"]),
        b"+OK\r\n"
    );
    let refused = "-NOREPLICAS Not enough good replicas to write.\r\n";
    assert_eq!(text(&c.call(&["SET", "x", "1"])), refused);
    assert_eq!(c.call(&["GET", "x"]), b"$10\r\nsome value\r\n");
    assert_eq!(
        c.call(&[
            "EVAL",
            "#!lua flags=no-writes\nreturn redis.call('get','x')",
            "1",
            "x"
        ]),
        b"$10\r\nsome value\r\n"
    );
    assert_eq!(
        c.call(&["EVAL", "return redis.call('get','x')", "1", "x"]),
        b"$10\r\nsome value\r\n"
    );
    assert_eq!(
        text(&c.call(&["EVAL", "#!lua\nreturn redis.call('get','x')", "1", "x"])),
        refused
    );
    assert!(
        text(&c.call(&["EVAL", "return redis.call('set','x',1)", "1", "x"]))
            .starts_with("-NOREPLICAS ")
    );
    // Refused when queued (the transaction fails), or at EXEC when the setting came later.
    assert_eq!(c.call(&["MULTI"]), b"+OK\r\n");
    assert_eq!(text(&c.call(&["SET", "x", "1"])), refused);
    assert_eq!(
        text(&c.call(&["EXEC"])),
        "-EXECABORT Transaction discarded because of previous errors.\r\n"
    );
    let mut other = RawClient::connect(server.port).expect("connect");
    assert_eq!(
        other.call(&["CONFIG", "SET", "min-replicas-to-write", "0"]),
        b"+OK\r\n"
    );
    assert_eq!(c.call(&["MULTI"]), b"+OK\r\n");
    assert_eq!(c.call(&["SET", "x", "1"]), b"+QUEUED\r\n");
    assert_eq!(
        other.call(&["CONFIG", "SET", "min-replicas-to-write", "2"]),
        b"+OK\r\n"
    );
    assert_eq!(
        text(&c.call(&["EXEC"])),
        "-EXECABORT Transaction discarded because of: NOREPLICAS Not enough good replicas to write.\r\n"
    );
    assert_eq!(c.call(&["GET", "x"]), b"$10\r\nsome value\r\n");
    // min-replicas-max-lag 0 turns the check off, as in Redis.
    assert_eq!(
        c.call(&["CONFIG", "SET", "min-replicas-max-lag", "0"]),
        b"+OK\r\n"
    );
    assert_eq!(c.call(&["SET", "x", "1"]), b"+OK\r\n");
    assert_eq!(
        c.call(&[
            "CONFIG",
            "SET",
            "min-replicas-max-lag",
            "10",
            "min-replicas-to-write",
            "0"
        ]),
        b"+OK\r\n"
    );
    assert_eq!(c.call(&["SET", "x", "2"]), b"+OK\r\n");
}

#[test]
fn a_refusal_inside_a_script_counts_once() {
    let server = Sluice::start();
    let mut c = RawClient::connect(server.port).expect("connect");
    let stat =
        |c: &mut RawClient, name: &str| info_line(c, "commandstats", &format!("cmdstat_{name}"));
    assert_eq!(c.call(&["CONFIG", "RESETSTAT"]), b"+OK\r\n");
    assert_eq!(c.call(&["CONFIG", "SET", "maxmemory", "1"]), b"+OK\r\n");
    assert!(
        text(&c.call(&["EVAL", "return redis.call('set','x','y')", "1", "x"])).starts_with("-OOM")
    );
    assert_eq!(info_line(&mut c, "errorstats", "errorstat_OOM"), "count=1");
    assert_eq!(info_line(&mut c, "stats", "total_error_replies"), "1");
    assert!(
        stat(&mut c, "set").starts_with("calls=0,")
            && stat(&mut c, "set").contains("rejected_calls=1,failed_calls=0")
    );
    assert!(
        stat(&mut c, "eval").starts_with("calls=1,")
            && stat(&mut c, "eval").contains("rejected_calls=0,failed_calls=1")
    );
    // An error returned by redis.pcall counted when it happened, not again as the reply.
    assert_eq!(c.call(&["CONFIG", "RESETSTAT"]), b"+OK\r\n");
    assert!(
        text(&c.call(&["EVAL", "return redis.pcall('set','x','y')", "1", "x"])).starts_with("-OOM")
    );
    assert_eq!(info_line(&mut c, "errorstats", "errorstat_OOM"), "count=1");
    assert_eq!(info_line(&mut c, "stats", "total_error_replies"), "1");
    assert_eq!(c.call(&["CONFIG", "SET", "maxmemory", "0"]), b"+OK\r\n");
    // A failed command inside counts once too; the script's own error counts as usual.
    assert_eq!(c.call(&["CONFIG", "RESETSTAT"]), b"+OK\r\n");
    assert!(
        text(&c.call(&["EVAL", "return redis.call('select',99)", "0"]))
            .starts_with("-ERR DB index")
    );
    assert_eq!(info_line(&mut c, "errorstats", "errorstat_ERR"), "count=1");
    assert!(
        text(&c.call(&["EVAL", "return redis.error_reply('MY_ERR custom')", "0"]))
            .starts_with("-MY_ERR")
    );
    assert_eq!(
        info_line(&mut c, "errorstats", "errorstat_MY_ERR"),
        "count=1"
    );
    assert_eq!(info_line(&mut c, "stats", "total_error_replies"), "2");
    // Write commands from a read-only script: rejected, counted as ERR once.
    assert_eq!(c.call(&["CONFIG", "RESETSTAT"]), b"+OK\r\n");
    assert!(
        text(&c.call(&["EVAL_RO", "return redis.call('set','x','y')", "1", "x"]))
            .starts_with("-ERR Write commands are not allowed from read-only scripts")
    );
    assert_eq!(info_line(&mut c, "errorstats", "errorstat_ERR"), "count=1");
    assert!(stat(&mut c, "set").contains("rejected_calls=1"));
}

#[test]
fn every_subcommand_command_list_names_is_answered() {
    let server = Sluice::start();
    let mut c = RawClient::connect(server.port).expect("connect");
    let (_, names) = common::split_aggregate(&c.call(&["COMMAND", "LIST"])).expect("a list");
    let names: Vec<String> = names
        .iter()
        .map(|n| {
            let n = text(n);
            n.split("\r\n").nth(1).unwrap_or_default().to_owned()
        })
        .collect();
    assert!(names.iter().any(|n| n == "client|list"));
    assert!(names.iter().any(|n| n == "command|getkeysandflags"));
    assert!(
        !names.iter().any(|n| n == "script|debug"),
        "Sluice has no Lua debugger"
    );
    let count = text(&c.call(&["COMMAND", "COUNT"]));
    let top = names.iter().filter(|n| !n.contains('|')).count();
    assert_eq!(count, format!(":{top}\r\n"));
    for name in names.iter().filter(|n| n.contains('|')) {
        let (parent, sub) = name.split_once('|').unwrap_or_default();
        let reply = text(&c.call(&[parent, sub]));
        assert!(!reply.contains("unknown subcommand"), "{name}: {reply}");
        // Leave no state behind that the next probe would trip on.
        if name == "client|pause" || name == "client|reply" || name == "client|tracking" {
            let _ = c.call(&["CLIENT", "UNPAUSE"]);
        }
    }
}
