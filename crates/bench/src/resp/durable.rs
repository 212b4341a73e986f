//! `sluice-bench resp durable`: the Redis store in PostgreSQL (`everysec`, `always`) side by
//! side with Sluice in memory and `redis-server --appendonly yes --appendfsync always`.

use super::{
    LoadArgs, Server, ServerArgs, Table, clock_ticks, free_port, geometric_mean, machine, measure,
    redis_cli, requests_at, tools_present,
};
use anyhow::{Context, Result};
use clap::Args;
use std::process::{Command, Stdio};
use std::time::Duration;

#[derive(Debug, Args)]
pub struct DurableArgs {
    #[command(flatten)]
    server: ServerArgs,
    #[command(flatten)]
    load: LoadArgs,
    /// The PostgreSQL the store writes to (default: DATABASE_URL, else an embedded cluster
    /// under target/sluice-bench).
    #[arg(long)]
    database: Option<String>,
    /// redis-benchmark's tests (`-t`), comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "set,incr,lpush,hset,zadd"
    )]
    tests: Vec<String>,
    /// Requests of the hot-key run (INCR over 100 keys) that counts rows written per write.
    #[arg(long, default_value_t = 200_000)]
    hot_requests: u64,
    /// Leave out Redka's approach (each command its own SQL transaction through the driver).
    #[arg(long)]
    no_redka: bool,
    /// Redka's approach runs this many times fewer requests (it is slow; a rate is a rate).
    #[arg(long, default_value_t = 10)]
    redka_divisor: u64,
    /// Add a second `redis-server --appendfsync always`, paired like the others: the noise
    /// floor (its ratio to the first should be 1).
    #[arg(long)]
    floor: bool,
    /// Keys drawn at random out of this many (`redis-benchmark -r`); without it every test
    /// writes its one key, as the issue's `redis-benchmark -c 50` does.
    #[arg(long)]
    keyspace: Option<u64>,
}

/// The contenders, in the order printed: Sluice in memory, the store under everysec and always,
/// redis-server with its AOF, Redka's approach, and the second redis-server of `--floor`.
const ALL: [&str; 6] = [
    "memory",
    "everysec",
    "always",
    "redis-aof",
    "redka",
    "redis-aof-2",
];

pub fn durable(args: DurableArgs) -> Result<()> {
    if !tools_present(&["redis-server", "redis-benchmark", "redis-cli"]) {
        return Ok(());
    }
    let target = crate::setup::Target::open(args.database.clone())?;
    let bin = crate::setup::sluice_binary(args.server.sluice.as_deref())?;
    let run = std::process::id();
    let schema = |policy: &str| format!("sluice_bench_redis_{run}_{policy}");
    let aof_dir = tempfile::tempdir().context("a directory for redis-server's AOF")?;
    let aof_dir_2 = tempfile::tempdir().context("a directory for redis-server's AOF")?;
    let names: Vec<&str> = ALL
        .into_iter()
        .filter(|n| (*n != "redka" || !args.no_redka) && (*n != "redis-aof-2" || args.floor))
        .collect();
    let mut servers = Vec::new();
    for &name in &names {
        let port = free_port()?;
        let server = match name {
            "memory" => Server::sluice(&bin, port, &args.server.sluice_args)?,
            "redis-aof" => redis_aof(port, aof_dir.path())?,
            "redis-aof-2" => redis_aof(port, aof_dir_2.path())?,
            "redka" => redka(port, &target.url, &schema("redka"))?,
            policy => {
                let mut extra = args.server.sluice_args.clone();
                extra.extend(
                    [
                        "--database",
                        &target.url,
                        "--resp-store",
                        "postgres",
                        "--resp-schema",
                        &schema(policy),
                        "--resp-appendfsync",
                        policy,
                    ]
                    .map(str::to_owned),
                );
                Server::sluice(&bin, port, &extra)?
            }
        };
        servers.push(server);
    }
    for server in &mut servers {
        server.wait_until_serving()?;
    }
    let hz = clock_ticks();
    let load = &args.load;
    eprintln!(
        "resp durable: machine: {}; rounds={} n={} n_pipelined={} clients={} keyspace={}",
        machine(),
        load.rounds,
        load.requests,
        load.requests_pipelined,
        load.clients,
        args.keyspace
            .map_or("one key per test".to_owned(), |k| k.to_string())
    );
    let mut table = Table::default();
    for round in 1..=load.rounds {
        for pipeline in [1, load.pipeline] {
            let n = requests_at(load, pipeline);
            for i in 0..servers.len() {
                let index = (i + round) % servers.len();
                let server = &servers[index];
                redis_cli(server.port, &["flushall"])?;
                let n = if names[index] == "redka" {
                    (n / args.redka_divisor.max(1)).max(1)
                } else {
                    n
                };
                let keyspace = args.keyspace.map(|k| k.to_string());
                for test in &args.tests {
                    let mut what = vec!["-t", test.as_str()];
                    if let Some(k) = &keyspace {
                        what.extend(["-r", k.as_str()]);
                    }
                    if let Some(s) = measure(server, n, load.clients, pipeline, &what, hz)? {
                        table.add(names[index], pipeline, &s.test.clone(), &s);
                    }
                }
            }
        }
        eprintln!("round {round} done");
    }
    print_table(&table, &names);
    // Coalescing: PostgreSQL rows per Redis write when 100 keys take all the INCRs.
    for (index, name) in names.iter().enumerate().take(3).skip(1) {
        let server = &servers[index];
        redis_cli(server.port, &["save"])?;
        let before = rows_written(server.port)?;
        let what = ["-r", "100", "-t", "incr"];
        measure(
            server,
            args.hot_requests,
            load.clients,
            load.pipeline,
            &what,
            hz,
        )?;
        redis_cli(server.port, &["save"])?;
        let rows = rows_written(server.port)? - before;
        println!(
            "hot keys ({name}, INCR over 100 keys, -P {}): {rows} rows for {} writes = {:.4} rows per write",
            load.pipeline,
            args.hot_requests,
            rows as f64 / args.hot_requests as f64
        );
    }
    drop(servers);
    drop_schemas(
        &target.url,
        &[schema("everysec"), schema("always"), schema("redka")],
    );
    Ok(())
}

/// Redka's approach (`sluice-bench resp redka-serve`, this binary) on `port`.
fn redka(port: u16, url: &str, schema: &str) -> Result<Server> {
    let me = std::env::current_exe().context("this benchmark's path")?;
    let child = Command::new(me)
        .args(["resp", "redka-serve", "--port", &port.to_string()])
        .args(["--database", url, "--schema", schema])
        .stdout(Stdio::null())
        .spawn()
        .context("starting Redka's approach")?;
    Ok(Server { child, port })
}

/// `redis-server` with the AOF on and fsync after every write, in `dir`.
fn redis_aof(port: u16, dir: &std::path::Path) -> Result<Server> {
    let child = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args([
            "--save",
            "",
            "--appendonly",
            "yes",
            "--appendfsync",
            "always",
        ])
        .arg("--dir")
        .arg(dir)
        .args(["--loglevel", "warning"])
        .stdout(Stdio::null())
        .spawn()
        .context("starting redis-server with the AOF")?;
    Ok(Server { child, port })
}

/// `sluice_rows_written` from INFO persistence.
fn rows_written(port: u16) -> Result<u64> {
    let info = redis_cli(port, &["info", "persistence"])?;
    info.lines()
        .find_map(|l| l.strip_prefix("sluice_rows_written:"))
        .and_then(|v| v.trim().parse().ok())
        .context("no sluice_rows_written in INFO persistence")
}

fn print_table(table: &Table, names: &[&str]) {
    fn label(n: &str) -> &str {
        match n {
            "redis-aof" => "redis AOF always",
            "redis-aof-2" => "2nd redis AOF always (floor)",
            "redka" => "Redka's approach",
            other => other,
        }
    }
    let at = |n: &str| names.iter().position(|m| *m == n);
    // The ratios printed: (name, numerator, denominator), where both ran.
    let ratios: Vec<(&str, usize, usize)> = [
        ("everysec / memory", "everysec", "memory"),
        ("always / memory", "always", "memory"),
        ("always / redis AOF", "always", "redis-aof"),
        ("always / Redka", "always", "redka"),
        ("floor: redis AOF 2 / 1", "redis-aof-2", "redis-aof"),
    ]
    .into_iter()
    .filter_map(|(label, a, b)| Some((label, at(a)?, at(b)?)))
    .collect();
    let mut head = String::from("| test | pipe |");
    let mut rule = String::from("|---|---|");
    for n in names {
        head.push_str(&format!(" {} rps |", label(n)));
        rule.push_str("---|");
    }
    for (r, _, _) in &ratios {
        head.push_str(&format!(" {r} |"));
        rule.push_str("---|");
    }
    println!("{head}\n{rule}");
    let mut by_pipe: Vec<(u32, Vec<Vec<f64>>)> = Vec::new();
    for (test, p) in &table.order {
        let rps: Vec<f64> = names
            .iter()
            .map(|n| table.median_rps(n, *p, test))
            .collect();
        let values: Vec<f64> = ratios
            .iter()
            .map(|&(_, a, b)| if rps[b] > 0.0 { rps[a] / rps[b] } else { 0.0 })
            .collect();
        match by_pipe.iter_mut().find(|(q, _)| q == p) {
            Some((_, cols)) => {
                for (col, v) in cols.iter_mut().zip(&values) {
                    col.push(*v);
                }
            }
            None => by_pipe.push((*p, values.iter().map(|v| vec![*v]).collect())),
        }
        let mut line = format!("| {test} | {p} |");
        for r in &rps {
            line.push_str(&format!(" {r:.0} |"));
        }
        for v in &values {
            line.push_str(&format!(" {v:.2} |"));
        }
        println!("{line}");
    }
    for (p, cols) in &by_pipe {
        let means: Vec<String> = ratios
            .iter()
            .zip(cols)
            .map(|((label, _, _), col)| format!("{label} {:.2}", geometric_mean(col)))
            .collect();
        println!("-P {p}: geometric mean {}", means.join(", "));
    }
}

/// Drops the run's schemas (best effort: a failure is reported, the results stand).
fn drop_schemas(url: &str, schemas: &[String]) {
    let sql: String = schemas
        .iter()
        .map(|s| {
            format!(
                "DROP SCHEMA IF EXISTS {} CASCADE;",
                sluice_pg::sql::quote_ident(s)
            )
        })
        .collect();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("dropping the benchmark's schemas: {e}");
            return;
        }
    };
    let result = runtime.block_on(async {
        let mut conn = sluice_pg::Connection::connect(url).await?;
        conn.batch_execute(&sql).await
    });
    if let Err(e) = result {
        eprintln!("dropping the benchmark's schemas {schemas:?}: {e}");
    }
}

#[derive(Debug, Args)]
pub struct RestartArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// The PostgreSQL the store writes to (default: DATABASE_URL, else an embedded cluster).
    #[arg(long)]
    database: Option<String>,
    /// Keys of mixed types: 70% strings, 10% hashes (3 fields), 10% lists (3 items), 5% sets
    /// (3 members), 5% sorted sets (3 members).
    #[arg(long, default_value_t = 1_000_000)]
    keys: u64,
}

/// The command making key `n` of the mixed data set.
fn mixed_command(n: u64) -> Vec<Vec<u8>> {
    let key = format!("key:{n}").into_bytes();
    let words =
        |list: &[&str]| -> Vec<Vec<u8>> { list.iter().map(|w| w.as_bytes().to_vec()).collect() };
    let mut args = match n % 20 {
        0 | 1 => words(&["HSET"]),
        2 | 3 => words(&["RPUSH"]),
        4 => words(&["SADD"]),
        5 => words(&["ZADD"]),
        _ => words(&["SET"]),
    };
    args.push(key);
    match n % 20 {
        0 | 1 => args.extend(words(&[
            "f1",
            "value-one",
            "f2",
            "value-two",
            "f3",
            "value-three",
        ])),
        2..=4 => args.extend(words(&["one", "two", "three"])),
        5 => args.extend(words(&["1", "one", "2", "two", "3", "three"])),
        _ => args.push(format!("value-{n:010}").into_bytes()),
    }
    args
}

/// Waits until `port` answers PING (up to 10 minutes); the time it took since `since`.
fn serving_after(server: &mut Server, since: std::time::Instant) -> Result<Duration> {
    use std::io::{Read, Write};
    let deadline = since + Duration::from_secs(600);
    loop {
        if let Some(status) = server.child.try_wait()? {
            anyhow::bail!("the server on port {} exited: {status}", server.port);
        }
        if let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", server.port)) {
            let _ = stream.set_read_timeout(Some(Duration::from_secs(600)));
            if stream.write_all(b"PING\r\n").is_ok() {
                let mut reply = [0u8; 7];
                if stream.read_exact(&mut reply).is_ok() && &reply == b"+PONG\r\n" {
                    return Ok(since.elapsed());
                }
            }
        }
        if std::time::Instant::now() > deadline {
            anyhow::bail!(
                "the server on port {} did not serve within 10 minutes",
                server.port
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Time from start until PING is answered, with `keys` keys to load: Sluice's store in
/// PostgreSQL against redis-server replaying its AOF.
pub fn restart(args: RestartArgs) -> Result<()> {
    if !tools_present(&["redis-server", "redis-cli"]) {
        return Ok(());
    }
    let target = crate::setup::Target::open(args.database.clone())?;
    let bin = crate::setup::sluice_binary(args.server.sluice.as_deref())?;
    let dir = tempfile::tempdir()?;
    let file = super::memory::command_file(dir.path(), "mixed.resp", args.keys, mixed_command)?;
    let schema = format!("sluice_bench_redis_{}_restart", std::process::id());
    let mut extra = args.server.sluice_args.clone();
    extra.extend(
        [
            "--database",
            &target.url,
            "--resp-store",
            "postgres",
            "--resp-schema",
            &schema,
        ]
        .map(str::to_owned),
    );
    let port = free_port()?;
    let mut sluice = Server::sluice(&bin, port, &extra)?;
    serving_after(&mut sluice, std::time::Instant::now())?;
    super::redis_cli_input(port, &["--pipe"], &mut std::fs::File::open(&file)?)?;
    let saved = redis_cli(port, &["save"])?;
    anyhow::ensure!(saved.trim() == "OK", "SAVE answered {saved:?}");
    let dbsize = redis_cli(port, &["dbsize"])?;
    drop(sluice);
    // The killed owner's sessions end as PostgreSQL notices the closed sockets.
    std::thread::sleep(Duration::from_secs(1));
    let started = std::time::Instant::now();
    let mut sluice = Server::sluice(&bin, port, &extra)?;
    let sluice_time = serving_after(&mut sluice, started)?;
    let after = redis_cli(port, &["dbsize"])?;
    drop(sluice);

    let aof = dir.path().join("aof");
    std::fs::create_dir_all(&aof)?;
    let port = free_port()?;
    let redis_args = |port: u16| -> Vec<String> {
        [
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "yes",
            "--appendfsync",
            "everysec",
            "--loglevel",
            "warning",
            "--dir",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([aof.to_string_lossy().into_owned()])
        .collect()
    };
    let spawn_redis = |port: u16| -> Result<Server> {
        let child = Command::new("redis-server")
            .args(redis_args(port))
            .stdout(Stdio::null())
            .spawn()
            .context("starting redis-server")?;
        Ok(Server { child, port })
    };
    let mut redis = spawn_redis(port)?;
    serving_after(&mut redis, std::time::Instant::now())?;
    super::redis_cli_input(port, &["--pipe"], &mut std::fs::File::open(&file)?)?;
    let _ = redis_cli(port, &["shutdown"]);
    let _ = redis.child.wait();
    drop(redis);
    let started = std::time::Instant::now();
    let mut redis = spawn_redis(port)?;
    let redis_time = serving_after(&mut redis, started)?;
    let redis_after = redis_cli(port, &["dbsize"])?;
    drop(redis);
    drop_schemas(&target.url, &[schema]);
    anyhow::ensure!(
        dbsize.trim() == after.trim(),
        "Sluice lost keys across the restart: DBSIZE {} before, {} after",
        dbsize.trim(),
        after.trim()
    );
    println!(
        "restart with {} keys: sluice store=postgres {:.2} s (DBSIZE {} before, {} after), redis-server AOF {:.2} s (DBSIZE {}); ratio {:.2}",
        args.keys,
        sluice_time.as_secs_f64(),
        dbsize.trim(),
        after.trim(),
        redis_time.as_secs_f64(),
        redis_after.trim(),
        sluice_time.as_secs_f64() / redis_time.as_secs_f64()
    );
    Ok(())
}
