//! Streaming a read's rows from one pooled connection, again on the primary when a replica is
//! gone; a call's answer waits, up to a bound, for what its function set for it.

use super::*;
use sluice_pg::pool::PooledConnection;

/// How one attempt at a read ended.
enum Attempt {
    /// Answered (rows or an error): nothing more to do.
    Done,
    /// The replica was gone before anything was sent: the sender is back for another attempt.
    ReplicaGone(ChunkSender<ReadHead, ApiError>),
    /// The replica had not replayed the position the read named (its guard said so): nothing
    /// was sent, the read goes to the primary.
    NotReplayed(ChunkSender<ReadHead, ApiError>),
}

/// Ends an attempt on an error met before anything was sent: on a replica whose session is
/// gone (or that cannot serve), the read is handed back to run on the primary (a read changes
/// nothing, so running it again is safe); otherwise the error is the answer.
async fn fail_early(
    sender: ChunkSender<ReadHead, ApiError>,
    error: &sluice_pg::Error,
    on_replica: bool,
) -> Attempt {
    if on_replica && error.is_unavailable() {
        return Attempt::ReplicaGone(sender);
    }
    let _ = sender.fail(ApiError::from_pg(error, false)).await;
    Attempt::Done
}

/// Where the rows come from: streamed from the connection, or collected already.
enum Source<'c> {
    Stream(sluice_pg::RowStream<'c>),
    Collected(std::vec::IntoIter<sluice_pg::RowBlock>),
}

impl Source<'_> {
    async fn next_block(&mut self) -> sluice_pg::Result<Option<sluice_pg::RowBlock>> {
        match self {
            Source::Stream(stream) => stream.next_block().await,
            Source::Collected(blocks) => Ok(blocks.next()),
        }
    }

    /// The rows of the statements queued after the streamed one (none for collected rows).
    async fn trailing(self) -> sluice_pg::Result<Vec<sluice_pg::Rows>> {
        match self {
            Source::Stream(stream) => stream.trailing().await,
            Source::Collected(_) => Ok(Vec::new()),
        }
    }
}

/// How much of a call's streamed answer waits for what its function set for the answer
/// (`response.status`, `response.headers`, read after the rows): four chunks. Most answers of
/// a call fit whole and are shaped as PostgREST shapes them; past it the rows stream with the
/// pre-request function's shaping, so memory stays bounded (256 KiB a request at most, the
/// size of the COPY pieces a bulk insert holds) and a large answer's first byte waits only
/// for that much.
const SHAPING_BOUND: usize = 4 * CHUNK;

/// Runs the job on a pooled connection (the replica's when it has a lease, the primary's when
/// there is none or the replica turns out to be gone) and streams its rows through `sender`.
/// The lease is held until the last row is sent.
pub(super) async fn produce(
    pool: sluice_pg::Pool,
    pools: Option<Arc<sluice_pg::pool::ReadPools>>,
    mut lease: Option<ReplicaLease>,
    job: ReadJob,
    mut sender: ChunkSender<ReadHead, ApiError>,
) {
    loop {
        let acquired = match &lease {
            Some(lease) => lease.pool().get().await,
            None => pool.get().await,
        };
        let conn = match acquired {
            Ok(conn) => conn,
            Err(error) => match lease.take() {
                Some(gone) => {
                    tracing::debug!(replica = gone.index(), %error,
                        "replica has no connection to give; reading from the primary");
                    gone.mark_unreachable();
                    continue;
                }
                None => {
                    let _ = sender.fail(ApiError::from_pool(&error)).await;
                    return;
                }
            },
        };
        match produce_on(conn, &job, sender, lease.is_some()).await {
            Attempt::Done => return,
            Attempt::ReplicaGone(back) => {
                if let Some(gone) = lease.take() {
                    tracing::debug!(
                        replica = gone.index(),
                        "replica gone; reading from the primary"
                    );
                    gone.mark_unreachable();
                }
                sender = back;
            }
            Attempt::NotReplayed(back) => {
                if let (Some(behind), Some(pools)) = (lease.take(), &pools) {
                    pools.note_behind(&behind);
                }
                sender = back;
            }
        }
    }
}

/// One attempt at the job on `conn`.
async fn produce_on(
    mut conn: PooledConnection,
    job: &ReadJob,
    sender: ChunkSender<ReadHead, ApiError>,
    on_replica: bool,
) -> Attempt {
    let mut sender = sender;
    // The statement's columns (described once per connection, then cached with the statement)
    // and the JSON kinds of their types, before the rows hold the connection.
    let statement = match conn.prepare(&job.main.sql).await {
        Ok(statement) => statement,
        Err(error) => return fail_early(sender, &error, on_replica).await,
    };
    let oids: Vec<u32> = statement.columns().iter().map(|c| c.type_oid()).collect();
    let kinds = match sluice_formats::kind::column_kinds(&mut conn, &oids).await {
        Ok(kinds) => kinds,
        Err(error) => return fail_early(sender, &error, on_replica).await,
    };
    let json_like = job.representation != Representation::Csv && job.shape != Shape::Media;
    let records: Vec<Option<RecordLayout>> = statement
        .columns()
        .iter()
        .map(|column| {
            json_like
                .then(|| record_layout(&conn, column.type_oid()))
                .flatten()
        })
        .collect();
    let specs: Vec<ColumnSpec> = statement
        .columns()
        .iter()
        .zip(kinds)
        .zip(&records)
        .map(|((column, kind), record)| {
            let kind = match record {
                Some(_) => ColumnKind::scalar(Scalar::Json),
                None => rest_kind(column.type_oid(), kind),
            };
            ColumnSpec::new(column.name(), kind)
        })
        .collect();
    let mut encoder = response::encoder(job.representation, &specs);
    let has_records = records.iter().any(Option::is_some);
    let mut converted: Vec<Vec<u8>> = vec![Vec::new(); records.len()];
    let mut scratch = Vec::new();

    let context_params: Vec<_> = job.context.iter().map(Statement::driver_params).collect();
    let count_params: Vec<_> = job.counts.iter().map(Statement::driver_params).collect();
    let main_params = job.main.driver_params();
    // On a replica, a read that names a commit position runs behind the guard that the replica
    // has replayed it (first, so the read's snapshot is taken after it).
    let guard = job.named.filter(|_| on_replica).map(|lsn| lsn.to_string());
    // A call that may write reads its commit position after the commit, in a later group.
    let report = job.report_commit && !on_replica;
    // A call that may roll back is one explicit transaction, ended once its rows are counted.
    let explicit = job.ending.is_some();
    let mode = if report && !explicit {
        SyncMode::Groups
    } else {
        SyncMode::Once
    };
    let mut batch = match conn.pipeline(mode).await {
        Ok(batch) => batch,
        Err(error) => return fail_early(sender, &error, on_replica).await,
    };
    let mut queued = Ok(());
    if let Some(ending) = &job.ending {
        queued = batch.query(ending.begin, &[]).map(drop);
    }
    // Before anything takes a snapshot (the guard's too).
    if let Some(set) = job.set_isolation {
        queued = queued.and_then(|()| batch.query(set, &[]).map(drop));
    }
    // The results of BEGIN and of the isolation level's statement, read away first.
    let leading = usize::from(explicit) + usize::from(job.set_isolation.is_some());
    if let Some(lsn) = &guard {
        queued = queued.and_then(|()| {
            batch
                .query(
                    sluice_pg::lsn::REPLAYED_SQL,
                    &[lsn as &dyn sluice_pg::ToSql],
                )
                .map(drop)
        });
    }
    for (context, params) in job.context.iter().zip(&context_params) {
        queued = queued.and_then(|()| batch.query(&context.sql, params).map(drop));
    }
    for (count, params) in job.counts.iter().zip(&count_params) {
        queued = queued.and_then(|()| batch.query(&count.sql, params).map(drop));
    }
    queued = queued.and_then(|()| batch.query(&job.main.sql, &main_params).map(drop));
    // A streamed call reads what its function set after its rows, in the same transaction.
    let single_row_call =
        matches!(job.shape, Shape::Scalar | Shape::OutObject | Shape::Media) || report || explicit;
    let trails = job.shaped_after && !single_row_call;
    if trails {
        queued = queued.and_then(|()| {
            batch
                .query(crate::api::context::RESPONSE_SETTINGS, &[])
                .map(drop)
        });
    }
    if let Err(error) = queued {
        let _ = sender.fail(ApiError::from_pg(&error, false)).await;
        return Attempt::Done;
    }
    // A call answering one row, or one that may write and reports its commit, reads what the
    // function set for the answer (`response.headers`, `response.status`) after it, in the
    // same transaction; its rows are collected first. Other results stream: a call's wait for
    // the settings read after them up to [`SHAPING_BOUND`]; a table's are shaped by the
    // pre-request function only.
    let mut commit_lsn = None;
    let (before, mut rows, shaping) = if single_row_call {
        let mut queued = batch
            .query(crate::api::context::RESPONSE_SETTINGS, &[])
            .map(drop);
        let position = match report && !explicit {
            true => match queued.and_then(|()| batch.commit_position()) {
                Ok(at) => {
                    queued = Ok(());
                    Some(at)
                }
                Err(error) => {
                    queued = Err(error);
                    None
                }
            },
            false => None,
        };
        let results = match queued.map(|()| batch.run()) {
            Ok(run) => run.await,
            Err(error) => Err(error),
        };
        let mut results = match results {
            Ok(results) => results,
            Err(error) => {
                roll_back(&mut conn, explicit).await;
                return fail_early(sender, &error, on_replica).await;
            }
        };
        results.drain(..leading.min(results.len()));
        if let Some(at) = position {
            commit_lsn = sluice_pg::Lsn::from_commit_result(results.get(at));
            results.truncate(at);
        }
        if guard.is_some() {
            match results.first() {
                Some(Ok(rows)) if !sluice_pg::lsn::replayed(rows) => {
                    return Attempt::NotReplayed(sender);
                }
                _ => {}
            }
        }
        if let Some(Err(error)) = crate::api::write::failed_statement(&results).map(|i| &results[i])
        {
            roll_back(&mut conn, explicit).await;
            return fail_early(sender, error, on_replica).await;
        }
        if guard.is_some() && !results.is_empty() {
            drop(results.remove(0));
        }
        let settings = results.pop().and_then(Result::ok);
        let main = results.pop().and_then(Result::ok);
        let before: Vec<sluice_pg::Rows> = results.into_iter().filter_map(Result::ok).collect();
        let shaping = match &settings {
            Some(rows) => crate::api::context::Shaping::from_settings(rows),
            None => Ok(crate::api::context::Shaping::default()),
        };
        let shaping = match shaping {
            Ok(shaping) => shaping,
            Err(error) => {
                roll_back(&mut conn, explicit).await;
                let _ = sender.fail(error).await;
                return Attempt::Done;
            }
        };
        let Some(main) = main else {
            roll_back(&mut conn, explicit).await;
            let _ = sender
                .fail(ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "PGRSTX00",
                    "The call ended without an answer",
                ))
                .await;
            return Attempt::Done;
        };
        if let Some(ending) = job.ending {
            match end_call(&mut conn, job, ending, main.len() as u64, report).await {
                Ok(lsn) => commit_lsn = lsn,
                Err(error) => {
                    let _ = sender.fail(error).await;
                    return Attempt::Done;
                }
            }
        }
        (
            before,
            Source::Collected(main.into_blocks().into_iter()),
            shaping,
        )
    } else {
        let (mut before, rows) = match batch.run_stream_then(usize::from(trails)).await {
            Ok(result) => result,
            Err(error) => return fail_early(sender, &error, on_replica).await,
        };
        before.drain(..leading.min(before.len()));
        if guard.is_some() {
            if !before.first().is_some_and(sluice_pg::lsn::replayed) {
                // Dropping the stream reads the rest of its rows away.
                drop(rows);
                return Attempt::NotReplayed(sender);
            }
            before.remove(0);
        }
        let shaping = match job.context.get(1).and(before.get(1)) {
            Some(rows) => match crate::api::context::Shaping::from_pre_request(rows) {
                Ok(shaping) => shaping,
                Err(error) => {
                    let _ = sender.fail(error).await;
                    return Attempt::Done;
                }
            },
            None => crate::api::context::Shaping::default(),
        };
        (before, Source::Stream(rows), shaping)
    };
    let mut total = total_of(job, &before);
    if let Some(error) = past_the_end(job, total) {
        let _ = sender.fail(error).await;
        return Attempt::Done;
    }
    let single = job.representation == Representation::Object;
    let values = matches!(job.shape, Shape::Scalar | Shape::ScalarSet);
    let media = job.shape == Shape::Media;
    // A handler's answer: the rows its aggregate took (one value of a function's).
    let mut media_rows: Option<u64> = None;
    let value_kind = specs.first().map(|s| s.kind);
    let mut buf: Vec<u8> = Vec::with_capacity(CHUNK + CHUNK / 4);
    if job.shape == Shape::ScalarSet {
        buf.push(b'[');
    } else if !single && !values && !media {
        encoder.begin(&mut buf);
    }
    let mut value_rows: u64 = 0;
    // Every row read; with `count_rows`, those outside the page are skipped.
    let mut read: u64 = 0;
    let page_end = job.limit.map(|limit| job.offset.saturating_add(limit));
    // Rows past the first when one object was asked for.
    let mut surplus: u64 = 0;
    loop {
        let block = match rows.next_block().await {
            Ok(Some(block)) => block,
            Ok(None) => break,
            Err(error) if !sender.started() => {
                return fail_early(sender, &error, on_replica).await;
            }
            Err(error) => {
                if let Err(error) = sender.fail(ApiError::from_pg(&error, false)).await {
                    tracing::warn!(%error, "a REST read failed mid-stream; the response is cut short");
                }
                return Attempt::Done;
            }
        };
        for row in block.iter() {
            let index = read;
            read += 1;
            if job.count_rows && (index < job.offset || page_end.is_some_and(|end| index >= end)) {
                continue;
            }
            if media {
                if media_rows.is_none() {
                    media_rows = Some(media_value(job, &row, &mut buf));
                }
                continue;
            }
            if values {
                if job.shape == Shape::Scalar && value_rows >= 1 {
                    continue;
                }
                if value_rows > 0 {
                    buf.push(b',');
                }
                if let Some(kind) = value_kind {
                    sluice_formats::encode::write_json_value(
                        &mut buf,
                        kind,
                        row.raw(0),
                        &mut scratch,
                    );
                }
                value_rows += 1;
                continue;
            }
            if single && encoder.rows() >= 1 {
                // Counted to the end, for the error's count (the rows are read either way).
                surplus += 1;
                continue;
            }
            if has_records {
                for (i, record) in records.iter().enumerate() {
                    if let (Some(layout), Some(raw), Some(slot)) =
                        (record, row.raw(i), converted.get_mut(i))
                    {
                        slot.clear();
                        layout.write(slot, raw, &mut scratch);
                    }
                }
                encoder.row(
                    (0..row.len()).map(|i| match (records.get(i), converted.get(i)) {
                        (Some(Some(_)), Some(json)) if row.raw(i).is_some() => Some(&json[..]),
                        _ => row.raw(i),
                    }),
                    &mut buf,
                );
            } else {
                encoder.row((0..row.len()).map(|i| row.raw(i)), &mut buf);
            }
            // A call's answer waits (up to the bound) for what its function set.
            let waits = trails && !sender.started();
            if buf.len() >= if waits { SHAPING_BOUND } else { CHUNK } && !job.count_rows {
                if !sender.started() {
                    sender.set_head(ReadHead {
                        shaping: shaping.clone(),
                        lsn: commit_lsn,
                        ..head(job, None, total)
                    });
                }
                let chunk = Bytes::from(std::mem::replace(
                    &mut buf,
                    Vec::with_capacity(CHUNK + CHUNK / 4),
                ));
                if !sender.send(chunk).await {
                    return Attempt::Done;
                }
            }
        }
    }
    let shaping = match trails {
        true => match shaped_after(rows, shaping, sender.started()).await {
            Ok(shaping) => shaping,
            Err(error) => {
                let _ = sender.fail(error).await;
                return Attempt::Done;
            }
        },
        false => shaping,
    };
    if job.count_rows {
        total = Some(read);
        if let Some(error) = past_the_end(job, total) {
            let _ = sender.fail(error).await;
            return Attempt::Done;
        }
    }
    let rows_sent = match (media, values) {
        (true, _) => media_rows.unwrap_or(0),
        (false, true) => value_rows,
        (false, false) => encoder.rows() + surplus,
    };
    if media {
        // The value alone; none (a NULL, or no row) is an empty body.
    } else if values {
        match job.shape {
            Shape::ScalarSet => buf.push(b']'),
            _ if value_rows == 0 => buf.extend_from_slice(b"null"),
            _ => {}
        }
    } else if job.shape == Shape::OutObject && rows_sent == 0 {
        // OUT parameters whose row a filter (or the page) left out: PostgREST's null.
        buf.extend_from_slice(b"null");
    } else if single {
        if rows_sent != 1 {
            let _ = sender.fail(not_single(rows_sent)).await;
            return Attempt::Done;
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
        }
    } else {
        encoder.finish(&mut buf);
    }
    if !sender.started() {
        sender.set_head(ReadHead {
            shaping,
            lsn: commit_lsn,
            ..head(job, Some(rows_sent), total)
        });
    }
    sender.finish(Bytes::from(buf)).await;
    Attempt::Done
}

/// What a streamed call's function set for the answer, read after its rows; `known` (the
/// pre-request function's) when the answer has started, which a warning notes if the
/// function set something else. An error of the statements after the rows, or of the commit,
/// is returned whether or not the answer started.
async fn shaped_after(
    rows: Source<'_>,
    known: crate::api::context::Shaping,
    started: bool,
) -> Result<crate::api::context::Shaping, ApiError> {
    // A statement or the commit failing after the rows is the answer's error, even once it has
    // started (the stream is cut short: nothing was kept).
    let read = match rows.trailing().await {
        Ok(settings) => match settings.first() {
            Some(settings) => crate::api::context::Shaping::from_settings(settings),
            None => Ok(known.clone()),
        },
        Err(error) => return Err(ApiError::from_pg(&error, false)),
    };
    if !started {
        return read;
    }
    if read.as_ref() != Ok(&known) {
        tracing::warn!(
            bound = SHAPING_BOUND,
            "a call's function set response.headers or response.status, but its answer \
             outgrew the bound up to which it waits for them and was streamed without them"
        );
    }
    Ok(known)
}

/// Appends a handler's value (the row's first column; a `bytea`'s bytes) to `buf`; gives the
/// number of rows its aggregate took (the second column), 1 for a function's value.
fn media_value(job: &ReadJob, row: &sluice_pg::Row<'_>, buf: &mut Vec<u8>) -> u64 {
    let bytea = job.media.as_ref().is_some_and(|answer| answer.bytea);
    response::media::push_value(row.raw(0), row.raw(1), bytea, buf)
}

/// Rolls back the explicit transaction of a call that failed (nothing to do for the others:
/// theirs was implicit). A connection that cannot is broken and will not be reused.
async fn roll_back(conn: &mut PooledConnection, explicit: bool) {
    if explicit && let Err(error) = conn.batch_execute("ROLLBACK").await {
        tracing::debug!(%error, "rolling back a checked call failed");
    }
}

/// Ends a call's explicit transaction on its `rows` rows (those of the page when the statement
/// leaves the page out): rolled back with the check's error, else as `ending` says, reading the
/// commit's position when writes report it.
async fn end_call(
    conn: &mut PooledConnection,
    job: &ReadJob,
    ending: CallEnding,
    rows: u64,
    report: bool,
) -> Result<Option<sluice_pg::Lsn>, ApiError> {
    let rows = if job.count_rows {
        let left = rows.saturating_sub(job.offset);
        job.limit.map_or(left, |limit| left.min(limit))
    } else {
        rows
    };
    if let Some(error) = crate::api::write::failed_check(ending.checks, rows) {
        crate::api::end_transaction(conn, false, false).await?;
        return Err(error);
    }
    crate::api::end_transaction(conn, ending.commit, report).await
}

/// 416 PGRST103 for an offset at or past the end of a counted result.
fn past_the_end(job: &ReadJob, total: Option<u64>) -> Option<ApiError> {
    let total = total?;
    (job.offset > 0 && job.offset >= total).then(|| {
        ApiError::new(
            StatusCode::RANGE_NOT_SATISFIABLE,
            "PGRST103",
            "Requested range not satisfiable",
        )
        .details(format!(
            "An offset of {} was requested, but there are only {total} rows.",
            job.offset
        ))
        .content_range(format!("*/{total}"))
    })
}
