//! `sluice serve` with the Redis keyspace in PostgreSQL: killed with SIGKILL under a write load
//! with `appendfsync always`, every acknowledged write is in the tables and comes back at the
//! next start; SHUTDOWN under `everysec` commits the last changes before the process exits; a
//! second `sluice serve` with `SLUICE_RESP_FOLLOW=true` follows the first read-only.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::serve_support::Running;

/// `sluice serve` with only the Redis gate, its store in `schema` under `appendfsync always`.
fn serve_redis(schema: &str) -> Child {
    serve_redis_with(schema, "always")
}

/// `sluice serve` with only the Redis gate, its store in `schema`, and a clean environment.
fn serve_redis_with(schema: &str, appendfsync: &str) -> Child {
    serve_redis_env(schema, appendfsync, &[])
}

/// [`serve_redis_with`] with more variables set.
fn serve_redis_env(schema: &str, appendfsync: &str, env: &[(&str, &str)]) -> Child {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sluice"));
    command.arg("serve");
    for (name, _) in std::env::vars() {
        if name == "DATABASE_URL" || name.starts_with("SLUICE_") {
            command.env_remove(name);
        }
    }
    command
        .args(["--resp", "127.0.0.1:0"])
        .env("SLUICE_LOG", "warn")
        .env("SLUICE_DATABASE_URL", sluice_embedded::testkit::url())
        .env("SLUICE_RESP_STORE", "postgres")
        .env("SLUICE_RESP_SCHEMA", schema)
        .env("SLUICE_RESP_APPENDFSYNC", appendfsync)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn sluice serve")
}

/// The address from the child's `sluice: Redis protocol on ADDR` line.
fn resp_address(child: &mut Child) -> String {
    crate::serve_support::announced_address(child, "sluice: Redis protocol on ")
}

/// Sends one command and reads a one-line reply (`+OK`, `:1`, `-ERR ...`, `$n` then the data).
fn command(stream: &mut BufReader<TcpStream>, args: &[&str]) -> std::io::Result<String> {
    let mut frame = format!("*{}\r\n", args.len());
    for a in args {
        frame.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    stream.get_mut().write_all(frame.as_bytes())?;
    let mut line = String::new();
    if stream.read_line(&mut line)? == 0 {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    if line.starts_with('$') && !line.starts_with("$-1") {
        let mut data = String::new();
        stream.read_line(&mut data)?;
        return Ok(data.trim_end().to_string());
    }
    Ok(line.trim_end().to_string())
}

#[test]
fn sigkill_under_load_with_always_loses_no_acknowledged_write() {
    let schema = sluice_embedded::testkit::unique("cli_redis_kill");
    let mut running = Running(serve_redis(&schema));
    let addr = resp_address(&mut running.0);
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..6)
        .map(|t| {
            let addr = addr.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut conn = BufReader::new(TcpStream::connect(&addr).expect("connect"));
                let mut acknowledged = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let key = format!("t{t}:{acknowledged}");
                    match command(&mut conn, &["SET", &key, "v"]) {
                        Ok(reply) if reply == "+OK" => acknowledged += 1,
                        _ => break,
                    }
                }
                acknowledged
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1500));
    // SIGKILL: no last flush, no goodbye to PostgreSQL.
    running.0.kill().expect("SIGKILL");
    let _ = running.0.wait();
    stop.store(true, Ordering::Relaxed);
    let acknowledged: Vec<u64> = writers.into_iter().map(|w| w.join().unwrap()).collect();
    eprintln!("writes acknowledged per writer before SIGKILL: {acknowledged:?}");
    assert!(
        acknowledged.iter().sum::<u64>() > 50,
        "too little load to mean anything: {acknowledged:?}"
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for (t, &count) in acknowledged.iter().enumerate() {
        let found = runtime.block_on(sluice_embedded::testkit::value(&format!(
            "SELECT count(*) FROM \"{schema}\".strings \
             WHERE key_text LIKE 't{t}:%' AND split_part(key_text, ':', 2)::int8 < {count}"
        )));
        assert_eq!(
            found.as_deref(),
            Some(&*count.to_string()),
            "writer {t}: acknowledged writes missing after SIGKILL"
        );
    }
    // The next start loads them (and can take the schema: the killed owner's lock went with it).
    let mut running = Running(serve_redis(&schema));
    let addr = resp_address(&mut running.0);
    let mut conn = BufReader::new(TcpStream::connect(&addr).expect("connect"));
    let total: u64 = acknowledged.iter().sum();
    let dbsize = command(&mut conn, &["DBSIZE"]).unwrap();
    let dbsize: u64 = dbsize.trim_start_matches(':').parse().unwrap();
    // At most one unacknowledged write per writer may have been committed too.
    assert!(
        (total..=total + acknowledged.len() as u64).contains(&dbsize),
        "DBSIZE {dbsize} after restart, {total} acknowledged"
    );
    if acknowledged[0] > 0 {
        let last = format!("t0:{}", acknowledged[0] - 1);
        assert_eq!(command(&mut conn, &["GET", &last]).unwrap(), "v");
    }
}

#[test]
fn shutdown_commits_the_last_changes_and_exits() {
    let schema = sluice_embedded::testkit::unique("cli_redis_shutdown");
    let mut running = Running(serve_redis_with(&schema, "everysec"));
    let addr = resp_address(&mut running.0);
    let mut conn = BufReader::new(TcpStream::connect(&addr).expect("connect"));
    // Acknowledged at once under everysec: nothing of these needs to be committed yet.
    for i in 0..500 {
        assert_eq!(
            command(&mut conn, &["SET", &format!("k{i}"), "v"]).unwrap(),
            "+OK"
        );
    }
    assert_eq!(
        command(&mut conn, &["RPUSH", "list", "a", "b"]).unwrap(),
        ":2"
    );
    // No reply: the connection closes, and the process exits by itself.
    assert!(
        command(&mut conn, &["SHUTDOWN"]).is_err(),
        "SHUTDOWN was answered"
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = running.0.try_wait().expect("try_wait") {
            break status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "sluice serve did not exit after SHUTDOWN"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "exit status {status}");
    let mut running = Running(serve_redis_with(&schema, "everysec"));
    let addr = resp_address(&mut running.0);
    let mut conn = BufReader::new(TcpStream::connect(&addr).expect("connect"));
    assert_eq!(command(&mut conn, &["DBSIZE"]).unwrap(), ":501");
    assert_eq!(command(&mut conn, &["GET", "k499"]).unwrap(), "v");
}

#[test]
fn a_follower_serves_the_owners_writes_and_refuses_its_own() {
    let schema = sluice_embedded::testkit::unique("cli_redis_follow");
    let mut owner = Running(serve_redis(&schema));
    let owner_addr = resp_address(&mut owner.0);
    let mut o = BufReader::new(TcpStream::connect(&owner_addr).expect("connect"));
    assert_eq!(command(&mut o, &["SET", "k", "v1"]).unwrap(), "+OK");
    let mut follower = Running(serve_redis_env(
        &schema,
        "everysec",
        &[("SLUICE_RESP_FOLLOW", "true")],
    ));
    let addr = resp_address(&mut follower.0);
    let mut f = BufReader::new(TcpStream::connect(&addr).expect("connect"));
    assert_eq!(command(&mut f, &["GET", "k"]).unwrap(), "v1");
    assert_eq!(command(&mut o, &["SET", "k", "v2"]).unwrap(), "+OK");
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while command(&mut f, &["GET", "k"]).unwrap() != "v2" {
        assert!(
            std::time::Instant::now() < deadline,
            "the follower did not see the owner's write"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        command(&mut f, &["SET", "k", "mine"]).unwrap(),
        "-READONLY You can't write against a read only replica."
    );
    assert_eq!(command(&mut f, &["ROLE"]).unwrap(), "*5");
}
