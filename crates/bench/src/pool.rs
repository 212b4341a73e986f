//! The pool benchmark: point selects from many tasks through a pool, side by side with dedicated
//! connections (with and without the reset), deadpool-postgres, bb8 and the pipelining mode.

use crate::report::{Line, field, median, print};
use crate::runs::{Keys, POINT_SQL, RunArgs, WorkerArgs, child, timed_tasks};
use crate::setup::Target;
use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use deadpool_postgres::RecyclingMethod;
use sluice_pg::pool::{Pool, PoolSettings, Reset, SESSION_RESET_SAME_AUTHORIZATION};

use std::sync::atomic::Ordering;

/// Options of `sluice-bench pool`.
#[derive(Debug, Args)]
pub struct PoolArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Which cases to run (all by default).
    #[arg(long, value_enum)]
    only: Vec<Case>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Case {
    /// 64 tasks over a pool of 8 against 8 tasks on 8 dedicated connections and the peers.
    Point,
    /// 256 tasks over 8 connections, pool against pipelining mode.
    Pipelining,
}

pub fn run(args: PoolArgs) -> Result<()> {
    let target = Target::open(args.run.database.clone())?;
    target.ensure_pgbench(args.run.scale)?;
    let cases = if args.only.is_empty() {
        vec![Case::Point, Case::Pipelining]
    } else {
        args.only.clone()
    };
    println!(
        "sluice-bench pool: {} rounds of {} s, server {}, {} cores",
        args.run.rounds,
        args.run.seconds,
        target.psql("SHOW server_version")?,
        std::thread::available_parallelism().map_or(0, usize::from)
    );
    for case in cases {
        match case {
            Case::Point => point(&target, &args)?,
            Case::Pipelining => pipelining(&target, &args)?,
        }
    }
    Ok(())
}

/// Runs every contender once per round, rotating who goes first; returns tps per contender.
fn rounds(target: &Target, args: &PoolArgs, kinds: &[&str]) -> Result<Vec<Vec<f64>>> {
    let mut tps = vec![Vec::new(); kinds.len()];
    for round in 0..args.run.rounds {
        let mut line = format!("round {}:", round + 1);
        for turn in 0..kinds.len() {
            let i = (round + turn) % kinds.len();
            let (out, _) = child("pool-worker", kinds[i], &target.url, args.run.seconds)?;
            let figure = field(&out, "tps").unwrap_or(f64::NAN);
            tps[i].push(figure);
        }
        for (kind, values) in kinds.iter().zip(&tps) {
            line.push_str(&format!(" {kind} {:.0}", values[round]));
        }
        eprintln!("{line}");
    }
    Ok(tps)
}

fn point(target: &Target, args: &PoolArgs) -> Result<()> {
    let kinds = [
        "dedicated",
        "sluice",
        "sluice-txonly",
        "deadpool",
        "bb8",
        "dedicated-reset",
        "deadpool-clean",
    ];
    let tps = rounds(target, args, &kinds)?;
    let [d, s, x, p, b, r, c] = [0, 1, 2, 3, 4, 5, 6].map(|i| median(&tps[i]));
    print(
        "Point selects by primary key: 64 tasks through a pool of 8 (SELECT abalance ... WHERE aid = $1)",
        &[
            Line {
                case: "sluice-pg, 8 tasks on 8 dedicated connections".into(),
                figure: format!("{d:.0} tps"),
                note: "reference".into(),
            },
            Line {
                case: "sluice-pg pool, Reset::Session (default)".into(),
                figure: format!("{s:.0} tps"),
                note: format!(
                    "{:.2} x dedicated (bar >= 0.9); {:.2} x the reset ceiling; {:.2} x deadpool Clean; {:.2} x deadpool Fast; {:.2} x bb8",
                    s / d,
                    s / r,
                    s / c,
                    s / p,
                    s / b
                ),
            },
            Line {
                case: "ceiling of a pool that resets the session: 8 dedicated connections, the same reset fused before every select".into(),
                figure: format!("{r:.0} tps"),
                note: format!("{:.2} x dedicated", r / d),
            },
            Line {
                case: "sluice-pg pool, Reset::TransactionOnly".into(),
                figure: format!("{x:.0} tps"),
                note: format!(
                    "{:.2} x dedicated; {:.2} x deadpool Fast; {:.2} x bb8",
                    x / d,
                    x / p,
                    x / b
                ),
            },
            Line {
                case: "deadpool-postgres 0.14 (RecyclingMethod::Fast: no reset, prepare_cached)".into(),
                figure: format!("{p:.0} tps"),
                note: format!("{:.2} x dedicated", p / d),
            },
            Line {
                case: "deadpool-postgres 0.14 (RecyclingMethod::Clean: the same reset as a round trip)".into(),
                figure: format!("{c:.0} tps"),
                note: format!("{:.2} x dedicated", c / d),
            },
            Line {
                case: "bb8-postgres 0.9 (defaults: test on check-out; query_typed)".into(),
                figure: format!("{b:.0} tps"),
                note: format!("{:.2} x dedicated", b / d),
            },
        ],
    );
    Ok(())
}

fn pipelining(target: &Target, args: &PoolArgs) -> Result<()> {
    let kinds = ["plain-256", "mux-256"];
    let tps = rounds(target, args, &kinds)?;
    let (plain, mux) = (median(&tps[0]), median(&tps[1]));
    let ratio = mux / plain;
    let verdict = if ratio >= 1.1 {
        "pays: keep it"
    } else {
        "does not pay here"
    };
    print(
        "Point selects from 256 tasks over 8 connections: plain pool against pipelining mode (both Reset::TransactionOnly)",
        &[
            Line {
                case: "sluice-pg pool of 8, 256 tasks".into(),
                figure: format!("{plain:.0} tps"),
                note: "reference".into(),
            },
            Line {
                case: "sluice-pg Multiplexer over 8 connections, 256 tasks".into(),
                figure: format!("{mux:.0} tps"),
                note: format!("{ratio:.2} x plain pool: {verdict}"),
            },
        ],
    );
    Ok(())
}

pub fn worker(args: WorkerArgs) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let (url, secs) = (args.url.as_str(), args.amount);
    let tps = runtime.block_on(async {
        match args.kind.as_str() {
            "dedicated" => dedicated(url, secs, None).await,
            "dedicated-reset" => dedicated(url, secs, Some(SESSION_RESET_SAME_AUTHORIZATION)).await,
            "sluice" => sluice(url, secs, 64, Reset::Session).await,
            "sluice-txonly" => sluice(url, secs, 64, Reset::TransactionOnly).await,
            "deadpool" => deadpool(url, secs, RecyclingMethod::Fast).await,
            "deadpool-clean" => deadpool(url, secs, RecyclingMethod::Clean).await,
            "bb8" => bb8(url, secs).await,
            "plain-256" => sluice(url, secs, 256, Reset::TransactionOnly).await,
            "mux-256" => multiplexed(url, secs, 256).await,
            other => bail!("unknown pool worker {other}"),
        }
    })?;
    println!("tps={tps:.1}");
    Ok(())
}

/// 8 tasks on 8 connections of their own; with `reset`, those statements are fused in front of
/// every query as the pool fuses its reset in front of a lease's first request.
async fn dedicated(url: &str, seconds: u64, reset: Option<&'static [&'static str]>) -> Result<f64> {
    let url = url.to_owned();
    timed_tasks(8, seconds, move |t, stop, count| {
        let url = url.clone();
        async move {
            let mut conn = sluice_pg::Connection::connect(&url).await?;
            let mut keys = Keys::new(t);
            while !stop.load(Ordering::Relaxed) {
                let aid = keys.next();
                if let Some(statements) = reset {
                    conn.prepend_reset(statements);
                }
                let row = conn.query_one(POINT_SQL, &[&aid]).await?;
                let _: i32 = row.get(0)?;
                count.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        }
    })
    .await
}

async fn sluice(url: &str, seconds: u64, tasks: u64, reset: Reset) -> Result<f64> {
    let mut settings = PoolSettings::new();
    settings.set_max_size(8).set_reset(reset);
    let pool = Pool::connect(url, settings)?;
    timed_tasks(tasks, seconds, move |t, stop, count| {
        let pool = pool.clone();
        async move {
            let mut keys = Keys::new(t);
            while !stop.load(Ordering::Relaxed) {
                let aid = keys.next();
                let mut conn = pool.get().await?;
                let row = conn.query_one(POINT_SQL, &[&aid]).await?;
                drop(conn);
                let _: i32 = row.get(0)?;
                count.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        }
    })
    .await
}

async fn multiplexed(url: &str, seconds: u64, tasks: u64) -> Result<f64> {
    let mut settings = PoolSettings::new();
    settings.set_max_size(8).set_reset(Reset::TransactionOnly);
    let pool = Pool::connect(url, settings)?;
    let mux = pool.multiplexer(8)?;
    timed_tasks(tasks, seconds, move |t, stop, count| {
        let mux = mux.clone();
        async move {
            let mut keys = Keys::new(t);
            while !stop.load(Ordering::Relaxed) {
                let aid = keys.next();
                let rows = mux.query(POINT_SQL, vec![Box::new(aid)]).await?;
                let _: i32 = rows.get(0).context("one row")?.get(0)?;
                count.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        }
    })
    .await
}

async fn deadpool(url: &str, seconds: u64, recycling_method: RecyclingMethod) -> Result<f64> {
    use deadpool_postgres::{ManagerConfig, PoolConfig, Runtime};
    let mut config = deadpool_postgres::Config::new();
    config.url = Some(url.to_owned());
    config.pool = Some(PoolConfig::new(8));
    config.manager = Some(ManagerConfig { recycling_method });
    let pool = config.create_pool(Some(Runtime::Tokio1), tokio_postgres::NoTls)?;
    timed_tasks(64, seconds, move |t, stop, count| {
        let pool = pool.clone();
        async move {
            let mut keys = Keys::new(t);
            while !stop.load(Ordering::Relaxed) {
                let aid = keys.next();
                let client = pool.get().await?;
                let statement = client.prepare_cached(POINT_SQL).await?;
                let row = client.query_one(&statement, &[&aid]).await?;
                drop(client);
                let _: i32 = row.try_get(0)?;
                count.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        }
    })
    .await
}

async fn bb8(url: &str, seconds: u64) -> Result<f64> {
    use tokio_postgres::types::Type;
    let manager =
        bb8_postgres::PostgresConnectionManager::new_from_stringlike(url, tokio_postgres::NoTls)?;
    let pool = bb8::Pool::builder().max_size(8).build(manager).await?;
    timed_tasks(64, seconds, move |t, stop, count| {
        let pool = pool.clone();
        async move {
            let mut keys = Keys::new(t);
            while !stop.load(Ordering::Relaxed) {
                let aid = keys.next();
                let conn = pool.get().await.map_err(|e| anyhow::anyhow!("{e}"))?;
                let rows = conn.query_typed(POINT_SQL, &[(&aid, Type::INT4)]).await?;
                drop(conn);
                let _: i32 = rows.first().context("one row")?.try_get(0)?;
                count.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        }
    })
    .await
}
