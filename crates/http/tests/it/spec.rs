//! Runs the view spec suites of tests/specs (format in tests/specs/README.md): each suite gets a
//! fresh database, its views served on 127.0.0.1:0, and its exchanges sent over real HTTP.

use sluice_http::testkit::spec::{
    create_database, drop_database, read_setup, run_spec_files, run_suites, url_for,
};
use sluice_http::view::ViewMount;
use sluice_http::{Router, ServerOptions};
use sluice_pg::{Connection, Pool, PoolSettings};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[test]
fn specs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/specs");
    run_suites(&dir, "mounts", |suite, name| async move {
        let base = sluice_embedded::test_database().url().to_owned();
        let dbname = create_database(&base, "spec", &name).await?;
        let mut failures = Vec::new();
        let result = serve_suite(&suite, &base, &dbname, &mut failures).await;
        drop_database(&base, &dbname).await;
        result.map(|()| failures)
    });
}

/// One line of `mounts`.
struct MountLine {
    prefix: String,
    file: PathBuf,
    role: Option<String>,
    /// Connect to a port where no server listens (503 answers).
    unreachable: bool,
}

fn parse_mounts(suite: &Path) -> Result<Vec<MountLine>, String> {
    let text = std::fs::read_to_string(suite.join("mounts")).map_err(|e| e.to_string())?;
    let mut mounts = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = line.split_whitespace();
        let (Some(prefix), Some(file)) = (words.next(), words.next()) else {
            return Err(format!("mounts:{}: expected `/prefix file.json`", i + 1));
        };
        let mut role = None;
        let mut unreachable = false;
        for setting in words {
            match setting.split_once('=') {
                Some(("role", name)) => role = Some(name.to_owned()),
                None if setting == "unreachable" => unreachable = true,
                _ => return Err(format!("mounts:{}: unknown setting {setting:?}", i + 1)),
            }
        }
        mounts.push(MountLine {
            prefix: prefix.to_owned(),
            file: suite.join(file),
            role,
            unreachable,
        });
    }
    Ok(mounts)
}

async fn serve_suite(
    suite: &Path,
    base: &str,
    dbname: &str,
    failures: &mut Vec<String>,
) -> Result<(), String> {
    let url = url_for(base, dbname, None);
    if let Some(setup) = read_setup(suite)? {
        let mut conn = Connection::connect(&url)
            .await
            .map_err(|e| format!("connecting: {e}"))?;
        conn.batch_execute(&setup)
            .await
            .map_err(|e| format!("setup.sql: {e}"))?;
    }
    let mut router = Router::new();
    let mut pools = Vec::new();
    for line in parse_mounts(suite)? {
        let url = if line.unreachable {
            "postgres://postgres@127.0.0.1:1/nowhere?connect_timeout=2".to_owned()
        } else {
            url_for(base, dbname, line.role.as_deref())
        };
        let pool =
            Pool::connect(&url, PoolSettings::default()).map_err(|e| format!("pool: {e}"))?;
        let mount = ViewMount::load_file(&line.file, pool.clone()).map_err(|e| e.to_string())?;
        router.mount(&line.prefix, Arc::new(mount));
        pools.push(pool);
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let address = listener.local_addr().map_err(|e| e.to_string())?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(sluice_http::run(
        listener,
        router,
        ServerOptions::default(),
        async move {
            let _ = stopped.await;
        },
    ));

    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let result = run_spec_files(suite, root, address, failures).await;
    let _ = stop.send(());
    let _ = server.await;
    for pool in pools {
        pool.close().await;
    }
    result
}
