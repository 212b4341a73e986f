//! The settings of `sluice serve`, one declaration each, and what the gates are given from them.

use super::settings;
use super::value::{Choice, SettingValue, Size, Span, choice_setting};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

fn pool_defaults() -> sluice_pg::PoolSettings {
    sluice_pg::PoolSettings::default()
}

fn rest_defaults() -> sluice_rest::RestConfig {
    sluice_rest::RestConfig::default()
}

fn server_defaults() -> sluice_http::ServerOptions {
    sluice_http::ServerOptions::default()
}

/// Where the HTTP gate listens when nothing says otherwise.
pub const DEFAULT_HTTP: SocketAddr = SocketAddr::V4(std::net::SocketAddrV4::new(
    std::net::Ipv4Addr::LOCALHOST,
    8080,
));

settings! {
    [database] DatabaseSettings {
        /// Database URL or conninfo string (also DATABASE_URL, or -d). Empty: Sluice runs its
        /// embedded PostgreSQL with a persistent data directory.
        url: String = String::new(), flag "database", short 'd', alias "DATABASE_URL";
        /// Data directory of the embedded PostgreSQL (also SLUICE_DATA_DIR; default:
        /// /var/lib/sluice/pgdata as root, else ~/.local/share/sluice/pgdata).
        data_dir: Option<PathBuf> = None, flag "data-dir", alias "SLUICE_DATA_DIR",
            sample "/var/lib/sluice/pgdata";
        /// Port of the embedded PostgreSQL on 127.0.0.1 (also SLUICE_PG_PORT; default: the one it
        /// used last, else a free one).
        pg_port: Option<u16> = None, flag "pg-port", alias "SLUICE_PG_PORT", sample "5433";
        /// Read replicas: URLs of streaming replicas of the database (comma-separated in the
        /// variable; the flag may be repeated). Table and view reads (GET, HEAD), calls of
        /// STABLE or IMMUTABLE functions by GET and view-file GETs go to the replica with the
        /// fewest requests in flight; writes, POST calls and volatile functions stay on the
        /// primary. A URL that is not in recovery is refused at start. Writes then answer with
        /// their commit position (Sluice-Lsn) for reads that must see them.
        replicas: Vec<String> = Vec::new(), flag "replica-url",
            sample "postgres://sluice@replica1.example/app";
        /// Most replay lag a replica may have and still serve reads (checked every second
        /// against its last replayed commit and WAL position); a replica beyond it, or
        /// unreachable, is taken out until it catches up. With every replica out, reads go to
        /// the primary.
        max_replica_lag: Span = Span(Duration::from_secs(10));
        /// Read your writes: how long a read that names a commit position (the Sluice-Lsn
        /// header or cookie of a write's answer) waits for a replica to replay it before the
        /// primary serves it (0: the primary at once).
        lsn_wait: Span = Span(sluice_pg::pool::DEFAULT_LSN_WAIT);
        /// Read your writes for browsers: writes also set the sluice-lsn cookie (HttpOnly,
        /// Path=/, kept for max_replica_lag), which later reads send back by themselves.
        lsn_cookie: bool = false;
        /// Embedded PostgreSQL only: start this many streaming replicas of it (temporary, gone
        /// when Sluice stops) and route reads to them, as with replicas.
        embedded_replicas: usize = 0, flag "replicas";
    }

    [pool] PoolSection {
        /// Most connections to PostgreSQL; requests beyond it wait for one (first come, first
        /// served).
        size: usize = pool_defaults().max_size();
        /// Connections kept open while unused.
        min_idle: usize = pool_defaults().min_idle();
        /// Longest wait for a free connection; beyond it the request is answered 503.
        acquire_timeout: Span = Span(pool_defaults().acquire_timeout());
        /// Most requests waiting for a connection at once; one more is answered 503 with
        /// Retry-After at once instead of joining the queue.
        max_waiting: usize = pool_defaults().max_waiting();
        /// Connections are replaced after this long (0: never).
        max_lifetime: Span = Span(pool_defaults().max_lifetime().unwrap_or_default());
        /// Idle connections are closed after this long (0: never).
        idle_timeout: Span = Span(pool_defaults().idle_timeout().unwrap_or_default());
        /// What a connection given back to the pool forgets before its next request: "session"
        /// (an open transaction and all session state: settings, temporary tables, LISTEN,
        /// advisory locks, held cursors; prepared statements survive) or "transaction" (only an
        /// open transaction is rolled back; faster for short statements, for views whose SQL
        /// changes no session state).
        reset: ResetMode = ResetMode::Session;
    }

    [http] HttpSection {
        /// Address of the HTTP gate. The gate runs unless only the Redis gate is configured.
        listen: SocketAddr = DEFAULT_HTTP, flag "http";
        /// Largest request body; larger ones are answered 413.
        body_limit: Size = Size(server_defaults().body_limit as u64);
        /// Longest wait for the next chunk of a request body; beyond it the answer is 408.
        body_timeout: Span = Span(server_defaults().body_timeout);
        /// Least average rate of a request body in bytes per second, checked after
        /// min_body_rate_grace (Kestrel's MinRequestBodyDataRate); slower bodies are answered 408
        /// and their connection closed. 0 turns the check off.
        min_body_rate: u64 = server_defaults().min_body_rate;
        /// How long a request body may take before min_body_rate applies.
        min_body_rate_grace: Span = Span(server_defaults().min_body_rate_grace);
        /// Longest time from a request's head to the end of its body; beyond it the answer is
        /// 408.
        request_timeout: Span = Span(server_defaults().request_timeout);
        /// Longest wait for a whole request head from its first byte (and for a new
        /// connection's first request); the connection is closed beyond it.
        header_timeout: Span = Span(server_defaults().header_timeout);
        /// Longest idle time of a keep-alive connection between two requests.
        keep_alive_timeout: Span = Span(server_defaults().keep_alive_timeout);
        /// Most connections served at once. At the cap a new connection takes the slot of one
        /// that makes no progress (idle, a stalled head, a body under min_body_rate); when every
        /// connection is busy answering, it waits until one closes.
        max_connections: usize = server_defaults().max_connections;
        /// Budget of request-body bytes held in memory by all requests together; a body that
        /// finds no room within inflight_wait is answered 503 with Retry-After. 0: no budget.
        max_inflight_bytes: Size = Size(server_defaults().max_inflight_bytes as u64);
        /// Longest wait of a request body for room in max_inflight_bytes.
        inflight_wait: Span = Span(server_defaults().inflight_wait);
        /// Keep connections open between requests (HTTP/1.1 keep-alive).
        keep_alive: bool = server_defaults().keep_alive;
        /// At SIGTERM/SIGINT, the longest wait for requests in flight to finish.
        shutdown_timeout: Span = Span(server_defaults().shutdown_timeout);
        /// One log line per request (method, path, status, bytes, duration) at level info, target
        /// sluice_http::access; filter with SLUICE_LOG (e.g. SLUICE_LOG=info,sluice_http::access=off).
        access_log: bool = server_defaults().access_log;
        /// HTTPS: the PEM certificate chain (the server's first), with key. Not set: plain HTTP.
        /// Both files are read again on SIGHUP; open connections keep what they began with.
        cert: Option<String> = None, sample "/etc/sluice/tls/server.crt";
        /// HTTPS: the PEM private key (PKCS#8, PKCS#1 or SEC1) of cert.
        key: Option<String> = None, sample "/etc/sluice/tls/server.key";
    }

    [rest] RestSection {
        /// Serve the automatic REST API (PostgREST's dialect) on the HTTP gate: every table, view
        /// and function of the exposed schemas.
        enabled: bool = true;
        /// The schemas the API exposes, the first the default; clients choose another with
        /// Accept-Profile / Content-Profile (PostgREST's db-schemas).
        schemas: Vec<String> = rest_defaults().schemas;
        /// The role each request runs as (SET LOCAL ROLE, with PostgREST's request.* settings),
        /// PostgREST's db-anon-role. Not set: the role Sluice connects with.
        anon_role: Option<String> = None, sample "web_anon";
        /// The most rows a response holds (db-max-rows). Not set: no cap.
        max_rows: Option<u64> = None, sample "1000";
        /// How each request's transaction ends (db-tx-end): commit, commit-allow-override,
        /// rollback or rollback-allow-override (the -allow-override ones honour Prefer: tx=).
        tx_end: sluice_rest::TxEnd = rest_defaults().tx_end;
        /// The URL prefix of the API. Views and the Influx endpoints keep their prefixes and win
        /// over tables of the same name: serve the API under a prefix of its own (/api) to reach
        /// a table called write or query.
        prefix: String = "/".to_string();
        /// Aggregate functions in select= (PostgREST's db-aggregates-enabled).
        aggregates_enabled: bool = rest_defaults().aggregates_enabled;
        /// Accept: application/vnd.pgrst.plan answers the EXPLAIN of the request's statement
        /// (PostgREST's db-plan-enabled); it shows the database's plans, so it is off by default.
        plan_enabled: bool = rest_defaults().plan_enabled;
        /// GET on the prefix answers the OpenAPI description of the schema (false: PostgREST's
        /// openapi-mode = disabled).
        openapi: bool = rest_defaults().openapi;
        /// Reload the schema cache after every DDL command, through an event trigger Sluice
        /// installs (it needs a superuser). Not set: on for the embedded PostgreSQL, off for a
        /// database given with -d. NOTIFY pgrst, 'reload schema' and SIGUSR1 always reload, and
        /// a request for an unknown table or function reloads at most once a second.
        reload_on_ddl: Option<bool> = None, sample "true";
        /// The key bearer tokens are verified with (PostgREST's jwt-secret): an HMAC secret of at
        /// least 32 characters (HS256/384/512), a PEM public key (RSA: RS256/384/512, PS256/384/512;
        /// EC: ES256/384), or a JWK or JWKS document whose keys tokens select by kid; `@path`
        /// reads it from a file. Not set: a request with a token is refused and every request
        /// runs as anon_role.
        jwt_secret: Option<String> = None, sample "a-secret-of-at-least-thirty-two-characters";
        /// jwt_secret is base64 (PostgREST's jwt-secret-is-base64).
        jwt_secret_is_base64: bool = false;
        /// The audience tokens must name in aud (PostgREST's jwt-aud). Not set: not checked.
        jwt_aud: Option<String> = None, sample "my-api";
        /// Where the token's role is (PostgREST's jwt-role-claim-key), e.g. `.role`,
        /// `.app.role`, `."https://example.com/role"`, `.roles[0]`.
        jwt_role_claim_key: String = ".role".to_string();
        /// The origins browsers may call the API from (PostgREST's server-cors-allowed-origins);
        /// empty: any origin, answered with `Access-Control-Allow-Origin: *`. Preflights are
        /// answered before authentication and cached for a day.
        cors_allowed_origins: Vec<String> = Vec::new();
        /// A function called in every request's transaction after its role and settings
        /// (PostgREST's db-pre-request), `name` or `schema.name`: it may raise to refuse the
        /// request, and the response.headers / response.status it sets shape the answer.
        pre_request: Option<String> = None, sample "public.check_request";
        /// Seconds a verified token's role and claims are kept, so the same token skips its
        /// signature check (PostgREST's jwt-cache-max-lifetime); never past the token's exp.
        /// 0: every request verifies its token.
        jwt_cache_max_lifetime: u64 = 0;
        /// Schemas each request searches after its own (PostgREST's db-extra-search-path): where
        /// extensions' types, operators and functions live (citext's case-insensitive =, ltree,
        /// PostGIS). Their functions over an exposed table's row type are its computed fields
        /// too. Empty: the request's schema alone.
        extra_search_path: Vec<String> = rest_defaults().extra_search_path;
        /// Settings a function's SET clause gives the whole transaction of a call, set before
        /// it runs (PostgREST's db-hoisted-tx-settings), such as a function's own
        /// statement_timeout; other SET clauses apply inside the function only.
        hoisted_tx_settings: Vec<String> = rest_defaults().hoisted_tx_settings;
    }

    [resp] RespSection {
        /// Address of the Redis protocol gate. Not set: no Redis gate.
        listen: Option<SocketAddr> = None, flag "resp", sample "127.0.0.1:6380";
        /// Password Redis clients must give with AUTH or HELLO (Redis's requirepass): the
        /// `default` user's password.
        password: Option<String> = None, sample "secret";
        /// Redis's aclfile: users, one `user <name> <rules>` line each in Redis's ACL file
        /// format, loaded at start (a missing or bad file stops serve) and by ACL LOAD, written
        /// by ACL SAVE. Not with users.
        aclfile: Option<PathBuf> = None, sample "/etc/sluice/users.acl";
        /// Users as Redis's `user` directives, each `<name> <rules>` in ACL SETUSER's syntax,
        /// e.g. "app on >secret ~app:* +@read +@write -@dangerous". Not with aclfile. In the
        /// variable, users are separated by commas.
        users: Vec<String> = Vec::new(), sample "app on >secret ~app:* &app:* +@all -@dangerous";
        /// Threads serving Redis connections, each with its own single-threaded runtime that owns
        /// its connections (Redis's model; the most CPU-efficient on 2 cores); 0 serves them on
        /// the main runtime.
        io_threads: usize = 1;
        /// Microseconds a connection thread keeps polling its sockets after its last request
        /// before it sleeps: a request that lands meanwhile is taken at once, without a
        /// cross-core wake-up. 0 never polls; an idle server sleeps at once; the default is 50,
        /// and 0 on a single-core machine.
        busy_poll_us: Option<u64> = None, sample "50";
        /// Where the keyspace lives: "memory" (lost at restart, as Redis without persistence) or
        /// "postgres" (kept in tables of `schema`, loaded before the gate opens, written by a
        /// group-commit writer; see docs/redis-store.md).
        store: RespStore = RespStore::Memory;
        /// The schema of the Redis store's tables and views (store = "postgres"). One Sluice
        /// owns a schema at a time; a second one pointed at it refuses to start.
        schema: String = "sluice_redis".to_string();
        /// When changes reach PostgreSQL (store = "postgres"), as Redis's appendfsync: "always"
        /// answers a write once its transaction committed (many clients share one commit),
        /// "everysec" answers at once and commits within about a second, "no" every few
        /// seconds.
        appendfsync: sluice_resp::durable::AppendFsync = sluice_resp::durable::AppendFsync::EverySec;
        /// With store = "postgres": follow the schema's owner read-only instead of owning it.
        /// The keyspace is loaded as at start, then kept current from the owner's
        /// notifications (eventually consistent: a commit behind, plus a read); writes are
        /// refused with Redis's READONLY error. Any number of followers; no owner lock.
        follow: bool = false;
        /// TLS on the Redis gate (Redis 6's tls-port; clients connect with `redis-cli --tls
        /// --cacert ca.crt`, redis-py `ssl=True`): the PEM certificate chain (the server's first),
        /// with key. Client certificates are not asked for (Redis's tls-auth-clients no). Not set:
        /// plain TCP. Both files are read again on SIGHUP; open connections keep what they began
        /// with.
        cert: Option<String> = None, sample "/etc/sluice/tls/server.crt";
        /// TLS on the Redis gate: the PEM private key (PKCS#8, PKCS#1 or SEC1) of cert.
        key: Option<String> = None, sample "/etc/sluice/tls/server.key";
    }

    [influx] InfluxSection {
        /// Mount the InfluxDB write API (/write, /api/v2/write, /ping, /health, /query) on the HTTP
        /// gate.
        enabled: bool = true;
        /// Tokens clients may send (Authorization: Token ...), comma-separated; empty: none.
        token: Vec<String> = Vec::new();
        /// Also accept a bearer JWT verified with the REST API's jwt_secret in place of a token; requests
        /// then need one or the other.
        jwt: bool = false;
        /// Store a measurement's tags in one jsonb column instead of a column per tag.
        tags_as_jsonb: bool = false;
        /// Databases (schemas) clients may write into, comma-separated. Empty: any name except
        /// public, information_schema and pg_*, into schemas the write API creates; a listed
        /// name may be a schema that exists already. Writes go only into tables Sluice created.
        databases: Vec<String> = Vec::new();
        /// Most columns (time included) a measurement's table may reach through writes; points
        /// that would add more are rejected with a 4xx (PostgreSQL's own limit is 1600).
        max_columns_per_table: usize = sluice_influx::DEFAULT_MAX_COLUMNS_PER_TABLE;
        /// Write the valid points of a body with bad lines and answer InfluxDB's "partial
        /// write" error naming the rejected ones; false: a body is written whole or not at all.
        accept_partial: bool = true;
        /// A point written again (same measurement, tags and time to the microsecond): "merge"
        /// updates the row, fields merged, the new non-null values winning (as InfluxDB); "keep"
        /// appends another row. Applies to tables as they are created.
        duplicates: DuplicatesMode = DuplicatesMode::Merge;
        /// How long points are kept, as InfluxDB writes durations (30d, 2w, 36h; INF or 0:
        /// forever). With one, a measurement's table is made of daily partitions (created ahead
        /// of the data, dropped whole when older); points already older are refused.
        retention: Retention = Retention(None);
        /// Retention of given databases, overriding retention: telegraf = "7d", or
        /// telegraf=7d,metrics=INF.
        database_retention: RetentionMap = RetentionMap::default();
    }

    [runtime] RuntimeSection {
        /// Worker threads of the main runtime (default: one per core, or 1 when only the Redis
        /// gate runs with its own connection threads).
        threads: Option<usize> = None, flag "threads", sample "2";
    }
}

/// What a connection given back to the pool forgets before its next request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResetMode {
    /// Session state too (settings, temporary tables, listens, advisory locks, held cursors):
    /// safe for any SQL, at the price of a reset in front of the next statement.
    Session,
    /// Only an open transaction (rolled back): for views whose SQL changes no session state.
    Transaction,
}

impl Choice for ResetMode {
    const WORDS: &'static [(&'static str, ResetMode)] = &[
        ("session", ResetMode::Session),
        ("transaction", ResetMode::Transaction),
    ];
}

choice_setting!(ResetMode);

impl Choice for sluice_rest::TxEnd {
    const WORDS: &'static [(&'static str, sluice_rest::TxEnd)] = &[
        ("commit", sluice_rest::TxEnd::Commit),
        (
            "commit-allow-override",
            sluice_rest::TxEnd::CommitAllowOverride,
        ),
        ("rollback", sluice_rest::TxEnd::Rollback),
        (
            "rollback-allow-override",
            sluice_rest::TxEnd::RollbackAllowOverride,
        ),
    ];
}

choice_setting!(sluice_rest::TxEnd);

/// Where the Redis gate keeps its keyspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RespStore {
    /// In memory only.
    Memory,
    /// In PostgreSQL tables, served from memory.
    Postgres,
}

impl Choice for RespStore {
    const WORDS: &'static [(&'static str, RespStore)] = &[
        ("memory", RespStore::Memory),
        ("postgres", RespStore::Postgres),
    ];
}

choice_setting!(RespStore);

impl Choice for sluice_resp::durable::AppendFsync {
    const WORDS: &'static [(&'static str, sluice_resp::durable::AppendFsync)] = &[
        ("always", sluice_resp::durable::AppendFsync::Always),
        ("everysec", sluice_resp::durable::AppendFsync::EverySec),
        ("no", sluice_resp::durable::AppendFsync::No),
    ];
}

choice_setting!(sluice_resp::durable::AppendFsync);

/// What a point written again does in the Influx write API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DuplicatesMode {
    /// One row per series and time.
    Merge,
    /// A row per point.
    Keep,
}

impl Choice for DuplicatesMode {
    const WORDS: &'static [(&'static str, DuplicatesMode)] = &[
        ("merge", DuplicatesMode::Merge),
        ("keep", DuplicatesMode::Keep),
    ];
}

choice_setting!(DuplicatesMode);

/// A retention (`None`: forever), read by [`sluice_influx::parse_retention`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention(pub Option<Duration>);

fn retention_text(retention: Option<Duration>) -> String {
    match retention {
        None => "INF".to_owned(),
        Some(d) if d.as_secs() % (7 * 86_400) == 0 => format!("{}w", d.as_secs() / (7 * 86_400)),
        Some(d) if d.as_secs() % 86_400 == 0 => format!("{}d", d.as_secs() / 86_400),
        Some(d) if d.as_secs() % 3_600 == 0 => format!("{}h", d.as_secs() / 3_600),
        Some(d) => format!("{}s", d.as_secs()),
    }
}

impl SettingValue for Retention {
    const VALUE_NAME: &'static str = "DURATION";
    fn parse_text(text: &str) -> Result<Retention, String> {
        sluice_influx::parse_retention(text).map(Retention)
    }
    fn to_toml(&self) -> Option<toml::Value> {
        Some(toml::Value::String(retention_text(self.0)))
    }
}

/// Retentions by database name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RetentionMap(pub BTreeMap<String, Option<Duration>>);

impl SettingValue for RetentionMap {
    const VALUE_NAME: &'static str = "DB=DURATION,...";
    fn parse_text(text: &str) -> Result<RetentionMap, String> {
        let pairs = BTreeMap::<String, String>::parse_text(text)?;
        RetentionMap::of(pairs)
    }
    fn from_native(value: &toml::Value) -> Result<RetentionMap, String> {
        RetentionMap::of(BTreeMap::<String, String>::from_native(value)?)
    }
    fn to_toml(&self) -> Option<toml::Value> {
        Some(toml::Value::Table(
            self.0
                .iter()
                .map(|(db, r)| (db.clone(), toml::Value::String(retention_text(*r))))
                .collect(),
        ))
    }
}

impl RetentionMap {
    fn of(pairs: BTreeMap<String, String>) -> Result<RetentionMap, String> {
        pairs
            .into_iter()
            .map(|(db, text)| {
                let retention = sluice_influx::parse_retention(&text)
                    .map_err(|error| format!("database {db:?}: {error}"))?;
                Ok((db, retention))
            })
            .collect::<Result<_, String>>()
            .map(RetentionMap)
    }
}

impl Settings {
    /// The database URL, when one is given (else the embedded PostgreSQL runs).
    pub fn database_url(&self) -> Option<&str> {
        Some(self.database.url.as_str()).filter(|url| !url.is_empty())
    }

    /// How writes report their commit position (`Sluice-Lsn`): on when reads may go to
    /// replicas (`replicas` given), the cookie with `lsn_cookie`, kept for the allowed lag
    /// (past it, every healthy replica has replayed the position anyway).
    pub fn lsn_options(&self, replicas: bool) -> sluice_http::lsn::LsnOptions {
        let keep = self.database.max_replica_lag.0 + Duration::from_secs(1);
        sluice_http::lsn::LsnOptions {
            report: replicas,
            cookie: (replicas && self.database.lsn_cookie).then_some(keep),
        }
    }

    /// The pool's settings.
    pub fn pool_settings(&self) -> sluice_pg::PoolSettings {
        let p = &self.pool;
        let mut pool = sluice_pg::PoolSettings::default();
        pool.set_max_size(p.size.max(1))
            .set_min_idle(p.min_idle)
            .set_acquire_timeout(p.acquire_timeout.0)
            .set_max_waiting(p.max_waiting)
            .set_max_lifetime(p.max_lifetime.never_if_zero())
            .set_idle_timeout(p.idle_timeout.never_if_zero())
            .set_reset(match p.reset {
                ResetMode::Session => sluice_pg::pool::Reset::Session,
                ResetMode::Transaction => sluice_pg::pool::Reset::TransactionOnly,
            });
        pool
    }

    /// The HTTP server's options.
    pub fn server_options(&self) -> sluice_http::ServerOptions {
        let h = &self.http;
        sluice_http::ServerOptions {
            body_limit: h.body_limit.bytes(),
            body_timeout: h.body_timeout.0,
            min_body_rate: h.min_body_rate,
            min_body_rate_grace: h.min_body_rate_grace.0,
            request_timeout: h.request_timeout.0,
            header_timeout: h.header_timeout.0,
            keep_alive_timeout: h.keep_alive_timeout.0,
            max_connections: h.max_connections,
            max_inflight_bytes: h.max_inflight_bytes.bytes(),
            inflight_wait: h.inflight_wait.0,
            keep_alive: h.keep_alive,
            shutdown_timeout: h.shutdown_timeout.0,
            access_log: h.access_log,
            tls: None,
        }
    }

    /// The HTTP gate's TLS configuration, when `[http] cert` and `key` are given.
    pub fn http_tls(&self) -> anyhow::Result<Option<std::sync::Arc<sluice_tls::Tls>>> {
        listener_tls("http", &self.http.cert, &self.http.key, sluice_http::ALPN)
    }

    /// The Redis gate's TLS configuration, when `[resp] cert` and `key` are given.
    pub fn resp_tls(&self) -> anyhow::Result<Option<std::sync::Arc<sluice_tls::Tls>>> {
        listener_tls("resp", &self.resp.cert, &self.resp.key, &[])
    }

    /// Where the HTTP gate listens, when it runs: always, unless the Redis gate was asked for
    /// alone (it needs no database).
    pub fn http_listen(&self) -> Option<SocketAddr> {
        let wants_http = self.given.contains("http.listen")
            || !self.views.is_empty()
            || self.given.contains("influx.enabled") && self.influx.enabled
            || self.resp.listen.is_none();
        wants_http.then_some(self.http.listen)
    }

    /// The Redis gate's configuration.
    pub fn resp_config(&self) -> sluice_resp::Config {
        let defaults = sluice_resp::Config::default();
        sluice_resp::Config {
            password: self.resp.password.clone().filter(|p| !p.is_empty()),
            aclfile: self.resp.aclfile.clone(),
            users: self.resp.users.clone(),
            io_threads: self.resp.io_threads,
            busy_poll: self
                .resp
                .busy_poll_us
                .map_or(defaults.busy_poll, Duration::from_micros),
            ..defaults
        }
    }

    /// The Redis store's configuration, when the keyspace is kept in PostgreSQL.
    pub fn resp_store_config(&self) -> Option<sluice_resp_store::StoreConfig> {
        (self.resp.listen.is_some() && self.resp.store == RespStore::Postgres).then(|| {
            sluice_resp_store::StoreConfig {
                schema: self.resp.schema.clone(),
                appendfsync: self.resp.appendfsync,
                follow: self.resp.follow,
                databases: self.resp_config().databases,
                ..sluice_resp_store::StoreConfig::default()
            }
        })
    }

    /// The keys bearer tokens are verified with (`[rest] jwt_secret` and its companions), for
    /// the REST API, views that require roles and the Influx write API.
    pub fn jwt_config(
        &self,
    ) -> anyhow::Result<Option<std::sync::Arc<sluice_http::jwt::JwtConfig>>> {
        let r = &self.rest;
        Ok(match r.jwt_secret.as_deref().filter(|s| !s.is_empty()) {
            Some(secret) => Some(std::sync::Arc::new(sluice_http::jwt::JwtConfig::new(
                secret,
                r.jwt_secret_is_base64,
                r.jwt_aud.clone().filter(|a| !a.is_empty()),
                &r.jwt_role_claim_key,
            )?)),
            None => None,
        })
    }

    /// The REST API's configuration.
    pub fn rest_config(&self) -> anyhow::Result<sluice_rest::RestConfig> {
        let r = &self.rest;
        let jwt = self.jwt_config()?;
        Ok(sluice_rest::RestConfig {
            schemas: r.schemas.clone(),
            anon_role: r.anon_role.clone().filter(|role| !role.is_empty()),
            cors_allowed_origins: r.cors_allowed_origins.clone(),
            pre_request: r.pre_request.clone().filter(|f| !f.is_empty()),
            jwt_cache_max_lifetime: r.jwt_cache_max_lifetime,
            extra_search_path: r.extra_search_path.clone(),
            hoisted_tx_settings: r.hoisted_tx_settings.clone(),
            max_rows: r.max_rows,
            tx_end: r.tx_end,
            aggregates_enabled: r.aggregates_enabled,
            plan_enabled: r.plan_enabled,
            openapi: r.openapi,
            jwt,
        })
    }

    /// The Influx write API's configuration.
    pub fn influx_config(&self) -> sluice_influx::InfluxConfig {
        sluice_influx::InfluxConfig {
            tags_as_jsonb: self.influx.tags_as_jsonb,
            tokens: self.influx.token.clone(),
            jwt: None,
            databases: self.influx.databases.clone(),
            max_columns_per_table: self.influx.max_columns_per_table,
            accept_partial: self.influx.accept_partial,
            duplicates: match self.influx.duplicates {
                DuplicatesMode::Merge => sluice_influx::Duplicates::Merge,
                DuplicatesMode::Keep => sluice_influx::Duplicates::Keep,
            },
            retention: self.influx.retention.0,
            database_retention: self.influx.database_retention.0.clone(),
        }
    }
}

/// A listener's TLS from its section's `cert` and `key` (both or neither).
fn listener_tls(
    section: &str,
    cert: &Option<String>,
    key: &Option<String>,
    alpn: &[&[u8]],
) -> anyhow::Result<Option<std::sync::Arc<sluice_tls::Tls>>> {
    match (cert, key) {
        (None, None) => Ok(None),
        (Some(cert), Some(key)) => Ok(Some(sluice_tls::Tls::from_files(
            std::path::Path::new(cert),
            std::path::Path::new(key),
            alpn,
        )?)),
        _ => anyhow::bail!("[{section}] cert and key go together: give both, or neither"),
    }
}
