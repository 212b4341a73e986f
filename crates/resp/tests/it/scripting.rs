//! EVAL, SCRIPT, FUNCTION and FCALL over the wire: Redis's conversions, errors, atomicity,
//! the time limit with BUSY and SCRIPT KILL, and the libraries scripts get.

use crate::common;

use std::time::{Duration, Instant};

use common::{RawClient, Sluice};

fn client(server: &Sluice) -> RawClient {
    RawClient::connect(server.port).expect("connect")
}

fn text(reply: &[u8]) -> String {
    String::from_utf8_lossy(reply).into_owned()
}

#[test]
fn eval_converts_values_as_redis_does() {
    let server = Sluice::start();
    let mut c = client(&server);
    let eval = |c: &mut RawClient, script: &str| text(&c.call(&["EVAL", script, "0"]));
    assert_eq!(eval(&mut c, "return 1"), ":1\r\n");
    assert_eq!(eval(&mut c, "return 3.99"), ":3\r\n");
    assert_eq!(eval(&mut c, "return -3.99"), ":-3\r\n");
    assert_eq!(eval(&mut c, "return 'x'"), "$1\r\nx\r\n");
    assert_eq!(eval(&mut c, "return true"), ":1\r\n");
    assert_eq!(eval(&mut c, "return false"), "$-1\r\n");
    assert_eq!(eval(&mut c, "return nil"), "$-1\r\n");
    assert_eq!(
        eval(&mut c, "return {1, 2, 3, 'x', nil, 5}"),
        "*4\r\n:1\r\n:2\r\n:3\r\n$1\r\nx\r\n"
    );
    assert_eq!(eval(&mut c, "return {ok='fine'}"), "+fine\r\n");
    assert_eq!(eval(&mut c, "return {err='MY bad'}"), "-MY bad\r\n");
    assert_eq!(
        eval(&mut c, "return redis.error_reply('oops')"),
        "-ERR oops\r\n"
    );
    assert_eq!(
        eval(&mut c, "return redis.error_reply('-CODE x')"),
        "-CODE x\r\n"
    );
    assert_eq!(
        eval(&mut c, "return redis.status_reply('FINE')"),
        "+FINE\r\n"
    );
    assert_eq!(
        eval(&mut c, "return redis.sha1hex('')"),
        "$40\r\nda39a3ee5e6b4b0d3255bfef95601890afd80709\r\n"
    );
    assert_eq!(
        text(&c.call(&[
            "EVAL",
            "return {KEYS[1], ARGV[1], #KEYS, #ARGV}",
            "1",
            "k",
            "a"
        ])),
        "*4\r\n$1\r\nk\r\n$1\r\na\r\n:1\r\n:1\r\n"
    );
    // Replies of commands become Lua values and back.
    assert_eq!(
        eval(
            &mut c,
            "redis.call('set', 'a', 'b') return redis.call('get', 'a')"
        ),
        "$1\r\nb\r\n"
    );
    assert_eq!(
        eval(&mut c, "return redis.call('get', 'missing')"),
        "$-1\r\n"
    );
    assert_eq!(
        eval(&mut c, "return type(redis.call('get', 'missing'))"),
        "$7\r\nboolean\r\n"
    );
    assert_eq!(
        eval(&mut c, "return redis.call('set', 'a', 'b')"),
        "+OK\r\n"
    );
    assert_eq!(eval(&mut c, "return redis.call('incr', 'n') + 1"), ":2\r\n");
    assert_eq!(
        eval(&mut c, "return redis.call('set', 'n', 10.5)"),
        "+OK\r\n"
    );
    assert_eq!(
        eval(&mut c, "return redis.call('get', 'n')"),
        "$4\r\n10.5\r\n"
    );
}

#[test]
fn resp3_conversions_with_setresp() {
    let server = Sluice::start();
    let mut c = client(&server);
    assert!(text(&c.call(&["HELLO", "3"])).starts_with('%'));
    c.call(&["HSET", "h", "f", "v"]);
    let eval = |c: &mut RawClient, script: &str| text(&c.call(&["EVAL", script, "0"]));
    assert_eq!(
        eval(&mut c, "redis.setresp(3) return redis.call('hgetall', 'h')"),
        "%1\r\n$1\r\nf\r\n$1\r\nv\r\n"
    );
    assert_eq!(eval(&mut c, "redis.setresp(3) return true"), "#t\r\n");
    assert_eq!(eval(&mut c, "redis.setresp(3) return false"), "#f\r\n");
    assert_eq!(eval(&mut c, "return {double=3.5}"), ",3.5\r\n");
    assert_eq!(
        eval(&mut c, "return {big_number='123456789012345678901'}"),
        "(123456789012345678901\r\n"
    );
    assert_eq!(
        eval(&mut c, "return {map={a=1}}"),
        "%1\r\n$1\r\na\r\n:1\r\n"
    );
    assert_eq!(eval(&mut c, "return {set={a=true}}"), "~1\r\n$1\r\na\r\n");
    assert_eq!(
        eval(
            &mut c,
            "redis.setresp(3) return redis.call('hgetall', 'nothing').map ~= nil"
        ),
        "#t\r\n"
    );
    assert_eq!(eval(&mut c, "redis.setresp(4)"), "-ERR RESP version must be 2 or 3. script: f_5b9ac4b5ecc3d4b96b4df0da22ba3c3d2a6e0c05, on @user_script:1.\r\n".replace("f_5b9ac4b5ecc3d4b96b4df0da22ba3c3d2a6e0c05", &format!("f_{}", sha1_of("redis.setresp(4)"))));
}

fn sha1_of(script: &str) -> String {
    let server_side = Sluice::start();
    let mut c = client(&server_side);
    let reply = text(&c.call(&["SCRIPT", "LOAD", script]));
    reply.lines().nth(1).unwrap_or_default().to_owned()
}

#[test]
fn errors_name_the_script_and_line() {
    let server = Sluice::start();
    let mut c = client(&server);
    let reply = text(&c.call(&["EVAL", "local a = 1\nredis.call('nosuch')", "0"]));
    assert!(
        reply.starts_with("-ERR Unknown Redis command called from script script: f_")
            && reply.ends_with(", on @user_script:2.\r\n"),
        "{reply}"
    );
    let reply = text(&c.call(&["EVAL", "return redis.call('lpush', 'k')", "0"]));
    assert!(
        reply.starts_with("-ERR Wrong number of args calling Redis command from script"),
        "{reply}"
    );
    c.call(&["SET", "str", "x"]);
    let reply = text(&c.call(&["EVAL", "return redis.call('lpush', 'str', 'a')", "0"]));
    assert!(
        reply.starts_with("-WRONGTYPE Operation against a key"),
        "{reply}"
    );
    // pcall returns the error as a table; a script can look at it and go on.
    assert_eq!(
        text(&c.call(&[
            "EVAL",
            "local r = redis.pcall('lpush', 'str', 'a') return r.err",
            "0"
        ])),
        "$65\r\nWRONGTYPE Operation against a key holding the wrong kind of value\r\n"
    );
    assert_eq!(
        text(&c.call(&[
            "EVAL",
            "local ok, e = pcall(function() redis.call('nosuch') end) return e",
            "0"
        ])),
        "$44\r\nERR Unknown Redis command called from script\r\n"
    );
    let reply = text(&c.call(&["EVAL", "error('boom')", "0"]));
    assert!(
        reply.starts_with("-ERR user_script:1: boom script: f_"),
        "{reply}"
    );
    let reply = text(&c.call(&["EVAL", "return +", "0"]));
    assert!(
        reply.starts_with("-ERR Error compiling script (new function): user_script:1:"),
        "{reply}"
    );
    let reply = text(&c.call(&["EVAL", "return redis.call('get', {})", "0"]));
    assert!(
        reply.starts_with("-ERR Lua redis lib command arguments must be strings or integers"),
        "{reply}"
    );
    assert_eq!(
        text(&c.call(&["EVAL", "return 1", "-1"])),
        "-ERR Number of keys can't be negative\r\n"
    );
    assert_eq!(
        text(&c.call(&["EVAL", "return 1", "2", "a"])),
        "-ERR Number of keys can't be greater than number of args\r\n"
    );
    // An error midway keeps the writes before it (as Redis: scripts are not rolled back).
    let reply = text(&c.call(&[
        "EVAL",
        "redis.call('set', 'before', '1') redis.call('nosuch') redis.call('set', 'after', '1')",
        "0",
    ]));
    assert!(reply.starts_with("-ERR"), "{reply}");
    assert_eq!(text(&c.call(&["EXISTS", "before", "after"])), ":1\r\n");
}

#[test]
fn forbidden_commands_and_read_only_scripts() {
    let server = Sluice::start();
    let mut c = client(&server);
    for script in [
        "return redis.call('eval', 'return 1', '0')",
        "return redis.call('multi')",
        "return redis.call('subscribe', 'ch')",
        "return redis.call('script', 'flush')",
        "return redis.call('config', 'get', 'x')",
    ] {
        let reply = text(&c.call(&["EVAL", script, "0"]));
        assert!(
            reply.starts_with("-ERR This Redis command is not allowed from script"),
            "{script}: {reply}"
        );
    }
    let reply = text(&c.call(&["EVAL_RO", "return redis.call('set', 'a', 'b')", "0"]));
    assert!(
        reply.starts_with("-ERR Write commands are not allowed from read-only scripts."),
        "{reply}"
    );
    assert_eq!(
        text(&c.call(&["EVAL_RO", "return redis.call('get', 'a')", "0"])),
        "$-1\r\n"
    );
    let reply = text(&c.call(&[
        "EVAL",
        "#!lua flags=no-writes\nreturn redis.call('set', 'a', 'b')",
        "0",
    ]));
    assert!(
        reply.starts_with("-ERR Write commands are not allowed from read-only scripts."),
        "{reply}"
    );
    assert_eq!(
        text(&c.call(&["EVAL_RO", "#!lua\nreturn 1", "0"])),
        "-ERR Can not execute a script with write flag using *_ro command.\r\n"
    );
    assert_eq!(
        text(&c.call(&["EVAL", "#!lua flags=bogus\nreturn 1", "0"])),
        "-ERR Unexpected flag in script shebang: bogus\r\n"
    );
}

#[test]
fn globals_are_protected() {
    let server = Sluice::start();
    let mut c = client(&server);
    let reply = text(&c.call(&["EVAL", "return undefined_thing", "0"]));
    assert!(
        reply.starts_with("-ERR user_script:1: Script attempted to access nonexistent global variable 'undefined_thing'"),
        "{reply}"
    );
    for script in [
        "x = 1",
        "redis.call = function() return 1 end",
        "cjson.encode = 1",
        "string.rep = nil",
        "_G.x = 1",
        "setmetatable(_G, {})",
        "rawset(_G, 'x', 1)",
        "getmetatable(_G).__index = {}",
    ] {
        let reply = text(&c.call(&["EVAL", script, "0"]));
        assert!(
            reply.contains("Attempt to modify a readonly table"),
            "{script}: {reply}"
        );
    }
    for name in ["print", "dofile", "loadfile", "os", "io"] {
        let reply = text(&c.call(&["EVAL", &format!("return {name}"), "0"]));
        assert!(
            reply.contains("nonexistent global variable"),
            "{name}: {reply}"
        );
    }
}

#[test]
fn script_cache_evalsha_and_noscript() {
    let server = Sluice::start();
    let mut c = client(&server);
    let sha = "e0e1f9fabfc9d4800c877a703b823ac0578ff8db";
    assert_eq!(
        text(&c.call(&["SCRIPT", "LOAD", "return 1"])),
        format!("$40\r\n{sha}\r\n")
    );
    assert_eq!(text(&c.call(&["EVALSHA", sha, "0"])), ":1\r\n");
    assert_eq!(
        text(&c.call(&["EVALSHA", &sha.to_uppercase(), "0"])),
        ":1\r\n"
    );
    assert_eq!(
        text(&c.call(&["SCRIPT", "EXISTS", sha, "ffff"])),
        "*2\r\n:1\r\n:0\r\n"
    );
    assert_eq!(text(&c.call(&["SCRIPT", "FLUSH"])), "+OK\r\n");
    assert_eq!(
        text(&c.call(&["EVALSHA", sha, "0"])),
        "-NOSCRIPT No matching script. Please use EVAL.\r\n"
    );
    assert_eq!(
        text(&c.call(&["SCRIPT", "KILL"])),
        "-NOTBUSY No scripts in execution right now.\r\n"
    );
}

#[test]
fn scripts_are_atomic_and_work_inside_multi() {
    let server = Sluice::start();
    let mut c = client(&server);
    assert_eq!(text(&c.call(&["MULTI"])), "+OK\r\n");
    assert_eq!(
        text(&c.call(&["EVAL", "return redis.call('incr', KEYS[1])", "1", "n"])),
        "+QUEUED\r\n"
    );
    assert_eq!(text(&c.call(&["INCR", "n"])), "+QUEUED\r\n");
    assert_eq!(text(&c.call(&["EXEC"])), "*2\r\n:1\r\n:2\r\n");
    // Concurrent read-modify-write scripts lose no update.
    let port = server.port;
    let workers: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(move || {
                let mut c = RawClient::connect(port).expect("connect");
                for _ in 0..200 {
                    c.call(&["EVAL", "local v = tonumber(redis.call('get', 'ctr') or '0') redis.call('set', 'ctr', v + 1)", "0"]);
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("worker");
    }
    assert_eq!(text(&c.call(&["GET", "ctr"])), "$3\r\n800\r\n");
}

#[test]
fn deeply_nested_and_recursive_returns_do_not_crash() {
    let server = Sluice::start();
    let mut c = client(&server);
    let reply = c.call(&[
        "EVAL",
        "local t = {} local cur = t for i = 1, 300 do cur[1] = {} cur = cur[1] end return t",
        "0",
    ]);
    assert!(reply.starts_with(b"*1\r\n*1\r\n"));
    let reply = text(&c.call(&["EVAL", "local a = {} local b = {a} a[1] = b return a", "0"]));
    assert!(
        reply.ends_with("-ERR reached lua stack limit\r\n"),
        "{}",
        &reply[reply.len().saturating_sub(60)..]
    );
    // Unbounded Lua recursion is Lua's own stack overflow, answered as an error.
    let reply = text(&c.call(&[
        "EVAL",
        "local function f(n) return f(n + 1) + 1 end return f(1)",
        "0",
    ]));
    assert!(
        reply.starts_with("-ERR") && reply.contains("stack overflow"),
        "{reply}"
    );
    assert_eq!(text(&c.call(&["PING"])), "+PONG\r\n");
}

#[test]
fn slow_script_gets_busy_then_script_kill() {
    let server = Sluice::start();
    let mut c = client(&server);
    assert_eq!(
        text(&c.call(&["CONFIG", "SET", "busy-reply-threshold", "100"])),
        "+OK\r\n"
    );
    c.send_raw(&RawClient::encode(&["EVAL", "while true do end", "0"]));
    std::thread::sleep(Duration::from_millis(50));
    let mut other = client(&server);
    let started = Instant::now();
    let reply = text(&other.call(&["GET", "x"]));
    assert_eq!(
        reply,
        "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(
        text(&other.call(&["FUNCTION", "KILL"])),
        "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
    );
    assert_eq!(text(&other.call(&["SCRIPT", "KILL"])), "+OK\r\n");
    let reply = text(&c.read_reply());
    assert!(
        reply.starts_with("-ERR Script killed by user with SCRIPT KILL..."),
        "{reply}"
    );
    assert_eq!(text(&other.call(&["PING"])), "+PONG\r\n");
    assert_eq!(text(&c.call(&["PING"])), "+PONG\r\n");
    // A script that wrote cannot be killed.
    c.send_raw(&RawClient::encode(&["EVAL", "redis.call('set', 'w', '1') local t = os_clock_missing local i = 0 while i < 30000000 do i = i + 1 end return i", "0"]));
    std::thread::sleep(Duration::from_millis(50));
    let reply = text(&other.call(&["SCRIPT", "KILL"]));
    assert!(
        reply.starts_with("-UNKILLABLE") || reply.starts_with("-NOTBUSY"),
        "{reply}"
    );
    let _ = c.read_reply();
    // pcall does not swallow the kill.
    c.send_raw(&RawClient::encode(&[
        "EVAL",
        "while true do pcall(function() while true do end end) end",
        "0",
    ]));
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(text(&other.call(&["SCRIPT", "KILL"])), "+OK\r\n");
    assert!(text(&c.read_reply()).contains("Script killed by user"));
}

/// With one connection thread (as `sluice serve` runs) the script runs inline on the thread
/// that also serves the other clients: once it runs long, they move to another thread, get
/// BUSY and can kill it, including a client connected before the script started.
#[test]
fn a_long_script_frees_its_connection_thread() {
    let server = Sluice::start_with(sluice_resp::Config {
        io_threads: 1,
        ..sluice_resp::Config::default()
    });
    let mut c = client(&server);
    let mut other = client(&server);
    assert_eq!(text(&other.call(&["PING"])), "+PONG\r\n");
    assert_eq!(
        text(&c.call(&["CONFIG", "SET", "busy-reply-threshold", "100"])),
        "+OK\r\n"
    );
    for _ in 0..2 {
        c.send_raw(&RawClient::encode(&["EVAL", "while true do end", "0"]));
        std::thread::sleep(Duration::from_millis(150));
        let started = Instant::now();
        assert_eq!(
            text(&other.call(&["GET", "x"])),
            "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
        );
        assert!(started.elapsed() < Duration::from_secs(2));
        assert_eq!(text(&other.call(&["SCRIPT", "KILL"])), "+OK\r\n");
        let reply = text(&c.read_reply());
        assert!(reply.contains("Script killed by user"), "{reply}");
        // Both connections go on being served (the second round runs on the new thread).
        assert_eq!(text(&c.call(&["PING"])), "+PONG\r\n");
        assert_eq!(text(&other.call(&["PING"])), "+PONG\r\n");
    }
    // Short scripts keep running inline.
    for i in 0..100 {
        let reply = text(&c.call(&["EVAL", "return redis.call('incr', KEYS[1])", "1", "n"]));
        assert_eq!(reply, format!(":{}\r\n", i + 1));
    }
}

/// Tens of thousands of runs in a row leave nothing behind on the interpreter (a slot leaked
/// per run overflows Lua's stack after about 8,000).
#[test]
fn many_runs_keep_the_interpreter_balanced() {
    let server = Sluice::start();
    let mut c = client(&server);
    let sha = text(&c.call(&[
        "SCRIPT",
        "LOAD",
        "redis.call('INCRBY', KEYS[1], ARGV[1]) return redis.call('GET', KEYS[1])",
    ]));
    let sha = sha.trim_start_matches("$40\r\n").trim_end();
    let one = RawClient::encode(&["EVALSHA", sha, "1", "counter", "1"]);
    for round in 0..4 {
        let batch: Vec<u8> = one.repeat(5000);
        c.send_raw(&batch);
        for i in 0..5000 {
            let reply = text(&c.read_reply());
            let n = (round * 5000 + i + 1).to_string();
            assert_eq!(reply, format!("${}\r\n{n}\r\n", n.len()));
        }
    }
    // The collector keeps up (Redis's cadence: steps every 50 runs), so the interpreter stays
    // near its live size all along: Redis's own test wants under 100 KB after 10,000 runs from a
    // fresh interpreter (left alone, Lua 5.1 lets the heap grow to twice the live size).
    assert_eq!(text(&c.call(&["SCRIPT", "FLUSH"])), "+OK\r\n");
    let one = RawClient::encode(&["EVAL", "return redis.call('incr', KEYS[1])", "1", "x"]);
    let mut highest = 0;
    for _ in 0..40 {
        c.send_raw(&one.repeat(250));
        for _ in 0..250 {
            c.read_reply();
        }
        let memory = text(&c.call(&["INFO", "memory"]));
        let lua: usize = memory
            .split("\r\n")
            .find_map(|l| l.strip_prefix("used_memory_lua:"))
            .and_then(|v| v.parse().ok())
            .expect("used_memory_lua");
        highest = highest.max(lua);
    }
    let lua = highest;
    assert!(lua < 100 * 1024, "used_memory_lua {lua}");
}

#[test]
fn harness_stops_endless_and_hungry_scripts() {
    let harness =
        sluice_resp::ScriptHarness::new(Duration::from_millis(50), 16 << 20).expect("harness");
    let reply = text(&harness.eval(b"while true do end", b"0", &[], false));
    assert!(reply.contains("Script killed by user"), "{reply}");
    let reply = text(&harness.eval(
        b"local t = {} for i = 1, 1e8 do t[i] = string.rep('x', 100) .. i end",
        b"0",
        &[],
        false,
    ));
    assert!(reply.starts_with("-ERR"), "{reply}");
    assert_eq!(
        text(&harness.eval(b"return ARGV[1]", b"0", &[b"x"], true)),
        "$1\r\nx\r\n"
    );
}

#[test]
fn libraries_cjson_cmsgpack_bit_struct() {
    let server = Sluice::start();
    let mut c = client(&server);
    let eval = |c: &mut RawClient, script: &str| text(&c.call(&["EVAL", script, "0"]));
    assert_eq!(
        eval(&mut c, "return cjson.encode({1, 2, 'a'})"),
        "$9\r\n[1,2,\"a\"]\r\n"
    );
    assert_eq!(
        eval(&mut c, "return cjson.encode({a=1})"),
        "$7\r\n{\"a\":1}\r\n"
    );
    assert_eq!(
        eval(
            &mut c,
            "return cjson.decode('{\"a\":[1,2,{\"b\":true}]}').a[3].b"
        ),
        ":1\r\n"
    );
    assert_eq!(
        eval(&mut c, "return cjson.decode('[1,null]')[2] == cjson.null"),
        ":1\r\n"
    );
    assert!(eval(&mut c, "return cjson.decode('{bad')").starts_with("-ERR"));
    assert_eq!(
        eval(
            &mut c,
            "return cmsgpack.unpack(cmsgpack.pack({1, 2, {a='x'}, 3.5, -300}))[3].a"
        ),
        "$1\r\nx\r\n"
    );
    assert_eq!(
        eval(
            &mut c,
            "local t = {cmsgpack.unpack(cmsgpack.pack(1, 'two', -3.25))} return {t[1], t[2], tostring(t[3])}"
        ),
        "*3\r\n:1\r\n$3\r\ntwo\r\n$5\r\n-3.25\r\n"
    );
    assert_eq!(
        c.call(&["EVAL", "return cmsgpack.pack({1, 2})", "0"]),
        b"$3\r\n\x92\x01\x02\r\n"
    );
    assert!(eval(&mut c, "return cmsgpack.unpack('\\220\\255\\255')").starts_with("-ERR"));
    assert_eq!(eval(&mut c, "return bit.band(0xff, 0x0f)"), ":15\r\n");
    assert_eq!(
        eval(&mut c, "return bit.tohex(65535)"),
        "$8\r\n0000ffff\r\n"
    );
    assert_eq!(eval(&mut c, "return bit.bnot(0)"), ":-1\r\n");
    assert_eq!(eval(&mut c, "return bit.lshift(1, 31)"), ":-2147483648\r\n");
    assert_eq!(
        eval(&mut c, "return struct.pack('>I2', 258)"),
        "$2\r\n\x01\x02\r\n"
    );
    assert_eq!(
        eval(
            &mut c,
            "return {struct.unpack('<i2 b', struct.pack('<i2 b', -2, 7))}"
        ),
        "*3\r\n:-2\r\n:7\r\n:4\r\n"
    );
    assert_eq!(eval(&mut c, "return struct.size('>iIhd')"), ":18\r\n");
    assert!(eval(&mut c, "return struct.unpack('>I4', 'ab')").starts_with("-ERR"));
}

#[test]
fn functions_load_call_list_delete_dump_restore() {
    let server = Sluice::start();
    let mut c = client(&server);
    let lib = "#!lua name=mylib\nredis.register_function('hello', function(keys, args) return 'hi ' .. args[1] end)\nredis.register_function{function_name='getk', callback=function(keys) return redis.call('get', keys[1]) end, flags={'no-writes'}, description='reads'}\nredis.register_function('setk', function(keys, args) return redis.call('set', keys[1], args[1]) end)";
    assert_eq!(text(&c.call(&["FUNCTION", "LOAD", lib])), "$5\r\nmylib\r\n");
    assert_eq!(
        text(&c.call(&["FUNCTION", "LOAD", lib])),
        "-ERR Library 'mylib' already exists\r\n"
    );
    assert_eq!(
        text(&c.call(&["FUNCTION", "LOAD", "REPLACE", lib])),
        "$5\r\nmylib\r\n"
    );
    assert_eq!(
        text(&c.call(&["FCALL", "hello", "0", "you"])),
        "$6\r\nhi you\r\n"
    );
    assert_eq!(text(&c.call(&["FCALL", "setk", "1", "k", "v"])), "+OK\r\n");
    assert_eq!(
        text(&c.call(&["FCALL_RO", "getk", "1", "k"])),
        "$1\r\nv\r\n"
    );
    assert_eq!(
        text(&c.call(&["FCALL_RO", "setk", "1", "k", "v"])),
        "-ERR Can not execute a script with write flag using *_ro command.\r\n"
    );
    assert_eq!(
        text(&c.call(&["FCALL", "nosuch", "0"])),
        "-ERR Function not found\r\n"
    );
    let list = text(&c.call(&["FUNCTION", "LIST", "WITHCODE"]));
    assert!(
        list.contains("library_name")
            && list.contains("getk")
            && list.contains("reads")
            && list.contains("no-writes")
            && list.contains("library_code"),
        "{list}"
    );
    assert_eq!(
        text(&c.call(&["FUNCTION", "LIST", "LIBRARYNAME", "nomatch*"])),
        "*0\r\n"
    );
    for (code, want) in [
        ("return 1", "-ERR Missing library metadata\r\n"),
        ("#!lua\nreturn 1", "-ERR Library name was not given\r\n"),
        ("#!lua name=x\n", "-ERR No functions registered\r\n"),
        (
            "#!lua name=x\nredis.call('ping')",
            "-ERR Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'call'\r\n",
        ),
        (
            "#!lua name=other\nredis.register_function('hello', function() end)",
            "-ERR Function hello already exists\r\n",
        ),
        (
            "#!lua name=bad\nredis.register_function('f', function() end, 3)",
            "-ERR Error registering functions: ERR wrong number of arguments to redis.register_function\r\n",
        ),
        (
            "#!lua name=loop\nwhile true do end",
            "-ERR Error registering functions: ERR FUNCTION LOAD timeout\r\n",
        ),
    ] {
        assert_eq!(text(&c.call(&["FUNCTION", "LOAD", code])), want, "{code}");
    }
    let dump = c.call(&["FUNCTION", "DUMP"]);
    let payload = &dump[dump.iter().position(|b| *b == b'\n').expect("bulk") + 1..dump.len() - 2];
    assert_eq!(text(&c.call(&["FUNCTION", "FLUSH"])), "+OK\r\n");
    assert_eq!(
        text(&c.call(&["FCALL", "hello", "0", "x"])),
        "-ERR Function not found\r\n"
    );
    assert_eq!(
        text(&c.call(&[b"FUNCTION".as_slice(), b"RESTORE", payload])),
        "+OK\r\n"
    );
    assert_eq!(
        text(&c.call(&["FCALL", "hello", "0", "x"])),
        "$4\r\nhi x\r\n"
    );
    let mut broken = payload.to_vec();
    broken[12] ^= 1;
    assert_eq!(
        text(&c.call(&[b"FUNCTION".as_slice(), b"RESTORE", &broken])),
        "-ERR DUMP payload version or checksum are wrong\r\n"
    );
    assert_eq!(text(&c.call(&["FUNCTION", "DELETE", "mylib"])), "+OK\r\n");
    assert_eq!(
        text(&c.call(&["FUNCTION", "DELETE", "mylib"])),
        "-ERR Library not found\r\n"
    );
    let stats = text(&c.call(&["FUNCTION", "STATS"]));
    assert!(
        stats.contains("libraries_count") && stats.contains("running_script"),
        "{stats}"
    );
}
