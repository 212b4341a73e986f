//! Sluice's own catalog of what the write API created (schema `sluice_influx`), and the
//! ownership checks that keep writes out of every other schema and table.
//!
//! A table is the API's when `sluice_influx.measurements` has a row with its schema, name and
//! current oid: one the API created (and registered in the same transaction), or one an
//! administrator adopted (README: upgrading from a version without the catalog). A table
//! dropped and made again by hand has another oid, so it is no longer the API's. Schemas are
//! registered in `sluice_influx.databases` the same way.

use crate::config::Access;
use crate::ddl;
use crate::reply::ApiError;
use sluice_pg::{Connection, sql};

/// The schema of the catalog.
pub const CATALOG_SCHEMA: &str = "sluice_influx";

/// The catalog's tables, made on first use by whoever has the rights (or in advance by an
/// administrator, for a role that may not create schemas: README, least-privilege role).
pub const CATALOG_DDL: &str = "\
CREATE SCHEMA IF NOT EXISTS sluice_influx;
COMMENT ON SCHEMA sluice_influx IS 'Sluice''s InfluxDB write API: the schemas and tables it created, the only ones it writes into';
CREATE TABLE IF NOT EXISTS sluice_influx.databases (
    name text PRIMARY KEY,
    nspid oid NOT NULL,
    created timestamptz NOT NULL DEFAULT now(),
    retention_seconds bigint CHECK (retention_seconds >= 0),
    retention_policy text
);
COMMENT ON COLUMN sluice_influx.databases.retention_seconds IS 'The retention a client set (InfluxQL CREATE DATABASE ... WITH DURATION, CREATE/ALTER RETENTION POLICY, a v2 bucket''s retention rules); 0 keeps forever; NULL: the configuration''s';
CREATE TABLE IF NOT EXISTS sluice_influx.measurements (
    database text NOT NULL,
    name text NOT NULL,
    relid oid NOT NULL,
    created timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (database, name)
);";

/// The columns a catalog made by an earlier Sluice lacks: the retention clients set.
pub const CATALOG_MIGRATION: &str = "\
ALTER TABLE sluice_influx.databases
    ADD COLUMN IF NOT EXISTS retention_seconds bigint CHECK (retention_seconds >= 0),
    ADD COLUMN IF NOT EXISTS retention_policy text";

/// What of the catalog exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CatalogState {
    /// Nothing: it is to be created.
    Missing,
    /// Made by an earlier Sluice: it lacks [`CATALOG_MIGRATION`]'s columns.
    Old,
    /// Complete: nothing needs creating, and no right to create schemas.
    Current,
}

/// What of the catalog exists.
pub async fn state(conn: &mut Connection) -> sluice_pg::Result<CatalogState> {
    let rows = conn
        .query(
            "SELECT pg_catalog.to_regclass('sluice_influx.measurements') IS NOT NULL \
               AND pg_catalog.to_regclass('sluice_influx.databases') IS NOT NULL, \
             EXISTS (SELECT 1 FROM pg_catalog.pg_attribute \
                     WHERE attrelid = pg_catalog.to_regclass('sluice_influx.databases') \
                       AND attname = 'retention_seconds' AND NOT attisdropped)",
            &[],
        )
        .await?;
    let row = rows.iter().next();
    let flag = |i: usize| row.and_then(|r| r.get::<bool>(i).ok()) == Some(true);
    Ok(match (flag(0), flag(1)) {
        (false, _) => CatalogState::Missing,
        (true, false) => CatalogState::Old,
        (true, true) => CatalogState::Current,
    })
}

/// Adds the columns an earlier Sluice's catalog lacks, under the catalog's lock (it needs the
/// catalog's owner: a least-privilege role gets 42501, and the retention clients set is then
/// not kept).
pub async fn migrate(conn: &mut Connection) -> sluice_pg::Result<()> {
    let mut tx = conn.transaction()?;
    ddl::lock(&mut tx, ddl::lock_key(CATALOG_SCHEMA, "")).await?;
    tx.batch_execute(CATALOG_MIGRATION).await?;
    tx.commit().await
}

/// Creates the catalog under its advisory lock (concurrent `CREATE ... IF NOT EXISTS` can
/// collide on the system catalogs' unique indexes).
pub async fn create(conn: &mut Connection) -> sluice_pg::Result<()> {
    let mut tx = conn.transaction()?;
    ddl::lock(&mut tx, ddl::lock_key(CATALOG_SCHEMA, "")).await?;
    tx.batch_execute(CATALOG_DDL).await?;
    tx.commit().await
}

/// Makes sure the write may go into `schema`, creating and registering it when it does not
/// exist; inside the write's transaction, under the schema's advisory lock. An existing schema
/// the API did not create is refused unless it is listed.
pub async fn claim_schema(
    tx: &mut Connection,
    schema: &str,
    access: Access,
) -> Result<(), ClaimError> {
    ddl::lock(tx, ddl::lock_key(schema, "")).await?;
    let rows = tx
        .query(
            "SELECT n.oid::int8, EXISTS (SELECT 1 FROM sluice_influx.databases d \
                                         WHERE d.name = n.nspname AND d.nspid = n.oid) \
             FROM pg_catalog.pg_namespace n WHERE n.nspname = $1::text",
            &[&schema],
        )
        .await?;
    if let Some(row) = rows.iter().next() {
        let registered: bool = row.get(1)?;
        if registered || access == Access::Listed {
            return Ok(());
        }
        return Err(ClaimError::Refused(ApiError::Forbidden(format!(
            "database {schema:?} is a PostgreSQL schema the write API did not create; it writes \
             only into schemas it created and those listed in [influx] databases"
        ))));
    }
    let literal = sql::quote_literal(schema);
    let mut statement = String::from("CREATE SCHEMA ");
    sql::push_ident(&mut statement, schema);
    statement.push_str(&format!(
        "; INSERT INTO sluice_influx.databases (name, nspid) \
         SELECT nspname, oid FROM pg_catalog.pg_namespace WHERE nspname = {literal} \
         ON CONFLICT (name) DO UPDATE SET nspid = excluded.nspid, created = now()"
    ));
    tx.batch_execute(&statement).await?;
    Ok(())
}

/// The SQL that registers `schema.table` as the API's, run right after creating it.
pub fn register_table_sql(schema: &str, table: &str) -> String {
    format!(
        "INSERT INTO sluice_influx.measurements (database, name, relid) \
         SELECT n.nspname, c.relname, c.oid FROM pg_catalog.pg_class c \
         JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
         WHERE n.nspname = {} AND c.relname = {} \
         ON CONFLICT (database, name) DO UPDATE SET relid = excluded.relid, created = now()",
        sql::quote_literal(schema),
        sql::quote_literal(table)
    )
}

/// The refusal for a measurement whose table exists and is not the API's.
pub fn not_owned(schema: &str, table: &str) -> ApiError {
    ApiError::Forbidden(format!(
        "measurement {table:?} names the table {}, which the write API did not create; it \
         writes only into tables it created for line protocol",
        sql::qualified(schema, table)
    ))
}

/// Why a schema cannot be written: refused, or the database failed.
#[derive(Debug)]
pub enum ClaimError {
    Refused(ApiError),
    Db(sluice_pg::Error),
}

impl From<sluice_pg::Error> for ClaimError {
    fn from(error: sluice_pg::Error) -> ClaimError {
        ClaimError::Db(error)
    }
}
