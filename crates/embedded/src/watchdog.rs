//! The watchdog: a tiny shell process that stops the server (and removes a temporary cluster)
//! when the process owning the cluster dies, however it dies.
//!
//! It blocks reading its standard input, a pipe whose write end only the owning process holds.
//! The kernel closes that end when the owner exits, even on `abort` or `SIGKILL`; the read then
//! returns end-of-file and the watchdog runs `pg_ctl stop -m immediate` and `rm -rf`. A normal
//! shutdown writes `disarm` first, and the watchdog exits without doing anything.

use std::io::Write as _;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};

use crate::error::{EmbeddedError, Result};
use crate::user::{ServerUser, run_as};

const SCRIPT: &str = r#"IFS= read -r line
if [ "$line" = disarm ]; then exit 0; fi
"$1" stop -D "$2" -m immediate -w -t 60 >/dev/null 2>&1
if [ -n "$3" ]; then rm -rf -- "$3"; fi
"#;

/// A running watchdog; dropping it without [`Watchdog::disarm`] triggers the cleanup at once.
#[derive(Debug)]
pub struct Watchdog {
    child: Child,
    stdin: Option<ChildStdin>,
}

impl Watchdog {
    /// Starts a watchdog that, once this process is gone, stops the server of `data_dir` with
    /// `pg_ctl` and then removes `remove` (when given). It runs as `user` (pg_ctl refuses root),
    /// in its own process group so a terminal's Ctrl-C aimed at the tests does not kill it.
    pub fn spawn(
        pg_ctl: &Path,
        data_dir: &Path,
        remove: Option<&Path>,
        user: Option<&ServerUser>,
    ) -> Result<Watchdog> {
        let mut command = Command::new("/bin/sh");
        command
            .arg("-c")
            .arg(SCRIPT)
            .arg("sluice-embedded-watchdog")
            .arg(pg_ctl)
            .arg(data_dir)
            .arg(remove.unwrap_or(Path::new("")))
            .current_dir("/")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        run_as(&mut command, user);
        let mut child = command.spawn().map_err(|source| EmbeddedError::Spawn {
            program: "/bin/sh (watchdog)".into(),
            source,
        })?;
        let stdin = child.stdin.take();
        Ok(Watchdog { child, stdin })
    }

    /// The watchdog's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Tells the watchdog to exit without cleaning up, and reaps it.
    pub fn disarm(mut self) {
        if let Some(mut stdin) = self.stdin.take() {
            let _ = stdin.write_all(b"disarm\n");
        }
        let _ = self.child.wait();
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        // Closing the pipe without "disarm" runs the cleanup; wait so it is done on return.
        if self.stdin.take().is_some() {
            let _ = self.child.wait();
        }
    }
}
