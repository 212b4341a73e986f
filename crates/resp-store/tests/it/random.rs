//! Random command rounds over colliding keys, compared before and after each restart or crash.
//!
//! `SLUICE_RANDOM_SEED` replays a run (each test prints the seed it used) and
//! `SLUICE_RANDOM_ROUNDS` sets its length. The server is the oracle: whatever it answers before
//! a restart is what the tables must give back. Under `always` every acknowledged write must
//! survive a crash; under `everysec` SAVE comes at random points, so one flush carries many
//! changes to the same keys (list ends moved both ways, fields set and deleted again), and the
//! round ends with a SAVE before the restart. Server-side randomness (SPOP) and everysec's own
//! one-second flushes are not seeded, so a replay follows the same commands, not always the
//! same flushes.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use redis::Value;
use sluice_resp::durable::AppendFsync;

use crate::common::{Server, schema, value};

type Conn = redis::aio::MultiplexedConnection;
type Args = Vec<Vec<u8>>;

const DEFAULT_SEED: u64 = 20_260_311;
/// Sized for about 15 s per test (both at once) in a debug build on a 2-core machine.
const DEFAULT_ROUNDS: u64 = 60;

/// Eight names in each of two databases: keys collide, change type and move between databases.
#[rustfmt::skip]
const KEYS: [&str; 8] = ["str", "hash", "list", "l\0bin", "set", "set2", "zset", "κ-stream"];
/// The names each family's commands pick five times in six (else any): fewer WRONGTYPE
/// errors, collections that grow, and still keys whose type changes.
const HOMES: [&[&str]; 7] = [
    &["str"],
    &["hash"],
    &["list", "l\0bin"],
    &["set", "set2"],
    &["zset"],
    &["κ-stream"],
    &KEYS,
];
const STR: usize = 0;
const HASH: usize = 1;
const LIST: usize = 2;
const SET: usize = 3;
const ZSET: usize = 4;
const STREAM: usize = 5;
const ANY: usize = 6;

/// One of 300 bytes: lists holding it are stored one position per row, and switch grids when
/// written whole again.
#[rustfmt::skip]
const VALUES: [&[u8]; 12] = [
    b"", b"a", b"b", b"c", b"1", b"2", b"10", b"-3", b"x\0y", b"\xff\xfe", b"long value ",
    &[b'L'; 300],
];
/// Enough fields and members that collections often outgrow a flush's changes (then they are
/// written in part).
#[rustfmt::skip]
const FIELDS: [&str; 14] =
    ["f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9", "f10", "n1", "n2", "", "f\0"];
#[rustfmt::skip]
const MEMBERS: [&str; 14] =
    ["m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9", "m10", "m11", "m12", "", "m\0"];
const SCORES: [&str; 9] = ["0", "1", "-1", "2.5", "1e3", "0.1", "inf", "-inf", "7"];

/// The commands, with their weights and the family whose keys they pick. Words are literal but
/// for `{a|b|}` (one of them, maybe none) and `%` tokens: `%k` a key, `%v` a value, `%f` a
/// field, `%m` a member, `%s` a score, `%t` seconds and `%ms` milliseconds (100 s or more:
/// nothing expires during the test), `%n` a small integer, `%c` a count (1 to 3), `%r` a
/// start (0 to 2), `%e` an end (-3 to 30), `%id` a new stream ID, `%old` a recent one, `%db`
/// the other database; `+` after a token repeats it a few times (or a lot), `*` once or twice.
/// Removals weigh as much as additions: a flush deleting some elements' rows and writing
/// others' is where writes in part go wrong.
#[rustfmt::skip]
const COMMANDS: &[(u32, usize, &str)] = &[
    (2, STR, "SET %k %v"), (1, STR, "SET %k %v EX %t"), (1, STR, "SET %k %v PX %ms"),
    (1, STR, "SET %k %v KEEPTTL"), (1, STR, "APPEND %k %v"), (1, STR, "INCRBY %k %n"),
    (1, STR, "SETRANGE %k %c %v"), (1, STR, "GETDEL %k"), (1, STR, "GETEX %k EX %t"),
    (1, STR, "GETEX %k PERSIST"), (1, STR, "MSET %k %v %k %v"),
    (4, HASH, "HSET %k %f%v+"), (2, HASH, "HDEL %k %f*"), (1, HASH, "HINCRBY %k %f %n"),
    (1, HASH, "HINCRBYFLOAT %k %f 1.5"), (1, HASH, "HSETNX %k %f %v"),
    (1, HASH, concat!("EVAL redis.call('HSET',KEYS[1],ARGV[1],'x');",
        "return(redis.call('HDEL',KEYS[1],ARGV[2])) 1 %k %f %f")),
    (4, LIST, "{LPUSH|RPUSH} %k %v+"), (3, LIST, "{LPOP|RPOP} %k {%c|}"),
    (1, LIST, "LSET %k %n %v"),
    (2, LIST, "LTRIM %k %r %e"), (1, LIST, "LINSERT %k {BEFORE|AFTER} %v %v"),
    (1, LIST, "LREM %k %n %v"), (2, LIST, "LMOVE %k %k {LEFT|RIGHT} {LEFT|RIGHT}"),
    (1, LIST, "RPOPLPUSH %k %k"), (1, LIST, "LPUSHX %k %v"),
    (1, LIST, "LMPOP 2 %k %k {LEFT|RIGHT} COUNT %c"), (1, LIST, "SORT %k ALPHA STORE %k"),
    (1, LIST, concat!("EVAL redis.call('RPUSH',KEYS[1],ARGV[1],ARGV[1]);",
        "return(redis.call('LPOP',KEYS[1])) 1 %k %v")),
    (4, SET, "SADD %k %m+"), (2, SET, "SREM %k %m*"), (1, SET, "SPOP %k {%c|}"),
    (1, SET, "SMOVE %k %k %m"), (1, SET, "{SUNIONSTORE|SINTERSTORE|SDIFFSTORE} %k %k %k"),
    (4, ZSET, "ZADD %k {XX|NX|GT|LT|CH||||} %s%m+"), (2, ZSET, "ZREM %k %m*"),
    (1, ZSET, "ZINCRBY %k %s %m"), (1, ZSET, "{ZPOPMIN|ZPOPMAX} %k %c"),
    (1, ZSET, "ZREMRANGEBYRANK %k %r %n"), (1, ZSET, "ZUNIONSTORE %k 2 %k %k"),
    (2, STREAM, "XADD %k %id %f%v*"), (1, STREAM, "XADD %k MAXLEN %c %id %f%v*"),
    (2, STREAM, "XDEL %k %old %old"), (1, STREAM, "XTRIM %k MAXLEN %n"),
    (1, STREAM, "XTRIM %k MINID %old"), (2, STREAM, "XGROUP CREATE %k g 0 MKSTREAM"),
    (1, STREAM, "XGROUP CREATE %k h $"), (1, STREAM, "XACK %k g %old %old"),
    (3, STREAM, "XREADGROUP GROUP g {c1|c2} COUNT %c STREAMS %k >"),
    (1, STREAM, "XCLAIM %k g {c1|c2} 0 %old %old"),
    (1, STREAM, "XAUTOCLAIM %k g {c1|c2} 0 0-0 COUNT 2"),
    (2, ANY, "DEL %k"), (1, ANY, "DEL %k %k"), (1, ANY, "UNLINK %k"),
    (1, ANY, "EXPIRE %k %t {NX|XX|GT|LT||}"), (1, ANY, "PEXPIRE %k %ms"), (1, ANY, "PERSIST %k"),
    (1, ANY, "{RENAME|RENAMENX} %k %k"),
    (1, ANY, "COPY %k %k {REPLACE|}"), (1, ANY, "COPY %k %k DB %db"), (1, ANY, "MOVE %k %db"),
    (1, ANY, "SWAPDB 0 1"), (1, ANY, "FLUSHDB"), (1, ZSET, "GEOADD %k 13.361389 38.115556 %m"),
    (1, LIST, "BLMOVE %k %k {LEFT|RIGHT} {LEFT|RIGHT} 0.01"), (1, ZSET, "BZPOPMIN %k 0.01"),
];
/// What a client blocked on another connection waits for: served by a later push or add.
#[rustfmt::skip]
const BLOCKING: &[(u32, usize, &str)] = &[
    (1, LIST, "BLPOP %k %k 0.05"), (1, LIST, "BLMOVE %k %k {LEFT|RIGHT} {LEFT|RIGHT} 0.05"),
    (1, LIST, "BLMPOP 0.05 2 %k %k {LEFT|RIGHT} COUNT %c"), (1, ZSET, "BZPOPMAX %k 0.05"),
    (1, STREAM, "XREADGROUP GROUP g c3 COUNT %c BLOCK 50 STREAMS %k >"),
];

fn setting(name: &str, default: u64) -> u64 {
    let parse = |v: String| v.trim().parse().unwrap_or_else(|_| panic!("{name}={v:?}?"));
    std::env::var(name).map_or(default, parse)
}

/// Random commands from a seed.
struct Gen {
    rng: fastrand::Rng,
    /// Stream IDs are handed out in increasing order across all keys, so XADD mostly succeeds.
    next_id: u64,
}

impl Gen {
    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.rng.usize(..from.len())]
    }

    fn stream_id(n: u64) -> String {
        format!("{}-{}", n / 3 + 1, n % 3)
    }

    /// One command of `table` in database `db` (of two).
    fn command(&mut self, table: &[(u32, usize, &str)], db: usize) -> Args {
        let total: u32 = table.iter().map(|c| c.0).sum();
        let mut at = self.rng.u32(..total);
        let &(_, family, template) = table
            .iter()
            .find(|c| at.checked_sub(c.0).map(|rest| at = rest).is_none())
            .expect("a command");
        if template == "FLUSHDB" && self.rng.u8(..8) > 0 {
            return self.command(table, db); // a database emptied every few rounds is enough
        }
        let mut args = Args::new();
        for word in template.split(' ') {
            self.expand(word, HOMES[family], db, &mut args);
        }
        args
    }

    fn expand(&mut self, word: &str, home: &[&'static str], db: usize, args: &mut Args) {
        if let Some(choices) = word.strip_prefix('{').and_then(|w| w.strip_suffix('}')) {
            let choices: Vec<&str> = choices.split('|').collect();
            let choice = self.pick(&choices);
            if !choice.is_empty() {
                self.expand(choice, home, db, args);
            }
            return;
        }
        if let Some(one) = word.strip_suffix(['+', '*']) {
            let n = match (word.ends_with('+'), self.rng.u8(..8)) {
                (true, 0) => self.rng.usize(8..25),
                (true, _) => self.rng.usize(1..5),
                (false, _) => self.rng.usize(1..3),
            };
            for _ in 0..n {
                self.expand(one, home, db, args);
            }
            return;
        }
        // Pairs such as `%f%v` are one token each.
        if let Some((a, b)) = word.get(1..).and_then(|w| w.split_once('%')) {
            self.expand(&format!("%{a}"), home, db, args);
            self.expand(&format!("%{b}"), home, db, args);
            return;
        }
        let arg: Vec<u8> = match word {
            "%k" if self.rng.u8(..6) > 0 => self.pick(home).into(),
            "%k" => self.pick(&KEYS).into(),
            "%v" => self.pick(&VALUES).into(),
            "%f" => self.pick(&FIELDS).into(),
            "%m" => self.pick(&MEMBERS).into(),
            "%s" => self.pick(&SCORES).into(),
            "%t" => self.rng.u32(100..100_000).to_string().into(),
            "%ms" => self.rng.u32(100_000..100_000_000).to_string().into(),
            "%n" => self.rng.i32(-3..=5).to_string().into(),
            "%c" => self.rng.u32(1..=3).to_string().into(),
            "%r" => self.rng.u32(0..=2).to_string().into(),
            "%e" => self.rng.i32(-3..=30).to_string().into(),
            "%id" => {
                self.next_id += 1;
                Self::stream_id(self.next_id).into()
            }
            "%old" => Self::stream_id(self.next_id - self.rng.u64(0..10).min(self.next_id)).into(),
            "%db" => (1 - db).to_string().into(),
            literal => literal.into(),
        };
        args.push(arg);
    }
}

fn text(bytes: &[u8]) -> String {
    bytes.escape_ascii().to_string()
}

fn line(db: usize, args: &Args) -> String {
    let words: Vec<String> = args.iter().map(|a| text(a)).collect();
    format!("db{db}: {}", words.join(" "))
}

fn redis_cmd(args: &Args) -> redis::Cmd {
    let mut cmd = redis::cmd(std::str::from_utf8(&args[0]).expect("a command name"));
    for a in &args[1..] {
        cmd.arg(&a[..]);
    }
    cmd
}

/// Sends a batch (a MULTI/EXEC block when `atomic`) and gives the errors among its replies:
/// WRONGTYPE, no such key and the like are part of the game.
async fn send(c: &mut Conn, batch: &[Args], atomic: bool) -> Vec<String> {
    let mut pipe = redis::pipe();
    if atomic {
        pipe.atomic();
    }
    for args in batch {
        pipe.add_command(redis_cmd(args));
    }
    // A transaction's replies are EXEC's, after MULTI's and each QUEUED.
    let (skip, count) = if atomic {
        (batch.len() + 1, 1)
    } else {
        (0, batch.len())
    };
    let mut errors = Vec::new();
    match c.send_packed_commands(&pipe, skip, count).await {
        Ok(replies) => replies.iter().for_each(|r| errors_in(r, &mut errors)),
        Err(e) => errors.push(e.to_string()),
    }
    errors
}

fn errors_in(reply: &Value, errors: &mut Vec<String>) {
    match reply {
        Value::ServerError(e) => errors.push(format!("{e:?}")),
        Value::Array(items) => items.iter().for_each(|r| errors_in(r, errors)),
        _ => {}
    }
}

/// Runs a read and reads its reply as `T`.
async fn read<T: redis::FromRedisValue>(c: &mut Conn, args: &[&[u8]]) -> T {
    let mut cmd = redis::cmd(std::str::from_utf8(args[0]).expect("a command name"));
    for a in &args[1..] {
        cmd.arg(*a);
    }
    let shown: Vec<String> = args.iter().map(|a| text(a)).collect();
    cmd.query_async(c)
        .await
        .unwrap_or_else(|e| panic!("{shown:?}: {e}"))
}

/// A reply as text, bulk strings escaped.
fn show(v: &Value) -> String {
    match v {
        Value::BulkString(b) => text(b),
        Value::SimpleString(s) => s.clone(),
        Value::Int(n) => n.to_string(),
        Value::Nil => "nil".to_string(),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(show).collect();
            format!("[{}]", items.join(", "))
        }
        other => format!("{other:?}"),
    }
}

/// The named fields of a reply given as pairs (RESP2's flat array).
fn named(v: &Value, names: &[&str]) -> Vec<String> {
    let Value::Array(items) = v else {
        return Vec::new();
    };
    let pairs = items.chunks_exact(2).map(|p| (show(&p[0]), show(&p[1])));
    pairs
        .filter(|(k, _)| names.contains(&k.as_str()))
        .map(|(k, v)| format!("{k}={v}"))
        .collect()
}

/// A key as the client sees it.
#[derive(Debug, Clone, PartialEq)]
struct KeyState {
    kind: String,
    /// PTTL in ms, `None` for no expiry; compared loosely (time passes across a restart).
    ttl: Option<i64>,
    value: String,
}

type State = BTreeMap<(usize, Vec<u8>), KeyState>;

/// A stream's entries, its counters and its consumer groups (without idle times).
async fn stream(c: &mut Conn, key: &[u8]) -> String {
    let entries: Value = read(c, &[b"XRANGE", key, b"-", b"+"]).await;
    let info: Value = read(c, &[b"XINFO", b"STREAM", key]).await;
    #[rustfmt::skip]
    let counters = named(&info, &["length", "last-generated-id", "max-deleted-entry-id",
        "entries-added", "groups"]);
    let mut out = format!("{} {counters:?}", show(&entries));
    let groups: Vec<Value> = read(c, &[b"XINFO", b"GROUPS", key]).await;
    for group in &groups {
        #[rustfmt::skip]
        let fields = named(group, &["name", "consumers", "pending", "last-delivered-id",
            "entries-read", "lag"]);
        let name = fields[0].trim_start_matches("name=").to_string();
        let pending: Vec<(String, String, i64, i64)> =
            read(c, &[b"XPENDING", key, name.as_bytes(), b"-", b"+", b"1000"]).await;
        let pending: Vec<_> = pending
            .into_iter()
            .map(|(id, who, _idle, n)| (id, who, n))
            .collect();
        let consumers: Vec<Value> = read(c, &[b"XINFO", b"CONSUMERS", key, name.as_bytes()]).await;
        let consumers: Vec<_> = consumers
            .iter()
            .map(|v| named(v, &["name", "pending"]))
            .collect();
        out.push_str(&format!(
            " group {fields:?} pending {pending:?} consumers {consumers:?}"
        ));
    }
    out
}

/// Every key of both databases, in a canonical form.
async fn capture(c: &mut [Conn; 2]) -> State {
    let mut state = State::new();
    for (db, c) in c.iter_mut().enumerate() {
        let keys: Vec<Vec<u8>> = read(c, &[b"KEYS", b"*"]).await;
        for key in keys {
            let k = &key[..];
            let kind: String = read(c, &[b"TYPE", k]).await;
            let pttl: i64 = read(c, &[b"PTTL", k]).await;
            let value = match kind.as_str() {
                "string" => text(&read::<Vec<u8>>(c, &[b"GET", k]).await),
                "hash" => {
                    let pairs: Vec<(Vec<u8>, Vec<u8>)> = read(c, &[b"HGETALL", k]).await;
                    let pairs: BTreeSet<_> =
                        pairs.iter().map(|(f, v)| (text(f), text(v))).collect();
                    format!("{pairs:?}")
                }
                "list" => show(&read(c, &[b"LRANGE", k, b"0", b"-1"]).await),
                "set" => {
                    let members: Vec<Vec<u8>> = read(c, &[b"SMEMBERS", k]).await;
                    format!(
                        "{:?}",
                        members.iter().map(|m| text(m)).collect::<BTreeSet<_>>()
                    )
                }
                "zset" => show(&read(c, &[b"ZRANGE", k, b"0", b"-1", b"WITHSCORES"]).await),
                "stream" => stream(c, k).await,
                other => panic!("db {db} key {}: type {other}", text(k)),
            };
            let ttl = (pttl >= 0).then_some(pttl);
            state.insert((db, key), KeyState { kind, ttl, value });
        }
    }
    state
}

/// The first key whose state differs, with both states; TTLs may have run down by `elapsed`.
fn first_difference(before: &State, after: &State, elapsed: Duration) -> Option<String> {
    let keys: BTreeSet<&(usize, Vec<u8>)> = before.keys().chain(after.keys()).collect();
    let slack = elapsed.as_millis() as i64 + 1000;
    for key in keys {
        let (b, a) = (before.get(key), after.get(key));
        let same = match (b, a) {
            (Some(b), Some(a)) => {
                b.kind == a.kind
                    && b.value == a.value
                    && match (b.ttl, a.ttl) {
                        (None, None) => true,
                        (Some(b), Some(a)) => a <= b + 5 && b - a <= slack,
                        _ => false,
                    }
            }
            _ => false,
        };
        if !same {
            return Some(format!(
                "db {} key {:?}:\n  before restart: {b:?}\n  after restart:  {a:?}",
                key.0,
                text(&key.1)
            ));
        }
    }
    None
}

/// Waits until the crashed server's owner lock is released by PostgreSQL (its connection was
/// dropped, not closed politely), so the next server can take it.
async fn wait_for_lock_release(schema: &str) {
    let sql = format!(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted \
         AND classid = {}::oid AND objid = hashtext('{schema}')::oid",
        0x736c_7569
    );
    let started = Instant::now();
    while value(&sql).await.as_deref() != Some("0") {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the lock of {schema} is still held"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn fail(what: &str, log: &[String]) -> ! {
    panic!("{what}\nthe round's commands:\n  {}", log.join("\n  "));
}

/// A flush that failed (and was retried whole) shows as MISCONF on the writes made meanwhile.
fn misconf(errors: &[String], context: &str, log: &[String]) {
    if let Some(e) = errors.iter().find(|e| e.contains("MISCONF")) {
        fail(&format!("{context}: a flush failed: {e}"), log);
    }
}

/// Every list's chunk rows are on one grid, hold contiguous positions and sit in the chunk
/// their positions fall in (the loader would quietly rewrite a list out of shape, hiding a
/// writer that wrote it so); returns how many lists have rows on grid 1.
async fn lists_in_shape(schema: &str, context: &str, log: &[String]) -> u64 {
    let bad = value(&format!(
        "SELECT count(*)::text FROM (SELECT chunk, first_pos, grid, cardinality(items) AS n, \
             lag(first_pos + cardinality(items)) OVER w AS expected, \
             min(grid) OVER w2 AS gmin, max(grid) OVER w2 AS gmax \
         FROM \"{schema}\".list_chunks \
         WINDOW w AS (PARTITION BY db, key ORDER BY chunk), w2 AS (PARTITION BY db, key)) r \
         WHERE gmin <> gmax OR n = 0 OR floor(first_pos::numeric / grid) <> chunk \
            OR floor((first_pos + n - 1)::numeric / grid) <> chunk OR expected <> first_pos"
    ))
    .await;
    if bad.as_deref() != Some("0") {
        fail(&format!("{context}: {bad:?} list rows out of shape"), log);
    }
    value(&format!(
        "SELECT count(DISTINCT (db, key))::text FROM \"{schema}\".list_chunks WHERE grid = 1"
    ))
    .await
    .and_then(|n| n.parse().ok())
    .unwrap_or(0)
}

/// SAVE: under everysec, the flush of everything so far.
async fn save(c: &mut Conn, context: &str, log: &[String]) {
    let r: redis::RedisResult<String> = redis::cmd("SAVE").query_async(c).await;
    if let Err(e) = r {
        fail(&format!("{context}: SAVE failed: {e}"), log);
    }
}

/// Watches the server's writer for a failed flush: it is retried whole 100 ms later, which
/// hides the failure from clients under always (their replies wait for the retry's commit), so
/// only this sees a flush that PostgreSQL refused (a row written twice, say).
struct FailureWatch {
    seen: std::sync::Arc<parking_lot::Mutex<Option<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl FailureWatch {
    fn start(server: &Server) -> FailureWatch {
        let durability = server.store.persistence().durability;
        let seen = std::sync::Arc::new(parking_lot::Mutex::new(None));
        let task = tokio::spawn({
            let seen = seen.clone();
            async move {
                loop {
                    if let Some(failure) = durability.failure() {
                        seen.lock().get_or_insert(failure);
                    }
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }
        });
        FailureWatch { seen, task }
    }

    fn check(&self, context: &str, log: &[String]) {
        if let Some(failure) = self.seen.lock().clone() {
            fail(&format!("{context}: a flush failed: {failure}"), log);
        }
    }
}

async fn clients(server: &Server) -> [Conn; 2] {
    let connect = |db: usize| async move {
        redis::Client::open(format!("redis://127.0.0.1:{}/{db}", server.port))
            .expect("client")
            .get_multiplexed_async_connection()
            .await
            .expect("connect")
    };
    [connect(0).await, connect(1).await]
}

/// Random rounds of commands on one schema, each ended by a restart and a comparison.
async fn rounds(policy: AppendFsync, name: &str) {
    let seed = setting("SLUICE_RANDOM_SEED", DEFAULT_SEED);
    let rounds = setting("SLUICE_RANDOM_ROUNDS", DEFAULT_ROUNDS);
    eprintln!("{name}: SLUICE_RANDOM_SEED={seed} SLUICE_RANDOM_ROUNDS={rounds}");
    let everysec = policy == AppendFsync::EverySec;
    let mut g = Gen {
        rng: fastrand::Rng::with_seed(seed),
        next_id: 0,
    };
    let schema = schema("rs_random");
    let mut server = Server::start(&schema, policy).await;
    let mut watch = FailureWatch::start(&server);
    let (mut commands, mut crashes, started) = (0u64, 0u64, Instant::now());
    let (mut failed, mut kinds) = (0u64, BTreeMap::<String, u64>::new());
    let mut one_per_row = 0u64;
    let context = |round: u64| format!("{name}: SLUICE_RANDOM_SEED={seed}, round {round}");
    for round in 0..rounds {
        let mut c = clients(&server).await;
        let blockers = clients(&server).await;
        let mut blocked: Option<tokio::task::JoinHandle<Vec<String>>> = None;
        let mut log: Vec<String> = Vec::new();
        for _ in 0..g.rng.usize(6..20) {
            let db = g.rng.usize(..2);
            // Mostly one command; a MULTI/EXEC block; or a pipeline (under always, one commit).
            let (atomic, n) = match g.rng.u8(..10) {
                0 => (true, g.rng.usize(2..6)),
                1 | 2 => (false, g.rng.usize(2..8)),
                _ => (false, 1),
            };
            // Now and then a client blocks on another connection, for the batch to serve it.
            if g.rng.u8(..6) == 0 && blocked.as_ref().is_none_or(|b| b.is_finished()) {
                let args = g.command(BLOCKING, db);
                log.push(format!("{} (on another connection)", line(db, &args)));
                let mut conn = blockers[db].clone();
                blocked = Some(tokio::spawn(async move {
                    send(&mut conn, &[args], false).await
                }));
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            let batch: Vec<Args> = (0..n).map(|_| g.command(COMMANDS, db)).collect();
            log.extend(atomic.then(|| format!("db{db}: MULTI")));
            for (i, args) in batch.iter().enumerate() {
                let piped = (n > 1 && !atomic).then(|| format!(" (pipelined {}/{n})", i + 1));
                log.push(format!("{}{}", line(db, args), piped.unwrap_or_default()));
            }
            log.extend(atomic.then(|| format!("db{db}: EXEC")));
            let errors = send(&mut c[db], &batch, atomic).await;
            misconf(&errors, &context(round), &log);
            watch.check(&context(round), &log);
            commands += n as u64;
            failed += errors.len() as u64;
            if everysec && g.rng.u8(..4) == 0 {
                log.push("SAVE".to_string());
                save(&mut c[0], &context(round), &log).await;
            }
        }
        if let Some(blocked) = blocked {
            let errors = blocked.await.expect("the blocked client");
            misconf(&errors, &context(round), &log);
        }
        drop(blockers);
        if everysec {
            save(&mut c[0], &context(round), &log).await;
        }
        let before = capture(&mut c).await;
        let stopped = Instant::now();
        drop(c);
        watch.check(&context(round), &log);
        watch.task.abort();
        // A crash keeps no last flush: under always every acknowledged write is committed,
        // under everysec everything was by the SAVE.
        let crash = round == 1 || g.rng.u8(..3) == 0;
        if crash {
            crashes += 1;
            server.crash().await;
            wait_for_lock_release(&schema).await;
        } else {
            server.stop().await;
        }
        one_per_row += lists_in_shape(&schema, &context(round), &log).await;
        server = Server::start(&schema, policy).await;
        watch = FailureWatch::start(&server);
        let mut c = clients(&server).await;
        let after = capture(&mut c).await;
        for state in after.values() {
            *kinds.entry(state.kind.clone()).or_default() += 1;
        }
        if let Some(difference) = first_difference(&before, &after, stopped.elapsed()) {
            let how = if crash { "crash" } else { "clean stop" };
            let context = context(round);
            fail(&format!("{context}, after a {how}: {difference}"), &log);
        }
    }
    watch.task.abort();
    server.stop().await;
    eprintln!(
        "{name}: {rounds} rounds, {commands} commands ({failed} answered with an error), \
         {crashes} crashes, keys compared by type {kinds:?}, lists on grid 1 at {one_per_row} \
         restarts: same keyspace after every restart ({:?})",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_commands_survive_restarts_and_crashes_under_always() {
    rounds(AppendFsync::Always, "always").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_commands_survive_restarts_after_save_under_everysec() {
    rounds(AppendFsync::EverySec, "everysec").await;
}
