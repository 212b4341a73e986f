//! `DbError`: every field of a server ErrorResponse or NoticeResponse, owned.

use crate::protocol::backend::ErrorFields;
use std::fmt;

/// The severity of a server error or notice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// The session ends.
    Panic,
    /// The session ends.
    Fatal,
    /// The statement failed.
    Error,
    /// A warning.
    Warning,
    /// A notice.
    Notice,
    /// Debugging output.
    Debug,
    /// Information.
    Info,
    /// Log output.
    Log,
}

impl Severity {
    fn parse(s: &str) -> Option<Severity> {
        Some(match s {
            "PANIC" => Severity::Panic,
            "FATAL" => Severity::Fatal,
            "ERROR" => Severity::Error,
            "WARNING" => Severity::Warning,
            "NOTICE" => Severity::Notice,
            "DEBUG" => Severity::Debug,
            "INFO" => Severity::Info,
            "LOG" => Severity::Log,
            _ => return None,
        })
    }

    /// The severity as PostgreSQL spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Panic => "PANIC",
            Severity::Fatal => "FATAL",
            Severity::Error => "ERROR",
            Severity::Warning => "WARNING",
            Severity::Notice => "NOTICE",
            Severity::Debug => "DEBUG",
            Severity::Info => "INFO",
            Severity::Log => "LOG",
        }
    }
}

/// Where in a query an error was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorPosition {
    /// A 1-based character (not byte) position in the query the client sent.
    Original(u32),
    /// A position in an internally generated query (e.g. inside a PL/pgSQL function).
    Internal {
        /// The 1-based character position.
        position: u32,
        /// The internal query's text.
        query: String,
    },
}

/// An error or notice reported by the server, with all of its fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DbError {
    severity: String,
    parsed_severity: Option<Severity>,
    code: String,
    message: String,
    detail: Option<String>,
    hint: Option<String>,
    position: Option<ErrorPosition>,
    where_: Option<String>,
    schema: Option<String>,
    table: Option<String>,
    column: Option<String>,
    datatype: Option<String>,
    constraint: Option<String>,
    file: Option<String>,
    line: Option<u32>,
    routine: Option<String>,
}

impl DbError {
    /// Builds the owned error from the fields of an ErrorResponse or NoticeResponse. Strings that
    /// are not valid UTF-8 (possible before `client_encoding` is in effect) are converted lossily.
    pub fn from_fields(fields: &ErrorFields<'_>) -> DbError {
        let mut e = DbError {
            severity: String::new(),
            parsed_severity: None,
            code: String::new(),
            message: String::new(),
            detail: None,
            hint: None,
            position: None,
            where_: None,
            schema: None,
            table: None,
            column: None,
            datatype: None,
            constraint: None,
            file: None,
            line: None,
            routine: None,
        };
        let mut localized_severity = None;
        let mut internal_position = None;
        let mut internal_query = None;
        for (code, value) in fields.iter() {
            let value = String::from_utf8_lossy(value).into_owned();
            match code {
                b'S' => localized_severity = Some(value),
                b'V' => {
                    e.parsed_severity = Severity::parse(&value);
                    e.severity = value;
                }
                b'C' => e.code = value,
                b'M' => e.message = value,
                b'D' => e.detail = Some(value),
                b'H' => e.hint = Some(value),
                b'P' => e.position = value.parse().ok().map(ErrorPosition::Original),
                b'p' => internal_position = value.parse().ok(),
                b'q' => internal_query = Some(value),
                b'W' => e.where_ = Some(value),
                b's' => e.schema = Some(value),
                b't' => e.table = Some(value),
                b'c' => e.column = Some(value),
                b'd' => e.datatype = Some(value),
                b'n' => e.constraint = Some(value),
                b'F' => e.file = Some(value),
                b'L' => e.line = value.parse().ok(),
                b'R' => e.routine = Some(value),
                _ => {} // Unknown fields are to be ignored, says the protocol.
            }
        }
        if e.severity.is_empty() {
            e.severity = localized_severity.unwrap_or_default();
            e.parsed_severity = Severity::parse(&e.severity);
        }
        if let (Some(position), None) = (internal_position, &e.position) {
            e.position = Some(ErrorPosition::Internal {
                position,
                query: internal_query.unwrap_or_default(),
            });
        }
        e
    }

    /// The severity as sent (`ERROR`, `FATAL`, `NOTICE`, ...).
    pub fn severity(&self) -> &str {
        &self.severity
    }

    /// The severity, when it is one PostgreSQL defines.
    pub fn parsed_severity(&self) -> Option<Severity> {
        self.parsed_severity
    }

    /// The SQLSTATE code.
    pub fn code(&self) -> &str {
        &self.code
    }

    /// The primary message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The optional detail message.
    pub fn detail(&self) -> Option<&str> {
        self.detail.as_deref()
    }

    /// The optional hint: what to do about it.
    pub fn hint(&self) -> Option<&str> {
        self.hint.as_deref()
    }

    /// Where in the query the error is.
    pub fn position(&self) -> Option<&ErrorPosition> {
        self.position.as_ref()
    }

    /// The context call stack.
    pub fn where_(&self) -> Option<&str> {
        self.where_.as_deref()
    }

    /// The schema of the object involved.
    pub fn schema(&self) -> Option<&str> {
        self.schema.as_deref()
    }

    /// The table involved.
    pub fn table(&self) -> Option<&str> {
        self.table.as_deref()
    }

    /// The column involved.
    pub fn column(&self) -> Option<&str> {
        self.column.as_deref()
    }

    /// The data type involved.
    pub fn datatype(&self) -> Option<&str> {
        self.datatype.as_deref()
    }

    /// The constraint involved.
    pub fn constraint(&self) -> Option<&str> {
        self.constraint.as_deref()
    }

    /// The server source file that reported the error.
    pub fn file(&self) -> Option<&str> {
        self.file.as_deref()
    }

    /// The line in that file.
    pub fn line(&self) -> Option<u32> {
        self.line
    }

    /// The server routine that reported the error.
    pub fn routine(&self) -> Option<&str> {
        self.routine.as_deref()
    }

    /// The error as psql shows it, with a caret under the position in `query` when the error
    /// has one: `ERROR:  syntax error at or near "x"\nLINE 1: SELECT x y\n ...`.
    pub fn pretty(&self, query: &str) -> String {
        let mut out = format!("{}:  {}", self.severity, self.message);
        if let Some(ErrorPosition::Original(pos)) = &self.position
            && let Some(caret) = caret_lines(query, *pos as usize)
        {
            out.push('\n');
            out.push_str(&caret);
        }
        for (label, value) in [("DETAIL", &self.detail), ("HINT", &self.hint)] {
            if let Some(v) = value {
                out.push_str(&format!("\n{label}:  {v}"));
            }
        }
        out
    }
}

/// `LINE n: <text>` and a caret line under the 1-based character position `pos` in `query`.
fn caret_lines(query: &str, pos: usize) -> Option<String> {
    let byte = query
        .char_indices()
        .nth(pos.checked_sub(1)?)
        .map(|(i, _)| i)?;
    let line_start = query[..byte].rfind('\n').map_or(0, |i| i + 1);
    let line_end = query[byte..].find('\n').map_or(query.len(), |i| byte + i);
    let line_no = query[..line_start].matches('\n').count() + 1;
    let prefix = format!("LINE {line_no}: ");
    let col = query[line_start..byte].chars().count();
    Some(format!(
        "{prefix}{}\n{}^",
        &query[line_start..line_end],
        " ".repeat(prefix.len() + col)
    ))
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.severity, self.code, self.message)?;
        if let Some(detail) = &self.detail {
            write!(f, "\nDETAIL: {detail}")?;
        }
        if let Some(hint) = &self.hint {
            write!(f, "\nHINT: {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for DbError {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::backend::{Message, parse};

    fn error_from(body: &[u8]) -> DbError {
        let mut bytes = vec![b'E'];
        bytes.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
        bytes.extend_from_slice(body);
        let Some((Message::ErrorResponse(f), _)) = parse(&bytes).unwrap() else {
            panic!("not an error")
        };
        DbError::from_fields(&f)
    }

    #[test]
    fn every_field_is_kept() {
        let e = error_from(
            b"SERREUR\0VERROR\0C23505\0Mduplicate key\0DKey (id)=(1) already exists.\0\
              Hdo this\0P7\0Win function f\0spublic\0tt\0cid\0dint4\0nt_pkey\0Fnbtinsert.c\0\
              L664\0R_bt_check_unique\0\0",
        );
        assert_eq!(e.severity(), "ERROR");
        assert_eq!(e.parsed_severity(), Some(Severity::Error));
        assert_eq!(e.code(), "23505");
        assert_eq!(e.message(), "duplicate key");
        assert_eq!(e.detail(), Some("Key (id)=(1) already exists."));
        assert_eq!(e.hint(), Some("do this"));
        assert_eq!(e.position(), Some(&ErrorPosition::Original(7)));
        assert_eq!(e.where_(), Some("in function f"));
        assert_eq!(
            (
                e.schema(),
                e.table(),
                e.column(),
                e.datatype(),
                e.constraint()
            ),
            (
                Some("public"),
                Some("t"),
                Some("id"),
                Some("int4"),
                Some("t_pkey")
            )
        );
        assert_eq!(
            (e.file(), e.line(), e.routine()),
            (Some("nbtinsert.c"), Some(664), Some("_bt_check_unique"))
        );
        assert_eq!(
            e.to_string(),
            "ERROR 23505: duplicate key\nDETAIL: Key (id)=(1) already exists.\nHINT: do this"
        );
    }

    #[test]
    fn internal_position_and_localized_severity_only() {
        let e = error_from(b"SFEHLER\0C42601\0Mx\0p3\0qSELECT 1\0\0");
        assert_eq!(e.severity(), "FEHLER");
        assert_eq!(e.parsed_severity(), None);
        assert_eq!(
            e.position(),
            Some(&ErrorPosition::Internal {
                position: 3,
                query: "SELECT 1".into()
            })
        );
    }

    #[test]
    fn pretty_puts_a_caret_under_the_character() {
        let e = error_from(b"VERROR\0C42601\0Msyntax error at or near \"y\"\0P14\0\0");
        assert_eq!(
            e.pretty("SELECT 1;\nSé y"),
            "ERROR:  syntax error at or near \"y\"\nLINE 2: Sé y\n           ^"
        );
        let e = error_from(b"VERROR\0C42601\0Mx\0P99\0\0");
        assert_eq!(
            e.pretty("SELECT"),
            "ERROR:  x",
            "a position past the end shows no caret"
        );
    }
}
