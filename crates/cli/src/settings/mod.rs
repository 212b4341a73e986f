//! `sluice serve`'s settings: each is one declaration in [`table`], from which its TOML key, its
//! `SLUICE_<SECTION>_<KEY>` variable, its flag and its line in the reference `sluice.toml` come.
//!
//! A flag beats a variable, a variable beats the file, the file beats the default. Every value
//! given is checked, whichever source wins, so an error names where the bad value came from.

mod flags;
mod layers;
mod reference;
mod table;
#[cfg(test)]
mod tests;
pub mod value;

pub use flags::SettingFlags;
pub use layers::resolve;
pub use reference::{dump, reference_file};
pub use table::*;

/// One setting as the table declares it.
#[derive(Debug)]
pub struct Key {
    pub section: &'static str,
    pub name: &'static str,
    /// What it is, one line per doc-comment line of its declaration.
    pub doc: &'static [&'static str],
    /// The flag's name when it is not `<section>-<key>`.
    pub flag: Option<&'static str>,
    pub short: Option<char>,
    /// An older variable name, read below `SLUICE_<SECTION>_<KEY>`.
    pub alias: Option<&'static str>,
    pub value_name: &'static str,
    /// Its flag may be given without a value, meaning `true`.
    pub switch: bool,
    /// Its flag may be given more than once (a list; the values are joined with commas).
    pub repeatable: bool,
}

impl Key {
    /// `section.key`, as in the file.
    pub fn path(&self) -> String {
        format!("{}.{}", self.section, self.name)
    }

    /// `SLUICE_SECTION_KEY`.
    pub fn variable(&self) -> String {
        format!("SLUICE_{}_{}", self.section, self.name).to_uppercase()
    }

    /// The long flag, without its dashes.
    pub fn flag(&self) -> String {
        match self.flag {
            Some(flag) => flag.to_string(),
            None => format!("{}-{}", self.section, self.name.replace('_', "-")),
        }
    }
}

/// A section of the file and its keys.
#[derive(Debug)]
pub struct Section {
    pub name: &'static str,
    pub doc: &'static [&'static str],
    pub keys: &'static [Key],
}

/// Every key of every section.
pub fn keys() -> impl Iterator<Item = &'static Key> {
    SECTIONS.iter().flat_map(|section| section.keys.iter())
}

/// `None` without a literal, `Some(literal)` with one.
macro_rules! optional {
    () => {
        None
    };
    ($value:literal) => {
        Some($value)
    };
}
pub(crate) use optional;

/// Declares every setting. Each section becomes a struct of that name with one field per key;
/// each key gives its type, its default, and optionally its flag's name (`flag "pool-size"`,
/// else `<section>-<key>`), a short flag, an older variable name and a sample value shown
/// commented out in the reference file when the default is "not set". The doc comments are the
/// help text, the file's comments and the docs.
macro_rules! settings {
    ($(
        $(#[doc = $section_doc:literal])*
        [$section:ident] $Section:ident {
            $(
                $(#[doc = $doc:literal])*
                $key:ident : $ty:ty = $default:expr
                    $(, flag $flag:literal)?
                    $(, short $short:literal)?
                    $(, alias $alias:literal)?
                    $(, sample $sample:literal)?
                ;
            )*
        }
    )*) => {
        /// The resolved settings `serve` runs with, one field per section.
        #[derive(Debug, Clone)]
        pub struct Settings {
            $( pub $section: $Section, )*
            /// `(prefix, view file)`, in prefix order.
            pub views: Vec<(String, std::path::PathBuf)>,
            /// The keys (`section.key`) some source gave a value for.
            pub given: std::collections::BTreeSet<String>,
        }

        $(
            $(#[doc = $section_doc])*
            #[derive(Debug, Clone)]
            pub struct $Section {
                $( $(#[doc = $doc])* pub $key: $ty, )*
            }

            impl Default for $Section {
                fn default() -> $Section {
                    $Section { $( $key: $default, )* }
                }
            }
        )*

        /// Every section with its keys, in the reference file's order.
        pub const SECTIONS: &[$crate::settings::Section] = &[$(
            $crate::settings::Section {
                name: stringify!($section),
                doc: &[$($section_doc),*],
                keys: &[$(
                    $crate::settings::Key {
                        section: stringify!($section),
                        name: stringify!($key),
                        doc: &[$($doc),*],
                        flag: $crate::settings::optional!($($flag)?),
                        short: $crate::settings::optional!($($short)?),
                        alias: $crate::settings::optional!($($alias)?),
                        value_name:
                            <$ty as $crate::settings::value::SettingValue>::VALUE_NAME,
                        switch: <$ty as $crate::settings::value::SettingValue>::SWITCH,
                        repeatable:
                            <$ty as $crate::settings::value::SettingValue>::REPEATABLE,
                    },
                )*],
            },
        )*];

        impl Settings {
            /// The settings from what the sources gave, the defaults for the rest.
            pub(crate) fn from_layers(
                layers: &$crate::settings::layers::Layers,
            ) -> anyhow::Result<Settings> {
                Ok(Settings {
                    $( $section: $Section {
                        $( $key: layers
                            .pick::<$ty>(stringify!($section), stringify!($key))?
                            .unwrap_or_else(|| $default), )*
                    }, )*
                    views: layers.views(),
                    given: layers.given_keys(),
                })
            }

            /// A key's value as TOML (`None`: not set).
            pub fn value_of(&self, section: &str, key: &str) -> Option<toml::Value> {
                use $crate::settings::value::SettingValue;
                match (section, key) {
                    $($( (stringify!($section), stringify!($key)) =>
                        self.$section.$key.to_toml(), )*)*
                    _ => None,
                }
            }

            /// A key's sample value as TOML, for the reference file.
            pub fn sample_of(section: &str, key: &str) -> Option<toml::Value> {
                use $crate::settings::value::SettingValue;
                match (section, key) {
                    $($( (stringify!($section), stringify!($key)) => {
                        let sample: Option<&str> = $crate::settings::optional!($($sample)?);
                        sample
                            .and_then(|text| <$ty as SettingValue>::parse_text(text).ok())
                            .and_then(|value| value.to_toml())
                    } )*)*
                    _ => None,
                }
            }
        }

        impl Default for Settings {
            fn default() -> Settings {
                Settings {
                    $( $section: $Section::default(), )*
                    views: Vec::new(),
                    given: Default::default(),
                }
            }
        }
    };
}
pub(crate) use settings;
