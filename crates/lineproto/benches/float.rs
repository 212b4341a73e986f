//! Float parsing on the tokens metrics carry: the standard library's parser, the fast-float2
//! crate, and the parser's own path (an exact fast path for plain decimals, then the standard
//! library). Decides whether a float crate would pay.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// `short`: up to 9 significant digits; `long`: the shortest round-trip form of a random
/// double, 15-17 digits, as Telegraf prints (`97.48743718592964`); `exponent`: the same with an
/// exponent.
fn tokens(kind: &str) -> Vec<String> {
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    (0..1000)
        .map(|i| {
            let unit = (next() >> 11) as f64 / (1u64 << 53) as f64;
            match (kind, i % 3) {
                ("exponent", _) => format!("{:e}", unit * 1e-3),
                ("long", _) => format!("{}", unit * 100.0),
                (_, 0) => format!("{}.{}", next() % 1000, next() % 1_000_000),
                (_, 1) => format!("{}", next() % 100_000),
                (_, _) => format!("-{}.{:02}", next() % 100, next() % 100),
            }
        })
        .collect()
}

fn floats(c: &mut Criterion) {
    for kind in ["short", "long", "exponent"] {
        floats_of(c, kind, &tokens(kind));
    }
}

fn floats_of(c: &mut Criterion, name: &str, tokens: &[String]) {
    let bytes: usize = tokens.iter().map(String::len).sum();
    let mut group = c.benchmark_group(format!("float_{name}"));
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("std", |b| {
        b.iter(|| {
            let mut sum = 0.0;
            for t in tokens {
                sum += black_box(t.as_str()).parse::<f64>().unwrap_or(0.0);
            }
            sum
        });
    });
    group.bench_function("fast-float2", |b| {
        b.iter(|| {
            let mut sum = 0.0;
            for t in tokens {
                sum += fast_float2::parse::<f64, _>(black_box(t.as_str())).unwrap_or(0.0);
            }
            sum
        });
    });
    group.bench_function("sluice", |b| {
        b.iter(|| {
            let mut sum = 0.0;
            for t in tokens {
                sum += sluice_lineproto::__bench::parse_float(black_box(t.as_str())).unwrap_or(0.0);
            }
            sum
        });
    });
    group.finish();
}

criterion_group!(benches, floats);
criterion_main!(benches);
