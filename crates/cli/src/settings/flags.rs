//! A flag for every setting of the table (`--<section>-<key>` unless the table names it),
//! added to `sluice serve`'s command line.

use super::{Key, SECTIONS, keys};
use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};

/// The settings given as flags, as text, in the table's order.
#[derive(Debug, Default, Clone)]
pub struct SettingFlags {
    pub given: Vec<(&'static Key, String)>,
}

/// The help text of a key's flag: its doc, then where else it can be set.
fn help(key: &Key) -> String {
    let doc: Vec<&str> = key.doc.iter().map(|line| line.trim()).collect();
    format!("{} [{}, {}]", doc.join(" "), key.path(), key.variable())
}

impl Args for SettingFlags {
    fn augment_args(mut cmd: Command) -> Command {
        for section in SECTIONS {
            cmd = cmd.next_help_heading(format!("[{}]", section.name));
            for key in section.keys {
                let mut arg = Arg::new(key.path())
                    .long(key.flag())
                    .value_name(key.value_name)
                    .help(help(key))
                    .action(if key.repeatable {
                        ArgAction::Append
                    } else {
                        ArgAction::Set
                    });
                if let Some(short) = key.short {
                    arg = arg.short(short);
                }
                if key.switch {
                    arg = arg.num_args(0..=1).default_missing_value("true");
                }
                cmd = cmd.arg(arg);
            }
        }
        cmd.next_help_heading(None::<&str>)
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for SettingFlags {
    fn from_arg_matches(matches: &ArgMatches) -> Result<SettingFlags, clap::Error> {
        let mut flags = SettingFlags::default();
        flags.update_from_arg_matches(matches)?;
        Ok(flags)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        for key in keys() {
            let value = if key.repeatable {
                matches
                    .get_many::<String>(&key.path())
                    .map(|values| values.cloned().collect::<Vec<_>>().join(","))
            } else {
                matches.get_one::<String>(&key.path()).cloned()
            };
            if let Some(value) = value {
                self.given.retain(|(k, _)| k.path() != key.path());
                self.given.push((key, value));
            }
        }
        Ok(())
    }
}
