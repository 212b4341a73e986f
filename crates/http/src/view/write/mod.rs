//! PUT, PATCH and POST of views: bodies into upserts, set-replace, inserts, in one transaction.
//!
//! - Row bodies (`return: "csj"`, the default): CSJ (`application/csj`, `text/plain`, no
//!   `Content-Type`), JSON Lines (`application/x-ndjson`) or a JSON array (`application/json`).
//!   PATCH upserts each row and PUT too, PUT with `existing`/`delete` replacing the set; POST
//!   inserts each row (201). Answers: `{"records": N}`, for set-replace
//!   `{"selected": S, "records": R, "deleted": D}`.
//! - Bodies under [`copy_threshold`] bytes (512 KiB) are read whole and written row by row, each
//!   row's statement prepared and pipelined (a thousand rows per round trip, `existing` in the
//!   first). Larger CSJ and JSON Lines bodies are checked row by row and encoded in 256 KiB
//!   chunks into a COPY to a staging table typed like the target's columns (`CREATE TEMP TABLE
//!   ... AS SELECT ... WITH NO DATA`), then written with one `INSERT ... SELECT ... ON CONFLICT`
//!   (or `UPDATE ... FROM`) pass per shape of row, captures and headers as parameters (copy.rs).
//! - Those large bodies are streamed: rows are parsed from the frames as hyper hands them over
//!   (a row cut by a frame boundary waits in a carry buffer for its end: lines.rs, stream.rs)
//!   and go into the COPY while the client still sends, so memory is one COPY chunk, one frame
//!   and the longest row, whatever the body's size. The path is chosen by size: from
//!   `Content-Length`, or, for a chunked body, by reading frames up to the threshold (a body
//!   that ends before it takes the pipelined path, which needs it whole; a longer one streams
//!   on from the frames read so far) — so a chunked body takes the same path as the same bytes
//!   with a length, and small chunked writes keep the faster path.
//! - Streaming holds a pool connection (and the transaction) while the body arrives; the body
//!   limit (413) and the body timeout (408, per frame) apply mid-stream, and any error aborts
//!   the COPY and rolls back. On an error the connection is given back first, then the rest of
//!   the body is read and dropped (within the limit and timeout) so a client still sending gets
//!   the answer; after a 413 or 408 nothing more is read.
//! - A large body for several method objects is spooled as it arrives to an unlinked temporary
//!   file (spool.rs), then read back frame by frame for each object in turn (each object's
//!   `existing` must see what the objects before it wrote, so each gets its own COPY pass):
//!   memory stays bounded there too, the body is on disk for the request's duration.
//! - Bodies held whole, not streamed: JSON (`application/json`: one document, parsed whole and
//!   written row by row whatever its size, so large bodies should be CSJ or JSON Lines) and
//!   `return: "object"` endpoints. A method object with more columns than the COPY path's
//!   presence mask holds (62, copy.rs) is written row by row, body held whole.
//! - Both paths give the same result: a column whose value is absent (not in the row, or an
//!   all-whitespace string when trimmed) is left out of its row's statement (PATCH leaves it as
//!   it is; an insert takes the column default); JSON `null` is NULL; a column schema is checked
//!   only when the column has a value. A body that names one key twice in rows with other values
//!   is refused with 400 `duplicate_key` (which row should win is a guess); rows made only of
//!   keys may repeat.
//! - PUT set-replace matches `existing` rows to body rows by column name and as text, so keys
//!   should be sent as PostgreSQL prints them (`1`, not `01`).
//! - `return: "object"`, and a POST of one JSON object (`Content-Type: application/json`) on any
//!   endpoint: one row, answered with it as a JSON object (PUT, PATCH: the first `returning` row
//!   or the GET re-run in the transaction; POST: 201 with the first method object's `returning`
//!   columns, or all). PATCH of a row that does not exist: 404.
//! - One transaction per request: nothing is committed when any step fails.

// `ApiError` is the answer itself: built once per failed request, never on the row path, so it
// stays unboxed for plain `?` everywhere.
#![allow(clippy::result_large_err)]

mod body;
mod copy;
mod lines;
mod object;
mod rows;
mod setreplace;
mod spool;
mod sql;
mod stream;
mod values;

use crate::body::BodyReader;
use crate::mount::{RequestContext, Response, full};
use crate::view::error::ApiError;
use crate::view::model::{Endpoint, MethodObject, Return};
use body::{BodyFormat, RowReader};
use http::{HeaderValue, Method, StatusCode, header};
use spool::SpoolFile;
use std::sync::atomic::{AtomicUsize, Ordering};
use stream::{RowSource, body_error};
use values::RequestValues;

/// Everything a writing request needs; built by the view dispatcher after path matching and the
/// precondition.
pub struct WriteRequest<'a> {
    /// The endpoint the path matched.
    pub endpoint: &'a Endpoint,
    /// PUT, PATCH or POST.
    pub method: &'a http::Method,
    /// `captures[n - 1]` is capture `$n`, percent-decoded (missing captures are empty strings).
    pub captures: &'a [String],
    /// The request's headers.
    pub headers: &'a http::HeaderMap,
    /// The body, read as it arrives.
    pub body: hyper::body::Incoming,
    /// The server's limits for this request.
    pub context: &'a RequestContext,
    /// Where the write gets its connection.
    pub pool: &'a sluice_pg::Pool,
    /// Read the commit position after the COMMIT (the answer carries it as [`Committed`]).
    pub report_lsn: bool,
}

/// The commit position of a write, carried in its answer's extensions for the mount to turn
/// into the `Sluice-Lsn` header (see [`crate::lsn`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Committed(pub sluice_pg::Lsn);

/// Commits `tx`, reading the commit position in the same round trip when `report`.
pub(crate) async fn commit(
    tx: sluice_pg::Transaction<'_>,
    report: bool,
) -> Result<Option<sluice_pg::Lsn>, ApiError> {
    let committed = match report {
        true => tx.commit_lsn().await,
        false => tx.commit().await.map(|()| None),
    };
    committed.map_err(|e| ApiError::from_pg(&e))
}

/// `response` carrying the commit position `lsn`, when there is one.
pub(crate) fn with_commit(mut response: Response, lsn: Option<sluice_pg::Lsn>) -> Response {
    if let Some(lsn) = lsn {
        response.extensions_mut().insert(Committed(lsn));
    }
    response
}

/// Row bodies of at least this many bytes go through COPY (see the module docs).
static COPY_THRESHOLD: AtomicUsize = AtomicUsize::new(512 * 1024);

/// The body size from which row bodies are written through COPY.
pub fn copy_threshold() -> usize {
    COPY_THRESHOLD.load(Ordering::Relaxed)
}

/// Sets the body size from which row bodies are written through COPY (0: always).
pub fn set_copy_threshold(bytes: usize) {
    COPY_THRESHOLD.store(bytes, Ordering::Relaxed);
}

/// The verb of a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verb {
    Put,
    Patch,
    Post,
}

/// What a row write did: `existing` rows, body rows written, rows deleted.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Counts {
    pub selected: usize,
    pub records: usize,
    pub deleted: usize,
}

impl Counts {
    /// Adds what one method object did: rows selected and deleted add up, the body's rows are
    /// the same rows for every object.
    fn add(&mut self, counts: Counts) {
        self.selected += counts.selected;
        self.records = self.records.max(counts.records);
        self.deleted += counts.deleted;
    }
}

/// Answers a PUT, PATCH or POST on a view endpoint.
pub async fn handle(request: WriteRequest<'_>) -> Response {
    match write(request).await {
        Ok(response) => response,
        Err(error) => error.into_response(),
    }
}

async fn write(request: WriteRequest<'_>) -> Result<Response, ApiError> {
    let endpoint = request.endpoint;
    let (verb, methods): (Verb, &[MethodObject]) = match *request.method {
        Method::PUT => (Verb::Put, &endpoint.put),
        Method::PATCH => (Verb::Patch, endpoint.patch.as_slice()),
        Method::POST => (Verb::Post, &endpoint.post),
        _ => (Verb::Post, &[]),
    };
    if methods.is_empty() {
        return Err(ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            format!("{} is not allowed on this endpoint", request.method),
        ));
    }
    let content_length = request
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let values = RequestValues {
        captures: request.captures,
        headers: request.headers,
    };
    let format = BodyFormat::from_headers(request.headers);
    let mut reader = BodyReader::new(
        request.body,
        content_length,
        request.context.body_limit,
        request.context.body_timeout,
    )
    .map_err(body_error)?;
    let streamable = endpoint.returns != Return::Object
        && format != BodyFormat::Json
        && methods.iter().all(copy::supports);
    let threshold = copy_threshold();
    let mut read_ahead = Vec::new();
    if streamable {
        // Without a Content-Length, read up to the threshold to learn which path fits.
        let large = loop {
            match content_length {
                Some(length) => break length >= threshold as u64,
                None if reader.read() >= threshold => break true,
                None => match reader.frame().await.map_err(body_error)? {
                    Some(frame) => read_ahead.push(frame),
                    None => break false,
                },
            }
        };
        if large && methods.len() == 1 {
            let rows = RowSource::streamed(reader, read_ahead, format);
            return streamed(
                request.pool,
                methods,
                verb,
                rows,
                &values,
                request.report_lsn,
            )
            .await;
        }
        if large {
            let file = SpoolFile::spool(&mut reader, read_ahead).await?;
            let mut rows = RowSource::spooled(file, format);
            return copy_each(
                request.pool,
                methods,
                verb,
                &mut rows,
                &values,
                request.report_lsn,
            )
            .await;
        }
    }
    let body = reader
        .collect(read_ahead, content_length)
        .await
        .map_err(body_error)?;
    // Parse before taking a connection: a bad body costs the database nothing.
    // A POST of one JSON object creates one row and answers with it whatever the endpoint's
    // `return` (the films example's `POST /films`).
    let single_post = verb == Verb::Post
        && format == BodyFormat::Json
        && body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    let object_body = if endpoint.returns == Return::Object || single_post {
        Some(body::object_body(&body)?)
    } else {
        None
    };
    // Bodies that reach here are small (large line bodies stream above) or JSON.
    let mut small_rows = Vec::new();
    if object_body.is_none() {
        let mut reader = RowReader::new(body.clone(), format)?;
        while let Some(row) = reader.next_row()? {
            small_rows.push(row);
        }
    }
    let mut conn = request
        .pool
        .get()
        .await
        .map_err(|e| ApiError::from_pool(&e))?;
    let mut tx = conn.transaction().map_err(|e| ApiError::from_pg(&e))?;
    let response = if let Some(object) = &object_body {
        let answer = object::write(&mut tx, endpoint, methods, verb, object, &values).await?;
        bytes_response(answer.status, answer.object)
    } else {
        let mut total = Counts::default();
        for method in methods {
            let counts = rows::write(&mut tx, method, verb, &small_rows, &values).await?;
            total.add(counts);
        }
        rows_response(verb, methods, total)
    };
    let lsn = commit(tx, request.report_lsn).await?;
    Ok(with_commit(response, lsn))
}

/// Writes a body streamed into COPY through its one method object, in one transaction. On an
/// error the transaction is rolled back and the connection given back before the rest of the
/// body is read and dropped, so the client, still sending, gets the answer.
async fn streamed(
    pool: &sluice_pg::Pool,
    methods: &[MethodObject],
    verb: Verb,
    mut source: RowSource,
    values: &RequestValues<'_>,
    report_lsn: bool,
) -> Result<Response, ApiError> {
    let written = copy_each(pool, methods, verb, &mut source, values, report_lsn).await;
    if written.is_err() {
        source.discard_rest().await;
    }
    written
}

/// Writes the rows of `source` through each method object with COPY, in one transaction. A
/// spooled body (several method objects) is read again from its start for each object, so each
/// one's `existing` sees what the ones before it wrote.
async fn copy_each(
    pool: &sluice_pg::Pool,
    methods: &[MethodObject],
    verb: Verb,
    source: &mut RowSource,
    values: &RequestValues<'_>,
    report_lsn: bool,
) -> Result<Response, ApiError> {
    let mut conn = pool.get().await.map_err(|e| ApiError::from_pool(&e))?;
    let mut tx = conn.transaction().map_err(|e| ApiError::from_pg(&e))?;
    let mut total = Counts::default();
    for (number, method) in methods.iter().enumerate() {
        source.restart().await?;
        total.add(copy::write(&mut tx, method, number, verb, source, values).await?);
    }
    let lsn = commit(tx, report_lsn).await?;
    Ok(with_commit(rows_response(verb, methods, total), lsn))
}

/// The answer to a row write: `{"records": N}`, for set-replace with `selected` and `deleted`.
fn rows_response(verb: Verb, methods: &[MethodObject], total: Counts) -> Response {
    let answer = if verb == Verb::Put && methods.iter().any(|m| m.existing.is_some()) {
        serde_json::json!({
            "selected": total.selected,
            "records": total.records,
            "deleted": total.deleted,
        })
    } else {
        serde_json::json!({"records": total.records})
    };
    let status = if verb == Verb::Post {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    json_response(status, &answer)
}

/// Parses `body` as a write with this `Content-Type` would, without a database: as one JSON
/// object, and as rows read in turn. Answers the number of rows (the object parse's error first);
/// an entry point for the fuzz targets (crates/http/fuzz).
#[doc(hidden)]
pub fn parse_body(content_type: Option<&str>, body: bytes::Bytes) -> Result<usize, ApiError> {
    let mut headers = http::HeaderMap::new();
    if let Some(value) = content_type.and_then(|t| HeaderValue::from_str(t).ok()) {
        headers.insert(header::CONTENT_TYPE, value);
    }
    let object = body::object_body(&body).map(|_| ());
    let rows = (|| {
        let mut reader = RowReader::new(body.clone(), BodyFormat::from_headers(&headers))?;
        let mut rows = 0;
        while reader.next_row()?.is_some() {
            rows += 1;
        }
        Ok(rows)
    })();
    object.and(rows)
}

/// Whether the rows of a CSJ or JSON Lines `body` (or its error) are the same read whole and
/// fed in the frames the offsets `cuts` make (a JSON body is never streamed: `true`); an entry
/// point for the fuzz targets (crates/http/fuzz).
#[doc(hidden)]
pub fn frames_agree(content_type: Option<&str>, body: bytes::Bytes, cuts: &[usize]) -> bool {
    let mut headers = http::HeaderMap::new();
    if let Some(value) = content_type.and_then(|t| HeaderValue::from_str(t).ok()) {
        headers.insert(header::CONTENT_TYPE, value);
    }
    let format = BodyFormat::from_headers(&headers);
    if format == BodyFormat::Json {
        return true;
    }
    let (whole, framed) = stream::rows_whole_and_framed(format, &body, cuts);
    whole == framed
}

fn json_response(status: StatusCode, value: &serde_json::Value) -> Response {
    bytes_response(status, value.to_string().into_bytes())
}

fn bytes_response(status: StatusCode, body: Vec<u8>) -> Response {
    let mut response = Response::new(full(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_body_reads_rows_and_the_object() {
        let body = |text: &'static str| bytes::Bytes::from_static(text.as_bytes());
        assert_eq!(
            parse_body(Some("application/json"), body("{\"a\": 1}")).ok(),
            Some(1)
        );
        // Rows parse, but a CSJ body is not one JSON object: the object's error answers.
        let error = parse_body(None, body("\"a\"\n1\n2\n")).expect_err("not an object");
        assert_eq!(error.status, StatusCode::BAD_REQUEST);
        let error = parse_body(Some("application/x-ndjson"), body("{\"a\":1}\n[2]\n"))
            .expect_err("not a row");
        assert!(error.message.contains("line 2"), "{}", error.message);
    }
}
