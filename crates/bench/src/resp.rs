//! `sluice-bench resp`: Sluice's Redis gate against redis-server, side by side with redis-benchmark.

mod durable;
mod memory;
mod redka;
mod tls;

use crate::report::median;
use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use std::collections::HashMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

#[derive(Debug, Args)]
pub struct RespArgs {
    #[command(subcommand)]
    case: Case,
}

#[derive(Debug, Subcommand)]
enum Case {
    /// redis-benchmark's tests (`-t`) against Sluice and redis-server, alternating which goes
    /// first per round, without pipelining and with `-P PIPELINE`: median requests/s, the ratio
    /// Sluice/Redis and each server's CPU per request.
    Compare(CompareArgs),
    /// Several `sluice serve` configurations (or builds) against one redis-server, paired: every
    /// server in rotating order for each round and test; each variant's ratio to Redis.
    Variants(VariantsArgs),
    /// Streams, bitmaps, HyperLogLog and scripts (XADD, XRANGE, XREAD, SETBIT, PFADD, EVALSHA) in redis-benchmark's
    /// command form, like `compare`.
    Types(TypesArgs),
    /// RSS before and after loading KEYS keys with 10-byte values (`SET key:<n> <10 bytes>`
    /// through `redis-cli --pipe`) into each server.
    Rss(RssArgs),
    /// The Redis store in PostgreSQL (appendfsync everysec and always) against Sluice in memory
    /// and `redis-server --appendonly yes --appendfsync always`, plus PostgreSQL rows written per
    /// write under a hot-key INCR load.
    Durable(durable::DurableArgs),
    /// Start-up time with KEYS keys of mixed types: the store loaded from PostgreSQL against
    /// redis-server replaying its AOF (`appendonly yes`).
    Restart(durable::RestartArgs),
    /// Serves Redis commands with Redka's approach (each command its own SQL transaction on
    /// PostgreSQL); `durable` runs it as a contender.
    #[command(hide = true)]
    RedkaServe(redka::RedkaArgs),
    /// TLS on the listener: Sluice and redis-server each plain and with TLS (`redis-benchmark
    /// --tls --cacert`), in rotating order: requests/s, TLS/plain per server, Sluice/Redis with
    /// TLS, CPU per request.
    Tls(tls::TlsArgs),
    /// RSS growth after stream entries and PFADDs (sparse HLLs over HLL_KEYS keys, one dense
    /// HLL), fresh servers for each data set.
    TypesRss(TypesRssArgs),
}

/// The servers under test.
#[derive(Debug, Args)]
struct ServerArgs {
    /// The sluice binary (default: the one next to this benchmark, from `cargo build --release`).
    #[arg(long)]
    sluice: Option<PathBuf>,
    /// An extra `sluice serve` option (repeat it for several), e.g. `--sluice-arg=--resp-io-threads=0`.
    #[arg(long = "sluice-arg", allow_hyphen_values = true)]
    sluice_args: Vec<String>,
}

/// Rounds and request counts of the throughput cases.
#[derive(Debug, Args)]
struct LoadArgs {
    /// Rounds; each runs every server once per test.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Requests per test without pipelining.
    #[arg(short = 'n', long, default_value_t = 50_000)]
    requests: u64,
    /// Requests per test with pipelining.
    #[arg(long, default_value_t = 200_000)]
    requests_pipelined: u64,
    /// Pipeline depth of the pipelined runs (`redis-benchmark -P`).
    #[arg(short = 'P', long, default_value_t = 16)]
    pipeline: u32,
    /// Parallel connections (`redis-benchmark -c`).
    #[arg(long, default_value_t = 50)]
    clients: u32,
}

#[derive(Debug, Args)]
struct CompareArgs {
    #[command(flatten)]
    server: ServerArgs,
    #[command(flatten)]
    load: LoadArgs,
    /// redis-benchmark's tests (`-t`), comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "ping_inline,ping_mbulk,set,get,incr,lpush,rpush,lpop,rpop,sadd,hset,spop,zadd,zpopmin,lrange_100,mset"
    )]
    tests: Vec<String>,
    /// Sluice's runtime worker threads (`sluice serve --threads`; default: its own).
    #[arg(long)]
    threads: Option<usize>,
}

#[derive(Debug, Args)]
struct VariantsArgs {
    /// The sluice binary of variants without `bin=` (default: the one next to this benchmark).
    #[arg(long)]
    sluice: Option<PathBuf>,
    /// One variant (repeat for several): its `sluice serve` flags with commas for spaces
    /// (`--threads=1,--resp-io-threads=0`); `bin=PATH,` first runs another build of sluice;
    /// `redis-server` runs a second Redis paired against the first (the noise floor).
    #[arg(
        long = "variant",
        allow_hyphen_values = true,
        default_values = ["--resp-busy-poll-us=0", "--resp-busy-poll-us=20"]
    )]
    variants: Vec<String>,
    /// Rounds; each runs every server once per test, in rotating order.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Requests per test.
    #[arg(short = 'n', long, default_value_t = 100_000)]
    requests: u64,
    /// Pipeline depth (`redis-benchmark -P`).
    #[arg(short = 'P', long, default_value_t = 1)]
    pipeline: u32,
    /// Parallel connections (`redis-benchmark -c`).
    #[arg(long, default_value_t = 50)]
    clients: u32,
    /// redis-benchmark's tests (`-t`), comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "set,get,incr,lpush,rpush,lpop,rpop,sadd,hset,spop,zadd,lrange_100,mset"
    )]
    tests: Vec<String>,
}

#[derive(Debug, Args)]
struct TypesArgs {
    #[command(flatten)]
    server: ServerArgs,
    #[command(flatten)]
    load: LoadArgs,
    /// The tests, comma-separated: XADD, XRANGE, XREAD, SETBIT, PFADD, EVALSHA (default: all).
    #[arg(long, value_delimiter = ',')]
    tests: Vec<String>,
    /// Also a second redis-server after the pair in each round: its ratio to the first is the
    /// spread two identical servers show (the noise floor).
    #[arg(long)]
    floor: bool,
}

#[derive(Debug, Args)]
struct RssArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// Keys to load.
    #[arg(long, default_value_t = 1_000_000)]
    keys: u64,
}

#[derive(Debug, Args)]
struct TypesRssArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// Stream entries, and PFADDs of each HLL data set.
    #[arg(long, default_value_t = 1_000_000)]
    entries: u64,
    /// Keys the sparse HLLs' PFADDs are spread over.
    #[arg(long, default_value_t = 100_000)]
    hll_keys: u64,
}

/// The data types' commands: name and redis-benchmark's trailing `CMD args` form
/// (`__rand_int__` draws from `-r 1000000`, zero-padded to 12 digits, so it serves as an element
/// but not as a bit offset).
const TYPE_TESTS: &[(&str, &str)] = &[
    ("XADD", "XADD bench:stream * field value"),
    ("XRANGE", "XRANGE bench:read - + COUNT 10"),
    ("XREAD", "XREAD COUNT 10 STREAMS bench:read 0-0"),
    ("SETBIT", "SETBIT bench:bits 1048575 1"),
    ("PFADD", "PFADD bench:hll __rand_int__"),
    ("EVALSHA", "EVALSHA {sha} 1 bench:counter 1"),
];

/// The script EVALSHA runs, as job queues and rate limiters run them: a write and a read of one
/// key. Its SHA1 replaces `{sha}` once it is loaded on every server.
const EVAL_SCRIPT: &str =
    "redis.call('INCRBY', KEYS[1], ARGV[1]) return redis.call('GET', KEYS[1])";

pub fn run(args: RespArgs) -> Result<()> {
    match args.case {
        Case::Compare(a) => compare(a),
        Case::Variants(a) => variants(a),
        Case::Types(a) => types(a),
        Case::Rss(a) => memory::rss(a),
        Case::TypesRss(a) => memory::types_rss(a),
        Case::Durable(a) => durable::durable(a),
        Case::Restart(a) => durable::restart(a),
        Case::RedkaServe(a) => redka::serve(a),
        Case::Tls(a) => tls::tls(a),
    }
}

/// False (after saying so) when a tool the case needs is not installed: the case is skipped.
fn tools_present(tools: &[&str]) -> bool {
    for tool in tools {
        let found = std::env::var_os("PATH")
            .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(tool).is_file()));
        if !found {
            eprintln!("SKIP: {tool} is not installed");
            return false;
        }
    }
    true
}

fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// A server under test, stopped when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    /// `redis-server` for benchmarking: no persistence, warnings only.
    fn redis(port: u16) -> Result<Server> {
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--loglevel", "warning"])
            .stdout(Stdio::null())
            .spawn()
            .context("starting redis-server")?;
        Ok(Server { child, port })
    }

    /// `sluice serve --resp 127.0.0.1:PORT extra...`.
    fn sluice(bin: &Path, port: u16, extra: &[String]) -> Result<Server> {
        let child = Command::new(bin)
            .args(["serve", "--resp", &format!("127.0.0.1:{port}")])
            .args(extra)
            .env("SLUICE_LOG", "warn")
            .stdout(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {} serve", bin.display()))?;
        Ok(Server { child, port })
    }

    /// Waits (up to 5 s) until the server answers PING.
    fn wait_until_serving(&mut self) -> Result<()> {
        for _ in 0..100 {
            if let Some(status) = self.child.try_wait()? {
                bail!("the server on port {} exited: {status}", self.port);
            }
            if redis_cli(self.port, &["ping"]).is_ok_and(|out| out.trim() == "PONG") {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        bail!(
            "the server on port {} did not answer PING within 5 s",
            self.port
        )
    }

    /// Its CPU time so far (user + system), in clock ticks.
    fn cpu_ticks(&self) -> Result<u64> {
        crate::setup::cpu_ticks(self.child.id())
    }

    /// Its resident set size (VmRSS) in KiB.
    fn rss_kib(&self) -> Result<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .context("no VmRSS in /proc/PID/status")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts a Sluice and a redis-server on free ports and waits until both serve.
fn start_pair(server: &ServerArgs, extra: &[String]) -> Result<(Server, Server)> {
    let bin = crate::setup::sluice_binary(server.sluice.as_deref())?;
    let mut sluice = Server::sluice(&bin, free_port()?, extra)?;
    let mut redis = Server::redis(free_port()?)?;
    sluice.wait_until_serving()?;
    redis.wait_until_serving()?;
    Ok((sluice, redis))
}

/// `redis-cli -p PORT args...`; its output.
fn redis_cli(port: u16, args: &[&str]) -> Result<String> {
    let out = Command::new("redis-cli")
        .args(["-p", &port.to_string()])
        .args(args)
        .stderr(Stdio::null())
        .output()
        .context("running redis-cli")?;
    if !out.status.success() {
        bail!("redis-cli {} failed", args.join(" "));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Feeds `input` to `redis-cli -p PORT args...` (`--pipe`, or commands one a line).
fn redis_cli_input(port: u16, args: &[&str], input: &mut dyn std::io::Read) -> Result<()> {
    let mut child = Command::new("redis-cli")
        .args(["-p", &port.to_string()])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .context("running redis-cli")?;
    let mut stdin = child.stdin.take().context("redis-cli's stdin")?;
    std::io::copy(input, &mut stdin)?;
    drop(stdin);
    if !child.wait()?.success() {
        bail!("redis-cli {} failed", args.join(" "));
    }
    Ok(())
}

/// Clock ticks per second (`getconf CLK_TCK`).
fn clock_ticks() -> f64 {
    crate::setup::clock_ticks_per_second()
}

/// The machine, for the line printed before a run.
fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let gib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        })
        .map_or(0, |kib| kib / (1024 * 1024));
    format!("{cores} cores, {gib} GB")
}

/// One redis-benchmark run: `redis-benchmark -p PORT -q -n N -c C -P P --csv what...`; the
/// test's name as redis-benchmark prints it (without a parenthesised note) and its requests/s.
fn redis_benchmark(
    port: u16,
    requests: u64,
    clients: u32,
    pipeline: u32,
    what: &[&str],
) -> Option<(String, f64)> {
    let out = Command::new("redis-benchmark")
        .args(["-p", &port.to_string(), "-q", "-n", &requests.to_string()])
        .args(["-c", &clients.to_string(), "-P", &pipeline.to_string()])
        .arg("--csv")
        .args(what)
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).replace('"', "");
    let line = text.lines().rfind(|l| !l.trim().is_empty())?;
    let mut fields = line.split(',');
    let name = fields.next()?.split(" (").next()?.to_owned();
    let rps = fields.next()?.parse().ok()?;
    Some((name, rps))
}

/// One measured run: requests/s and the server's CPU microseconds per request.
struct Sample {
    test: String,
    rps: f64,
    cpu_us: f64,
}

/// Runs `what` against `server`, measuring its CPU time around the run.
fn measure(
    server: &Server,
    requests: u64,
    clients: u32,
    pipeline: u32,
    what: &[&str],
    hz: f64,
) -> Result<Option<Sample>> {
    let before = server.cpu_ticks()?;
    let result = redis_benchmark(server.port, requests, clients, pipeline, what);
    let after = server.cpu_ticks()?;
    if result.is_none() {
        eprintln!(
            "redis-benchmark {} against port {} printed no result; the run is left out",
            what.join(" "),
            server.port
        );
    }
    Ok(result.map(|(test, rps)| Sample {
        test,
        rps,
        cpu_us: (after - before) as f64 * 1e6 / hz / requests as f64,
    }))
}

fn geometric_mean(ratios: &[f64]) -> f64 {
    let positive: Vec<f64> = ratios.iter().copied().filter(|r| *r > 0.0).collect();
    (positive.iter().map(|r| r.ln()).sum::<f64>() / positive.len() as f64).exp()
}

/// Results of the side-by-side cases, by contender, pipeline depth and test, in first-seen order.
#[derive(Default)]
struct Table {
    order: Vec<(String, u32)>,
    rps: HashMap<(String, u32, String), Vec<f64>>,
    cpu: HashMap<(String, u32, String), Vec<f64>>,
}

impl Table {
    fn add(&mut self, who: &str, pipeline: u32, test: &str, s: &Sample) {
        if !self.order.iter().any(|(t, p)| t == test && *p == pipeline) {
            self.order.push((test.to_owned(), pipeline));
        }
        let key = (who.to_owned(), pipeline, test.to_owned());
        self.rps.entry(key.clone()).or_default().push(s.rps);
        self.cpu.entry(key).or_default().push(s.cpu_us);
    }

    fn median_rps(&self, who: &str, pipeline: u32, test: &str) -> f64 {
        self.rps
            .get(&(who.to_owned(), pipeline, test.to_owned()))
            .map_or(0.0, |v| median(v))
    }

    fn median_cpu(&self, who: &str, pipeline: u32, test: &str) -> f64 {
        self.cpu
            .get(&(who.to_owned(), pipeline, test.to_owned()))
            .map_or(0.0, |v| median(v))
    }

    fn has(&self, who: &str) -> bool {
        self.rps.keys().any(|(w, _, _)| w == who)
    }
}

/// Requests of a run at `pipeline`: unpipelined or pipelined count.
fn requests_at(load: &LoadArgs, pipeline: u32) -> u64 {
    if pipeline > 1 {
        load.requests_pipelined
    } else {
        load.requests
    }
}

/// For each round and pipeline depth (1, then `-P`), every `(name, server)` in `order` runs
/// `tests`, Sluice and Redis swapping which goes first every round; `run_one` records a sample.
fn alternate(
    load: &LoadArgs,
    sluice: &Server,
    redis: &Server,
    second_redis: Option<&Server>,
    mut run_one: impl FnMut(&str, &Server, u32, u64) -> Result<()>,
) -> Result<()> {
    for round in 1..=load.rounds {
        for pipeline in [1, load.pipeline] {
            let n = requests_at(load, pipeline);
            if round % 2 == 1 {
                run_one("sluice", sluice, pipeline, n)?;
                run_one("redis", redis, pipeline, n)?;
            } else {
                run_one("redis", redis, pipeline, n)?;
                run_one("sluice", sluice, pipeline, n)?;
            }
            if let Some(second) = second_redis {
                run_one("redis2", second, pipeline, n)?;
            }
        }
        eprintln!("round {round} done");
    }
    Ok(())
}

fn compare(args: CompareArgs) -> Result<()> {
    if !tools_present(&["redis-server", "redis-benchmark", "redis-cli"]) {
        return Ok(());
    }
    let mut extra = args.server.sluice_args.clone();
    if let Some(threads) = args.threads {
        extra.extend(["--threads".to_owned(), threads.to_string()]);
    }
    let (sluice, redis) = start_pair(&args.server, &extra)?;
    let hz = clock_ticks();
    let load = &args.load;
    eprintln!(
        "sluice serve {}; machine: {}; rounds={} n={} n_pipelined={} clients={}",
        extra.join(" "),
        machine(),
        load.rounds,
        load.requests,
        load.requests_pipelined,
        load.clients
    );
    let mut table = Table::default();
    alternate(load, &sluice, &redis, None, |who, server, pipeline, n| {
        redis_cli(server.port, &["flushall"])?;
        for test in &args.tests {
            let what = ["-t", test.as_str()];
            if let Some(s) = measure(server, n, load.clients, pipeline, &what, hz)? {
                table.add(who, pipeline, &s.test.clone(), &s);
            }
        }
        Ok(())
    })?;

    println!(
        "{:<14} {:>4} {:>11} {:>11} {:>6}   {:>10} {:>10}  (us of server CPU per request)",
        "test", "pipe", "sluice rps", "redis rps", "ratio", "sluice cpu", "redis cpu"
    );
    let mut ratios = Vec::new();
    for (test, p) in &table.order {
        let s = table.median_rps("sluice", *p, test);
        let r = table.median_rps("redis", *p, test);
        let ratio = if r > 0.0 { s / r } else { 0.0 };
        ratios.push(ratio);
        println!(
            "{test:<14} {p:>4} {s:>11.0} {r:>11.0} {ratio:>6.2}   {:>10.2} {:>10.2}",
            table.median_cpu("sluice", *p, test),
            table.median_cpu("redis", *p, test)
        );
    }
    println!("geometric mean of ratios: {:.2}", geometric_mean(&ratios));
    Ok(())
}

fn types(args: TypesArgs) -> Result<()> {
    if !tools_present(&["redis-server", "redis-benchmark", "redis-cli"]) {
        return Ok(());
    }
    let tests: Vec<(&str, &str)> = TYPE_TESTS
        .iter()
        .copied()
        .filter(|(name, _)| {
            args.tests.is_empty() || args.tests.iter().any(|t| t.eq_ignore_ascii_case(name))
        })
        .collect();
    if tests.is_empty() {
        bail!("no such test; the tests are XADD, XRANGE, XREAD, SETBIT, PFADD, EVALSHA");
    }
    let (sluice, redis) = start_pair(&args.server, &args.server.sluice_args)?;
    let second = if args.floor {
        let mut second = Server::redis(free_port()?)?;
        second.wait_until_serving()?;
        Some(second)
    } else {
        None
    };
    // The read tests read a 100-entry stream.
    let seed: String = (1..=100)
        .map(|i| format!("XADD bench:read * field value-{i}\n"))
        .collect();
    for server in [Some(&sluice), Some(&redis), second.as_ref()]
        .into_iter()
        .flatten()
    {
        redis_cli(server.port, &["del", "bench:read"])?;
        redis_cli_input(server.port, &[], &mut seed.as_bytes())?;
    }
    let mut sha = None;
    for server in [Some(&sluice), Some(&redis), second.as_ref()]
        .into_iter()
        .flatten()
    {
        let loaded = redis_cli(server.port, &["script", "load", EVAL_SCRIPT])?
            .trim()
            .to_string();
        if sha.get_or_insert_with(|| loaded.clone()) != &loaded {
            bail!("SCRIPT LOAD gives different SHA1s: {loaded} and {sha:?}");
        }
    }
    let sha = sha.unwrap_or_default();
    let tests: Vec<(&str, String)> = tests
        .into_iter()
        .map(|(name, command)| (name, command.replace("{sha}", &sha)))
        .collect();
    let hz = clock_ticks();
    let load = &args.load;
    eprintln!(
        "resp types: sluice serve {}; machine: {}; rounds={} n={} n_pipelined={} clients={}",
        args.server.sluice_args.join(" "),
        machine(),
        load.rounds,
        load.requests,
        load.requests_pipelined,
        load.clients
    );
    let mut table = Table::default();
    alternate(
        load,
        &sluice,
        &redis,
        second.as_ref(),
        |who, server, pipeline, n| {
            for (name, command) in &tests {
                let mut what = vec!["-r", "1000000"];
                what.extend(command.split_whitespace());
                if let Some(s) = measure(server, n, load.clients, pipeline, &what, hz)? {
                    table.add(who, pipeline, name, &s);
                }
            }
            Ok(())
        },
    )?;

    let floor = table.has("redis2");
    println!(
        "| test | pipe | sluice rps | redis rps | ratio | sluice us CPU/req | redis us CPU/req |{}",
        if floor { " second redis / redis |" } else { "" }
    );
    println!(
        "|---|---|---|---|---|---|---|{}",
        if floor { "---|" } else { "" }
    );
    let mut by_pipe: Vec<(u32, Vec<f64>, Vec<f64>)> = Vec::new();
    for (test, p) in &table.order {
        let s = table.median_rps("sluice", *p, test);
        let r = table.median_rps("redis", *p, test);
        let ratio = if r > 0.0 { s / r } else { 0.0 };
        let index = match by_pipe.iter().position(|(q, _, _)| q == p) {
            Some(i) => i,
            None => {
                by_pipe.push((*p, Vec::new(), Vec::new()));
                by_pipe.len() - 1
            }
        };
        by_pipe[index].1.push(ratio);
        let mut cell = String::new();
        if floor {
            let f = if r > 0.0 {
                table.median_rps("redis2", *p, test) / r
            } else {
                0.0
            };
            by_pipe[index].2.push(f);
            cell = format!(" {f:.2} |");
        }
        println!(
            "| {test} | {p} | {s:.0} | {r:.0} | {ratio:.2} | {:.2} | {:.2} |{cell}",
            table.median_cpu("sluice", *p, test),
            table.median_cpu("redis", *p, test)
        );
    }
    let lowest = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    for (p, ratios, floors) in &by_pipe {
        let mut line = format!(
            "geometric mean at -P {p}: {:.2}; lowest {:.2}",
            geometric_mean(ratios),
            lowest(ratios)
        );
        if floor {
            line += &format!(
                " (second redis-server: {:.2}; lowest {:.2})",
                geometric_mean(floors),
                lowest(floors)
            );
        }
        println!("{line}");
    }
    Ok(())
}

fn variants(args: VariantsArgs) -> Result<()> {
    if !tools_present(&["redis-server", "redis-benchmark", "redis-cli"]) {
        return Ok(());
    }
    let default_bin = crate::setup::sluice_binary(args.sluice.as_deref())?;
    let mut names = vec!["redis".to_owned()];
    let mut servers = vec![Server::redis(free_port()?)?];
    for variant in &args.variants {
        let port = free_port()?;
        let server = if variant == "redis-server" {
            Server::redis(port)?
        } else {
            let mut flags: Vec<String> = variant
                .split(',')
                .filter(|f| !f.is_empty())
                .map(str::to_owned)
                .collect();
            let mut bin = default_bin.clone();
            if let Some(path) = flags.first().and_then(|f| f.strip_prefix("bin=")) {
                bin = PathBuf::from(path);
                flags.remove(0);
            }
            Server::sluice(&bin, port, &flags)?
        };
        names.push(variant.clone());
        servers.push(server);
    }
    for server in &mut servers {
        server.wait_until_serving()?;
    }
    let hz = clock_ticks();
    eprintln!(
        "machine: {}; rounds={} n={} pipeline={} clients={}",
        machine(),
        args.rounds,
        args.requests,
        args.pipeline,
        args.clients
    );
    // rps and CPU per request, by server index and test.
    let mut rps: HashMap<(usize, &str), Vec<f64>> = HashMap::new();
    let mut cpu: HashMap<(usize, &str), Vec<f64>> = HashMap::new();
    let count = servers.len();
    for round in 1..=args.rounds {
        for test in &args.tests {
            for i in 0..count {
                let index = (i + round) % count;
                let what = ["-t", test.as_str()];
                let server = &servers[index];
                if let Some(s) = measure(
                    server,
                    args.requests,
                    args.clients,
                    args.pipeline,
                    &what,
                    hz,
                )? {
                    rps.entry((index, test)).or_default().push(s.rps);
                    cpu.entry((index, test)).or_default().push(s.cpu_us);
                }
            }
        }
        eprintln!("round {round} done");
    }

    let of = |map: &HashMap<(usize, &str), Vec<f64>>, i: usize, t: &str| {
        map.get(&(i, t)).map_or(0.0, |v| median(v))
    };
    let header: String = names.iter().map(|n| format!("{n:>40}")).collect();
    println!("test         {header}");
    let mut logs = vec![0.0_f64; count];
    let mut under = vec![0_usize; count];
    for test in &args.tests {
        let base = of(&rps, 0, test);
        let mut line = format!("{test:<13}");
        for i in 0..count {
            let m = of(&rps, i, test);
            let ratio = m / base;
            logs[i] += ratio.ln();
            under[i] += usize::from(ratio < 1.0);
            let cell = format!("{m:>12.0} {ratio:5.2} {:6.2} us", of(&cpu, i, test));
            line += &format!("{cell:>40}");
        }
        println!("{line}");
    }
    for (i, name) in names.iter().enumerate() {
        println!(
            "{name}: geometric mean {:.3}, tests under 1.0: {}",
            (logs[i] / args.tests.len() as f64).exp(),
            under[i]
        );
    }
    Ok(())
}
