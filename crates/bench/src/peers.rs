//! The measured work, run in a child process: sluice-pg and tokio-postgres doing the same thing.

use crate::runs::{Keys, POINT_SQL, timed_tasks};
use anyhow::{Context, Result, bail};
use futures_util::StreamExt;
use futures_util::future::join_all;
use std::sync::atomic::Ordering;
use std::time::Instant;

pub fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

pub fn run_worker(kind: &str, url: &str, amount: u64) -> Result<()> {
    let runtime = match kind {
        "point-sluice" | "point-tokio" | "point-floor"
            if std::env::var("SLUICE_BENCH_PER_THREAD").is_err() =>
        {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()?
        }
        _ => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?,
    };
    runtime.block_on(async {
        match kind {
            "bulk-sluice" => bulk_sluice(url, sluice_pg::Format::Text).await,
            "bulk-sluice-binary" => bulk_sluice(url, sluice_pg::Format::Binary).await,
            "bulk-tokio" => bulk_tokio(url).await,
            "bulk-floor" => crate::floor::bulk(url).await,
            "point-sluice" => point_sluice(url, amount).await,
            "point-tokio" => point_tokio(url, amount).await,
            "point-floor" => crate::floor::point(url, amount).await,
            "pipeline-sluice" => pipeline_sluice(url, amount).await,
            "pipeline-tokio" => pipeline_tokio(url, amount).await,
            "pipeline-floor" => crate::floor::pipeline(url, amount).await,
            _ => bail!("unknown worker {kind}"),
        }
    })
}

async fn bulk_sluice(url: &str, format: sluice_pg::Format) -> Result<()> {
    let mut conn = sluice_pg::Connection::connect(url).await?;
    let mut stream = conn
        .query_stream_with("SELECT * FROM pgbench_accounts", &[], format)
        .await?;
    let (mut rows, mut sum, mut bytes) = (0u64, 0i64, 0usize);
    while let Some(block) = stream.next_block().await? {
        for row in block.iter() {
            let aid: i32 = row.get(0)?;
            let bid: i32 = row.get(1)?;
            let abalance: i32 = row.get(2)?;
            let filler: Option<&str> = row.get(3)?;
            sum += i64::from(aid) + i64::from(bid) + i64::from(abalance);
            bytes += filler.map_or(0, str::len);
            rows += 1;
        }
    }
    println!(
        "rows={rows} sum={sum} bytes={bytes} peak_rss_kib={}",
        peak_rss_kib()
    );
    Ok(())
}

async fn bulk_tokio(url: &str) -> Result<()> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await?;
    tokio::spawn(connection);
    let stream = client
        .query_raw("SELECT * FROM pgbench_accounts", std::iter::empty::<i32>())
        .await?;
    let mut stream = std::pin::pin!(stream);
    let (mut rows, mut sum, mut bytes) = (0u64, 0i64, 0usize);
    while let Some(row) = stream.next().await {
        let row = row?;
        let aid: i32 = row.try_get(0)?;
        let bid: i32 = row.try_get(1)?;
        let abalance: i32 = row.try_get(2)?;
        let filler: Option<&str> = row.try_get(3)?;
        sum += i64::from(aid) + i64::from(bid) + i64::from(abalance);
        bytes += filler.map_or(0, str::len);
        rows += 1;
    }
    println!(
        "rows={rows} sum={sum} bytes={bytes} peak_rss_kib={}",
        peak_rss_kib()
    );
    Ok(())
}

async fn point_sluice(url: &str, seconds: u64) -> Result<()> {
    let url = url.to_owned();
    let tps = timed_tasks(8, seconds, move |t, stop, count| {
        let url = url.clone();
        async move {
            let mut conn = sluice_pg::Connection::connect(&url).await?;
            let mut keys = Keys::new(t);
            while !stop.load(Ordering::Relaxed) {
                let aid = keys.next();
                let row = conn.query_one(POINT_SQL, &[&aid]).await?;
                let _balance: i32 = row.get(0)?;
                count.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        }
    })
    .await?;
    println!("tps={tps:.1}");
    Ok(())
}

async fn point_tokio(url: &str, seconds: u64) -> Result<()> {
    let url = url.to_owned();
    let tps = timed_tasks(8, seconds, move |t, stop, count| {
        let url = url.clone();
        async move {
            let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await?;
            tokio::spawn(connection);
            let statement = client.prepare(POINT_SQL).await?;
            let mut keys = Keys::new(t);
            while !stop.load(Ordering::Relaxed) {
                let aid = keys.next();
                let row = client.query_one(&statement, &[&aid]).await?;
                let _balance: i32 = row.try_get(0)?;
                count.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        }
    })
    .await?;
    println!("tps={tps:.1}");
    Ok(())
}

/// Median of `reps` timings of 1,000 point selects, one at a time and as one pipeline.
async fn pipeline_sluice(url: &str, reps: u64) -> Result<()> {
    let mut conn = sluice_pg::Connection::connect(url).await?;
    let mut keys = Keys::new(42);
    let (mut seq, mut pipe) = (Vec::new(), Vec::new());
    for rep in 0..=reps {
        let start = Instant::now();
        for _ in 0..1000 {
            let aid = keys.next();
            let row = conn.query_one(POINT_SQL, &[&aid]).await?;
            let _: i32 = row.get(0)?;
        }
        let sequential = start.elapsed();
        let start = Instant::now();
        let aids: Vec<i32> = (0..1000).map(|_| keys.next()).collect();
        let mut p = conn.pipeline(sluice_pg::SyncMode::Once).await?;
        for aid in &aids {
            p.query(POINT_SQL, &[aid])?;
        }
        for r in p.run().await? {
            let rows = r?;
            let _: i32 = rows.get(0).context("one row")?.get(0)?;
        }
        let pipelined = start.elapsed();
        if rep > 0 {
            seq.push(sequential.as_secs_f64() * 1000.0);
            pipe.push(pipelined.as_secs_f64() * 1000.0);
        }
    }
    println!(
        "sequential_ms={:.3} pipelined_ms={:.3}",
        crate::report::median(&seq),
        crate::report::median(&pipe)
    );
    Ok(())
}

async fn pipeline_tokio(url: &str, reps: u64) -> Result<()> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await?;
    tokio::spawn(connection);
    let statement = client.prepare(POINT_SQL).await?;
    let mut keys = Keys::new(42);
    let mut pipe = Vec::new();
    for rep in 0..=reps {
        let aids: Vec<i32> = (0..1000).map(|_| keys.next()).collect();
        let start = Instant::now();
        let params: Vec<[&(dyn tokio_postgres::types::ToSql + Sync); 1]> = aids
            .iter()
            .map(|a| [a as &(dyn tokio_postgres::types::ToSql + Sync)])
            .collect();
        let rows = join_all(params.iter().map(|p| client.query_one(&statement, p))).await;
        for r in rows {
            let _: i32 = r?.try_get(0)?;
        }
        if rep > 0 {
            pipe.push(start.elapsed().as_secs_f64() * 1000.0);
        }
    }
    println!("pipelined_ms={:.3}", crate::report::median(&pipe));
    Ok(())
}
