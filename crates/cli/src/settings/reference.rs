//! The reference `sluice.toml` (every key with its doc and default, as `sluice serve --example`
//! prints it and the repository ships it) and the resolved settings as TOML (`--dump-config`).

use super::{SECTIONS, Settings};
use std::fmt::Write;

const HEADER: &str = "\
# sluice.toml: every setting of `sluice serve`, with its default.
#
# Run: sluice serve --config sluice.toml
# Each key can be overridden by the variable SLUICE_<SECTION>_<KEY> (for example
# SLUICE_POOL_SIZE=32 or SLUICE_HTTP_LISTEN=0.0.0.0:8080) and by the flag --<section>-<key>
# (--pool-size 32; `sluice serve --help` lists them); a flag beats a variable, a variable beats
# this file, this file beats the default. Durations: 500ms, 5s, 2m, 1h or a number of seconds.
# Sizes: bytes, or with KiB/MiB/GiB. Lists: [\"a\", \"b\"] here, a,b in variables and flags.
# This file is generated: `sluice serve --example > sluice.toml`.
";

const VIEWS: &str = "\
[views]
# URL prefix = view file (relative to this file). Also --views /prefix=file (repeatable) and
# SLUICE_VIEWS=\"/films=films.json,/tags=tags.json\".
# \"/films\" = \"examples/films/films.json\"
";

/// The reference file: every section and key with its doc, its default, or (when the default
/// is "not set") a sample value commented out.
pub fn reference_file() -> String {
    let defaults = Settings::default();
    let mut out = String::from(HEADER);
    for section in SECTIONS {
        let _ = write!(out, "\n[{}]\n", section.name);
        comment(&mut out, section.doc);
        for key in section.keys {
            comment(&mut out, key.doc);
            match defaults.value_of(section.name, key.name) {
                Some(value) => {
                    let line = format!("{} = {value}", key.name);
                    match value.as_array() {
                        // A long list, an element a line, so the file reads in 100 columns.
                        Some(items) if line.len() > 100 => {
                            let _ = writeln!(out, "{} = [", key.name);
                            for item in items {
                                let _ = writeln!(out, "    {item},");
                            }
                            out.push_str("]\n");
                        }
                        _ => {
                            out.push_str(&line);
                            out.push('\n');
                        }
                    }
                }
                None => match Settings::sample_of(section.name, key.name) {
                    Some(sample) => {
                        let _ = writeln!(out, "# {} = {sample}", key.name);
                    }
                    None => {
                        let _ = writeln!(out, "# {} =", key.name);
                    }
                },
            }
        }
        if section.name == "http" {
            out.push('\n');
            out.push_str(VIEWS);
        }
    }
    out
}

/// Doc lines as one paragraph of `# ` comments wrapped at 100 columns.
fn comment(out: &mut String, doc: &[&str]) {
    let mut line = String::from("#");
    for word in doc.iter().flat_map(|l| l.split_whitespace()) {
        if line.len() + 1 + word.len() > 100 {
            let _ = writeln!(out, "{line}");
            line = String::from("#");
        }
        line.push(' ');
        line.push_str(word);
    }
    if line.len() > 1 {
        let _ = writeln!(out, "{line}");
    }
}

/// The settings as TOML, as they were resolved (keys not set are left out).
pub fn dump(settings: &Settings) -> String {
    let mut out = String::new();
    for section in SECTIONS {
        let _ = writeln!(out, "[{}]", section.name);
        for key in section.keys {
            if let Some(value) = settings.value_of(section.name, key.name) {
                let _ = writeln!(out, "{} = {value}", key.name);
            }
        }
        out.push('\n');
        if section.name == "http" && !settings.views.is_empty() {
            out.push_str("[views]\n");
            for (prefix, file) in &settings.views {
                let _ = writeln!(
                    out,
                    "{} = {}",
                    toml::Value::String(prefix.clone()),
                    toml::Value::String(file.to_string_lossy().into_owned())
                );
            }
            out.push('\n');
        }
    }
    out
}
