//! What the driver and pool benchmarks share: their common options, measured runs in a child
//! process, random account keys and the timed loop of many tasks.

use anyhow::{Context, Result, bail};
use clap::Args;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The point select every contender runs.
pub const POINT_SQL: &str = "SELECT abalance FROM pgbench_accounts WHERE aid = $1";
/// Accounts at pgbench scale 20.
const ACCOUNTS: u64 = 2_000_000;

/// Options common to `sluice-bench driver` and `sluice-bench pool`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Server URL (default: DATABASE_URL, else an embedded cluster). Use the same transport for
    /// all: a host/port for TCP, a socket directory for unix sockets.
    #[arg(short = 'd', long)]
    pub database: Option<String>,
    /// Rounds per case; each round runs every contender once, in rotating order.
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// Seconds per timed run.
    #[arg(long, default_value_t = 5)]
    pub seconds: u64,
    /// pgbench scale (20 gives 2,000,000 accounts).
    #[arg(long, default_value_t = 20)]
    pub scale: u32,
}

/// Options of one child-process run.
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// What to run (the benchmark that spawns the child knows the names).
    pub kind: String,
    /// Server URL.
    pub url: String,
    /// Seconds for timed runs, repetitions for pipelines.
    #[arg(default_value_t = 5)]
    pub amount: u64,
}

/// Runs this benchmark binary as a child (`subcommand kind url amount`); returns its stdout and
/// wall time in seconds. Each measured run gets a fresh process, so no run inherits another's
/// heap or connections.
pub fn child(subcommand: &str, kind: &str, url: &str, amount: u64) -> Result<(String, f64)> {
    let start = Instant::now();
    let out = Command::new(std::env::current_exe()?)
        .args([subcommand, kind, url, &amount.to_string()])
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("running {subcommand} {kind}"))?;
    let secs = start.elapsed().as_secs_f64();
    if !out.status.success() {
        bail!("{subcommand} {kind} failed");
    }
    Ok((String::from_utf8_lossy(&out.stdout).into_owned(), secs))
}

/// Random account keys without a dependency (xorshift).
pub struct Keys(u64);

impl Keys {
    /// A generator of its own for each task.
    pub fn new(task: u64) -> Keys {
        Keys(0x9e37_79b9_7f4a_7c15 ^ (task + 1).wrapping_mul(0x2545_f491_4f6c_dd1d))
    }

    pub fn next(&mut self) -> i32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % ACCOUNTS) as i32 + 1
    }
}

/// Runs `tasks` copies of `work` (each loops until told to stop, counting its queries); returns
/// queries per second over `seconds` after a warm-up. With `SLUICE_BENCH_PER_THREAD` set, half
/// the tasks run on a second thread with a current-thread runtime of its own (the shape of
/// pgbench -j 2).
pub async fn timed_tasks<F, Fut>(tasks: u64, seconds: u64, work: F) -> Result<f64>
where
    F: Fn(u64, Arc<AtomicBool>, Arc<AtomicU64>) -> Fut,
    Fut: std::future::Future<Output = Result<()>> + Send + 'static,
{
    let stop = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicU64::new(0));
    let mut handles = Vec::new();
    let mut second_thread = Vec::new();
    let per_thread = std::env::var("SLUICE_BENCH_PER_THREAD").is_ok();
    for t in 0..tasks {
        let fut = work(t, stop.clone(), count.clone());
        if per_thread && t % 2 == 1 {
            second_thread.push(fut);
        } else {
            handles.push(tokio::spawn(fut));
        }
    }
    if !second_thread.is_empty() {
        handles.push(tokio::task::spawn_blocking(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            rt.block_on(async move {
                let tasks: Vec<_> = second_thread.into_iter().map(tokio::spawn).collect();
                for t in tasks {
                    t.await.context("task panicked")??;
                }
                Ok(())
            })
        }));
    }
    // Warm up (connections, preparation), then measure.
    tokio::time::sleep(Duration::from_millis(700)).await;
    let start_count = count.load(Ordering::Relaxed);
    let start = Instant::now();
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    let done = count.load(Ordering::Relaxed) - start_count;
    let elapsed = start.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.await.context("task panicked")??;
    }
    Ok(done as f64 / elapsed)
}
