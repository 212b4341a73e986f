//! The types a setting can have: how each is read from TOML or from text (variables, flags) and
//! written back as TOML for the reference file.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;
use toml::Value;

/// A type a setting can have.
pub trait SettingValue: Sized {
    /// What the flag's value is called in `--help` (`N`, `DURATION`, ...).
    const VALUE_NAME: &'static str;
    /// A switch: its flag may be given without a value, meaning `true`.
    const SWITCH: bool = false;
    /// A list: its flag may be given more than once, the values joined with commas.
    const REPEATABLE: bool = false;

    /// From the text of a variable, a flag or a quoted TOML string.
    fn parse_text(text: &str) -> Result<Self, String>;

    /// From a TOML value; strings are read as text.
    fn from_toml(value: &Value) -> Result<Self, String> {
        match value {
            Value::String(text) => Self::parse_text(text),
            other => Self::from_native(other),
        }
    }

    /// From a TOML value of another type than string.
    fn from_native(value: &Value) -> Result<Self, String> {
        Err(format!(
            "expected {}, found {}",
            Self::VALUE_NAME,
            value.type_str()
        ))
    }

    /// As TOML, for the reference file; `None` for a value that is not set (shown commented out).
    fn to_toml(&self) -> Option<Value>;
}

impl SettingValue for String {
    const VALUE_NAME: &'static str = "TEXT";
    fn parse_text(text: &str) -> Result<String, String> {
        Ok(text.to_string())
    }
    fn to_toml(&self) -> Option<Value> {
        Some(Value::String(self.clone()))
    }
}

impl SettingValue for PathBuf {
    const VALUE_NAME: &'static str = "PATH";
    fn parse_text(text: &str) -> Result<PathBuf, String> {
        Ok(PathBuf::from(text))
    }
    fn to_toml(&self) -> Option<Value> {
        Some(Value::String(self.to_string_lossy().into_owned()))
    }
}

impl SettingValue for bool {
    const VALUE_NAME: &'static str = "BOOL";
    const SWITCH: bool = true;
    fn parse_text(text: &str) -> Result<bool, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" | "1" => Ok(true),
            "false" | "no" | "off" | "0" => Ok(false),
            other => Err(format!("{other:?} is not true or false")),
        }
    }
    fn from_native(value: &Value) -> Result<bool, String> {
        value
            .as_bool()
            .ok_or_else(|| format!("expected true or false, found {}", value.type_str()))
    }
    fn to_toml(&self) -> Option<Value> {
        Some(Value::Boolean(*self))
    }
}

macro_rules! integer_setting {
    ($($int:ty),*) => {$(
        impl SettingValue for $int {
            const VALUE_NAME: &'static str = "N";
            fn parse_text(text: &str) -> Result<$int, String> {
                text.trim().parse().map_err(|_| {
                    format!("{text:?} is not a whole number from {} to {}", <$int>::MIN, <$int>::MAX)
                })
            }
            fn from_native(value: &Value) -> Result<$int, String> {
                let int = value
                    .as_integer()
                    .ok_or_else(|| format!("expected a whole number, found {}", value.type_str()))?;
                <$int>::try_from(int).map_err(|_| {
                    format!("{int} is not a whole number from {} to {}", <$int>::MIN, <$int>::MAX)
                })
            }
            fn to_toml(&self) -> Option<Value> {
                i64::try_from(*self).ok().map(Value::Integer)
            }
        }
    )*};
}

integer_setting!(u16, u32, u64, usize);

impl SettingValue for SocketAddr {
    const VALUE_NAME: &'static str = "ADDR";
    fn parse_text(text: &str) -> Result<SocketAddr, String> {
        text.trim()
            .parse()
            .map_err(|_| format!("{text:?} is not an address such as 127.0.0.1:8080"))
    }
    fn to_toml(&self) -> Option<Value> {
        Some(Value::String(self.to_string()))
    }
}

impl<T: SettingValue> SettingValue for Option<T> {
    const VALUE_NAME: &'static str = T::VALUE_NAME;
    const SWITCH: bool = T::SWITCH;
    fn parse_text(text: &str) -> Result<Option<T>, String> {
        T::parse_text(text).map(Some)
    }
    fn from_native(value: &Value) -> Result<Option<T>, String> {
        T::from_native(value).map(Some)
    }
    fn to_toml(&self) -> Option<Value> {
        self.as_ref().and_then(T::to_toml)
    }
}

/// A list: a TOML array, or comma-separated text.
impl SettingValue for Vec<String> {
    const VALUE_NAME: &'static str = "LIST";
    const REPEATABLE: bool = true;
    fn parse_text(text: &str) -> Result<Vec<String>, String> {
        Ok(text
            .split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(str::to_string)
            .collect())
    }
    fn from_native(value: &Value) -> Result<Vec<String>, String> {
        let items = value
            .as_array()
            .ok_or_else(|| format!("expected a list, found {}", value.type_str()))?;
        items
            .iter()
            .map(|item| match item {
                Value::String(text) => Ok(text.clone()),
                other => Err(format!(
                    "expected a list of strings, found {}",
                    other.type_str()
                )),
            })
            .collect()
    }
    fn to_toml(&self) -> Option<Value> {
        Some(Value::Array(
            self.iter().cloned().map(Value::String).collect(),
        ))
    }
}

/// A map of names to text: a TOML table, or `name=value` pairs separated by commas.
impl SettingValue for BTreeMap<String, String> {
    const VALUE_NAME: &'static str = "NAME=VALUE,...";
    fn parse_text(text: &str) -> Result<BTreeMap<String, String>, String> {
        text.split(',')
            .map(str::trim)
            .filter(|pair| !pair.is_empty())
            .map(|pair| match pair.split_once('=') {
                Some((name, value)) => Ok((name.trim().to_string(), value.trim().to_string())),
                None => Err(format!("{pair:?} is not name=value")),
            })
            .collect()
    }
    fn from_native(value: &Value) -> Result<BTreeMap<String, String>, String> {
        let table = value
            .as_table()
            .ok_or_else(|| format!("expected a table, found {}", value.type_str()))?;
        table
            .iter()
            .map(|(name, value)| match value {
                Value::String(text) => Ok((name.clone(), text.clone())),
                other => Ok((name.clone(), other.to_string())),
            })
            .collect()
    }
    fn to_toml(&self) -> Option<Value> {
        Some(Value::Table(
            self.iter()
                .map(|(name, value)| (name.clone(), Value::String(value.clone())))
                .collect(),
        ))
    }
}

/// A duration: `250ms`, `5s`, `2m`, `1h`, or a number of seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span(pub Duration);

impl Span {
    /// `None` for zero, which settings use for "never".
    pub fn never_if_zero(self) -> Option<Duration> {
        (!self.0.is_zero()).then_some(self.0)
    }
}

impl FromStr for Span {
    type Err = String;
    fn from_str(text: &str) -> Result<Span, String> {
        let text = text.trim();
        let split = text
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(text.len());
        let (number, unit) = text.split_at(split);
        let number: f64 = number
            .parse()
            .map_err(|_| format!("{text:?} is not a duration such as 500ms, 5s, 2m or 1h"))?;
        let seconds = match unit.trim() {
            "" | "s" => number,
            "ms" => number / 1000.0,
            "m" | "min" => number * 60.0,
            "h" => number * 3600.0,
            other => return Err(format!("unknown duration unit {other:?} (ms, s, m or h)")),
        };
        Duration::try_from_secs_f64(seconds)
            .map(Span)
            .map_err(|error| error.to_string())
    }
}

impl std::fmt::Display for Span {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let millis = self.0.as_millis();
        let secs = self.0.as_secs();
        if self.0.is_zero() {
            write!(f, "0s")
        } else if !self.0.subsec_nanos().is_multiple_of(1_000_000) {
            write!(f, "{}s", self.0.as_secs_f64())
        } else if !millis.is_multiple_of(1000) {
            write!(f, "{millis}ms")
        } else if secs.is_multiple_of(3600) {
            write!(f, "{}h", secs / 3600)
        } else if secs.is_multiple_of(60) {
            write!(f, "{}m", secs / 60)
        } else {
            write!(f, "{secs}s")
        }
    }
}

impl SettingValue for Span {
    const VALUE_NAME: &'static str = "DURATION";
    fn parse_text(text: &str) -> Result<Span, String> {
        text.parse()
    }
    fn from_native(value: &Value) -> Result<Span, String> {
        let seconds = match value {
            Value::Integer(int) => *int as f64,
            Value::Float(float) => *float,
            other => return Err(format!("expected a duration, found {}", other.type_str())),
        };
        Duration::try_from_secs_f64(seconds)
            .map(Span)
            .map_err(|error| error.to_string())
    }
    fn to_toml(&self) -> Option<Value> {
        Some(Value::String(self.to_string()))
    }
}

/// A size in bytes: `1048576`, `64KiB`, `256MiB`, `1GiB` (KB/MB/GB are powers of 1000).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size(pub u64);

impl Size {
    /// As a `usize`, saturating on 32-bit machines.
    pub fn bytes(self) -> usize {
        usize::try_from(self.0).unwrap_or(usize::MAX)
    }
}

impl FromStr for Size {
    type Err = String;
    fn from_str(text: &str) -> Result<Size, String> {
        let text = text.trim();
        let split = text
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len());
        let (number, unit) = text.split_at(split);
        let number: u64 = number
            .parse()
            .map_err(|_| format!("{text:?} is not a size such as 1048576, 64KiB or 256MiB"))?;
        let factor: u64 = match unit.trim() {
            "" | "B" => 1,
            "KiB" => 1 << 10,
            "MiB" => 1 << 20,
            "GiB" => 1 << 30,
            "KB" | "kB" => 1_000,
            "MB" => 1_000_000,
            "GB" => 1_000_000_000,
            other => return Err(format!("unknown size unit {other:?} (B, KiB, MiB, GiB)")),
        };
        number
            .checked_mul(factor)
            .map(Size)
            .ok_or_else(|| "the size is too large".to_string())
    }
}

impl std::fmt::Display for Size {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let units = [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
        for (factor, unit) in units {
            if self.0 >= factor && self.0.is_multiple_of(factor) {
                return write!(f, "{}{unit}", self.0 / factor);
            }
        }
        write!(f, "{}", self.0)
    }
}

impl SettingValue for Size {
    const VALUE_NAME: &'static str = "SIZE";
    fn parse_text(text: &str) -> Result<Size, String> {
        text.parse()
    }
    fn from_native(value: &Value) -> Result<Size, String> {
        let int = value
            .as_integer()
            .ok_or_else(|| format!("expected a size, found {}", value.type_str()))?;
        u64::try_from(int)
            .map(Size)
            .map_err(|_| format!("{int} is not a size"))
    }
    fn to_toml(&self) -> Option<Value> {
        Some(Value::String(self.to_string()))
    }
}

/// A setting that is one of a few words (an enum): its words and their values.
pub trait Choice: Sized + Copy + PartialEq + 'static {
    /// Every word with its value, the first the default's usual spelling.
    const WORDS: &'static [(&'static str, Self)];
}

/// Implements [`SettingValue`] for a [`Choice`].
macro_rules! choice_setting {
    ($($choice:ty),*) => {$(
        impl $crate::settings::value::SettingValue for $choice {
            const VALUE_NAME: &'static str = "WORD";
            fn parse_text(text: &str) -> Result<$choice, String> {
                use $crate::settings::value::Choice;
                let text = text.trim();
                Self::WORDS
                    .iter()
                    .find(|(word, _)| word.eq_ignore_ascii_case(text))
                    .map(|(_, value)| *value)
                    .ok_or_else(|| {
                        let words: Vec<&str> = Self::WORDS.iter().map(|(w, _)| *w).collect();
                        format!("{text:?} is not one of {}", words.join(", "))
                    })
            }
            fn to_toml(&self) -> Option<toml::Value> {
                use $crate::settings::value::Choice;
                Self::WORDS
                    .iter()
                    .find(|(_, value)| value == self)
                    .map(|(word, _)| toml::Value::String(word.to_string()))
            }
        }
    )*};
}
pub(crate) use choice_setting;
