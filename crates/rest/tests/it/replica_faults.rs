//! Faults under load, on a primary with a streaming replica: the replica restarted (reads go on,
//! answered by the primary meanwhile), the primary stopped (reads go on from the replica,
//! writes answer 503 with `Retry-After` in PostgREST's error shape) and started again (writes
//! resume). No request hangs, and every write acknowledged is on the primary and, once
//! replayed, on the replica.
#![allow(clippy::unwrap_used)]

use crate::common::{Answer, try_send};
use sluice_embedded::{ClusterOptions, private_cluster};
use sluice_http::{Router, ServerOptions};
use sluice_pg::pool::{ReadPools, ReplicaState};
use sluice_pg::{Connection, Pool, PoolSettings};
use sluice_rest::api::{RestApi, SchemaSource};
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Longest any one request may take before the test calls it a hang.
const HANG: Duration = Duration::from_secs(30);

/// What the load saw.
#[derive(Default)]
struct Seen {
    /// Ids whose POST was answered 201.
    acknowledged: BTreeSet<u32>,
    /// GETs answered 200, and the others (status and body).
    reads_ok: u64,
    reads_failed: Vec<String>,
    writes_ok: u64,
    /// Writes answered 503/504 with Retry-After in PostgREST's shape.
    writes_refused: u64,
    /// Any other answer to a write.
    writes_odd: Vec<String>,
}

async fn request(address: SocketAddr, method: &str, path: &str, body: String) -> Answer {
    let headers = [("content-type", "application/json")];
    let sent = try_send(address, method, path, &headers, body.into_bytes(), false);
    match tokio::time::timeout(HANG, sent).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(error)) => panic!("{method} {path}: {error}"),
        Err(_) => panic!("{method} {path} hung for {HANG:?}"),
    }
}

/// One client: a write, a point read (pipelined path), a streamed read, over and over.
async fn client(
    address: SocketAddr,
    next: Arc<AtomicU32>,
    stop: Arc<AtomicBool>,
    seen: Arc<Mutex<Seen>>,
) {
    while !stop.load(Ordering::Relaxed) {
        let id = next.fetch_add(1, Ordering::Relaxed);
        let written = request(
            address,
            "POST",
            "/items",
            format!(r#"{{"id": {id}, "name": "n{id}"}}"#),
        )
        .await;
        {
            let mut seen = seen.lock().unwrap();
            match written.status {
                201 => {
                    seen.acknowledged.insert(id);
                    seen.writes_ok += 1;
                }
                503 | 504
                    if written.headers.contains_key("retry-after")
                        && written.json()["code"]
                            .as_str()
                            .is_some_and(|c| c.starts_with("PGRST"))
                        && written.json()["message"].is_string() =>
                {
                    seen.writes_refused += 1
                }
                _ => seen.writes_odd.push(format!(
                    "{} {}",
                    written.status,
                    String::from_utf8_lossy(&written.body)
                )),
            }
        }
        let low = id.saturating_sub(50).max(1);
        for (path, accept) in [
            (format!("/items?id=eq.{low}"), "application/json"),
            ("/items?id=lt.20&order=id".to_owned(), "text/csv"),
        ] {
            let headers = [("accept", accept)];
            let sent = try_send(address, "GET", &path, &headers, Vec::new(), false);
            let answer = match tokio::time::timeout(HANG, sent).await {
                Ok(Ok(answer)) => answer,
                Ok(Err(error)) => panic!("GET {path}: {error}"),
                Err(_) => panic!("GET {path} hung for {HANG:?}"),
            };
            let mut seen = seen.lock().unwrap();
            if answer.status == 200 {
                seen.reads_ok += 1;
            } else {
                seen.reads_failed.push(format!(
                    "GET {path}: {} {}",
                    answer.status,
                    String::from_utf8_lossy(&answer.body)
                ));
            }
        }
    }
}

struct Load {
    stop: Arc<AtomicBool>,
    seen: Arc<Mutex<Seen>>,
    clients: Vec<tokio::task::JoinHandle<()>>,
}

impl Load {
    fn start(address: SocketAddr, next: &Arc<AtomicU32>, clients: usize) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let seen = Arc::new(Mutex::new(Seen::default()));
        let clients = (0..clients)
            .map(|_| tokio::spawn(client(address, next.clone(), stop.clone(), seen.clone())))
            .collect();
        Load {
            stop,
            seen,
            clients,
        }
    }

    async fn finish(self) -> Seen {
        self.stop.store(true, Ordering::Relaxed);
        for client in self.clients {
            client.await.unwrap();
        }
        std::mem::take(&mut *self.seen.lock().unwrap())
    }
}

async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{what}: not after 60 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn ids_on(url: &str) -> BTreeSet<u32> {
    let mut conn = Connection::connect(url).await.unwrap();
    let rows = conn.query("SELECT id::text FROM items", &[]).await.unwrap();
    rows.iter()
        .map(|row| {
            std::str::from_utf8(row.raw(0).unwrap())
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restarts_under_load_lose_no_acknowledged_write_and_never_hang() {
    let Some(mut cluster) = private_cluster(
        "rest_replica_faults",
        ClusterOptions::temporary().tls(false).test_roles(false),
    ) else {
        return;
    };
    let (config, cache) = crate::common::set_up_schema(
        &cluster.url(),
        "CREATE TABLE items (id int PRIMARY KEY, name text)",
    )
    .await;
    cluster.start_replicas(1).unwrap();
    let primary = Pool::connect(&cluster.url(), PoolSettings::new()).unwrap();
    let pools = ReadPools::connect(
        primary.clone(),
        &[cluster.replicas()[0].url()],
        PoolSettings::new(),
        Duration::from_secs(10),
    )
    .await
    .unwrap();
    let api = RestApi::new(primary.clone(), config, SchemaSource::Fixed(cache))
        .with_replicas(pools.clone());
    let mut router = Router::new();
    router.mount("", Arc::new(api));
    let server = crate::common::Listening::serve(router, ServerOptions::default())
        .await
        .unwrap();
    let address = server.address;
    let next = Arc::new(AtomicU32::new(1));
    let replica = pools.replicas()[0].clone();
    let mut acknowledged = BTreeSet::new();

    // The replica restarted under load: every read and write is answered (reads by the primary
    // while the replica is away).
    let load = Load::start(address, &next, 3);
    tokio::time::sleep(Duration::from_millis(500)).await;
    cluster.replicas()[0].stop_server().unwrap();
    until("the replica taken out", || {
        replica.state() == ReplicaState::Unreachable
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    cluster.replicas()[0].start_server().unwrap();
    until("the replica back", || {
        replica.state() == ReplicaState::Healthy
    })
    .await;
    let served = replica.served();
    until("reads on the replica again", || {
        replica.served() > served + 5
    })
    .await;
    let seen = load.finish().await;
    assert!(seen.reads_failed.is_empty(), "{:?}", seen.reads_failed);
    assert!(seen.writes_odd.is_empty(), "{:?}", seen.writes_odd);
    eprintln!(
        "replica restart: {} writes, {} reads answered",
        seen.writes_ok, seen.reads_ok
    );
    assert_eq!(seen.writes_refused, 0, "the primary was up");
    assert!(seen.writes_ok > 0 && seen.reads_ok > 0);
    acknowledged.extend(seen.acknowledged);

    // The primary stopped under load: reads go on (the replica), writes are refused with 503
    // and Retry-After; started again, writes resume.
    let load = Load::start(address, &next, 3);
    tokio::time::sleep(Duration::from_millis(500)).await;
    cluster.stop_server().unwrap();
    let refused_from = next.load(Ordering::Relaxed);
    until("writes refused", || {
        next.load(Ordering::Relaxed) > refused_from + 10
    })
    .await;
    cluster.start_server().unwrap();
    let resumed_from = next.load(Ordering::Relaxed);
    let seen_now = load.seen.clone();
    until("writes accepted again", || {
        seen_now
            .lock()
            .unwrap()
            .acknowledged
            .range(resumed_from..)
            .count()
            > 10
    })
    .await;
    let seen = load.finish().await;
    assert!(seen.reads_failed.is_empty(), "{:?}", seen.reads_failed);
    assert!(seen.writes_odd.is_empty(), "{:?}", seen.writes_odd);
    eprintln!(
        "primary restart: {} writes acknowledged, {} refused with 503, {} reads answered",
        seen.writes_ok, seen.writes_refused, seen.reads_ok
    );
    assert!(seen.writes_refused >= 10, "refused {}", seen.writes_refused);
    acknowledged.extend(seen.acknowledged);

    // Nothing acknowledged is lost, on the primary nor, once replayed, on the replica.
    let on_primary = ids_on(&cluster.url()).await;
    let missing: Vec<_> = acknowledged.difference(&on_primary).collect();
    assert!(missing.is_empty(), "acknowledged but missing: {missing:?}");
    let replica_url = cluster.replicas()[0].url();
    let started = Instant::now();
    loop {
        let on_replica = ids_on(&replica_url).await;
        if on_replica == on_primary {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the replica never caught up"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    server.stop().await;
    pools.close().await;
    primary.close().await;
}
