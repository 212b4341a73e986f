//! Reading `postmaster.pid`, the running server's lock file in its data directory.

use std::path::{Path, PathBuf};

use crate::error::{EmbeddedError, Result};

/// File name of the lock file in the data directory.
pub const PID_FILE: &str = "postmaster.pid";

/// What a running server records about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostmasterPid {
    /// The postmaster's process id.
    pub pid: u32,
    /// Its data directory.
    pub data_dir: PathBuf,
    /// Its TCP port.
    pub port: u16,
    /// Its first unix socket directory (empty when it has none).
    pub socket_dir: PathBuf,
    /// Its first listen address (empty when it listens on no TCP address).
    pub listen_address: String,
    /// `ready`, `starting`, `stopping` or `standby` (empty on old versions).
    pub status: String,
}

/// Parses the text of a `postmaster.pid` file.
///
/// Lines: pid, data directory, start time, port, socket directory, listen address, shared
/// memory key, status. Lines after the port may be missing while the server starts.
pub fn parse(text: &str) -> std::result::Result<PostmasterPid, &'static str> {
    let mut lines = text.lines();
    let pid = lines
        .next()
        .ok_or("the file is empty")?
        .trim()
        .parse::<u32>()
        .map_err(|_| "line 1 is not a process id")?;
    let data_dir = PathBuf::from(lines.next().ok_or("line 2 (data directory) is missing")?);
    let _start_time = lines.next().ok_or("line 3 (start time) is missing")?;
    let port = lines
        .next()
        .ok_or("line 4 (port) is missing")?
        .trim()
        .parse::<u16>()
        .map_err(|_| "line 4 is not a port number")?;
    let socket_dir = PathBuf::from(lines.next().unwrap_or("").trim());
    let listen_address = lines.next().unwrap_or("").trim().to_owned();
    let _shmem_key = lines.next();
    let status = lines.next().unwrap_or("").trim().to_owned();
    Ok(PostmasterPid {
        pid,
        data_dir,
        port,
        socket_dir,
        listen_address,
        status,
    })
}

/// Reads and parses `<data_dir>/postmaster.pid`; `Ok(None)` when there is no such file.
pub fn read(data_dir: &Path) -> Result<Option<PostmasterPid>> {
    let path = data_dir.join(PID_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => parse(&text)
            .map(Some)
            .map_err(|reason| EmbeddedError::BadPidFile {
                path,
                reason: reason.to_owned(),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(EmbeddedError::io("read", path, e)),
    }
}

/// Whether process `pid` exists and is not a zombie (a container's init may not reap it).
pub fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name, which may itself hold ") ".
        Ok(stat) => stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.chars().next())
            .is_some_and(|state| state != 'Z' && state != 'X'),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_a_ready_server() {
        let text = "4242\n/tmp/x/data\n1700000000\n54321\n/tmp/x/socket\n127.0.0.1\n  1234567     98304\nready   \n";
        let parsed = parse(text).expect("parse");
        assert_eq!(parsed.pid, 4242);
        assert_eq!(parsed.port, 54321);
        assert_eq!(parsed.socket_dir, PathBuf::from("/tmp/x/socket"));
        assert_eq!(parsed.listen_address, "127.0.0.1");
        assert_eq!(parsed.status, "ready");
        assert!(parse("").is_err());
        assert!(parse("12\n/d\n1\nnotaport\n").is_err());
        assert!(
            parse("12\n/d\n1\n5432\n").is_ok(),
            "a starting server writes fewer lines"
        );
    }

    #[test]
    fn this_process_is_alive() {
        assert!(process_alive(std::process::id()));
        assert!(!process_alive(u32::MAX));
    }

    proptest! {
        #[test]
        fn parse_never_panics(text in "\\PC{0,300}") {
            let _ = parse(&text);
        }

        #[test]
        fn parse_reads_back_written_fields(pid in any::<u32>(), port in any::<u16>(), dir in "/[a-z/]{0,30}") {
            let text = format!("{pid}\n{dir}\n1\n{port}\n{dir}\n127.0.0.1\n 1 2\nready\n");
            let parsed = parse(&text).expect("parse");
            prop_assert_eq!(parsed.pid, pid);
            prop_assert_eq!(parsed.port, port);
            prop_assert_eq!(parsed.socket_dir, PathBuf::from(dir));
        }
    }
}
