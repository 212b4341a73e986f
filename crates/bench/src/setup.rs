//! The database a benchmark runs against: given, or an embedded cluster with pgbench data.

use anyhow::{Context, Result, bail};
use sluice_embedded::{Cluster, ClusterOptions};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The server under test and where its tools are.
pub struct Target {
    /// The libpq-style URL every client uses (same host, port and transport).
    pub url: String,
    /// Directory of psql and pgbench, when known.
    pub bin_dir: Option<PathBuf>,
    /// Keeps an embedded cluster running for the benchmark's duration.
    _cluster: Option<Cluster>,
}

impl Target {
    /// `url`, or `DATABASE_URL`, or a persistent embedded cluster under `target/sluice-bench`.
    pub fn open(url: Option<String>) -> Result<Target> {
        if let Some(url) = url.or_else(|| std::env::var("DATABASE_URL").ok()) {
            return Ok(Target {
                url,
                bin_dir: None,
                _cluster: None,
            });
        }
        let dir = std::env::current_dir()?.join("target/sluice-bench/pgdata");
        eprintln!(
            "no --database or DATABASE_URL: using an embedded cluster in {}",
            dir.display()
        );
        let cluster = Cluster::start(
            // A persistent cluster speaks plain TCP: the same transport as every contender.
            ClusterOptions::persistent(dir).stop_on_drop(true),
        )
        .context("starting the embedded cluster")?;
        let url = format!("{}?sslmode=disable", cluster.url_with_password());
        Ok(Target {
            url,
            bin_dir: Some(cluster.bin_dir().to_path_buf()),
            _cluster: Some(cluster),
        })
    }

    /// `pgbench -n -S -M prepared -c 8 -j 2` for `seconds` seconds (point selects on 8
    /// connections from 2 threads); its tps.
    pub fn pgbench_select_only(&self, seconds: u64) -> Result<f64> {
        let out = Command::new(self.program("pgbench"))
            .args(["-n", "-S", "-M", "prepared", "-c", "8", "-j", "2", "-T"])
            .arg(seconds.to_string())
            .arg(&self.url)
            .output()
            .context("running pgbench")?;
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .find(|l| l.starts_with("tps = "))
            .and_then(|l| l.split_whitespace().nth(2))
            .and_then(|v| v.parse().ok())
            .context("pgbench printed no tps")
    }

    /// A PostgreSQL client program (psql, pgbench): next to the server binaries or on PATH.
    pub fn program(&self, name: &str) -> PathBuf {
        if let Some(dir) = &self.bin_dir {
            let p = dir.join(name);
            if p.exists() {
                return p;
            }
        }
        if let Ok(b) = sluice_embedded::find_binaries()
            && let Some(p) = b.program(name)
        {
            return p;
        }
        PathBuf::from(name)
    }

    /// Runs `psql -Atc sql` and returns its output.
    pub fn psql(&self, sql: &str) -> Result<String> {
        self.psql_at(&self.url, sql)
    }

    /// Runs `psql -Atc sql` on the server at `url` (a replica of this one, say).
    pub fn psql_at(&self, url: &str, sql: &str) -> Result<String> {
        let out = Command::new(self.program("psql"))
            .args(["-X", "-At", "-d", url, "-c", sql])
            .output()
            .context("running psql")?;
        if !out.status.success() {
            bail!("psql failed: {}", String::from_utf8_lossy(&out.stderr));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    /// Starts a streaming replica of the embedded cluster (after the pgbench data is there, so
    /// it copies it) and answers its URL; an error for a server given by URL.
    pub fn start_replica(&mut self) -> Result<String> {
        let cluster = self
            ._cluster
            .as_mut()
            .context("the server was given by URL: give its replica with --replica-url")?;
        eprintln!("starting a streaming replica of the embedded cluster ...");
        cluster.start_replicas(1)?;
        let replica = cluster.replicas().last().context("no replica started")?;
        Ok(format!("{}?sslmode=disable", replica.url_with_password()))
    }

    /// Makes sure `pgbench -i -s scale` data is there (2,000,000 accounts for scale 20).
    pub fn ensure_pgbench(&self, scale: u32) -> Result<()> {
        let want = u64::from(scale) * 100_000;
        let have: u64 = self
            .psql("SELECT count(*) FROM pgbench_accounts")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        if have == want {
            return Ok(());
        }
        eprintln!("initialising pgbench data at scale {scale} ...");
        let status = Command::new(self.program("pgbench"))
            .args(["-i", "-q", "-s", &scale.to_string(), &self.url])
            .status()
            .context("running pgbench -i")?;
        if !status.success() {
            bail!("pgbench -i failed");
        }
        self.psql("VACUUM ANALYZE pgbench_accounts")?;
        Ok(())
    }
}

/// The `sluice` binary to measure: the one given, else the one built beside this benchmark.
pub fn sluice_binary(given: Option<&Path>) -> Result<PathBuf> {
    let sluice = match given {
        Some(path) => path.to_path_buf(),
        None => std::env::current_exe()?
            .parent()
            .context("no directory of the benchmark executable")?
            .join("sluice"),
    };
    if !sluice.exists() {
        bail!(
            "{} not found: build it first with `cargo build --release -p sluice`",
            sluice.display()
        );
    }
    Ok(sluice)
}

/// Refuses a `--cases` word the benchmark does not have, naming the ones it has.
pub fn check_cases(asked: &[String], known: &[&str]) -> anyhow::Result<()> {
    if let Some(unknown) = asked.iter().find(|c| !known.contains(&c.as_str())) {
        anyhow::bail!(
            "unknown case {unknown:?} in --cases (known: {})",
            known.join(", ")
        );
    }
    Ok(())
}

/// A process's CPU time so far (user + system), in seconds, from `/proc/PID/stat`.
pub fn cpu_seconds(pid: u32) -> Result<f64> {
    Ok(cpu_ticks(pid)? as f64 / clock_ticks_per_second())
}

/// A process's CPU time so far (user + system), in clock ticks, from `/proc/PID/stat`.
pub fn cpu_ticks(pid: u32) -> Result<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    stat_ticks(&stat, StatTicks::Own)
}

/// Which CPU times of a `/proc/PID/stat` line to add up.
#[derive(Debug, Clone, Copy)]
pub enum StatTicks {
    /// The process's own (utime + stime).
    Own,
    /// Its waited-for children's (cutime + cstime).
    Children,
}

/// The CPU clock ticks of one `/proc/PID/stat` line.
pub fn stat_ticks(stat: &str, which: StatTicks) -> Result<u64> {
    // Fields 14 and 15 (utime, stime), 16 and 17 (cutime, cstime); the name in field 2 may
    // hold spaces, so count from its closing parenthesis (field 3 onwards).
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| -> Result<u64> {
        fields
            .get(i)
            .and_then(|v| v.parse().ok())
            .context("unexpected /proc/PID/stat")
    };
    match which {
        StatTicks::Own => Ok(tick(11)? + tick(12)?),
        StatTicks::Children => Ok(tick(13)? + tick(14)?),
    }
}

/// This process's CPU time (`which`: its own, or its waited-for children's), in seconds.
pub fn self_cpu_seconds(which: StatTicks) -> Result<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat")?;
    Ok(stat_ticks(&stat, which)? as f64 / clock_ticks_per_second())
}

/// Clock ticks per second (`getconf CLK_TCK`), asked once: a later call must not start a
/// child process, whose CPU would count in a children's CPU reading.
pub fn clock_ticks_per_second() -> f64 {
    static TICKS: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
            .unwrap_or(100.0)
    })
}
