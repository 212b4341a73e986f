//! Retention: measurement tables of a database with a retention are range partitioned by day
//! of `time`; partitions are made ahead of the data, dropped whole once older than the
//! retention, and points already older are not written.

use crate::ddl::qualified;
use crate::{InfluxApi, reply};
use sluice_pg::Connection;
use std::collections::BTreeSet;
use std::fmt::Write;
use std::time::Duration;

/// Nanoseconds in a day: partitions span whole UTC days.
pub const DAY_NS: i64 = 86_400_000_000_000;

/// The most partitions one write may add; points spread wider are refused.
pub const MAX_NEW_PARTITIONS: usize = 400;

/// The day (since the Unix epoch, UTC) of a time in nanoseconds.
pub fn day_of(time_ns: i64) -> i64 {
    time_ns.div_euclid(DAY_NS)
}

/// `YYYY-MM-DD` of a day since the Unix epoch (Howard Hinnant's days-to-civil).
pub fn date_text(day: i64) -> String {
    let z = day + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The partition of `table` for `day`: `<table>_pYYYYMMDD`, with a long table name cut and a
/// hash of it added, so the name fits 63 bytes and stays the table's own.
pub fn partition_name(schema: &str, table: &str, day: i64) -> String {
    let date: String = date_text(day).chars().filter(|c| *c != '-').collect();
    if table.len() + 10 <= 63 {
        return format!("{table}_p{date}");
    }
    let mut cut = 40;
    while !table.is_char_boundary(cut) {
        cut -= 1;
    }
    let hash = crate::ddl::lock_key(schema, table) as u64;
    format!("{}_{:08x}_p{date}", &table[..cut], hash >> 32)
}

/// Creates the daily partitions of `schema.table` for `days`, in one round trip.
pub async fn create_partitions(
    conn: &mut Connection,
    schema: &str,
    table: &str,
    days: &[i64],
) -> sluice_pg::Result<()> {
    if days.is_empty() {
        return Ok(());
    }
    let parent = qualified(schema, table);
    let mut sql = String::new();
    for &day in days {
        sql.push_str("CREATE TABLE IF NOT EXISTS ");
        sql.push_str(&qualified(schema, &partition_name(schema, table, day)));
        let _ = write!(
            sql,
            " PARTITION OF {parent} FOR VALUES FROM ('{} 00:00:00+00') TO ('{} 00:00:00+00'); ",
            date_text(day),
            date_text(day + 1)
        );
    }
    conn.batch_execute(&sql).await
}

/// The days of the partitions `schema.table` has (from each partition's lower bound).
pub async fn read_partitions(
    conn: &mut Connection,
    schema: &str,
    table: &str,
) -> sluice_pg::Result<BTreeSet<i64>> {
    let rows = conn
        .query(
            "SELECT floor(extract(epoch FROM (regexp_match(pg_catalog.pg_get_expr(c.relpartbound, c.oid), \
                    'FROM \\(''([^'']+)''\\)'))[1]::timestamptz) / 86400)::int8 \
             FROM pg_catalog.pg_inherits i \
             JOIN pg_catalog.pg_class c ON c.oid = i.inhrelid \
             JOIN pg_catalog.pg_class p ON p.oid = i.inhparent \
             JOIN pg_catalog.pg_namespace n ON n.oid = p.relnamespace \
             WHERE n.nspname = $1::text AND p.relname = $2::text",
            &[&schema, &table],
        )
        .await?;
    let mut days = BTreeSet::new();
    for row in rows.iter() {
        let day: Option<i64> = row.get(0)?;
        days.extend(day);
    }
    Ok(days)
}

/// What one pass of [`InfluxApi::enforce_retention`] did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RetentionPass {
    /// Partitions dropped (`schema.partition`), being wholly older than their retention.
    pub dropped: Vec<String>,
    /// Partitions made ahead of the data (today's and tomorrow's where missing).
    pub created: usize,
}

impl InfluxApi {
    /// One pass of retention over every partitioned measurement table the API made: drops the
    /// partitions wholly older than their database's retention (a whole table at a time, not
    /// row by row), and makes today's and tomorrow's partitions where missing, so writes at
    /// midnight find theirs. Tables made without partitions are left as they are.
    pub async fn enforce_retention(&self) -> Result<RetentionPass, reply::ApiError> {
        let mut pass = RetentionPass::default();
        let mut conn = self.pool.get().await.map_err(reply::from_pool)?;
        // Nothing written yet: nothing to prune, and no catalog to make for it.
        let state = crate::catalog::state(&mut conn)
            .await
            .map_err(reply::from_db)?;
        if state == crate::catalog::CatalogState::Missing {
            return Ok(pass);
        }
        self.ensure_catalog(&mut conn)
            .await
            .map_err(reply::from_db)?;
        let rows = conn
            .query(
                "SELECT m.database, m.name FROM sluice_influx.measurements m \
                 JOIN pg_catalog.pg_class c ON c.oid = m.relid AND c.relkind = 'p' \
                 ORDER BY 1, 2",
                &[],
            )
            .await
            .map_err(reply::from_db)?;
        let mut tables = Vec::new();
        for row in rows.iter() {
            let schema: String = row.get(0).map_err(reply::from_db)?;
            let table: String = row.get(1).map_err(reply::from_db)?;
            tables.push((schema, table));
        }
        // Every database's policy, read once per pass (and the cache refreshed with it).
        let mut policies = foldhash::HashMap::default();
        for (database, policy) in crate::policy::read_all(&mut conn, self.keeps_policies())
            .await
            .map_err(reply::from_db)?
        {
            self.policies.put(&database, policy.clone());
            policies.insert(database, policy);
        }
        let today = day_of(now_ns());
        for (schema, table) in tables {
            let policy = policies.get(&schema).cloned().unwrap_or_default();
            let Some(retention) = self.retention_with(&schema, &policy) else {
                continue;
            };
            let mut tx = conn.transaction().map_err(reply::from_db)?;
            crate::ddl::lock(&mut tx, crate::ddl::lock_key(&schema, &table))
                .await
                .map_err(reply::from_db)?;
            let days = read_partitions(&mut tx, &schema, &table)
                .await
                .map_err(reply::from_db)?;
            let oldest_kept = day_of(now_ns() - retention_ns(retention));
            let mut sql = String::new();
            // A partition holds [day, day + 1): wholly older than the cutoff when its day is
            // before the cutoff's.
            for &day in days.iter().filter(|&&d| d < oldest_kept) {
                let name = partition_name(&schema, &table, day);
                sql.push_str("DROP TABLE IF EXISTS ");
                sql.push_str(&qualified(&schema, &name));
                sql.push_str("; ");
                pass.dropped.push(format!("{schema}.{name}"));
            }
            if !sql.is_empty() {
                tx.batch_execute(&sql).await.map_err(reply::from_db)?;
            }
            let ahead: Vec<i64> = [today, today + 1]
                .into_iter()
                .filter(|d| !days.contains(d))
                .collect();
            create_partitions(&mut tx, &schema, &table, &ahead)
                .await
                .map_err(reply::from_db)?;
            pass.created += ahead.len();
            tx.commit().await.map_err(reply::from_db)?;
            self.shapes.forget_schema(&schema);
        }
        Ok(pass)
    }

    /// Runs [`InfluxApi::enforce_retention`] now and then every `every`, logging what it does,
    /// until the task is aborted or the runtime ends.
    pub fn spawn_retention(
        self: &std::sync::Arc<Self>,
        every: Duration,
    ) -> tokio::task::JoinHandle<()> {
        let api = self.clone();
        tokio::spawn(async move {
            loop {
                match api.enforce_retention().await {
                    Ok(pass) => {
                        for partition in &pass.dropped {
                            tracing::info!(%partition, "retention: dropped a partition");
                        }
                    }
                    Err(error) => {
                        let cause = error.cause().unwrap_or_default();
                        tracing::warn!(%error, cause, "retention pass failed");
                    }
                }
                tokio::time::sleep(every).await;
            }
        })
    }
}

/// The current time in nanoseconds since the Unix epoch.
pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// A retention in nanoseconds.
pub fn retention_ns(retention: Duration) -> i64 {
    i64::try_from(retention.as_nanos()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_and_dates() {
        assert_eq!(date_text(0), "1970-01-01");
        assert_eq!(date_text(day_of(1_700_000_000_000_000_000)), "2023-11-14");
        assert_eq!(date_text(-1), "1969-12-31");
        assert_eq!(day_of(-1), -1);
        assert_eq!(date_text(11_016), "2000-02-29");
    }

    #[test]
    fn partition_names_fit_and_stay_apart() {
        assert_eq!(partition_name("db", "cpu", 19_675), "cpu_p20231114");
        let long_a = "a".repeat(60);
        let long_b = format!("{}b", "a".repeat(59));
        let a = partition_name("db", &long_a, 0);
        let b = partition_name("db", &long_b, 0);
        assert!(a.len() <= 63 && b.len() <= 63);
        assert_ne!(a, b);
    }
}
