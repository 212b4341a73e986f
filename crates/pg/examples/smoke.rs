//! Scratch smoke test against a local server.
#![allow(clippy::unwrap_used)]
use sluice_pg::Connection;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let url = std::env::args().nth(1).unwrap_or("host=127.0.0.1 user=postgres dbname=test".into());
    let mut c = Connection::connect(&url).await.unwrap();
    println!("{c:?} version={:?} tls={}", c.server_version_num(), c.is_tls());
    let r = c.simple_query("SELECT 1 AS a, 'x' AS b; SELECT generate_series(1,3)").await.unwrap();
    for rows in &r {
        println!("{:?} {}", rows.columns().iter().map(|c| c.name()).collect::<Vec<_>>(), rows.command_tag());
        for row in rows.iter() {
            println!("  {:?}", row.raw_fields().map(|f| f.map(|b| String::from_utf8_lossy(b).into_owned())).collect::<Vec<_>>());
        }
    }
    for i in 0..7 {
        let rows = c.query("SELECT 41 + 1, 'hi'::text", &[]).await;
        match rows {
            Ok(rows) => println!("q{i}: {:?} cached={}", rows.get(0).unwrap().raw(0).map(|b| String::from_utf8_lossy(b).into_owned()), c.cached_statements()),
            Err(e) => println!("q{i}: error {e}"),
        }
    }
    let e = c.query("SELEC 1", &[]).await.unwrap_err();
    println!("error: {e} code={:?}", e.code());
    let n = c.execute("SELECT * FROM pgbench_accounts WHERE aid < 100", &[]).await.unwrap();
    println!("rows {n}");
    let t = std::time::Instant::now();
    let mut s = c.query_stream("SELECT * FROM pgbench_accounts", &[]).await.unwrap();
    let (mut blocks, mut rows, mut bytes) = (0, 0, 0usize);
    while let Some(b) = s.next_block().await.unwrap() {
        blocks += 1;
        rows += b.len();
        for r in b.iter() { for f in r.raw_fields() { bytes += f.map_or(0, |f| f.len()); } }
    }
    println!("{rows} rows {blocks} blocks {bytes} bytes in {:?}", t.elapsed());
}
