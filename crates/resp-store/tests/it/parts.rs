//! Keys written in part: a change to a hash, set or sorted set writes only the fields or members
//! it touched, a push or pop at a list end only the chunks (16 positions each) holding the
//! positions that changed; everything comes back whole after a restart, and the schemas of
//! versions 1 and 2 are migrated.

use crate::common::{Server, content, q, rows, schema, value};
use sluice_resp::durable::AppendFsync;

type Conn = redis::aio::MultiplexedConnection;

/// Everything a key holds, as the client sees it, for comparing before and after a restart.
async fn dump(c: &mut Conn, keys: &[&str]) -> Vec<(String, String, i64)> {
    let mut out = Vec::new();
    for key in keys {
        let (kind, content) = content(c, key).await;
        let ttl: i64 = q(c, &["TTL", key]).await;
        // A TTL counted down by a second across the restart is the same TTL.
        out.push((kind, content, if ttl > 0 { (ttl + 5) / 10 } else { ttl }));
    }
    out
}

/// `field` of INFO persistence.
async fn info(c: &mut Conn, field: &str) -> u64 {
    let text: String = q(c, &["INFO", "persistence"]).await;
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in INFO persistence"))
}

/// Rows written since `before` (a reading of `sluice_rows_written`) once everything is saved,
/// and the new reading.
async fn rows_since(c: &mut Conn, before: &mut u64) -> u64 {
    let _: String = q(c, &["SAVE"]).await;
    let now = info(c, "sluice_rows_written").await;
    std::mem::replace(before, now).abs_diff(now)
}

/// The list's rows sit at contiguous positions and the view counts them as LRANGE does.
async fn check_list_rows(schema: &str, key: &str, c: &mut Conn) {
    let listed: Vec<String> = q(c, &["LRANGE", key, "0", "-1"]).await;
    let sql = format!(
        "SELECT count(*)::text, coalesce(max(pos) - min(pos) + 1, 0)::text, \
                coalesce(string_agg(value_text, ',' ORDER BY index), '') \
         FROM \"{schema}\".lists WHERE key_text = '{key}'"
    );
    let row = &rows(&sql).await[0];
    assert_eq!(row[0].as_deref(), Some(listed.len().to_string().as_str()));
    assert_eq!(row[1], row[0], "positions of {key} have gaps");
    assert_eq!(row[2].as_deref(), Some(listed.join(",").as_str()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_to_large_collections_write_only_what_changed() {
    let schema = schema("rs_parts");
    let server = Server::start(&schema, AppendFsync::Always).await;
    let mut c = server.client().await;
    let mut hset = vec!["HSET".to_string(), "h".to_string()];
    let mut rpush = vec!["RPUSH".to_string(), "l".to_string()];
    let mut sadd = vec!["SADD".to_string(), "s".to_string()];
    let mut zadd = vec!["ZADD".to_string(), "z".to_string()];
    for i in 0..200 {
        hset.extend([format!("f{i}"), format!("v{i}")]);
        rpush.push(format!("e{i}"));
        sadd.push(format!("m{i}"));
        zadd.extend([i.to_string(), format!("m{i}")]);
    }
    for cmd in [&hset, &rpush, &sadd, &zadd] {
        let args: Vec<&str> = cmd.iter().map(String::as_str).collect();
        let _: i64 = q(&mut c, &args).await;
    }
    let mut written = 0;
    // 600 fields and members, the list's 200 elements in 13 chunks, 4 keys.
    assert_eq!(rows_since(&mut c, &mut written).await, 617);
    // Each change below (a commit of its own under `always`) writes the elements it touched
    // (removed ones are only deleted), and the key's row only when its expiry changed. The
    // list's elements are at positions 0..199, in chunks 0..=12 (192..199 in chunk 12): a
    // push or pop writes the chunk it lands in again (an emptied chunk is only deleted).
    let cases: &[(&[&str], u64)] = &[
        (&["HSET", "h", "f1", "new", "fresh", "x"], 2),
        (&["HDEL", "h", "f2", "f3"], 0),
        (&["HINCRBY", "h", "n", "5"], 1),
        (&["SADD", "s", "new"], 1),
        (&["SREM", "s", "m5"], 0),
        (&["ZADD", "z", "7.5", "m1", "3", "new"], 2),
        (&["ZINCRBY", "z", "2", "m9"], 1),
        (&["ZREM", "z", "m0"], 0),
        // Positions -2 and -1: chunk -1, new.
        (&["LPUSH", "l", "a", "b"], 1),
        // 200 and 201: chunk 12 again, with its 8 elements.
        (&["RPUSH", "l", "y", "z"], 1),
        (&["LPOP", "l"], 1),
        (&["RPOP", "l", "3"], 1),
        // -1 and 0 go (chunk -1 emptied: deleted only; chunk 0 rewritten), 197 and 198 too.
        (&["LTRIM", "l", "2", "-3"], 2),
        // 1 goes from chunk 0, 197 comes to chunk 12.
        (&["LMOVE", "l", "l", "LEFT", "RIGHT"], 2),
        (&["HSET", "h", "f4", "after-persist"], 1),
        (&["EXPIRE", "h", "1000"], 1),
        (&["PERSIST", "h"], 1),
        (&["EXPIRE", "l", "1000"], 1),
    ];
    for (cmd, rows) in cases {
        let _: redis::Value = q(&mut c, cmd).await;
        assert_eq!(rows_since(&mut c, &mut written).await, *rows, "{cmd:?}");
        check_list_rows(&schema, "l", &mut c).await;
    }
    // Pushes and pops at both ends in one transaction (one commit).
    let mut tx = redis::pipe();
    tx.atomic()
        .cmd("LPUSH")
        .arg("l")
        .arg("p")
        .arg("q")
        .cmd("RPOP")
        .arg("l")
        .cmd("RPUSH")
        .arg("l")
        .arg("r")
        .cmd("LPOP")
        .arg("l")
        .arg(3)
        .cmd("LPUSH")
        .arg("l")
        .arg("s");
    let _: redis::Value = tx.query_async(&mut c).await.unwrap();
    assert_eq!(rows_since(&mut c, &mut written).await, 2);
    // A change and an expiry in one commit: the elements and the key's row.
    let mut tx = redis::pipe();
    tx.atomic()
        .cmd("RPUSH")
        .arg("l")
        .arg("t")
        .cmd("PEXPIRE")
        .arg("l")
        .arg(900_000)
        .cmd("HSET")
        .arg("h")
        .arg("f5")
        .arg("v")
        .cmd("EXPIRE")
        .arg("h")
        .arg(800);
    let _: redis::Value = tx.query_async(&mut c).await.unwrap();
    assert_eq!(rows_since(&mut c, &mut written).await, 4);
    check_list_rows(&schema, "l", &mut c).await;
    check_list_rows(&schema, "l", &mut c).await;
    // A change in the middle of a list writes it whole: its chunks and the key's row.
    let len: u64 = q(&mut c, &["LINSERT", "l", "BEFORE", "e100", "mid"]).await;
    assert_eq!(rows_since(&mut c, &mut written).await, len.div_ceil(16) + 1);
    check_list_rows(&schema, "l", &mut c).await;
    let _: i64 = q(&mut c, &["LPUSH", "l", "after-whole"]).await;
    assert_eq!(rows_since(&mut c, &mut written).await, 1);
    check_list_rows(&schema, "l", &mut c).await;
    let keys = ["h", "l", "s", "z"];
    let before = dump(&mut c, &keys).await;
    drop(c);
    server.stop().await;

    let server = Server::start(&schema, AppendFsync::Always).await;
    let mut c = server.client().await;
    assert_eq!(dump(&mut c, &keys).await, before);
    // Lists go on being written in part from where their positions are: chunk -1 (which held
    // "after-whole" at -1), then the last chunk.
    let mut written = info(&mut c, "sluice_rows_written").await;
    let _: i64 = q(&mut c, &["LPUSH", "l", "again"]).await;
    let _: String = q(&mut c, &["RPOP", "l"]).await;
    assert_eq!(rows_since(&mut c, &mut written).await, 2);
    check_list_rows(&schema, "l", &mut c).await;
    drop(c);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_pushed_and_popped_at_both_ends_come_back_after_restarts() {
    let schema = schema("rs_list_ends");
    let mut model: std::collections::VecDeque<String> = Default::default();
    let mut rng = fastrand::Rng::with_seed(18);
    let mut next = 0u32;
    for round in 0..3 {
        let server = Server::start(&schema, AppendFsync::EverySec).await;
        let mut c = server.client().await;
        let listed: Vec<String> = q(&mut c, &["LRANGE", "q", "0", "-1"]).await;
        assert_eq!(listed, Vec::from(model.clone()), "round {round}");
        for _ in 0..40 {
            for _ in 0..rng.usize(1..6) {
                let n = rng.usize(1..4);
                let left = rng.bool();
                if rng.u8(..3) > 0 {
                    let values: Vec<String> = (0..n)
                        .map(|_| {
                            next += 1;
                            format!("v{next}")
                        })
                        .collect();
                    let mut args = vec![if left { "LPUSH" } else { "RPUSH" }, "q"];
                    args.extend(values.iter().map(String::as_str));
                    let _: i64 = q(&mut c, &args).await;
                    for v in values {
                        if left {
                            model.push_front(v);
                        } else {
                            model.push_back(v);
                        }
                    }
                } else {
                    let count = n.to_string();
                    let _: redis::Value =
                        q(&mut c, &[if left { "LPOP" } else { "RPOP" }, "q", &count]).await;
                    for _ in 0..n {
                        if left {
                            model.pop_front();
                        } else {
                            model.pop_back();
                        }
                    }
                }
            }
            if rng.u8(..4) == 0 {
                let _: String = q(&mut c, &["SAVE"]).await;
                if !model.is_empty() {
                    check_list_rows(&schema, "q", &mut c).await;
                }
            }
        }
        let _: String = q(&mut c, &["SAVE"]).await;
        drop(c);
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schema_of_version_1_is_migrated_and_its_lists_written_in_part() {
    let schema = schema("rs_migrate_v1");
    let mut conn = sluice_embedded::testkit::connect().await;
    sluice_resp_store::create_at_version(&mut conn, &schema, 1)
        .await
        .expect("a version 1 schema");
    conn.batch_execute(&format!(
        "INSERT INTO \"{schema}\".keys (db, key, type) VALUES (0, 'l', 'list'), (0, 'h', 'hash'); \
         INSERT INTO \"{schema}\".list_items SELECT 0, 'l', g, ('e' || g)::bytea \
             FROM generate_series(0, 9) g; \
         INSERT INTO \"{schema}\".hash_fields VALUES (0, 'h', 'f', 'v')"
    ))
    .await
    .expect("version 1 rows");
    let server = Server::start(&schema, AppendFsync::Always).await;
    assert_eq!(
        value(&format!(
            "SELECT max(version)::text FROM \"{schema}\".schema_migrations"
        ))
        .await,
        Some(sluice_resp_store::SCHEMA_VERSION.to_string())
    );
    let mut c = server.client().await;
    let mut written = info(&mut c, "sluice_rows_written").await;
    let _: i64 = q(&mut c, &["LPUSH", "l", "front"]).await;
    let _: String = q(&mut c, &["RPOP", "l"]).await;
    // Chunk -1 (new), then chunk 0 (0..8 left).
    assert_eq!(rows_since(&mut c, &mut written).await, 2);
    check_list_rows(&schema, "l", &mut c).await;
    assert_eq!(
        value(&format!(
            "SELECT min(pos)::text FROM \"{schema}\".lists WHERE key_text = 'l'"
        ))
        .await
        .as_deref(),
        Some("-1")
    );
    let before = dump(&mut c, &["l", "h"]).await;
    drop(c);
    server.stop().await;
    let server = Server::start(&schema, AppendFsync::Always).await;
    let mut c = server.client().await;
    assert_eq!(dump(&mut c, &["l", "h"]).await, before);
    drop(c);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_with_gaps_in_its_positions_is_rewritten_whole() {
    let schema = schema("rs_list_gaps");
    let server = Server::start(&schema, AppendFsync::Always).await;
    server.stop().await;
    let mut conn = sluice_embedded::testkit::connect().await;
    conn.batch_execute(&format!(
        "INSERT INTO \"{schema}\".keys (db, key, type) VALUES (0, 'g', 'list'); \
         INSERT INTO \"{schema}\".list_chunks VALUES (0, 'g', 0, 3, '{{a}}', 16), \
             (0, 'g', 1, 17, '{{b,c}}', 16); \
         INSERT INTO \"{schema}\".keys (db, key, type) VALUES (0, 'w', 'list'); \
         INSERT INTO \"{schema}\".list_chunks VALUES (0, 'w', 5, 3, '{{x,y}}', 16); \
         INSERT INTO \"{schema}\".keys (db, key, type) VALUES (0, 'm', 'list'); \
         INSERT INTO \"{schema}\".list_chunks VALUES (0, 'm', -1, -1, '{{x}}', 16), \
             (0, 'm', 0, 0, '{{y}}', 1)"
    ))
    .await
    .expect("rows with gaps");
    let server = Server::start(&schema, AppendFsync::Always).await;
    let mut c = server.client().await;
    let _: i64 = q(&mut c, &["RPUSH", "g", "d"]).await;
    let _: String = q(&mut c, &["SAVE"]).await;
    check_list_rows(&schema, "g", &mut c).await;
    let listed: Vec<String> = q(&mut c, &["LRANGE", "g", "0", "-1"]).await;
    assert_eq!(listed, ["a", "b", "c", "d"]);
    // A chunk off the grid: the list is written whole at the first flush as well.
    let _: String = q(&mut c, &["SAVE"]).await;
    check_list_rows(&schema, "w", &mut c).await;
    assert_eq!(
        rows(&format!(
            "SELECT chunk::text, first_pos::text FROM \"{schema}\".list_chunks WHERE key = 'w'"
        ))
        .await,
        [[Some("0".to_string()), Some("0".to_string())]]
    );
    // Rows of two grids: written whole as well, on one grid (its elements are small).
    check_list_rows(&schema, "m", &mut c).await;
    assert_eq!(
        rows(&format!(
            "SELECT chunk::text, grid::text FROM \"{schema}\".list_chunks WHERE key = 'm'"
        ))
        .await,
        [[Some("0".to_string()), Some("16".to_string())]]
    );
    drop(c);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_migration_is_an_error_naming_its_step() {
    let schema = schema("rs_migrate_fails");
    let mut conn = sluice_embedded::testkit::connect().await;
    sluice_resp_store::create_at_version(&mut conn, &schema, 2)
        .await
        .expect("a version 2 schema");
    // A table in the way of migration 3.
    conn.batch_execute(&format!("CREATE TABLE \"{schema}\".functions (x int4)"))
        .await
        .expect("a table in the way");
    let err = sluice_resp_store::PgStore::open(
        &crate::common::pg_config(),
        crate::common::store_config(&schema, AppendFsync::Always),
    )
    .await
    .expect_err("the migration fails");
    let message = err.to_string();
    assert!(
        message.starts_with("Redis store: the function libraries' table (migration 3): "),
        "{message}"
    );
}
