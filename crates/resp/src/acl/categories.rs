//! The ACL command categories (`@read`, `@string`, ...) as Redis 7.0 names and orders them, and
//! the categories a command outside Redis's catalog gets from its flags and group.

use crate::cmd::{Command, flags};

pub const KEYSPACE: u32 = 1;
pub const READ: u32 = 1 << 1;
pub const WRITE: u32 = 1 << 2;
pub const SET: u32 = 1 << 3;
pub const SORTEDSET: u32 = 1 << 4;
pub const LIST: u32 = 1 << 5;
pub const HASH: u32 = 1 << 6;
pub const STRING: u32 = 1 << 7;
pub const BITMAP: u32 = 1 << 8;
pub const HYPERLOGLOG: u32 = 1 << 9;
pub const GEO: u32 = 1 << 10;
pub const STREAM: u32 = 1 << 11;
pub const PUBSUB: u32 = 1 << 12;
pub const ADMIN: u32 = 1 << 13;
pub const FAST: u32 = 1 << 14;
pub const SLOW: u32 = 1 << 15;
pub const BLOCKING: u32 = 1 << 16;
pub const DANGEROUS: u32 = 1 << 17;
pub const CONNECTION: u32 = 1 << 18;
pub const TRANSACTION: u32 = 1 << 19;
pub const SCRIPTING: u32 = 1 << 20;

/// Every category in Redis's order (ACL CAT, COMMAND INFO, and the order ACL GETUSER tries
/// them when it describes a user's commands).
pub const NAMES: [(&str, u32); 21] = [
    ("keyspace", KEYSPACE),
    ("read", READ),
    ("write", WRITE),
    ("set", SET),
    ("sortedset", SORTEDSET),
    ("list", LIST),
    ("hash", HASH),
    ("string", STRING),
    ("bitmap", BITMAP),
    ("hyperloglog", HYPERLOGLOG),
    ("geo", GEO),
    ("stream", STREAM),
    ("pubsub", PUBSUB),
    ("admin", ADMIN),
    ("fast", FAST),
    ("slow", SLOW),
    ("blocking", BLOCKING),
    ("dangerous", DANGEROUS),
    ("connection", CONNECTION),
    ("transaction", TRANSACTION),
    ("scripting", SCRIPTING),
];

/// The category named `name` (any case), if there is one.
pub fn by_name(name: &[u8]) -> Option<u32> {
    NAMES
        .iter()
        .find(|(n, _)| n.as_bytes().eq_ignore_ascii_case(name))
        .map(|&(_, bit)| bit)
}

/// The categories of a command Redis's catalog lacks: what its flags imply, as Redis derives
/// them (write, read, admin and dangerous, pubsub, fast or slow, blocking), and its group's.
pub fn derived(cmd: &Command) -> u32 {
    let mut bits = 0;
    if cmd.flags & flags::WRITE != 0 {
        bits |= WRITE;
    }
    if cmd.flags & flags::READONLY != 0 && cmd.group != "scripting" {
        bits |= READ;
    }
    if cmd.flags & flags::ADMIN != 0 {
        bits |= ADMIN | DANGEROUS;
    }
    if cmd.flags & flags::PUBSUB != 0 {
        bits |= PUBSUB;
    }
    bits |= if cmd.flags & flags::FAST != 0 {
        FAST
    } else {
        SLOW
    };
    if cmd.flags & flags::BLOCKING != 0 {
        bits |= BLOCKING;
    }
    bits | match cmd.group {
        "generic" => KEYSPACE,
        "string" => STRING,
        "list" => LIST,
        "hash" => HASH,
        "set" => SET,
        "sorted_set" => SORTEDSET,
        "bitmap" => BITMAP,
        "hyperloglog" => HYPERLOGLOG,
        "geo" => GEO,
        "stream" => STREAM,
        "connection" => CONNECTION,
        "transactions" => TRANSACTION,
        "scripting" => SCRIPTING,
        _ => 0,
    }
}
