//! A bare view server for benchmarks until `sluice serve --views` lands:
//! `view_server DATABASE_URL ADDR /prefix=view.json [POOL_SIZE]`.

use sluice_http::view::ViewMount;
use sluice_http::{Router, ServerOptions};
use sluice_pg::{Pool, PoolSettings};
use std::sync::Arc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, url, addr, mount, rest @ ..] = args.as_slice() else {
        return Err("usage: view_server DATABASE_URL ADDR /prefix=view.json [POOL_SIZE]".into());
    };
    let pool_size: usize = rest.first().map_or(Ok(8), |s| s.parse())?;
    let (prefix, file) = mount.split_once('=').ok_or("expected /prefix=view.json")?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let mut settings = PoolSettings::default();
        settings.set_max_size(pool_size);
        let pool = Pool::connect(url, settings)?;
        let mut router = Router::new();
        router.mount(prefix, Arc::new(ViewMount::load_file(file, pool)?));
        let listener = tokio::net::TcpListener::bind(addr).await?;
        eprintln!(
            "serving {file} at http://{}{prefix}",
            listener.local_addr()?
        );
        sluice_http::run(listener, router, ServerOptions::default(), async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
        Ok(())
    })
}
