//! The read replicas benchmark: REST `GET` by key (`wrk -t2 -c64`) on four REST servers over the
//! same primary, alternating in one run: the primary alone, the same again (the pair gives the
//! noise floor), reads routed to "a replica" that is the primary itself under another URL (only
//! the routing differs: its overhead), and reads routed to a real streaming replica (with the
//! share of transactions each server answered, from `pg_stat_database`). The servers run in this
//! process, each with its own pool, so the routing is the only thing that differs between them.
//! Then the floor and the overhead again with each pair loaded at the same time, which this
//! shared machine's noise affects alike.

use crate::report::{Line, median, print};
use crate::setup::Target;
use anyhow::{Context, Result};
use clap::Args;
use sluice_http::{Router, ServerOptions};
use sluice_pg::pool::{PRIMARY_APPLICATION_NAME, ReadPools};
use sluice_pg::{Pool, PoolSettings};
use sluice_rest::RestConfig;
use sluice_rest::api::{RestApi, SchemaSource};
use std::sync::Arc;
use std::time::Duration;

/// Options of `sluice-bench replicas`.
#[derive(Debug, Args)]
pub struct ReplicasArgs {
    /// Primary URL (default: DATABASE_URL, else the embedded cluster, which then starts a
    /// streaming replica of itself).
    #[arg(short = 'd', long)]
    database: Option<String>,
    /// A streaming replica of the primary (needed with --database).
    #[arg(long)]
    replica_url: Option<String>,
    /// Rounds; each runs every contender once, in rotating order.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Seconds of each wrk run.
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    /// pgbench scale (10 gives 1,000,000 accounts).
    #[arg(long, default_value_t = 10)]
    scale: u32,
    /// Connections of each server's pool (and of its replica's).
    #[arg(long, default_value_t = 8)]
    pool_size: usize,
}

/// One REST server of the comparison.
struct Contender {
    name: &'static str,
    base: String,
    rps: Vec<f64>,
    /// Server CPU (this process's, while only its wrk runs) per request, in microseconds.
    cpu_us: Vec<f64>,
}

pub fn run(args: ReplicasArgs) -> Result<()> {
    let mut target = Target::open(args.database.clone())?;
    target.ensure_pgbench(args.scale)?;
    let replica_url = match &args.replica_url {
        Some(url) => url.clone(),
        None => target
            .start_replica()
            .context("starting a streaming replica (or give --replica-url)")?,
    };
    let accounts = u64::from(args.scale) * 100_000;
    let dir = std::env::current_dir()?.join("target/sluice-bench/replicas");
    std::fs::create_dir_all(&dir)?;
    let script = dir.join("point.lua");
    std::fs::write(
        &script,
        format!(
            "math.randomseed(os.time())\nrequest = function()\n  return wrk.format(\"GET\", \
             \"/pgbench_accounts?aid=eq.\" .. math.random(1, {accounts}))\nend\n"
        ),
    )?;
    println!(
        "sluice-bench replicas: {} rounds of {} s, server {}, {} cores, pool of {} per server",
        args.rounds,
        args.seconds,
        target.psql("SHOW server_version")?,
        std::thread::available_parallelism().map_or(0, usize::from),
        args.pool_size
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    // The primary under another URL: the same server, reached under another application name.
    let alias = with_param(&target.url, "application_name=sluice-bench-alias");
    let (mut contenders, stop) = runtime.block_on(async {
        let mut contenders = Vec::new();
        let mut stops = Vec::new();
        let setups: [(&'static str, Option<(&str, bool)>); 4] = [
            ("primary alone", None),
            ("primary alone (twin)", None),
            (
                "primary, reads routed to itself as a replica",
                Some((&alias, true)),
            ),
            ("primary + 1 streaming replica", Some((&replica_url, false))),
        ];
        for (name, replica) in setups {
            let (base, stop) = serve(&target.url, replica, args.pool_size).await?;
            contenders.push(Contender {
                name,
                base,
                rps: Vec::new(),
                cpu_us: Vec::new(),
            });
            stops.push(stop);
        }
        anyhow::Ok((contenders, stops))
    })?;
    let count = contenders.len();
    let (mut primary_share, mut replica_share) = (Vec::new(), Vec::new());
    for round in 0..args.rounds {
        for turn in 0..count {
            let index = (round + turn) % count;
            let contender = &mut contenders[index];
            let before = (
                crate::setup::cpu_seconds(std::process::id())?,
                commits(&target, &target.url)?,
                commits(&target, &replica_url)?,
            );
            let (rps, _p99) = crate::http::wrk(&contender.base, &script, args.seconds)?;
            let cpu = crate::setup::cpu_seconds(std::process::id())? - before.0;
            contender.rps.push(rps);
            contender
                .cpu_us
                .push(cpu * 1e6 / (rps * args.seconds as f64));
            if index == count - 1 {
                let on_primary = commits(&target, &target.url)? - before.1;
                let on_replica = commits(&target, &replica_url)? - before.2;
                let total = (on_primary + on_replica).max(1) as f64;
                primary_share.push(on_primary as f64 / total);
                replica_share.push(on_replica as f64 / total);
            }
        }
        eprintln!(
            "round {}: {}",
            round + 1,
            contenders
                .iter()
                .map(|c| format!(
                    "{} {:.0} req/s",
                    c.name,
                    c.rps.last().copied().unwrap_or(f64::NAN)
                ))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    // The same comparisons with each pair loaded at the same time (two wrk of 32 connections):
    // both sides see the same machine, so the other tenants' noise mostly cancels out.
    let mut paired: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    for round in 0..args.rounds {
        for turn in 0..2 {
            let which = (round + turn) % 2;
            let (a, b) = (&contenders[0].base, &contenders[1 + which].base);
            // Alternate which side is started first.
            let [first, second] = if round % 2 == 0 {
                wrk_together([a, b], &script, args.seconds)?
            } else {
                let [second, first] = wrk_together([b, a], &script, args.seconds)?;
                [first, second]
            };
            paired[which].push(second / first);
        }
        eprintln!(
            "paired round {}: twin / alone {:.3}, routed to itself / alone {:.3}",
            round + 1,
            paired[0].last().copied().unwrap_or(f64::NAN),
            paired[1].last().copied().unwrap_or(f64::NAN)
        );
    }
    drop(stop);
    drop(runtime);
    print(
        "The same GET, each pair loaded at once (two wrk -t1 -c32 side by side)",
        &[
            Line {
                case: "primary alone (twin) / primary alone".into(),
                figure: format!("{:.3} x", median(&paired[0])),
                note: format!("the noise floor; rounds {}", rounds(&paired[0])),
            },
            Line {
                case: "reads routed to the primary itself as a replica / primary alone".into(),
                figure: format!("{:.3} x", median(&paired[1])),
                note: format!(
                    "the routing overhead (bar >= 0.95); rounds {}",
                    rounds(&paired[1])
                ),
            },
        ],
    );
    let alone = median(&contenders[0].rps);
    let lines: Vec<Line> = contenders
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let rps = median(&c.rps);
            let note = match i {
                0 => "reference".to_owned(),
                1 => format!("{:.3} x: the noise floor", rps / alone),
                2 => format!("{:.3} x: the routing overhead (bar >= 0.95)", rps / alone),
                _ => format!(
                    "{:.3} x; transactions answered: replica {:.1} %, primary {:.1} %",
                    rps / alone,
                    100.0 * median(&replica_share),
                    100.0 * median(&primary_share)
                ),
            };
            Line {
                case: c.name.to_owned(),
                figure: format!("{rps:.0} req/s, server CPU {:.1} µs/req", median(&c.cpu_us)),
                note,
            }
        })
        .collect();
    print(
        &format!(
            "GET /pgbench_accounts?aid=eq.N (random N of {accounts}), wrk -t2 -c64, one REST \
             server per contender in one process, pools of {}",
            args.pool_size
        ),
        &lines,
    );
    Ok(())
}

/// Each round's ratio, to two decimals.
fn rounds(values: &[f64]) -> String {
    values
        .iter()
        .map(|v| format!("{v:.2}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Two `wrk -t1 -c32` at once, one per server: each one's requests per second.
fn wrk_together(bases: [&str; 2], script: &std::path::Path, seconds: u64) -> Result<[f64; 2]> {
    let spawn = |base: &str| {
        std::process::Command::new("wrk")
            .args(["-t1", "-c32", "-d"])
            .arg(format!("{seconds}s"))
            .arg("-s")
            .arg(script)
            .arg(format!("http://{base}"))
            .stdout(std::process::Stdio::piped())
            .spawn()
            .context("running wrk (apt-get install wrk)")
    };
    let children = [spawn(bases[0])?, spawn(bases[1])?];
    let mut rps = [0.0; 2];
    for (slot, child) in rps.iter_mut().zip(children) {
        let out = child.wait_with_output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        anyhow::ensure!(
            out.status.success() && !text.contains("Non-2xx"),
            "wrk failed or saw errors:\n{text}"
        );
        *slot = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("Requests/sec:"))
            .and_then(|v| v.trim().parse().ok())
            .context("wrk printed no Requests/sec")?;
    }
    Ok(rps)
}

/// `url` with one more query parameter.
fn with_param(url: &str, param: &str) -> String {
    if url.contains('?') {
        format!("{url}&{param}")
    } else {
        format!("{url}?{param}")
    }
}

/// Transactions committed so far in the server's current database (`pg_stat_database`).
fn commits(target: &Target, url: &str) -> Result<u64> {
    let text = target.psql_at(
        url,
        "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()",
    )?;
    text.trim()
        .parse()
        .with_context(|| format!("xact_commit {text:?}"))
}

/// A REST server over the primary at `url` on 127.0.0.1:0, reads routed to `replica` when
/// given (`true`: it is the primary itself, taken as a replica); its address and the sender
/// that stops it.
async fn serve(
    url: &str,
    replica: Option<(&str, bool)>,
    pool_size: usize,
) -> Result<(String, tokio::sync::oneshot::Sender<()>)> {
    let mut settings = PoolSettings::new();
    settings.set_max_size(pool_size);
    let mut config = sluice_pg::Config::parse(url)?;
    config.set_application_name(PRIMARY_APPLICATION_NAME);
    let primary = Pool::new(config, settings.clone());
    let rest = RestConfig::default();
    let cache = {
        let mut conn = primary.get().await?;
        Arc::new(sluice_rest::schema::load(&mut conn, &rest.schemas).await?)
    };
    let mut api = RestApi::new(primary.clone(), rest, SchemaSource::Fixed(cache));
    if let Some((replica, is_primary)) = replica {
        let urls = [replica.to_owned()];
        let max_lag = Duration::from_secs(10);
        let pools = if is_primary {
            ReadPools::connect_allowing_primary(primary.clone(), &urls, settings, max_lag).await?
        } else {
            ReadPools::connect(primary.clone(), &urls, settings, max_lag).await?
        };
        api = api.with_replicas(pools);
    }
    let mut router = Router::new();
    router.mount("", Arc::new(api));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = listener.local_addr()?.to_string();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let options = ServerOptions {
        access_log: false,
        ..ServerOptions::default()
    };
    tokio::spawn(sluice_http::run(listener, router, options, async move {
        let _ = stopped.await;
    }));
    Ok((base, stop))
}
