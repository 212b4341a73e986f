//! The tables and views of the Redis store, created and versioned in `schema_migrations`.

use sluice_pg::Connection;
use sluice_pg::sql::{quote_ident, quote_literal};

use crate::Error;

/// The newest schema version this build writes.
pub const VERSION: i32 = 4;

/// The tables of version 1, `{s}` standing for the quoted schema.
const V1_TABLES: &str = r#"
CREATE TABLE {s}.keys (
    db int4 NOT NULL,
    key bytea NOT NULL,
    type text NOT NULL CHECK (type IN ('string', 'list', 'hash', 'set', 'zset', 'stream')),
    expire_at timestamptz,
    value bytea,
    PRIMARY KEY (db, key)
);
COMMENT ON TABLE {s}.keys IS 'One row per Redis key, written by Sluice; value holds a string''s bytes (a stream''s counters and consumer groups for streams)';
CREATE INDEX keys_expire_at ON {s}.keys (expire_at) WHERE expire_at IS NOT NULL;
CREATE TABLE {s}.hash_fields (
    db int4 NOT NULL, key bytea NOT NULL, field bytea NOT NULL, value bytea NOT NULL,
    PRIMARY KEY (db, key, field)
);
CREATE TABLE {s}.list_items (
    db int4 NOT NULL, key bytea NOT NULL, pos int8 NOT NULL, value bytea NOT NULL,
    PRIMARY KEY (db, key, pos)
);
CREATE TABLE {s}.set_members (
    db int4 NOT NULL, key bytea NOT NULL, member bytea NOT NULL,
    PRIMARY KEY (db, key, member)
);
CREATE TABLE {s}.zset_members (
    db int4 NOT NULL, key bytea NOT NULL, member bytea NOT NULL, score float8 NOT NULL,
    PRIMARY KEY (db, key, member)
);
CREATE TABLE {s}.stream_entries (
    db int4 NOT NULL, key bytea NOT NULL, ms int8 NOT NULL, seq int8 NOT NULL,
    fields bytea[] NOT NULL,
    PRIMARY KEY (db, key, ms, seq)
);
CREATE FUNCTION {s}.as_text(b bytea) RETURNS text LANGUAGE plpgsql IMMUTABLE STRICT AS $f$
BEGIN
    RETURN convert_from(b, 'UTF8');
EXCEPTION WHEN others THEN
    RETURN NULL;
END
$f$;
COMMENT ON FUNCTION {s}.as_text(bytea) IS 'The bytes as text when they are valid UTF-8, else NULL';
CREATE VIEW {s}.strings AS
    SELECT db, {s}.as_text(key) AS key_text, {s}.as_text(value) AS value_text, expire_at, key, value
    FROM {s}.keys WHERE type = 'string';
CREATE VIEW {s}.hashes AS
    SELECT h.db, {s}.as_text(h.key) AS key_text, {s}.as_text(h.field) AS field_text,
           {s}.as_text(h.value) AS value_text, k.expire_at, h.key, h.field, h.value
    FROM {s}.hash_fields h JOIN {s}.keys k USING (db, key);
CREATE VIEW {s}.lists AS
    SELECT l.db, {s}.as_text(l.key) AS key_text,
           row_number() OVER (PARTITION BY l.db, l.key ORDER BY l.pos) - 1 AS index,
           {s}.as_text(l.value) AS value_text, k.expire_at, l.key, l.value
    FROM {s}.list_items l JOIN {s}.keys k USING (db, key);
CREATE VIEW {s}.sets AS
    SELECT m.db, {s}.as_text(m.key) AS key_text, {s}.as_text(m.member) AS member_text,
           k.expire_at, m.key, m.member
    FROM {s}.set_members m JOIN {s}.keys k USING (db, key);
CREATE VIEW {s}.sorted_sets AS
    SELECT z.db, {s}.as_text(z.key) AS key_text, {s}.as_text(z.member) AS member_text, z.score,
           k.expire_at, z.key, z.member
    FROM {s}.zset_members z JOIN {s}.keys k USING (db, key);
CREATE VIEW {s}.streams AS
    SELECT e.db, {s}.as_text(e.key) AS key_text, e.ms::text || '-' || e.seq::text AS id,
           {s}.as_text(e.fields[i]) AS field_text, {s}.as_text(e.fields[i + 1]) AS value_text,
           k.expire_at, e.key, e.fields[i] AS field, e.fields[i + 1] AS value
    FROM {s}.stream_entries e JOIN {s}.keys k USING (db, key),
         generate_series(1, array_length(e.fields, 1), 2) AS i;
"#;

/// Version 2: lists are written in part (pushes and pops at either end write only the elements
/// that changed), so positions no longer start at 0: they are contiguous from wherever the
/// first element is, negative too. The `lists` view shows each row's `pos` as well. Rows of
/// version 1 (positions 0..n-1) are valid version 2 rows: no data moves.
const V2: &str = r#"
COMMENT ON COLUMN {s}.list_items.pos IS 'The element''s place in its list: contiguous, in list order, starting anywhere (negative too): a push at the head takes the position before the first';
COMMENT ON TABLE {s}.hash_fields IS 'Hash fields, written by Sluice field by field';
CREATE OR REPLACE VIEW {s}.lists AS
    SELECT l.db, {s}.as_text(l.key) AS key_text,
           row_number() OVER (PARTITION BY l.db, l.key ORDER BY l.pos) - 1 AS index,
           {s}.as_text(l.value) AS value_text, k.expire_at, l.key, l.value, l.pos
    FROM {s}.list_items l JOIN {s}.keys k USING (db, key);
"#;

/// Version 3: FUNCTION libraries, kept as Redis keeps them in its AOF.
const V3: &str = r#"
CREATE TABLE {s}.functions (
    library text PRIMARY KEY,
    code bytea NOT NULL
);
COMMENT ON TABLE {s}.functions IS 'Redis function libraries (FUNCTION LOAD), loaded again at start; written by Sluice';
"#;

/// Version 4: list elements stored in chunks, a row per non-empty chunk with its live
/// elements in order from `first_pos`: a flush of many pushes writes a few rows instead of one
/// per element. Each list has its own grid (`grid` positions per chunk, the same on all its
/// rows; `chunk` = `pos.div_euclid(grid)`, negative positions too): `{small_grid}` for lists of
/// elements of at most `{small_mean}` bytes on average, 1 for larger ones, whose neighbours
/// would cost more to rewrite than a row of their own. The rows of `list_items` move into
/// chunks grouped the same way (`floor` of the division is `div_euclid` for a positive
/// divisor); the `lists` view shows one row per element as before, with the same columns.
const V4: &str = r#"
CREATE TABLE {s}.list_chunks (
    db int4 NOT NULL, key bytea NOT NULL, chunk int8 NOT NULL, first_pos int8 NOT NULL,
    items bytea[] NOT NULL, grid int2 NOT NULL CHECK (grid > 0),
    PRIMARY KEY (db, key, chunk)
);
COMMENT ON TABLE {s}.list_chunks IS 'List elements, written by Sluice: the elements at positions [chunk * grid, chunk * grid + grid) of a list, in order, the first at first_pos; positions are contiguous across a list''s chunks and start anywhere (negative too): a push at the head takes the position before the first';
COMMENT ON COLUMN {s}.list_chunks.grid IS 'Positions per chunk of this list, the same on all its rows: {small_grid} for lists of small elements, 1 for large ones (chosen when the list is written whole)';
INSERT INTO {s}.list_chunks (db, key, chunk, first_pos, items, grid)
    SELECT l.db, l.key, floor(l.pos::numeric / g.grid)::int8, min(l.pos),
           array_agg(l.value ORDER BY l.pos), g.grid
    FROM {s}.list_items l
    JOIN (SELECT db, key,
                 CASE WHEN avg(octet_length(value)) <= {small_mean} THEN {small_grid} ELSE 1 END::int2
                     AS grid
          FROM {s}.list_items GROUP BY db, key) g USING (db, key)
    GROUP BY l.db, l.key, g.grid, floor(l.pos::numeric / g.grid)::int8;
DROP VIEW {s}.lists;
DROP TABLE {s}.list_items;
CREATE VIEW {s}.lists AS
    SELECT c.db, {s}.as_text(c.key) AS key_text,
           row_number() OVER (PARTITION BY c.db, c.key ORDER BY c.first_pos + i.n) - 1 AS index,
           {s}.as_text(i.value) AS value_text, k.expire_at, c.key, i.value,
           c.first_pos + i.n - 1 AS pos
    FROM {s}.list_chunks c JOIN {s}.keys k USING (db, key)
         CROSS JOIN LATERAL unnest(c.items) WITH ORDINALITY AS i(value, n);
"#;

/// The migrations in order, each with the step its failure names: each takes the schema from
/// the version before to its own.
const MIGRATIONS: [(i32, &str, &str); 4] = [
    (1, V1_TABLES, "creating the tables (migration 1)"),
    (2, V2, "positions of lists written in part (migration 2)"),
    (3, V3, "the function libraries' table (migration 3)"),
    (4, V4, "list elements in chunks (migration 4)"),
];

/// Creates the schema and its migrations table when they are missing.
async fn create_schema(conn: &mut Connection, schema: &str) -> Result<(), Error> {
    let s = quote_ident(schema);
    conn.batch_execute(&format!(
        "CREATE SCHEMA IF NOT EXISTS {s}; \
         CREATE TABLE IF NOT EXISTS {s}.schema_migrations (\
             version int4 PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
    ))
    .await
    .map_err(|e| Error::pg("creating the schema", e))?;
    Ok(())
}

/// Creates the schema and its tables, or checks that an existing one is a version this build
/// knows. Returns the version found before (0 for a new schema).
pub async fn migrate(conn: &mut Connection, schema: &str) -> Result<i32, Error> {
    create_schema(conn, schema).await?;
    let s = quote_ident(schema);
    let row = conn
        .query_one(
            &format!("SELECT coalesce(max(version), 0) FROM {s}.schema_migrations"),
            &[],
        )
        .await
        .map_err(|e| Error::pg("reading schema_migrations", e))?;
    let found: i32 = row
        .get(0)
        .map_err(|e| Error::pg("reading schema_migrations", e))?;
    if found > VERSION {
        return Err(Error::NewerSchema {
            schema: schema.to_string(),
            found,
            known: VERSION,
        });
    }
    migrate_to(conn, schema, found, VERSION).await?;
    Ok(found)
}

/// Checks, for a follower (which never writes), that `schema` holds a store at the version
/// this build reads: the owner creates and migrates it.
pub async fn check_followable(conn: &mut Connection, schema: &str) -> Result<(), Error> {
    let step = "reading schema_migrations";
    let table = format!("{}.schema_migrations", quote_ident(schema));
    let exists: bool = conn
        .query_one("SELECT to_regclass($1) IS NOT NULL", &[&table.as_str()])
        .await
        .map_err(|e| Error::pg(step, e))?
        .get(0)
        .map_err(|e| Error::pg(step, e))?;
    let found: i32 = if exists {
        conn.query_one(
            &format!("SELECT coalesce(max(version), 0) FROM {table}"),
            &[],
        )
        .await
        .map_err(|e| Error::pg(step, e))?
        .get(0)
        .map_err(|e| Error::pg(step, e))?
    } else {
        0
    };
    if found > VERSION {
        return Err(Error::NewerSchema {
            schema: schema.to_string(),
            found,
            known: VERSION,
        });
    }
    if found < VERSION {
        return Err(Error::NotFollowable {
            schema: schema.to_string(),
            found,
            known: VERSION,
        });
    }
    Ok(())
}

/// Applies the migrations after `found` up to `target`, each in a transaction of its own (the
/// owner lock, taken before, keeps a second instance from migrating at the same time).
async fn migrate_to(
    conn: &mut Connection,
    schema: &str,
    found: i32,
    target: i32,
) -> Result<(), Error> {
    let s = quote_ident(schema);
    let lock = format!(
        "SELECT pg_advisory_xact_lock(hashtext({}))",
        quote_literal(&format!("sluice_redis_migrate:{schema}"))
    );
    for (version, ddl, step) in MIGRATIONS {
        if version <= found || version > target {
            continue;
        }
        let ddl = ddl
            .replace("{s}", &s)
            .replace("{small_grid}", &crate::chunks::SMALL_GRID.to_string())
            .replace("{small_mean}", &crate::chunks::SMALL_MEAN.to_string());
        conn.batch_execute(&format!(
            "BEGIN; {lock}; {ddl}; INSERT INTO {s}.schema_migrations (version) VALUES ({version}); COMMIT"
        ))
        .await
        .map_err(|e| Error::pg(step, e))?;
    }
    Ok(())
}

/// Creates the schema at an older `version` (tests of the migrations).
#[doc(hidden)]
pub async fn create_at_version(
    conn: &mut Connection,
    schema: &str,
    version: i32,
) -> Result<(), Error> {
    create_schema(conn, schema).await?;
    migrate_to(conn, schema, 0, version).await
}
