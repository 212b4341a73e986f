//! Test helpers: a Sluice Redis gate over a store in a schema of the test database.

#![allow(dead_code)]

use std::time::Duration;

use sluice_resp::durable::AppendFsync;
use sluice_resp_store::{PgStore, StoreConfig};

/// A Redis gate on port 0 whose keyspace lives in `schema`.
pub struct Server {
    pub port: u16,
    stop: tokio::sync::oneshot::Sender<()>,
    gate: tokio::task::JoinHandle<()>,
    pub store: PgStore,
}

pub fn pg_config() -> sluice_pg::Config {
    sluice_pg::Config::parse(sluice_embedded::testkit::url()).expect("test database URL")
}

pub fn store_config(schema: &str, appendfsync: AppendFsync) -> StoreConfig {
    StoreConfig {
        schema: schema.to_string(),
        appendfsync,
        write_timeout: Duration::from_secs(5),
        ..StoreConfig::default()
    }
}

impl Server {
    pub async fn start(schema: &str, appendfsync: AppendFsync) -> Server {
        Self::start_with(store_config(schema, appendfsync)).await
    }

    pub async fn start_with(config: StoreConfig) -> Server {
        Self::start_on(&pg_config(), config).await
    }

    /// A server whose store reaches PostgreSQL through `pg`.
    pub async fn start_on(pg: &sluice_pg::Config, config: StoreConfig) -> Server {
        let store = PgStore::open(pg, config).await.expect("open the store");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let gate_config = sluice_resp::Config {
            persistence: Some(store.persistence()),
            ..sluice_resp::Config::default()
        };
        let gate = tokio::spawn(async move {
            sluice_resp::run(listener, gate_config, async {
                let _ = stopped.await;
            })
            .await
            .expect("gate");
        });
        Server {
            port,
            stop,
            gate,
            store,
        }
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    pub async fn client(&self) -> redis::aio::MultiplexedConnection {
        redis::Client::open(self.url())
            .expect("client")
            .get_multiplexed_async_connection()
            .await
            .expect("connect")
    }

    /// Stops the gate, then the store after its last flush.
    pub async fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.gate.await;
        self.store.close().await;
    }

    /// Stops the gate and drops the store without a last flush, as a crash would.
    pub async fn crash(self) {
        self.store.abandon();
        let _ = self.stop.send(());
        let _ = self.gate.await;
    }
}

/// A unique schema name for one test.
pub fn schema(prefix: &str) -> String {
    sluice_embedded::testkit::unique(prefix)
}

/// The first column of the first row of `sql`, as text.
pub async fn value(sql: &str) -> Option<String> {
    sluice_embedded::testkit::value(sql).await
}

/// Every row of `sql`, fields as text.
pub async fn rows(sql: &str) -> Vec<Vec<Option<String>>> {
    sluice_embedded::testkit::rows(sql).await
}

/// Runs a command and reads its reply as `T`.
/// A key's type and its value as a client reads it, the same whatever order a hash or set
/// was loaded in (for comparing two servers, or one before and after a restart).
pub async fn content(c: &mut redis::aio::MultiplexedConnection, key: &str) -> (String, String) {
    let kind: String = q(c, &["TYPE", key]).await;
    let value = match kind.as_str() {
        "string" => format!("{:?}", q::<Vec<u8>>(c, &["GET", key]).await),
        "list" => format!(
            "{:?}",
            q::<Vec<String>>(c, &["LRANGE", key, "0", "-1"]).await
        ),
        "hash" => {
            let mut pairs: Vec<(String, String)> = q(c, &["HGETALL", key]).await;
            pairs.sort();
            format!("{pairs:?}")
        }
        "set" => {
            let mut members: Vec<String> = q(c, &["SMEMBERS", key]).await;
            members.sort();
            format!("{members:?}")
        }
        "zset" => format!(
            "{:?}",
            q::<Vec<(String, String)>>(c, &["ZRANGE", key, "0", "-1", "WITHSCORES"]).await
        ),
        "stream" => format!(
            "{:?} groups {:?}",
            q::<redis::Value>(c, &["XRANGE", key, "-", "+"]).await,
            q::<redis::Value>(c, &["XINFO", "GROUPS", key]).await
        ),
        _ => String::new(),
    };
    (kind, value)
}

pub async fn q<T: redis::FromRedisValue>(
    c: &mut redis::aio::MultiplexedConnection,
    args: &[&str],
) -> T {
    let mut cmd = redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    cmd.query_async(c)
        .await
        .unwrap_or_else(|e| panic!("{args:?}: {e}"))
}
