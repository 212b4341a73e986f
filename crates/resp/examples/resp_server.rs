//! A bare RESP server on the in-memory engine (no PostgreSQL, no settings file), for quick runs
//! of Redis's Tcl suite and debugging: `cargo run -p sluice-resp --example resp_server -- ADDR`.

use std::time::Duration;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".to_owned());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(&addr).await?;
        eprintln!("serving RESP on {}", listener.local_addr()?);
        let config = sluice_resp::Config {
            io_threads: 1,
            busy_poll: Duration::ZERO,
            ..sluice_resp::Config::default()
        };
        sluice_resp::run(listener, config, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
        Ok(())
    })
}
