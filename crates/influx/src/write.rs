//! A write: parse the body, plan it per table, then one transaction (the schema work the cache
//! says is needed, a streamed COPY per table, COMMIT), leaving out what cannot be written when
//! partial writes are on.

use crate::InfluxApi;
use crate::catalog::{self, ClaimError};
use crate::config::{Access, Duplicates};
use crate::copy;
use crate::ddl;
use crate::merge;
use crate::plan::{MAX_REASONS, Plan, Rejections, TablePlan};
use crate::reply::{ApiError, from_db, from_pool};
use crate::retention;
use crate::shape::TableShape;
use bytes::BytesMut;
use sluice_lineproto::{Batch, BatchStorage, Options};

/// How often a write is retried after losing a race on the catalog (or a deadlock).
const MAX_ATTEMPTS: usize = 5;

/// The longest quote of a rejected line in a partial write's message.
const MAX_QUOTED_LINE: usize = 200;

/// Why one attempt failed: an answer for the client, a table PostgreSQL refused because of
/// what the request holds, or a database error that may be retried.
enum Failure {
    Api(ApiError),
    Table(usize, ApiError),
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

/// Where a statement failed: the schema work, or loading rows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Schema,
    Rows,
}

/// The error for the client when PostgreSQL refused table `table`'s schema change or rows
/// because of what the request holds (a value, a name, a limit); `None` for other errors.
fn refused(table: &str, phase: Phase, error: &sluice_pg::Error) -> Option<ApiError> {
    use sluice_pg::sqlstate::*;
    let message = error
        .as_db_error()
        .map_or_else(|| error.to_string(), |db| db.message().to_owned());
    let code = error.code()?;
    let text = match code {
        TOO_MANY_COLUMNS => format!(
            "measurement {table:?} needs more columns than PostgreSQL allows in a table (1600): \
             store its tags in one jsonb column ([influx] tags_as_jsonb = true) or write fewer \
             distinct keys ({message})"
        ),
        PROGRAM_LIMIT_EXCEEDED => format!(
            "a row of measurement {table:?} is too large for PostgreSQL ({message}): write fewer \
             or smaller fields per point"
        ),
        _ if error.is_class(CLASS_DATA_EXCEPTION)
            || error.is_class(CLASS_PROGRAM_LIMIT_EXCEEDED) =>
        {
            format!("PostgreSQL refused a value of measurement {table:?}: {message}")
        }
        // Constraints added to the table by hand; during the schema work a unique violation is
        // a lost race on the catalog instead.
        _ if error.is_class(CLASS_INTEGRITY_CONSTRAINT_VIOLATION)
            && !(phase == Phase::Schema && code == UNIQUE_VIOLATION) =>
        {
            format!("PostgreSQL refused a row of measurement {table:?}: {message}")
        }
        RESERVED_NAME | "42622" => {
            format!("PostgreSQL refused a name in measurement {table:?}: {message}")
        }
        INSUFFICIENT_PRIVILEGE => {
            return Some(ApiError::Forbidden(format!(
                "PostgreSQL refused the write into measurement {table:?}: {message}"
            )));
        }
        _ => return None,
    };
    Some(ApiError::Invalid(text))
}

/// Buffers kept between requests: the parsed body's vectors, the COPY chunk, parse errors.
/// Allocating them fresh for every body of megabytes costs page faults.
#[derive(Debug, Default)]
pub struct Scratch {
    batch: BatchStorage,
    chunk: BytesMut,
    errors: Vec<sluice_lineproto::Error>,
}

impl Scratch {
    /// The bytes held, so a pool can drop scratch grown by an unusually large body.
    pub fn allocated_bytes(&self) -> usize {
        self.batch.allocated_bytes() + self.chunk.capacity()
    }
}

/// What a write did: how many points it wrote and which it left out.
#[derive(Debug, Default)]
pub struct Outcome {
    pub written: usize,
    pub rejected: Rejections,
    /// The commit position, when writes report it.
    pub lsn: Option<sluice_pg::Lsn>,
}

/// Writes a body of line protocol into `schema`: all of it or nothing when `strict`, else
/// every point that can be written.
pub async fn write(
    api: &InfluxApi,
    schema: &str,
    access: Access,
    body: &[u8],
    options: Options,
    strict: bool,
) -> Result<Outcome, ApiError> {
    let mut scratch = api.take_scratch();
    let result = write_body(api, schema, access, body, options, strict, &mut scratch).await;
    api.give_back_scratch(scratch);
    result
}

async fn write_body(
    api: &InfluxApi,
    schema: &str,
    access: Access,
    body: &[u8],
    options: Options,
    strict: bool,
    scratch: &mut Scratch,
) -> Result<Outcome, ApiError> {
    let mut rejected = Rejections::default();
    let batch = if strict {
        Batch::parse_reusing(body, &options, &mut scratch.batch).map_err(ApiError::Parse)?
    } else {
        scratch.errors.clear();
        let (batch, failed) = Batch::parse_partial_reusing(
            body,
            &options,
            &mut scratch.batch,
            &mut scratch.errors,
            MAX_REASONS,
        );
        for error in &scratch.errors {
            rejected.add(
                1,
                || {
                    format!(
                        "unable to parse '{}': {error}",
                        quoted_line(body, error.offset())
                    )
                },
                true,
            );
        }
        rejected.add_unlisted(failed - scratch.errors.len(), true);
        batch
    };
    let result = write_batch(api, schema, access, &batch, strict, &mut scratch.chunk).await;
    scratch.batch = batch.into_storage();
    let mut outcome = result?;
    rejected.extend(std::mem::take(&mut outcome.rejected));
    outcome.rejected = rejected;
    Ok(outcome)
}

/// The line of `body` holding byte `offset`, cut to [`MAX_QUOTED_LINE`] characters.
fn quoted_line(body: &[u8], offset: usize) -> String {
    let offset = offset.min(body.len());
    let start = memchr::memrchr(b'\n', &body[..offset]).map_or(0, |i| i + 1);
    let end = memchr::memchr(b'\n', &body[offset..]).map_or(body.len(), |i| offset + i);
    let line = String::from_utf8_lossy(&body[start..end]);
    let line = line.trim_end_matches('\r');
    match line.char_indices().nth(MAX_QUOTED_LINE) {
        Some((cut, _)) => format!("{}...", &line[..cut]),
        None => line.to_owned(),
    }
}

/// Plans a parsed body and writes it, retrying lost races on the catalog; with partial writes,
/// a table PostgreSQL refuses is left out and the rest written again.
async fn write_batch(
    api: &InfluxApi,
    schema: &str,
    access: Access,
    batch: &Batch<'_>,
    strict: bool,
    chunk: &mut BytesMut,
) -> Result<Outcome, ApiError> {
    if batch.is_empty() {
        return Ok(Outcome::default());
    }
    let mut plan = Plan::build(batch.points(), api.config.tags_as_jsonb, strict)?;
    let mut excluded: Vec<Option<String>> = vec![None; plan.tables.len()];
    let mut attempt = 1;
    loop {
        let result = write_once(api, schema, access, &plan, batch, &excluded, strict, chunk).await;
        match result {
            Ok(mut outcome) => {
                for (table, reason) in plan.tables.iter().zip(&excluded) {
                    if let Some(reason) = reason {
                        outcome
                            .rejected
                            .add(table.rows.len(), || reason.clone(), false);
                    }
                }
                let mut rejected = std::mem::take(&mut plan.rejected);
                rejected.extend(outcome.rejected);
                outcome.rejected = rejected;
                return Ok(outcome);
            }
            Err(Failure::Api(error)) => return Err(error),
            Err(Failure::Table(index, error)) => {
                match excluded.get_mut(index) {
                    Some(slot @ None) if !strict => *slot = Some(error.to_string()),
                    _ => return Err(error),
                }
                tracing::debug!(%error, "leaving a table out of an Influx write");
            }
            Err(Failure::Db(error)) => match retry_kind(&error) {
                Some(stale) if attempt < MAX_ATTEMPTS => {
                    tracing::debug!(%error, attempt, "retrying an Influx write");
                    if stale {
                        api.forget(schema);
                    }
                    attempt += 1;
                }
                _ => return Err(from_db(error)),
            },
        }
    }
}

/// What a table's known shape lets through: the layouts left out (type conflicts, the column
/// limit) and the columns to add for the rest.
struct Verdict {
    skipped: Vec<bool>,
    missing: Vec<usize>,
}

/// Judges `table` against its known `shape` (empty for a table yet to be made).
fn judge(
    api: &InfluxApi,
    table: &TablePlan<'_>,
    shape: &TableShape,
    strict: bool,
    rejected: &mut Rejections,
) -> Result<Verdict, ApiError> {
    let mut skipped = vec![false; table.layouts.len()];
    if let Some(error) = table.time_conflict(shape) {
        if strict {
            return Err(error);
        }
        rejected.add(table.rows.len(), || error.to_string(), false);
        skipped.fill(true);
        return Ok(Verdict {
            skipped,
            missing: Vec::new(),
        });
    }
    let conflicts = table.conflicts(shape);
    for (layout, skip) in table.layouts.iter().zip(skipped.iter_mut()) {
        if let Some((p, kept)) = layout
            .positions
            .iter()
            .find_map(|&p| conflicts[p].map(|kept| (p, kept)))
        {
            let error = || table.conflict_error(p, kept);
            if strict {
                return Err(error());
            }
            rejected.add(layout.rows, || error().to_string(), false);
            *skip = true;
        }
    }
    let mut used = vec![false; table.columns.len()];
    for (layout, _) in table.layouts.iter().zip(&skipped).filter(|(_, s)| !**s) {
        for &p in &layout.positions {
            used[p] = true;
        }
    }
    let missing: Vec<usize> = (0..table.columns.len())
        .filter(|&p| used[p] && shape.get(&table.columns[p].name).is_none())
        .collect();
    let has_time = usize::from(!TablePlan::lacks_time(shape));
    let width = shape.columns.len() + (1 - has_time) + missing.len();
    let limit = api.config.max_columns_per_table;
    if !missing.is_empty() && width > limit {
        let error = ApiError::Invalid(format!(
            "measurement {:?} would have {width} columns, more than [influx] \
             max_columns_per_table ({limit}); its points with new tag or field keys are \
             rejected: store tags in one jsonb column ([influx] tags_as_jsonb = true), write \
             fewer distinct keys, or raise the limit (PostgreSQL allows 1600)",
            table.name
        ));
        if strict {
            return Err(error);
        }
        let is_missing = |p: &usize| missing.contains(p);
        for (layout, skip) in table.layouts.iter().zip(skipped.iter_mut()) {
            if !*skip && layout.positions.iter().any(is_missing) {
                rejected.add(layout.rows, || error.to_string(), false);
                *skip = true;
            }
        }
        return Ok(Verdict {
            skipped,
            missing: Vec::new(),
        });
    }
    Ok(Verdict { skipped, missing })
}

/// One attempt: the schema work the cache says is needed, the COPYs, and COMMIT; the cache
/// learns the new shapes only once committed.
#[allow(clippy::too_many_arguments)]
async fn write_once(
    api: &InfluxApi,
    schema: &str,
    access: Access,
    plan: &Plan<'_>,
    batch: &Batch<'_>,
    excluded: &[Option<String>],
    strict: bool,
    chunk: &mut BytesMut,
) -> Result<Outcome, Failure> {
    let mut outcome = Outcome::default();
    let schema_known = api.shapes.has_schema(schema);
    let mut verdicts: Vec<Option<Verdict>> = Vec::with_capacity(plan.tables.len());
    // Each table's rejections, replaced when a table is judged again against the catalog.
    let mut table_rejected: Vec<Rejections> = Vec::with_capacity(plan.tables.len());
    table_rejected.resize_with(plan.tables.len(), Rejections::default);
    let mut unsure = Vec::new();
    let merge = api.config.duplicates == Duplicates::Merge;
    // Whether each table merges duplicates (it has the series column).
    let mut merges: Vec<bool> = vec![false; plan.tables.len()];
    let mut conn = api.pool.get().await.map_err(from_pool)?;
    api.ensure_catalog(&mut conn).await?;
    // Retention: points older than the cutoff are not written; partitions for the days of the
    // others must exist.
    let retention = api.retention_of(&mut conn, schema).await?;
    let cutoff = retention.map(|r| retention::now_ns().saturating_sub(retention::retention_ns(r)));
    let times: Vec<TableTimes> = plan
        .tables
        .iter()
        .map(|table| TableTimes::of(table, batch, cutoff))
        .collect();
    for (index, table) in plan.tables.iter().enumerate() {
        if excluded[index].is_some() {
            verdicts.push(None);
            continue;
        }
        match api.shapes.table(schema, table.name) {
            Some(shape) => {
                let verdict = judge(api, table, &shape, strict, &mut table_rejected[index])?;
                let days_missing = shape
                    .partitions
                    .as_ref()
                    .is_some_and(|known| !times[index].days.is_subset(known));
                if !verdict.missing.is_empty() || TablePlan::lacks_time(&shape) || days_missing {
                    unsure.push(index);
                }
                merges[index] = shape.merges();
                verdicts.push(Some(verdict));
            }
            None => {
                unsure.push(index);
                verdicts.push(None);
            }
        }
    }
    // Tables locked in name order, so two writers changing the same tables cannot deadlock
    // on the advisory locks.
    unsure.sort_by_key(|&index| plan.tables[index].name);

    let mut tx = conn.transaction()?;
    let mut learned: Vec<(&str, TableShape)> = Vec::with_capacity(unsure.len());
    if !schema_known {
        match catalog::claim_schema(&mut tx, schema, access).await {
            Ok(()) => {}
            Err(ClaimError::Refused(error)) => return Err(Failure::Api(error)),
            Err(ClaimError::Db(error)) => return Err(Failure::Db(error)),
        }
    }
    for &index in &unsure {
        let table = &plan.tables[index];
        ddl::lock(&mut tx, ddl::lock_key(schema, table.name)).await?;
        let existing = ddl::read_table(&mut tx, schema, table.name).await?;
        let shape = match existing {
            Some(existing) if !existing.owned => {
                return Err(Failure::Api(catalog::not_owned(schema, table.name)));
            }
            Some(existing) => Some(existing.shape),
            None => None,
        };
        // Judged again against the catalog: the cache may have been behind.
        let empty = TableShape::default();
        table_rejected[index] = Rejections::default();
        let verdict = judge(
            api,
            table,
            shape.as_ref().unwrap_or(&empty),
            strict,
            &mut table_rejected[index],
        )?;
        let writes_rows = verdict.skipped.iter().any(|s| !s);
        let new_shape = if shape.is_none() && !writes_rows {
            None
        } else {
            let result = ddl::extend_table(
                &mut tx,
                schema,
                table,
                shape.clone(),
                &verdict.missing,
                merge,
                retention.is_some(),
            )
            .await;
            match result {
                Ok(shape) => Some(shape),
                Err(error) => return Err(table_failure(index, table, Phase::Schema, error)),
            }
        };
        if let Some(mut shape) = new_shape.or(shape) {
            if let Some(known) = shape.partitions.as_mut() {
                let days: Vec<i64> = times[index].days.difference(known).copied().collect();
                if days.len() > retention::MAX_NEW_PARTITIONS {
                    let error = ApiError::Invalid(format!(
                        "the points of measurement {:?} span {} days without partitions; at most \
                         {} daily partitions are made by one write: send points of fewer days",
                        table.name,
                        days.len(),
                        retention::MAX_NEW_PARTITIONS
                    ));
                    return Err(Failure::Table(index, error));
                }
                if let Err(error) =
                    retention::create_partitions(&mut tx, schema, table.name, &days).await
                {
                    return Err(table_failure(index, table, Phase::Schema, error));
                }
                known.extend(days);
            }
            // A table merges when it was made to (duplicates = "merge" when it was created);
            // one made with "keep", or before merging existed, is appended to.
            merges[index] = shape.merges();
            learned.push((table.name, shape));
        }
        verdicts[index] = Some(verdict);
    }
    for (index, table) in plan.tables.iter().enumerate() {
        let Some(Some(verdict)) = verdicts.get(index) else {
            continue;
        };
        let old = times[index].old_rows(&verdict.skipped);
        if old > 0 {
            let reason = || {
                format!(
                    "points beyond retention policy: {old} points of measurement {:?} are older \
                     than the database's retention ({})",
                    table.name,
                    crate::policy::go_duration(retention)
                )
            };
            if strict {
                return Err(Failure::Api(ApiError::Invalid(reason())));
            }
            table_rejected[index].add(old, reason, false);
        }
        let rows = copy::Rows {
            skipped: &verdict.skipped,
            min_time: cutoff.unwrap_or(i64::MIN),
        };
        let result = if merges[index] {
            merge::write_table(&mut tx, schema, index, table, batch, rows, chunk).await
        } else {
            let target = ddl::qualified(schema, table.name);
            let extra = copy::Extra::default();
            copy::copy_table(&mut tx, &target, table, batch, rows, extra, chunk).await
        };
        match result {
            Ok(rows) => outcome.written += rows,
            Err(error) => return Err(table_failure(index, table, Phase::Rows, error)),
        }
    }
    outcome.lsn = match api.lsn.report {
        true => tx.commit_lsn().await?,
        false => tx.commit().await.map(|()| None)?,
    };
    drop(conn);
    for rejected in table_rejected {
        outcome.rejected.extend(rejected);
    }
    if !schema_known {
        api.shapes.add_schema(schema);
    }
    for (table, shape) in learned {
        api.shapes.put_table(schema, table, shape);
    }
    Ok(outcome)
}

/// The failure for an error on table `index`: the table refused for what the request holds,
/// or a database error.
fn table_failure(
    index: usize,
    table: &TablePlan<'_>,
    phase: Phase,
    error: sluice_pg::Error,
) -> Failure {
    if error.is_connection_lost() {
        return Failure::Db(error);
    }
    match refused(table.name, phase, &error) {
        Some(api_error @ ApiError::Forbidden(_)) => Failure::Api(api_error),
        Some(api_error) => Failure::Table(index, api_error),
        None => Failure::Db(error),
    }
}

/// The times of a table's rows against the retention: the days of the rows to keep, and how
/// many rows of each layout are older than the cutoff.
struct TableTimes {
    days: std::collections::BTreeSet<i64>,
    old_by_layout: Vec<usize>,
}

impl TableTimes {
    /// The days are gathered whatever the retention: a table made partitioned under one keeps
    /// needing a partition for each day after the retention is lifted.
    fn of(table: &TablePlan<'_>, batch: &Batch<'_>, cutoff: Option<i64>) -> TableTimes {
        let mut times = TableTimes {
            days: Default::default(),
            old_by_layout: vec![0; table.layouts.len()],
        };
        let cutoff = cutoff.unwrap_or(i64::MIN);
        let mut last_day = None;
        for &(index, layout) in &table.rows {
            let Some(time) = batch.point(index as usize).map(|p| p.time()) else {
                continue;
            };
            if time < cutoff {
                if let Some(old) = times.old_by_layout.get_mut(layout as usize) {
                    *old += 1;
                }
                continue;
            }
            let day = retention::day_of(time);
            if last_day != Some(day) {
                times.days.insert(day);
                last_day = Some(day);
            }
        }
        times
    }

    /// The rows older than the cutoff in layouts not `skipped`.
    fn old_rows(&self, skipped: &[bool]) -> usize {
        self.old_by_layout
            .iter()
            .zip(skipped)
            .filter(|(_, skip)| !**skip)
            .map(|(old, _)| old)
            .sum()
    }
}
