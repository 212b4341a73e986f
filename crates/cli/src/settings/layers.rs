//! The sources of settings (the file, the variables, the flags), each checked against the table,
//! and the pick of each key's value by precedence.

use super::value::SettingValue;
use super::{Key, SECTIONS, Settings, keys};
use anyhow::{Context, Result, anyhow, bail};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::{Table, Value};

/// Where a value came from, for error messages.
#[derive(Debug, Clone)]
enum Source {
    File(PathBuf),
    Variable(String),
    Flag(String),
}

impl Source {
    /// The context of an error in this source: the same wording for every key of a source.
    fn context(&self) -> String {
        match self {
            Source::File(path) => format!("in {}", path.display()),
            Source::Variable(_) => "in the SLUICE_* environment variables".to_string(),
            Source::Flag(_) => "in the command-line options".to_string(),
        }
    }

    /// The name the value was given under.
    fn name(&self, key: &Key) -> String {
        match self {
            Source::File(_) => key.path(),
            Source::Variable(name) => name.clone(),
            Source::Flag(flag) => format!("--{flag}"),
        }
    }
}

/// A value as a source gave it.
#[derive(Debug, Clone)]
enum Given {
    Toml(Value),
    Text(String),
}

/// What every source gave, lowest precedence first.
#[derive(Debug, Default)]
pub(crate) struct Layers {
    given: BTreeMap<(&'static str, &'static str), Vec<(Given, Source)>>,
    views: BTreeMap<String, PathBuf>,
}

impl Layers {
    fn give(&mut self, key: &'static Key, value: Given, source: Source) {
        self.given
            .entry((key.section, key.name))
            .or_default()
            .push((value, source));
    }

    /// The value of `section.key` from the highest source that gave one, every given value
    /// checked first so that a bad one is reported even where a higher source overrides it.
    pub(crate) fn pick<T: SettingValue>(&self, section: &str, key: &str) -> Result<Option<T>> {
        let Some(given) = self.given.get(&(section, key)) else {
            return Ok(None);
        };
        let mut picked = None;
        for (value, source) in given {
            let parsed = match value {
                Given::Toml(value) => T::from_toml(value),
                Given::Text(text) => T::parse_text(text),
            };
            let meta = find(section, key).ok_or_else(|| anyhow!("unknown key {section}.{key}"))?;
            picked = Some(
                parsed
                    .map_err(|error| anyhow!("{}: {error}", source.name(meta)))
                    .with_context(|| source.context())?,
            );
        }
        Ok(picked)
    }

    /// The keys some source gave, as `section.key`.
    pub(crate) fn given_keys(&self) -> std::collections::BTreeSet<String> {
        self.given
            .keys()
            .map(|(section, key)| format!("{section}.{key}"))
            .collect()
    }

    /// The view mounts, in prefix order.
    pub(crate) fn views(&self) -> Vec<(String, PathBuf)> {
        self.views
            .iter()
            .map(|(prefix, file)| (prefix.clone(), file.clone()))
            .collect()
    }

    fn view(&mut self, prefix: &str, file: PathBuf, source: &Source) -> Result<()> {
        if !prefix.starts_with('/') {
            return Err(anyhow!("the view prefix {prefix:?} must start with /"))
                .with_context(|| source.context());
        }
        self.views.insert(prefix.to_string(), file);
        Ok(())
    }
}

fn find(section: &str, key: &str) -> Option<&'static Key> {
    keys().find(|k| k.section == section && k.name == key)
}

/// The settings from the file (if any), the variables `env` gives, and the flags (`(key,
/// value)` as text, `views` as `PREFIX=FILE`).
pub fn resolve(
    file: Option<&Path>,
    env: impl Fn(&str) -> Option<String>,
    flags: &[(&'static Key, String)],
    flag_views: &[String],
) -> Result<Settings> {
    let mut layers = Layers::default();
    if let Some(path) = file {
        read_file(&mut layers, path)?;
    }
    read_variables(&mut layers, &env)?;
    for (key, value) in flags {
        layers.give(key, Given::Text(value.clone()), Source::Flag(key.flag()));
    }
    let flag_source = Source::Flag("views".to_string());
    for pair in flag_views {
        let (prefix, file) = pair.split_once('=').unwrap_or((pair, ""));
        layers.view(prefix.trim(), PathBuf::from(file.trim()), &flag_source)?;
    }
    Settings::from_layers(&layers)
}

/// The file's keys, each checked to be one the table declares; view paths are taken relative to
/// the file's folder.
fn read_file(layers: &mut Layers, path: &Path) -> Result<()> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the config file {}", path.display()))?;
    let table: Table = toml::from_str(&text)
        .with_context(|| format!("parsing the config file {}", path.display()))?;
    let source = Source::File(path.to_path_buf());
    let base = path.parent().unwrap_or(Path::new("."));
    for (section_name, value) in table {
        let Value::Table(entries) = value else {
            bail!("{}: {section_name} must be a [section]", source.context());
        };
        if section_name == "views" {
            for (prefix, file) in entries {
                let Value::String(file) = file else {
                    bail!("{}: views.{prefix:?} must be a file name", source.context());
                };
                layers.view(&prefix, base.join(file), &source)?;
            }
            continue;
        }
        let Some(section) = SECTIONS.iter().find(|s| s.name == section_name) else {
            let known: Vec<&str> = SECTIONS.iter().map(|s| s.name).collect();
            bail!(
                "{}: unknown section [{section_name}] (known: {}, views)",
                source.context(),
                known.join(", ")
            );
        };
        for (key_name, value) in entries {
            let Some(key) = section.keys.iter().find(|k| k.name == key_name) else {
                let known: Vec<&str> = section.keys.iter().map(|k| k.name).collect();
                bail!(
                    "{}: unknown key {section_name}.{key_name} (the keys of [{section_name}]: {})",
                    source.context(),
                    known.join(", ")
                );
            };
            layers.give(key, Given::Toml(value), source.clone());
        }
    }
    Ok(())
}

/// `SLUICE_<SECTION>_<KEY>` for every key (above its older alias), and `SLUICE_VIEWS` with
/// `prefix=file` pairs separated by commas.
fn read_variables(layers: &mut Layers, env: &impl Fn(&str) -> Option<String>) -> Result<()> {
    for key in keys() {
        for name in key
            .alias
            .into_iter()
            .map(str::to_string)
            .chain([key.variable()])
        {
            if let Some(value) = env(&name) {
                layers.give(key, Given::Text(value), Source::Variable(name));
            }
        }
    }
    if let Some(views) = env("SLUICE_VIEWS") {
        let source = Source::Variable("SLUICE_VIEWS".to_string());
        for pair in views.split(',').filter(|pair| !pair.trim().is_empty()) {
            let (prefix, file) = pair.split_once('=').unwrap_or((pair, ""));
            layers.view(prefix.trim(), PathBuf::from(file.trim()), &source)?;
        }
    }
    Ok(())
}
