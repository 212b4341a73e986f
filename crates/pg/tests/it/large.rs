//! Rows larger than the read buffer, and results larger than memory should ever hold.
#![allow(clippy::unwrap_used)]

use crate::common;

use sluice_pg::Format;

#[tokio::test]
async fn row_larger_than_16_mib() {
    let mut conn = common::connect().await;
    let size = 17 * 1024 * 1024;
    let rows = conn
        .query(
            &format!("SELECT repeat('x', {size}), 'after', decode(repeat('ab', {size}), 'hex')"),
            &[],
        )
        .await
        .unwrap();
    let row = rows.get(0).unwrap();
    let text = row.raw(0).unwrap();
    assert_eq!(text.len(), size);
    assert!(text.iter().all(|&b| b == b'x'));
    assert_eq!(row.raw(1), Some(&b"after"[..]));
    // bytea in text format: \x then two hex digits per byte.
    assert_eq!(row.raw(2).unwrap().len(), 2 + 2 * size);
    // The same in binary format, and the connection goes on normally.
    let rows = conn
        .query_with(
            &format!("SELECT decode(repeat('ab', {size}), 'hex')"),
            &[],
            Format::Binary,
        )
        .await
        .unwrap();
    let bytes = rows.get(0).unwrap().raw(0).unwrap();
    assert_eq!(bytes.len(), size);
    assert!(bytes.iter().all(|&b| b == 0xab));
    assert_eq!(conn.execute("SELECT 1", &[]).await.unwrap(), 1);
}

#[tokio::test]
async fn blocks_share_one_buffer_without_copies() {
    let mut conn = common::connect().await;
    let mut stream = conn
        .query_stream(
            "SELECT g, 'row ' || g FROM generate_series(1, 50000) g",
            &[],
        )
        .await
        .unwrap();
    let mut seen = 0;
    let mut blocks = 0;
    while let Some(block) = stream.next_block().await.unwrap() {
        blocks += 1;
        let base = block.raw_data().as_ptr() as usize;
        let end = base + block.raw_data().len();
        for row in block.iter() {
            seen += 1;
            let id = row.raw(0).unwrap();
            // Every field is a slice of the block's bytes.
            let at = id.as_ptr() as usize;
            assert!(at >= base && at + id.len() <= end);
            assert_eq!(
                row.raw(1).unwrap(),
                format!("row {}", std::str::from_utf8(id).unwrap()).as_bytes()
            );
        }
    }
    assert_eq!(seen, 50_000);
    assert!(
        blocks < 50_000,
        "rows arrive many per block ({blocks} blocks)"
    );
}
