//! A write: parse the body, plan it per table, encode binary COPY data, then one transaction
//! (DDL when the cache says it is needed, one COPY per table, COMMIT).

use crate::InfluxApi;
use crate::ddl;
use crate::encode;
use crate::plan::{MAX_IDENTIFIER_LEN, Plan, Role, TIME_COLUMN, TablePlan};
use crate::reply::{ApiError, from_db, from_pool};
use crate::shape::TableShape;
use bytes::{BufMut, BytesMut};
use sluice_lineproto::{Batch, BatchStorage, FieldValue, Options, Tag};

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
    use sluice_pg::sqlstate::*;
    match error.code()? {
        // Lost races on the catalog (a unique violation on pg_type among them).
        DUPLICATE_TABLE | DUPLICATE_COLUMN | UNIQUE_VIOLATION | DUPLICATE_SCHEMA => Some(false),
        _ if error.is_retryable() => Some(false),
        // The cache is stale.
        UNDEFINED_TABLE | UNDEFINED_COLUMN | INVALID_SCHEMA_NAME => Some(true),
        _ => None,
    }
}

/// Buffers kept between requests: the parsed body's vectors and the COPY data of each table.
/// Allocating them fresh for every body of megabytes costs page faults.
#[derive(Debug, Default)]
pub struct Scratch {
    batch: BatchStorage,
    copy: Vec<BytesMut>,
}

impl Scratch {
    /// The bytes held, so a pool can drop scratch grown by an unusually large body.
    pub fn allocated_bytes(&self) -> usize {
        self.batch.allocated_bytes() + self.copy.iter().map(BytesMut::capacity).sum::<usize>()
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
    let mut scratch = api.take_scratch();
    let result = match Batch::parse_reusing(body, &options, &mut scratch.batch) {
        Ok(batch) => {
            let result = write_batch(api, schema, &batch, &mut scratch.copy).await;
            scratch.batch = batch.into_storage();
            result
        }
        Err(error) => Err(ApiError::Parse(error)),
    };
    api.give_back_scratch(scratch);
    result
}

/// Plans and encodes a parsed body, then writes it, retrying lost races on the catalog.
async fn write_batch(
    api: &InfluxApi,
    schema: &str,
    batch: &Batch<'_>,
    buffers: &mut Vec<BytesMut>,
) -> Result<(), ApiError> {
    if batch.is_empty() {
        return Ok(());
    }
    let plan = Plan::build(batch.points(), api.config.tags_as_jsonb)?;
    if buffers.len() < plan.tables.len() {
        buffers.resize_with(plan.tables.len(), BytesMut::new);
    }
    for (table, buffer) in plan.tables.iter().zip(buffers.iter_mut()) {
        buffer.clear();
        encode_table(table, batch, buffer);
    }
    let data = &buffers[..plan.tables.len()];
    let mut attempt = 1;
    loop {
        match write_once(api, schema, &plan, data).await {
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
    ddl::push_ident(&mut sql, TIME_COLUMN);
    for column in &table.columns {
        sql.push_str(", ");
        ddl::push_ident(&mut sql, column.name);
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

/// The whole binary COPY data of one table into `buf`: header, one row per point, trailer.
fn encode_table(table: &TablePlan<'_>, batch: &Batch<'_>, buf: &mut BytesMut) {
    let columns = table.columns.len();
    buf.reserve(encode::COPY_HEADER.len() + table.rows.len() * (14 + 16 * columns) + 2);
    buf.put_slice(encode::COPY_HEADER);
    let mut slots: Vec<Slot<'_, '_>> = vec![Slot::Null; columns];
    let jsonb_tags = table.columns.first().map(|c| c.role) == Some(Role::TagsJson);
    for &(index, layout) in &table.rows {
        let Some(point) = batch.point(index) else {
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
        encode::timestamp(buf, point.time());
        for slot in &slots {
            match slot {
                Slot::Null => encode::null(buf),
                Slot::Tag(value) => encode::text(buf, value),
                Slot::Tags(tags) => encode::tags_jsonb(buf, tags),
                Slot::Field(value) => encode::field(buf, value),
            }
        }
    }
    buf.put_i16(encode::COPY_TRAILER);
}
