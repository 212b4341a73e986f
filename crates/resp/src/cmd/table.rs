//! The command table: names, arity, flags and key positions (as COMMAND reports them), handlers.

use std::collections::HashMap;
use std::sync::LazyLock;

use super::{
    Handler, acl, bitmaps, command, connection, dump, geo, hashes, hyperloglog, introspect, keys,
    lcs, lists, migrate, monitoring, persistence, pops, pubsub, scripting, server, sets, sort,
    stream_groups, stream_info, streams, strings, tx, zsets, zsets_multi,
};
use crate::engine::RandomState;

/// Command flags.
pub mod flags {
    /// Changes data; refused inside read-only scripts (EVAL_RO, FCALL_RO).
    pub const WRITE: u32 = 1;
    /// Only reads data.
    pub const READONLY: u32 = 1 << 1;
    /// Runs in constant or logarithmic time (reported by COMMAND as `fast`).
    pub const FAST: u32 = 1 << 2;
    /// Runs before AUTH (AUTH, HELLO, QUIT).
    pub const NO_AUTH: u32 = 1 << 3;
    /// Allowed in a RESP2 connection that is subscribed.
    pub const SUBSCRIBED_OK: u32 = 1 << 4;
    /// Not queued inside MULTI.
    pub const TX_CONTROL: u32 = 1 << 5;
    /// May block the client (BLPOP, XREAD BLOCK, ...).
    pub const BLOCKING: u32 = 1 << 6;
    /// Administrative, such as CONFIG (reported by COMMAND as `admin`).
    pub const ADMIN: u32 = 1 << 7;
    /// Publishes or subscribes (reported by COMMAND as `pubsub`).
    pub const PUBSUB: u32 = 1 << 8;
    /// May grow memory (reported by COMMAND as `denyoom`; Redis refuses these when out of memory).
    pub const DENYOOM: u32 = 1 << 9;
    /// Allowed while a dataset loads (reported by COMMAND as `loading`).
    pub const LOADING: u32 = 1 << 10;
    /// Allowed on a replica with stale data (reported by COMMAND as `stale`).
    pub const STALE: u32 = 1 << 11;
    /// Refused when called from a script.
    pub const NOSCRIPT: u32 = 1 << 12;
    /// Refused inside MULTI (reported by COMMAND as `no_multi`).
    pub const NO_MULTI: u32 = 1 << 13;
    /// Has subcommands (CONFIG GET, CLIENT LIST ...): they are checked at dispatch, and CLIENT
    /// LIST names the one last run.
    pub const CONTAINER: u32 = 1 << 14;

    /// Names COMMAND reports for each flag.
    pub const NAMES: [(u32, &str); 11] = [
        (WRITE, "write"),
        (READONLY, "readonly"),
        (DENYOOM, "denyoom"),
        (ADMIN, "admin"),
        (PUBSUB, "pubsub"),
        (NOSCRIPT, "noscript"),
        (BLOCKING, "blocking"),
        (LOADING, "loading"),
        (STALE, "stale"),
        (FAST, "fast"),
        (NO_AUTH, "no_auth"),
    ];
}

/// One command of the table.
#[derive(Debug)]
pub struct Command {
    /// Lower-case name.
    pub name: &'static str,
    /// Redis arity: exact count when positive, minimum count when negative (name included).
    pub arity: i32,
    /// The [`flags`] bits.
    pub flags: u32,
    /// Position of the first key argument (0: the command takes no keys).
    pub first_key: i32,
    /// Position of the last key argument; negative counts from the end (-1: the last argument).
    pub last_key: i32,
    /// Distance between key arguments (2 for MSET's key-value pairs).
    pub step: i32,
    /// The group COMMAND DOCS reports (string, list, ...).
    pub group: &'static str,
    pub(crate) handler: Handler,
    /// Position in [`COMMANDS`], recorded per client for CLIENT LIST's `cmd=`.
    pub index: usize,
}

use flags::*;

const W: u32 = WRITE | DENYOOM;
const WF: u32 = WRITE | DENYOOM | FAST;
const R: u32 = READONLY;
const RF: u32 = READONLY | FAST;
const CONN: u32 = NOSCRIPT | LOADING | STALE | FAST;

type Row = (&'static str, i32, u32, i32, i32, i32, &'static str, Handler);

#[rustfmt::skip]
const ROWS: &[Row] = &[
    // connection
    ("ping", -1, FAST | SUBSCRIBED_OK, 0, 0, 0, "connection", connection::ping),
    ("echo", 2, FAST, 0, 0, 0, "connection", connection::echo),
    ("quit", -1, CONN | NO_AUTH | SUBSCRIBED_OK | TX_CONTROL, 0, 0, 0, "connection", connection::quit),
    ("hello", -1, CONN | NO_AUTH, 0, 0, 0, "connection", connection::hello),
    ("auth", -2, CONN | NO_AUTH, 0, 0, 0, "connection", connection::auth),
    ("client", -2, NOSCRIPT | LOADING | STALE | CONTAINER, 0, 0, 0, "connection", connection::client),
    ("select", 2, LOADING | STALE | FAST, 0, 0, 0, "connection", connection::select),
    ("reset", 1, CONN | SUBSCRIBED_OK | TX_CONTROL, 0, 0, 0, "connection", connection::reset),
    ("acl", -2, NOSCRIPT | LOADING | STALE | CONTAINER, 0, 0, 0, "server", acl::acl),
    // server
    ("info", -1, LOADING | STALE, 0, 0, 0, "server", server::info),
    ("cluster", -2, CONTAINER, 0, 0, 0, "cluster", server::cluster),
    ("config", -2, ADMIN | NOSCRIPT | LOADING | STALE | CONTAINER, 0, 0, 0, "server", server::config),
    ("command", -1, LOADING | STALE | CONTAINER, 0, 0, 0, "server", command::command),
    ("dbsize", 1, RF, 0, 0, 0, "server", server::dbsize),
    ("flushdb", -1, WRITE, 0, 0, 0, "server", server::flushdb),
    ("flushall", -1, WRITE, 0, 0, 0, "server", server::flushall),
    ("swapdb", 3, WRITE | FAST, 0, 0, 0, "server", server::swapdb),
    ("time", 1, LOADING | STALE | FAST, 0, 0, 0, "server", server::time),
    ("lastsave", 1, LOADING | STALE | FAST, 0, 0, 0, "server", persistence::lastsave),
    ("save", 1, ADMIN | NOSCRIPT | NO_MULTI, 0, 0, 0, "server", persistence::save),
    ("bgsave", -1, ADMIN | NOSCRIPT, 0, 0, 0, "server", persistence::bgsave),
    ("shutdown", -1, ADMIN | NOSCRIPT | LOADING | STALE | NO_MULTI, 0, 0, 0, "server", persistence::shutdown),
    ("role", 1, NOSCRIPT | LOADING | STALE | FAST, 0, 0, 0, "server", server::role),
    ("lolwut", -1, READONLY | FAST, 0, 0, 0, "server", server::lolwut),
    ("bgrewriteaof", 1, ADMIN | NOSCRIPT, 0, 0, 0, "server", persistence::bgrewriteaof),
    ("function", -2, NOSCRIPT | CONTAINER, 0, 0, 0, "scripting", scripting::function),
    ("script", -2, NOSCRIPT | CONTAINER, 0, 0, 0, "scripting", scripting::script),
    ("eval", -3, NOSCRIPT | STALE, 0, 0, 0, "scripting", scripting::eval),
    ("evalsha", -3, NOSCRIPT | STALE, 0, 0, 0, "scripting", scripting::evalsha),
    ("eval_ro", -3, NOSCRIPT | STALE | READONLY, 0, 0, 0, "scripting", scripting::eval_ro),
    ("evalsha_ro", -3, NOSCRIPT | STALE | READONLY, 0, 0, 0, "scripting", scripting::evalsha_ro),
    ("fcall", -3, NOSCRIPT | STALE, 0, 0, 0, "scripting", scripting::fcall),
    ("fcall_ro", -3, NOSCRIPT | STALE | READONLY, 0, 0, 0, "scripting", scripting::fcall_ro),
    // keys
    ("del", -2, WRITE, 1, -1, 1, "generic", keys::del),
    ("unlink", -2, WRITE | FAST, 1, -1, 1, "generic", keys::del),
    ("exists", -2, RF, 1, -1, 1, "generic", keys::exists),
    ("touch", -2, RF, 1, -1, 1, "generic", keys::touch),
    ("type", 2, RF, 1, 1, 1, "generic", keys::type_),
    ("keys", 2, R, 0, 0, 0, "generic", keys::keys),
    ("scan", -2, R, 0, 0, 0, "generic", keys::scan),
    ("rename", 3, WRITE, 1, 2, 1, "generic", keys::rename),
    ("renamenx", 3, WF, 1, 2, 1, "generic", keys::renamenx),
    ("copy", -3, W, 1, 2, 1, "generic", keys::copy),
    ("move", 3, WF, 1, 1, 1, "generic", keys::move_),
    ("expire", -3, WF, 1, 1, 1, "generic", keys::expire),
    ("pexpire", -3, WF, 1, 1, 1, "generic", keys::pexpire),
    ("expireat", -3, WF, 1, 1, 1, "generic", keys::expireat),
    ("pexpireat", -3, WF, 1, 1, 1, "generic", keys::pexpireat),
    ("ttl", 2, RF, 1, 1, 1, "generic", keys::ttl),
    ("pttl", 2, RF, 1, 1, 1, "generic", keys::pttl),
    ("expiretime", 2, RF, 1, 1, 1, "generic", keys::expiretime),
    ("pexpiretime", 2, RF, 1, 1, 1, "generic", keys::pexpiretime),
    ("persist", 2, WRITE | FAST, 1, 1, 1, "generic", keys::persist),
    ("randomkey", 1, R, 0, 0, 0, "generic", keys::randomkey),
    ("dump", 2, R, 1, 1, 1, "generic", dump::dump),
    ("restore", -4, W, 1, 1, 1, "generic", dump::restore),
    // strings
    ("get", 2, RF, 1, 1, 1, "string", strings::get),
    ("set", -3, W, 1, 1, 1, "string", strings::set),
    ("setnx", 3, WF, 1, 1, 1, "string", strings::setnx),
    ("setex", 4, W, 1, 1, 1, "string", strings::setex),
    ("psetex", 4, W, 1, 1, 1, "string", strings::psetex),
    ("getset", 3, WF, 1, 1, 1, "string", strings::getset),
    ("getdel", 2, WRITE | FAST, 1, 1, 1, "string", strings::getdel),
    ("getex", -2, WRITE | FAST, 1, 1, 1, "string", strings::getex),
    ("mget", -2, RF, 1, -1, 1, "string", strings::mget),
    ("mset", -3, W, 1, -1, 2, "string", strings::mset),
    ("msetnx", -3, W, 1, -1, 2, "string", strings::msetnx),
    ("append", 3, WF, 1, 1, 1, "string", strings::append),
    ("strlen", 2, RF, 1, 1, 1, "string", strings::strlen),
    ("getrange", 4, R, 1, 1, 1, "string", strings::getrange),
    ("substr", 4, R, 1, 1, 1, "string", strings::getrange),
    ("setrange", 4, W, 1, 1, 1, "string", strings::setrange),
    ("incr", 2, WF, 1, 1, 1, "string", strings::incr),
    ("decr", 2, WF, 1, 1, 1, "string", strings::decr),
    ("incrby", 3, WF, 1, 1, 1, "string", strings::incrby),
    ("decrby", 3, WF, 1, 1, 1, "string", strings::decrby),
    ("incrbyfloat", 3, WF, 1, 1, 1, "string", strings::incrbyfloat),
    ("lcs", -3, R, 1, 2, 1, "string", lcs::lcs),
    // lists
    ("lpush", -3, WF, 1, 1, 1, "list", lists::lpush),
    ("rpush", -3, WF, 1, 1, 1, "list", lists::rpush),
    ("lpushx", -3, WF, 1, 1, 1, "list", lists::lpushx),
    ("rpushx", -3, WF, 1, 1, 1, "list", lists::rpushx),
    ("lpop", -2, WRITE | FAST, 1, 1, 1, "list", lists::lpop),
    ("rpop", -2, WRITE | FAST, 1, 1, 1, "list", lists::rpop),
    ("llen", 2, RF, 1, 1, 1, "list", lists::llen),
    ("lrange", 4, R, 1, 1, 1, "list", lists::lrange),
    ("lindex", 3, R, 1, 1, 1, "list", lists::lindex),
    ("lset", 4, W, 1, 1, 1, "list", lists::lset),
    ("linsert", 5, W, 1, 1, 1, "list", lists::linsert),
    ("lrem", 4, WRITE, 1, 1, 1, "list", lists::lrem),
    ("ltrim", 4, WRITE, 1, 1, 1, "list", lists::ltrim),
    ("lpos", -3, R, 1, 1, 1, "list", lists::lpos),
    ("rpoplpush", 3, W, 1, 2, 1, "list", lists::rpoplpush),
    ("lmove", 5, W, 1, 2, 1, "list", lists::lmove),
    ("blpop", -3, WRITE | NOSCRIPT | BLOCKING, 1, -2, 1, "list", lists::blpop),
    ("brpop", -3, WRITE | NOSCRIPT | BLOCKING, 1, -2, 1, "list", lists::brpop),
    ("blmove", 6, W | NOSCRIPT | BLOCKING, 1, 2, 1, "list", lists::blmove),
    ("brpoplpush", 4, W | NOSCRIPT | BLOCKING, 1, 2, 1, "list", lists::brpoplpush),
    // hashes
    ("hset", -4, WF, 1, 1, 1, "hash", hashes::hset),
    ("hmset", -4, WF, 1, 1, 1, "hash", hashes::hmset),
    ("hsetnx", 4, WF, 1, 1, 1, "hash", hashes::hsetnx),
    ("hget", 3, RF, 1, 1, 1, "hash", hashes::hget),
    ("hmget", -3, RF, 1, 1, 1, "hash", hashes::hmget),
    ("hdel", -3, WRITE | FAST, 1, 1, 1, "hash", hashes::hdel),
    ("hexists", 3, RF, 1, 1, 1, "hash", hashes::hexists),
    ("hlen", 2, RF, 1, 1, 1, "hash", hashes::hlen),
    ("hkeys", 2, R, 1, 1, 1, "hash", hashes::hkeys),
    ("hvals", 2, R, 1, 1, 1, "hash", hashes::hvals),
    ("hgetall", 2, R, 1, 1, 1, "hash", hashes::hgetall),
    ("hincrby", 4, WF, 1, 1, 1, "hash", hashes::hincrby),
    ("hincrbyfloat", 4, WF, 1, 1, 1, "hash", hashes::hincrbyfloat),
    ("hstrlen", 3, RF, 1, 1, 1, "hash", hashes::hstrlen),
    ("hrandfield", -2, R, 1, 1, 1, "hash", hashes::hrandfield),
    ("hscan", -3, R, 1, 1, 1, "hash", hashes::hscan),
    // sets
    ("sadd", -3, WF, 1, 1, 1, "set", sets::sadd),
    ("srem", -3, WRITE | FAST, 1, 1, 1, "set", sets::srem),
    ("sismember", 3, RF, 1, 1, 1, "set", sets::sismember),
    ("smismember", -3, RF, 1, 1, 1, "set", sets::smismember),
    ("smembers", 2, R, 1, 1, 1, "set", sets::smembers),
    ("scard", 2, RF, 1, 1, 1, "set", sets::scard),
    ("spop", -2, WRITE | FAST, 1, 1, 1, "set", sets::spop),
    ("srandmember", -2, R, 1, 1, 1, "set", sets::srandmember),
    ("smove", 4, WF, 1, 2, 1, "set", sets::smove),
    ("sinter", -2, R, 1, -1, 1, "set", sets::sinter),
    ("sinterstore", -3, W, 1, -1, 1, "set", sets::sinterstore),
    ("sunion", -2, R, 1, -1, 1, "set", sets::sunion),
    ("sunionstore", -3, W, 1, -1, 1, "set", sets::sunionstore),
    ("sdiff", -2, R, 1, -1, 1, "set", sets::sdiff),
    ("sdiffstore", -3, W, 1, -1, 1, "set", sets::sdiffstore),
    ("sintercard", -3, R, 0, 0, 0, "set", sets::sintercard),
    ("sscan", -3, R, 1, 1, 1, "set", sets::sscan),
    // sorted sets
    ("zadd", -4, WF, 1, 1, 1, "sorted_set", zsets::zadd),
    ("zincrby", 4, WF, 1, 1, 1, "sorted_set", zsets::zincrby),
    ("zrem", -3, WRITE | FAST, 1, 1, 1, "sorted_set", zsets::zrem),
    ("zscore", 3, RF, 1, 1, 1, "sorted_set", zsets::zscore),
    ("zmscore", -3, RF, 1, 1, 1, "sorted_set", zsets::zmscore),
    ("zcard", 2, RF, 1, 1, 1, "sorted_set", zsets::zcard),
    ("zcount", 4, RF, 1, 1, 1, "sorted_set", zsets::zcount),
    ("zlexcount", 4, RF, 1, 1, 1, "sorted_set", zsets::zlexcount),
    ("zrange", -4, R, 1, 1, 1, "sorted_set", zsets::zrange),
    ("zrangebyscore", -4, R, 1, 1, 1, "sorted_set", zsets::zrangebyscore),
    ("zrevrangebyscore", -4, R, 1, 1, 1, "sorted_set", zsets::zrevrangebyscore),
    ("zrangebylex", -4, R, 1, 1, 1, "sorted_set", zsets::zrangebylex),
    ("zrevrangebylex", -4, R, 1, 1, 1, "sorted_set", zsets::zrevrangebylex),
    ("zrevrange", -4, R, 1, 1, 1, "sorted_set", zsets::zrevrange),
    ("zrank", 3, RF, 1, 1, 1, "sorted_set", zsets::zrank),
    ("zrevrank", 3, RF, 1, 1, 1, "sorted_set", zsets::zrevrank),
    ("zpopmin", -2, WRITE | FAST, 1, 1, 1, "sorted_set", zsets::zpopmin),
    ("zpopmax", -2, WRITE | FAST, 1, 1, 1, "sorted_set", zsets::zpopmax),
    ("zremrangebyrank", 4, WRITE, 1, 1, 1, "sorted_set", zsets::zremrangebyrank),
    ("zremrangebyscore", 4, WRITE, 1, 1, 1, "sorted_set", zsets::zremrangebyscore),
    ("zscan", -3, R, 1, 1, 1, "sorted_set", zsets::zscan),
    ("zrandmember", -2, R, 1, 1, 1, "sorted_set", zsets::zrandmember),
    // bitmaps
    ("setbit", 4, W, 1, 1, 1, "bitmap", bitmaps::setbit),
    ("getbit", 3, RF, 1, 1, 1, "bitmap", bitmaps::getbit),
    ("bitcount", -2, R, 1, 1, 1, "bitmap", bitmaps::bitcount),
    ("bitpos", -3, R, 1, 1, 1, "bitmap", bitmaps::bitpos),
    ("bitop", -4, W, 2, -1, 1, "bitmap", bitmaps::bitop),
    ("bitfield", -2, W, 1, 1, 1, "bitmap", bitmaps::bitfield),
    ("bitfield_ro", -2, RF, 1, 1, 1, "bitmap", bitmaps::bitfield_ro),
    // hyperloglog
    ("pfadd", -2, WF, 1, 1, 1, "hyperloglog", hyperloglog::pfadd),
    ("pfcount", -2, R, 1, -1, 1, "hyperloglog", hyperloglog::pfcount),
    ("pfmerge", -2, W, 1, -1, 1, "hyperloglog", hyperloglog::pfmerge),
    ("pfdebug", -3, W | ADMIN, 2, 2, 1, "hyperloglog", hyperloglog::pfdebug),
    ("pfselftest", 1, ADMIN, 0, 0, 0, "hyperloglog", hyperloglog::pfselftest),
    // streams
    ("xadd", -5, WF, 1, 1, 1, "stream", streams::xadd),
    ("xrange", -4, R, 1, 1, 1, "stream", streams::xrange),
    ("xrevrange", -4, R, 1, 1, 1, "stream", streams::xrevrange),
    ("xlen", 2, RF, 1, 1, 1, "stream", streams::xlen),
    ("xdel", -3, WRITE | FAST, 1, 1, 1, "stream", streams::xdel),
    ("xtrim", -4, WRITE, 1, 1, 1, "stream", streams::xtrim),
    ("xsetid", -3, WF, 1, 1, 1, "stream", streams::xsetid),
    ("xread", -4, R | BLOCKING, 0, 0, 0, "stream", streams::xread),
    ("xreadgroup", -7, WRITE | BLOCKING, 0, 0, 0, "stream", streams::xreadgroup),
    ("xgroup", -2, W | CONTAINER, 2, 2, 1, "stream", stream_groups::xgroup),
    ("xack", -4, WRITE | FAST, 1, 1, 1, "stream", stream_groups::xack),
    ("xpending", -3, R, 1, 1, 1, "stream", stream_groups::xpending),
    ("xclaim", -6, WF, 1, 1, 1, "stream", stream_groups::xclaim),
    ("xautoclaim", -6, WRITE | FAST, 1, 1, 1, "stream", stream_groups::xautoclaim),
    ("xinfo", -2, R | CONTAINER, 2, 2, 1, "stream", stream_info::xinfo),
    ("zrangestore", -5, W, 1, 2, 1, "sorted_set", zsets::zrangestore),
    ("zremrangebylex", 4, WRITE, 1, 1, 1, "sorted_set", zsets_multi::zremrangebylex),
    ("zunion", -3, R, 0, 0, 0, "sorted_set", zsets_multi::zunion),
    ("zinter", -3, R, 0, 0, 0, "sorted_set", zsets_multi::zinter),
    ("zdiff", -3, R, 0, 0, 0, "sorted_set", zsets_multi::zdiff),
    ("zunionstore", -4, W, 1, 1, 1, "sorted_set", zsets_multi::zunionstore),
    ("zinterstore", -4, W, 1, 1, 1, "sorted_set", zsets_multi::zinterstore),
    ("zdiffstore", -4, W, 1, 1, 1, "sorted_set", zsets_multi::zdiffstore),
    ("zintercard", -3, R, 0, 0, 0, "sorted_set", zsets_multi::zintercard),
    ("zmpop", -4, WRITE, 0, 0, 0, "sorted_set", pops::zmpop),
    ("bzmpop", -5, WRITE | BLOCKING, 0, 0, 0, "sorted_set", pops::bzmpop),
    ("bzpopmin", -3, WRITE | NOSCRIPT | BLOCKING | FAST, 1, -2, 1, "sorted_set", pops::bzpopmin),
    ("bzpopmax", -3, WRITE | NOSCRIPT | BLOCKING | FAST, 1, -2, 1, "sorted_set", pops::bzpopmax),
    ("lmpop", -4, WRITE, 0, 0, 0, "list", pops::lmpop),
    ("blmpop", -5, WRITE | BLOCKING, 0, 0, 0, "list", pops::blmpop),
    ("sort", -2, W, 1, 1, 1, "generic", sort::sort),
    ("migrate", -6, WRITE, 3, 3, 1, "generic", migrate::migrate),
    ("sort_ro", -2, R, 1, 1, 1, "generic", sort::sort_ro),
    // geo
    ("geoadd", -5, W, 1, 1, 1, "geo", geo::geoadd),
    ("geodist", -4, R, 1, 1, 1, "geo", geo::geodist),
    ("geohash", -2, R, 1, 1, 1, "geo", geo::geohash),
    ("geopos", -2, R, 1, 1, 1, "geo", geo::geopos),
    ("georadius", -6, W, 1, 1, 1, "geo", geo::georadius),
    ("georadius_ro", -6, R, 1, 1, 1, "geo", geo::georadius_ro),
    ("georadiusbymember", -5, W, 1, 1, 1, "geo", geo::georadiusbymember),
    ("georadiusbymember_ro", -5, R, 1, 1, 1, "geo", geo::georadiusbymember_ro),
    ("geosearch", -7, R, 1, 1, 1, "geo", geo::geosearch),
    ("geosearchstore", -8, W, 1, 2, 1, "geo", geo::geosearchstore),
    // transactions
    ("multi", 1, NOSCRIPT | LOADING | STALE | FAST | TX_CONTROL, 0, 0, 0, "transactions", tx::multi),
    ("exec", 1, NOSCRIPT | LOADING | STALE | TX_CONTROL, 0, 0, 0, "transactions", tx::exec),
    ("discard", 1, NOSCRIPT | LOADING | STALE | FAST | TX_CONTROL, 0, 0, 0, "transactions", tx::discard),
    ("watch", -2, NOSCRIPT | LOADING | STALE | FAST | TX_CONTROL, 1, -1, 1, "transactions", tx::watch),
    ("unwatch", 1, NOSCRIPT | LOADING | STALE | FAST, 0, 0, 0, "transactions", tx::unwatch),
    // pub/sub
    ("subscribe", -2, PUBSUB | NOSCRIPT | LOADING | STALE | SUBSCRIBED_OK, 0, 0, 0, "pubsub", pubsub::subscribe),
    ("unsubscribe", -1, PUBSUB | NOSCRIPT | LOADING | STALE | SUBSCRIBED_OK, 0, 0, 0, "pubsub", pubsub::unsubscribe),
    ("psubscribe", -2, PUBSUB | NOSCRIPT | LOADING | STALE | SUBSCRIBED_OK, 0, 0, 0, "pubsub", pubsub::psubscribe),
    ("punsubscribe", -1, PUBSUB | NOSCRIPT | LOADING | STALE | SUBSCRIBED_OK, 0, 0, 0, "pubsub", pubsub::punsubscribe),
    ("publish", 3, PUBSUB | LOADING | STALE | FAST, 0, 0, 0, "pubsub", pubsub::publish),
    // introspection
    ("object", -2, R | CONTAINER, 2, 2, 1, "generic", introspect::object),
    ("memory", -2, R | CONTAINER, 2, 2, 1, "server", introspect::memory),
    ("debug", -2, ADMIN | NOSCRIPT | LOADING | STALE, 0, 0, 0, "server", introspect::debug),
    ("slowlog", -2, ADMIN | LOADING | STALE | CONTAINER, 0, 0, 0, "server", monitoring::slowlog),
    ("latency", -2, ADMIN | NOSCRIPT | LOADING | STALE | CONTAINER, 0, 0, 0, "server", monitoring::latency),
    ("wait", 3, NOSCRIPT, 0, 0, 0, "generic", monitoring::wait),
    ("monitor", 1, ADMIN | NOSCRIPT | LOADING | STALE, 0, 0, 0, "server", monitoring::monitor),
    ("pubsub", -2, PUBSUB | LOADING | STALE | CONTAINER, 0, 0, 0, "pubsub", pubsub::pubsub),
    ("ssubscribe", -2, PUBSUB | NOSCRIPT | LOADING | STALE | SUBSCRIBED_OK, 1, -1, 1, "pubsub", pubsub::ssubscribe),
    ("sunsubscribe", -1, PUBSUB | NOSCRIPT | LOADING | STALE | SUBSCRIBED_OK, 1, -1, 1, "pubsub", pubsub::sunsubscribe),
    ("spublish", 3, PUBSUB | LOADING | STALE | FAST, 1, 1, 1, "pubsub", pubsub::spublish),
];

/// Every command, in table order.
pub static COMMANDS: LazyLock<Vec<Command>> = LazyLock::new(|| {
    ROWS.iter()
        .enumerate()
        .map(
            |(index, &(name, arity, flags, first_key, last_key, step, group, handler))| Command {
                name,
                arity,
                flags,
                first_key,
                last_key,
                step,
                group,
                handler,
                index,
            },
        )
        .collect()
});

static BY_NAME: LazyLock<HashMap<&'static [u8], usize, RandomState>> = LazyLock::new(|| {
    COMMANDS
        .iter()
        .map(|c| (c.name.as_bytes(), c.index))
        .collect()
});

/// The command named `lower` (already lower-cased).
pub fn lookup(lower: &[u8]) -> Option<&'static Command> {
    BY_NAME.get(lower).and_then(|&i| COMMANDS.get(i))
}
