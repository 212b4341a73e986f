//! The write API's options and the rule that maps a database (v1 `db`, v2 `bucket`) to a schema.

use crate::catalog::CATALOG_SCHEMA;
use crate::plan::MAX_IDENTIFIER_LEN;
use crate::reply::ApiError;
use std::collections::BTreeMap;
use std::time::Duration;

/// InfluxDB 3 Core's limit on the columns of one table, `time` included.
pub const DEFAULT_MAX_COLUMNS_PER_TABLE: usize = 500;

/// PostgreSQL's own limit on the columns of a table.
pub const POSTGRES_MAX_COLUMNS: usize = 1600;

/// Options of the write API.
#[derive(Debug, Clone)]
pub struct InfluxConfig {
    /// Store all tags of a point in one `jsonb` column named `tags` instead of one `text`
    /// column per tag (for measurements with many or ever-changing tag keys).
    pub tags_as_jsonb: bool,
    /// Accepted tokens. Empty: no authentication. Otherwise every request except `/ping` and
    /// `/health` must present one, as `Authorization: Token <t>` (or `Bearer`), as the
    /// password of Basic auth, or as v1's `p` query parameter; 401 without.
    pub tokens: Vec<String>,
    /// Keys a bearer JWT is verified with: a valid token (`Authorization: Bearer <jwt>`) is
    /// accepted in place of one of `tokens`, and with keys set every request except `/ping` and
    /// `/health` must present one or the other.
    pub jwt: Option<std::sync::Arc<sluice_http::jwt::JwtConfig>>,
    /// The databases (schemas) clients may write into. Empty: any name but PostgreSQL's
    /// (`public`, `information_schema`, `pg_*`), into schemas the API creates for it. A name
    /// listed here may also be a schema that exists already (`public` included); either way
    /// the API writes only into tables it created.
    pub databases: Vec<String>,
    /// The most columns (`time` included) a measurement's table may reach through writes; a
    /// point that would add columns beyond it is rejected with a message pointing to
    /// `tags_as_jsonb`. InfluxDB 3 Core's default, 500; PostgreSQL's ceiling is 1,600.
    pub max_columns_per_table: usize,
    /// Write the valid points of a body with bad lines and answer InfluxDB's `partial write`
    /// error naming the rejected ones (as InfluxDB does). Off: a body is written whole or not
    /// at all. A request's `accept_partial=false|true` query parameter (InfluxDB 3's) overrides.
    pub accept_partial: bool,
    /// What a point written again (same measurement, tag set and time) does: `Merge` (the
    /// default, as InfluxDB) updates the stored row, its fields merged, the new non-null values
    /// winning; `Keep` appends another row.
    pub duplicates: Duplicates,
    /// How long points are kept (InfluxDB's retention policy duration, a v2 bucket's retention
    /// period): `None` keeps them forever. With a retention, a measurement's table is created
    /// as PostgreSQL range partitions by day of `time`, made ahead of the data; partitions
    /// wholly older than the retention are dropped by [`crate::InfluxApi::enforce_retention`],
    /// and points already older are rejected (InfluxDB's "points beyond retention policy").
    pub retention: Option<Duration>,
    /// Retention of given databases, overriding [`InfluxConfig::retention`] (`None`: forever).
    pub database_retention: BTreeMap<String, Option<Duration>>,
}

/// What a point written again does (see [`InfluxConfig::duplicates`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Duplicates {
    /// One row per series and time: a unique index on `time` and the tag columns, writes
    /// through a staging table and `INSERT ... ON CONFLICT DO UPDATE`.
    #[default]
    Merge,
    /// Every point is a row (plain COPY, no index).
    Keep,
}

impl Default for InfluxConfig {
    fn default() -> InfluxConfig {
        InfluxConfig {
            tags_as_jsonb: false,
            tokens: Vec::new(),
            jwt: None,
            databases: Vec::new(),
            max_columns_per_table: DEFAULT_MAX_COLUMNS_PER_TABLE,
            accept_partial: true,
            duplicates: Duplicates::Merge,
            retention: None,
            database_retention: BTreeMap::new(),
        }
    }
}

/// How a database may be written, by the rule of [`InfluxConfig::databases`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Listed in `databases`: the schema may exist already, created by anyone.
    Listed,
    /// Not listed (and no list): only a schema the API created, or a new one it creates.
    OwnOnly,
}

impl InfluxConfig {
    /// The retention of database `name`.
    pub fn retention_of(&self, name: &str) -> Option<Duration> {
        match self.database_retention.get(name) {
            Some(retention) => *retention,
            None => self.retention,
        }
    }

    /// Whether clients may write into database `name`, and how; the error says why not.
    pub fn database_access(&self, name: &str) -> Result<Access, ApiError> {
        if name.len() > MAX_IDENTIFIER_LEN {
            return Err(ApiError::Invalid(format!(
                "database {name:?} is longer than PostgreSQL's identifier limit of {MAX_IDENTIFIER_LEN} bytes"
            )));
        }
        if name == CATALOG_SCHEMA {
            return Err(ApiError::Forbidden(format!(
                "database \"{CATALOG_SCHEMA}\" is Sluice's own catalog of the schemas and tables \
                 it writes; choose another database name"
            )));
        }
        if !self.databases.is_empty() {
            return if self.databases.iter().any(|listed| listed == name) {
                Ok(Access::Listed)
            } else {
                Err(ApiError::Forbidden(format!(
                    "database {name:?} is not one of the databases this server accepts writes \
                     for ([influx] databases)"
                )))
            };
        }
        if is_postgres_schema(name) {
            return Err(ApiError::Forbidden(format!(
                "database {name:?} is a schema of PostgreSQL's own; the write API uses it only \
                 when it is listed in [influx] databases"
            )));
        }
        Ok(Access::OwnOnly)
    }
}

/// Reads a retention as InfluxDB writes durations: `30d`, `1w`, `12h`, `90m`, `3600s`, or
/// `INF` / `0` / empty for "forever" (`None`). Shorter than an hour is refused, as InfluxDB
/// refuses retention policies under an hour.
pub fn parse_retention(text: &str) -> Result<Option<Duration>, String> {
    let text = text.trim();
    if text.is_empty() || text == "0" || text.eq_ignore_ascii_case("inf") {
        return Ok(None);
    }
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a retention such as 30d, 1w, 12h or INF"))?;
    let seconds = match unit {
        "w" => number.checked_mul(7 * 86_400),
        "d" => number.checked_mul(86_400),
        "h" => number.checked_mul(3_600),
        "m" => number.checked_mul(60),
        "s" | "" => Some(number),
        other => {
            return Err(format!(
                "unknown retention unit {other:?} (w, d, h, m or s)"
            ));
        }
    }
    .ok_or_else(|| format!("retention {text:?} is too long"))?;
    if seconds == 0 {
        return Ok(None);
    }
    if seconds < 3_600 {
        return Err(format!(
            "retention {text:?} is shorter than an hour, InfluxDB's least"
        ));
    }
    Ok(Some(Duration::from_secs(seconds)))
}

/// `public`, `information_schema` and `pg_*`: schemas every PostgreSQL database has or
/// reserves, where application tables live.
fn is_postgres_schema(name: &str) -> bool {
    name == "public" || name == "information_schema" || name.starts_with("pg_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retentions_read_as_influxdb_writes_them() {
        let days = |d: u64| Some(Duration::from_secs(d * 86_400));
        assert_eq!(parse_retention("30d"), Ok(days(30)));
        assert_eq!(parse_retention("2w"), Ok(days(14)));
        assert_eq!(
            parse_retention("36h"),
            Ok(Some(Duration::from_secs(36 * 3600)))
        );
        for forever in ["", "0", "INF", "inf", "0d"] {
            assert_eq!(parse_retention(forever), Ok(None), "{forever}");
        }
        for bad in ["30", "5m", "1y", "d", "-1d", "1.5d"] {
            assert!(parse_retention(bad).is_err(), "{bad}");
        }
        let config = InfluxConfig {
            retention: days(30),
            database_retention: [("short".to_owned(), days(1)), ("all".to_owned(), None)]
                .into_iter()
                .collect(),
            ..InfluxConfig::default()
        };
        assert_eq!(config.retention_of("other"), days(30));
        assert_eq!(config.retention_of("short"), days(1));
        assert_eq!(config.retention_of("all"), None);
    }

    #[test]
    fn postgres_schemas_need_listing() {
        let open = InfluxConfig::default();
        assert_eq!(open.database_access("telegraf").ok(), Some(Access::OwnOnly));
        for name in [
            "public",
            "information_schema",
            "pg_catalog",
            "pg_x",
            CATALOG_SCHEMA,
        ] {
            assert!(
                matches!(open.database_access(name), Err(ApiError::Forbidden(_))),
                "{name}"
            );
        }
        assert!(matches!(
            open.database_access(&"x".repeat(64)),
            Err(ApiError::Invalid(_))
        ));
        let listed = InfluxConfig {
            databases: vec!["public".into(), "metrics".into()],
            ..InfluxConfig::default()
        };
        assert_eq!(listed.database_access("public").ok(), Some(Access::Listed));
        assert_eq!(listed.database_access("metrics").ok(), Some(Access::Listed));
        assert!(matches!(
            listed.database_access("telegraf"),
            Err(ApiError::Forbidden(_))
        ));
        assert!(matches!(
            listed.database_access(CATALOG_SCHEMA),
            Err(ApiError::Forbidden(_))
        ));
    }
}
