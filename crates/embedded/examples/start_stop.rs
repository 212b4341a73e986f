//! Times starting and stopping temporary clusters: `cargo run --release -p sluice-embedded --example start_stop [N]`.

use std::time::{Duration, Instant};

use sluice_embedded::{Cluster, ClusterOptions, EmbeddedError};

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

fn main() -> Result<(), EmbeddedError> {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(5);
    let shapes = [
        (
            "plain (no TLS, no roles)",
            ClusterOptions::temporary().tls(false).test_roles(false),
        ),
        ("test (TLS + roles)", ClusterOptions::temporary()),
    ];
    for (name, options) in shapes {
        let (mut starts, mut stops) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            let begin = Instant::now();
            let cluster = Cluster::start(options.clone())?;
            starts.push(begin.elapsed());
            let begin = Instant::now();
            cluster.stop()?;
            stops.push(begin.elapsed());
        }
        println!(
            "{name:<26} start median {:>6.0} ms   stop median {:>5.0} ms   ({runs} runs)",
            median(starts).as_secs_f64() * 1e3,
            median(stops).as_secs_f64() * 1e3
        );
    }
    Ok(())
}
