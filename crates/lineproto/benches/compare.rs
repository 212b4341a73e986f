//! Criterion, both parsers in one run: sluice-lineproto against the influxdb-line-protocol crate
//! on each input shape (short lines, tag-heavy lines, string fields, escaped values, ...).
//!
//! Both fully parse every line and the loop touches each point's tags and fields. The
//! influxdb crate takes `&str`, so its case includes the UTF-8 check a caller holding bytes
//! must make; sluice checks UTF-8 itself.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sluice_lineproto::{Batch, BatchStorage, Options, Parser};

mod shapes;

fn sluice_stream(body: &[u8]) -> usize {
    let mut parser = Parser::new(body, Options::new(0));
    let mut seen = 0;
    while let Some(point) = parser.next_point() {
        seen += point.map_or(0, |p| p.fields().len() + p.tags().len());
    }
    seen
}

fn sluice_batch(body: &[u8]) -> usize {
    Batch::parse(body, &Options::new(0)).map_or(0, |batch| {
        batch
            .points()
            .map(|p| p.fields().len() + p.tags().len())
            .sum()
    })
}

/// A batch in the vectors of the previous one, as a server parsing body after body does.
fn sluice_batch_reused(body: &[u8], storage: &mut BatchStorage) -> usize {
    match Batch::parse_reusing(body, &Options::new(0), storage) {
        Ok(batch) => {
            let seen = batch
                .points()
                .map(|p| p.fields().len() + p.tags().len())
                .sum();
            *storage = batch.into_storage();
            seen
        }
        Err(_) => 0,
    }
}

fn influxdb(body: &[u8]) -> usize {
    let Ok(text) = std::str::from_utf8(body) else {
        return 0;
    };
    influxdb_line_protocol::parse_lines(text)
        .map(|line| {
            line.map_or(0, |l| {
                l.field_set.len() + l.series.tag_set.map_or(0, |t| t.len())
            })
        })
        .sum()
}

fn compare(c: &mut Criterion) {
    for shape in shapes::all(10_000) {
        let body = shape.body.as_bytes();
        assert_eq!(
            sluice_stream(body),
            influxdb(body),
            "{}: both parsers must see the same tags and fields",
            shape.name
        );
        assert_eq!(sluice_batch(body), influxdb(body));
        let mut group = c.benchmark_group(format!("compare/{}", shape.name));
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_function("sluice", |b| b.iter(|| sluice_stream(black_box(body))));
        group.bench_function("sluice_batch", |b| b.iter(|| sluice_batch(black_box(body))));
        let mut storage = BatchStorage::default();
        group.bench_function("sluice_batch_reused", |b| {
            b.iter(|| sluice_batch_reused(black_box(body), &mut storage))
        });
        group.bench_function("influxdb_line_protocol", |b| {
            b.iter(|| influxdb(black_box(body)))
        });
        group.finish();
    }
}

criterion_group!(benches, compare);
criterion_main!(benches);
