//! The parameters of Redis 7.0 that CONFIG GET/SET know: names, aliases, kinds, defaults, and
//! what each does in Sluice.

use super::{Access, Effect, Kind, Num, Row};

const YES_NO: Kind = Kind::Bool;
const TEXT: Kind = Kind::Text;
const INT_MAX: i128 = i32::MAX as i128;
const INT_MIN: i128 = i32::MIN as i128;
const LONG_MAX: i128 = i64::MAX as i128;
const ULLONG_MAX: i128 = u64::MAX as i128;
const UINT_MAX: i128 = u32::MAX as i128;

const fn int(min: i128, max: i128) -> Kind {
    Kind::Int(Num {
        min,
        max,
        memory: false,
        percent: false,
        octal: false,
    })
}
const fn memory(min: i128, max: i128) -> Kind {
    Kind::Int(Num {
        min,
        max,
        memory: true,
        percent: false,
        octal: false,
    })
}

const POLICIES: &[(&str, u32)] = &[
    ("volatile-lru", 0),
    ("volatile-lfu", 1),
    ("volatile-random", 2),
    ("volatile-ttl", 3),
    ("allkeys-lru", 4),
    ("allkeys-lfu", 5),
    ("allkeys-random", 6),
    ("noeviction", 7),
];
const LOGLEVELS: &[(&str, u32)] = &[("debug", 0), ("verbose", 1), ("notice", 2), ("warning", 3)];
const APPENDFSYNC: &[(&str, u32)] = &[("everysec", 0), ("always", 1), ("no", 2)];
const SUPERVISED: &[(&str, u32)] = &[("upstart", 0), ("systemd", 1), ("auto", 2), ("no", 3)];
const SYSLOG_FACILITY: &[(&str, u32)] = &[
    ("user", 0),
    ("local0", 1),
    ("local1", 2),
    ("local2", 3),
    ("local3", 4),
    ("local4", 5),
    ("local5", 6),
    ("local6", 7),
    ("local7", 8),
];
const DISKLESS_LOAD: &[(&str, u32)] = &[("disabled", 0), ("on-empty-db", 1), ("swapdb", 2)];
const OOM_SCORE_ADJ: &[(&str, u32)] = &[("no", 0), ("yes", 1), ("relative", 1), ("absolute", 2)];
const PUBSUB_DEFAULT: &[(&str, u32)] = &[("allchannels", 1), ("resetchannels", 0)];
const SANITIZE: &[(&str, u32)] = &[("no", 0), ("yes", 1), ("clients", 2)];
const PROTECTED: &[(&str, u32)] = &[("no", 0), ("yes", 1), ("local", 2)];
const ENDPOINT: &[(&str, u32)] = &[("ip", 0), ("hostname", 1), ("unknown-endpoint", 2)];
const PROPAGATION: &[(&str, u32)] = &[("ignore", 0), ("panic", 1), ("panic-on-replicas", 2)];
/// Bit flags: several may be given, space-separated.
pub(super) const SHUTDOWN: &[(&str, u32)] = &[
    ("default", 0),
    ("save", 1),
    ("nosave", 2),
    ("now", 4),
    ("force", 8),
];

const fn one_of(options: &'static [(&'static str, u32)]) -> Kind {
    Kind::Enum {
        options,
        multi: false,
    }
}

use Access::{Fixed, Immutable, Modifiable, Protected};
use Effect::{Acts, Cluster, Files, Internal, NotEnforced, Process, Replication, Reported};

const fn row(
    name: &'static str,
    alias: Option<&'static str>,
    kind: Kind,
    access: Access,
    effect: Effect,
    default: &'static str,
) -> Row {
    Row {
        name,
        alias,
        kind,
        access,
        effect,
        default,
        hidden: false,
    }
}

const fn hidden(name: &'static str, kind: Kind, default: &'static str) -> Row {
    Row {
        name,
        alias: None,
        kind,
        access: Modifiable,
        effect: Internal,
        default,
        hidden: true,
    }
}

/// Every parameter, in Redis's order (bool, string, enum, numeric, special).
#[rustfmt::skip]
pub(super) const ROWS: &[Row] = &[
    row("rdbchecksum", None, YES_NO, Immutable, Files, "yes"),
    row("daemonize", None, YES_NO, Immutable, Process, "no"),
    row("io-threads-do-reads", None, YES_NO, Immutable, Internal, "no"),
    row("always-show-logo", None, YES_NO, Immutable, Process, "no"),
    row("protected-mode", None, YES_NO, Modifiable, NotEnforced, "yes"),
    row("rdbcompression", None, YES_NO, Modifiable, Files, "yes"),
    row("rdb-del-sync-files", None, YES_NO, Modifiable, Files, "no"),
    row("activerehashing", None, YES_NO, Modifiable, Internal, "yes"),
    row("stop-writes-on-bgsave-error", None, YES_NO, Modifiable, Files, "yes"),
    row("set-proc-title", None, YES_NO, Immutable, Process, "yes"),
    row("dynamic-hz", None, YES_NO, Modifiable, Internal, "yes"),
    row("lazyfree-lazy-eviction", None, YES_NO, Modifiable, Internal, "no"),
    row("lazyfree-lazy-expire", None, YES_NO, Modifiable, Internal, "no"),
    row("lazyfree-lazy-server-del", None, YES_NO, Modifiable, Internal, "no"),
    row("lazyfree-lazy-user-del", None, YES_NO, Modifiable, Internal, "no"),
    row("lazyfree-lazy-user-flush", None, YES_NO, Modifiable, Internal, "no"),
    row("repl-disable-tcp-nodelay", None, YES_NO, Modifiable, Replication, "no"),
    row("repl-diskless-sync", None, YES_NO, Modifiable, Replication, "yes"),
    row("aof-rewrite-incremental-fsync", None, YES_NO, Modifiable, Files, "yes"),
    row("no-appendfsync-on-rewrite", None, YES_NO, Modifiable, Files, "no"),
    row("cluster-require-full-coverage", None, YES_NO, Modifiable, Cluster, "yes"),
    row("rdb-save-incremental-fsync", None, YES_NO, Modifiable, Files, "yes"),
    row("aof-load-truncated", None, YES_NO, Modifiable, Files, "yes"),
    row("aof-use-rdb-preamble", None, YES_NO, Modifiable, Files, "yes"),
    row("aof-timestamp-enabled", None, YES_NO, Modifiable, Files, "no"),
    row("cluster-replica-no-failover", Some("cluster-slave-no-failover"), YES_NO, Modifiable, Cluster, "no"),
    row("replica-lazy-flush", Some("slave-lazy-flush"), YES_NO, Modifiable, Replication, "no"),
    row("replica-serve-stale-data", Some("slave-serve-stale-data"), YES_NO, Modifiable, Replication, "yes"),
    row("replica-read-only", Some("slave-read-only"), YES_NO, Modifiable, Replication, "yes"),
    row("replica-ignore-maxmemory", Some("slave-ignore-maxmemory"), YES_NO, Modifiable, Replication, "yes"),
    row("jemalloc-bg-thread", None, YES_NO, Modifiable, Internal, "yes"),
    row("activedefrag", None, YES_NO, Modifiable, Internal, "no"),
    row("syslog-enabled", None, YES_NO, Immutable, Process, "no"),
    row("cluster-enabled", None, YES_NO, Immutable, Cluster, "no"),
    row("appendonly", None, YES_NO, Fixed, Acts, "no"),
    row("cluster-allow-reads-when-down", None, YES_NO, Modifiable, Cluster, "no"),
    row("cluster-allow-pubsubshard-when-down", None, YES_NO, Modifiable, Cluster, "yes"),
    row("crash-log-enabled", None, YES_NO, Modifiable, Process, "yes"),
    row("crash-memcheck-enabled", None, YES_NO, Modifiable, Process, "yes"),
    hidden("use-exit-on-panic", YES_NO, "no"),
    row("disable-thp", None, YES_NO, Immutable, Process, "yes"),
    row("cluster-allow-replica-migration", None, YES_NO, Modifiable, Cluster, "yes"),
    row("replica-announced", None, YES_NO, Modifiable, Replication, "yes"),
    row("latency-tracking", None, YES_NO, Modifiable, Internal, "yes"),
    row("aof-disable-auto-gc", None, YES_NO, Modifiable, Files, "no"),
    row("replica-ignore-disk-write-errors", None, YES_NO, Modifiable, Replication, "no"),

    row("aclfile", None, TEXT, Immutable, Acts, ""),
    row("unixsocket", None, TEXT, Immutable, Process, ""),
    row("pidfile", None, TEXT, Immutable, Process, ""),
    row("replica-announce-ip", Some("slave-announce-ip"), TEXT, Modifiable, Replication, ""),
    row("masteruser", None, TEXT, Modifiable, Replication, ""),
    row("cluster-announce-ip", None, TEXT, Modifiable, Cluster, ""),
    row("cluster-config-file", None, TEXT, Immutable, Cluster, "nodes.conf"),
    row("cluster-announce-hostname", None, TEXT, Modifiable, Cluster, ""),
    row("syslog-ident", None, TEXT, Immutable, Process, "redis"),
    row("dbfilename", None, TEXT, Protected, Files, "dump.rdb"),
    row("appendfilename", None, TEXT, Immutable, Files, "appendonly.aof"),
    row("appenddirname", None, TEXT, Immutable, Files, "appendonlydir"),
    row("server_cpulist", None, TEXT, Immutable, Process, ""),
    row("bio_cpulist", None, TEXT, Immutable, Process, ""),
    row("aof_rewrite_cpulist", None, TEXT, Immutable, Process, ""),
    row("bgsave_cpulist", None, TEXT, Immutable, Process, ""),
    row("ignore-warnings", None, TEXT, Modifiable, Process, ""),
    row("proc-title-template", None, TEXT, Modifiable, Process, "{title} {listen-addr} {server-mode}"),
    row("bind-source-addr", None, TEXT, Modifiable, Replication, ""),
    row("logfile", None, TEXT, Immutable, Process, ""),
    row("masterauth", None, TEXT, Modifiable, Replication, ""),
    row("requirepass", None, TEXT, Modifiable, Acts, ""),

    row("supervised", None, one_of(SUPERVISED), Immutable, Process, "no"),
    row("syslog-facility", None, one_of(SYSLOG_FACILITY), Immutable, Process, "local0"),
    row("repl-diskless-load", None, one_of(DISKLESS_LOAD), Modifiable, Replication, "disabled"),
    row("loglevel", None, one_of(LOGLEVELS), Modifiable, Process, "notice"),
    row("maxmemory-policy", None, one_of(POLICIES), Modifiable, Acts, "noeviction"),
    row("appendfsync", None, one_of(APPENDFSYNC), Fixed, Acts, "everysec"),
    row("oom-score-adj", None, one_of(OOM_SCORE_ADJ), Modifiable, Process, "no"),
    row("acl-pubsub-default", None, one_of(PUBSUB_DEFAULT), Modifiable, Acts, "resetchannels"),
    row("sanitize-dump-payload", None, one_of(SANITIZE), Modifiable, Internal, "no"),
    row("enable-protected-configs", None, one_of(PROTECTED), Immutable, Acts, "no"),
    row("enable-debug-command", None, one_of(PROTECTED), Immutable, NotEnforced, "no"),
    row("enable-module-command", None, one_of(PROTECTED), Immutable, NotEnforced, "no"),
    row("cluster-preferred-endpoint-type", None, one_of(ENDPOINT), Modifiable, Cluster, "ip"),
    row("propagation-error-behavior", None, one_of(PROPAGATION), Modifiable, Replication, "ignore"),
    row("shutdown-on-sigint", None, Kind::Enum { options: SHUTDOWN, multi: true }, Modifiable, Process, "default"),
    row("shutdown-on-sigterm", None, Kind::Enum { options: SHUTDOWN, multi: true }, Modifiable, Process, "default"),

    row("databases", None, int(1, INT_MAX), Immutable, Acts, "16"),
    row("port", None, int(0, 65535), Fixed, Acts, "6379"),
    row("io-threads", None, int(1, 128), Immutable, Internal, "1"),
    row("auto-aof-rewrite-percentage", None, int(0, INT_MAX), Modifiable, Files, "100"),
    row("cluster-replica-validity-factor", Some("cluster-slave-validity-factor"), int(0, INT_MAX), Modifiable, Cluster, "10"),
    row("list-max-listpack-size", Some("list-max-ziplist-size"), int(INT_MIN, INT_MAX), Modifiable, Internal, "-2"),
    row("tcp-keepalive", None, int(0, INT_MAX), Modifiable, NotEnforced, "300"),
    row("cluster-migration-barrier", None, int(0, INT_MAX), Modifiable, Cluster, "1"),
    row("active-defrag-cycle-min", None, int(1, 99), Modifiable, Internal, "1"),
    row("active-defrag-cycle-max", None, int(1, 99), Modifiable, Internal, "25"),
    row("active-defrag-threshold-lower", None, int(0, 1000), Modifiable, Internal, "10"),
    row("active-defrag-threshold-upper", None, int(0, 1000), Modifiable, Internal, "100"),
    row("lfu-log-factor", None, int(0, INT_MAX), Modifiable, Acts, "10"),
    row("lfu-decay-time", None, int(0, INT_MAX), Modifiable, Acts, "1"),
    row("replica-priority", Some("slave-priority"), int(0, INT_MAX), Modifiable, Replication, "100"),
    row("repl-diskless-sync-delay", None, int(0, INT_MAX), Modifiable, Replication, "5"),
    row("maxmemory-samples", None, int(1, INT_MAX), Modifiable, Acts, "5"),
    row("maxmemory-eviction-tenacity", None, int(0, 100), Modifiable, Internal, "10"),
    row("timeout", None, int(0, INT_MAX), Modifiable, NotEnforced, "0"),
    row("replica-announce-port", Some("slave-announce-port"), int(0, 65535), Modifiable, Replication, "0"),
    row("tcp-backlog", None, int(0, INT_MAX), Immutable, Process, "511"),
    row("cluster-port", None, int(0, 65535), Immutable, Cluster, "0"),
    row("cluster-announce-bus-port", None, int(0, 65535), Modifiable, Cluster, "0"),
    row("cluster-announce-port", None, int(0, 65535), Modifiable, Cluster, "0"),
    row("cluster-announce-tls-port", None, int(0, 65535), Modifiable, Cluster, "0"),
    row("repl-timeout", None, int(1, INT_MAX), Modifiable, Replication, "60"),
    row("repl-ping-replica-period", Some("repl-ping-slave-period"), int(1, INT_MAX), Modifiable, Replication, "10"),
    row("list-compress-depth", None, int(0, INT_MAX), Modifiable, Internal, "0"),
    hidden("rdb-key-save-delay", int(INT_MIN, INT_MAX), "0"),
    hidden("key-load-delay", int(INT_MIN, INT_MAX), "0"),
    row("active-expire-effort", None, int(1, 10), Modifiable, Internal, "1"),
    row("hz", None, int(0, INT_MAX), Modifiable, Internal, "10"),
    row("min-replicas-to-write", Some("min-slaves-to-write"), int(0, INT_MAX), Modifiable, Acts, "0"),
    row("min-replicas-max-lag", Some("min-slaves-max-lag"), int(0, INT_MAX), Modifiable, Acts, "10"),
    hidden("watchdog-period", int(0, INT_MAX), "0"),
    row("shutdown-timeout", None, int(0, INT_MAX), Modifiable, Process, "10"),
    row("repl-diskless-sync-max-replicas", None, int(0, INT_MAX), Modifiable, Replication, "0"),
    row("maxclients", None, int(1, UINT_MAX), Modifiable, NotEnforced, "10000"),
    row("unixsocketperm", None, Kind::Int(Num { min: 0, max: 0o777, memory: false, percent: false, octal: true }), Immutable, Process, "0"),
    row("socket-mark-id", None, int(0, UINT_MAX), Immutable, Process, "0"),
    row("active-defrag-max-scan-fields", None, int(1, LONG_MAX), Modifiable, Internal, "1000"),
    row("slowlog-max-len", None, int(0, LONG_MAX), Modifiable, Acts, "128"),
    row("acllog-max-len", None, int(0, LONG_MAX), Modifiable, Acts, "128"),
    row("busy-reply-threshold", Some("lua-time-limit"), int(0, LONG_MAX), Modifiable, Acts, "5000"),
    row("cluster-node-timeout", None, int(0, LONG_MAX), Modifiable, Cluster, "15000"),
    row("slowlog-log-slower-than", None, int(-1, LONG_MAX), Modifiable, Acts, "10000"),
    row("latency-monitor-threshold", None, int(0, LONG_MAX), Modifiable, NotEnforced, "0"),
    row("proto-max-bulk-len", None, memory(1024 * 1024, LONG_MAX), Modifiable, Acts, "536870912"),
    row("stream-node-max-entries", None, int(0, LONG_MAX), Modifiable, Acts, "100"),
    row("repl-backlog-size", None, memory(1, LONG_MAX), Modifiable, Replication, "1048576"),
    row("maxmemory", None, memory(0, ULLONG_MAX), Modifiable, Acts, "0"),
    row("cluster-link-sendbuf-limit", None, memory(0, ULLONG_MAX), Modifiable, Cluster, "0"),
    row("hash-max-listpack-entries", Some("hash-max-ziplist-entries"), int(0, LONG_MAX), Modifiable, Reported, "512"),
    row("set-max-intset-entries", None, int(0, LONG_MAX), Modifiable, Reported, "512"),
    row("zset-max-listpack-entries", Some("zset-max-ziplist-entries"), int(0, LONG_MAX), Modifiable, Reported, "128"),
    row("active-defrag-ignore-bytes", None, memory(1, LONG_MAX), Modifiable, Internal, "104857600"),
    row("hash-max-listpack-value", Some("hash-max-ziplist-value"), memory(0, LONG_MAX), Modifiable, Reported, "64"),
    row("stream-node-max-bytes", None, memory(0, LONG_MAX), Modifiable, Acts, "4096"),
    row("zset-max-listpack-value", Some("zset-max-ziplist-value"), memory(0, LONG_MAX), Modifiable, Reported, "64"),
    row("hll-sparse-max-bytes", None, memory(0, LONG_MAX), Modifiable, Acts, "3000"),
    row("tracking-table-max-keys", None, int(0, LONG_MAX), Modifiable, NotEnforced, "1000000"),
    row("client-query-buffer-limit", None, memory(1024 * 1024, LONG_MAX), Modifiable, NotEnforced, "1073741824"),
    row("maxmemory-clients", None, Kind::Int(Num { min: -100, max: LONG_MAX, memory: true, percent: true, octal: false }), Modifiable, NotEnforced, "0"),
    row("repl-backlog-ttl", None, int(0, LONG_MAX), Modifiable, Replication, "3600"),
    row("auto-aof-rewrite-min-size", None, memory(0, LONG_MAX), Modifiable, Files, "67108864"),
    hidden("loading-process-events-interval-bytes", int(1024, INT_MAX), "2097152"),

    row("dir", None, TEXT, Protected, Files, "/"),
    row("save", None, Kind::Save, Modifiable, Files, "3600 1 300 100 60 10000"),
    row("client-output-buffer-limit", None, Kind::OutputBufferLimit, Modifiable, NotEnforced, "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"),
    row("oom-score-adj-values", None, Kind::OomValues, Modifiable, Process, "0 200 800"),
    row("notify-keyspace-events", None, Kind::Events, Modifiable, Acts, ""),
    row("bind", None, Kind::Words, Fixed, Acts, "* -::*"),
    row("replicaof", Some("slaveof"), Kind::Words, Immutable, Replication, ""),
    row("latency-tracking-info-percentiles", None, Kind::Percentiles, Modifiable, NotEnforced, "50 99 99.9"),
];
