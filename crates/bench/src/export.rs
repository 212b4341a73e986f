//! The export/import benchmark: `sluice export` (CSV, CSJ, JSON Lines) side by side with
//! `psql -c "COPY (...) TO STDOUT (FORMAT csv, HEADER)"`, and `sluice import` with `psql \copy`,
//! on pgbench data, alternating and repeated; medians, ratios, peak RSS and an output identity
//! check.

use crate::report::{Line, median, print};
use crate::setup::Target;
use anyhow::{Context, Result, bail};
use clap::Args;
use std::hash::Hasher;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Options of `sluice-bench export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Server URL (default: DATABASE_URL, else an embedded cluster).
    #[arg(short = 'd', long)]
    database: Option<String>,
    /// Rounds; each runs every contender once, in rotating order.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// pgbench scale (20 gives 2,000,000 accounts).
    #[arg(long, default_value_t = 20)]
    scale: u32,
    /// The sluice binary (default: the one next to this benchmark, from `cargo build --release`).
    #[arg(long)]
    sluice: Option<PathBuf>,
    /// Leave the import case out.
    #[arg(long)]
    no_import: bool,
}

const ACCOUNTS: &str = "SELECT * FROM pgbench_accounts";
const WIDE: &str = "SELECT *, filler, filler FROM pgbench_accounts";

/// One contender: a name and the command line it runs.
struct Contender {
    name: &'static str,
    program: PathBuf,
    args: Vec<String>,
    /// Whether it reports `peak_rss_kib=` on stderr.
    reports_rss: bool,
}

impl Contender {
    fn psql_copy(target: &Target, sql: &str) -> Contender {
        Contender {
            name: "psql COPY csv",
            program: target.program("psql"),
            args: vec![
                "-X".into(),
                "-d".into(),
                target.url.clone(),
                "-c".into(),
                format!("COPY ({sql}) TO STDOUT (FORMAT csv, HEADER)"),
            ],
            reports_rss: false,
        }
    }

    fn sluice(name: &'static str, sluice: &Path, url: &str, format: &str, sql: &str) -> Contender {
        Contender {
            name,
            program: sluice.to_path_buf(),
            args: vec![
                "export".into(),
                "-d".into(),
                url.into(),
                "--format".into(),
                format.into(),
                "--report-peak-rss".into(),
                sql.into(),
            ],
            reports_rss: true,
        }
    }

    /// Runs with standard output to /dev/null: wall time in seconds and peak RSS in KiB.
    fn run(&self) -> Result<(f64, Option<f64>)> {
        let start = Instant::now();
        let out = Command::new(&self.program)
            .args(&self.args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .with_context(|| format!("running {}", self.program.display()))?;
        let secs = start.elapsed().as_secs_f64();
        if !out.status.success() {
            bail!(
                "{} failed: {}",
                self.name,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let rss = self
            .reports_rss
            .then(|| crate::report::field(&String::from_utf8_lossy(&out.stderr), "peak_rss_kib"))
            .flatten();
        Ok((secs, rss))
    }

    /// Runs with standard output read here: its length and a hash of its bytes.
    fn digest(&self) -> Result<(u64, u64)> {
        let mut child = Command::new(&self.program)
            .args(&self.args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("running {}", self.program.display()))?;
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
        if !child.wait()?.success() {
            bail!("{} failed", self.name);
        }
        Ok((len, hasher.finish()))
    }
}

/// Times and peak RSS per contender over the rounds.
struct Samples {
    secs: Vec<Vec<f64>>,
    rss: Vec<Vec<f64>>,
}

/// Runs every contender once per round, rotating who goes first.
fn alternate(title: &str, contenders: &[Contender], rounds: usize) -> Result<Samples> {
    let n = contenders.len();
    let mut samples = Samples {
        secs: vec![Vec::new(); n],
        rss: vec![Vec::new(); n],
    };
    for round in 0..rounds {
        let mut line = format!("{title} round {}:", round + 1);
        for turn in 0..n {
            let i = (round + turn) % n;
            let Some(c) = contenders.get(i) else { continue };
            let (secs, rss) = c.run()?;
            line.push_str(&format!(" {} {secs:.3}s", c.name));
            if let (Some(s), Some(r)) = (samples.secs.get_mut(i), samples.rss.get_mut(i)) {
                s.push(secs);
                if let Some(rss) = rss {
                    r.push(rss);
                }
            }
        }
        eprintln!("{line}");
    }
    Ok(samples)
}

fn mib(kib: &[f64]) -> String {
    if kib.is_empty() {
        return "n/a".into();
    }
    let max = kib.iter().copied().fold(0.0, f64::max);
    format!("{:.1} MiB", max / 1024.0)
}

pub fn run(args: ExportArgs) -> Result<()> {
    let target = Target::open(args.database.clone())?;
    target.ensure_pgbench(args.scale)?;
    let sluice = crate::setup::sluice_binary(args.sluice.as_deref())?;
    let url = target.url.as_str();
    println!(
        "sluice-bench export: {} rounds, server {}, {} cores, sluice {}",
        args.rounds,
        target.psql("SHOW server_version")?,
        std::thread::available_parallelism().map_or(0, usize::from),
        sluice.display()
    );

    // Output identity: the same bytes as COPY.
    let copy = Contender::psql_copy(&target, ACCOUNTS);
    let csv = Contender::sluice("sluice csv", &sluice, url, "csv", ACCOUNTS);
    let (copy_len, copy_hash) = copy.digest()?;
    let (csv_len, csv_hash) = csv.digest()?;
    let identical = copy_len == csv_len && copy_hash == csv_hash;
    eprintln!(
        "identity: COPY {copy_len} bytes, sluice csv {csv_len} bytes, identical: {identical}"
    );

    let narrow = [
        copy,
        csv,
        Contender::sluice("sluice csj", &sluice, url, "csj", ACCOUNTS),
        Contender::sluice("sluice jsonl", &sluice, url, "jsonl", ACCOUNTS),
    ];
    let s = alternate("SELECT *", &narrow, args.rounds)?;
    let t: Vec<f64> = s.secs.iter().map(|v| median(v)).collect();
    let copy_t = t.first().copied().unwrap_or(f64::NAN);
    let at = |i: usize| t.get(i).copied().unwrap_or(f64::NAN);
    let rss = |i: usize| s.rss.get(i).map_or("n/a".into(), |r| mib(r));
    print(
        &format!(
            "`{ACCOUNTS}` ({} rows), wall time of the whole process, output to /dev/null",
            args.scale as u64 * 100_000
        ),
        &[
            Line {
                case: "`psql -c \"COPY (...) TO STDOUT (FORMAT csv, HEADER)\"`".into(),
                figure: format!("{copy_t:.3} s"),
                note: "reference".into(),
            },
            Line {
                case: "`sluice export --format csv`".into(),
                figure: format!("{:.3} s, peak RSS {}", at(1), rss(1)),
                note: format!(
                    "{:.2} x COPY (bar <= 1.10); output identical to COPY: {} ({csv_len} bytes)",
                    at(1) / copy_t,
                    if identical { "yes" } else { "NO" }
                ),
            },
            Line {
                case: "`sluice export --format csj`".into(),
                figure: format!("{:.3} s, peak RSS {}", at(2), rss(2)),
                note: format!("{:.2} x COPY (bar <= 1.2)", at(2) / copy_t),
            },
            Line {
                case: "`sluice export --format jsonl`".into(),
                figure: format!("{:.3} s, peak RSS {}", at(3), rss(3)),
                note: format!("{:.2} x COPY (bar <= 1.2)", at(3) / copy_t),
            },
        ],
    );

    let wide = [
        Contender::psql_copy(&target, WIDE),
        Contender::sluice("sluice csj", &sluice, url, "csj", WIDE),
    ];
    let s = alternate("SELECT *, filler, filler", &wide, args.rounds)?;
    let (c, j) = (
        median(s.secs.first().map_or(&[][..], |v| v)),
        median(s.secs.get(1).map_or(&[][..], |v| v)),
    );
    print(
        &format!("`{WIDE}` (seed 000's hardest case)"),
        &[
            Line {
                case: "`psql -c \"COPY (...) TO STDOUT (FORMAT csv, HEADER)\"`".into(),
                figure: format!("{c:.3} s"),
                note: "reference".into(),
            },
            Line {
                case: "`sluice export --format csj`".into(),
                figure: format!(
                    "{j:.3} s, peak RSS {}",
                    s.rss.get(1).map_or("n/a".into(), |r| mib(r))
                ),
                note: format!("{:.2} x COPY (bar <= 1.2); RSS bar <= 32 MiB", j / c),
            },
        ],
    );

    if !args.no_import {
        import(&target, &sluice, args.rounds, args.scale)?;
    }
    Ok(())
}

/// Loads the accounts as CSV into an empty table: `psql \copy` against `sluice import`.
fn import(target: &Target, sluice: &Path, rounds: usize, scale: u32) -> Result<()> {
    let dir = std::env::current_dir()?.join("target/sluice-bench");
    std::fs::create_dir_all(&dir)?;
    let file = dir.join("accounts.csv");
    let file_str = file.to_string_lossy().into_owned();
    let status = Command::new(sluice)
        .args([
            "export",
            "-d",
            &target.url,
            "--format",
            "csv",
            "-q",
            "-o",
            &file_str,
            ACCOUNTS,
        ])
        .status()
        .context("exporting the accounts to a CSV file")?;
    if !status.success() {
        bail!("exporting the accounts to {file_str} failed");
    }
    target.psql("DROP TABLE IF EXISTS sluice_bench_import")?;
    target.psql("CREATE TABLE sluice_bench_import (LIKE pgbench_accounts)")?;
    let rows = f64::from(scale) * 100_000.0;
    let (mut psql_t, mut sluice_t) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        for turn in 0..2 {
            target.psql("TRUNCATE sluice_bench_import")?;
            let start = Instant::now();
            let status = if (round + turn) % 2 == 0 {
                Command::new(target.program("psql"))
                    .args([
                        "-X",
                        "-q",
                        "-d",
                        &target.url,
                        "-c",
                        &format!("\\copy sluice_bench_import FROM '{file_str}' csv header"),
                    ])
                    .status()
            } else {
                Command::new(sluice)
                    .args([
                        "import",
                        "-d",
                        &target.url,
                        "-q",
                        "--format",
                        "csv",
                        "sluice_bench_import",
                        &file_str,
                    ])
                    .status()
            }
            .context("running an import")?;
            let secs = start.elapsed().as_secs_f64();
            if !status.success() {
                bail!("an import failed");
            }
            if (round + turn) % 2 == 0 {
                psql_t.push(secs);
            } else {
                sluice_t.push(secs);
            }
        }
        let count = target.psql("SELECT count(*) FROM sluice_bench_import")?;
        if count.parse::<f64>().ok() != Some(rows) {
            bail!("the import loaded {count} rows, not {rows}");
        }
        eprintln!(
            "import round {}: psql \\copy {:.3}s sluice {:.3}s",
            round + 1,
            psql_t.last().copied().unwrap_or(f64::NAN),
            sluice_t.last().copied().unwrap_or(f64::NAN)
        );
    }
    target.psql("DROP TABLE sluice_bench_import")?;
    let (p, s) = (median(&psql_t), median(&sluice_t));
    print(
        &format!(
            "Import of the {rows} rows CSV ({} MB) into an empty table",
            std::fs::metadata(&file)?.len() / 1_000_000
        ),
        &[
            Line {
                case: "`psql -c \"\\copy ... FROM ... csv header\"`".into(),
                figure: format!("{p:.3} s, {:.0} rows/s", rows / p),
                note: "reference".into(),
            },
            Line {
                case: "`sluice import --format csv`".into(),
                figure: format!("{s:.3} s, {:.0} rows/s", rows / s),
                note: format!("{:.2} x the rate of psql (bar >= 0.8)", p / s),
            },
        ],
    );
    Ok(())
}
