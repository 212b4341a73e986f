//! What the tests of `sluice serve` as a process share: the child killed on failure, and the
//! address it says it listens on.

use std::io::{BufRead, BufReader};
use std::process::Child;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Kills the child if the test fails before it exits.
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The address from the child's `sluice: HTTP on http://ADDR` line.
pub fn http_address(child: &mut Child) -> String {
    announced_address(child, "sluice: HTTP on http://")
}

/// The rest of the first line of the child's standard output that starts with `prefix` (how
/// `sluice serve` says where a gate listens), within a minute.
pub fn announced_address(child: &mut Child, prefix: &str) -> String {
    let stdout = child.stdout.take().expect("the child's stdout is piped");
    let (lines, received) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = received
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("serve never printed a line starting {prefix:?}"));
        if let Some(addr) = line.strip_prefix(prefix) {
            return addr.to_string();
        }
    }
}
