//! ACL users through real clients: redis-py and redis-cli authenticate as users whose commands,
//! keys and channels are allowed or refused with Redis 7.0's errors; AUTH failures, the default
//! user and requirepass, ACL LOG, DELUSER closing connections, the ACL file (LOAD, SAVE, start),
//! users declared in the configuration, and the categories against redis-server's.

use crate::common;

use std::process::Command;

use common::{RawClient, RedisServer, Sluice, have};
use sluice_embedded::clients;

const USERS_SCRIPT: &str = r#"
import sys, redis
port, proto = int(sys.argv[1]), int(sys.argv[2])
admin = redis.Redis(port=port, protocol=proto, decode_responses=True)
admin.flushall()
for u in admin.acl_users():
    if u != "default":
        admin.acl_deluser(u)
admin.acl_log_reset()

def error_of(f):
    try:
        f()
    except redis.RedisError as e:
        return str(e)
    raise SystemExit("expected an error")

from redis.backoff import NoBackoff
from redis.retry import Retry

def client(user, password):
    # No retries: a refused AUTH is answered once.
    return redis.Redis(port=port, protocol=proto, username=user, password=password,
                       decode_responses=True, retry=Retry(NoBackoff(), 0))

# The default user: nopass, everything.
assert admin.acl_whoami() == "default"
assert admin.acl_list() == ["user default on nopass ~* &* +@all"]
assert "AUTH <password> called without any password configured" in error_of(lambda: admin.auth("x"))

# An application user: reads and writes under app:*, no dangerous commands.
assert admin.acl_setuser("app", enabled=True, passwords=["+apppw"], keys=["app:*"],
                         channels=["app:*"], commands=["+@all", "-@dangerous"])
app = client("app", "apppw")
assert app.acl_whoami() == "app"
assert app.set("app:1", "v") and app.get("app:1") == "v"
assert error_of(lambda: app.set("other", "v")) == \
    "this user has no permissions to access one of the keys used as arguments"
assert error_of(lambda: app.flushall()) == \
    "this user has no permissions to run the 'flushall' command"
assert error_of(lambda: app.execute_command("CONFIG", "SET", "maxmemory", "0")) == \
    "this user has no permissions to run the 'config|set' command"
assert app.publish("app:events", "x") == 0
assert error_of(lambda: app.publish("other", "x")) == \
    "this user has no permissions to access one of the channels used as arguments"
# MSET checks every key; MGET too.
assert "keys" in error_of(lambda: app.mset({"app:2": 1, "nope": 2}))
assert admin.exists("app:2") == 0

# Read-only and write-only key patterns.
admin.acl_setuser("ro", enabled=True, nopass=True, keys=["%R~data:*"], commands=["+@all"])
admin.set("data:1", "x")
ro = client("ro", "anything")
assert ro.get("data:1") == "x"
assert "keys" in error_of(lambda: ro.set("data:1", "y"))
admin.acl_setuser("wo", enabled=True, nopass=True, keys=["%W~log:*"], commands=["+@all"])
wo = client("wo", "x")
assert wo.lpush("log:1", "a") == 1
assert "keys" in error_of(lambda: wo.lrange("log:1", 0, -1))

# Subcommands and first arguments.
admin.acl_setuser("sub", enabled=True, nopass=True, keys=["*"],
                  commands=["-@all", "+client|id", "+select|0", "+get"])
sub = client("sub", "x")
assert sub.client_id() > 0
assert sub.execute_command("SELECT", 0)
assert error_of(lambda: sub.execute_command("SELECT", 1)) == \
    "this user has no permissions to run the 'select' command"
assert error_of(lambda: sub.client_list()) == \
    "this user has no permissions to run the 'client|list' command"
u = admin.acl_getuser("sub")
assert "+client|id" in u["commands"] and "+select|0" in u["commands"], u

# AUTH failures: WRONGPASS, logged with the user's name; disabled users cannot log in.
try:
    client("app", "wrong").ping()
    raise SystemExit("a wrong password was accepted")
except redis.AuthenticationError as e:
    assert "invalid username-password pair" in str(e), e
admin.acl_setuser("app", enabled=False)
try:
    client("app", "apppw").ping()
    raise SystemExit("a disabled user logged in")
except redis.AuthenticationError:
    pass
# Connections already open keep working, as in Redis.
assert app.get("app:1") == "v"
entries = admin.acl_log()
auth = [e for e in entries if e["reason"] == "auth"]
assert auth and auth[0]["username"] == "app", entries
assert auth[0]["object"] == ("AUTH" if proto == 2 else "HELLO"), entries
denied = [e for e in entries if e["reason"] == "key" and e["username"] == "app"]
assert denied and denied[0]["object"] == "nope", entries
assert [e for e in entries if e["reason"] == "channel" and e["object"] == "other"], entries
cmd = [e for e in entries if e["reason"] == "command" and e["object"] == "flushall"]
assert cmd and cmd[0]["context"] == "toplevel" and cmd[0]["username"] == "app", entries

# MULTI: refused while queueing, and EXEC aborts.
admin.acl_setuser("app", enabled=True)
p = app.pipeline(transaction=True)
p.set("app:3", "v")
p.flushdb()
try:
    p.execute()
    raise SystemExit("EXEC ran")
except (redis.ResponseError, redis.exceptions.ExecAbortError) as e:
    assert "EXECABORT" in str(e) or "no permissions" in str(e), e
assert admin.exists("app:3") == 0

# Scripts run as their caller.
assert "no permissions to access one of the keys" in \
    error_of(lambda: app.eval("return redis.call('get', KEYS[1])", 1, "secret"))
assert "The user executing the script can't access at least one of the keys" in \
    error_of(lambda: app.eval("return redis.call('get', 'secret')", 0))
assert app.eval("return redis.call('get', KEYS[1])", 1, "app:1") == "v"

# DRYRUN, CAT, GENPASS, USERS.
assert admin.acl_dryrun("app", "get", "app:1") == "OK"
assert admin.acl_dryrun("app", "get", "x") == "This user has no permissions to access the 'x' key"
assert admin.acl_dryrun("app", "flushdb") == \
    "This user has no permissions to run the 'flushdb' command"
assert "keyspace" in admin.acl_cat() and "multi" in admin.acl_cat("transaction")
assert "function|list" in admin.acl_cat("scripting")
assert len(admin.acl_genpass()) == 64 and len(admin.acl_genpass(10)) == 3
assert sorted(admin.acl_users()) == ["app", "default", "ro", "sub", "wo"]

# DELUSER closes the user's connections; others stay.
assert admin.acl_deluser("wo") == 1
try:
    wo.ping()
    raise SystemExit("a deleted user's connection still runs commands")
except redis.ConnectionError:
    pass
assert admin.ping()
assert "The 'default' user cannot be removed" in error_of(lambda: admin.acl_deluser("default"))

# requirepass is the default user's password.
admin.config_set("requirepass", "s3cret")
try:
    redis.Redis(port=port, protocol=proto).ping()
    raise SystemExit("no password needed after requirepass")
except redis.AuthenticationError as e:
    # RESP3 clients start with HELLO, refused the same way.
    assert "Authentication required" in str(e) or "HELLO must be called with the client \
already authenticated" in str(e), e
fresh = redis.Redis(port=port, protocol=proto, password="s3cret", decode_responses=True)
assert fresh.acl_whoami() == "default"
fresh.config_set("requirepass", "")
assert redis.Redis(port=port, protocol=proto).ping()
print("ok")
"#;

#[test]
fn redis_py_users_commands_keys_and_channels() {
    let Some(python) = clients::require(clients::python(), "redis-py") else {
        return;
    };
    let server = Sluice::start();
    common::assert_redis_py_both_protocols(&python, USERS_SCRIPT, server.port, "redis-py ACL");
}

#[test]
fn redis_cli_as_acl_users() {
    if !have("redis-cli") {
        eprintln!("SKIP: redis-cli is not installed");
        return;
    }
    let server = Sluice::start();
    let port = server.port.to_string();
    let cli = |auth: &[&str], args: &[&str]| {
        let out = Command::new("redis-cli")
            .args(["-p", &port, "--no-auth-warning"])
            .args(auth)
            .args(args)
            .output()
            .expect("redis-cli");
        String::from_utf8_lossy(&out.stdout).trim_end().to_owned()
            + String::from_utf8_lossy(&out.stderr).trim_end()
    };
    assert_eq!(
        cli(
            &[],
            &[
                "ACL", "SETUSER", "reader", "on", ">rpw", "~cache:*", "+@read", "+ping"
            ]
        ),
        "OK"
    );
    assert_eq!(cli(&[], &["SET", "cache:a", "1"]), "OK");
    let reader = ["--user", "reader", "--pass", "rpw"];
    assert_eq!(cli(&reader, &["GET", "cache:a"]), "1");
    assert_eq!(
        cli(&reader, &["ACL", "WHOAMI"]),
        "NOPERM this user has no permissions to run the 'acl|whoami' command"
    );
    assert_eq!(
        cli(&reader, &["SET", "cache:a", "2"]),
        "NOPERM this user has no permissions to run the 'set' command"
    );
    assert_eq!(
        cli(&reader, &["GET", "secret"]),
        "NOPERM this user has no permissions to access one of the keys used as arguments"
    );
    let wrong = ["--user", "reader", "--pass", "nope"];
    assert!(
        cli(&wrong, &["PING"])
            .contains("WRONGPASS invalid username-password pair or user is disabled."),
        "{}",
        cli(&wrong, &["PING"])
    );
    assert_eq!(
        cli(&[], &["ACL", "GETUSER", "reader"]).lines().nth(5),
        Some("-@all +@read +ping")
    );
    assert_eq!(
        cli(&[], &["ACL", "LIST"])
            .lines()
            .next()
            .map(|l| l.starts_with("user default on nopass")),
        Some(true)
    );
    // The one-argument AUTH is the default user's.
    assert_eq!(cli(&[], &["CONFIG", "SET", "requirepass", "pw"]), "OK");
    assert!(cli(&[], &["PING"]).contains("NOAUTH Authentication required."));
    assert_eq!(cli(&["-a", "pw"], &["PING"]), "PONG");
    assert_eq!(
        cli(&["-a", "pw"], &["CONFIG", "SET", "requirepass", ""]),
        "OK"
    );
}

#[test]
fn acl_file_loads_at_start_saves_and_reloads() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("users.acl");
    std::fs::write(
        &path,
        "user alice on allcommands allkeys &* >alice\n\
         user bob on -@all +@set +acl ~set* &* >bob\n\
         user default on nopass ~* &* +@all\n",
    )
    .expect("write");
    let server = Sluice::start_with(sluice_resp::Config {
        aclfile: Some(path.clone()),
        ..sluice_resp::Config::default()
    });
    let mut c = RawClient::connect(server.port).expect("connect");
    assert_eq!(c.call(&["AUTH", "bob", "bob"]), b"+OK\r\n");
    assert_eq!(c.call(&["SADD", "set1", "a"]), b":1\r\n");
    assert_eq!(
        c.call(&["SET", "k", "v"]),
        b"-NOPERM this user has no permissions to run the 'set' command\r\n"
    );
    assert_eq!(c.call(&["AUTH", "alice", "alice"]), b"+OK\r\n");
    assert_eq!(
        c.call(&["ACL", "SETUSER", "eve", "+get", "allkeys", ">eve", "on"]),
        b"+OK\r\n"
    );
    assert_eq!(c.call(&["ACL", "SAVE"]), b"+OK\r\n");
    let saved = std::fs::read_to_string(&path).expect("read");
    assert!(saved.contains("user eve on #"), "{saved}");
    assert!(saved.lines().count() == 4, "{saved}");
    // ACL LOAD replaces the users: connections of users other than default are closed.
    let mut default = RawClient::connect(server.port).expect("connect");
    c.send_raw(&RawClient::encode(&["ACL", "LOAD"]));
    assert_eq!(c.read_reply(), b"+OK\r\n");
    assert!(
        c.is_closed(),
        "alice's connection stays open after ACL LOAD"
    );
    assert_eq!(default.call(&["PING"]), b"+PONG\r\n");
    assert_eq!(default.call(&["AUTH", "eve", "eve"]), b"+OK\r\n");
    assert_eq!(default.call(&["GET", "k"]), b"$-1\r\n");
    // A bad file changes nothing and names the line.
    std::fs::write(&path, "user alice on nopass\nuser alice off\n").expect("write");
    let mut admin = RawClient::connect(server.port).expect("connect");
    let reply = String::from_utf8_lossy(&admin.call(&["ACL", "LOAD"])).into_owned();
    assert!(
        reply.starts_with("-ERR WARNING: Duplicate user 'alice' found on line 2."),
        "{reply}"
    );
    assert!(
        reply.contains("no change to the previously active ACL rules"),
        "{reply}"
    );
    assert_eq!(admin.call(&["AUTH", "eve", "eve"]), b"+OK\r\n");
}

#[test]
fn declared_users_and_a_missing_acl_file_at_start() {
    let server = Sluice::start_with(sluice_resp::Config {
        users: vec!["app on >pw ~app:* +@all".to_owned()],
        ..sluice_resp::Config::default()
    });
    let mut c = RawClient::connect(server.port).expect("connect");
    assert_eq!(c.call(&["AUTH", "app", "pw"]), b"+OK\r\n");
    assert_eq!(c.call(&["SET", "app:x", "1"]), b"+OK\r\n");
    assert_eq!(c.call(&["ACL", "WHOAMI"]), b"$3\r\napp\r\n");
    assert_eq!(
        c.call(&["ACL", "SAVE"]),
        b"-ERR This Redis instance is not configured to use an ACL file. You may want to specify \
          users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a \
          Redis configuration file set) in order to store users in the Redis configuration.\r\n"
    );

    // Sluice does not start on a missing ACL file, nor with both ways of declaring users.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    for config in [
        sluice_resp::Config {
            aclfile: Some("/nonexistent/users.acl".into()),
            ..sluice_resp::Config::default()
        },
        sluice_resp::Config {
            aclfile: Some("/nonexistent/users.acl".into()),
            users: vec!["a on".to_owned()],
            ..sluice_resp::Config::default()
        },
    ] {
        let error = runtime.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            sluice_resp::run(listener, config, std::future::ready(()))
                .await
                .expect_err("refused")
        });
        let text = error.to_string();
        assert!(text.starts_with("loading the Redis users: "), "{text}");
    }
}

#[test]
fn pubsub_permissions_and_revoked_subscribers() {
    let server = Sluice::start();
    let mut admin = RawClient::connect(server.port).expect("connect");
    assert_eq!(
        admin.call(&[
            "ACL",
            "SETUSER",
            "ps",
            "on",
            "nopass",
            "+@all",
            "resetchannels",
            "&news:*"
        ]),
        b"+OK\r\n"
    );
    let mut sub = RawClient::connect(server.port).expect("connect");
    assert_eq!(sub.call(&["AUTH", "ps", "x"]), b"+OK\r\n");
    assert_eq!(
        sub.call(&["SUBSCRIBE", "other"]),
        b"-NOPERM this user has no permissions to access one of the channels used as arguments\r\n"
    );
    assert_eq!(
        sub.call(&["PSUBSCRIBE", "news:a*"]),
        b"-NOPERM this user has no permissions to access one of the channels used as arguments\r\n",
        "a pattern must be allowed literally"
    );
    assert!(
        sub.call(&["SUBSCRIBE", "news:1"])
            .starts_with(b"*3\r\n$9\r\nsubscribe")
    );
    // Narrowing the channels closes subscribers that lost theirs.
    assert_eq!(
        admin.call(&["ACL", "SETUSER", "ps", "resetchannels", "&sports:*"]),
        b"+OK\r\n"
    );
    assert!(sub.is_closed(), "the revoked subscriber stays connected");
    let list = String::from_utf8_lossy(&admin.call(&["CLIENT", "LIST"])).into_owned();
    assert!(!list.contains("user=ps"), "{list}");
}

/// Every command's ACL categories are those redis-server 7.0 reports in COMMAND INFO.
#[test]
fn command_categories_match_redis() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let sluice = Sluice::start();
    let mut ours = RawClient::connect(sluice.port).expect("connect");
    let mut theirs = RawClient::connect(redis.port).expect("connect");
    let names = ours.call(&["COMMAND", "LIST"]);
    let (_, names) = common::split_aggregate(&names).expect("an array");
    let mut differ = Vec::new();
    for name in names {
        let name = String::from_utf8_lossy(
            &name[name.iter().position(|&c| c == b'\n').map_or(0, |p| p + 1)..],
        )
        .trim_end()
        .to_owned();
        // The seventh field of the command's own entry (not its subcommands').
        let categories = |c: &mut RawClient| {
            let reply = c.call(&["COMMAND", "INFO", &name]);
            let field = common::split_aggregate(&reply)
                .and_then(|(_, commands)| commands.into_iter().next())
                .and_then(|command| common::split_aggregate(&command))
                .and_then(|(_, fields)| fields.into_iter().nth(6))
                .unwrap_or_default();
            let mut cats: Vec<String> = String::from_utf8_lossy(&field)
                .split("\r\n")
                .filter(|l| l.starts_with("+@"))
                .map(str::to_owned)
                .collect();
            cats.sort();
            cats
        };
        // Sluice answers a few subcommands Redis 7.0 does not have (CLIENT SETINFO, which
        // newer clients send on connecting); Redis's categories are only for its own.
        if theirs.call(&["COMMAND", "INFO", &name]) == b"*1\r\n$-1\r\n" {
            continue;
        }
        let (a, b) = (categories(&mut ours), categories(&mut theirs));
        if a != b {
            differ.push(format!("{name}: sluice {a:?}, redis {b:?}"));
        }
    }
    assert!(
        differ.is_empty(),
        "categories differ:\n{}",
        differ.join("\n")
    );
}

#[test]
fn sort_patterns_need_read_access_to_every_key_and_dryrun_knows_every_command() {
    let server = Sluice::start();
    let mut admin = RawClient::connect(server.port).expect("connect");
    admin.call(&["RPUSH", "mylist", "1"]);
    admin.call(&["SET", "w1", "5"]);
    assert_eq!(
        admin.call(&[
            "ACL", "SETUSER", "sorter", "on", "nopass", "+sort", "~mylist", "~w*"
        ]),
        b"+OK\r\n"
    );
    let mut c = RawClient::connect(server.port).expect("connect");
    assert_eq!(c.call(&["AUTH", "sorter", "x"]), b"+OK\r\n");
    assert_eq!(c.call(&["SORT", "mylist"]), b"*1\r\n$1\r\n1\r\n");
    assert_eq!(
        c.call(&["SORT", "mylist", "BY", "w*"]),
        b"-ERR BY option of SORT denied due to insufficient ACL permissions.\r\n"
    );
    assert_eq!(
        c.call(&["SORT", "mylist", "GET", "#"]),
        b"-ERR GET option of SORT denied due to insufficient ACL permissions.\r\n"
    );
    // BY without a `*` does not read other keys.
    assert_eq!(
        c.call(&["SORT", "mylist", "BY", "nosort"]),
        b"*1\r\n$1\r\n1\r\n"
    );
    admin.call(&["ACL", "SETUSER", "sorter", "%R~*"]);
    assert_eq!(
        c.call(&["SORT", "mylist", "BY", "w*"]),
        b"*1\r\n$1\r\n1\r\n"
    );

    // DRYRUN answers for Redis commands Sluice does not serve, from their key specs.
    admin.call(&[
        "ACL",
        "SETUSER",
        "mover",
        "+@all",
        "%R~read*",
        "%W~write*",
        "%RW~rw*",
    ]);
    let dry = |c: &mut RawClient, args: &[&str]| {
        let mut all = vec!["ACL", "DRYRUN", "mover"];
        all.extend_from_slice(args);
        String::from_utf8_lossy(&c.call(&all)).into_owned()
    };
    assert_eq!(
        dry(&mut admin, &["MIGRATE", "h", "p", "rw", "0", "500"]),
        "+OK\r\n"
    );
    assert_eq!(
        dry(
            &mut admin,
            &[
                "MIGRATE", "h", "p", "", "0", "5", "AUTH2", "u", "p", "KEYS", "read"
            ]
        ),
        "$53\r\nThis user has no permissions to access the 'read' key\r\n"
    );
    assert_eq!(dry(&mut admin, &["COPY", "read1", "write1"]), "+OK\r\n");
    assert_eq!(
        dry(&mut admin, &["COPY", "write1", "read1"]),
        "$55\r\nThis user has no permissions to access the 'write1' key\r\n"
    );
    assert_eq!(dry(&mut admin, &["EVAL", "", "3", "rw", "read"]), "+OK\r\n");
    assert_eq!(
        dry(&mut admin, &["NOSUCH"]),
        "-ERR Command 'NOSUCH' not found\r\n"
    );
    assert_eq!(
        dry(&mut admin, &["GET"]),
        "-ERR wrong number of arguments for 'get' command\r\n"
    );
}

#[test]
fn scripts_check_acls_as_their_caller() {
    let server = Sluice::start();
    let mut admin = RawClient::connect(server.port).expect("connect");
    assert_eq!(
        admin.call(&[
            "ACL",
            "SETUSER",
            "bob",
            "on",
            ">123",
            "+@scripting",
            "+set",
            "~x*"
        ]),
        b"+OK\r\n"
    );
    let mut bob = RawClient::connect(server.port).expect("connect");
    assert_eq!(bob.call(&["AUTH", "bob", "123"]), b"+OK\r\n");
    let check = |c: &mut RawClient, script: &str| c.call(&["EVAL", script, "0"]);
    assert_eq!(
        check(&mut bob, "return redis.acl_check_cmd('set','xx',1)"),
        b":1\r\n"
    );
    assert_eq!(
        check(&mut bob, "return redis.acl_check_cmd('hset','xx','f',1)"),
        b"$-1\r\n"
    );
    assert_eq!(
        check(&mut bob, "return redis.acl_check_cmd('set','yy',1)"),
        b"$-1\r\n"
    );
    let invalid = check(&mut bob, "return redis.acl_check_cmd('invalid-cmd','arg')");
    assert!(
        String::from_utf8_lossy(&invalid)
            .contains("Invalid command passed to redis.acl_check_cmd()"),
        "{}",
        String::from_utf8_lossy(&invalid)
    );
    // The default user may run anything.
    assert_eq!(
        check(&mut admin, "return redis.acl_check_cmd('hset','yy','f',1)"),
        b":1\r\n"
    );
    // redis.call refuses as the caller, with the reason in the script's error.
    let refused =
        String::from_utf8_lossy(&check(&mut bob, "return redis.call('set','yy',1)")).into_owned();
    assert!(
        refused.starts_with(
            "-ERR The user executing the script can't access at least one of the keys"
        ),
        "{refused}"
    );
    assert_eq!(
        check(&mut bob, "return redis.call('set','xy',1)"),
        b"+OK\r\n"
    );
    let log = String::from_utf8_lossy(&admin.call(&["ACL", "LOG", "1"])).into_owned();
    assert!(log.contains("lua") && log.contains("yy"), "{log}");
}

#[test]
fn requirepass_may_be_binary() {
    let server = Sluice::start();
    let mut c = RawClient::connect(server.port).expect("connect");
    for password in [b"abc\x00def".as_slice(), b"\xff\xfe"] {
        let set = [b"CONFIG".as_slice(), b"SET", b"requirepass", password];
        assert_eq!(c.call(&set), b"+OK\r\n");
        let mut other = RawClient::connect(server.port).expect("connect");
        assert!(other.call(&["PING"]).starts_with(b"-NOAUTH"));
        assert!(other.call(&["AUTH", "abc"]).starts_with(b"-WRONGPASS"));
        assert_eq!(other.call(&[b"AUTH".as_slice(), password]), b"+OK\r\n");
    }
    assert_eq!(c.call(&["CONFIG", "SET", "requirepass", ""]), b"+OK\r\n");
    let mut open = RawClient::connect(server.port).expect("connect");
    assert_eq!(open.call(&["PING"]), b"+PONG\r\n");
}
