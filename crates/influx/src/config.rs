//! The write API's options and the rule that maps a database (v1 `db`, v2 `bucket`) to a schema.

use crate::catalog::CATALOG_SCHEMA;
use crate::plan::MAX_IDENTIFIER_LEN;
use crate::reply::ApiError;

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
            databases: Vec::new(),
            max_columns_per_table: DEFAULT_MAX_COLUMNS_PER_TABLE,
            accept_partial: true,
            duplicates: Duplicates::Merge,
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

/// `public`, `information_schema` and `pg_*`: schemas every PostgreSQL database has or
/// reserves, where application tables live.
fn is_postgres_schema(name: &str) -> bool {
    name == "public" || name == "information_schema" || name.starts_with("pg_")
}

#[cfg(test)]
mod tests {
    use super::*;

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
