//! Each database's retention policy as clients set it (InfluxQL's `CREATE DATABASE ... WITH
//! DURATION`, `CREATE | ALTER RETENTION POLICY`, a v2 bucket's retention rules), kept in the
//! catalog beside the database, and the per-process cache of it.
//!
//! A database has one policy here, as InfluxDB 2 buckets have one retention: its duration is
//! the database's retention, and the configuration's `database_retention` entry for a database
//! overrides it. A cached policy is read again after [`POLICY_TTL`], so a change made through
//! another gateway reaches this one within that time.

use crate::InfluxApi;
use foldhash::HashMap;
use parking_lot::RwLock;
use sluice_pg::Connection;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The name of a database's policy until a client names it (InfluxDB 1.x's default policy).
pub const DEFAULT_POLICY: &str = "autogen";

/// How long a cached policy is trusted before it is read again.
pub const POLICY_TTL: Duration = Duration::from_secs(60);

/// A database's policy as its catalog row has it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    /// Whether the database is registered in the catalog (made by the write API): only then
    /// may clients set its retention.
    pub registered: bool,
    /// The policy's name, when a client gave one.
    pub name: Option<String>,
    /// The retention a client set: `None` when none did (the configuration's applies),
    /// `Some(None)` to keep points forever.
    pub retention: Option<Option<Duration>>,
}

impl Policy {
    /// The name shown for the policy.
    pub fn shown_name(&self) -> &str {
        self.name.as_deref().unwrap_or(DEFAULT_POLICY)
    }
}

/// The policies read so far, each with the moment it was read.
#[derive(Debug, Default)]
pub struct PolicyCache {
    entries: RwLock<HashMap<String, (Policy, Instant)>>,
}

impl PolicyCache {
    /// The retention a client set for `database` (see [`Policy::retention`]), when its policy
    /// was read less than [`POLICY_TTL`] ago. Asked on every write: no clone of the policy.
    pub fn fresh_retention(&self, database: &str) -> Option<Option<Option<Duration>>> {
        let entries = self.entries.read();
        let (policy, read) = entries.get(database)?;
        (read.elapsed() < POLICY_TTL).then_some(policy.retention)
    }

    /// Records the policy of `database` as just read or written.
    pub fn put(&self, database: &str, policy: Policy) {
        self.entries
            .write()
            .insert(database.to_owned(), (policy, Instant::now()));
    }
}

/// The catalog's policy columns (`kept`), or NULLs in their place for a catalog of an
/// earlier Sluice that lacks them.
pub fn columns(kept: bool) -> &'static str {
    if kept {
        "d.retention_seconds, d.retention_policy"
    } else {
        "NULL::int8, NULL::text"
    }
}

/// Reads the policy of `database` from the catalog (registered only when its schema is the
/// one the API made); `kept`: whether the catalog has the policy columns.
pub async fn read(conn: &mut Connection, database: &str, kept: bool) -> sluice_pg::Result<Policy> {
    let sql = format!(
        "SELECT {} FROM sluice_influx.databases d \
         JOIN pg_catalog.pg_namespace n ON n.oid = d.nspid AND n.nspname = d.name \
         WHERE d.name = $1::text",
        columns(kept)
    );
    let rows = conn.query(&sql, &[&database]).await?;
    let Some(row) = rows.iter().next() else {
        return Ok(Policy::default());
    };
    let seconds: Option<i64> = row.get(0)?;
    let name: Option<String> = row.get(1)?;
    Ok(Policy {
        registered: true,
        name,
        retention: seconds.map(from_seconds),
    })
}

/// Sets the policy of `database` (which must be registered; false when it is not): `name`
/// (`None`: the default name) and `retention` (`None`: the configuration's).
pub async fn write(
    conn: &mut Connection,
    database: &str,
    policy: &Policy,
) -> sluice_pg::Result<bool> {
    let seconds: Option<i64> = policy.retention.map(to_seconds);
    let name = policy.name.as_deref();
    let written = conn
        .execute(
            "UPDATE sluice_influx.databases d SET retention_seconds = $2::int8, \
             retention_policy = $3::text FROM pg_catalog.pg_namespace n \
             WHERE d.name = $1::text AND n.oid = d.nspid AND n.nspname = d.name",
            &[&database, &seconds, &name],
        )
        .await?;
    Ok(written > 0)
}

/// The databases the catalog has registered (their schemas the API's), in name order, with
/// their policies.
pub async fn read_all(
    conn: &mut Connection,
    kept: bool,
) -> sluice_pg::Result<Vec<(String, Policy)>> {
    let sql = format!(
        "SELECT d.name, {} FROM sluice_influx.databases d \
         JOIN pg_catalog.pg_namespace n ON n.oid = d.nspid AND n.nspname = d.name \
         ORDER BY 1",
        columns(kept)
    );
    let rows = conn.query(&sql, &[]).await?;
    let mut all = Vec::with_capacity(rows.len());
    for row in rows.iter() {
        let name: String = row.get(0)?;
        let seconds: Option<i64> = row.get(1)?;
        let policy_name: Option<String> = row.get(2)?;
        all.push((
            name,
            Policy {
                registered: true,
                name: policy_name,
                retention: seconds.map(from_seconds),
            },
        ));
    }
    Ok(all)
}

/// A retention as InfluxDB prints durations: `720h0m0s`, and `0s` for forever.
pub fn go_duration(retention: Option<Duration>) -> String {
    let secs = retention.map_or(0, |r| r.as_secs());
    if secs == 0 {
        return "0s".to_owned();
    }
    format!("{}h{}m{}s", secs / 3600, secs / 60 % 60, secs % 60)
}

/// A stored retention: 0 keeps forever, as InfluxDB's `0s` / `INF`.
pub(crate) fn from_seconds(seconds: i64) -> Option<Duration> {
    u64::try_from(seconds)
        .ok()
        .filter(|&s| s > 0)
        .map(Duration::from_secs)
}

/// The stored form of a retention (`None`, forever, is 0).
fn to_seconds(retention: Option<Duration>) -> i64 {
    retention.map_or(0, |r| i64::try_from(r.as_secs()).unwrap_or(i64::MAX))
}

impl InfluxApi {
    /// The retention of `database`: the configuration's `database_retention` entry for it,
    /// else what a client set (cached, read from the catalog again when the cache is older
    /// than [`POLICY_TTL`]), else the configuration's `retention`.
    pub(crate) async fn retention_of(
        &self,
        conn: &mut Connection,
        database: &str,
    ) -> sluice_pg::Result<Option<Duration>> {
        if let Some(configured) = self.config.database_retention.get(database) {
            return Ok(*configured);
        }
        let client = match self.policies.fresh_retention(database) {
            Some(retention) => retention,
            None => {
                let policy = read(conn, database, self.keeps_policies()).await?;
                let retention = policy.retention;
                self.policies.put(database, policy);
                retention
            }
        };
        Ok(client.unwrap_or(self.config.retention))
    }

    /// The retention a policy gives `database` (as [`InfluxApi::retention_of`], without I/O).
    pub(crate) fn retention_with(&self, database: &str, policy: &Policy) -> Option<Duration> {
        match self.config.database_retention.get(database) {
            Some(configured) => *configured,
            None => policy.retention.unwrap_or(self.config.retention),
        }
    }

    /// Whether clients may set retention here: the catalog keeps it.
    pub(crate) fn keeps_policies(&self) -> bool {
        self.policies_kept.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_retention_round_trips() {
        for retention in [None, Some(Duration::from_secs(3600))] {
            assert_eq!(from_seconds(to_seconds(retention)), retention);
        }
        assert_eq!(from_seconds(-5), None);
        assert_eq!(go_duration(None), "0s");
        assert_eq!(
            go_duration(Some(Duration::from_secs(30 * 86_400))),
            "720h0m0s"
        );
        assert_eq!(go_duration(Some(Duration::from_secs(5400))), "1h30m0s");
    }

    #[test]
    fn cached_policies_are_fresh_for_a_while() {
        let cache = PolicyCache::default();
        assert_eq!(cache.fresh_retention("db"), None);
        let policy = Policy {
            registered: true,
            name: Some("week".into()),
            retention: Some(Some(Duration::from_secs(7 * 86_400))),
        };
        cache.put("db", policy.clone());
        assert_eq!(cache.fresh_retention("db"), Some(policy.retention));
        assert_eq!(Policy::default().shown_name(), DEFAULT_POLICY);
    }
}
