//! Lists stored in chunks of each list's own grid (16 positions for small elements, 1 for large), through the server and PostgreSQL.

use crate::common::{Server, q, rows, schema, value};
use sluice_resp::durable::AppendFsync;

pub(crate) type Conn = redis::aio::MultiplexedConnection;

/// Positions per chunk of a list of small elements, as `SMALL_GRID` in src/chunks.rs.
pub(crate) const C: i64 = 16;

/// The chunk rows of a list at contiguous positions `lo..=hi`: (chunk, first_pos, items).
pub(crate) fn grid(lo: i64, hi: i64) -> Vec<(i64, i64, i64)> {
    let mut out: Vec<(i64, i64, i64)> = Vec::new();
    for pos in lo..=hi {
        match out.last_mut() {
            Some(last) if last.0 == pos.div_euclid(C) => last.2 += 1,
            _ => out.push((pos.div_euclid(C), pos, 1)),
        }
    }
    out
}

/// Rows written since `before` (a reading of `sluice_rows_written`) once everything is saved.
pub(crate) async fn rows_since(c: &mut Conn, before: &mut u64) -> u64 {
    let _: String = q(c, &["SAVE"]).await;
    let text: String = q(c, &["INFO", "persistence"]).await;
    let now: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("sluice_rows_written:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("sluice_rows_written");
    std::mem::replace(before, now).abs_diff(now)
}

/// The chunk rows of the list `key` of database 0: (chunk, first_pos, number of items), in
/// chunk order.
pub(crate) async fn chunks(schema: &str, key: &str) -> Vec<(i64, i64, i64)> {
    rows(&format!(
        "SELECT chunk::text, first_pos::text, cardinality(items)::text \
         FROM \"{schema}\".list_chunks c WHERE db = 0 AND key = convert_to('{key}', 'UTF8') \
         ORDER BY c.chunk"
    ))
    .await
    .into_iter()
    .map(|r| {
        let n = |i: usize| {
            r[i].as_deref()
                .unwrap_or("")
                .parse::<i64>()
                .expect("a number")
        };
        (n(0), n(1), n(2))
    })
    .collect()
}

/// The grids of the list `key` of database 0's rows (one, the list's, when it has rows).
pub(crate) async fn grids(schema: &str, key: &str) -> Vec<i64> {
    rows(&format!(
        "SELECT DISTINCT grid::text FROM \"{schema}\".list_chunks \
         WHERE db = 0 AND key = convert_to('{key}', 'UTF8') ORDER BY 1"
    ))
    .await
    .into_iter()
    .map(|r| r[0].as_deref().unwrap_or("").parse().expect("a number"))
    .collect()
}

/// The list `key` of database 0: its chunks hold contiguous positions on its one grid, the
/// view shows what LRANGE shows, and the first position is `first` (`None`: any).
pub(crate) async fn check(schema: &str, key: &str, c: &mut Conn, first: Option<i64>) {
    let _: String = q(c, &["SAVE"]).await;
    let listed: Vec<String> = q(c, &["LRANGE", key, "0", "-1"]).await;
    let chunks = chunks(schema, key).await;
    let grids = grids(schema, key).await;
    assert!(grids.len() <= 1, "{key}: rows of grids {grids:?}");
    let g = grids.first().copied().unwrap_or(1);
    let mut next = None;
    for &(chunk, first_pos, n) in &chunks {
        assert!(n > 0, "{key}: an empty chunk row {chunk}");
        assert!(n <= g, "{key}: {chunks:?}");
        assert_eq!(first_pos.div_euclid(g), chunk, "{key}: {chunks:?}");
        assert_eq!(
            (first_pos + n - 1).div_euclid(g),
            chunk,
            "{key}: {chunks:?}"
        );
        if let Some(next) = next {
            assert_eq!(first_pos, next, "{key}: a gap in {chunks:?}");
        }
        next = Some(first_pos + n);
    }
    assert_eq!(
        chunks.iter().map(|c| c.2).sum::<i64>(),
        listed.len() as i64,
        "{key}"
    );
    if let (Some(first), Some(&(_, got, _))) = (first, chunks.first()) {
        assert_eq!(got, first, "{key}: {chunks:?}");
    }
    let sql = format!(
        "SELECT coalesce(string_agg(value_text, ',' ORDER BY index), ''), \
                coalesce(string_agg(index::text, ',' ORDER BY pos), ''), \
                coalesce(min(pos), 0)::text \
         FROM \"{schema}\".lists WHERE db = 0 AND key_text = '{key}'"
    );
    let row = &rows(&sql).await[0];
    assert_eq!(row[0].as_deref(), Some(listed.join(",").as_str()), "{key}");
    let indexes: Vec<String> = (0..listed.len()).map(|i| i.to_string()).collect();
    assert_eq!(row[1].as_deref(), Some(indexes.join(",").as_str()), "{key}");
    if let (Some(first), false) = (first, listed.is_empty()) {
        assert_eq!(row[2].as_deref(), Some(first.to_string().as_str()));
    }
}

pub(crate) fn args<'a>(cmd: &'a str, key: &'a str, values: &'a [String]) -> Vec<&'a str> {
    let mut v = vec![cmd, key];
    v.extend(values.iter().map(String::as_str));
    v
}

pub(crate) fn values(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pushes_and_pops_cross_chunk_boundaries_below_zero_too() {
    let schema = schema("rs_chunks");
    let server = Server::start(&schema, AppendFsync::Always).await;
    let mut c = server.client().await;
    let mut w = 0;
    let _: i64 = q(&mut c, &args("RPUSH", "l", &values("e", 10))).await;
    assert_eq!(rows_since(&mut c, &mut w).await, 2, "the key and chunk 0");
    // 20 at the head: positions -20..-1, chunks -2 (-20..-17) and -1 (-16..-1).
    let _: i64 = q(&mut c, &args("LPUSH", "l", &values("h", 20))).await;
    assert_eq!(rows_since(&mut c, &mut w).await, 2);
    assert_eq!(chunks(&schema, "l").await, grid(-20, 9));
    check(&schema, "l", &mut c, Some(-20)).await;
    // One more at the head: chunk -2 again.
    let _: i64 = q(&mut c, &["LPUSH", "l", "x"]).await;
    assert_eq!(rows_since(&mut c, &mut w).await, 1);
    check(&schema, "l", &mut c, Some(-21)).await;
    // Pops emptying chunk -2 (5 elements) and taking three of chunk -1: chunk -2's row goes.
    let _: Vec<String> = q(&mut c, &["LPOP", "l", "8"]).await;
    assert_eq!(rows_since(&mut c, &mut w).await, 1);
    assert_eq!(chunks(&schema, "l").await, grid(-13, 9));
    check(&schema, "l", &mut c, Some(-13)).await;
    // Pushes at the tail filling chunk 0 and crossing into chunk 1.
    let _: i64 = q(&mut c, &args("RPUSH", "l", &values("t", 10))).await;
    assert_eq!(rows_since(&mut c, &mut w).await, 2, "chunks 0 and 1");
    assert_eq!(chunks(&schema, "l").await, grid(-13, 19));
    // Pops at the tail emptying chunk 1 (16..19), then chunk 0 entirely, then into chunk -1.
    let _: Vec<String> = q(&mut c, &["RPOP", "l", "4"]).await;
    assert_eq!(rows_since(&mut c, &mut w).await, 0, "chunk 1 only deleted");
    let _: Vec<String> = q(&mut c, &["RPOP", "l", "17"]).await;
    assert_eq!(rows_since(&mut c, &mut w).await, 1, "chunk -1 rewritten");
    assert_eq!(chunks(&schema, "l").await, [(-1, -13, 12)]);
    check(&schema, "l", &mut c, Some(-13)).await;
    // A push and pops at both ends in one flush (a transaction): chunks -2 and -1.
    let mut tx = redis::pipe();
    tx.atomic()
        .cmd("LPUSH")
        .arg("l")
        .arg(values("m", 5))
        .cmd("RPOP")
        .arg("l")
        .arg(2)
        .cmd("LPOP")
        .arg("l");
    let _: redis::Value = tx.query_async(&mut c).await.unwrap();
    assert_eq!(rows_since(&mut c, &mut w).await, 2);
    assert_eq!(chunks(&schema, "l").await, grid(-17, -4));
    check(&schema, "l", &mut c, Some(-17)).await;
    // The list emptied by pops: every row goes.
    let _: Vec<String> = q(&mut c, &["LPOP", "l", "100"]).await;
    let _: String = q(&mut c, &["SAVE"]).await;
    assert!(chunks(&schema, "l").await.is_empty());

    // LTRIM across chunks: from 0..=299 (19 chunks), keep 100..=149: chunks 6 and 9 are
    // rewritten (2 rows), 7 and 8 untouched, the others deleted.
    let _: i64 = q(&mut c, &args("RPUSH", "t", &values("v", 300))).await;
    assert_eq!(
        rows_since(&mut c, &mut w).await,
        20,
        "the key and 19 chunks"
    );
    let _: String = q(&mut c, &["LTRIM", "t", "100", "149"]).await;
    assert_eq!(rows_since(&mut c, &mut w).await, 2);
    assert_eq!(chunks(&schema, "t").await, grid(100, 149));
    check(&schema, "t", &mut c, Some(100)).await;

    let before: Vec<(String, Vec<String>)> = {
        let mut out = Vec::new();
        for key in ["l", "t"] {
            out.push((
                key.to_string(),
                q(&mut c, &["LRANGE", key, "0", "-1"]).await,
            ));
        }
        out
    };
    drop(c);
    server.stop().await;
    let server = Server::start(&schema, AppendFsync::Always).await;
    let mut c = server.client().await;
    for (key, items) in &before {
        let got: Vec<String> = q(&mut c, &["LRANGE", key, "0", "-1"]).await;
        assert_eq!(&got, items, "{key}");
    }
    // Written in part from where its chunks are after the load.
    let mut w = 0;
    let _: String = q(&mut c, &["SAVE"]).await;
    let _ = rows_since(&mut c, &mut w).await;
    let _: i64 = q(&mut c, &["LPUSH", "t", "a"]).await;
    assert_eq!(rows_since(&mut c, &mut w).await, 1);
    check(&schema, "t", &mut c, Some(99)).await;
    drop(c);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whole_list_writes_and_lists_of_one_chunk_and_one_more() {
    let schema = schema("rs_chunks_whole");
    let server = Server::start(&schema, AppendFsync::Always).await;
    let mut c = server.client().await;
    let mut w = 0;
    // Exactly one chunk, then one element into the next.
    let _: i64 = q(&mut c, &args("RPUSH", "one", &values("e", C as usize))).await;
    assert_eq!(rows_since(&mut c, &mut w).await, 2);
    assert_eq!(chunks(&schema, "one").await, [(0, 0, C)]);
    let _: i64 = q(&mut c, &["RPUSH", "one", "more"]).await;
    assert_eq!(rows_since(&mut c, &mut w).await, 1, "only chunk 1");
    assert_eq!(chunks(&schema, "one").await, [(0, 0, C), (1, C, 1)]);
    check(&schema, "one", &mut c, Some(0)).await;
    let _: String = q(&mut c, &["RPOP", "one"]).await;
    assert_eq!(rows_since(&mut c, &mut w).await, 0, "chunk 1 only deleted");
    assert_eq!(chunks(&schema, "one").await, [(0, 0, C)]);
    // C + 1 elements written whole: two rows.
    let _: i64 = q(&mut c, &args("RPUSH", "more", &values("e", C as usize + 1))).await;
    assert_eq!(rows_since(&mut c, &mut w).await, 3);
    assert_eq!(chunks(&schema, "more").await, [(0, 0, C), (1, C, 1)]);

    // LSET, LINSERT and LREM write the list whole, from position 0 (after pushes at the head
    // moved it below zero).
    let _: i64 = q(&mut c, &args("LPUSH", "more", &values("h", 3))).await;
    let _: String = q(&mut c, &["SAVE"]).await;
    assert_eq!(chunks(&schema, "more").await[0], (-1, -3, 3));
    let _: String = q(&mut c, &["LSET", "more", "10", "set"]).await;
    assert_eq!(
        rows_since(&mut c, &mut w).await,
        1 + 3,
        "the pushes' chunk, then 2 chunks and the key"
    );
    assert_eq!(chunks(&schema, "more").await, grid(0, C + 3));
    check(&schema, "more", &mut c, Some(0)).await;
    let _: i64 = q(&mut c, &["LINSERT", "more", "BEFORE", "e5", "ins"]).await;
    assert_eq!(rows_since(&mut c, &mut w).await, 3);
    let _: i64 = q(&mut c, &["LREM", "more", "0", "e8"]).await;
    assert_eq!(rows_since(&mut c, &mut w).await, 3);
    check(&schema, "more", &mut c, Some(0)).await;
    // Written in part again after a whole write.
    let _: i64 = q(&mut c, &["LPUSH", "more", "p"]).await;
    assert_eq!(rows_since(&mut c, &mut w).await, 1);
    check(&schema, "more", &mut c, Some(-1)).await;

    // A list becoming another type and back.
    let _: i64 = q(&mut c, &["DEL", "one"]).await;
    let _: String = q(&mut c, &["SET", "one", "string now"]).await;
    let _: String = q(&mut c, &["SAVE"]).await;
    assert!(chunks(&schema, "one").await.is_empty());
    let listed: Vec<String> = q(&mut c, &["LRANGE", "more", "0", "-1"]).await;
    drop(c);
    server.stop().await;
    let server = Server::start(&schema, AppendFsync::Always).await;
    let mut c = server.client().await;
    let got: Vec<String> = q(&mut c, &["LRANGE", "more", "0", "-1"]).await;
    assert_eq!(got, listed);
    let one: String = q(&mut c, &["GET", "one"]).await;
    assert_eq!(one, "string now");
    drop(c);
    server.stop().await;
}

/// Elements of `n` bytes each, numbered.
pub(crate) fn large(prefix: &str, count: usize, n: usize) -> Vec<String> {
    (0..count)
        .map(|i| format!("{prefix}{i:05}{}", "x".repeat(n - prefix.len() - 5)))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_of_large_elements_is_stored_one_position_per_row() {
    let schema = schema("rs_chunks_large");
    let server = Server::start(&schema, AppendFsync::Always).await;
    let mut c = server.client().await;
    let mut w = 0;
    // A job queue: payloads of 1 KB, created whole, then pushed and popped one at a time.
    let _: i64 = q(&mut c, &args("RPUSH", "jobs", &large("j", 20, 1024))).await;
    assert_eq!(rows_since(&mut c, &mut w).await, 20 + 1);
    assert_eq!(grids(&schema, "jobs").await, [1]);
    let each: Vec<(i64, i64, i64)> = (0..20).map(|p| (p, p, 1)).collect();
    assert_eq!(chunks(&schema, "jobs").await, each);
    for (i, job) in large("n", 5, 1024).iter().enumerate() {
        let _: i64 = q(&mut c, &["LPUSH", "jobs", job]).await;
        assert_eq!(
            rows_since(&mut c, &mut w).await,
            1,
            "push {i}: its row only"
        );
        let _: String = q(&mut c, &["RPOP", "jobs"]).await;
        assert_eq!(
            rows_since(&mut c, &mut w).await,
            0,
            "pop {i}: a delete only"
        );
    }
    check(&schema, "jobs", &mut c, Some(-5)).await;
    // Small elements pushed in part keep the list's grid.
    let _: i64 = q(&mut c, &args("RPUSH", "jobs", &values("s", 40))).await;
    assert_eq!(rows_since(&mut c, &mut w).await, 40);
    assert_eq!(grids(&schema, "jobs").await, [1]);
    check(&schema, "jobs", &mut c, Some(-5)).await;
    drop(c);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_write_picks_the_grid_again() {
    let schema = schema("rs_chunks_regrid");
    let server = Server::start(&schema, AppendFsync::Always).await;
    let mut c = server.client().await;
    let mut w = 0;
    let _: i64 = q(&mut c, &args("RPUSH", "l", &values("e", 40))).await;
    assert_eq!(rows_since(&mut c, &mut w).await, 3 + 1);
    assert_eq!(grids(&schema, "l").await, [C]);
    // One large element makes the mean large: LSET writes the list whole, a row per element.
    let big = "b".repeat(40 * 200);
    let _: String = q(&mut c, &["LSET", "l", "3", &big]).await;
    assert_eq!(rows_since(&mut c, &mut w).await, 40 + 1);
    assert_eq!(grids(&schema, "l").await, [1]);
    check(&schema, "l", &mut c, Some(0)).await;
    let _: i64 = q(&mut c, &["LPUSH", "l", "h"]).await;
    assert_eq!(rows_since(&mut c, &mut w).await, 1);
    check(&schema, "l", &mut c, Some(-1)).await;
    // Gone again (LREM, a whole write): chunks of 16 from position 0.
    let _: i64 = q(&mut c, &["LREM", "l", "1", &big]).await;
    assert_eq!(rows_since(&mut c, &mut w).await, 3 + 1);
    assert_eq!(grids(&schema, "l").await, [C]);
    assert_eq!(chunks(&schema, "l").await, grid(0, 39));
    check(&schema, "l", &mut c, Some(0)).await;
    // Emptied and created again with large elements: a list written whole.
    let _: i64 = q(&mut c, &["DEL", "l"]).await;
    let _: i64 = q(&mut c, &args("RPUSH", "l", &large("x", 3, 300))).await;
    assert_eq!(rows_since(&mut c, &mut w).await, 3 + 1);
    assert_eq!(grids(&schema, "l").await, [1]);
    check(&schema, "l", &mut c, Some(0)).await;
    drop(c);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_keeps_each_lists_grid() {
    let schema = schema("rs_chunks_restart");
    let server = Server::start(&schema, AppendFsync::Always).await;
    let mut c = server.client().await;
    // "big" is on grid 1 and then holds mostly small elements (pushed in part, so its grid
    // stays); "small" is on grid 16.
    let _: i64 = q(&mut c, &args("RPUSH", "big", &large("b", 2, 2000))).await;
    let _: String = q(&mut c, &["SAVE"]).await;
    let _: i64 = q(&mut c, &args("LPUSH", "big", &values("s", 30))).await;
    let _: i64 = q(&mut c, &args("RPUSH", "small", &values("e", 30))).await;
    let _: i64 = q(&mut c, &args("LPUSH", "small", &values("h", 3))).await;
    let _: String = q(&mut c, &["SAVE"]).await;
    let big: Vec<String> = q(&mut c, &["LRANGE", "big", "0", "-1"]).await;
    drop(c);
    server.stop().await;

    let server = Server::start(&schema, AppendFsync::Always).await;
    let mut c = server.client().await;
    let got: Vec<String> = q(&mut c, &["LRANGE", "big", "0", "-1"]).await;
    assert_eq!(got, big);
    let mut w = 0;
    let _ = rows_since(&mut c, &mut w).await;
    // Written in part on the grids they had: one row for "big"'s push; "small"'s push lands
    // in chunk -1, which holds 3 elements: one row again.
    let _: i64 = q(&mut c, &["LPUSH", "big", "p"]).await;
    let _: i64 = q(&mut c, &["LPUSH", "small", "p"]).await;
    assert_eq!(rows_since(&mut c, &mut w).await, 2);
    assert_eq!(grids(&schema, "big").await, [1]);
    assert_eq!(grids(&schema, "small").await, [C]);
    check(&schema, "big", &mut c, Some(-31)).await;
    check(&schema, "small", &mut c, Some(-4)).await;
    assert_eq!(chunks(&schema, "small").await, grid(-4, 29));
    drop(c);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schema_of_version_2_with_lists_is_migrated_into_chunks() {
    let schema = schema("rs_migrate_v2");
    let mut conn = sluice_embedded::testkit::connect().await;
    sluice_resp_store::create_at_version(&mut conn, &schema, 2)
        .await
        .expect("a version 2 schema");
    // Lists as version 2 wrote them: positions from anywhere, negative too, across what
    // become chunk boundaries; one in another database, one with bytes that are not UTF-8.
    conn.batch_execute(&format!(
        "INSERT INTO \"{schema}\".keys (db, key, type, expire_at) VALUES \
             (0, 'neg', 'list', NULL), (0, 'pos', 'list', now() + interval '1 hour'), \
             (3, 'neg', 'list', NULL), (0, '\\xff00'::bytea, 'list', NULL), \
             (0, 'one', 'list', NULL), (0, 'h', 'hash', NULL), (0, 'big', 'list', NULL); \
         INSERT INTO \"{schema}\".list_items SELECT 0, 'big', g, \
             convert_to(repeat('b', 200) || g, 'UTF8') FROM generate_series(-20, 20) g; \
         INSERT INTO \"{schema}\".list_items SELECT 0, 'neg', g, ('n' || g)::bytea \
             FROM generate_series(-130, 5) g; \
         INSERT INTO \"{schema}\".list_items SELECT 0, 'pos', g, ('p' || g)::bytea \
             FROM generate_series(60, 200) g; \
         INSERT INTO \"{schema}\".list_items SELECT 3, 'neg', g, ('d' || g)::bytea \
             FROM generate_series(-64, -1) g; \
         INSERT INTO \"{schema}\".list_items VALUES (0, '\\xff00'::bytea, 7, '\\x00ff'::bytea), \
             (0, '\\xff00'::bytea, 8, ''), (0, 'one', -1, 'only'); \
         INSERT INTO \"{schema}\".hash_fields VALUES (0, 'h', 'f', 'v')"
    ))
    .await
    .expect("version 2 rows");
    let view_before = rows(&format!(
        "SELECT db::text, encode(key, 'hex'), index::text, encode(value, 'hex'), pos::text \
         FROM \"{schema}\".lists ORDER BY db, key, index"
    ))
    .await;
    assert_eq!(view_before.len(), 136 + 141 + 64 + 2 + 1 + 41);
    let server = Server::start(&schema, AppendFsync::Always).await;
    assert_eq!(
        value(&format!(
            "SELECT max(version)::text FROM \"{schema}\".schema_migrations"
        ))
        .await,
        Some(sluice_resp_store::SCHEMA_VERSION.to_string())
    );
    assert_eq!(
        value(&format!(
            "SELECT count(*)::text FROM pg_tables WHERE schemaname = '{schema}' \
             AND tablename = 'list_items'"
        ))
        .await
        .as_deref(),
        Some("0")
    );
    // The view shows the same rows, positions and all.
    let view_after = rows(&format!(
        "SELECT db::text, encode(key, 'hex'), index::text, encode(value, 'hex'), pos::text \
         FROM \"{schema}\".lists ORDER BY db, key, index"
    ))
    .await;
    assert_eq!(view_after, view_before);
    assert_eq!(chunks(&schema, "neg").await, grid(-130, 5));
    assert_eq!(chunks(&schema, "neg").await[0], (-9, -130, 2));
    assert_eq!(grids(&schema, "neg").await, [C]);
    // Elements of 200 bytes and more: one position per row.
    assert_eq!(grids(&schema, "big").await, [1]);
    let big: Vec<(i64, i64, i64)> = (-20..=20).map(|p| (p, p, 1)).collect();
    assert_eq!(chunks(&schema, "big").await, big);
    let mut c = server.client().await;
    let expected = |prefix: &str, range: std::ops::RangeInclusive<i64>| -> Vec<String> {
        range.map(|i| format!("{prefix}{i}")).collect()
    };
    let got: Vec<String> = q(&mut c, &["LRANGE", "neg", "0", "-1"]).await;
    assert_eq!(got, expected("n", -130..=5));
    let got: Vec<String> = q(&mut c, &["LRANGE", "pos", "0", "-1"]).await;
    assert_eq!(got, expected("p", 60..=200));
    let ttl: i64 = q(&mut c, &["TTL", "pos"]).await;
    assert!(ttl > 3500, "{ttl}");
    let got: Vec<Vec<u8>> = redis::cmd("LRANGE")
        .arg(&b"\xff\x00"[..])
        .arg(0)
        .arg(-1)
        .query_async(&mut c)
        .await
        .unwrap();
    assert_eq!(got, [b"\x00\xff".to_vec(), Vec::new()]);
    let _: redis::Value = q(&mut c, &["SELECT", "3"]).await;
    let got: Vec<String> = q(&mut c, &["LRANGE", "neg", "0", "-1"]).await;
    assert_eq!(got, expected("d", -64..=-1));
    let _: redis::Value = q(&mut c, &["SELECT", "0"]).await;
    // Written in part from the migrated chunks: a push at the head of "neg" lands in chunk -3.
    let mut w = 0;
    let _ = rows_since(&mut c, &mut w).await;
    let _: i64 = q(&mut c, &["LPUSH", "neg", "front"]).await;
    let _: i64 = q(&mut c, &["RPUSH", "one", "second"]).await;
    let _: String = q(&mut c, &["LPOP", "big"]).await;
    assert_eq!(rows_since(&mut c, &mut w).await, 2);
    check(&schema, "neg", &mut c, Some(-131)).await;
    check(&schema, "big", &mut c, Some(-19)).await;
    check(&schema, "one", &mut c, Some(-1)).await;
    assert_eq!(chunks(&schema, "one").await, [(-1, -1, 1), (0, 0, 1)]);
    drop(c);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chunk_that_cannot_be_read_stops_the_load_naming_the_list() {
    let schema = schema("rs_chunks_bad");
    let server = Server::start(&schema, AppendFsync::Always).await;
    server.stop().await;
    let mut conn = sluice_embedded::testkit::connect().await;
    conn.batch_execute(&format!(
        "INSERT INTO \"{schema}\".keys (db, key, type) VALUES (2, '\\x626164ff', 'list'); \
         INSERT INTO \"{schema}\".list_chunks VALUES \
             (2, '\\x626164ff', 0, 0, ARRAY['a'::bytea, NULL], 16)"
    ))
    .await
    .expect("a chunk holding a NULL");
    let err = sluice_resp_store::PgStore::open(
        &crate::common::pg_config(),
        crate::common::store_config(&schema, AppendFsync::Always),
    )
    .await
    .expect_err("the load fails");
    assert_eq!(
        err.to_string(),
        "Redis store: loading the keyspace: list \"bad\\xff\" of database 2: \
         malformed binary COPY data from PostgreSQL: a NULL array element"
    );
}

/// Property: lists of any bytes (NUL, 0xff, empty elements), any length, reach PostgreSQL as
/// arrays it reads as we wrote them (the view unnests them with PostgreSQL's own array code)
/// and come back through the loader after a restart. Cases are drawn by proptest from a fixed
/// seed (no shrinking: each case costs a server round trip).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_of_any_bytes_round_trip_through_postgresql_arrays() {
    use proptest::strategy::{Strategy, ValueTree};
    let schema = schema("rs_chunks_prop");
    let server = Server::start(&schema, AppendFsync::EverySec).await;
    let mut c = server.client().await;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = proptest::collection::vec(
        proptest::collection::vec(proptest::num::u8::ANY, 0..40),
        1..200,
    );
    let mut lists = Vec::new();
    for case in 0..24 {
        let items = strategy.new_tree(&mut runner).expect("a case").current();
        let key = format!("p{case}");
        // The last two thirds pushed first, then the rest at the head: positions below zero
        // too.
        let split = items.len() / 3;
        let mut tail = redis::cmd("RPUSH");
        tail.arg(&key);
        for item in &items[split..] {
            tail.arg(item.as_slice());
        }
        let _: i64 = tail.query_async(&mut c).await.unwrap();
        let _: String = q(&mut c, &["SAVE"]).await;
        if split > 0 {
            let mut head = redis::cmd("LPUSH");
            head.arg(&key);
            for item in items[..split].iter().rev() {
                head.arg(item.as_slice());
            }
            let _: i64 = head.query_async(&mut c).await.unwrap();
        }
        let _: String = q(&mut c, &["SAVE"]).await;
        let viewed = rows(&format!(
            "SELECT encode(value, 'hex') FROM \"{schema}\".lists \
             WHERE key_text = '{key}' ORDER BY index"
        ))
        .await;
        let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        let expected: Vec<Vec<Option<String>>> = items.iter().map(|i| vec![Some(hex(i))]).collect();
        assert_eq!(viewed, expected, "case {case}");
        lists.push((key, items));
    }
    drop(c);
    server.stop().await;
    let server = Server::start(&schema, AppendFsync::EverySec).await;
    let mut c = server.client().await;
    for (key, items) in &lists {
        let got: Vec<Vec<u8>> = redis::cmd("LRANGE")
            .arg(key)
            .arg(0)
            .arg(-1)
            .query_async(&mut c)
            .await
            .unwrap();
        assert_eq!(&got, items, "{key}");
    }
    drop(c);
    server.stop().await;
}
