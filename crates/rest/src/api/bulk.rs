//! Large POST bodies streamed into PostgreSQL as they arrive: a JSON array, JSON Lines or CSV
//! body decoded frame by frame into `COPY ... FROM STDIN` — straight into the table for a plain
//! insert, else into a temporary table first and then one `INSERT ... SELECT` that applies
//! upserts and returns rows. Memory is a frame, an unfinished element and one COPY chunk,
//! whatever the body's size; a bad element stops the COPY and nothing is written.

use super::write::{Written, answer, failed_statement, inserted_from, written_from};
use super::{RestApi, Target, error_response};
use crate::error::ApiError;
use crate::plan::write::{Mutation, OnConflict, WritePlan, conflict_columns, payload_columns};
use crate::plan::{ReadInput, plan_read};
use crate::request::{ApiRequest, MediaType, PreferMissing, PreferReturn, SelectItem};
use crate::response::media::Negotiated;
use crate::schema::SchemaCache;
use crate::sql::write::{Payload, READ_INSERTED, Returning, counts_inserted, render};
use bytes::BytesMut;
use http::StatusCode;
use sluice_formats::decode::{
    DecodeError, DecodeErrorKind, FirstElementKeys, JsonArrayDecoder, JsonlDecoder, KeyRules,
    first_object_keys,
};
use sluice_http::Response;
use sluice_http::body::{BodyError, BodyReader};
use sluice_pg::SyncMode;

/// Bodies above this size (or of unknown size) are streamed; smaller ones are read whole.
pub const STREAM_THRESHOLD: u64 = 1 << 20;

/// COPY data is sent in pieces of about this size.
const COPY_CHUNK: usize = 256 * 1024;

/// The temporary table a streamed upsert or representation goes through.
const STAGE: &str = "pgrst_stage";

/// Whether a POST should be streamed: a large (or chunked) body of a streamable media type,
/// without `missing=default` (which needs every object's keys before the first row).
pub(super) fn streams(request: &ApiRequest, content_length: Option<u64>) -> bool {
    let media = request.content_type.clone().unwrap_or(MediaType::Json);
    matches!(
        media,
        MediaType::Json | MediaType::JsonLines | MediaType::Csv
    ) && request.prefer.missing != Some(PreferMissing::Default)
        && content_length.is_none_or(|length| length > STREAM_THRESHOLD)
}

/// How the body becomes COPY data.
enum Decoder {
    Array(JsonArrayDecoder),
    Lines(JsonlDecoder),
    /// CSV goes to `COPY ... (FORMAT csv, HEADER)` as it is.
    Csv,
}

impl Decoder {
    fn decode(&mut self, input: &[u8], eof: bool, out: &mut Vec<u8>) -> Result<usize, DecodeError> {
        match self {
            Decoder::Array(d) => d.decode(input, eof, out),
            Decoder::Lines(d) => d.decode(input, eof, out),
            Decoder::Csv => {
                out.extend_from_slice(input);
                Ok(input.len())
            }
        }
    }
}

pub(super) async fn insert(
    api: &RestApi,
    request: &ApiRequest,
    target: &Target,
    cache: &SchemaCache,
    mut reader: BodyReader,
) -> Response {
    let mut pending = BytesMut::new();
    let mut eof = false;
    if matches!(request.content_type, None | Some(MediaType::Json)) {
        loop {
            match without_rows(&pending, eof) {
                Some(true) => return whole(api, request, target, cache, reader, pending).await,
                Some(false) => break,
                None => match reader.frame().await {
                    Ok(Some(frame)) => pending.extend_from_slice(&frame),
                    Ok(None) => eof = true,
                    Err(error) => return error_response(&body_error(error)),
                },
            }
        }
    }
    match run(api, request, target, cache, &mut reader, pending, eof).await {
        Ok(response) => response,
        Err(error) => {
            // A client still sending gets the answer once the rest is read (within the limits).
            reader.discard_rest().await;
            error_response(&error)
        }
    }
}

/// How much of a body [`without_rows`] looks at before it lets the decoder judge the rest.
const LOOKAHEAD: usize = 64 * 1024;

/// Whether a JSON body has no rows COPY can carry: one object rather than an array, an empty
/// array, or a first object without keys (rows of defaults); `None` until enough has arrived.
fn without_rows(input: &[u8], eof: bool) -> Option<bool> {
    let input = input.get(..LOOKAHEAD).unwrap_or(input);
    let mut tokens = input.iter().filter(|b| !b.is_ascii_whitespace());
    let decided = match (tokens.next(), tokens.next(), tokens.next()) {
        (Some(b'{'), _, _) | (Some(b'['), Some(b']'), _) => Some(true),
        (Some(b'['), Some(b'{'), Some(next)) => Some(*next == b'}'),
        (Some(b'['), Some(b'{'), None) | (Some(b'['), None, _) | (None, _, _) => None,
        (Some(_), _, _) => Some(false),
    };
    decided.or((eof || input.len() == LOOKAHEAD).then_some(false))
}

/// A body [`without_rows`] read whole and written as a body with a small `Content-Length` is
/// (PostgREST's answers: one object, `[]`, rows of defaults); its memory is the body's, within
/// the body limit and the in-flight budget.
async fn whole(
    api: &RestApi,
    request: &ApiRequest,
    target: &Target,
    cache: &SchemaCache,
    reader: BodyReader,
    read: BytesMut,
) -> Response {
    let body = match reader.collect(vec![read.freeze()], None).await {
        Ok(body) => body,
        Err(error) => return error_response(&body_error(error)),
    };
    match super::filters(request) {
        Ok(filters) => super::write::write(api, request, target, cache, filters, body).await,
        Err(error) => error_response(&error),
    }
}

fn body_error(error: BodyError) -> ApiError {
    ApiError::new(error.status(), "PGRST102", error.to_string())
}

fn decode_error(error: DecodeError, media: &MediaType) -> ApiError {
    if error.kind() == DecodeErrorKind::Empty {
        return ApiError::new(StatusCode::BAD_REQUEST, "PGRST102", "Empty or invalid json")
            .details("the body is empty");
    }
    let place = match media {
        MediaType::JsonLines => format!("line {}", error.line()),
        _ => format!("element {} of the array", error.line()),
    };
    let column = error
        .column()
        .map(|c| format!(", character {c}"))
        .unwrap_or_default();
    ApiError::new(StatusCode::BAD_REQUEST, "PGRST102", "Empty or invalid json")
        .details(format!("{place}{column}: {error}"))
}

async fn run(
    api: &RestApi,
    request: &ApiRequest,
    target: &Target,
    cache: &SchemaCache,
    reader: &mut BodyReader,
    mut pending: BytesMut,
    mut eof: bool,
) -> Result<Response, ApiError> {
    let table = cache
        .table(&target.schema, &target.name)
        .ok_or_else(|| super::table_not_found(&target.schema, &target.name))?;
    let media = request.content_type.clone().unwrap_or(MediaType::Json);
    let query = &request.query;
    let prefer = &request.prefer;
    // The columns: `columns=`, else the first object's keys (or the CSV header), read ahead.
    let mut first_keys = FirstElementKeys::default();
    let keys = loop {
        let found = match (&query.columns, &media) {
            (Some(columns), _) => Ok(Some(columns.clone())),
            (None, MediaType::Csv) => Ok(csv_header(&pending, eof)),
            (None, MediaType::JsonLines) => first_object_keys(&pending, eof),
            (None, _) => first_keys.find(&pending, eof),
        };
        match found.map_err(|e| decode_error(e, &media))? {
            Some(keys) => break keys,
            None if eof => break Vec::new(),
            None => match reader.frame().await.map_err(body_error)? {
                Some(frame) => pending.extend_from_slice(&frame),
                None => eof = true,
            },
        }
    };
    let columns = payload_columns(table, &keys, None)?;
    let on_conflict = match prefer.resolution {
        Some(resolution) => Some(OnConflict {
            columns: conflict_columns(table, query.on_conflict.as_deref())?,
            resolution,
        }),
        None => None,
    };
    let returns = prefer.return_.unwrap_or(PreferReturn::Minimal);
    let star = [SelectItem::Star];
    let read = plan_read(
        cache,
        table,
        &ReadInput {
            aggregates_enabled: api.config.aggregates_enabled,
            ..ReadInput::written(query.select.as_deref().unwrap_or(&star), &[])
        },
    )?;
    let representation = super::write::negotiate(request, target, cache)?;
    let representation = (returns == PreferReturn::Representation).then_some(representation);
    let location = returns == PreferReturn::HeadersOnly && !table.primary_key.is_empty();
    let staged = on_conflict.is_some() || representation.is_some() || location;

    let pg = |e: sluice_pg::Error| ApiError::from_pg(&e, false);
    let mut conn = api.pool.get().await.map_err(|e| ApiError::from_pool(&e))?;
    let oids: Vec<u32> = columns.iter().map(|c| c.type_oid).collect();
    let kinds = sluice_formats::kind::column_kinds(&mut conn, &oids)
        .await
        .map_err(pg)?;
    let rules = KeyRules {
        ignore_unknown: query.columns.is_some(),
        require_all: query.columns.is_none(),
    };
    let mut decoder = match media {
        MediaType::Csv => Decoder::Csv,
        MediaType::JsonLines => {
            Decoder::Lines(JsonlDecoder::new(&keys, kinds).with_key_rules(rules))
        }
        _ => Decoder::Array(JsonArrayDecoder::new(&keys, kinds).with_key_rules(rules)),
    };

    let mut tx = conn.transaction().map_err(pg)?;
    if let Some(isolation) = target.isolation() {
        tx.execute(isolation.set_transaction(), &[])
            .await
            .map_err(pg)?;
    }
    // The settings and the pre-request function (which may refuse the request; what it sets
    // for the answer is read with the write's own, after it).
    for context in target.context_statements() {
        tx.query(&context.sql, &context.driver_params())
            .await
            .map_err(pg)?;
    }
    let mut copy_sql = String::from("COPY ");
    if staged {
        let mut stage = String::from("CREATE TEMP TABLE ");
        sluice_pg::sql::push_ident(&mut stage, STAGE);
        stage.push_str(" ON COMMIT DROP AS SELECT ");
        for (i, c) in columns.iter().enumerate() {
            if i > 0 {
                stage.push_str(", ");
            }
            sluice_pg::sql::push_ident(&mut stage, &c.name);
        }
        stage.push_str(" FROM ");
        sluice_pg::sql::push_qualified(&mut stage, &table.name.schema, &table.name.name);
        stage.push_str(" WITH NO DATA");
        tx.batch_execute(&stage).await.map_err(pg)?;
        sluice_pg::sql::push_ident(&mut copy_sql, STAGE);
    } else {
        sluice_pg::sql::push_qualified(&mut copy_sql, &table.name.schema, &table.name.name);
    }
    copy_sql.push_str(" (");
    for (i, c) in columns.iter().enumerate() {
        if i > 0 {
            copy_sql.push_str(", ");
        }
        sluice_pg::sql::push_ident(&mut copy_sql, &c.name);
    }
    copy_sql.push_str(") FROM STDIN");
    if matches!(decoder, Decoder::Csv) {
        copy_sql.push_str(" (FORMAT csv, HEADER true)");
    }
    let mut copy = tx.copy_in(&copy_sql).await.map_err(pg)?;
    let mut out: Vec<u8> = Vec::with_capacity(COPY_CHUNK + COPY_CHUNK / 4);
    let outcome: Result<(), ApiError> = async {
        loop {
            let used = decoder
                .decode(&pending, eof, &mut out)
                .map_err(|e| decode_error(e, &media))?;
            let _ = pending.split_to(used);
            if out.len() >= COPY_CHUNK || (eof && !out.is_empty()) {
                copy.write(&out).await.map_err(pg)?;
                out.clear();
            }
            if eof {
                return Ok(());
            }
            match reader.frame().await.map_err(body_error)? {
                Some(frame) if pending.is_empty() => {
                    // Most frames are used whole: decode them where they are.
                    let used = decoder
                        .decode(&frame, false, &mut out)
                        .map_err(|e| decode_error(e, &media))?;
                    pending.extend_from_slice(frame.get(used..).unwrap_or_default());
                }
                Some(frame) => pending.extend_from_slice(&frame),
                None => eof = true,
            }
        }
    }
    .await;
    if let Err(error) = outcome {
        let _ = copy.abort("the request body was refused").await;
        return Err(error);
    }
    let copied = copy.finish().await.map_err(pg)?;
    let written = if staged {
        let plan = WritePlan {
            table,
            mutation: Mutation::Insert {
                columns,
                on_conflict,
                missing_default: false,
            },
            payload_is_array: true,
        };
        let returning = match (representation, location) {
            (Some(Negotiated::Handler { handler, own }), _) => Returning::Aggregated(
                &read,
                super::write::aggregate_of(handler, own, table, &request.accept)?,
            ),
            (Some(Negotiated::Builtin(_)), _) => Returning::Read(&read),
            (None, true) => Returning::Columns(&table.primary_key),
            _ => Returning::Nothing,
        };
        let statement = render(&plan, Payload::Staged(STAGE.to_string()), returning);
        // The count of inserted rows is read in the same round trip as the upsert.
        let counts = counts_inserted(&plan);
        let mut pipeline = tx.pipeline(SyncMode::Once).await.map_err(pg)?;
        let main = pipeline
            .query(&statement.sql, &statement.driver_params())
            .map_err(pg)?;
        let counted = match counts {
            true => Some(pipeline.query(READ_INSERTED, &[]).map_err(pg)?),
            false => None,
        };
        // What SQL set for the answer (the pre-request function, triggers, a handler's
        // aggregate), read in the same round trip.
        let settings = pipeline
            .query(super::context::RESPONSE_SETTINGS, &[])
            .map_err(pg)?;
        let mut results = pipeline.run().await.map_err(pg)?;
        if let Some(Err(error)) = failed_statement(&results).and_then(|at| results.get(at)) {
            return Err(ApiError::from_pg(error, false));
        }
        let inserted = counted.and_then(|at| results.get(at)).map(inserted_from);
        let shaping = match results.get(settings) {
            Some(Ok(rows)) => super::context::Shaping::from_settings(rows)?,
            _ => super::context::Shaping::default(),
        };
        let rows = results.swap_remove(main).map_err(pg)?;
        let written =
            written_from(&mut tx, &rows, representation, location.then_some(table)).await?;
        Written {
            inserted,
            shaping,
            ..written
        }
    } else {
        // What the pre-request function and the COPY's triggers set for the answer: one more
        // round trip, on a request whose body is a megabyte or more.
        let settings = tx
            .query(super::context::RESPONSE_SETTINGS, &[])
            .await
            .map_err(pg)?;
        Written {
            rows: copied,
            body: None,
            location: None,
            inserted: None,
            shaping: super::context::Shaping::from_settings(&settings)?,
        }
    };
    let lsn = match (api.config.tx_end.commits(prefer.tx), api.lsn.report) {
        (true, true) => tx.commit_lsn().await.map_err(pg)?,
        (true, false) => tx.commit().await.map(|()| None).map_err(pg)?,
        (false, _) => tx.rollback().await.map(|()| None).map_err(pg)?,
    };
    let applied = super::write::applied(api, request, target);
    let mut response = answer(request, applied, written, representation);
    super::stamp_lsn(api, &mut response, lsn, target.named);
    Ok(response)
}

/// The CSV header's column names once its line is complete.
fn csv_header(input: &[u8], eof: bool) -> Option<Vec<String>> {
    let end = memchr::memchr(b'\n', input).or(eof.then_some(input.len()))?;
    let line = std::str::from_utf8(input.get(..end)?).ok()?;
    Some(
        line.trim_end_matches('\r')
            .split(',')
            .map(|name| name.trim().trim_matches('"').to_string())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_without_rows_for_copy() {
        let cases: [(&[u8], bool, Option<bool>); 11] = [
            (b" {\"a\": 1}", false, Some(true)),
            (b"[ ]", false, Some(true)),
            (b"[{ }, {}]", false, Some(true)),
            (b"[{\"a\": 1}]", false, Some(false)),
            (b"[1]", false, Some(false)),
            (b"nul", false, Some(false)),
            (b"[", false, None),
            (b"[ {", false, None),
            (b"  ", false, None),
            (b"[ {", true, Some(false)),
            (b"", true, Some(false)),
        ];
        for (input, eof, expected) in cases {
            assert_eq!(
                without_rows(input, eof),
                expected,
                "{}",
                input.escape_ascii()
            );
        }
        let spaces = vec![b' '; LOOKAHEAD + 1];
        assert_eq!(without_rows(&spaces, false), Some(false));
    }
}
