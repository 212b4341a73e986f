//! Side by side, in one run: sluice-lineproto against the influxdb-line-protocol crate (the
//! parser InfluxDB 3 uses, and what a Rust user would otherwise pick), on each input shape.
//!
//! `cargo run --release -p sluice-lineproto --example compare [-- LINES ROUNDS]`
//!
//! Both parsers fully parse every line (names, typed values, timestamp) and the loop touches
//! each point. The influxdb crate takes `&str`, so its timing includes the UTF-8 check a
//! caller holding bytes must make; sluice validates UTF-8 itself. A and B alternate, ROUNDS
//! times each, and the table shows the median of each.

use std::hint::black_box;
use std::time::{Duration, Instant};

use sluice_lineproto::{Options, Parser};

#[path = "../benches/shapes/mod.rs"]
mod shapes;

fn sluice(body: &[u8]) -> usize {
    let mut parser = Parser::new(body, Options::new(0));
    let mut fields = 0;
    while let Some(point) = parser.next_point() {
        match point {
            Ok(p) => fields += p.fields().len() + p.tags().len(),
            Err(e) => panic!("sluice rejected the benchmark body: {e}"),
        }
    }
    fields
}

fn influxdb(body: &[u8]) -> usize {
    let text = std::str::from_utf8(body).expect("benchmark bodies are UTF-8");
    let mut fields = 0;
    for line in influxdb_line_protocol::parse_lines(text) {
        match line {
            Ok(l) => fields += l.field_set.len() + l.series.tag_set.map_or(0, |t| t.len()),
            Err(e) => panic!("influxdb-line-protocol rejected the benchmark body: {e}"),
        }
    }
    fields
}

/// Runs `f` repeatedly for about `budget` and returns seconds per call.
fn time(f: fn(&[u8]) -> usize, body: &[u8], budget: Duration) -> f64 {
    let start = Instant::now();
    let mut calls = 0u32;
    while calls == 0 || start.elapsed() < budget {
        black_box(f(black_box(body)));
        calls += 1;
    }
    start.elapsed().as_secs_f64() / f64::from(calls)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let lines: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(7);
    let budget = Duration::from_millis(300);

    println!(
        "{:<12} {:>6} {:>14} {:>9} {:>14} {:>9} {:>7}",
        "shape", "B/line", "sluice line/s", "MB/s", "influxdb line/s", "MB/s", "ratio"
    );
    for shape in shapes::all(lines) {
        let body = shape.body.as_bytes();
        assert_eq!(
            sluice(body),
            influxdb(body),
            "{}: both see the same tags and fields",
            shape.name
        );
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            a.push(time(sluice, body, budget));
            b.push(time(influxdb, body, budget));
        }
        let (a, b) = (median(a), median(b));
        let mb = body.len() as f64 / 1e6;
        let n = shape.lines as f64;
        println!(
            "{:<12} {:>6} {:>14.0} {:>9.1} {:>14.0} {:>9.1} {:>6.2}x",
            shape.name,
            body.len() / shape.lines,
            n / a,
            mb / a,
            n / b,
            mb / b,
            b / a
        );
    }
}
