//! Pool fast path: acquire + release of an idle connection, alone and with tasks contending.
//!
//! Runs against `DATABASE_URL`, else the embedded test database. The connections are opened
//! before measuring; nothing here does I/O (the reset is queued, not sent).

use criterion::{Criterion, criterion_group, criterion_main};
use sluice_pg::pool::{Pool, PoolSettings};
use std::time::{Duration, Instant};

fn url() -> String {
    std::env::var("DATABASE_URL")
        .ok()
        .filter(|u| !u.trim().is_empty())
        .unwrap_or_else(|| sluice_embedded::test_database().url().to_owned())
}

fn warm_pool(runtime: &tokio::runtime::Runtime, size: usize) -> Pool {
    runtime.block_on(async {
        let mut settings = PoolSettings::new();
        settings.set_max_size(size);
        let pool = Pool::connect(&url(), settings).expect("a valid URL");
        let mut held = Vec::new();
        for _ in 0..size {
            held.push(pool.get().await.expect("a connection"));
        }
        drop(held);
        pool
    })
}

fn uncontended(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let pool = warm_pool(&runtime, 1);
    let mut group = c.benchmark_group("pool");
    group.bench_function("acquire_release_uncontended", |b| {
        b.iter_custom(|iters| {
            runtime.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    let conn = pool.get().await.expect("a connection");
                    drop(std::hint::black_box(conn));
                }
                start.elapsed()
            })
        })
    });
    group.bench_function("try_get_release_uncontended", |b| {
        let _guard = runtime.enter();
        b.iter(|| drop(std::hint::black_box(pool.try_get())))
    });
    group.finish();
}

fn contended(c: &mut Criterion) {
    const TASKS: u64 = 8;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let pool = warm_pool(&runtime, 4);
    let mut group = c.benchmark_group("pool");
    group.bench_function("acquire_release_8_tasks_4_connections_2_threads", |b| {
        b.iter_custom(|iters| {
            runtime.block_on(async {
                let per_task = iters.div_ceil(TASKS);
                let start = Instant::now();
                let tasks: Vec<_> = (0..TASKS)
                    .map(|_| {
                        let pool = pool.clone();
                        tokio::spawn(async move {
                            for _ in 0..per_task {
                                let conn = pool.get().await.expect("a connection");
                                drop(std::hint::black_box(conn));
                            }
                        })
                    })
                    .collect();
                for t in tasks {
                    t.await.expect("task");
                }
                // Time per acquire + release, as if done one after another.
                start
                    .elapsed()
                    .mul_f64(iters as f64 / (per_task * TASKS) as f64)
            })
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1));
    targets = uncontended, contended
}
criterion_main!(benches);
