//! `/query`: runs the InfluxQL statements of [`crate::influxql`] against the catalog and
//! answers InfluxDB 1.x's result body (a statement's own failure is its `error`, as InfluxDB
//! reports it, beside the others' results).

use crate::InfluxApi;
use crate::catalog::{self, ClaimError};
use crate::influxql::Statement;
use crate::policy::{self, Policy, go_duration};
use crate::reply::{ApiError, from_db, from_pool};
use sluice_formats::encode::write_json_str;
use sluice_pg::Connection;
use std::time::Duration;

/// What one statement answers: nothing, a table (InfluxDB's "series"), or its error.
enum Answer {
    Done,
    Series {
        name: Option<&'static str>,
        columns: &'static [&'static str],
        rows: Vec<Vec<Cell>>,
    },
    Error(String),
}

/// A value of a result row.
enum Cell {
    Text(String),
    Int(i64),
    Bool(bool),
}

/// Runs the statements; returns InfluxDB's result body. `db` is the request's `db` parameter
/// (the database of `SHOW RETENTION POLICIES` without `ON`).
pub async fn run(
    api: &InfluxApi,
    statements: &[Statement],
    db: Option<&str>,
) -> Result<Vec<u8>, ApiError> {
    // Refusals by the configuration come before anything runs.
    for statement in statements {
        if let Statement::CreateDatabase { name, .. } = statement {
            api.config.database_access(name)?;
        }
    }
    let mut conn = api.pool.get().await.map_err(from_pool)?;
    api.ensure_catalog(&mut conn).await.map_err(from_db)?;
    let mut body = Vec::from(&b"{\"results\":["[..]);
    for (i, statement) in statements.iter().enumerate() {
        if i > 0 {
            body.push(b',');
        }
        let answer = run_one(api, &mut conn, statement, db).await?;
        write_answer(&mut body, i, answer);
    }
    body.extend_from_slice(b"]}");
    Ok(body)
}

async fn run_one(
    api: &InfluxApi,
    conn: &mut Connection,
    statement: &Statement,
    db: Option<&str>,
) -> Result<Answer, ApiError> {
    match statement {
        Statement::CreateDatabase {
            name,
            duration,
            policy: policy_name,
        } => {
            // `WITH` makes the database's policy: its duration (forever when not given).
            let policy = (duration.is_some() || policy_name.is_some()).then(|| Policy {
                registered: true,
                name: policy_name.clone(),
                retention: Some(duration.unwrap_or(None)),
            });
            Ok(match create_database(api, conn, name, policy).await? {
                Ok(()) => Answer::Done,
                Err(refusal) => Answer::Error(refusal),
            })
        }
        Statement::CreateRetentionPolicy {
            policy: policy_name,
            database,
            duration,
            default,
        } => {
            let current = policy::read(conn, database, api.keeps_policies())
                .await
                .map_err(from_db)?;
            if let Some(error) = database_missing(api, database, &current) {
                return Ok(Answer::Error(error));
            }
            if !default && current.shown_name() != policy_name {
                return Ok(Answer::Error(format!(
                    "retention policy {policy_name:?} would be a second policy of database \
                     {database:?}: Sluice keeps one per database (its default, {:?}); add \
                     DEFAULT to make {policy_name:?} the database's policy",
                    current.shown_name()
                )));
            }
            set_policy(api, conn, database, &current, Some(policy_name), *duration).await
        }
        Statement::AlterRetentionPolicy {
            policy: policy_name,
            database,
            duration,
            default,
        } => {
            let current = policy::read(conn, database, api.keeps_policies())
                .await
                .map_err(from_db)?;
            if let Some(error) = database_missing(api, database, &current) {
                return Ok(Answer::Error(error));
            }
            if !default && current.shown_name() != policy_name {
                return Ok(Answer::Error(format!(
                    "retention policy not found: {policy_name}"
                )));
            }
            // Without DURATION the retention stays as it is.
            let retention = match duration {
                Some(duration) => *duration,
                None => api.retention_with(database, &current),
            };
            set_policy(api, conn, database, &current, Some(policy_name), retention).await
        }
        Statement::DropRetentionPolicy {
            policy: policy_name,
            database,
        } => {
            let current = policy::read(conn, database, api.keeps_policies())
                .await
                .map_err(from_db)?;
            if let Some(error) = database_missing(api, database, &current) {
                return Ok(Answer::Error(error));
            }
            if current.shown_name() != policy_name {
                return Ok(Answer::Error(format!(
                    "retention policy not found: {policy_name}"
                )));
            }
            if let Some(refusal) = may_set(api, database, &current) {
                return Ok(Answer::Error(refusal));
            }
            // The database's one policy goes back to the configuration's retention.
            let reset = Policy {
                registered: true,
                ..Policy::default()
            };
            policy::write(conn, database, &reset)
                .await
                .map_err(from_db)?;
            api.policies.put(database, reset);
            Ok(Answer::Done)
        }
        Statement::ShowRetentionPolicies { database } => {
            let Some(database) = database.as_deref().or(db) else {
                return Ok(Answer::Error("database name required".into()));
            };
            let current = policy::read(conn, database, api.keeps_policies())
                .await
                .map_err(from_db)?;
            if let Some(error) = database_missing(api, database, &current) {
                return Ok(Answer::Error(error));
            }
            let retention = api.retention_with(database, &current);
            // A retention makes day partitions: InfluxDB's shard groups.
            let shard = if retention.is_some() {
                go_duration(Some(Duration::from_secs(86_400)))
            } else {
                go_duration(None)
            };
            Ok(Answer::Series {
                name: None,
                columns: &[
                    "name",
                    "duration",
                    "shardGroupDuration",
                    "replicaN",
                    "default",
                ],
                rows: vec![vec![
                    Cell::Text(current.shown_name().to_owned()),
                    Cell::Text(go_duration(retention)),
                    Cell::Text(shard),
                    Cell::Int(1),
                    Cell::Bool(true),
                ]],
            })
        }
        Statement::ShowDatabases => {
            let mut names: Vec<String> = policy::read_all(conn, api.keeps_policies())
                .await
                .map_err(from_db)?
                .into_iter()
                .map(|(name, _)| name)
                .collect();
            names.extend(api.config.databases.iter().cloned());
            names.sort();
            names.dedup();
            Ok(Answer::Series {
                name: Some("databases"),
                columns: &["name"],
                rows: names.into_iter().map(|n| vec![Cell::Text(n)]).collect(),
            })
        }
    }
}

/// Creates database `name` as a first write does (under the schema's lock; refused when the
/// schema exists and is neither the API's nor listed), with `policy` when given. The inner
/// error is the statement's own (InfluxDB answers it beside the other results).
pub(crate) async fn create_database(
    api: &InfluxApi,
    conn: &mut Connection,
    name: &str,
    policy: Option<Policy>,
) -> Result<Result<(), String>, ApiError> {
    let access = api.config.database_access(name)?;
    let mut tx = conn.transaction().map_err(from_db)?;
    match catalog::claim_schema(&mut tx, name, access).await {
        Ok(()) => {}
        Err(ClaimError::Refused(error)) => return Err(error),
        Err(ClaimError::Db(error)) => return Err(from_db(error)),
    }
    if let Some(policy) = &policy {
        let current = policy::read(&mut tx, name, api.keeps_policies())
            .await
            .map_err(from_db)?;
        if let Some(refusal) = may_set(api, name, &current) {
            return Ok(Err(refusal));
        }
        policy::write(&mut tx, name, policy)
            .await
            .map_err(from_db)?;
    }
    tx.commit().await.map_err(from_db)?;
    if let Some(policy) = policy {
        api.policies.put(name, policy);
    }
    api.shapes.add_schema(name);
    Ok(Ok(()))
}

/// Writes `database`'s one policy: `name` and `retention`, when clients may set it.
async fn set_policy(
    api: &InfluxApi,
    conn: &mut Connection,
    database: &str,
    current: &Policy,
    name: Option<&String>,
    retention: Option<Duration>,
) -> Result<Answer, ApiError> {
    if let Some(refusal) = may_set(api, database, current) {
        return Ok(Answer::Error(refusal));
    }
    let policy = Policy {
        registered: true,
        name: name
            .filter(|n| n.as_str() != policy::DEFAULT_POLICY)
            .cloned(),
        retention: Some(retention),
    };
    if !policy::write(conn, database, &policy)
        .await
        .map_err(from_db)?
    {
        return Ok(Answer::Error(format!("database not found: {database}")));
    }
    api.policies.put(database, policy);
    Ok(Answer::Done)
}

/// InfluxDB's "database not found" when `database` is neither the API's nor listed.
fn database_missing(api: &InfluxApi, database: &str, current: &Policy) -> Option<String> {
    let listed = api.config.databases.iter().any(|d| d == database);
    (!current.registered && !listed).then(|| format!("database not found: {database}"))
}

/// Why a client may not set `database`'s retention, if it may not.
pub(crate) fn may_set(api: &InfluxApi, database: &str, current: &Policy) -> Option<String> {
    if api.config.database_retention.contains_key(database) {
        return Some(format!(
            "the retention of database {database:?} is set by Sluice's configuration ([influx] \
             database_retention); change it there"
        ));
    }
    if !current.registered {
        return Some(format!(
            "database {database:?} is a schema the write API did not create (listed in [influx] \
             databases); set its retention with [influx] database_retention"
        ));
    }
    if !api.keeps_policies() {
        return Some(format!(
            "the catalog sluice_influx.databases was made by an earlier Sluice and lacks the \
             retention columns; its owner can add them with: {}",
            catalog::CATALOG_MIGRATION.replace('\n', " ")
        ));
    }
    None
}

/// One statement's entry of the `results` array.
fn write_answer(body: &mut Vec<u8>, id: usize, answer: Answer) {
    body.extend_from_slice(format!("{{\"statement_id\":{id}").as_bytes());
    match answer {
        Answer::Done => {}
        Answer::Error(message) => {
            body.extend_from_slice(b",\"error\":");
            write_json_str(body, &message);
        }
        Answer::Series {
            name,
            columns,
            rows,
        } => {
            body.extend_from_slice(b",\"series\":[{");
            if let Some(name) = name {
                body.extend_from_slice(b"\"name\":");
                write_json_str(body, name);
                body.push(b',');
            }
            body.extend_from_slice(b"\"columns\":[");
            for (i, column) in columns.iter().enumerate() {
                if i > 0 {
                    body.push(b',');
                }
                write_json_str(body, column);
            }
            body.push(b']');
            if !rows.is_empty() {
                body.extend_from_slice(b",\"values\":[");
                for (r, row) in rows.iter().enumerate() {
                    if r > 0 {
                        body.push(b',');
                    }
                    body.push(b'[');
                    for (c, cell) in row.iter().enumerate() {
                        if c > 0 {
                            body.push(b',');
                        }
                        match cell {
                            Cell::Text(text) => write_json_str(body, text),
                            Cell::Int(n) => body.extend_from_slice(n.to_string().as_bytes()),
                            Cell::Bool(b) => {
                                body.extend_from_slice(if *b { b"true" } else { b"false" })
                            }
                        }
                    }
                    body.push(b']');
                }
                body.push(b']');
            }
            body.extend_from_slice(b"}]");
        }
    }
    body.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(answer: Answer) -> String {
        let mut body = Vec::new();
        write_answer(&mut body, 3, answer);
        String::from_utf8(body).unwrap_or_default()
    }

    #[test]
    fn answers_in_influxdb_shapes() {
        assert_eq!(written(Answer::Done), r#"{"statement_id":3}"#);
        assert_eq!(
            written(Answer::Error("database not found: x".into())),
            r#"{"statement_id":3,"error":"database not found: x"}"#
        );
        assert_eq!(
            written(Answer::Series {
                name: Some("databases"),
                columns: &["name"],
                rows: vec![]
            }),
            r#"{"statement_id":3,"series":[{"name":"databases","columns":["name"]}]}"#
        );
        assert_eq!(
            written(Answer::Series {
                name: None,
                columns: &["name", "replicaN", "default"],
                rows: vec![vec![
                    Cell::Text("autogen".into()),
                    Cell::Int(1),
                    Cell::Bool(true)
                ]]
            }),
            r#"{"statement_id":3,"series":[{"columns":["name","replicaN","default"],"values":[["autogen",1,true]]}]}"#
        );
    }
}
