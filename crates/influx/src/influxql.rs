//! The InfluxQL statements `/query` answers (sans-I/O): databases and retention policies, what
//! write-only clients and administration scripts send (`CREATE DATABASE`, `CREATE | ALTER |
//! DROP RETENTION POLICY`, `SHOW DATABASES`, `SHOW RETENTION POLICIES`).

use crate::config::parse_retention;
use crate::plan::MAX_IDENTIFIER_LEN;
use crate::reply::ApiError;
use std::time::Duration;

/// A statement `/query` runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Statement {
    /// `CREATE DATABASE name [WITH [DURATION d] [REPLICATION n] [SHARD DURATION d] [NAME rp]]`.
    CreateDatabase {
        /// The database.
        name: String,
        /// The `WITH` clause's duration (`Some(None)`: `INF`) and policy name.
        duration: Option<Option<Duration>>,
        /// The `WITH` clause's policy name.
        policy: Option<String>,
    },
    /// `CREATE RETENTION POLICY rp ON db DURATION d REPLICATION n [SHARD DURATION d] [DEFAULT]`.
    CreateRetentionPolicy {
        /// The policy's name.
        policy: String,
        /// The database.
        database: String,
        /// Its duration (`None`: `INF`).
        duration: Option<Duration>,
        /// Whether it becomes the database's default policy.
        default: bool,
    },
    /// `ALTER RETENTION POLICY rp ON db [DURATION d] [REPLICATION n] [SHARD DURATION d]
    /// [DEFAULT]`.
    AlterRetentionPolicy {
        /// The policy's name.
        policy: String,
        /// The database.
        database: String,
        /// The new duration, when given (`Some(None)`: `INF`).
        duration: Option<Option<Duration>>,
        /// Whether it becomes the database's default policy.
        default: bool,
    },
    /// `DROP RETENTION POLICY rp ON db`.
    DropRetentionPolicy {
        /// The policy's name.
        policy: String,
        /// The database.
        database: String,
    },
    /// `SHOW RETENTION POLICIES [ON db]` (without `ON`, the request's `db` parameter).
    ShowRetentionPolicies {
        /// The database named by `ON`.
        database: Option<String>,
    },
    /// `SHOW DATABASES`.
    ShowDatabases,
}

/// Parses `q`: one or more `;`-separated statements.
pub fn parse(q: &str) -> Result<Vec<Statement>, ApiError> {
    let mut statements = Vec::new();
    for text in split_statements(q) {
        let text = text.trim();
        if !text.is_empty() {
            statements.push(parse_one(text)?);
        }
    }
    if statements.is_empty() {
        return Err(ApiError::Invalid("missing required parameter \"q\"".into()));
    }
    Ok(statements)
}

/// Splits at the `;`s outside quoted identifiers.
fn split_statements(q: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (i, c) in q.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ';' if !quoted => {
                parts.push(&q[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&q[start..]);
    parts
}

fn parse_one(text: &str) -> Result<Statement, ApiError> {
    let mut cursor = Cursor { text, rest: text };
    let statement = if cursor.keyword("CREATE") {
        if cursor.keyword("DATABASE") {
            create_database(&mut cursor)?
        } else if cursor.keywords(&["RETENTION", "POLICY"]) {
            create_policy(&mut cursor)?
        } else {
            return Err(cursor.unsupported());
        }
    } else if cursor.keywords(&["ALTER", "RETENTION", "POLICY"]) {
        alter_policy(&mut cursor)?
    } else if cursor.keywords(&["DROP", "RETENTION", "POLICY"]) {
        let policy = cursor.name("a retention policy name")?;
        cursor.expect("ON")?;
        let database = cursor.name("a database name")?;
        Statement::DropRetentionPolicy { policy, database }
    } else if cursor.keyword("SHOW") {
        if cursor.keyword("DATABASES") {
            Statement::ShowDatabases
        } else if cursor.keywords(&["RETENTION", "POLICIES"]) {
            let database = if cursor.keyword("ON") {
                Some(cursor.name("a database name")?)
            } else {
                None
            };
            Statement::ShowRetentionPolicies { database }
        } else {
            return Err(cursor.unsupported());
        }
    } else {
        return Err(cursor.unsupported());
    };
    cursor.end()?;
    Ok(statement)
}

fn create_database(cursor: &mut Cursor<'_>) -> Result<Statement, ApiError> {
    let name = cursor.name("a database name")?;
    let (mut duration, mut policy) = (None, None);
    if cursor.keyword("WITH") {
        let mut any = false;
        loop {
            if cursor.keyword("DURATION") {
                duration = Some(cursor.duration()?);
            } else if cursor.keyword("REPLICATION") {
                cursor.replication()?;
            } else if cursor.keywords(&["SHARD", "DURATION"]) {
                cursor.shard_duration()?;
            } else if cursor.keyword("NAME") {
                policy = Some(cursor.name("a retention policy name")?);
            } else {
                break;
            }
            any = true;
        }
        if !any {
            return Err(cursor.expected("DURATION, REPLICATION, SHARD DURATION or NAME"));
        }
    }
    Ok(Statement::CreateDatabase {
        name,
        duration,
        policy,
    })
}

fn create_policy(cursor: &mut Cursor<'_>) -> Result<Statement, ApiError> {
    let policy = cursor.name("a retention policy name")?;
    cursor.expect("ON")?;
    let database = cursor.name("a database name")?;
    cursor.expect("DURATION")?;
    let duration = cursor.duration()?;
    cursor.expect("REPLICATION")?;
    cursor.replication()?;
    if cursor.keywords(&["SHARD", "DURATION"]) {
        cursor.shard_duration()?;
    }
    let default = cursor.keyword("DEFAULT");
    Ok(Statement::CreateRetentionPolicy {
        policy,
        database,
        duration,
        default,
    })
}

fn alter_policy(cursor: &mut Cursor<'_>) -> Result<Statement, ApiError> {
    let policy = cursor.name("a retention policy name")?;
    cursor.expect("ON")?;
    let database = cursor.name("a database name")?;
    let (mut duration, mut default, mut any) = (None, false, false);
    loop {
        if cursor.keyword("DURATION") {
            duration = Some(cursor.duration()?);
        } else if cursor.keyword("REPLICATION") {
            cursor.replication()?;
        } else if cursor.keywords(&["SHARD", "DURATION"]) {
            cursor.shard_duration()?;
        } else if cursor.keyword("DEFAULT") {
            default = true;
        } else {
            break;
        }
        any = true;
    }
    if !any {
        return Err(cursor.expected("DURATION, REPLICATION, SHARD DURATION or DEFAULT"));
    }
    Ok(Statement::AlterRetentionPolicy {
        policy,
        database,
        duration,
        default,
    })
}

/// The unread part of one statement.
struct Cursor<'a> {
    text: &'a str,
    rest: &'a str,
}

impl<'a> Cursor<'a> {
    fn skip_space(&mut self) {
        self.rest = self.rest.trim_start();
    }

    /// Takes `word` (any case) when it comes next as a whole word.
    fn keyword(&mut self, word: &str) -> bool {
        self.skip_space();
        let Some(head) = self.rest.get(..word.len()) else {
            return false;
        };
        let boundary = self.rest[word.len()..]
            .chars()
            .next()
            .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'));
        if head.eq_ignore_ascii_case(word) && boundary {
            self.rest = &self.rest[word.len()..];
            true
        } else {
            false
        }
    }

    /// Takes `words` when they all come next, else nothing.
    fn keywords(&mut self, words: &[&str]) -> bool {
        let saved = self.rest;
        if words.iter().all(|word| self.keyword(word)) {
            true
        } else {
            self.rest = saved;
            false
        }
    }

    fn expect(&mut self, word: &str) -> Result<(), ApiError> {
        if self.keyword(word) {
            Ok(())
        } else {
            Err(self.expected(word))
        }
    }

    /// An identifier: `"quoted"` (with `\"` and `\\` escapes) or bare
    /// (`[A-Za-z_][A-Za-z0-9_]*`), 1 to 63 bytes.
    fn name(&mut self, what: &str) -> Result<String, ApiError> {
        self.skip_space();
        let (name, rest) = identifier(self.rest).ok_or_else(|| self.expected(what))?;
        if name.is_empty() || name.len() > MAX_IDENTIFIER_LEN {
            return Err(ApiError::Invalid(format!(
                "error parsing query: {what} must be 1 to {MAX_IDENTIFIER_LEN} bytes, not {name:?}"
            )));
        }
        self.rest = rest;
        Ok(name)
    }

    /// The next run of characters up to a space.
    fn word(&mut self) -> &'a str {
        self.skip_space();
        let end = self
            .rest
            .find(char::is_whitespace)
            .unwrap_or(self.rest.len());
        let (word, rest) = self.rest.split_at(end);
        self.rest = rest;
        word
    }

    /// A retention duration: `INF` or at least an hour (`None`: forever).
    fn duration(&mut self) -> Result<Option<Duration>, ApiError> {
        let word = self.word();
        if word.is_empty() {
            return Err(self.expected("a duration"));
        }
        parse_retention(word)
            .map_err(|reason| ApiError::Invalid(format!("error parsing query: {reason}")))
    }

    /// `SHARD DURATION d`: a shard group is a day's partition here, whatever is asked.
    fn shard_duration(&mut self) -> Result<(), ApiError> {
        let word = self.word();
        let shortest_unit = ["ns", "u", "µ", "ms", "s", "m", "h", "d", "w"];
        let valid = word.eq_ignore_ascii_case("inf")
            || shortest_unit.iter().any(|unit| {
                word.strip_suffix(unit)
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            });
        if valid {
            Ok(())
        } else {
            Err(self.expected("a shard duration"))
        }
    }

    /// `REPLICATION n`: one copy here, as a single InfluxDB node keeps.
    fn replication(&mut self) -> Result<(), ApiError> {
        let word = self.word();
        match word.parse::<u32>() {
            Ok(n) if n >= 1 => Ok(()),
            _ => Err(self.expected("a replication factor of 1 or more")),
        }
    }

    fn end(&mut self) -> Result<(), ApiError> {
        self.skip_space();
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(ApiError::Invalid(format!(
                "error parsing query: unexpected {:?} in {:?}",
                self.rest, self.text
            )))
        }
    }

    fn expected(&self, what: &str) -> ApiError {
        let found = self.rest.split_whitespace().next().unwrap_or("the end");
        ApiError::Invalid(format!(
            "error parsing query: found {found:?}, expected {what} at char {} of {:?}",
            self.text.len() - self.rest.len() + 1,
            self.text
        ))
    }

    fn unsupported(&self) -> ApiError {
        ApiError::Invalid(format!(
            "error parsing query: {:?} is not a statement this server answers (it writes \
             line protocol into PostgreSQL: CREATE DATABASE, CREATE, ALTER and DROP RETENTION \
             POLICY, SHOW DATABASES and SHOW RETENTION POLICIES; query the tables with SQL)",
            self.text
        ))
    }
}

/// An InfluxQL identifier and what follows it.
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

#[cfg(test)]
mod tests {
    use super::*;

    fn one(q: &str) -> Statement {
        match parse(q) {
            Ok(mut statements) if statements.len() == 1 => statements.remove(0),
            other => panic!("{q}: {other:?}"),
        }
    }

    fn hours(n: u64) -> Option<Duration> {
        Some(Duration::from_secs(n * 3600))
    }

    #[test]
    fn databases() {
        assert_eq!(
            one("CREATE DATABASE telegraf"),
            Statement::CreateDatabase {
                name: "telegraf".into(),
                duration: None,
                policy: None
            }
        );
        assert_eq!(
            one("create database \"my \\\"db\\\"\" WITH DURATION 1d REPLICATION 1 NAME \"day\""),
            Statement::CreateDatabase {
                name: "my \"db\"".into(),
                duration: Some(hours(24)),
                policy: Some("day".into())
            }
        );
        assert_eq!(
            one("CREATE DATABASE d WITH DURATION INF SHARD DURATION 7d"),
            Statement::CreateDatabase {
                name: "d".into(),
                duration: Some(None),
                policy: None
            }
        );
        assert_eq!(one("show databases"), Statement::ShowDatabases);
        for bad in [
            "CREATE DATABASE a b",
            "CREATE DATABASE 1a",
            "CREATE DATABASE",
            "CREATE DATABASE a WITH",
            "CREATE DATABASE a WITH DURATION 5m",
            "CREATE DATABASE a WITH DURATION",
            "SHOW MEASUREMENTS",
            "SELECT * FROM cpu",
            "",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse("CREATE DATABASE a; CREATE DATABASE \"b;c\"")
                .map(|v| v.len())
                .ok(),
            Some(2)
        );
    }

    #[test]
    fn retention_policies() {
        assert_eq!(
            one(
                "CREATE RETENTION POLICY \"one_week\" ON \"db\" DURATION 1w REPLICATION 1 \
                 SHARD DURATION 0s DEFAULT"
            ),
            Statement::CreateRetentionPolicy {
                policy: "one_week".into(),
                database: "db".into(),
                duration: hours(168),
                default: true
            }
        );
        assert_eq!(
            one("CREATE RETENTION POLICY forever ON db DURATION INF REPLICATION 1"),
            Statement::CreateRetentionPolicy {
                policy: "forever".into(),
                database: "db".into(),
                duration: None,
                default: false
            }
        );
        assert_eq!(
            one("ALTER RETENTION POLICY autogen ON db DURATION 36h DEFAULT"),
            Statement::AlterRetentionPolicy {
                policy: "autogen".into(),
                database: "db".into(),
                duration: Some(hours(36)),
                default: true
            }
        );
        assert_eq!(
            one("ALTER RETENTION POLICY autogen ON db REPLICATION 1"),
            Statement::AlterRetentionPolicy {
                policy: "autogen".into(),
                database: "db".into(),
                duration: None,
                default: false
            }
        );
        assert_eq!(
            one("DROP RETENTION POLICY rp ON db"),
            Statement::DropRetentionPolicy {
                policy: "rp".into(),
                database: "db".into()
            }
        );
        assert_eq!(
            one("SHOW RETENTION POLICIES ON \"db\""),
            Statement::ShowRetentionPolicies {
                database: Some("db".into())
            }
        );
        assert_eq!(
            one("SHOW RETENTION POLICIES"),
            Statement::ShowRetentionPolicies { database: None }
        );
        for bad in [
            "CREATE RETENTION POLICY rp ON db DURATION 1d",
            "CREATE RETENTION POLICY rp ON db DURATION 30m REPLICATION 1",
            "CREATE RETENTION POLICY rp db DURATION 1d REPLICATION 1",
            "CREATE RETENTION POLICY rp ON db DURATION 1d REPLICATION 0",
            "ALTER RETENTION POLICY rp ON db",
            "ALTER RETENTION POLICY rp ON db DURATION 1d SHARD DURATION x",
            "DROP RETENTION POLICY rp",
            "SHOW RETENTION POLICIES ON",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn errors_say_where() {
        let Err(error) = parse("CREATE RETENTION POLICY rp ON db DURATION 1d REPLICATE 1") else {
            panic!("accepted");
        };
        let text = error.to_string();
        assert!(text.contains("expected REPLICATION"), "{text}");
        assert!(text.contains("found \"REPLICATE\""), "{text}");
    }
}

#[cfg(test)]
mod props {
    use super::*;
    use proptest::prelude::*;

    /// A name as clients write it: bare when it can be, else quoted with escapes.
    fn written(name: &str) -> String {
        let bare = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if bare {
            name.to_owned()
        } else {
            format!("\"{}\"", name.replace('\\', "\\\\").replace('"', "\\\""))
        }
    }

    /// A keyword in a random case.
    fn cased(word: &str, upper: bool) -> String {
        if upper {
            word.to_ascii_uppercase()
        } else {
            word.to_ascii_lowercase()
        }
    }

    fn name() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z_][a-z0-9_]{0,20}",
            "[ -~]{1,20}",
            "[a-zé;\"\\\\ ]{1,12}",
        ]
    }

    fn duration() -> impl Strategy<Value = (String, Option<Duration>)> {
        prop_oneof![
            Just(("INF".to_owned(), None)),
            (1u64..1000).prop_map(|h| (format!("{h}h"), Some(Duration::from_secs(h * 3600)))),
            (1u64..100).prop_map(|d| (format!("{d}d"), Some(Duration::from_secs(d * 86_400)))),
            (1u64..50).prop_map(|w| (format!("{w}w"), Some(Duration::from_secs(w * 604_800)))),
        ]
    }

    proptest! {
        #[test]
        fn any_text_parses_or_fails_cleanly(text in "\\PC{0,80}") {
            let _ = parse(&text);
        }

        #[test]
        fn statements_as_clients_write_them_parse_back(
            database in name(),
            policy in name(),
            (written_duration, duration) in duration(),
            default in any::<bool>(),
            upper in any::<bool>(),
            spaces in "[ \t\n]{1,3}",
        ) {
            let k = |word: &str| cased(word, upper);
            let s = &spaces;
            let create = format!(
                "{}{s}{}{s}{}{s}{}{s}{}{s}{}{s}{}{s}{written_duration}{s}{}{s}1{}",
                k("create"), k("retention"), k("policy"), written(&policy), k("on"),
                written(&database), k("duration"), k("replication"),
                if default { format!("{s}{}", k("default")) } else { String::new() },
            );
            prop_assert_eq!(
                parse(&create).ok(),
                Some(vec![Statement::CreateRetentionPolicy {
                    policy: policy.clone(),
                    database: database.clone(),
                    duration,
                    default,
                }])
            );
            let two = format!(
                "{} {} {} {} {} {written_duration}; {} {} {} {} {}",
                k("create"), k("database"), written(&database), k("with"), k("duration"),
                k("show"), k("retention"), k("policies"), k("on"), written(&database),
            );
            prop_assert_eq!(
                parse(&two).ok(),
                Some(vec![
                    Statement::CreateDatabase {
                        name: database.clone(),
                        duration: Some(duration),
                        policy: None,
                    },
                    Statement::ShowRetentionPolicies { database: Some(database.clone()) },
                ])
            );
        }
    }
}
