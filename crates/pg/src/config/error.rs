//! `ConfigError`: what was wrong with a connection setting, which keyword, and where it came from.

use std::borrow::Cow;
use std::fmt;

/// The kind of problem a [`ConfigError`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The conninfo string or URI is malformed: a missing `=`, an unterminated quote, bad
    /// percent-encoding, a stray character after an IPv6 address.
    Syntax,
    /// A keyword that libpq does not know, or a sluice-pg driver setting that is set in code only.
    UnknownOption,
    /// A keyword (or value) that libpq knows but sluice-pg does not implement.
    Unsupported,
    /// A value that is not valid for its keyword.
    InvalidValue,
    /// The `host`, `hostaddr` and `port` lists have lengths that cannot be paired up.
    HostCountMismatch,
    /// No user name was given and none could be found for the operating-system user.
    NoUser,
}

/// Where a setting (or a piece of syntax) came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Byte offset into the connection string.
    Text(usize),
    /// An environment variable (only its name: its value may be a secret).
    Env(&'static str),
    /// A built-in default or a value set in code.
    Default,
}

/// An invalid connection setting: its kind, the keyword concerned, and where the offending text
/// was (a byte offset into the connection string, or an environment variable).
///
/// The message never quotes a password: values of `password`, `sslpassword` and the user-info
/// part of a URI are never echoed.
#[derive(Clone, PartialEq, Eq)]
pub struct ConfigError {
    kind: ErrorKind,
    keyword: Option<Cow<'static, str>>,
    origin: Origin,
    message: String,
    hint: Option<Cow<'static, str>>,
}

impl ConfigError {
    pub(crate) fn new(kind: ErrorKind, origin: Origin, message: impl Into<String>) -> ConfigError {
        ConfigError {
            kind,
            keyword: None,
            origin,
            message: message.into(),
            hint: None,
        }
    }

    /// Names the keyword the error is about.
    pub(crate) fn with_keyword(mut self, keyword: impl Into<Cow<'static, str>>) -> ConfigError {
        self.keyword = Some(keyword.into());
        self
    }

    /// Adds what to do about it.
    pub(crate) fn with_hint(mut self, hint: impl Into<Cow<'static, str>>) -> ConfigError {
        self.hint = Some(hint.into());
        self
    }

    /// What kind of problem this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The connection keyword concerned (`sslmode`, `port`, ...), when there is one.
    pub fn keyword(&self) -> Option<&str> {
        self.keyword.as_deref()
    }

    /// The byte offset in the connection string where the offending text starts, when it came
    /// from the string.
    pub fn position(&self) -> Option<usize> {
        match self.origin {
            Origin::Text(offset) => Some(offset),
            Origin::Env(_) | Origin::Default => None,
        }
    }

    /// The environment variable the offending value came from, when it came from one.
    pub fn env_var(&self) -> Option<&'static str> {
        match self.origin {
            Origin::Env(name) => Some(name),
            Origin::Text(_) | Origin::Default => None,
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        match self.origin {
            Origin::Text(offset) => write!(f, " (at byte {offset} of the connection string)")?,
            Origin::Env(name) => write!(f, " (from environment variable {name})")?,
            Origin::Default => {}
        }
        if let Some(hint) = &self.hint {
            write!(f, "; {hint}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConfigError")
            .field("kind", &self.kind)
            .field("keyword", &self.keyword)
            .field("message", &self.to_string())
            .finish()
    }
}

impl std::error::Error for ConfigError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_position_and_hint() {
        let e = ConfigError::new(ErrorKind::InvalidValue, Origin::Text(8), "invalid x")
            .with_keyword("sslmode")
            .with_hint("do y");
        assert_eq!(
            e.to_string(),
            "invalid x (at byte 8 of the connection string); do y"
        );
        assert_eq!(e.keyword(), Some("sslmode"));
        assert_eq!(e.position(), Some(8));
        assert_eq!(e.env_var(), None);
        assert_eq!(e.kind(), ErrorKind::InvalidValue);
    }

    #[test]
    fn display_names_environment_variable() {
        let e = ConfigError::new(ErrorKind::InvalidValue, Origin::Env("PGPORT"), "bad");
        assert_eq!(e.to_string(), "bad (from environment variable PGPORT)");
        assert_eq!(e.env_var(), Some("PGPORT"));
        assert_eq!(e.position(), None);
    }
}
