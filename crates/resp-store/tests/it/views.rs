//! The SQL views show what the Redis commands show.

use crate::common::{Server, q, rows, schema};
use sluice_resp::durable::AppendFsync;

fn text(rows: Vec<Vec<Option<String>>>) -> Vec<Vec<String>> {
    rows.into_iter()
        .map(|r| r.into_iter().map(Option::unwrap_or_default).collect())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_views_show_what_redis_shows() {
    let schema = schema("rs_views");
    let server = Server::start(&schema, AppendFsync::EverySec).await;
    let mut c = server.client().await;
    let _: () = q(&mut c, &["SET", "greeting", "hello"]).await;
    let _: i64 = q(&mut c, &["RPUSH", "queue", "one", "two", "three"]).await;
    let _: i64 = q(&mut c, &["HSET", "user:1", "name", "Ada", "lang", "en"]).await;
    let _: i64 = q(&mut c, &["SADD", "tags", "red", "blue"]).await;
    let _: i64 = q(&mut c, &["ZADD", "board", "10", "ann", "7.5", "bob"]).await;
    let _: String = q(
        &mut c,
        &["XADD", "events", "1000-0", "type", "login", "who", "ann"],
    )
    .await;
    let _: String = q(&mut c, &["SAVE"]).await;
    let s = format!("\"{schema}\"");

    let got: String = q(&mut c, &["GET", "greeting"]).await;
    let view = text(
        rows(&format!(
            "SELECT value_text FROM {s}.strings WHERE key_text = 'greeting'"
        ))
        .await,
    );
    assert_eq!(view, [[got]]);

    let list: Vec<String> = q(&mut c, &["LRANGE", "queue", "0", "-1"]).await;
    let view = text(
        rows(&format!(
            "SELECT index::text, value_text FROM {s}.lists WHERE key_text = 'queue' ORDER BY index"
        ))
        .await,
    );
    let expected: Vec<Vec<String>> = list
        .iter()
        .enumerate()
        .map(|(i, v)| vec![i.to_string(), v.clone()])
        .collect();
    assert_eq!(view, expected);

    let mut hash: Vec<(String, String)> = q(&mut c, &["HGETALL", "user:1"]).await;
    hash.sort();
    let view = text(
        rows(&format!(
            "SELECT field_text, value_text FROM {s}.hashes WHERE key_text = 'user:1' ORDER BY 1"
        ))
        .await,
    );
    let expected: Vec<Vec<String>> = hash.into_iter().map(|(f, v)| vec![f, v]).collect();
    assert_eq!(view, expected);

    let mut members: Vec<String> = q(&mut c, &["SMEMBERS", "tags"]).await;
    members.sort();
    let view = text(
        rows(&format!(
            "SELECT member_text FROM {s}.sets WHERE key_text = 'tags' ORDER BY 1"
        ))
        .await,
    );
    let expected: Vec<Vec<String>> = members.into_iter().map(|m| vec![m]).collect();
    assert_eq!(view, expected);

    let zset: Vec<(String, f64)> = q(&mut c, &["ZRANGE", "board", "0", "-1", "WITHSCORES"]).await;
    let view = text(rows(&format!("SELECT member_text, score::text FROM {s}.sorted_sets WHERE key_text = 'board' ORDER BY sorted_sets.score, member")).await);
    let expected: Vec<Vec<String>> = zset
        .into_iter()
        .map(|(m, sc)| vec![m, sc.to_string()])
        .collect();
    assert_eq!(view, expected);

    let entries: Vec<(String, Vec<String>)> = q(&mut c, &["XRANGE", "events", "-", "+"]).await;
    let view = text(
        rows(&format!(
            "SELECT id, field_text, value_text FROM {s}.streams WHERE key_text = 'events'"
        ))
        .await,
    );
    let mut expected = Vec::new();
    for (id, fields) in entries {
        for pair in fields.chunks(2) {
            expected.push(vec![id.clone(), pair[0].clone(), pair[1].clone()]);
        }
    }
    assert_eq!(view, expected);
    drop(c);
    server.stop().await;
}
