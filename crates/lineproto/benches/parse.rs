//! Criterion micro benchmarks (placeholder).
fn main() {}
