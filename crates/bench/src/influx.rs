//! The Influx ingest benchmark: points posted as line protocol to Sluice's write API by
//! concurrent writers, side by side with loading the same rows as CSV with `psql \copy` into
//! the same table shape; alternating and repeated, medians and the ratio.

use crate::report::{Line, median, print};
use crate::setup::{StatTicks, Target, cpu_seconds, self_cpu_seconds, stat_ticks};
use anyhow::{Context, Result, bail};
use bytes::Bytes;
use clap::Args;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use sluice_influx::{Duplicates, InfluxApi, InfluxConfig};
use sluice_pg::{Config, Pool, PoolSettings};
use std::fmt::Write as _;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// Options of `sluice-bench influx`.
#[derive(Debug, Args)]
pub struct InfluxArgs {
    /// Server URL (default: DATABASE_URL, else an embedded cluster).
    #[arg(short = 'd', long)]
    database: Option<String>,
    /// Rounds; each runs both contenders once, in alternating order.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Points in all.
    #[arg(long, default_value_t = 1_000_000)]
    points: usize,
    /// Lines per request.
    #[arg(long, default_value_t = 5_000)]
    batch: usize,
    /// Concurrent writers.
    #[arg(long, default_value_t = 4)]
    writers: usize,
    /// Distinct `host` tag values.
    #[arg(long, default_value_t = 1_000)]
    hosts: usize,
    /// Runtime worker threads of the in-process Sluice server and its clients.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// `[influx] duplicates` of the write API: "merge" (a unique index on time and series, rows
    /// through a staging table and INSERT ... ON CONFLICT) or "keep" (plain COPY).
    #[arg(long, default_value = "merge", value_parser = ["merge", "keep"])]
    duplicates: String,
    /// Also run `psql \copy` a second time in each round, to print the noise floor: the ratio
    /// of two identical contenders in the same run.
    #[arg(long)]
    floor: bool,
    /// Also run `psql \copy` into a table with a unique index on (time, host, region) in each
    /// round: what PostgreSQL itself takes to keep one row per series and time.
    #[arg(long)]
    indexed: bool,
}

/// The Influx database (schema) Sluice writes to, and the schema of psql's table.
const SLUICE_SCHEMA: &str = "sluice_bench_influx";
const PSQL_SCHEMA: &str = "sluice_bench_influx_csv";
/// The first point's time: 2023-11-14 22:13:20 UTC.
const START_SECONDS: i64 = 1_700_000_000;

/// The benchmark's rows: line protocol batches and the same rows as one CSV file.
struct Workload {
    batches: Vec<Bytes>,
    line_protocol_bytes: usize,
    csv: tempfile::NamedTempFile,
}

/// Deterministic values: a xorshift generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A percentage with two decimals, as text the parser and psql both read exactly.
    fn percent(&mut self) -> String {
        let hundredths = self.next() % 10_000;
        format!("{}.{:02}", hundredths / 100, hundredths % 100)
    }
}

/// `YYYY-MM-DD HH:MM:SS+00` of a Unix time (days to civil date after Howard Hinnant's method).
fn utc_text(seconds: i64, out: &mut String) {
    let days = seconds.div_euclid(86_400);
    let secs = seconds.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let _ = write!(
        out,
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}+00",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    );
}

impl Workload {
    fn build(args: &InfluxArgs) -> Result<Workload> {
        use std::io::Write;
        let regions = ["eu-west-1", "eu-central-1", "us-east-1", "us-west-2"];
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut batches = Vec::new();
        let mut body = String::new();
        let mut csv_text = String::new();
        let mut line_protocol_bytes = 0;
        for i in 0..args.points {
            let host = i % args.hosts.max(1);
            let region = regions[host % regions.len()];
            // One point per host per second.
            let seconds = START_SECONDS + (i / args.hosts.max(1)) as i64;
            let (user, system, idle) = (rng.percent(), rng.percent(), rng.percent());
            let _ = writeln!(
                body,
                "cpu,host=host{host:04},region={region} usage_user={user},usage_system={system},usage_idle={idle} {seconds}000000000"
            );
            utc_text(seconds, &mut csv_text);
            let _ = writeln!(csv_text, ",host{host:04},{region},{user},{system},{idle}");
            if (i + 1) % args.batch == 0 || i + 1 == args.points {
                line_protocol_bytes += body.len();
                batches.push(Bytes::from(std::mem::take(&mut body)));
            }
        }
        let mut csv = tempfile::NamedTempFile::new().context("creating the CSV file")?;
        csv.write_all(csv_text.as_bytes())?;
        csv.flush()?;
        Ok(Workload {
            batches,
            line_protocol_bytes,
            csv,
        })
    }
}

/// What one contender's load took: wall seconds, and CPU seconds of the client and gateway
/// process(es) and of the PostgreSQL backends that served them.
#[derive(Debug, Clone, Copy)]
struct Run {
    secs: f64,
    client_cpu: f64,
    backend_cpu: f64,
}

/// The `application_name` of the benchmark's write API pool, to find its backends.
const SLUICE_APPLICATION: &str = "sluice-bench-influx";

/// Posts every batch through a fresh in-process write API (cold cache, table created by the
/// first write): the seconds from the first request to the last answer, the CPU of this
/// process (server and clients) meanwhile, and that of the pool's backends.
fn run_sluice(
    runtime: &tokio::runtime::Runtime,
    target: &Target,
    args: &InfluxArgs,
    work: &Workload,
) -> Result<Run> {
    runtime.block_on(async {
        let mut settings = PoolSettings::new();
        settings.set_max_size(args.writers.max(1));
        let mut config = Config::parse(&target.url)?;
        config.set_application_name(SLUICE_APPLICATION);
        let pool = Pool::new(config, settings);
        let duplicates = if args.duplicates == "keep" {
            Duplicates::Keep
        } else {
            Duplicates::Merge
        };
        let config = InfluxConfig {
            duplicates,
            ..InfluxConfig::default()
        };
        let api = InfluxApi::new(pool.clone(), config);
        let mut router = sluice_http::Router::new();
        api.mount_all(&mut router);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(sluice_http::run(
            listener,
            router,
            sluice_http::ServerOptions::default(),
            async move {
                let _ = stopped.await;
            },
        ));
        let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new()).build_http();
        let uri: http::Uri = format!("http://{addr}/write?db={SLUICE_SCHEMA}").parse()?;
        let next = Arc::new(AtomicUsize::new(0));
        let batches = Arc::new(work.batches.clone());
        let cpu_before = self_cpu_seconds(StatTicks::Own)?;
        let start = Instant::now();
        let mut writers = Vec::new();
        for _ in 0..args.writers.max(1) {
            let (client, uri, next, batches) =
                (client.clone(), uri.clone(), next.clone(), batches.clone());
            writers.push(tokio::spawn(async move {
                loop {
                    let Some(body) = batches.get(next.fetch_add(1, Ordering::Relaxed)) else {
                        return Ok::<(), anyhow::Error>(());
                    };
                    let request = http::Request::post(uri.clone()).body(Full::new(body.clone()))?;
                    let response = client.request(request).await?;
                    let status = response.status();
                    let text = response.into_body().collect().await?.to_bytes();
                    if status != http::StatusCode::NO_CONTENT {
                        bail!(
                            "the write answered {status}: {}",
                            String::from_utf8_lossy(&text)
                        );
                    }
                }
            }));
        }
        for writer in writers {
            writer.await??;
        }
        let secs = start.elapsed().as_secs_f64();
        let client_cpu = self_cpu_seconds(StatTicks::Own)? - cpu_before;
        // The pool's connections are still open: their backends' CPU is all this load's.
        let pids = target.psql(&format!(
            "SELECT pid FROM pg_stat_activity WHERE application_name = '{SLUICE_APPLICATION}'"
        ))?;
        let mut backend_cpu = 0.0;
        for pid in pids.lines().filter_map(|p| p.trim().parse::<u32>().ok()) {
            backend_cpu += cpu_seconds(pid)?;
        }
        let _ = stop.send(());
        let _ = server.await;
        pool.close().await;
        Ok(Run {
            secs,
            client_cpu,
            backend_cpu,
        })
    })
}

/// Loads the CSV with `psql \copy` into the table of the same shape: wall seconds, psql's CPU
/// and its backend's (read by psql itself from `/proc` after the copy, before it disconnects).
fn run_psql(target: &Target, work: &Workload, table: &str) -> Result<Run> {
    let file = work.csv.path().to_string_lossy().into_owned();
    let script = format!(
        "SELECT pg_backend_pid() AS pid \\gset\n\\copy {PSQL_SCHEMA}.{table} FROM '{file}' csv\n\
         \\setenv BACKEND :pid\n\\! cat /proc/$BACKEND/stat\n"
    );
    let children_before = self_cpu_seconds(StatTicks::Children)?;
    let start = Instant::now();
    let mut child = Command::new(target.program("psql"))
        .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", &target.url])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .context("running psql")?;
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write as _;
        stdin.write_all(script.as_bytes())?;
    }
    let out = child.wait_with_output()?;
    let secs = start.elapsed().as_secs_f64();
    if !out.status.success() {
        bail!(
            "psql \\copy failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let client_cpu = self_cpu_seconds(StatTicks::Children)? - children_before;
    let stat = String::from_utf8_lossy(&out.stdout);
    let backend_ticks = stat_ticks(stat.lines().last().unwrap_or(""), StatTicks::Own)
        .context("psql printed no /proc stat of its backend")?;
    Ok(Run {
        secs,
        client_cpu,
        backend_cpu: backend_ticks as f64 / crate::setup::clock_ticks_per_second(),
    })
}

pub fn run(args: InfluxArgs) -> Result<()> {
    let target = Target::open(args.database.clone())?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.threads.max(1))
        .enable_all()
        .build()?;
    eprintln!("building {} points ...", args.points);
    let work = Workload::build(&args)?;
    println!(
        "sluice-bench influx: {} points in {}-line batches ({} requests, {:.1} MB of line protocol), \
         {} writers, {} hosts, duplicates = {}, {} rounds, server {}, {} cores",
        args.points,
        args.batch,
        work.batches.len(),
        work.line_protocol_bytes as f64 / 1e6,
        args.writers,
        args.hosts,
        args.duplicates,
        args.rounds,
        target.psql("SHOW server_version")?,
        std::thread::available_parallelism().map_or(0, usize::from),
    );
    target.psql(&format!(
        "DROP SCHEMA IF EXISTS {PSQL_SCHEMA} CASCADE; CREATE SCHEMA {PSQL_SCHEMA}; \
         CREATE TABLE {PSQL_SCHEMA}.cpu (time timestamptz NOT NULL, host text, region text, \
         usage_user float8, usage_system float8, usage_idle float8); \
         CREATE TABLE {PSQL_SCHEMA}.cpu_unique (LIKE {PSQL_SCHEMA}.cpu); \
         CREATE UNIQUE INDEX ON {PSQL_SCHEMA}.cpu_unique (time, host, region)"
    ))?;
    let (mut sluice_runs, mut psql_runs, mut floor) = (Vec::new(), Vec::new(), Vec::new());
    let mut indexed_runs = Vec::new();
    for round in 0..args.rounds {
        let mut line = format!("round {}:", round + 1);
        for turn in 0..2 {
            if (round + turn) % 2 == 0 {
                target.psql(&format!("DROP SCHEMA IF EXISTS {SLUICE_SCHEMA} CASCADE"))?;
                let run = run_sluice(&runtime, &target, &args, &work)?;
                let rows = target.psql(&format!("SELECT count(*) FROM {SLUICE_SCHEMA}.cpu"))?;
                if rows != args.points.to_string() {
                    bail!("sluice wrote {rows} rows, not {}", args.points);
                }
                let _ = write!(line, " sluice {:.3}s", run.secs);
                sluice_runs.push(run);
            } else {
                target.psql(&format!("TRUNCATE {PSQL_SCHEMA}.cpu"))?;
                let run = run_psql(&target, &work, "cpu")?;
                let rows = target.psql(&format!("SELECT count(*) FROM {PSQL_SCHEMA}.cpu"))?;
                if rows != args.points.to_string() {
                    bail!("psql loaded {rows} rows, not {}", args.points);
                }
                let _ = write!(line, " psql {:.3}s", run.secs);
                psql_runs.push(run);
            }
        }
        if args.floor {
            target.psql(&format!("TRUNCATE {PSQL_SCHEMA}.cpu"))?;
            let again = run_psql(&target, &work, "cpu")?;
            let _ = write!(line, " psql again {:.3}s", again.secs);
            if let Some(first) = psql_runs.last() {
                floor.push(first.secs / again.secs);
            }
        }
        if args.indexed {
            target.psql(&format!("TRUNCATE {PSQL_SCHEMA}.cpu_unique"))?;
            let run = run_psql(&target, &work, "cpu_unique")?;
            let _ = write!(line, " psql into a unique index {:.3}s", run.secs);
            indexed_runs.push(run);
        }
        eprintln!("{line}");
    }
    // The two tables must hold the same rows.
    let differ = target.psql(&format!(
        "SELECT count(*) FROM (SELECT time, host, region, usage_user, usage_system, usage_idle \
         FROM {SLUICE_SCHEMA}.cpu EXCEPT ALL \
         SELECT time, host, region, usage_user, usage_system, usage_idle FROM {PSQL_SCHEMA}.cpu) d"
    ))?;
    target.psql(&format!(
        "DROP SCHEMA {SLUICE_SCHEMA} CASCADE; DROP SCHEMA {PSQL_SCHEMA} CASCADE"
    ))?;
    let medians = |runs: &[Run]| {
        let of = |f: fn(&Run) -> f64| median(&runs.iter().map(f).collect::<Vec<_>>());
        (of(|r| r.secs), of(|r| r.client_cpu), of(|r| r.backend_cpu))
    };
    let (s, s_client, s_backend) = medians(&sluice_runs);
    let (p, p_client, p_backend) = medians(&psql_runs);
    // CPU per point, in microseconds.
    let per_point = |cpu: f64| cpu * 1e6 / args.points as f64;
    if !floor.is_empty() {
        let (low, high) = floor
            .iter()
            .fold((f64::MAX, f64::MIN), |(l, h), r| (l.min(*r), h.max(*r)));
        println!("noise floor: psql against itself {low:.2}-{high:.2} x in these rounds");
    }
    let rate = |secs: f64| args.points as f64 / secs;
    let mut lines = vec![
        Line {
            case: "`psql \\copy ... csv` (one COPY, same table shape)".into(),
            figure: format!("{:.0} points/s ({p:.3} s)", rate(p)),
            note: format!(
                "reference; CPU per point: psql {:.2} us + its backend {:.2} us",
                per_point(p_client),
                per_point(p_backend)
            ),
        },
        Line {
            case: format!(
                "sluice `POST /write` ({} writers, in-process server, {} threads, \
                     duplicates = {})",
                args.writers, args.threads, args.duplicates
            ),
            figure: format!("{:.0} points/s ({s:.3} s)", rate(s)),
            note: format!(
                "{:.2} x the rate of psql (bar >= 0.7); CPU per point: clients and server \
                     {:.2} us + backends {:.2} us; rows differing from psql's: {differ}",
                p / s,
                per_point(s_client),
                per_point(s_backend)
            ),
        },
    ];
    if !indexed_runs.is_empty() {
        let (i, i_client, i_backend) = medians(&indexed_runs);
        lines.push(Line {
            case: "`psql \\copy ... csv` into a table with a unique index on (time, host, region)"
                .into(),
            figure: format!("{:.0} points/s ({i:.3} s)", rate(i)),
            note: format!(
                "{:.2} x the rate of psql; sluice is {:.2} x this; CPU per point: psql {:.2} us \
                 + its backend {:.2} us",
                p / i,
                i / s,
                per_point(i_client),
                per_point(i_backend)
            ),
        });
    }
    print(
        &format!(
            "{} points `cpu,host=..,region=.. usage_user=..,usage_system=..,usage_idle=.. ts` \
             ({} hosts), {}-line batches",
            args.points, args.hosts, args.batch
        ),
        &lines,
    );
    Ok(())
}
