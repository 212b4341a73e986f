//! The floor: the least work any client can do for the driver benchmark's cases over the same
//! transport, so the headroom one driver could have over another is measured, not guessed.

use crate::report::median;
use crate::runs::{Keys, POINT_SQL, timed_tasks};
use anyhow::{Context, Result, bail};
use bytes::BytesMut;
use sluice_pg::DbError;
use sluice_pg::config::{Config, Host};
use sluice_pg::protocol::backend::{self, Message};
use sluice_pg::protocol::frontend::{self, Formats};
use sluice_pg::types::Format;
use std::convert::Infallible;
use std::sync::atomic::Ordering;
use std::time::Instant;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The read buffer: as large as the kernel is likely to hand over in one read.
const READ_BUFFER: usize = 1 << 20;
/// int4, the point select's parameter type.
const INT4_OID: u32 = 23;

/// A socket and a read buffer, logged in with trust authentication.
///
/// It has the protocol's message framing and nothing else: no row decoding beyond what a case
/// needs, no statement cache, no error recovery. No real driver can do less per row or query.
struct RawConn {
    stream: TcpStream,
    buf: Vec<u8>,
    /// Unconsumed bytes are `buf[start..end]`.
    start: usize,
    end: usize,
}

impl RawConn {
    async fn connect(url: &str) -> Result<RawConn> {
        let config = Config::parse(url).context("parsing the server URL")?;
        let target = config
            .targets()
            .into_iter()
            .next()
            .context("the URL names no server")?;
        let stream = match (target.hostaddr, &target.host) {
            (Some(ip), _) => TcpStream::connect((ip, target.port)).await,
            (None, Host::Tcp(name)) => TcpStream::connect((name.as_str(), target.port)).await,
            (None, Host::Unix(_)) => {
                bail!("the floor client speaks TCP only: give the server as host and port")
            }
        }
        .with_context(|| format!("connecting to {}:{}", target.host, target.port))?;
        stream.set_nodelay(true)?;
        let mut conn = RawConn {
            stream,
            buf: vec![0; READ_BUFFER],
            start: 0,
            end: 0,
        };
        let mut out = BytesMut::new();
        frontend::startup(
            &[("user", config.user()), ("database", config.dbname())],
            &mut out,
        )?;
        conn.stream.write_all(&out).await?;
        conn.until_ready(|tag, body| match (tag, body) {
            (b'R', [0, 0, 0, 0]) => Ok(()),
            (b'R', _) => bail!("the floor client supports trust authentication only"),
            _ => Ok(()),
        })
        .await?;
        Ok(conn)
    }

    /// Hands every message's type and body to `each` until ReadyForQuery; an ErrorResponse
    /// becomes the error.
    async fn until_ready(&mut self, mut each: impl FnMut(u8, &[u8]) -> Result<()>) -> Result<()> {
        loop {
            while let Some((tag, total)) = backend::header(&self.buf[self.start..self.end])? {
                if self.end - self.start < total {
                    break;
                }
                let body = &self.buf[self.start + 5..self.start + total];
                self.start += total;
                match tag {
                    b'Z' => return Ok(()),
                    b'E' => bail!("server error: {}", error_message(body)),
                    _ => each(tag, body)?,
                }
            }
            self.make_room()?;
            let n = self.stream.read(&mut self.buf[self.end..]).await?;
            if n == 0 {
                bail!("the server closed the connection");
            }
            self.end += n;
        }
    }

    /// Moves a partial message to the front of the buffer, growing it for one larger than it.
    fn make_room(&mut self) -> Result<()> {
        self.buf.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        if let Some((_, total)) = backend::header(&self.buf[..self.end])?
            && total > self.buf.len()
        {
            self.buf.resize(total, 0);
        }
        if self.end == self.buf.len() {
            self.buf.resize(self.buf.len() * 2, 0);
        }
        Ok(())
    }
}

/// The server's error as the driver reports it (severity, SQLSTATE, message, detail, hint).
fn error_message(body: &[u8]) -> String {
    match backend::parse_body(b'E', body) {
        Ok(Message::ErrorResponse(fields)) => DbError::from_fields(&fields).to_string(),
        _ => "(unreadable ErrorResponse)".into(),
    }
}

/// `SELECT * FROM pgbench_accounts` as a simple query; every message framed, rows counted.
pub async fn bulk(url: &str) -> Result<()> {
    let mut conn = RawConn::connect(url).await?;
    let mut out = BytesMut::new();
    frontend::query("SELECT * FROM pgbench_accounts", &mut out)?;
    conn.stream.write_all(&out).await?;
    let (mut rows, mut bytes) = (0u64, 0usize);
    conn.until_ready(|tag, body| {
        if tag == b'D' {
            rows += 1;
            bytes += body.len();
        }
        Ok(())
    })
    .await?;
    println!(
        "rows={rows} bytes={bytes} peak_rss_kib={}",
        crate::peers::peak_rss_kib()
    );
    Ok(())
}

impl RawConn {
    /// Connects and prepares the point select as statement `p`.
    async fn connect_prepared(url: &str) -> Result<RawConn> {
        let mut conn = RawConn::connect(url).await?;
        let mut out = BytesMut::new();
        frontend::parse("p", POINT_SQL, &[INT4_OID], &mut out)?;
        frontend::sync(&mut out);
        conn.stream.write_all(&out).await?;
        conn.until_ready(|_, _| Ok(())).await?;
        Ok(conn)
    }

    /// Sends `out` and counts the DataRows until ReadyForQuery.
    async fn round_trip(&mut self, out: &[u8]) -> Result<usize> {
        self.stream.write_all(out).await?;
        let mut rows = 0;
        self.until_ready(|tag, _| {
            rows += usize::from(tag == b'D');
            Ok(())
        })
        .await?;
        Ok(rows)
    }
}

/// Appends Bind and Execute of the prepared point select for account `aid`.
fn put_point(aid: i32, out: &mut BytesMut) -> Result<()> {
    frontend::bind(
        "",
        "p",
        Formats::All(Format::Binary),
        |w| {
            w.put_raw(Some(&aid.to_be_bytes()));
            Ok::<(), Infallible>(())
        },
        Formats::All(Format::Binary),
        out,
    )
    .map_err(|_| anyhow::anyhow!("encoding Bind"))?;
    frontend::execute("", 0, out)?;
    Ok(())
}

/// Eight tasks, each on its own connection, sending Bind/Execute/Sync of a statement prepared
/// once and reading the reply in one buffer.
pub async fn point(url: &str, seconds: u64) -> Result<()> {
    let url = url.to_owned();
    let tps = timed_tasks(8, seconds, move |t, stop, count| {
        let url = url.clone();
        async move {
            let mut conn = RawConn::connect_prepared(&url).await?;
            let mut out = BytesMut::new();
            let mut keys = Keys::new(t);
            while !stop.load(Ordering::Relaxed) {
                let aid = keys.next();
                out.clear();
                put_point(aid, &mut out)?;
                frontend::sync(&mut out);
                let rows = conn.round_trip(&out).await?;
                if rows != 1 {
                    bail!("account {aid}: {rows} rows instead of one");
                }
                count.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        }
    })
    .await?;
    println!("tps={tps:.1}");
    Ok(())
}

/// Median of `reps` timings of 1,000 point selects, one at a time and as one write with one
/// Sync, as the driver's pipeline case runs them.
pub async fn pipeline(url: &str, reps: u64) -> Result<()> {
    let mut conn = RawConn::connect_prepared(url).await?;
    let mut keys = Keys::new(42);
    let mut out = BytesMut::new();
    let (mut seq, mut pipe) = (Vec::new(), Vec::new());
    for rep in 0..=reps {
        let start = Instant::now();
        for _ in 0..1000 {
            out.clear();
            put_point(keys.next(), &mut out)?;
            frontend::sync(&mut out);
            conn.round_trip(&out).await?;
        }
        let sequential = start.elapsed();
        let start = Instant::now();
        out.clear();
        for _ in 0..1000 {
            put_point(keys.next(), &mut out)?;
        }
        frontend::sync(&mut out);
        let rows = conn.round_trip(&out).await?;
        let pipelined = start.elapsed();
        if rows != 1000 {
            bail!("a pipeline of 1,000 point selects returned {rows} rows");
        }
        if rep > 0 {
            seq.push(sequential.as_secs_f64() * 1000.0);
            pipe.push(pipelined.as_secs_f64() * 1000.0);
        }
    }
    println!(
        "sequential_ms={:.3} pipelined_ms={:.3}",
        median(&seq),
        median(&pipe)
    );
    Ok(())
}
