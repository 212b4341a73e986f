//! A write: parse the body, plan it per table, encode binary COPY data, then one transaction
//! (DDL when the cache says it is needed, one COPY per table, COMMIT).

use crate::InfluxApi;
use crate::ddl;
use crate::encode;
use crate::plan::{MAX_IDENTIFIER_LEN, Plan, Role, TIME_COLUMN, TablePlan};
use crate::reply::{ApiError, from_db, from_pool};
use crate::shape::TableShape;
use bytes::{BufMut, BytesMut};
use sluice_lineproto::{Batch, FieldValue, Options, Point, Tag};

/// How often a write is retried after losing a race on the catalog (or a deadlock).
const MAX_ATTEMPTS: usize = 5;

/// Why one attempt failed: an answer for the client, or a database error that may be retried.
enum Failure {
    Api(ApiError),
    Db(sluice_pg::Error),
}

impl From<ApiError> for Failure {
    fn from(error: ApiError) -> Failure {
        Failure::Api(error)
    }
}

impl From<sluice_pg::Error> for Failure {
    fn from(error: sluice_pg::Error) -> Failure {
        Failure::Db(error)
    }
}

/// SQLSTATEs a write retries: lost races on the catalog, deadlocks between concurrent schema
/// changes, and a table or column dropped behind the cache's back.
fn retry_kind(error: &sluice_pg::Error) -> Option<bool> {
    match error.code()? {
        // duplicate_table, duplicate_column, unique_violation (pg_type), duplicate_schema,
        // deadlock_detected, serialization_failure
        "42P07" | "42701" | "23505" | "42P06" | "40P01" | "40001" => Some(false),
        // undefined_table, undefined_column: the cache is stale.
        "42P01" | "42703" => Some(true),
        _ => None,
    }
}

/// Writes a body of line protocol into `schema`: all of it, or nothing.
pub async fn write(
    api: &InfluxApi,
    schema: &str,
    body: &[u8],
    options: Options,
) -> Result<(), ApiError> {
    if schema.len() > MAX_IDENTIFIER_LEN {
        return Err(ApiError::Invalid(format!(
            "database {schema:?} is longer than PostgreSQL's identifier limit of {MAX_IDENTIFIER_LEN} bytes"
        )));
    }
    let batch = Batch::parse(body, &options)?;
    if batch.is_empty() {
        return Ok(());
    }
    let points: Vec<Point<'_, '_>> = batch.points().collect();
    let plan = Plan::build(&points, api.config.tags_as_jsonb)?;
    let mut data = Vec::with_capacity(plan.tables.len());
    for table in &plan.tables {
        data.push(encode_table(table, &points));
    }
    let mut attempt = 1;
    loop {
        match write_once(api, schema, &plan, &data).await {
            Ok(()) => return Ok(()),
            Err(Failure::Api(error)) => return Err(error),
            Err(Failure::Db(error)) => match retry_kind(&error) {
                Some(stale) if attempt < MAX_ATTEMPTS => {
                    tracing::debug!(%error, attempt, "retrying an Influx write");
                    if stale {
                        api.shapes.forget_schema(schema);
                    }
                    attempt += 1;
                }
                _ => return Err(from_db(error)),
            },
        }
    }
}

/// One attempt: the schema work the cache says is needed, the COPYs, and COMMIT; the cache
/// learns the new shapes only once committed.
async fn write_once(
    api: &InfluxApi,
    schema: &str,
    plan: &Plan<'_>,
    data: &[BytesMut],
) -> Result<(), Failure> {
    let schema_known = api.shapes.has_schema(schema);
    let mut unsure = Vec::new();
    for (index, table) in plan.tables.iter().enumerate() {
        match api.shapes.table(schema, table.name) {
            Some(shape)
                if table.missing_columns(&shape)?.is_empty() && !TablePlan::lacks_time(&shape) => {}
            _ => unsure.push(index),
        }
    }
    // Tables locked in name order, so two writers changing the same tables cannot deadlock
    // on the advisory locks.
    unsure.sort_by_key(|&index| plan.tables[index].name);

    let mut conn = api.pool.get().await.map_err(from_pool)?;
    let mut tx = conn.transaction()?;
    let mut learned: Vec<(&str, TableShape)> = Vec::with_capacity(unsure.len());
    if !unsure.is_empty() && !schema_known {
        ddl::lock(&mut tx, ddl::lock_key(schema, "")).await?;
        ddl::create_schema(&mut tx, schema).await?;
    }
    for &index in &unsure {
        let table = &plan.tables[index];
        ddl::lock(&mut tx, ddl::lock_key(schema, table.name)).await?;
        let existing = ddl::read_table(&mut tx, schema, table.name).await?;
        let missing = match &existing {
            Some(shape) => table.missing_columns(shape)?,
            None => (0..table.columns.len()).collect(),
        };
        let shape = ddl::extend_table(&mut tx, schema, table, existing, &missing).await?;
        learned.push((table.name, shape));
    }
    for (table, data) in plan.tables.iter().zip(data) {
        let mut copy = tx.copy_in(&copy_sql(schema, table)).await?;
        copy.write(data).await?;
        copy.finish().await?;
    }
    tx.commit().await?;
    drop(conn);
    if !schema_known {
        api.shapes.add_schema(schema);
    }
    for (table, shape) in learned {
        api.shapes.put_table(schema, table, shape);
    }
    Ok(())
}

/// `COPY "schema"."table" ("time", ...) FROM STDIN (FORMAT binary)`.
fn copy_sql(schema: &str, table: &TablePlan<'_>) -> String {
    let mut sql = String::with_capacity(64 + 16 * table.columns.len());
    sql.push_str("COPY ");
    sql.push_str(&ddl::qualified(schema, table.name));
    sql.push_str(" (");
    ddl::quote_ident(TIME_COLUMN, &mut sql);
    for column in &table.columns {
        sql.push_str(", ");
        ddl::quote_ident(column.name, &mut sql);
    }
    sql.push_str(") FROM STDIN (FORMAT binary)");
    sql
}

/// A value waiting to be written in its column's place.
#[derive(Clone, Copy)]
enum Slot<'s, 'a> {
    Null,
    Tag(&'s str),
    Tags(&'s [Tag<'a>]),
    Field(&'s FieldValue<'a>),
}

/// The whole binary COPY data of one table: header, one row per point, trailer.
fn encode_table(table: &TablePlan<'_>, points: &[Point<'_, '_>]) -> BytesMut {
    let columns = table.columns.len();
    let mut buf = BytesMut::with_capacity(
        encode::COPY_HEADER.len() + table.rows.len() * (14 + 16 * columns) + 2,
    );
    buf.put_slice(encode::COPY_HEADER);
    let mut slots: Vec<Slot<'_, '_>> = vec![Slot::Null; columns];
    let jsonb_tags = table.columns.first().map(|c| c.role) == Some(Role::TagsJson);
    for &(index, layout) in &table.rows {
        let Some(point) = points.get(index) else {
            continue;
        };
        let Some(layout) = table.layouts.get(layout) else {
            continue;
        };
        slots.fill(Slot::Null);
        let mut positions = layout.positions.iter();
        if jsonb_tags {
            slots[0] = Slot::Tags(point.tags());
        } else {
            for (tag, &position) in point.tags().iter().zip(positions.by_ref()) {
                slots[position] = Slot::Tag(&tag.value);
            }
        }
        for (field, &position) in point.fields().iter().zip(positions) {
            slots[position] = Slot::Field(&field.value);
        }
        buf.put_i16((columns + 1) as i16);
        encode::timestamp(&mut buf, point.time());
        for slot in &slots {
            match slot {
                Slot::Null => encode::null(&mut buf),
                Slot::Tag(value) => encode::text(&mut buf, value),
                Slot::Tags(tags) => encode::tags_jsonb(&mut buf, tags),
                Slot::Field(value) => encode::field(&mut buf, value),
            }
        }
    }
    buf.put_i16(encode::COPY_TRAILER);
    buf
}
