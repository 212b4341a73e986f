//! End-to-end figures for large view writes against a local PostgreSQL: a PUT of a 100,000-row
//! CSJ set through a view (rows/s, alternating with `sluice import` of the same rows), and the
//! server's RSS growth for a PATCH with a ~100 MiB CSJ body. Requests are sent by `curl` (a
//! separate process) so the RSS measured here is the server's alone.
//!
//! `cargo bench -p sluice-http --bench write_bulk` with `SLUICE_BENCH_URL` (default the local
//! benchmark database), `SLUICE_BIN` (default `target/release/sluice`), `ROWS`, `ROUNDS`,
//! `PATCH_MIB`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use sluice_http::view::model::{Column, Endpoint, MethodObject, PathSegment, Return, Source};
use sluice_http::view::write::{WriteRequest, handle};
use sluice_http::{Mount, MountFuture, Request, RequestContext, Router, ServerOptions};
use sluice_pg::{Connection, Pool, PoolSettings};
use std::io::Write;
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

struct One {
    endpoint: Endpoint,
    pool: Pool,
}

impl Mount for One {
    fn call(self: Arc<Self>, request: Request, context: RequestContext) -> MountFuture {
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let rest = context.rest(parts.uri.path()).trim_matches('/').to_owned();
            let captures: Vec<String> = rest.split('/').map(str::to_owned).collect();
            handle(WriteRequest {
                endpoint: &self.endpoint,
                method: &parts.method,
                captures: &captures,
                headers: &parts.headers,
                body,
                context: &context,
                pool: &self.pool,
                report_lsn: false,
            })
            .await
        })
    }
}

fn column(name: &str, key: bool, source: Source) -> Column {
    Column {
        name: name.into(),
        key,
        source,
        trim: true,
        schema: None,
        insert_required: false,
    }
}

fn endpoint(table: &str, with_group: bool) -> Endpoint {
    let mut columns = Vec::new();
    if with_group {
        columns.push(column("grp", true, Source::Capture(1)));
    }
    columns.push(column("id", true, Source::Field("id".into())));
    columns.push(column("name", false, Source::Field("name".into())));
    columns.push(column("amount", false, Source::Field("amount".into())));
    let method = MethodObject {
        table: table.into(),
        columns,
        existing: with_group.then(|| format!("SELECT id FROM {table} WHERE grp=$1")),
        delete: with_group.then(|| format!("DELETE FROM {table} WHERE grp=$1 AND id=$2")),
        returning: Vec::new(),
        schema: None,
    };
    Endpoint {
        json_path: "$.sql[0]".into(),
        path: vec![PathSegment::Capture(1)],
        returns: Return::Csj,
        precondition: None,
        get: None,
        delete: None,
        put: vec![method.clone()],
        patch: Some(method),
        post: Vec::new(),
    }
}

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_owned())
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn curl(method: &str, url: &str, file: &str) -> (f64, String) {
    let start = Instant::now();
    let out = Command::new("curl")
        .args([
            "-s",
            "-X",
            method,
            "-H",
            "Content-Type: application/csj",
            "--data-binary",
        ])
        .arg(format!("@{file}"))
        .arg(url)
        .output()
        .expect("curl");
    (
        start.elapsed().as_secs_f64(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn main() {
    let url = env_or(
        "SLUICE_BENCH_URL",
        "postgres://postgres@127.0.0.1:5432/test?sslmode=disable",
    );
    let bin = env_or(
        "SLUICE_BIN",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/release/sluice"),
    );
    let rows: usize = env_or("ROWS", "100000").parse().unwrap();
    let rounds: usize = env_or("ROUNDS", "5").parse().unwrap();
    let patch_mib: usize = env_or("PATCH_MIB", "100").parse().unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut admin = Connection::connect(&url).await.expect("connect");
        admin
            .batch_execute(
                "DROP SCHEMA IF EXISTS bench_write CASCADE; CREATE SCHEMA bench_write;
                 CREATE TABLE bench_write.put_set (grp int, id int, name text, amount numeric,
                     PRIMARY KEY (grp, id));
                 CREATE TABLE bench_write.import_set (grp int, id int, name text, amount numeric,
                     PRIMARY KEY (grp, id));
                 CREATE TABLE bench_write.patch_big (grp int, id int, name text, amount numeric,
                     PRIMARY KEY (grp, id));",
            )
            .await
            .unwrap();
        let put_file = "/tmp/sluice_bench_put.csj";
        let import_file = "/tmp/sluice_bench_import.csj";
        {
            let mut put = std::io::BufWriter::new(std::fs::File::create(put_file).unwrap());
            let mut import = std::io::BufWriter::new(std::fs::File::create(import_file).unwrap());
            writeln!(put, "\"id\",\"name\",\"amount\"").unwrap();
            writeln!(import, "\"grp\",\"id\",\"name\",\"amount\"").unwrap();
            for i in 0..rows {
                writeln!(put, "{i},\"name {i}\",{}.{:02}", i % 1000, i % 100).unwrap();
                writeln!(import, "1,{i},\"name {i}\",{}.{:02}", i % 1000, i % 100).unwrap();
            }
        }
        let pool = Pool::connect(&url, PoolSettings::new()).unwrap();
        let mut router = Router::new();
        router.mount(
            "/put",
            Arc::new(One {
                endpoint: endpoint("bench_write.put_set", true),
                pool: pool.clone(),
            }),
        );
        router.mount(
            "/patch",
            Arc::new(One {
                endpoint: endpoint("bench_write.patch_big", true),
                pool: pool.clone(),
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(sluice_http::run(
            listener,
            router,
            ServerOptions::default(),
            std::future::pending(),
        ));
        let put_url = format!("http://{addr}/put/1");
        let (mut fresh, mut replace, mut import) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..rounds {
            admin.batch_execute("TRUNCATE bench_write.put_set").await.unwrap();
            let (t, answer) = tokio::task::block_in_place(|| curl("PUT", &put_url, put_file));
            if round == 0 {
                eprintln!("PUT (empty table): {answer}");
            }
            fresh.push(t);
            let (t, answer) = tokio::task::block_in_place(|| curl("PUT", &put_url, put_file));
            if round == 0 {
                eprintln!("PUT (same set again): {answer}");
            }
            replace.push(t);
            admin.batch_execute("TRUNCATE bench_write.import_set").await.unwrap();
            let t = tokio::task::block_in_place(|| {
                let start = Instant::now();
                let status = Command::new(&bin)
                    .args(["import", "-q", "-d", &url, "bench_write.import_set", import_file])
                    .status()
                    .expect("sluice import (build it: cargo build --release -p sluice)");
                assert!(status.success());
                start.elapsed().as_secs_f64()
            });
            import.push(t);
        }
        let (f, r, i) = (median(&mut fresh), median(&mut replace), median(&mut import));
        let rate = |t: f64| rows as f64 / t;
        println!("PUT of {rows} CSJ rows through a view, {rounds} alternating rounds, medians:");
        println!("  into an empty table      {f:.3} s  {:>10.0} rows/s  {:.2}x import time", rate(f), f / i);
        println!("  same set again (updates) {r:.3} s  {:>10.0} rows/s  {:.2}x import time", rate(r), r / i);
        println!("  sluice import            {i:.3} s  {:>10.0} rows/s", rate(i));

        if patch_mib > 0 {
            let patch_file = "/tmp/sluice_bench_patch.csj";
            let mut size = 0usize;
            {
                let mut out = std::io::BufWriter::new(std::fs::File::create(patch_file).unwrap());
                let header = "\"id\",\"name\",\"amount\"\n";
                out.write_all(header.as_bytes()).unwrap();
                size += header.len();
                let filler = "x".repeat(180);
                let mut i = 0;
                while size < patch_mib << 20 {
                    let line = format!("{i},\"{filler} {i}\",{}.5\n", i % 1000);
                    out.write_all(line.as_bytes()).unwrap();
                    size += line.len();
                    i += 1;
                }
            }
            let _ = std::fs::write("/proc/self/clear_refs", "5");
            let before = status_kib("VmRSS:");
            let (t, answer) = tokio::task::block_in_place(|| {
                curl("PATCH", &format!("http://{addr}/patch/1"), patch_file)
            });
            let peak = status_kib("VmHWM:");
            let growth = peak.saturating_sub(before) as f64 / 1024.0;
            let body = size as f64 / (1 << 20) as f64;
            println!(
                "PATCH with a {body:.1} MiB CSJ body: {t:.2} s, answer {answer}; server RSS {:.1} -> \
                 peak {:.1} MiB: growth {growth:.1} MiB = {:.2}x the body",
                before as f64 / 1024.0,
                peak as f64 / 1024.0,
                growth / body
            );
        }
    });
}
