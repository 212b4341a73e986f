//! Criterion micro benchmarks: the streaming and batch parsers, one case per input shape.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sluice_lineproto::{Batch, Options, Parser};

mod shapes;

fn parse(c: &mut Criterion) {
    let options = Options::new(0);
    for shape in shapes::all(1000) {
        let mut group = c.benchmark_group(shape.name);
        group.throughput(Throughput::Bytes(shape.body.len() as u64));
        group.bench_function("stream", |b| {
            b.iter(|| {
                let mut parser = Parser::new(black_box(shape.body.as_bytes()), options);
                let mut fields = 0;
                while let Some(point) = parser.next_point() {
                    fields += point.map_or(0, |p| p.fields().len());
                }
                black_box(fields)
            });
        });
        group.bench_function("batch", |b| {
            b.iter(|| {
                let batch = Batch::parse(black_box(shape.body.as_bytes()), &options);
                black_box(batch.map_or(0, |b| b.len()))
            });
        });
        group.finish();
    }
}

criterion_group!(benches, parse);
criterion_main!(benches);
