//! InfluxDB 2's bucket API over the databases the write API made: `/api/v2/buckets` (list,
//! find by name, create with a retention rule, read, change the retention) and the one
//! organization `/api/v2/orgs` answers, so v2 clients can make their bucket before writing.
//!
//! A bucket is a database here (a PostgreSQL schema) and its retention rule is the database's
//! retention policy ([`crate::policy`]). Its id is the schema's oid in 16 hex digits.
//! Organizations do not exist in Sluice: every organization name answers as one.

use crate::InfluxApi;
use crate::policy::{self, Policy};
use crate::query::create_database;
use crate::reply::{ApiError, from_db, from_pool, json_response};
use http::{Method, StatusCode};
use serde_json::{Value, json};
use sluice_http::Response;
use sluice_pg::Connection;
use std::time::Duration;

/// The id of the one organization.
pub const ORG_ID: &str = "0000000000000001";

/// A bucket as the catalog has it.
struct Bucket {
    id: String,
    name: String,
    created: String,
    policy: Policy,
}

impl Bucket {
    fn json(&self, api: &InfluxApi, org_id: &str) -> Value {
        let retention = api.retention_with(&self.name, &self.policy);
        // No rule: kept forever, as InfluxDB 2 shows it.
        let rules: Vec<Value> = retention
            .map(|r| {
                json!({
                    "type": "expire",
                    "everySeconds": r.as_secs(),
                    "shardGroupDurationSeconds": 86_400,
                })
            })
            .into_iter()
            .collect();
        json!({
            "id": self.id,
            "orgID": org_id,
            "type": "user",
            "name": self.name,
            "retentionRules": rules,
            "createdAt": self.created,
            "updatedAt": self.created,
            "labels": [],
            "links": {
                "self": format!("/api/v2/buckets/{}", self.id),
                "org": format!("/api/v2/orgs/{org_id}"),
                "write": format!("/api/v2/write?bucket={}", self.name),
            },
        })
    }
}

/// Answers a request under `/api/v2/buckets` or `/api/v2/orgs`.
pub async fn answer(
    api: &InfluxApi,
    method: &Method,
    path: &str,
    query: Option<&str>,
    body: &[u8],
) -> Result<Response, ApiError> {
    let params = crate::request::QueryParams::parse(query);
    if let Some(rest) = path.strip_prefix("/api/v2/orgs") {
        let org = rest.trim_matches('/');
        if method != Method::GET || !(org.is_empty() || org == ORG_ID) {
            return Err(ApiError::NotFound);
        }
        let name = params.get("org").unwrap_or("sluice");
        let org = json!({"id": ORG_ID, "name": name});
        return Ok(json(StatusCode::OK, &json!({"orgs": [org]})));
    }
    let rest = path.strip_prefix("/api/v2/buckets").unwrap_or("");
    let id = rest.trim_matches('/');
    let org_id = params.get("orgID").unwrap_or(ORG_ID).to_owned();
    let mut conn = api.pool.get().await.map_err(from_pool)?;
    api.ensure_catalog(&mut conn).await.map_err(from_db)?;
    let kept = api.keeps_policies();
    match (method, id.is_empty()) {
        (&Method::GET, true) => {
            let name = params.get("name");
            let buckets: Vec<Value> = read(&mut conn, kept, None)
                .await?
                .into_iter()
                .filter(|b| name.is_none_or(|n| n == b.name))
                .map(|b| b.json(api, &org_id))
                .collect();
            Ok(json(
                StatusCode::OK,
                &json!({"links": {"self": "/api/v2/buckets"}, "buckets": buckets}),
            ))
        }
        (&Method::GET, false) => {
            let bucket = one(&mut conn, kept, id).await?;
            Ok(json(StatusCode::OK, &bucket.json(api, &org_id)))
        }
        (&Method::POST, true) => {
            let request = parse_body(body)?;
            let name = request
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| ApiError::Invalid("bucket name is required".into()))?;
            let org_id = request
                .get("orgID")
                .and_then(Value::as_str)
                .unwrap_or(&org_id)
                .to_owned();
            let retention = retention_rules(&request)?;
            if !read(&mut conn, kept, Some(name)).await?.is_empty() {
                return Err(ApiError::Conflict(format!(
                    "bucket with name {name} already exists"
                )));
            }
            let policy = Policy {
                registered: true,
                name: None,
                retention: Some(retention),
            };
            if let Err(refusal) = create_database(api, &mut conn, name, Some(policy)).await? {
                return Err(ApiError::Invalid(refusal));
            }
            let bucket = read(&mut conn, kept, Some(name))
                .await?
                .pop()
                .ok_or(ApiError::NotFound)?;
            Ok(json(StatusCode::CREATED, &bucket.json(api, &org_id)))
        }
        (&Method::PATCH, false) => {
            let bucket = one(&mut conn, kept, id).await?;
            let request = parse_body(body)?;
            if let Some(name) = request.get("name").and_then(Value::as_str)
                && name != bucket.name
            {
                return Err(ApiError::Invalid(format!(
                    "bucket {:?} cannot be renamed to {name:?} here: it is a PostgreSQL schema \
                     (ALTER SCHEMA ... RENAME TO in PostgreSQL renames it)",
                    bucket.name
                )));
            }
            let mut policy = bucket.policy.clone();
            if request.get("retentionRules").is_some() {
                policy.retention = Some(retention_rules(&request)?);
            }
            if let Some(refusal) = crate::query::may_set(api, &bucket.name, &bucket.policy) {
                return Err(ApiError::Invalid(refusal));
            }
            policy::write(&mut conn, &bucket.name, &policy)
                .await
                .map_err(from_db)?;
            api.policies.put(&bucket.name, policy.clone());
            let changed = Bucket { policy, ..bucket };
            Ok(json(StatusCode::OK, &changed.json(api, &org_id)))
        }
        (&Method::DELETE, false) => {
            let bucket = one(&mut conn, kept, id).await?;
            Err(ApiError::Forbidden(format!(
                "bucket {:?} is the PostgreSQL schema {:?} with its tables: Sluice does not drop \
                 it through the API (DROP SCHEMA ... CASCADE in PostgreSQL does)",
                bucket.name, bucket.name
            )))
        }
        _ => Err(ApiError::MethodNotAllowed),
    }
}

fn json(status: StatusCode, value: &Value) -> Response {
    json_response(status, value.to_string().into_bytes())
}

fn parse_body(body: &[u8]) -> Result<Value, ApiError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::Invalid(format!("the body is not JSON: {e}")))?;
    if value.is_object() {
        Ok(value)
    } else {
        Err(ApiError::Invalid("the body must be a JSON object".into()))
    }
}

/// The retention of a request's `retentionRules` (`None`: forever, as no rule or
/// `everySeconds: 0` means in InfluxDB 2); at least an hour, as InfluxDB 2 requires.
fn retention_rules(request: &Value) -> Result<Option<Duration>, ApiError> {
    let rules = match request.get("retentionRules") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(rules)) => rules,
        Some(_) => return Err(ApiError::Invalid("retentionRules must be an array".into())),
    };
    let mut retention = None;
    for rule in rules {
        let kind = rule.get("type").and_then(Value::as_str).unwrap_or("expire");
        if kind != "expire" {
            return Err(ApiError::Invalid(format!(
                "retention rule type {kind:?} is not supported (only \"expire\")"
            )));
        }
        let seconds = rule
            .get("everySeconds")
            .and_then(Value::as_u64)
            .ok_or_else(|| ApiError::Invalid("everySeconds must be a whole number".into()))?;
        if seconds > 0 && seconds < 3600 {
            return Err(ApiError::Invalid(format!(
                "expiration seconds must be greater than or equal to one hour, not {seconds}"
            )));
        }
        retention = (seconds > 0).then(|| Duration::from_secs(seconds));
    }
    Ok(retention)
}

/// The bucket with id `id`, or 404.
async fn one(conn: &mut Connection, kept: bool, id: &str) -> Result<Bucket, ApiError> {
    let oid = u32::from_str_radix(id, 16)
        .ok()
        .filter(|_| id.len() == 16)
        .ok_or_else(|| ApiError::Invalid(format!("id {id:?} must be 16 hexadecimal digits")))?;
    read_where(
        conn,
        kept,
        Some(("n.oid = $1::text::oid", &oid.to_string())),
    )
    .await?
    .pop()
    .ok_or(ApiError::NotFound)
}

/// The registered databases (one when `name` is given), in name order.
async fn read(
    conn: &mut Connection,
    kept: bool,
    name: Option<&str>,
) -> Result<Vec<Bucket>, ApiError> {
    read_where(conn, kept, name.map(|name| ("d.name = $1::text", name))).await
}

/// The registered databases meeting `filter` (a condition on `$1` and its value).
async fn read_where(
    conn: &mut Connection,
    kept: bool,
    filter: Option<(&str, &str)>,
) -> Result<Vec<Bucket>, ApiError> {
    let condition = filter.map_or("true", |(condition, _)| condition);
    let sql = format!(
        "SELECT d.name, n.oid::int8, \
         to_char(d.created AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), \
         {} FROM sluice_influx.databases d \
         JOIN pg_catalog.pg_namespace n ON n.oid = d.nspid AND n.nspname = d.name \
         WHERE {condition} ORDER BY 1",
        policy::columns(kept)
    );
    let rows = match filter {
        Some((_, value)) => conn.query(&sql, &[&value]).await,
        None => conn.query(&sql, &[]).await,
    }
    .map_err(from_db)?;
    let mut buckets = Vec::with_capacity(rows.len());
    for row in rows.iter() {
        let oid: i64 = row.get(1).map_err(from_db)?;
        let seconds: Option<i64> = row.get(3).map_err(from_db)?;
        buckets.push(Bucket {
            name: row.get(0).map_err(from_db)?,
            id: format!("{oid:016x}"),
            created: row.get(2).map_err(from_db)?,
            policy: Policy {
                registered: true,
                name: row.get(4).map_err(from_db)?,
                retention: seconds.map(policy::from_seconds),
            },
        });
    }
    Ok(buckets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retention_rules_as_influxdb_2_reads_them() {
        let rules = |v: Value| retention_rules(&json!({ "retentionRules": v }));
        assert_eq!(retention_rules(&json!({})).ok(), Some(None));
        assert_eq!(rules(json!([])).ok(), Some(None));
        assert_eq!(
            rules(json!([{"type": "expire", "everySeconds": 7200}])).ok(),
            Some(Some(Duration::from_secs(7200)))
        );
        assert_eq!(rules(json!([{"everySeconds": 0}])).ok(), Some(None));
        assert!(rules(json!([{"everySeconds": 60}])).is_err());
        assert!(rules(json!([{"type": "other", "everySeconds": 7200}])).is_err());
        assert!(rules(json!({"everySeconds": 7200})).is_err());
        assert!(rules(json!([{"everySeconds": -1}])).is_err());
    }
}
