//! The driver benchmark: bulk read, point selects and pipelining, each side by side.

use crate::report::{Line, field, median, print};
use crate::runs::{RunArgs, WorkerArgs, child};
use crate::setup::Target;
use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Options of `sluice-bench driver`.
#[derive(Debug, Args)]
pub struct DriverArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Which cases to run (all by default).
    #[arg(long, value_enum)]
    only: Vec<Case>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Case {
    Bulk,
    Point,
    Pipeline,
}

pub fn worker(args: WorkerArgs) -> Result<()> {
    crate::peers::run_worker(&args.kind, &args.url, args.amount)
}

/// Runs an external command with stdout to /dev/null; returns its wall time in seconds.
fn timed(program: &std::path::Path, args: &[&str]) -> Result<f64> {
    let start = Instant::now();
    let status = Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .status()
        .with_context(|| format!("running {}", program.display()))?;
    let secs = start.elapsed().as_secs_f64();
    if !status.success() {
        bail!("{} failed", program.display());
    }
    Ok(secs)
}

pub fn run(args: DriverArgs) -> Result<()> {
    let target = Target::open(args.run.database.clone())?;
    target.ensure_pgbench(args.run.scale)?;
    let cases = if args.only.is_empty() {
        vec![Case::Bulk, Case::Point, Case::Pipeline]
    } else {
        args.only.clone()
    };
    println!(
        "sluice-bench driver: {} rounds, server {}, {} cores",
        args.run.rounds,
        target.psql("SHOW server_version")?,
        std::thread::available_parallelism().map_or(0, usize::from)
    );
    for case in cases {
        match case {
            Case::Bulk => bulk(&target, &args)?,
            Case::Point => point(&target, &args)?,
            Case::Pipeline => pipeline(&target, &args)?,
        }
    }
    Ok(())
}

fn bulk(target: &Target, args: &DriverArgs) -> Result<()> {
    let psql = target.program("psql");
    let copy = "COPY (SELECT * FROM pgbench_accounts) TO STDOUT";
    let workers = ["bulk-sluice", "bulk-tokio", "bulk-floor"];
    let accounts = f64::from(args.run.scale) * 100_000.0;
    let mut t_copy = vec![];
    let (mut secs, mut rss) = (vec![vec![]; 3], vec![vec![]; 3]);
    for round in 0..args.run.rounds {
        for turn in 0..4 {
            match (round + turn) % 4 {
                0 => t_copy.push(timed(&psql, &["-X", "-d", &target.url, "-c", copy])?),
                i => {
                    let (out, wall) = child("worker", workers[i - 1], &target.url, 0)?;
                    if field(&out, "rows") != Some(accounts) {
                        bail!(
                            "{} did not read all {accounts} accounts: {out}",
                            workers[i - 1]
                        );
                    }
                    secs[i - 1].push(wall);
                    rss[i - 1].push(field(&out, "peak_rss_kib").unwrap_or(f64::NAN));
                }
            }
        }
        eprintln!(
            "bulk round {}: copy {:.3}s sluice {:.3}s tokio {:.3}s floor {:.3}s",
            round + 1,
            t_copy[round],
            secs[0][round],
            secs[1][round],
            secs[2][round]
        );
    }
    let c = median(&t_copy);
    let [s, t, f] = [0, 1, 2].map(|i| median(&secs[i]));
    let rss = |i: usize| median(&rss[i]) / 1024.0;
    print(
        "SELECT * FROM pgbench_accounts, every field read (wall time of the whole process)",
        &[
            Line {
                case: "psql COPY (SELECT ...) TO STDOUT > /dev/null".into(),
                figure: format!("{c:.3} s"),
                note: "reference".into(),
            },
            Line {
                case: "sluice-pg".into(),
                figure: format!("{s:.3} s, peak RSS {:.1} MiB", rss(0)),
                note: format!(
                    "{:.2} x COPY (bar <= 1.30); {:.2} x faster than tokio-postgres (bar >= 1.5); RSS bar <= 32 MiB",
                    s / c,
                    t / s
                ),
            },
            Line {
                case: "tokio-postgres".into(),
                figure: format!("{t:.3} s, peak RSS {:.1} MiB", rss(1)),
                note: format!("{:.2} x COPY", t / c),
            },
            Line {
                case: "floor: a client that only frames the messages (no driver can do less)"
                    .into(),
                figure: format!("{f:.3} s, peak RSS {:.1} MiB", rss(2)),
                note: format!(
                    "{:.2} x faster than tokio-postgres: the most any client could be; sluice-pg takes {:.2} x its time",
                    t / f,
                    s / f
                ),
            },
        ],
    );
    Ok(())
}

fn point(target: &Target, args: &DriverArgs) -> Result<()> {
    let workers = ["point-sluice", "point-tokio", "point-floor"];
    let (mut p, mut tps) = (vec![], vec![vec![]; 3]);
    for round in 0..args.run.rounds {
        for turn in 0..4 {
            match (round + turn) % 4 {
                0 => p.push(target.pgbench_select_only(args.run.seconds)?),
                i => {
                    let (out, _) = child("worker", workers[i - 1], &target.url, args.run.seconds)?;
                    tps[i - 1].push(field(&out, "tps").unwrap_or(f64::NAN));
                }
            }
        }
        eprintln!(
            "point round {}: pgbench {:.0} sluice {:.0} tokio {:.0} floor {:.0}",
            round + 1,
            p[round],
            tps[0][round],
            tps[1][round],
            tps[2][round]
        );
    }
    let p = median(&p);
    let [s, t, f] = [0, 1, 2].map(|i| median(&tps[i]));
    print(
        "Point selects by primary key, 8 connections, 8 tasks (SELECT abalance ... WHERE aid = $1)",
        &[
            Line {
                case: "pgbench -S -M prepared -c 8 -j 2".into(),
                figure: format!("{p:.0} tps"),
                note: "reference".into(),
            },
            Line {
                case: "sluice-pg".into(),
                figure: format!("{s:.0} tps"),
                note: format!(
                    "{:.2} x pgbench (bar >= 0.9); {:.2} x tokio-postgres (bar >= 1.2)",
                    s / p,
                    s / t
                ),
            },
            Line {
                case: "tokio-postgres (prepared)".into(),
                figure: format!("{t:.0} tps"),
                note: format!("{:.2} x pgbench", t / p),
            },
            Line {
                case: "floor: pre-encoded Bind/Execute/Sync, replies only framed".into(),
                figure: format!("{f:.0} tps"),
                note: format!(
                    "{:.2} x tokio-postgres: the most any client could be; {:.2} x pgbench; {:.2} x sluice-pg",
                    f / t,
                    f / p,
                    f / s
                ),
            },
        ],
    );
    Ok(())
}

fn pipeline(target: &Target, args: &DriverArgs) -> Result<()> {
    let (mut seq, mut pipe, mut tokio_pipe) = (vec![], vec![], vec![]);
    let (mut floor_seq, mut floor_pipe) = (vec![], vec![]);
    for round in 0..args.run.rounds {
        let (out, _) = child("worker", "pipeline-sluice", &target.url, 20)?;
        seq.push(field(&out, "sequential_ms").unwrap_or(f64::NAN));
        pipe.push(field(&out, "pipelined_ms").unwrap_or(f64::NAN));
        let (out, _) = child("worker", "pipeline-tokio", &target.url, 20)?;
        tokio_pipe.push(field(&out, "pipelined_ms").unwrap_or(f64::NAN));
        let (out, _) = child("worker", "pipeline-floor", &target.url, 20)?;
        floor_seq.push(field(&out, "sequential_ms").unwrap_or(f64::NAN));
        floor_pipe.push(field(&out, "pipelined_ms").unwrap_or(f64::NAN));
        eprintln!(
            "pipeline round {}: sequential {:.2} ms, pipelined {:.2} ms, tokio-postgres pipelined {:.2} ms, floor {:.2} / {:.2} ms",
            round + 1,
            seq[round],
            pipe[round],
            tokio_pipe[round],
            floor_seq[round],
            floor_pipe[round]
        );
    }
    let (q, p, t) = (median(&seq), median(&pipe), median(&tokio_pipe));
    let (fq, fp) = (median(&floor_seq), median(&floor_pipe));
    print(
        "1,000 point selects on one connection",
        &[
            Line {
                case: "sluice-pg, one at a time".into(),
                figure: format!("{q:.2} ms"),
                note: "reference".into(),
            },
            Line {
                case: "sluice-pg, one pipeline (one Sync)".into(),
                figure: format!("{p:.2} ms"),
                note: format!("{:.1} x faster (bar >= 5)", q / p),
            },
            Line {
                case: "tokio-postgres, 1,000 futures joined".into(),
                figure: format!("{t:.2} ms"),
                note: format!("{:.2} x sluice pipeline time", t / p),
            },
            Line {
                case: "floor: 1,000 pre-encoded selects, one at a time / in one write".into(),
                figure: format!("{fq:.2} ms / {fp:.2} ms"),
                note: format!(
                    "{:.1} x faster: what pipelining can gain against this server and loopback",
                    fq / fp
                ),
            },
        ],
    );
    Ok(())
}
