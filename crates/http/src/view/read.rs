//! GET and DELETE of views: rows streamed in chunks as they arrive (CSJ, CSV, JSON, JSON Lines,
//! json-csv) with backpressure, single objects, and deletes.

use crate::mount::{Response, ResponseBody, full};
use crate::stream::{self, ChunkSender, Outcome};
use crate::view::accept;
pub use crate::view::accept::Negotiated;
use crate::view::error::ApiError;
use crate::view::json::{ObjectLayout, ObjectWriter, column_kinds};
use crate::view::model::Return;
use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use sluice_formats::{ColumnKind, ColumnSpec, Encoder, Format};
use sluice_pg::pool::Multiplexer;
use sluice_pg::{Pool, ToSql};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::{Mutex, OnceLock};

pub use crate::stream::CHUNK;

/// The format for `accept` (see [`crate::view::accept`]); a header that is not text is ignored.
pub fn negotiate(accept: Option<&HeaderValue>) -> Negotiated {
    accept::negotiate(accept.and_then(|a| a.to_str().ok()))
}

/// A statement to run and its parameters (text, `None` for NULL).
#[derive(Debug, Clone)]
pub struct Query {
    /// The statement.
    pub sql: String,
    /// Its parameters as text, `None` for NULL.
    pub params: Vec<Option<String>>,
    /// The parameters are the path's captures, not listed `arguments`: a statement that uses
    /// fewer of them (`SELECT ... WHERE tag = $1` on a path with two captures) gets the first ones.
    pub captures_only: bool,
}

impl Query {
    fn params(&self) -> Vec<&dyn ToSql> {
        self.params.iter().map(|p| p as &dyn ToSql).collect()
    }

    /// Fits implicit capture parameters to the prepared statement's count.
    fn fit(&mut self, statement: &sluice_pg::Statement) {
        if self.captures_only {
            self.params.truncate(statement.param_types().len());
        }
    }
}

/// How rows are laid out in the answer.
#[derive(Debug, Clone, Copy)]
enum Layout {
    Rows(Negotiated),
    JsonCsv,
}

/// A GET of `return: "csj"` or `"json-csv"`: the rows streamed as they arrive. `lease` (a
/// replica's, when `pool` is its pool) is held until the last row is sent.
pub async fn get_rows(
    pool: &Pool,
    query: Query,
    returns: Return,
    accept: Option<&HeaderValue>,
    lease: Option<sluice_pg::pool::ReplicaLease>,
    guard: Option<sluice_pg::Lsn>,
) -> Response {
    let (layout, content_type) = match returns {
        Return::JsonCsv => (Layout::JsonCsv, "application/json"),
        _ => {
            let negotiated = negotiate(accept);
            (Layout::Rows(negotiated), negotiated.content_type)
        }
    };
    let (sender, receiver) = stream::channel::<(), ApiError>();
    let pool = pool.clone();
    tokio::spawn(async move {
        produce(pool, query, layout, sender, guard).await;
        drop(lease);
    });
    let body: ResponseBody = match receiver.start().await {
        Outcome::Body((), body) => body,
        Outcome::Failed(error) => return error.into_response(),
        Outcome::Vanished => {
            return ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "the query ended without an answer",
            )
            .into_response();
        }
    };
    let mut response = Response::new(body);
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// A HEAD of `return: "csj"` or `"json-csv"`: the status and `Content-Type` a GET would answer
/// with, without running the query. The statement is prepared (described), so an error in it
/// (an undefined table, a syntax error) answers the status a GET would; errors that depend on
/// the parameters' values or appear only when it runs (insufficient privilege, bad input) are
/// not seen, and there is no `Content-Length` (the size is unknown without the rows).
pub async fn head_rows(
    pool: &Pool,
    query: &Query,
    returns: Return,
    accept: Option<&HeaderValue>,
) -> Response {
    let content_type = match returns {
        Return::JsonCsv => "application/json",
        _ => negotiate(accept).content_type,
    };
    let mut conn = match pool.get().await {
        Ok(conn) => conn,
        Err(error) => return ApiError::from_pool(&error).into_response(),
    };
    if let Err(error) = conn.prepare(&query.sql).await {
        return ApiError::from_pg(&error).into_response();
    }
    let mut response = Response::new(crate::mount::empty());
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// Runs the query and encodes its rows, sending chunks as they fill. With `guard`, only on a
/// server that has replayed the WAL that far ([`not_replayed`] otherwise).
async fn produce(
    pool: Pool,
    mut query: Query,
    layout: Layout,
    mut sender: ChunkSender<(), ApiError>,
    guard: Option<sluice_pg::Lsn>,
) {
    sender.set_head(());
    let mut conn = match pool.get().await {
        Ok(conn) => conn,
        Err(error) => {
            let _ = sender.fail(ApiError::from_pool(&error)).await;
            return;
        }
    };
    let prepared = match conn.prepare(&query.sql).await {
        Ok(statement) => statement,
        Err(error) => {
            let _ = sender.fail(ApiError::from_pg(&error)).await;
            return;
        }
    };
    query.fit(&prepared);
    let columns = prepared.columns();
    let column_kinds = match column_kinds(&mut conn, columns).await {
        Ok(k) => k,
        Err(error) => {
            let _ = sender.fail(ApiError::from_pg(&error)).await;
            return;
        }
    };
    let mut encoder = RowEncoder::new(layout, columns, column_kinds);
    let params = query.params();
    let mut stream = match stream_guarded(&mut conn, &query.sql, &params, guard).await {
        Ok(Some(stream)) => stream,
        Ok(None) => {
            let _ = sender.fail(not_replayed()).await;
            return;
        }
        Err(error) => {
            let _ = sender.fail(ApiError::from_pg(&error)).await;
            return;
        }
    };
    let mut buf: Vec<u8> = Vec::with_capacity(CHUNK + CHUNK / 4);
    encoder.begin(&mut buf);
    loop {
        let block = match stream.next_block().await {
            Ok(Some(block)) => block,
            Ok(None) => break,
            Err(error) => {
                if let Err(error) = sender.fail(ApiError::from_pg(&error)).await {
                    tracing::warn!(error = %error.message, sql = %query.sql, "a view's rows failed mid-stream; the response is cut short");
                }
                return;
            }
        };
        for row in block.iter() {
            encoder.row(row, &mut buf);
            if buf.len() >= CHUNK {
                let chunk = Bytes::from(std::mem::replace(
                    &mut buf,
                    Vec::with_capacity(CHUNK + CHUNK / 4),
                ));
                if !sender.send(chunk).await {
                    return; // The client went away; dropping the stream ends the query.
                }
            }
        }
    }
    encoder.finish(&mut buf);
    sender.finish(Bytes::from(buf)).await;
}

/// `sql`'s rows as a stream; with `guard`, behind [`sluice_pg::lsn::REPLAYED_SQL`] in the same
/// implicit transaction and round trip (`None`: the server has not replayed that far, and the
/// rows are dropped unread).
async fn stream_guarded<'c>(
    conn: &'c mut sluice_pg::Connection,
    sql: &str,
    params: &[&dyn ToSql],
    guard: Option<sluice_pg::Lsn>,
) -> sluice_pg::Result<Option<sluice_pg::RowStream<'c>>> {
    let Some(lsn) = guard else {
        return conn.query_stream(sql, params).await.map(Some);
    };
    let lsn = lsn.to_string();
    let mut batch = conn.pipeline(sluice_pg::SyncMode::Once).await?;
    batch.query(sluice_pg::lsn::REPLAYED_SQL, &[&lsn])?;
    batch.query(sql, params)?;
    let (before, rows) = batch.run_stream().await?;
    if before.first().is_some_and(sluice_pg::lsn::replayed) {
        Ok(Some(rows))
    } else {
        Ok(None)
    }
}

/// The code of [`not_replayed`].
pub(crate) const NOT_REPLAYED: &str = "replica_behind";

/// The error of a read whose replica had not replayed the position the request named: the mount
/// does not answer with it but reads from the primary instead.
pub(crate) fn not_replayed() -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        NOT_REPLAYED,
        "the replica has not replayed the position the request named",
    )
}

/// Rows in the negotiated format, or json-csv's `{"columns": [...], "rows": [[...], ...]}`.
enum RowEncoder {
    Rows(Encoder),
    JsonCsv {
        names: Vec<String>,
        values: Encoder,
        rows: u64,
    },
}

impl RowEncoder {
    fn new(layout: Layout, columns: &[sluice_pg::Column], kinds: Vec<ColumnKind>) -> RowEncoder {
        let specs: Vec<ColumnSpec> = columns
            .iter()
            .zip(kinds)
            .map(|(c, k)| ColumnSpec::new(c.name(), k))
            .collect();
        match layout {
            Layout::Rows(negotiated) => RowEncoder::Rows(Encoder::new(
                negotiated.format,
                &specs,
                negotiated.format.header_by_default(),
            )),
            Layout::JsonCsv => RowEncoder::JsonCsv {
                names: columns.iter().map(|c| c.name().to_owned()).collect(),
                values: Encoder::new(Format::Csj, &specs, false),
                rows: 0,
            },
        }
    }

    fn begin(&mut self, out: &mut Vec<u8>) {
        match self {
            RowEncoder::Rows(encoder) => encoder.begin(out),
            RowEncoder::JsonCsv { names, .. } => {
                out.extend_from_slice(b"{\"columns\":[");
                for (i, name) in names.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    sluice_formats::encode::write_json_string(out, name.as_bytes());
                }
                out.extend_from_slice(b"],\"rows\":[");
            }
        }
    }

    #[inline]
    fn row(&mut self, row: sluice_pg::Row<'_>, out: &mut Vec<u8>) {
        match self {
            RowEncoder::Rows(encoder) => encoder.row(row.raw_fields(), out),
            RowEncoder::JsonCsv { values, rows, .. } => {
                out.extend_from_slice(if *rows == 0 { b"\n[" } else { b",\n[" });
                values.row(row.raw_fields(), out);
                // A CSJ line is the values of a JSON array without its brackets.
                if out.last() == Some(&b'\n') {
                    out.pop();
                }
                out.push(b']');
                *rows += 1;
            }
        }
    }

    fn finish(&mut self, out: &mut Vec<u8>) {
        match self {
            RowEncoder::Rows(encoder) => encoder.finish(out),
            RowEncoder::JsonCsv { .. } => out.extend_from_slice(b"\n]}\n"),
        }
    }
}

/// A response body of chunks from the producing task; an error ends it (the connection is
/// reset, so the client sees the answer is cut short).
/// What an object GET learnt on its first run: how many parameters its statement takes and how
/// its rows are laid out.
#[derive(Debug)]
struct ObjectPlan {
    params: usize,
    layout: Arc<ObjectLayout>,
}

/// The object GETs of a mount: their plans by SQL, and the pipelining mode they run in once
/// planned (short independent statements from many requests share round trips).
#[derive(Default)]
pub struct ObjectGets {
    plans: Mutex<HashMap<String, Arc<ObjectPlan>>>,
    multiplexer: OnceLock<Option<Multiplexer>>,
}

impl ObjectGets {
    /// No pipelining mode yet: it starts with the first object GET.
    pub fn new() -> ObjectGets {
        ObjectGets::default()
    }

    fn plans(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<ObjectPlan>>> {
        self.plans
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn plan(&self, sql: &str) -> Option<Arc<ObjectPlan>> {
        self.plans().get(sql).cloned()
    }

    fn remember(&self, sql: &str, plan: ObjectPlan) {
        self.plans().insert(sql.to_owned(), Arc::new(plan));
    }

    fn forget(&self, sql: &str) {
        self.plans().remove(sql);
    }

    /// The pipelining mode over `pool`, started on first use (it needs the runtime).
    pub fn multiplexer(&self, pool: &Pool) -> Option<&Multiplexer> {
        self.multiplexer
            .get_or_init(|| {
                pool.multiplexer(pool.settings().max_size())
                    .inspect_err(|error| {
                        tracing::warn!(%error, "object GETs run without the pipelining mode")
                    })
                    .ok()
            })
            .as_ref()
    }
}

/// A GET of `return: "object"`: exactly one row as a JSON object. The first run of a statement
/// prepares it on `pool` and learns its layout; later runs go through `multiplexer` (the
/// pipelining mode over the same server's pool) when there is one.
///
/// With `guard`, the read runs only on a server that has replayed the WAL that far
/// (a 503 `replica_behind` the mount reads from the primary after, otherwise).
pub async fn get_object(
    pool: &Pool,
    multiplexer: Option<&Multiplexer>,
    gets: &ObjectGets,
    mut query: Query,
    guard: Option<sluice_pg::Lsn>,
) -> Response {
    if let (Some(plan), Some(multiplexer)) = (gets.plan(&query.sql), multiplexer) {
        let count = if query.captures_only {
            plan.params.min(query.params.len())
        } else {
            query.params.len()
        };
        let params = query.params[..count].to_vec();
        let answer = match guard {
            Some(lsn) => {
                multiplexer
                    .query_replayed(lsn, None, query.sql.clone(), params)
                    .await
            }
            None => multiplexer.query_text(query.sql.clone(), params).await,
        };
        match answer {
            Ok(rows) if plan.layout.fits(rows.columns()) => {
                return match rows.len() {
                    0 => not_found(),
                    1 => {
                        let mut writer = ObjectWriter::with_layout(plan.layout.clone());
                        let mut body = Vec::with_capacity(256);
                        if let Some(row) = rows.get(0) {
                            writer.write_row(row, &mut body);
                        }
                        body.push(b'\n');
                        json_response(StatusCode::OK, body)
                    }
                    _ => more_than_one_row().into_response(),
                };
            }
            // The statement's result changed shape (the table was altered): plan it again.
            Ok(_) => gets.forget(&query.sql),
            Err(error) if error.kind() == sluice_pg::ErrorKind::NotReplayed => {
                return not_replayed().into_response();
            }
            Err(error) => return ApiError::from_pg(&error).into_response(),
        }
    }
    let mut conn = match pool.get().await {
        Ok(conn) => conn,
        Err(error) => return ApiError::from_pool(&error).into_response(),
    };
    match one_object(&mut conn, &mut query, Some(gets), guard).await {
        Ok(Some(body)) => json_response(StatusCode::OK, body),
        Ok(None) => not_found(),
        Err(error) => error.into_response(),
    }
}

fn more_than_one_row() -> ApiError {
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "more_than_one_row",
        "the endpoint returns an object but its query returned more than one row",
    )
    .with_hint("make the query return at most one row (a key in the WHERE clause)")
}

/// Runs `query` and writes its only row as an object; `None` when there is no row. With
/// `guard`, only on a server that has replayed the WAL that far.
async fn one_object(
    conn: &mut sluice_pg::Connection,
    query: &mut Query,
    gets: Option<&ObjectGets>,
    guard: Option<sluice_pg::Lsn>,
) -> Result<Option<Vec<u8>>, ApiError> {
    let statement = conn
        .prepare(&query.sql)
        .await
        .map_err(|e| ApiError::from_pg(&e))?;
    query.fit(&statement);
    let column_kinds = column_kinds(conn, statement.columns())
        .await
        .map_err(|e| ApiError::from_pg(&e))?;
    let mut writer = ObjectWriter::for_columns(statement.columns(), column_kinds);
    if let Some(gets) = gets {
        gets.remember(
            &query.sql,
            ObjectPlan {
                params: statement.param_types().len(),
                layout: writer.layout().clone(),
            },
        );
    }
    let params = query.params();
    let mut stream = stream_guarded(conn, &query.sql, &params, guard)
        .await
        .map_err(|e| ApiError::from_pg(&e))?
        .ok_or_else(not_replayed)?;
    let mut body: Option<Vec<u8>> = None;
    let mut rows = 0usize;
    // Stop reading after a second row: that is already an error, however many follow.
    while rows < 2 {
        let Some(block) = stream
            .next_block()
            .await
            .map_err(|e| ApiError::from_pg(&e))?
        else {
            break;
        };
        for row in block.iter() {
            rows += 1;
            if rows == 1 {
                let mut out = Vec::with_capacity(256);
                writer.write_row(row, &mut out);
                out.push(b'\n');
                body = Some(out);
            }
        }
    }
    if rows > 1 {
        return Err(more_than_one_row());
    }
    Ok(body)
}

/// A DELETE. `return: "object"` answers with the deleted row (the statement needs a RETURNING
/// clause; without one, `{}`), 404 when nothing was deleted, and rolls back and answers 500 when
/// more than one row was; otherwise the answer is `{"deleted": N}`.
///
/// With `report`, the answer carries the commit position ([`crate::view::write::Committed`]),
/// read after the commit in the same round trip.
pub async fn delete(pool: &Pool, mut query: Query, returns: Return, report: bool) -> Response {
    use crate::view::write::{commit, with_commit};
    let mut conn = match pool.get().await {
        Ok(conn) => conn,
        Err(error) => return ApiError::from_pool(&error).into_response(),
    };
    if returns != Return::Object {
        match conn.prepare(&query.sql).await {
            Ok(statement) => query.fit(&statement),
            Err(error) => return ApiError::from_pg(&error).into_response(),
        }
        let deleted = match report {
            false => conn
                .execute(&query.sql, &query.params())
                .await
                .map(|deleted| (deleted, None)),
            true => delete_reporting(&mut conn, &query).await,
        };
        return match deleted {
            Ok((deleted, lsn)) => with_commit(
                json_response(
                    StatusCode::OK,
                    format!("{{\"deleted\":{deleted}}}\n").into_bytes(),
                ),
                lsn,
            ),
            Err(error) => ApiError::from_pg(&error).into_response(),
        };
    }
    let answer = async {
        let mut tx = conn.transaction().map_err(|e| ApiError::from_pg(&e))?;
        let statement = tx
            .prepare(&query.sql)
            .await
            .map_err(|e| ApiError::from_pg(&e))?;
        query.fit(&statement);
        if statement.columns().is_empty() {
            let deleted = tx
                .execute(&query.sql, &query.params())
                .await
                .map_err(|e| ApiError::from_pg(&e))?;
            if deleted > 1 {
                return Err(more_than_one_deleted(deleted));
            }
            let lsn = commit(tx, report).await?;
            return Ok(((deleted > 0).then(|| b"{}\n".to_vec()), lsn));
        }
        let object = one_object(&mut tx, &mut query, None, None)
            .await
            .map_err(|e| {
                if e.code == "more_than_one_row" {
                    more_than_one_deleted(2)
                } else {
                    e
                }
            })?;
        let lsn = commit(tx, report).await?;
        Ok((object, lsn))
    };
    match answer.await {
        Ok((Some(body), lsn)) => with_commit(json_response(StatusCode::OK, body), lsn),
        Ok((None, _)) => not_found(),
        Err(error) => error.into_response(),
    }
}

/// A DELETE in its own implicit transaction and, in a later group of the same round trip, the
/// commit position.
async fn delete_reporting(
    conn: &mut sluice_pg::Connection,
    query: &Query,
) -> sluice_pg::Result<(u64, Option<sluice_pg::Lsn>)> {
    let params = query.params();
    let mut batch = conn.pipeline(sluice_pg::SyncMode::Groups).await?;
    batch.query(&query.sql, &params)?;
    let at = batch.commit_position()?;
    let mut results = batch.run().await?;
    let lsn = sluice_pg::Lsn::from_commit_result(results.get(at));
    results.truncate(at);
    let deleted = match results.pop() {
        Some(deleted) => deleted?.command_tag().rows_affected(),
        None => 0,
    };
    Ok((deleted, lsn))
}

fn more_than_one_deleted(count: u64) -> ApiError {
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "more_than_one_row",
        format!(
            "the endpoint deletes one object but its statement matched {count} rows or more; nothing was deleted"
        ),
    )
}

/// 404 for an object that is not there.
pub fn not_found() -> Response {
    ApiError::new(StatusCode::NOT_FOUND, "not_found", "Not found").into_response()
}

fn json_response(status: StatusCode, body: Vec<u8>) -> Response {
    let mut response = Response::new(full(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}
