//! Fuzz target: arbitrary Lua source and arguments through EVAL (RESP2 and RESP3): every script
//! answers with a complete reply or an error, within its time and memory limits, never a panic.
#![no_main]

use std::sync::LazyLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use sluice_resp::ScriptHarness;

static HARNESS: LazyLock<ScriptHarness> = LazyLock::new(|| {
    ScriptHarness::new(Duration::from_millis(50), 64 << 20).expect("script harness")
});

fuzz_target!(|data: &[u8]| {
    // Layout: flags byte, then the script and its arguments separated by 0xff.
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let mut parts = rest.split(|b| *b == 0xff);
    let script = parts.next().unwrap_or_default();
    let args: Vec<&[u8]> = parts.take(8).collect();
    let numkeys = (usize::from(flags >> 1) % (args.len() + 1)).to_string();
    let reply = HARNESS.eval(script, numkeys.as_bytes(), &args, flags & 1 == 1);
    assert!(!reply.is_empty());
    assert!(reply.ends_with(b"\r\n"));
});
