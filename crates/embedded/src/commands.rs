//! Running the server programs (initdb, pg_ctl, postgres --single) as the server user.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::binaries::Binaries;
use crate::error::{EmbeddedError, Result};
use crate::user::{ServerUser, run_as};

/// How long `pg_ctl` waits for a start or a stop, in seconds.
const PG_CTL_TIMEOUT_SECS: &str = "60";

/// Builds commands for one install, run as one user.
#[derive(Debug, Clone)]
pub struct Programs {
    pub binaries: Binaries,
    pub user: Option<ServerUser>,
}

impl Programs {
    /// A command for `program` with a clean environment: run as the server user, from `/`
    /// (our working directory may be unreachable for it), without standard input, with English
    /// messages (we look for some in the log) and without the caller's `PG*` variables (which
    /// would redirect pg_ctl or psql).
    pub fn command(&self, program: &Path) -> Command {
        let mut command = Command::new(program);
        command
            .current_dir("/")
            .stdin(Stdio::null())
            .env_remove("LC_ALL")
            .env("LC_MESSAGES", "C");
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("PG") {
                command.env_remove(name);
            }
        }
        run_as(&mut command, self.user.as_ref());
        command
    }

    /// Runs `initdb` into `data_dir`, with the C.UTF-8 locale, falling back to `--no-locale`
    /// (C with UTF8 encoding) where that locale is missing.
    pub fn initdb(&self, data_dir: &Path) -> Result<()> {
        // Nobody gets in until our pg_hba.conf (SCRAM) and the superuser's password are in
        // place; single-user mode, which sets them, does not consult pg_hba.conf.
        let base = ["-A", "reject", "-U", "postgres", "-E", "UTF8", "--no-sync"];
        let first = self.run(
            "initdb",
            self.command(&self.binaries.initdb())
                .args(base)
                .arg("--locale=C.UTF-8")
                .arg("-D")
                .arg(data_dir),
        );
        let Err(first_error) = first else {
            return Ok(());
        };
        clear_dir(data_dir)?;
        self.run(
            "initdb",
            self.command(&self.binaries.initdb())
                .args(base)
                .arg("--no-locale")
                .arg("-D")
                .arg(data_dir),
        )
        .map(|_| ())
        .map_err(|second| match second {
            EmbeddedError::CommandFailed {
                what,
                command,
                status,
                output,
            } => EmbeddedError::CommandFailed {
                what,
                command,
                status,
                output: format!(
                    "{output}\n(with --locale=C.UTF-8 it had failed too: {first_error})"
                ),
            },
            other => other,
        })
    }

    /// Runs `sql` (one statement per line) in single-user mode against `database`; any error
    /// ends the session and fails the call. The statements go through a pipe, never the
    /// command line, so passwords in them do not show in `ps`.
    pub fn single_user(&self, data_dir: &Path, database: &str, sql: &str) -> Result<()> {
        let mut command = self.command(&self.binaries.postgres());
        command
            .arg("--single")
            .arg("-F")
            .arg("-c")
            .arg("exit_on_error=on")
            .arg("-D")
            .arg(data_dir)
            .arg(database)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let command_line = describe(&command);
        let mut child = command.spawn().map_err(|source| EmbeddedError::Spawn {
            program: self.binaries.postgres(),
            source,
        })?;
        if let Some(mut stdin) = child.stdin.take() {
            // The script is small (well under a pipe buffer), so writing before reading is safe.
            let _ = stdin.write_all(sql.as_bytes());
        }
        let output = child
            .wait_with_output()
            .map_err(|source| EmbeddedError::Spawn {
                program: self.binaries.postgres(),
                source,
            })?;
        check(
            "setting the superuser's password and test roles (single-user mode)",
            command_line,
            &output,
        )
    }

    /// `pg_ctl start`: waits until the server accepts connections. The server's output goes to
    /// `log_file`.
    pub fn pg_ctl_start(&self, data_dir: &Path, log_file: &Path) -> Result<Output> {
        let mut command = self.command(&self.binaries.pg_ctl());
        command
            .args(["start", "-w", "-s", "-t", PG_CTL_TIMEOUT_SECS, "-D"])
            .arg(data_dir)
            .arg("-l")
            .arg(log_file);
        command.output().map_err(|source| EmbeddedError::Spawn {
            program: self.binaries.pg_ctl(),
            source,
        })
    }

    /// `pg_ctl stop -m <mode>`: waits until the server is gone.
    pub fn pg_ctl_stop(&self, data_dir: &Path, mode: &str) -> Result<()> {
        self.run(
            "stopping the server",
            self.command(&self.binaries.pg_ctl())
                .args([
                    "stop",
                    "-w",
                    "-s",
                    "-t",
                    PG_CTL_TIMEOUT_SECS,
                    "-m",
                    mode,
                    "-D",
                ])
                .arg(data_dir),
        )
        .map(|_| ())
    }

    /// Runs `command` to completion; a non-zero exit becomes [`EmbeddedError::CommandFailed`].
    pub fn run(&self, what: &'static str, command: &mut Command) -> Result<Output> {
        let command_line = describe(command);
        let output = command.output().map_err(|source| EmbeddedError::Spawn {
            program: command.get_program().into(),
            source,
        })?;
        check(what, command_line, &output)?;
        Ok(output)
    }
}

fn check(what: &'static str, command: String, output: &Output) -> Result<()> {
    if output.status.success() {
        return Ok(());
    }
    let mut text = String::from_utf8_lossy(&output.stderr).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stdout));
    Err(EmbeddedError::CommandFailed {
        what,
        command,
        status: format!("exited with {}", output.status),
        output: last_lines(&text, 30),
    })
}

/// The command line, for messages.
pub fn describe(command: &Command) -> String {
    let mut line = command.get_program().to_string_lossy().into_owned();
    for arg in command.get_args() {
        line.push(' ');
        line.push_str(&arg.to_string_lossy());
    }
    line
}

/// The last `count` lines of `text`.
pub fn last_lines(text: &str, count: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(count);
    lines.get(start..).unwrap_or_default().join("\n")
}

/// Removes everything inside `dir`, keeping the directory itself.
fn clear_dir(dir: &Path) -> Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(EmbeddedError::io("list", dir, e)),
    };
    for entry in entries {
        let path = entry.map_err(|e| EmbeddedError::io("list", dir, e))?.path();
        let removed = if path.is_dir() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        removed.map_err(|e| EmbeddedError::io("remove", &path, e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_lines_keeps_the_tail() {
        assert_eq!(last_lines("a\nb\nc\n", 2), "b\nc");
        assert_eq!(last_lines("a", 5), "a");
        assert_eq!(last_lines("", 5), "");
    }
}
