//! PostgreSQL out of reach (a proxy in front of the test database cut and restored): reads keep
//! working, `everysec` serves writes until its bound of unsaved keys and then refuses them,
//! `always` answers errors instead of unconfirmed acknowledgements, and the queue drains after.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use crate::common::{Server, pg_config, q, schema, store_config, value};
use sluice_resp::durable::AppendFsync;

/// A TCP proxy to the test database that can be cut (every connection closed, new ones refused).
struct Proxy {
    port: u16,
    up: watch::Sender<bool>,
}

impl Proxy {
    async fn start(target_port: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let (up, up_rx) = watch::channel(true);
        tokio::spawn(async move {
            loop {
                let Ok((mut client, _)) = listener.accept().await else {
                    return;
                };
                if !*up_rx.borrow() {
                    continue; // dropped: refused
                }
                let mut down = up_rx.clone();
                tokio::spawn(async move {
                    let Ok(mut server) = TcpStream::connect(("127.0.0.1", target_port)).await
                    else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                        _ = down.wait_for(|up| !*up) => {}
                    }
                });
            }
        });
        Proxy { port, up }
    }

    fn cut(&self) {
        let _ = self.up.send(false);
    }

    fn restore(&self) {
        let _ = self.up.send(true);
    }

    /// The test database's settings, reached through this proxy.
    fn pg(&self) -> sluice_pg::Config {
        let mut pg = pg_config();
        pg.port(self.port);
        pg
    }
}

fn target_port() -> u16 {
    pg_config()
        .targets()
        .first()
        .map(|t| t.port)
        .expect("a target")
}

async fn info(c: &mut redis::aio::MultiplexedConnection) -> String {
    q(c, &["INFO", "persistence"]).await
}

async fn wait_until(what: &str, timeout: Duration, mut check: impl AsyncFnMut() -> bool) {
    let started = Instant::now();
    while !check().await {
        assert!(
            started.elapsed() < timeout,
            "{what}: not within {timeout:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everysec_serves_until_its_bound_then_refuses_writes_and_drains_after() {
    let proxy = Proxy::start(target_port()).await;
    let schema = schema("rs_fault_everysec");
    let mut config = store_config(&schema, AppendFsync::EverySec);
    config.max_unsaved_keys = 20;
    let server = Server::start_on(&proxy.pg(), config).await;
    let mut c = server.client().await;
    let _: () = q(&mut c, &["SET", "before", "1"]).await;
    let _: String = q(&mut c, &["SAVE"]).await;

    proxy.cut();
    // Under the bound, writes are answered while the writer fails.
    for i in 0..10 {
        let _: () = q(&mut c, &["SET", &format!("during:{i}"), "v"]).await;
    }
    wait_until("the writer notices", Duration::from_secs(10), async || {
        info(&mut c).await.contains("aof_last_write_status:err")
    })
    .await;
    // Past the bound, writes are refused; reads go on.
    let refused = Arc::new(AtomicBool::new(false));
    let mut accepted = 10;
    for i in 10..200 {
        let r: redis::RedisResult<()> = redis::cmd("SET")
            .arg(format!("during:{i}"))
            .arg("v")
            .query_async(&mut c)
            .await;
        match r {
            Ok(()) => accepted += 1,
            Err(e) => {
                assert!(e.to_string().contains("MISCONF"), "{e}");
                refused.store(true, Ordering::Relaxed);
                break;
            }
        }
    }
    assert!(refused.load(Ordering::Relaxed), "writes never refused");
    assert!(
        accepted <= 21,
        "{accepted} writes accepted past a bound of 20 unsaved keys"
    );
    let got: String = q(&mut c, &["GET", "during:0"]).await;
    assert_eq!(got, "v", "reads are served while PostgreSQL is away");

    proxy.restore();
    wait_until("the queue drains", Duration::from_secs(15), async || {
        let info = info(&mut c).await;
        info.contains("sluice_queue_keys:0\r") && info.contains("aof_last_write_status:ok")
    })
    .await;
    let _: () = q(&mut c, &["SET", "after", "1"]).await;
    let _: String = q(&mut c, &["SAVE"]).await;
    let count = value(&format!(
        "SELECT count(*) FROM \"{schema}\".strings WHERE key_text LIKE 'during:%'"
    ))
    .await;
    assert_eq!(count.as_deref(), Some(&*accepted.to_string()));
    drop(c);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_answers_errors_while_postgres_is_away_and_recovers() {
    let proxy = Proxy::start(target_port()).await;
    let schema = schema("rs_fault_always");
    let mut config = store_config(&schema, AppendFsync::Always);
    config.write_timeout = Duration::from_millis(1500);
    let server = Server::start_on(&proxy.pg(), config).await;
    let mut c = server.client().await;
    let _: () = q(&mut c, &["SET", "before", "1"]).await;

    proxy.cut();
    let started = Instant::now();
    let r: redis::RedisResult<()> = redis::cmd("SET")
        .arg("unconfirmed")
        .arg("v")
        .query_async(&mut c)
        .await;
    let e = r.expect_err("a write that cannot be committed is not acknowledged");
    assert!(e.to_string().contains("MISCONF"), "{e}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the error came after {:?}",
        started.elapsed()
    );
    let got: String = q(&mut c, &["GET", "before"]).await;
    assert_eq!(got, "1", "reads are served while PostgreSQL is away");

    proxy.restore();
    wait_until(
        "writes are accepted again",
        Duration::from_secs(15),
        async || {
            let r: redis::RedisResult<()> = redis::cmd("SET")
                .arg("after")
                .arg("v")
                .query_async(&mut c)
                .await;
            r.is_ok()
        },
    )
    .await;
    // Acknowledged under always: in the table now, without any further flush.
    let after = value(&format!(
        "SELECT value_text FROM \"{schema}\".strings WHERE key_text = 'after'"
    ))
    .await;
    assert_eq!(after.as_deref(), Some("v"));
    drop(c);
    server.stop().await;
}
