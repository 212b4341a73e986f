//! Fuzz target: `Config::parse_with_env` on arbitrary UTF-8 (conninfo or URI) with an empty environment.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice_pg::config::Config;

fuzz_target!(|input: &str| {
    let empty_env = |_: &str| None;
    if let Ok(config) = Config::parse_with_env(input, &empty_env) {
        // Whatever parses must render to a string that parses to the same settings.
        let rendered = config.to_conninfo_string();
        let again = Config::parse_with_env(&rendered, &empty_env);
        assert_eq!(again.as_ref().ok(), Some(&config), "{rendered}");
        let _ = config.targets();
    }
    // Also reach the URI parser for every input, not only those starting with the scheme.
    let _ = Config::parse_with_env(&format!("postgresql://{input}"), &empty_env);
});
