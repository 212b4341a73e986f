//! A list's grid following its elements: a list of small elements that comes to hold large ones by pushes moves to one position per row, a long one only when its whole mean says so.

use crate::chunks::{C, Conn, args, check, grids, large, rows_since, values};
use crate::common::{Server, q, schema};
use sluice_resp::durable::AppendFsync;

/// The list `key` read whole.
async fn lrange(c: &mut Conn, key: &str) -> Vec<String> {
    q(c, &["LRANGE", key, "0", "-1"]).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_of_small_elements_pushed_large_ones_moves_to_a_row_per_element() {
    let schema = schema("rs_regrid_grow");
    let server = Server::start(&schema, AppendFsync::Always).await;
    let mut c = server.client().await;
    let mut w = 0;
    // 100 elements of 2-3 bytes: chunks of 16 (positions 0..99, the last chunk 96..111).
    let _: i64 = q(&mut c, &args("RPUSH", "l", &values("e", 100))).await;
    assert_eq!(rows_since(&mut c, &mut w).await, 7 + 1);
    assert_eq!(grids(&schema, "l").await, [C]);
    // 4 KB elements pushed one at a time: the chunk they land in looks large at once, but the
    // list's mean passes 128 bytes only at the fourth ((290 + 4 * 4096) / 104): until then a
    // push rewrites its chunk, then the list is written whole, a row per element, and a push
    // writes its own row after.
    let pushed = large("b", 6, 4096);
    let mut written = Vec::new();
    let mut grid = Vec::new();
    for big in &pushed {
        let _: i64 = q(&mut c, &["RPUSH", "l", big]).await;
        written.push(rows_since(&mut c, &mut w).await);
        grid.push(grids(&schema, "l").await);
    }
    assert_eq!(written, [1, 1, 1, 104 + 1, 1, 1]);
    assert_eq!(grid, [[C], [C], [C], [1], [1], [1]]);
    check(&schema, "l", &mut c, Some(0)).await;
    // Pops and pushes at both ends on the new grid: a row each or none.
    let _: String = q(&mut c, &["LPOP", "l"]).await;
    assert_eq!(rows_since(&mut c, &mut w).await, 0);
    let _: i64 = q(&mut c, &["LPUSH", "l", &pushed[0]]).await;
    assert_eq!(rows_since(&mut c, &mut w).await, 1);
    check(&schema, "l", &mut c, Some(0)).await;
    let before = lrange(&mut c, "l").await;
    drop(c);
    server.stop().await;

    let server = Server::start(&schema, AppendFsync::Always).await;
    let mut c = server.client().await;
    assert_eq!(lrange(&mut c, "l").await, before);
    assert_eq!(grids(&schema, "l").await, [1]);
    let _: String = q(&mut c, &["RPOP", "l"]).await;
    check(&schema, "l", &mut c, Some(0)).await;
    drop(c);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_list_of_small_elements_pushed_one_large_is_not_written_whole() {
    let schema = schema("rs_regrid_long");
    let server = Server::start(&schema, AppendFsync::EverySec).await;
    let mut c = server.client().await;
    let mut w = 0;
    // 100,000 elements of 2-6 bytes (past the length measured exactly at every flush), and
    // 2,000 (measured exactly).
    for batch in 0..10 {
        let _: i64 = q(
            &mut c,
            &args("RPUSH", "long", &values(&format!("{batch}:"), 10_000)),
        )
        .await;
    }
    let _: i64 = q(&mut c, &args("RPUSH", "short", &values("s", 2000))).await;
    let _ = rows_since(&mut c, &mut w).await;
    assert_eq!(grids(&schema, "long").await, [C]);
    assert_eq!(grids(&schema, "short").await, [C]);
    // One large element at each end of each: the chunks they land in look large, the lists do
    // not: a row per push, the grid kept.
    let big = large("B", 2, 8192);
    for key in ["long", "short"] {
        let _: i64 = q(&mut c, &["RPUSH", key, &big[0]]).await;
        assert_eq!(rows_since(&mut c, &mut w).await, 1, "{key}");
        let _: i64 = q(&mut c, &["LPUSH", key, &big[1]]).await;
        assert_eq!(rows_since(&mut c, &mut w).await, 1, "{key}");
        // Pops next to them rewrite those chunks again, still in part.
        let _: String = q(&mut c, &["LPOP", key]).await;
        let _: String = q(&mut c, &["RPOP", key]).await;
        let _: String = q(&mut c, &["RPOP", key]).await;
        assert_eq!(rows_since(&mut c, &mut w).await, 1, "{key}");
        assert_eq!(grids(&schema, key).await, [C], "{key}");
        check(&schema, key, &mut c, Some(0)).await;
    }
    let _: i64 = q(&mut c, &["RPUSH", "long", &big[0]]).await;
    let long = lrange(&mut c, "long").await;
    assert_eq!(long.len(), 100_000);
    drop(c);
    server.stop().await;

    let server = Server::start(&schema, AppendFsync::EverySec).await;
    let mut c = server.client().await;
    assert_eq!(lrange(&mut c, "long").await, long);
    assert_eq!(grids(&schema, "long").await, [C]);
    drop(c);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_list_whose_elements_became_large_moves_once() {
    let schema = schema("rs_regrid_long_large");
    let server = Server::start(&schema, AppendFsync::EverySec).await;
    let mut c = server.client().await;
    let mut w = 0;
    let _: i64 = q(&mut c, &args("RPUSH", "l", &values("e", 5000))).await;
    let _ = rows_since(&mut c, &mut w).await;
    // 300 elements of 4 KB: the mean is (5000 * ~4 + 300 * 4096) / 5300, about 236 bytes.
    let _: i64 = q(&mut c, &args("RPUSH", "l", &large("b", 300, 4096))).await;
    assert_eq!(rows_since(&mut c, &mut w).await, 5300 + 1, "written whole");
    assert_eq!(grids(&schema, "l").await, [1]);
    let _: String = q(&mut c, &["RPOP", "l"]).await;
    let _: i64 = q(&mut c, &["LPUSH", "l", "h"]).await;
    assert_eq!(rows_since(&mut c, &mut w).await, 1);
    check(&schema, "l", &mut c, Some(-1)).await;
    drop(c);
    server.stop().await;
}

/// A deterministic sequence of pushes and pops at both ends, small elements first and large
/// ones after: the list moves to one row per element on the way, and what PostgreSQL holds is
/// what memory holds at every save and after a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pushes_and_pops_across_the_move_keep_the_list_exact() {
    let schema = schema("rs_regrid_mixed");
    let server = Server::start(&schema, AppendFsync::Always).await;
    let mut c = server.client().await;
    let mut seed: u64 = 0x5eed;
    let mut next = move |n: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    let mut seen = Vec::new();
    for step in 0..240 {
        let size = if step < 80 {
            4
        } else {
            [4, 1500, 3000][next(3) as usize]
        };
        let left = next(2) == 0;
        match next(5) {
            0..=2 => {
                let items = large(&format!("{step}."), 1 + next(20) as usize, size.max(12));
                let cmd = if left { "LPUSH" } else { "RPUSH" };
                let _: i64 = q(&mut c, &args(cmd, "m", &items)).await;
            }
            _ => {
                let count = (1 + next(12)).to_string();
                let cmd = if left { "LPOP" } else { "RPOP" };
                let _: redis::Value = q(&mut c, &[cmd, "m", &count]).await;
            }
        }
        if step % 6 == 5 {
            check(&schema, "m", &mut c, None).await;
            if let Some(&g) = grids(&schema, "m").await.first()
                && seen.last() != Some(&g)
            {
                seen.push(g);
            }
        }
    }
    assert_eq!(
        seen,
        [C, 1],
        "small elements on chunks of 16, then a row each"
    );
    let before = lrange(&mut c, "m").await;
    drop(c);
    server.stop().await;
    let server = Server::start(&schema, AppendFsync::Always).await;
    let mut c = server.client().await;
    assert_eq!(lrange(&mut c, "m").await, before);
    check(&schema, "m", &mut c, None).await;
    drop(c);
    server.stop().await;
}
