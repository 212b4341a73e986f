//! Installing Debian's `postgresql` package with apt-get when no server binaries exist (root only).

use std::os::fd::AsFd;
use std::process::{Command, Stdio};

use crate::error::{EmbeddedError, Result};

/// Runs `apt-get update` then `apt-get install -y --no-install-recommends postgresql`,
/// non-interactively and without standard input, echoing what it does and apt's output on
/// stderr (so a test's or a server's stdout stays clean).
pub fn install_postgresql() -> Result<()> {
    let steps: [&[&str]; 2] = [
        &["update"],
        &[
            "install",
            "-y",
            "--no-install-recommends",
            // Several test processes may install at once: wait for each other's dpkg lock.
            "-o",
            "DPkg::Lock::Timeout=600",
            "postgresql",
        ],
    ];
    eprintln!(
        "sluice-embedded: no PostgreSQL server binaries found; installing the Debian package \
         `postgresql` with apt-get (running as root)"
    );
    for args in steps {
        let command_line = format!("apt-get {}", args.join(" "));
        eprintln!("sluice-embedded: running `{command_line}`");
        let status = Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdin(Stdio::null())
            .stdout(stderr_for_child())
            .stderr(stderr_for_child())
            .status()
            .map_err(|e| EmbeddedError::InstallFailed {
                command: command_line.clone(),
                status: format!("could not start: {e}"),
            })?;
        if !status.success() {
            return Err(EmbeddedError::InstallFailed {
                command: command_line,
                status: format!("exited with {status}"),
            });
        }
    }
    eprintln!("sluice-embedded: PostgreSQL installed");
    Ok(())
}

/// A copy of our stderr for a child's output; falls back to inheriting.
fn stderr_for_child() -> Stdio {
    match std::io::stderr().as_fd().try_clone_to_owned() {
        Ok(fd) => Stdio::from(fd),
        Err(_) => Stdio::inherit(),
    }
}
