//! Criterion micro benchmarks: each encoder on rows of one shape (pgbench accounts, text with
//! escapes, arrays), and the CSJ / JSON Lines decoders and the CSV scanner on their output.
#![allow(clippy::unwrap_used)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sluice_formats::decode::{CsjDecoder, CsjHeader, CsvScanner, JsonlDecoder, SkipFields};
use sluice_formats::encode::encode_all;
use sluice_formats::{ColumnKind, ColumnSpec, Encoder, Format, Scalar};
use std::hint::black_box;

/// Rows as PostgreSQL's text output, with their columns.
struct Shape {
    name: &'static str,
    columns: Vec<ColumnSpec>,
    rows: Vec<Vec<Option<Vec<u8>>>>,
}

fn shapes() -> Vec<Shape> {
    let number = ColumnKind::scalar(Scalar::Number);
    let accounts = Shape {
        name: "pgbench_accounts",
        columns: vec![
            ColumnSpec::new("aid", number),
            ColumnSpec::new("bid", number),
            ColumnSpec::new("abalance", number),
            ColumnSpec::new("filler", ColumnKind::STRING),
        ],
        rows: (1..=1000)
            .map(|i: i32| {
                vec![
                    Some(i.to_string().into_bytes()),
                    Some(b"1".to_vec()),
                    Some((i % 7 - 3).to_string().into_bytes()),
                    Some(vec![b' '; 84]),
                ]
            })
            .collect(),
    };
    let text = Shape {
        name: "text_with_escapes",
        columns: vec![
            ColumnSpec::new("id", number),
            ColumnSpec::new("body", ColumnKind::STRING),
        ],
        rows: (1..=1000)
            .map(|i: i32| {
                let body = format!("line {i}, \"quoted\"\n\ttabbed é€ {}", "word ".repeat(12));
                vec![Some(i.to_string().into_bytes()), Some(body.into_bytes())]
            })
            .collect(),
    };
    let arrays = Shape {
        name: "arrays",
        columns: vec![
            ColumnSpec::new("ints", ColumnKind::array(Scalar::Number, b',')),
            ColumnSpec::new("texts", ColumnKind::array(Scalar::String, b',')),
        ],
        rows: (1..=1000)
            .map(|i: i32| {
                vec![
                    Some(format!("{{{i},{},NULL,-4}}", i * 2).into_bytes()),
                    Some(b"{alpha,\"beta gamma\",NULL,\"q\\\"x\"}".to_vec()),
                ]
            })
            .collect(),
    };
    vec![accounts, text, arrays]
}

fn encode(c: &mut Criterion) {
    for shape in shapes() {
        let mut group = c.benchmark_group(format!("encode/{}", shape.name));
        group.throughput(Throughput::Elements(shape.rows.len() as u64));
        for format in [Format::Csv, Format::Tsv, Format::Csj, Format::JsonLines] {
            let mut out = Vec::with_capacity(1 << 20);
            group.bench_function(format.name(), |b| {
                b.iter(|| {
                    out.clear();
                    let mut encoder = Encoder::new(format, &shape.columns, true);
                    encoder.begin(&mut out);
                    for row in &shape.rows {
                        encoder.row(row.iter().map(|f| f.as_deref()), &mut out);
                    }
                    encoder.finish(&mut out);
                    black_box(out.len())
                });
            });
        }
        group.finish();
    }
}

fn decode(c: &mut Criterion) {
    for shape in shapes() {
        let rows = || shape.rows.iter().map(|r| r.iter().map(|f| f.as_deref()));
        let kinds: Vec<ColumnKind> = shape.columns.iter().map(|c| c.kind).collect();
        let names: Vec<String> = shape.columns.iter().map(|c| c.name.clone()).collect();
        let mut group = c.benchmark_group(format!("decode/{}", shape.name));
        group.throughput(Throughput::Elements(shape.rows.len() as u64));
        let mut out = Vec::with_capacity(1 << 20);
        let csj = encode_all(Format::Csj, &shape.columns, true, rows());
        group.bench_function("csj", |b| {
            b.iter(|| {
                out.clear();
                let header = CsjHeader::read(&csj, true).unwrap().unwrap();
                let mut decoder = CsjDecoder::new(kinds.clone(), header.next_line);
                decoder
                    .decode(&csj[header.consumed..], true, &mut out)
                    .unwrap();
                black_box(out.len())
            });
        });
        let jsonl = encode_all(Format::JsonLines, &shape.columns, true, rows());
        group.bench_function("jsonl", |b| {
            b.iter(|| {
                out.clear();
                let mut decoder = JsonlDecoder::new(&names, kinds.clone());
                decoder.decode(&jsonl, true, &mut out).unwrap();
                black_box(out.len())
            });
        });
        let csv = encode_all(Format::Csv, &shape.columns, true, rows());
        group.bench_function("csv_scan", |b| {
            b.iter(|| {
                let mut scanner = CsvScanner::new();
                scanner.scan(black_box(&csv), &mut SkipFields).unwrap();
                scanner.finish(&mut SkipFields).unwrap();
                black_box(scanner.records())
            });
        });
        group.finish();
    }
}

criterion_group!(benches, encode, decode);
criterion_main!(benches);
