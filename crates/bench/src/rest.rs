//! The automatic REST API benchmark: `sluice serve` (REST and a view over pgbench_accounts in one
//! process) side by side with the same GET through the view and pgbench, `sluice export` and
//! PostgREST's own statement for a whole table, `sluice import` and PostgREST's statement for a
//! bulk POST, seed 001's concurrent small POSTs, and the schema cache's load time for 1,000
//! tables; alternating and repeated.

use crate::http::{Serve, print_unavailable, request, timed_digest, view_file, wrk, wrk_with};
use crate::report::{Line, median, print};
use crate::setup::Target;
use anyhow::{Context, Result, bail};
use clap::Args;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Options of `sluice-bench rest`.
#[derive(Debug, Args)]
pub struct RestArgs {
    /// Server URL (default: DATABASE_URL, else an embedded cluster).
    #[arg(short = 'd', long)]
    database: Option<String>,
    /// Rounds; each runs every contender once, in rotating order.
    #[arg(long, default_value_t = 3)]
    pub(crate) rounds: usize,
    /// Seconds of each wrk and pgbench run.
    #[arg(long, default_value_t = 10)]
    pub(crate) seconds: u64,
    /// Seconds of each load run (seed 001's POSTs).
    #[arg(long, default_value_t = 30)]
    load_seconds: u64,
    /// pgbench scale (20 gives 2,000,000 accounts).
    #[arg(long, default_value_t = 20)]
    pub(crate) scale: u32,
    /// Rows of the bulk POST.
    #[arg(long, default_value_t = 100_000)]
    bulk_rows: usize,
    /// The sluice binary (default: the one next to this benchmark).
    #[arg(long)]
    sluice: Option<PathBuf>,
    /// `jwt_cache_max_lifetime` of the authenticating server in the auth case (0: each
    /// request verifies its token).
    #[arg(long, default_value_t = 0)]
    pub(crate) jwt_cache: u64,
    /// Connections of the serve pool.
    #[arg(long, default_value_t = 8)]
    pub(crate) pool_size: usize,
    /// The cases to run, comma-separated: point, auth, https, all, bulk, load, schema.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "point,auth,https,all,bulk,load,schema"
    )]
    cases: Vec<String>,
}

const CASES: [&str; 7] = ["point", "auth", "https", "all", "bulk", "load", "schema"];
const BULK_TABLE: &str = "sluice_bench_rest_bulk";
const LOAD_TABLE: &str = "sluice_bench_rest_load";
const SCHEMA: &str = "sluice_bench_rest_schema";
const EMPTY_SCHEMA: &str = "sluice_bench_rest_empty";

const REST_POINT: &str = r#"-- One account by a random key per request, through the REST API.
math.randomseed(os.time())
request = function()
  return wrk.format("GET", "/pgbench_accounts?aid=eq." .. math.random(1, 2000000))
end
"#;

pub fn run(args: RestArgs) -> Result<()> {
    crate::setup::check_cases(&args.cases, &CASES)?;
    let runs = |case: &str| args.cases.iter().any(|c| c == case);
    let target = Target::open(args.database.clone())?;
    target.ensure_pgbench(args.scale)?;
    let sluice = crate::setup::sluice_binary(args.sluice.as_deref())?;
    let dir = std::env::current_dir()?.join("target/sluice-bench/rest");
    std::fs::create_dir_all(&dir)?;
    let views = dir.join("accounts.json");
    std::fs::write(&views, view_file())?;
    for table in [BULK_TABLE, LOAD_TABLE] {
        target.psql(&format!("DROP TABLE IF EXISTS {table}"))?;
        target.psql(&format!("CREATE TABLE {table} (LIKE pgbench_accounts)"))?;
    }
    println!(
        "sluice-bench rest: {} rounds of {} s, server {}, {} cores, sluice {}",
        args.rounds,
        args.seconds,
        target.psql("SHOW server_version")?,
        std::thread::available_parallelism().map_or(0, usize::from),
        sluice.display()
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let serve = Serve::start(
        &sluice,
        &target.url,
        port,
        &views,
        args.pool_size,
        "session",
    )?;
    let result = (|| -> Result<()> {
        if runs("point") {
            point(&target, &serve, &dir, &args)?;
        }
        if runs("auth") {
            crate::rest_auth::run(&target, &serve, &sluice, &dir, &views, &args)?;
        }
        if runs("https") {
            crate::rest_auth::run_https(&target, &sluice, &dir, &views, &args)?;
        }
        if runs("all") {
            all_rows(&target, &serve, &sluice, &args)?;
        }
        if runs("bulk") {
            bulk(&target, &serve, &sluice, &dir, &args)?;
        }
        if runs("load") {
            load(&serve, &dir, &args)?;
        }
        if runs("schema") {
            schema_load(&target, &args)?;
        }
        Ok(())
    })();
    drop(serve);
    for table in [BULK_TABLE, LOAD_TABLE] {
        let _ = target.psql(&format!("DROP TABLE IF EXISTS {table}"));
    }
    let _ = target.psql(&format!("DROP SCHEMA IF EXISTS {SCHEMA} CASCADE"));
    result
}

/// (a) One row by key, 64 connections: the REST API, the same row through a view, pgbench.
fn point(target: &Target, serve: &Serve, dir: &Path, args: &RestArgs) -> Result<()> {
    let title = format!(
        "GET /pgbench_accounts?aid=eq.N (random N), 64 HTTP connections (wrk -t2 -c64), serve pool of {}",
        args.pool_size
    );
    if request(&serve.base, "GET", "/pgbench_accounts?aid=eq.1", &[], &[])
        .map_or(true, |(s, _)| s != 200)
    {
        print_unavailable(&title, "the REST GET of one row");
        return Ok(());
    }
    let rest_script = dir.join("rest_point.lua");
    let view_script = dir.join("view_point.lua");
    std::fs::write(&rest_script, REST_POINT)?;
    std::fs::write(&view_script, crate::http::WRK_SCRIPT)?;
    let (mut rest, mut rest_p99, mut view, mut pg) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for round in 0..args.rounds {
        for turn in 0..3 {
            match (round + turn) % 3 {
                0 => {
                    let (rps, p99) = wrk(&serve.base, &rest_script, args.seconds)?;
                    rest.push(rps);
                    rest_p99.push(p99);
                }
                1 => view.push(wrk(&serve.base, &view_script, args.seconds)?.0),
                _ => pg.push(target.pgbench_select_only(args.seconds)?),
            }
        }
        eprintln!(
            "point round {}: REST {:.0} req/s, view {:.0} req/s, pgbench {:.0} tps",
            round + 1,
            rest.last().copied().unwrap_or(f64::NAN),
            view.last().copied().unwrap_or(f64::NAN),
            pg.last().copied().unwrap_or(f64::NAN)
        );
    }
    let (r, v, p) = (median(&rest), median(&view), median(&pg));
    print(
        &title,
        &[
            Line {
                case: "`pgbench -S -M prepared -c 8 -j 2`".into(),
                figure: format!("{p:.0} tps"),
                note: "reference".into(),
            },
            Line {
                case: "`sluice serve`, the same GET through a view".into(),
                figure: format!("{v:.0} req/s"),
                note: format!("{:.2} x pgbench", v / p),
            },
            Line {
                case: "`sluice serve`, REST `GET /pgbench_accounts?aid=eq.N`".into(),
                figure: format!("{r:.0} req/s, p99 {:.2} ms", median(&rest_p99)),
                note: format!(
                    "{:.2} x the view (bar >= 0.9), {:.2} x pgbench (bar >= 0.6)",
                    r / v,
                    r / p
                ),
            },
        ],
    );
    Ok(())
}

/// The PIDs of the server's backends (processes named postgres other than the postmaster's
/// helpers are included; what matters is the peak over all of them).
fn postgres_pids() -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|comm| comm.trim() == "postgres")
        })
        .collect()
}

/// The largest private memory (`RssAnon`: palloc'd memory such as a `json_agg` being built,
/// not the shared buffers every backend maps) among PostgreSQL's processes, sampled every 5 ms
/// from `start` until `stop`, in MiB.
struct PostgresMemory {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    sampler: std::thread::JoinHandle<u64>,
}

impl PostgresMemory {
    fn start() -> PostgresMemory {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let sampler = std::thread::spawn(move || {
            let mut peak_kib = 0;
            loop {
                for pid in postgres_pids() {
                    let kib = std::fs::read_to_string(format!("/proc/{pid}/status"))
                        .ok()
                        .and_then(|status| {
                            status
                                .lines()
                                .find_map(|l| l.strip_prefix("RssAnon:"))
                                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
                        })
                        .unwrap_or(0);
                    peak_kib = peak_kib.max(kib);
                }
                if flag.load(std::sync::atomic::Ordering::Relaxed) {
                    return peak_kib;
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        });
        PostgresMemory { stop, sampler }
    }

    fn stop(self) -> f64 {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.sampler.join().unwrap_or(0) as f64 / 1024.0
    }
}

/// (b) The whole table as JSON: the REST API against `sluice export --format json` and against
/// the statement PostgREST sends for it (one json_agg over the result), each with the server's
/// and PostgreSQL's peak memory.
fn all_rows(target: &Target, serve: &Serve, sluice: &Path, args: &RestArgs) -> Result<()> {
    let rows = u64::from(args.scale) * 100_000;
    let title = format!("GET /pgbench_accounts ({rows} rows) as JSON");
    let curl_args: Vec<String> = [
        "-sS",
        "--fail",
        "-H",
        "Accept: application/json",
        &format!("http://{}/pgbench_accounts", serve.base),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let export_args: Vec<String> = [
        "export",
        "-d",
        &target.url,
        "--format",
        "json",
        "SELECT * FROM pgbench_accounts",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // PostgREST's statement for a GET of the whole table, through sluice-pg.
    let postgrest_args: Vec<String> = [
        "export",
        "-d",
        &target.url,
        "--format",
        "csv",
        "--no-header",
        "SELECT coalesce(json_agg(_postgrest_t), '[]')::character varying AS body FROM (SELECT \"pgbench_accounts\".* FROM \"public\".\"pgbench_accounts\") _postgrest_t",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let curl = PathBuf::from("curl");
    if timed_digest(&curl, &curl_args).is_err() {
        print_unavailable(&title, "the REST GET of all rows");
        return Ok(());
    }
    let (mut rest, mut export, mut postgrest) = (Vec::new(), Vec::new(), Vec::new());
    let (mut rest_rss, mut rest_pg, mut postgrest_pg) = (Vec::new(), Vec::new(), Vec::new());
    let mut lens = (0, 0, 0);
    for round in 0..args.rounds {
        for turn in 0..3 {
            match (round + turn) % 3 {
                0 => {
                    serve.reset_peak()?;
                    let memory = PostgresMemory::start();
                    let (secs, len, _) = timed_digest(&curl, &curl_args)?;
                    rest_pg.push(memory.stop());
                    rest_rss.push(serve.memory_kib("VmHWM")? as f64 / 1024.0);
                    rest.push(secs);
                    lens.0 = len;
                }
                1 => {
                    let (secs, len, _) = timed_digest(sluice, &export_args)?;
                    export.push(secs);
                    lens.1 = len;
                }
                _ => {
                    let memory = PostgresMemory::start();
                    let (secs, len, _) = timed_digest(sluice, &postgrest_args)?;
                    postgrest_pg.push(memory.stop());
                    postgrest.push(secs);
                    lens.2 = len;
                }
            }
        }
        eprintln!(
            "all rows round {}: REST {:.3}s (server peak {:.1} MiB, PostgreSQL peak {:.1} MiB), export {:.3}s, PostgREST's json_agg {:.3}s (PostgreSQL peak {:.1} MiB)",
            round + 1,
            rest.last().copied().unwrap_or(f64::NAN),
            rest_rss.last().copied().unwrap_or(f64::NAN),
            rest_pg.last().copied().unwrap_or(f64::NAN),
            export.last().copied().unwrap_or(f64::NAN),
            postgrest.last().copied().unwrap_or(f64::NAN),
            postgrest_pg.last().copied().unwrap_or(f64::NAN),
        );
    }
    let max = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    let (r, e, p) = (median(&rest), median(&export), median(&postgrest));
    print(
        &title,
        &[
            Line {
                case: "`sluice export --format json`".into(),
                figure: format!("{e:.3} s ({} bytes)", lens.1),
                note: "reference".into(),
            },
            Line {
                case:
                    "PostgREST's statement (`json_agg` of the result, one value) through sluice-pg"
                        .into(),
                figure: format!(
                    "{p:.3} s ({} bytes), PostgreSQL backend peak private memory {:.1} MiB",
                    lens.2,
                    max(&postgrest_pg)
                ),
                note: format!("{:.2} x export", p / e),
            },
            Line {
                case: "`sluice serve`, REST GET, `Accept: application/json`".into(),
                figure: format!(
                    "{r:.3} s ({} bytes), server peak RSS {:.1} MiB, PostgreSQL backend peak private memory {:.1} MiB",
                    lens.0,
                    max(&rest_rss),
                    max(&rest_pg)
                ),
                note: format!("{:.2} x export (bar <= 1.2); RSS bar <= 64 MiB", r / e),
            },
        ],
    );
    Ok(())
}

/// Rows for the bulk and load cases, like pgbench_accounts'.
fn account(i: usize) -> String {
    format!(
        r#"{{"aid": {i}, "bid": {}, "abalance": {}, "filler": "{:<84}"}}"#,
        i % 20 + 1,
        i % 1000,
        "x"
    )
}

/// (c) A 100,000-row JSON array POSTed, against `sluice import --format jsonl` of the same rows
/// and PostgREST's statement (the whole body as one parameter to json_populate_recordset).
fn bulk(target: &Target, serve: &Serve, sluice: &Path, dir: &Path, args: &RestArgs) -> Result<()> {
    let n = args.bulk_rows;
    let title = format!("POST of a {n}-row JSON array (bulk insert)");
    let array = dir.join("bulk.json");
    let lines = dir.join("bulk.jsonl");
    let mut json = String::with_capacity(n * 130);
    let mut jsonl = String::with_capacity(n * 130);
    json.push('[');
    for i in 1..=n {
        if i > 1 {
            json.push(',');
        }
        json.push_str(&account(i));
        jsonl.push_str(&account(i));
        jsonl.push('\n');
    }
    json.push(']');
    std::fs::write(&array, &json)?;
    std::fs::write(&lines, &jsonl)?;
    let body_mib = json.len() as f64 / (1 << 20) as f64;
    let truncate = || target.psql(&format!("TRUNCATE {BULK_TABLE}"));
    let post = |serve: &Serve| -> Result<(f64, f64)> {
        let before = serve.memory_kib("VmRSS")? as f64 / 1024.0;
        serve.reset_peak()?;
        let start = Instant::now();
        let out = std::process::Command::new("curl")
            .args([
                "-sS",
                "--fail",
                "-X",
                "POST",
                "-H",
                "Content-Type: application/json",
                "--data-binary",
            ])
            .arg(format!("@{}", array.display()))
            .arg(format!("http://{}/{BULK_TABLE}", serve.base))
            .output()
            .context("running curl")?;
        let secs = start.elapsed().as_secs_f64();
        if !out.status.success() {
            bail!(
                "the bulk POST failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let peak = serve.memory_kib("VmHWM")? as f64 / 1024.0;
        Ok((secs, peak - before))
    };
    let import_args: Vec<String> = vec![
        "import".into(),
        "-d".into(),
        target.url.clone(),
        "--format".into(),
        "jsonl".into(),
        BULK_TABLE.into(),
        lines.display().to_string(),
    ];
    let (mut rest, mut growth, mut import, mut postgrest) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for round in 0..args.rounds {
        for turn in 0..3 {
            truncate()?;
            match (round + turn) % 3 {
                0 => {
                    let (secs, grew) = post(serve)?;
                    rest.push(secs);
                    growth.push(grew);
                }
                1 => import.push(timed_digest(sluice, &import_args)?.0),
                _ => {
                    let exe = std::env::current_exe()?;
                    let start = Instant::now();
                    let out = std::process::Command::new(exe)
                        .args(["rest-worker", "postgrest-insert", &target.url, BULK_TABLE])
                        .arg(&array)
                        .output()?;
                    if !out.status.success() {
                        bail!(
                            "PostgREST's statement failed: {}",
                            String::from_utf8_lossy(&out.stderr)
                        );
                    }
                    postgrest.push(start.elapsed().as_secs_f64());
                }
            }
            let count = target.psql(&format!("SELECT count(*) FROM {BULK_TABLE}"))?;
            if count.trim() != n.to_string() {
                bail!("the bulk case loaded {count} rows, not {n}");
            }
        }
        eprintln!(
            "bulk round {}: REST {:.3}s (server RSS +{:.1} MiB), import {:.3}s, PostgREST's statement {:.3}s",
            round + 1,
            rest.last().copied().unwrap_or(f64::NAN),
            growth.last().copied().unwrap_or(f64::NAN),
            import.last().copied().unwrap_or(f64::NAN),
            postgrest.last().copied().unwrap_or(f64::NAN),
        );
    }
    let (r, i, p) = (median(&rest), median(&import), median(&postgrest));
    let grew = growth.iter().copied().fold(0.0, f64::max);
    print(
        &title,
        &[
            Line {
                case: "`sluice import --format jsonl`".into(),
                figure: format!("{:.0} rows/s", n as f64 / i),
                note: "reference".into(),
            },
            Line {
                case: "PostgREST's statement (`json_populate_recordset` over the body as one parameter)".into(),
                figure: format!("{:.0} rows/s", n as f64 / p),
                note: format!("{:.2} x import", i / p),
            },
            Line {
                case: format!("`sluice serve`, REST POST of the array ({body_mib:.1} MiB)"),
                figure: format!("{:.0} rows/s, server RSS growth {grew:.1} MiB", n as f64 / r),
                note: format!(
                    "{:.2} x import (bar >= 0.7); growth {:.2} x the body (bar <= 0.25)",
                    i / r,
                    grew / body_mib
                ),
            },
        ],
    );
    Ok(())
}

/// (d) Seed 001's load: POSTs of 50-row arrays from 10, 50 and 100 connections.
fn load(serve: &Serve, dir: &Path, args: &RestArgs) -> Result<()> {
    let body: Vec<String> = (1..=50).map(account).collect();
    let body = format!("[{}]", body.join(","));
    let script = dir.join("load.lua");
    std::fs::write(
        &script,
        format!(
            "wrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = \"application/json\"\nwrk.body = [[{body}]]\nwrk.path = \"/{LOAD_TABLE}\"\n"
        ),
    )?;
    let title = format!(
        "POST of 50-row JSON arrays to /{LOAD_TABLE}, {} s per level (seed 001's load)",
        args.load_seconds
    );
    let mut lines = Vec::new();
    for connections in [10, 50, 100] {
        let (rps, p99, timeouts) = wrk_with(&serve.base, &script, args.load_seconds, connections)?;
        eprintln!(
            "load with {connections} connections: {rps:.0} req/s, p99 {p99:.2} ms, {timeouts} timeouts"
        );
        lines.push(Line {
            case: format!("{connections} concurrent clients"),
            figure: format!("{rps:.0} req/s ({:.0} rows/s), p99 {p99:.2} ms", rps * 50.0),
            note: if timeouts == 0 {
                "0 failed requests: only 2xx, no socket error or timeout".into()
            } else {
                format!("{timeouts} requests over wrk's 2 s timeout (bar: 0 failed)")
            },
        });
    }
    print(&title, &lines);
    Ok(())
}

/// (e) The schema cache's load for a generated schema of 1,000 tables with foreign keys.
fn schema_load(target: &Target, args: &RestArgs) -> Result<()> {
    let mut sql = format!("DROP SCHEMA IF EXISTS {SCHEMA} CASCADE; CREATE SCHEMA {SCHEMA};");
    for i in 0..1000 {
        sql.push_str(&format!(
            "CREATE TABLE {SCHEMA}.t{i} (id int PRIMARY KEY, name text, created timestamptz{});",
            if i > 0 {
                format!(", parent_id int REFERENCES {SCHEMA}.t{} (id)", i - 1)
            } else {
                String::new()
            }
        ));
    }
    let exe = std::env::current_exe()?;
    let setup = dir_sql(&sql)?;
    let out = std::process::Command::new(&exe)
        .args(["rest-worker", "execute", &target.url, SCHEMA])
        .arg(&setup)
        .output()?;
    if !out.status.success() {
        bail!(
            "creating the schema failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    target.psql(&format!(
        "DROP SCHEMA IF EXISTS {EMPTY_SCHEMA}; CREATE SCHEMA {EMPTY_SCHEMA}"
    ))?;
    let load = |schema: &str| -> Result<f64> {
        let out = std::process::Command::new(&exe)
            .args(["rest-worker", "schema-load", &target.url, schema])
            .output()?;
        if !out.status.success() {
            bail!(
                "the schema load failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let text = String::from_utf8_lossy(&out.stdout);
        crate::report::field(&text, "seconds").context("the worker printed no seconds")
    };
    let (mut times, mut empty) = (Vec::new(), Vec::new());
    for _ in 0..args.rounds.max(3) {
        times.push(load(SCHEMA)?);
        empty.push(load(EMPTY_SCHEMA)?);
    }
    let _ = target.psql(&format!("DROP SCHEMA IF EXISTS {EMPTY_SCHEMA}"));
    let (t, e) = (median(&times), median(&empty));
    print(
        "Schema cache load, a generated schema of 1,000 tables with foreign keys",
        &[
            Line {
                case: "`sluice_rest::schema::load` of the 1,000 tables".into(),
                figure: format!("{:.0} ms", t * 1000.0),
                note: "bar <= 1 s".into(),
            },
            Line {
                case: "an empty exposed schema beside them (only exposed schemas are read)".into(),
                figure: format!("{:.0} ms", e * 1000.0),
                note: format!("{:.2} x the 1,000 tables' load", e / t),
            },
        ],
    );
    Ok(())
}

/// `sql` in a file for the worker.
fn dir_sql(sql: &str) -> Result<PathBuf> {
    let path = std::env::current_dir()?.join("target/sluice-bench/rest/schema.sql");
    std::fs::write(&path, sql)?;
    Ok(path)
}

/// Options of the hidden worker that runs a measured piece in its own process.
#[derive(Debug, Args)]
pub struct RestWorkerArgs {
    /// `postgrest-insert URL TABLE FILE`, `execute URL - FILE` or `schema-load URL SCHEMA`.
    what: String,
    url: String,
    name: String,
    file: Option<PathBuf>,
}

pub fn worker(args: RestWorkerArgs) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let mut conn = sluice_pg::Connection::connect(&args.url).await?;
        match args.what.as_str() {
            "postgrest-insert" => {
                let file = args.file.context("the body's file")?;
                let body = std::fs::read_to_string(file)?;
                let table = sluice_pg::sql::quote_ident(&args.name);
                let sql = format!(
                    "INSERT INTO {table} (aid, bid, abalance, filler) SELECT aid, bid, abalance, filler \
                     FROM json_populate_recordset(NULL::{table}, $1::json)"
                );
                conn.execute(&sql, &[&body]).await?;
            }
            "execute" => {
                let file = args.file.context("the SQL file")?;
                conn.batch_execute(&std::fs::read_to_string(file)?).await?;
            }
            "schema-load" => {
                let start = Instant::now();
                let cache = sluice_rest::schema::load(&mut conn, std::slice::from_ref(&args.name)).await?;
                let seconds = start.elapsed().as_secs_f64();
                println!("tables={} seconds={seconds}", cache.tables.len());
            }
            other => bail!("unknown worker {other:?}"),
        }
        Ok(())
    })
}
