//! The HTTP gateway benchmark: `sluice serve` with a view of pgbench_accounts side by side with
//! pgbench (point GETs through wrk), `sluice export` (the whole table as CSJ) and `sluice import`
//! (a 100,000-row PUT), and the server's RSS under a 100 MiB PATCH; alternating and repeated.

use crate::report::{Line, median, print};
use crate::setup::Target;
use anyhow::{Context, Result, bail};
use clap::Args;
use std::hash::Hasher;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Options of `sluice-bench http`.
#[derive(Debug, Args)]
pub struct HttpArgs {
    /// Server URL (default: DATABASE_URL, else an embedded cluster).
    #[arg(short = 'd', long)]
    database: Option<String>,
    /// Rounds; each runs every contender once, in rotating order.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Seconds of each wrk and pgbench run.
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    /// pgbench scale (20 gives 2,000,000 accounts).
    #[arg(long, default_value_t = 20)]
    scale: u32,
    /// The sluice binary (default: the one next to this benchmark, from `cargo build --release`).
    #[arg(long)]
    sluice: Option<PathBuf>,
    /// Port of the HTTP gate under test (default: a free one).
    #[arg(long)]
    port: Option<u16>,
    /// Connections of the serve pool.
    #[arg(long, default_value_t = 8)]
    pool_size: usize,
    /// The serve pool's reset (`session`, the default, or `transaction`).
    #[arg(long, default_value = "session")]
    pool_reset: String,
    /// Size of the PATCH body in MiB.
    #[arg(long, default_value_t = 100)]
    patch_mib: u64,
    /// The cases to run, comma-separated: point (GET by key), all (GET all rows), put, patch.
    #[arg(long, value_delimiter = ',', default_value = "point,all,put,patch")]
    cases: Vec<String>,
}

/// The names `--cases` takes.
const CASES: [&str; 4] = ["point", "all", "put", "patch"];

/// Tables the write cases fill (dropped at the end).
const PUT_TABLE: &str = "sluice_bench_http_put";
const PATCH_TABLE: &str = "sluice_bench_http_patch";

/// The view under test: one file, mounted at /bench.
pub(crate) fn view_file() -> String {
    format!(
        r#"{{"sql": [
  {{"path": ["/accounts", 1], "return": "object",
    "GET": "SELECT aid, bid, abalance, filler FROM pgbench_accounts WHERE aid = $1"}},
  {{"path": ["/accounts"], "GET": "SELECT * FROM pgbench_accounts"}},
  {{"path": ["/put"],
    "PUT": {{"table": "{PUT_TABLE}",
      "existing": "SELECT aid FROM {PUT_TABLE}",
      "delete": "DELETE FROM {PUT_TABLE} WHERE aid = $1",
      "columns": {{"aid": {{"key": true}}, "bid": {{}}, "abalance": {{}}, "filler": {{}}}}}}}},
  {{"path": ["/patch"],
    "PATCH": {{"table": "{PATCH_TABLE}",
      "columns": {{"aid": {{"key": true}}, "bid": {{}}, "abalance": {{}}, "filler": {{}}}}}}}}
]}}
"#
    )
}

pub(crate) const WRK_SCRIPT: &str = r#"-- One account by a random key per request.
math.randomseed(os.time())
request = function()
  return wrk.format("GET", "/bench/accounts/" .. math.random(1, 2000000))
end
"#;

/// A running `sluice serve`, stopped with SIGTERM on drop.
pub(crate) struct Serve {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub(crate) base: String,
    /// Whether it serves HTTPS (`SLUICE_HTTP_CERT` given).
    tls: bool,
}

impl Serve {
    pub(crate) fn start(
        sluice: &Path,
        url: &str,
        port: u16,
        views: &Path,
        pool_size: usize,
        pool_reset: &str,
    ) -> Result<Serve> {
        Serve::start_with_env(sluice, url, port, views, pool_size, pool_reset, &[])
    }

    /// As [`Serve::start`], with extra `SLUICE_*` variables (a JWT secret, an anonymous role).
    pub(crate) fn start_with_env(
        sluice: &Path,
        url: &str,
        port: u16,
        views: &Path,
        pool_size: usize,
        pool_reset: &str,
        env: &[(&str, &str)],
    ) -> Result<Serve> {
        let child = Command::new(sluice)
            .args(["serve", "-d", url, "--http"])
            .arg(format!("127.0.0.1:{port}"))
            .arg("--views")
            .arg(format!("/bench={}", views.display()))
            .args(["--pool-size", &pool_size.to_string()])
            .env("SLUICE_POOL_RESET", pool_reset)
            .env("SLUICE_LOG", "warn")
            .env("SLUICE_HTTP_ACCESS_LOG", "false")
            .env("RUST_BACKTRACE", "0")
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .context("starting sluice serve")?;
        let tls = env.iter().any(|(name, _)| *name == "SLUICE_HTTP_CERT");
        let mut serve = Serve {
            child,
            base: format!("127.0.0.1:{port}"),
            tls,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = serve.child.try_wait()? {
                let mut stderr = String::new();
                if let Some(mut pipe) = serve.child.stderr.take() {
                    let _ = pipe.read_to_string(&mut stderr);
                }
                bail!("sluice serve exited ({status}): {}", stderr.trim());
            }
            if serve.is_ready() {
                return Ok(serve);
            }
            if Instant::now() > deadline {
                bail!("sluice serve was not ready within 30 s");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// `/-/ready` answers 200 (over HTTPS through curl, which the plain probe cannot speak).
    fn is_ready(&self) -> bool {
        if !self.tls {
            return request(&self.base, "GET", "/-/ready", &[], &[]).is_ok_and(|(s, _)| s == 200);
        }
        Command::new("curl")
            .args(["-sk", "-o", "/dev/null", "-w", "%{http_code}"])
            .arg(format!("{}/-/ready", self.url()))
            .output()
            .is_ok_and(|out| out.stdout == b"200")
    }

    /// `http://127.0.0.1:PORT` or `https://...`: what wrk is pointed at.
    pub(crate) fn url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}", self.base)
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The server's CPU time so far (user + system), in seconds.
    pub(crate) fn cpu_seconds(&self) -> Result<f64> {
        crate::setup::cpu_seconds(self.pid())
    }

    /// A field of /proc/PID/status in KiB (VmRSS, VmHWM).
    pub(crate) fn memory_kib(&self, field: &str) -> Result<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))?;
        status
            .lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .with_context(|| format!("no {field} in /proc/PID/status"))
    }

    /// Resets the peak RSS to the current RSS (Linux: write 5 to clear_refs).
    pub(crate) fn reset_peak(&self) -> Result<()> {
        std::fs::write(format!("/proc/{}/clear_refs", self.pid()), "5")
            .context("resetting the server's peak RSS")
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 request with `Connection: close`: the status and the body.
pub(crate) fn request(
    base: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Result<(u16, Vec<u8>)> {
    let mut stream = std::net::TcpStream::connect(base)?;
    stream.set_read_timeout(Some(Duration::from_secs(600)))?;
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nhost: bench\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer)?;
    let status = answer
        .get(9..12)
        .and_then(|s| std::str::from_utf8(s).ok()?.parse().ok())
        .context("no HTTP status line")?;
    let body = match answer.windows(4).position(|w| w == b"\r\n\r\n") {
        Some(end) => answer.get(end + 4..).unwrap_or_default().to_vec(),
        None => Vec::new(),
    };
    Ok((status, body))
}

/// A duration as wrk prints it (`812.00us`, `2.31ms`, `1.02s`), in milliseconds.
fn wrk_millis(text: &str) -> Option<f64> {
    let split = text.find(|c: char| c.is_ascii_alphabetic())?;
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().ok()?;
    Some(match unit {
        "us" => number / 1000.0,
        "ms" => number,
        "s" => number * 1000.0,
        "m" => number * 60_000.0,
        _ => return None,
    })
}

/// wrk with 64 connections for `seconds`: requests per second and p99 in milliseconds. `base` is
/// `host:port` (plain HTTP) or a whole `https://host:port`.
pub(crate) fn wrk(base: &str, script: &Path, seconds: u64) -> Result<(f64, f64)> {
    let (rps, p99, _timeouts) = wrk_with(base, script, seconds, 64)?;
    Ok((rps, p99))
}

/// wrk with `connections` connections for `seconds`: requests per second, p99 in ms, and the
/// requests wrk gave up on after its 2 s timeout. A non-2xx answer or a connect, read or write
/// error fails the run.
pub(crate) fn wrk_with(
    base: &str,
    script: &Path,
    seconds: u64,
    connections: usize,
) -> Result<(f64, f64, u64)> {
    let out = Command::new("wrk")
        .args(["-t2", &format!("-c{connections}"), "--latency", "-d"])
        .arg(format!("{seconds}s"))
        .arg("-s")
        .arg(script)
        .arg(if base.contains("://") {
            base.to_string()
        } else {
            format!("http://{base}")
        })
        .output()
        .context("running wrk (apt-get install wrk)")?;
    let text = String::from_utf8_lossy(&out.stdout);
    // "Socket errors: connect 0, read 0, write 0, timeout 12"
    let socket_errors: Vec<u64> = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Socket errors:"))
        .map(|counts| {
            counts
                .split(',')
                .filter_map(|c| c.split_whitespace().nth(1)?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    let failed: u64 = socket_errors.iter().take(3).sum();
    let timeouts = socket_errors.get(3).copied().unwrap_or(0);
    if !out.status.success() || text.contains("Non-2xx") || failed > 0 {
        bail!("wrk failed or saw errors:\n{text}");
    }
    let rps = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Requests/sec:"))
        .and_then(|v| v.trim().parse().ok())
        .context("wrk printed no Requests/sec")?;
    let p99 = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("99%"))
        .and_then(|v| wrk_millis(v.trim()))
        .context("wrk printed no 99% latency")?;
    Ok((rps, p99, timeouts))
}

/// Runs `program args` with standard output read here: seconds, bytes, and a hash of the bytes.
pub(crate) fn timed_digest(program: &Path, args: &[String]) -> Result<(f64, u64, u64)> {
    let start = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("running {}", program.display()))?;
    let mut stdout = child.stdout.take().context("no stdout")?;
    let mut hasher = std::hash::DefaultHasher::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut len = 0u64;
    loop {
        let n = stdout.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.write(buf.get(..n).unwrap_or_default());
        len += n as u64;
    }
    let out = child.wait_with_output()?;
    if !out.status.success() {
        bail!(
            "{} failed: {}",
            program.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok((start.elapsed().as_secs_f64(), len, hasher.finish()))
}

pub fn run(args: HttpArgs) -> Result<()> {
    crate::setup::check_cases(&args.cases, &CASES)?;
    let runs = |case: &str| args.cases.iter().any(|c| c == case);
    let target = Target::open(args.database.clone())?;
    target.ensure_pgbench(args.scale)?;
    let sluice = crate::setup::sluice_binary(args.sluice.as_deref())?;
    let dir = std::env::current_dir()?.join("target/sluice-bench/http");
    std::fs::create_dir_all(&dir)?;
    let views = dir.join("accounts.json");
    std::fs::write(&views, view_file())?;
    let script = dir.join("random_aid.lua");
    std::fs::write(&script, WRK_SCRIPT)?;
    for table in [PUT_TABLE, PATCH_TABLE] {
        target.psql(&format!("DROP TABLE IF EXISTS {table}"))?;
        target.psql(&format!(
            "CREATE TABLE {table} (LIKE pgbench_accounts); ALTER TABLE {table} ADD PRIMARY KEY (aid)"
        ))?;
    }
    println!(
        "sluice-bench http: {} rounds of {} s, server {}, {} cores, sluice {}",
        args.rounds,
        args.seconds,
        target.psql("SHOW server_version")?,
        std::thread::available_parallelism().map_or(0, usize::from),
        sluice.display()
    );
    let port = match args.port {
        Some(port) => port,
        None => std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port(),
    };
    let serve = Serve::start(
        &sluice,
        &target.url,
        port,
        &views,
        args.pool_size,
        &args.pool_reset,
    )?;
    let result = (|| -> Result<()> {
        if runs("point") {
            point(&target, &serve, &script, &args)?;
        }
        if runs("all") {
            all_rows(&target, &serve, &sluice, &args)?;
        }
        if runs("put") {
            put(&target, &serve, &sluice, &dir, &args)?;
        }
        if runs("patch") {
            patch(&target, &serve, &sluice, &dir, &args)?;
        }
        Ok(())
    })();
    drop(serve);
    for table in [PUT_TABLE, PATCH_TABLE] {
        let _ = target.psql(&format!("DROP TABLE IF EXISTS {table}"));
    }
    result
}

/// Whether the view answers `path` (a 2xx for a GET of key 1).
fn available(serve: &Serve, path: &str) -> bool {
    request(&serve.base, "GET", path, &[], &[]).is_ok_and(|(status, _)| status < 300)
}

/// (a) One row by key: wrk with 64 connections against pgbench -S -M prepared -c 8 -j 2.
fn point(target: &Target, serve: &Serve, script: &Path, args: &HttpArgs) -> Result<()> {
    let title = format!(
        "GET one account by key (`/bench/accounts/{{aid}}`, random aid), 64 HTTP connections (wrk -t2 -c64), serve pool of {}, pool reset {}",
        args.pool_size, args.pool_reset
    );
    let title = title.as_str();
    if !available(serve, "/bench/accounts/1") {
        print_unavailable(title, "the view GET of one object");
        return Ok(());
    }
    let (mut http, mut p99, mut pg) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..args.rounds {
        for turn in 0..2 {
            if (round + turn) % 2 == 0 {
                let (rps, p) = wrk(&serve.base, script, args.seconds)?;
                http.push(rps);
                p99.push(p);
            } else {
                pg.push(target.pgbench_select_only(args.seconds)?);
            }
        }
        eprintln!(
            "point round {}: sluice HTTP {:.0} req/s (p99 {:.2} ms), pgbench {:.0} tps",
            round + 1,
            http.last().copied().unwrap_or(f64::NAN),
            p99.last().copied().unwrap_or(f64::NAN),
            pg.last().copied().unwrap_or(f64::NAN)
        );
    }
    let (h, p) = (median(&http), median(&pg));
    print(
        title,
        &[
            Line {
                case: "`pgbench -S -M prepared -c 8 -j 2`".into(),
                figure: format!("{p:.0} tps"),
                note: "reference".into(),
            },
            Line {
                case: "`sluice serve`, GET through the view".into(),
                figure: format!("{h:.0} req/s, p99 {:.2} ms", median(&p99)),
                note: format!("{:.2} x pgbench (bar >= 0.5)", h / p),
            },
        ],
    );
    Ok(())
}

/// (b) The whole table as CSJ: curl from the view against `sluice export --format csj`.
fn all_rows(target: &Target, serve: &Serve, sluice: &Path, args: &HttpArgs) -> Result<()> {
    let rows = u64::from(args.scale) * 100_000;
    let title = format!(
        "GET all {rows} rows of pgbench_accounts as CSJ (curl to a pipe) vs `sluice export --format csj`"
    );
    let curl_args: Vec<String> = [
        "-sS",
        "--fail",
        "-H",
        "Accept: application/csj",
        &format!("http://{}/bench/accounts", serve.base),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let export_args: Vec<String> = [
        "export",
        "-d",
        &target.url,
        "--format",
        "csj",
        "SELECT * FROM pgbench_accounts",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let curl = PathBuf::from("curl");
    // A first GET warms the server and tells whether the view is there.
    if timed_digest(&curl, &curl_args).is_err() {
        print_unavailable(&title, "the view GET of all rows");
        return Ok(());
    }
    let (_, export_len, export_hash) = timed_digest(sluice, &export_args)?;
    let (mut http, mut export, mut peak) = (Vec::new(), Vec::new(), Vec::new());
    let mut identical = true;
    let mut http_len = 0;
    for round in 0..args.rounds {
        for turn in 0..2 {
            if (round + turn) % 2 == 0 {
                serve.reset_peak()?;
                let (secs, len, hash) = timed_digest(&curl, &curl_args)?;
                peak.push(serve.memory_kib("VmHWM")? as f64 / 1024.0);
                http.push(secs);
                http_len = len;
                identical &= (len, hash) == (export_len, export_hash);
            } else {
                export.push(timed_digest(sluice, &export_args)?.0);
            }
        }
        eprintln!(
            "all rows round {}: sluice HTTP {:.3}s (server peak RSS {:.1} MiB), sluice export {:.3}s",
            round + 1,
            http.last().copied().unwrap_or(f64::NAN),
            peak.last().copied().unwrap_or(f64::NAN),
            export.last().copied().unwrap_or(f64::NAN)
        );
    }
    let (h, e) = (median(&http), median(&export));
    let max_peak = peak.iter().copied().fold(0.0, f64::max);
    print(
        &title,
        &[
            Line {
                case: "`sluice export --format csj`".into(),
                figure: format!("{e:.3} s ({export_len} bytes)"),
                note: "reference".into(),
            },
            Line {
                case: "`sluice serve`, GET through the view, `Accept: application/csj`".into(),
                figure: format!("{h:.3} s ({http_len} bytes), server peak RSS {max_peak:.1} MiB"),
                note: format!(
                    "{:.2} x export (bar <= 1.3); RSS bar <= 64 MiB; same bytes as export: {}",
                    h / e,
                    if identical { "yes" } else { "NO" }
                ),
            },
        ],
    );
    Ok(())
}

/// Writes the first `rows` accounts as a CSJ file (once).
fn csj_file(target: &Target, sluice: &Path, dir: &Path, rows: u64) -> Result<PathBuf> {
    let file = dir.join(format!("accounts_{rows}.csj"));
    if !file.exists() {
        let status = Command::new(sluice)
            .args(["export", "-d", &target.url, "--format", "csj", "-q", "-o"])
            .arg(&file)
            .arg(format!(
                "SELECT * FROM pgbench_accounts WHERE aid <= {rows} ORDER BY aid"
            ))
            .status()
            .context("exporting accounts to a CSJ file")?;
        if !status.success() {
            bail!("exporting {rows} accounts failed");
        }
    }
    Ok(file)
}

/// (c) A 100,000-row set-replace PUT against `sluice import` of the same rows.
fn put(target: &Target, serve: &Serve, sluice: &Path, dir: &Path, args: &HttpArgs) -> Result<()> {
    const ROWS: u64 = 100_000;
    let title = format!("PUT of a {ROWS}-row CSJ set (into an empty table) vs `sluice import`");
    let file = csj_file(target, sluice, dir, ROWS)?;
    let body = std::fs::read(&file)?;
    let put_once = || -> Result<(u16, String, f64)> {
        target.psql(&format!("TRUNCATE {PUT_TABLE}"))?;
        let start = Instant::now();
        let (status, answer) = request(
            &serve.base,
            "PUT",
            "/bench/put",
            &[("content-type", "application/csj")],
            &body,
        )?;
        Ok((
            status,
            String::from_utf8_lossy(&answer).into_owned(),
            start.elapsed().as_secs_f64(),
        ))
    };
    let (status, answer, _) = put_once()?;
    if status >= 300 {
        print_unavailable(
            &title,
            &format!("the view PUT (answered {status}: {answer})"),
        );
        return Ok(());
    }
    let (mut http, mut import) = (Vec::new(), Vec::new());
    for round in 0..args.rounds {
        for turn in 0..2 {
            if (round + turn) % 2 == 0 {
                let (status, answer, secs) = put_once()?;
                if status >= 300 {
                    bail!("the PUT answered {status}: {answer}");
                }
                http.push(secs);
            } else {
                target.psql(&format!("TRUNCATE {PUT_TABLE}"))?;
                let start = Instant::now();
                let status = Command::new(sluice)
                    .args([
                        "import",
                        "-d",
                        &target.url,
                        "-q",
                        "--format",
                        "csj",
                        PUT_TABLE,
                    ])
                    .arg(&file)
                    .status()
                    .context("running sluice import")?;
                if !status.success() {
                    bail!("sluice import failed");
                }
                import.push(start.elapsed().as_secs_f64());
            }
            let count = target.psql(&format!("SELECT count(*) FROM {PUT_TABLE}"))?;
            if count != ROWS.to_string() {
                bail!("{PUT_TABLE} holds {count} rows, not {ROWS}");
            }
        }
        eprintln!(
            "put round {}: sluice HTTP PUT {:.3}s, sluice import {:.3}s",
            round + 1,
            http.last().copied().unwrap_or(f64::NAN),
            import.last().copied().unwrap_or(f64::NAN)
        );
    }
    let (h, i) = (median(&http), median(&import));
    let rows = ROWS as f64;
    print(
        &title,
        &[
            Line {
                case: "`sluice import --format csj` (COPY)".into(),
                figure: format!("{i:.3} s, {:.0} rows/s", rows / i),
                note: "reference".into(),
            },
            Line {
                case: "`sluice serve`, PUT through the view (upsert + set-replace)".into(),
                figure: format!("{h:.3} s, {:.0} rows/s", rows / h),
                note: format!("{:.2} x the rate of import (no bar; reported)", i / h),
            },
        ],
    );
    Ok(())
}

/// (d) A PATCH with a large CSJ body: how much the server's RSS grows.
fn patch(target: &Target, serve: &Serve, sluice: &Path, dir: &Path, args: &HttpArgs) -> Result<()> {
    // About 100 bytes per account row in CSJ.
    let rows = (args.patch_mib << 20) / 100;
    let title = format!(
        "PATCH with a {} MiB CSJ body: server RSS growth",
        args.patch_mib
    );
    let file = csj_file(target, sluice, dir, rows)?;
    let body = std::fs::read(&file)?;
    let body_mib = body.len() as f64 / f64::from(1 << 20);
    let mut growth = Vec::new();
    let mut secs = Vec::new();
    for round in 0..args.rounds.min(3) {
        target.psql(&format!("TRUNCATE {PATCH_TABLE}"))?;
        let before = serve.memory_kib("VmRSS")?;
        serve.reset_peak()?;
        let start = Instant::now();
        let (status, answer) = request(
            &serve.base,
            "PATCH",
            "/bench/patch",
            &[("content-type", "application/csj")],
            &body,
        )?;
        if status >= 300 {
            let answer = String::from_utf8_lossy(&answer);
            print_unavailable(
                &title,
                &format!("the view PATCH (answered {status}: {answer})"),
            );
            return Ok(());
        }
        secs.push(start.elapsed().as_secs_f64());
        let peak = serve.memory_kib("VmHWM")?;
        growth.push(peak.saturating_sub(before) as f64 / 1024.0);
        eprintln!(
            "patch round {}: {:.3}s, RSS {:.1} MiB before, peak {:.1} MiB",
            round + 1,
            secs.last().copied().unwrap_or(f64::NAN),
            before as f64 / 1024.0,
            peak as f64 / 1024.0
        );
    }
    let g = median(&growth);
    print(
        &title,
        &[Line {
            case: format!(
                "`sluice serve`, PATCH through the view ({body_mib:.1} MiB, {rows} rows)"
            ),
            figure: format!(
                "RSS growth {g:.1} MiB, {:.3} s ({:.0} rows/s)",
                median(&secs),
                rows as f64 / median(&secs)
            ),
            note: format!("{:.2} x the body (bar <= 1.5)", g / body_mib),
        }],
    );
    Ok(())
}

pub(crate) fn print_unavailable(title: &str, what: &str) {
    print(
        title,
        &[Line {
            case: "`sluice serve`".into(),
            figure: "not available".into(),
            note: format!("{what} is not in this build"),
        }],
    );
}
