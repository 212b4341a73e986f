//! A million-row result read with bounded memory (its own test binary, so the process's peak
//! resident size measures this test alone).
#![allow(clippy::unwrap_used)]

#[path = "it/common/mod.rs"]
mod common;

/// The process's peak resident set size (VmHWM) in KiB.
fn peak_rss_kib() -> u64 {
    sluice_embedded::testkit::proc_status_kib(std::process::id(), "VmHWM:")
}

#[tokio::test]
async fn million_rows_with_bounded_memory() {
    let mut conn = common::connect().await;
    conn.execute("SELECT 1", &[]).await.unwrap();
    let before = peak_rss_kib();
    let mut stream = conn
        .query_stream(
            "SELECT g, repeat('y', 100), g * 2 FROM generate_series(1, 1000000) g",
            &[],
        )
        .await
        .unwrap();
    let (mut rows, mut bytes) = (0u64, 0u64);
    while let Some(block) = stream.next_block().await.unwrap() {
        for row in block.iter() {
            rows += 1;
            bytes += row
                .raw_fields()
                .map(|f| f.map_or(0, <[u8]>::len) as u64)
                .sum::<u64>();
        }
    }
    assert_eq!(rows, 1_000_000);
    assert!(bytes > 100_000_000, "{bytes} bytes read");
    let grown = peak_rss_kib().saturating_sub(before);
    assert!(
        grown < 48 * 1024,
        "peak memory grew by {grown} KiB while reading {bytes} bytes"
    );
}
