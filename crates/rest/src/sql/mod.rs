//! SQL text from plans. Names come from the schema cache and are quoted; every value from the
//! request becomes a bind parameter (`$n`); nothing a client sent is pasted into the text.

pub mod call;
pub mod media;
pub mod nested;
pub mod read;
pub mod write;

use sluice_pg::sql::push_ident;
use std::fmt::Write;

/// A statement being written: its text and its parameters (text, `None` for NULL).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    /// The SQL text, with `$1`, `$2`, ... for the parameters.
    pub sql: String,
    /// The parameters' values, in order, as text; `None` is NULL.
    pub params: Vec<Option<String>>,
}

impl Default for Statement {
    fn default() -> Statement {
        Statement::new()
    }
}

impl Statement {
    /// An empty statement, with room for a point read.
    pub fn new() -> Statement {
        Statement {
            // Room for a point read's SQL and its parameter: written without regrowing.
            sql: String::with_capacity(256),
            params: Vec::with_capacity(2),
        }
    }

    /// Appends SQL text; only the planner's own text, never a value from the request.
    pub fn push(&mut self, text: &str) -> &mut Statement {
        self.sql.push_str(text);
        self
    }

    /// A quoted identifier.
    pub fn ident(&mut self, name: &str) -> &mut Statement {
        push_ident(&mut self.sql, name);
        self
    }

    /// `"alias"."column"`.
    pub fn column(&mut self, alias: &str, name: &str) -> &mut Statement {
        push_ident(&mut self.sql, alias);
        self.sql.push('.');
        push_ident(&mut self.sql, name);
        self
    }

    /// A new parameter holding `value`, written as `$n`.
    pub fn param(&mut self, value: impl Into<String>) -> &mut Statement {
        self.params.push(Some(value.into()));
        let _ = write!(self.sql, "${}", self.params.len());
        self
    }

    /// The parameters as the driver takes them.
    pub fn driver_params(&self) -> Vec<&dyn sluice_pg::ToSql> {
        self.params
            .iter()
            .map(|p| p as &dyn sluice_pg::ToSql)
            .collect()
    }
}

/// `values` as a PostgreSQL array literal (`{"a","b \"c\""}`), every element quoted.
pub fn array_literal<'a>(values: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::from("{");
    for (i, value) in values.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('"');
        for c in value.chars() {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
        out.push('"');
    }
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_literals_quote_every_element() {
        assert_eq!(
            array_literal(["a", "b,c", "d\"e", "f\\g", ""]),
            r#"{"a","b,c","d\"e","f\\g",""}"#
        );
        assert_eq!(array_literal([]), "{}");
    }

    #[test]
    fn params_are_numbered() {
        let mut s = Statement::new();
        s.push("SELECT ")
            .column("t", "a\"b")
            .push(" = ")
            .param("1")
            .push(" OR ")
            .param("x");
        assert_eq!(s.sql, r#"SELECT "t"."a""b" = $1 OR $2"#);
        assert_eq!(s.params, vec![Some("1".to_string()), Some("x".to_string())]);
    }
}
