//! `/query`: the InfluxQL statements write-only clients send at start (`CREATE DATABASE x`).

use crate::InfluxApi;
use crate::catalog::{self, ClaimError};
use crate::plan::MAX_IDENTIFIER_LEN;
use crate::reply::{ApiError, from_db, from_pool};

/// A statement this endpoint runs.
#[derive(Debug, PartialEq, Eq)]
pub enum Statement {
    /// `CREATE DATABASE name [WITH ...]`: creates the schema (the `WITH` clause of retention
    /// settings is accepted and has no effect).
    CreateDatabase(String),
}

/// Parses `q`: one or more `;`-separated statements.
pub fn parse(q: &str) -> Result<Vec<Statement>, ApiError> {
    let mut statements = Vec::new();
    for text in q.split(';') {
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        statements.push(parse_one(text)?);
    }
    if statements.is_empty() {
        return Err(ApiError::Invalid("missing required parameter \"q\"".into()));
    }
    Ok(statements)
}

fn parse_one(text: &str) -> Result<Statement, ApiError> {
    let unsupported = || {
        ApiError::Invalid(format!(
            "error parsing query: only CREATE DATABASE is supported here, not {text:?}"
        ))
    };
    let mut words = text.splitn(3, char::is_whitespace);
    let (Some(create), Some(database), Some(rest)) = (words.next(), words.next(), words.next())
    else {
        return Err(unsupported());
    };
    if !create.eq_ignore_ascii_case("create") || !database.eq_ignore_ascii_case("database") {
        return Err(unsupported());
    }
    let (name, rest) = identifier(rest.trim_start())
        .ok_or_else(|| ApiError::Invalid(format!("error parsing query: {text:?}: bad name")))?;
    let rest = rest.trim_start();
    let with = rest
        .get(..4)
        .is_some_and(|w| w.eq_ignore_ascii_case("with"));
    if !rest.is_empty() && !with {
        return Err(ApiError::Invalid(format!(
            "error parsing query: unexpected {rest:?} after the database name"
        )));
    }
    if name.is_empty() || name.len() > MAX_IDENTIFIER_LEN {
        return Err(ApiError::Invalid(format!(
            "database name {name:?} must be 1 to {MAX_IDENTIFIER_LEN} bytes"
        )));
    }
    Ok(Statement::CreateDatabase(name))
}

/// An InfluxQL identifier: `"quoted"` (with `\"` and `\\` escapes) or bare
/// (`[A-Za-z_][A-Za-z0-9_]*`); returns it and what follows.
fn identifier(text: &str) -> Option<(String, &str)> {
    if let Some(quoted) = text.strip_prefix('"') {
        let mut name = String::new();
        let mut chars = quoted.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => return Some((name, &quoted[i + 1..])),
                '\\' => name.push(chars.next()?.1),
                c => name.push(c),
            }
        }
        return None;
    }
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    let name = &text[..end];
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    Some((name.to_owned(), &text[end..]))
}

/// Runs the statements; returns InfluxDB's result body.
pub async fn run(api: &InfluxApi, statements: &[Statement]) -> Result<Vec<u8>, ApiError> {
    for statement in statements {
        let Statement::CreateDatabase(name) = statement;
        api.config.database_access(name)?;
    }
    let mut conn = api.pool.get().await.map_err(from_pool)?;
    api.ensure_catalog(&mut conn).await.map_err(from_db)?;
    for statement in statements {
        match statement {
            Statement::CreateDatabase(name) => {
                let access = api.config.database_access(name)?;
                // As a first write does: under the schema's lock, refused when the schema
                // exists and is neither the API's nor listed.
                let mut tx = conn.transaction().map_err(from_db)?;
                match catalog::claim_schema(&mut tx, name, access).await {
                    Ok(()) => {}
                    Err(ClaimError::Refused(error)) => return Err(error),
                    Err(ClaimError::Db(error)) => return Err(from_db(error)),
                }
                tx.commit().await.map_err(from_db)?;
                api.shapes.add_schema(name);
            }
        }
    }
    let mut body = Vec::from(&b"{\"results\":["[..]);
    for i in 0..statements.len() {
        if i > 0 {
            body.push(b',');
        }
        body.extend_from_slice(format!("{{\"statement_id\":{i}}}").as_bytes());
    }
    body.extend_from_slice(b"]}");
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_database_forms() {
        let one = |q: &str| parse(q).ok().and_then(|mut v| v.pop());
        assert_eq!(
            one("CREATE DATABASE telegraf"),
            Some(Statement::CreateDatabase("telegraf".into()))
        );
        assert_eq!(
            one("create database \"my \\\"db\\\"\" WITH DURATION 1d"),
            Some(Statement::CreateDatabase("my \"db\"".into()))
        );
        assert!(parse("SHOW DATABASES").is_err());
        assert!(parse("CREATE DATABASE a b").is_err());
        assert!(parse("CREATE DATABASE 1a").is_err());
        assert!(parse("").is_err());
        assert_eq!(
            parse("CREATE DATABASE a; CREATE DATABASE b")
                .map(|v| v.len())
                .ok(),
            Some(2)
        );
    }
}
