//! Test helpers: an in-process Sluice RESP server, a private redis-server, a raw RESP client.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener as StdListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A Sluice RESP server running on its own runtime thread; stopped on drop.
pub struct Sluice {
    pub port: u16,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Sluice {
    pub fn start() -> Self {
        Self::start_with(sluice_resp::Config::default())
    }

    pub fn start_with(config: sluice_resp::Config) -> Self {
        let std_listener = StdListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        std_listener.set_nonblocking(true).expect("nonblocking");
        let port = std_listener.local_addr().expect("local addr").port();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(std_listener).expect("listener");
                sluice_resp::run(listener, config, async {
                    let _ = stopped.await;
                })
                .await
                .expect("server");
            });
        });
        Self {
            port,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Whether the server stopped by itself (SHUTDOWN) within `limit`.
    pub fn stops_within(&self, limit: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + limit;
        while std::time::Instant::now() < deadline {
            if self.thread.as_ref().is_none_or(|t| t.is_finished()) {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        false
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// A connection of the `redis` crate to this server.
    pub async fn redis(&self) -> redis::aio::MultiplexedConnection {
        redis::Client::open(self.url())
            .expect("client")
            .get_multiplexed_async_connection()
            .await
            .expect("connect")
    }
}

impl Drop for Sluice {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Runs `cmd` and fails the test with its output when it does not succeed.
pub fn assert_succeeds(mut cmd: Command, what: &str) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("running {what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed:\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs a Python `script` (`python -c script args...`) and fails the test when it fails.
pub fn assert_python(python: &std::path::Path, script: &str, args: &[&str], what: &str) {
    let mut cmd = Command::new(python);
    cmd.arg("-c").arg(script).args(args);
    assert_succeeds(cmd, what);
}

/// Runs a redis-py `script` against `port` under RESP2 and then RESP3 (its arguments: the port
/// and the protocol), failing the test when either run fails.
pub fn assert_redis_py_both_protocols(
    python: &std::path::Path,
    script: &str,
    port: u16,
    what: &str,
) {
    let port = port.to_string();
    for proto in ["2", "3"] {
        assert_python(
            python,
            script,
            &[&port, proto],
            &format!("{what} (RESP{proto})"),
        );
    }
}

/// Whether a program is on PATH.
pub fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// A free TCP port (bound and released; never 6379).
pub fn free_port() -> u16 {
    loop {
        let l = StdListener::bind("127.0.0.1:0").expect("bind");
        let port = l.local_addr().expect("addr").port();
        if port != 6379 {
            return port;
        }
    }
}

/// A private redis-server, killed on drop.
pub struct RedisServer {
    pub port: u16,
    child: Child,
}

impl RedisServer {
    /// Starts `redis-server` on a free port, or None (with a message) when it is not installed.
    pub fn start() -> Option<Self> {
        if !have("redis-server") {
            eprintln!("SKIP: redis-server is not installed; the differential test needs it");
            return None;
        }
        let port = free_port();
        let child = Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--save",
                "",
                "--appendonly",
                "no",
                "--bind",
                "127.0.0.1",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn redis-server");
        let server = Self { port, child };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(mut c) = RawClient::connect(port)
                && c.call(&["PING"]) == b"+PONG\r\n"
            {
                return Some(server);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("redis-server on port {port} did not answer PING within 10 s");
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A blocking RESP client that returns each reply's raw bytes.
pub struct RawClient {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl RawClient {
    pub fn connect(port: u16) -> std::io::Result<Self> {
        let stream = TcpStream::connect(("127.0.0.1", port))?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        Ok(Self {
            reader: BufReader::new(stream.try_clone()?),
            writer: stream,
        })
    }

    /// Sends raw bytes as they are.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).expect("write");
    }

    /// Encodes a command as a multibulk request.
    pub fn encode<A: AsRef<[u8]>>(args: &[A]) -> Vec<u8> {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            let a = a.as_ref();
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
        out
    }

    /// Sends one command and returns its reply's bytes.
    pub fn call<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Vec<u8> {
        self.send_raw(&Self::encode(args));
        self.read_reply()
    }

    /// Reads one complete reply (any RESP2/RESP3 type) and returns its bytes.
    pub fn read_reply(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        read_one(&mut self.reader, &mut out);
        out
    }

    /// The buffered reader, for tests that drain raw bytes.
    pub fn reader_mut(&mut self) -> &mut BufReader<TcpStream> {
        &mut self.reader
    }

    /// True when INFO reports exactly `n` clients blocked.
    pub fn blocked_clients_are(&mut self, n: usize) -> bool {
        let want = format!("blocked_clients:{n}\r\n");
        self.call(&["INFO", "clients"])
            .windows(want.len())
            .any(|w| w == want.as_bytes())
    }

    /// Waits, up to five seconds, until INFO reports `n` clients blocked, sleeping on the
    /// test's runtime between polls so the clients it spawned get there; a test pushes only
    /// once its blocked clients are there to be served.
    pub async fn wait_blocked(&mut self, n: usize) {
        for _ in 0..500 {
            if self.blocked_clients_are(n) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("{n} clients never blocked");
    }

    /// True when the server closed the connection (reads EOF).
    pub fn is_closed(&mut self) -> bool {
        let mut b = [0u8; 1];
        matches!(self.reader.read(&mut b), Ok(0))
    }
}

fn read_one(r: &mut BufReader<TcpStream>, out: &mut Vec<u8>) {
    let mut line = Vec::new();
    r.read_until(b'\n', &mut line).expect("read reply line");
    assert!(
        !line.is_empty(),
        "connection closed while a reply was expected"
    );
    out.extend_from_slice(&line);
    let n: i64 = std::str::from_utf8(&line[1..line.len() - 2])
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    match line[0] {
        b'$' | b'=' | b'!' if n >= 0 => {
            let mut body = vec![0u8; n as usize + 2];
            r.read_exact(&mut body).expect("read bulk");
            out.extend_from_slice(&body);
        }
        b'*' | b'~' | b'>' => {
            for _ in 0..n.max(0) {
                read_one(r, out);
            }
        }
        b'%' | b'|' => {
            for _ in 0..n.max(0) * 2 {
                read_one(r, out);
            }
        }
        _ => {}
    }
}

/// Splits a top-level aggregate reply into its header and its elements' raw bytes.
pub fn split_aggregate(reply: &[u8]) -> Option<(Vec<u8>, Vec<Vec<u8>>)> {
    let header_end = reply.windows(2).position(|w| w == b"\r\n")? + 2;
    let header = reply[..header_end].to_vec();
    if !matches!(header[0], b'*' | b'~' | b'%') {
        return None;
    }
    let mut elements = Vec::new();
    let mut pos = header_end;
    while pos < reply.len() {
        let len = element_len(&reply[pos..])?;
        elements.push(reply[pos..pos + len].to_vec());
        pos += len;
    }
    Some((header, elements))
}

fn element_len(buf: &[u8]) -> Option<usize> {
    let line_end = buf.windows(2).position(|w| w == b"\r\n")? + 2;
    let n: i64 = std::str::from_utf8(&buf[1..line_end - 2])
        .ok()?
        .parse()
        .unwrap_or(0);
    match buf[0] {
        b'$' | b'=' if n >= 0 => Some(line_end + n as usize + 2),
        b'*' | b'~' | b'%' => {
            let count = if buf[0] == b'%' { n * 2 } else { n };
            let mut pos = line_end;
            for _ in 0..count.max(0) {
                pos += element_len(&buf[pos..])?;
            }
            Some(pos)
        }
        _ => Some(line_end),
    }
}
