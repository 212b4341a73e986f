//! COMPAT.md, the list of every Redis 7.0 command and whether Sluice answers it, is generated
//! from Redis's command list (`redis-7.0-commands.txt`) and Sluice's command table, so it
//! cannot drift: this test fails until the shipped file is regenerated
//! (`SLUICE_BLESS=1 cargo test -p sluice-resp --test it compat`).

use std::fmt::Write;
use std::path::Path;

fn generate() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let list = std::fs::read_to_string(root.join("redis-7.0-commands.txt")).expect("the list");
    let commands: Vec<(&str, &str)> = list
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split_once(' '))
        .collect();
    let answered = commands
        .iter()
        .filter(|(name, _)| sluice_resp::cmd::lookup(name.as_bytes()).is_some())
        .count();
    let mut out = String::new();
    let _ = writeln!(out, "# Redis 7.0 commands in Sluice\n");
    let _ = writeln!(
        out,
        "Generated from Redis 7.0.15's command list (`crates/resp/redis-7.0-commands.txt`) and \
         Sluice's command table by `crates/resp/tests/it/compat.rs`; do not edit by hand. A command \
         Sluice answers may still lack some of its options; `COMMAND LIST` names the subcommands it \
         answers (all of Redis 7.0's for these commands but SCRIPT DEBUG, plus CLIENT SETINFO).\n"
    );
    let _ = writeln!(
        out,
        "Sluice answers {answered} of Redis 7.0's {} commands.\n",
        commands.len()
    );
    let _ = writeln!(out, "| command | group | Sluice |\n|---|---|---|");
    for (name, group) in &commands {
        let has = sluice_resp::cmd::lookup(name.as_bytes()).is_some();
        let _ = writeln!(
            out,
            "| `{}` | {group} | {} |",
            name.to_ascii_uppercase(),
            if has { "yes" } else { "no" }
        );
    }
    let extra: Vec<String> = sluice_resp::cmd::COMMANDS
        .iter()
        .map(|c| c.name.to_string())
        .filter(|n| !commands.iter().any(|(name, _)| name == n))
        .collect();
    if !extra.is_empty() {
        let _ = writeln!(
            out,
            "\nSluice's own, not in Redis 7.0: {}.",
            extra.join(", ")
        );
    }
    let _ = writeln!(out, "\n## CONFIG parameters\n");
    let _ = writeln!(
        out,
        "CONFIG GET and CONFIG SET know every parameter of Redis 7.0 (TLS's aside), with Redis's \
         names, aliases, defaults, value checks and errors, so that `CONFIG GET *` can be set \
         back as it is. Sluice acts on some; the others are kept and shown but change nothing, \
         and the last column says so.\n"
    );
    let _ = writeln!(out, "| parameter | alias | in Sluice |\n|---|---|---|");
    for (name, alias, what) in sluice_resp::config_parameters() {
        let alias = alias.map(|a| format!("`{a}`")).unwrap_or_default();
        let _ = writeln!(out, "| `{name}` | {alias} | {what} |");
    }
    out
}

#[test]
fn compat_md_is_generated_from_the_command_table() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../COMPAT.md");
    let expected = generate();
    if std::env::var_os("SLUICE_BLESS").is_some() {
        std::fs::write(&path, &expected).expect("writing COMPAT.md");
    }
    let shipped = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        shipped == expected,
        "COMPAT.md is out of date: regenerate it with SLUICE_BLESS=1 cargo test -p sluice-resp --test it compat"
    );
}
