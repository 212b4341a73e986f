//! Fuzzes the parsers of files and outputs sluice-embedded reads: postmaster.pid, /etc/passwd,
//! `postgres --version`, PG_VERSION, sluice.conf and sluice.pgpass. None may panic on any input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice_embedded::parsers;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(pid) = parsers::parse_postmaster_pid(&text) {
        // A parsed pid file always came from at least four lines.
        assert!(text.lines().count() >= 4);
        let _ = pid.port;
    }
    let name = text.lines().next().and_then(|l| l.split(':').next()).unwrap_or("postgres");
    if let Some(user) = parsers::find_user(&text, name) {
        assert_eq!(user.name, name);
    }
    let _ = parsers::parse_version_output(&text);
    let _ = parsers::parse_pg_version_file(&text);
    let _ = parsers::recorded_port(&text);
    let _ = parsers::parse_password_file(&text);
});
