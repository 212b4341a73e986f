//! Writing names and literals into SQL text: identifiers quoted (`"my""table"`), literals quoted
//! as standard strings (`'it''s'`, `E'...'` with a backslash), qualified names.
//!
//! Values from requests go to the server as bind parameters, never through these; they are for
//! names checked against the catalog, and for the few statements that take no parameters (DDL,
//! `SET`, `LISTEN`).

use postgres_protocol::escape;

/// `name` as a quoted identifier: `my"table` → `"my""table"`.
pub fn quote_ident(name: &str) -> String {
    escape::escape_identifier(name)
}

/// Appends `name` as a quoted identifier to `out`.
pub fn push_ident(out: &mut String, name: &str) {
    out.reserve(name.len() + 2);
    out.push('"');
    for c in name.chars() {
        if c == '"' {
            out.push('"');
        }
        out.push(c);
    }
    out.push('"');
}

/// Appends `schema.name`, both quoted, to `out`.
pub fn push_qualified(out: &mut String, schema: &str, name: &str) {
    push_ident(out, schema);
    out.push('.');
    push_ident(out, name);
}

/// `"schema"."name"`.
pub fn qualified(schema: &str, name: &str) -> String {
    let mut out = String::with_capacity(schema.len() + name.len() + 5);
    push_qualified(&mut out, schema, name);
    out
}

/// `text` as a string literal: `it's` → `'it''s'`; with a backslash, an escape string
/// (`E'a\\b'`), which means the same whatever `standard_conforming_strings` says.
pub fn quote_literal(text: &str) -> String {
    escape::escape_literal(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_double_their_quotes() {
        assert_eq!(quote_ident("films"), "\"films\"");
        assert_eq!(quote_ident("my\"db"), "\"my\"\"db\"");
        assert_eq!(quote_ident(""), "\"\"");
        let mut out = String::from("SELECT ");
        push_ident(&mut out, "a\"\"b");
        assert_eq!(out, "SELECT \"a\"\"\"\"b\"");
        assert_eq!(qualified("s\"", "Tbl"), "\"s\"\"\".\"Tbl\"");
    }

    #[test]
    fn push_ident_matches_the_escape_of_postgres_protocol() {
        for name in [
            "",
            "x",
            "\"",
            "a b",
            "ünï\"cödé",
            "\"\"\"",
            "x;DROP TABLE y",
        ] {
            let mut out = String::new();
            push_ident(&mut out, name);
            assert_eq!(out, quote_ident(name), "{name:?}");
        }
    }

    #[test]
    fn literals() {
        assert_eq!(quote_literal("it's"), "'it''s'");
        assert_eq!(quote_literal("a\\b"), " E'a\\\\b'");
        assert_eq!(quote_literal(""), "''");
    }
}
