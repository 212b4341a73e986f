//! Media type handlers answering writes: negotiation, the aggregate's SQL, its row as the answer.

use super::{PreparedWrite, Target, Written};
use crate::error::ApiError;
use crate::plan::ReadPlan;
use crate::plan::write::RowChecks;
use crate::request::{ApiRequest, MediaType};
use crate::response::{self, media::Negotiated};
use crate::schema::media::MediaHandler;
use crate::schema::{SchemaCache, Table};
use crate::sql::media::{Aggregate, Argument};
use bytes::Bytes;

/// How a write of `target` answers its rows, negotiated as a read of the table would be
/// (PostgREST's): every write negotiates, so a media type nothing answers is refused whatever
/// the write returns.
pub(in crate::api) fn negotiate<'c>(
    request: &ApiRequest,
    target: &Target,
    cache: &'c SchemaCache,
) -> Result<Negotiated<'c>, ApiError> {
    let answering = response::media::Answering {
        schema: &target.schema,
        name: &target.name,
        default_select: response::media::default_select(request.query.select.as_deref()),
        values: false,
    };
    response::media::negotiate_handlers(&request.accept, &cache.media, answering)
}

/// The aggregate of a handler answering a write of `table` (its own takes the table's row type).
/// Those answering writes all have one; a handler without is refused as unacceptable.
pub(in crate::api) fn aggregate_of<'c>(
    handler: &'c MediaHandler,
    own: bool,
    table: &'c Table,
    accept: &[MediaType],
) -> Result<Aggregate<'c>, ApiError> {
    let function = handler
        .aggregate
        .as_ref()
        .ok_or_else(|| response::not_acceptable(accept))?;
    let argument = match own {
        true => Argument::RowOf(&table.name),
        false => Argument::Row,
    };
    Ok(Aggregate { function, argument })
}

/// An update with nothing to set, answered by a handler: its aggregate over no rows of the
/// table (what PostgREST answers), read as the request's role like the update's rows would be.
pub(super) fn nothing_set<'c>(
    handler: &'c MediaHandler,
    own: bool,
    table: &'c Table,
    mut read: ReadPlan<'_>,
    accept: &[MediaType],
) -> Result<PreparedWrite<'c>, ApiError> {
    let aggregate = aggregate_of(handler, own, table, accept)?;
    read.limit = Some(0);
    let statement = crate::sql::media::render(
        crate::sql::read::render(&read),
        aggregate.function,
        aggregate.argument,
    );
    Ok(PreparedWrite {
        statement,
        representation: Some(Negotiated::Handler { handler, own }),
        location_of: None,
        checks: RowChecks {
            max_affected: None,
            singular: false,
        },
        counts_inserted: false,
    })
}

/// What a handler's one row answers: its value (a `bytea`'s bytes), and the number of rows its
/// aggregate took, counted as the rows written.
pub(super) fn written(handler: &MediaHandler, rows: &sluice_pg::Rows) -> Written {
    let mut body = Vec::new();
    let row = rows.get(0);
    let count = response::media::push_value(
        row.as_ref().and_then(|row| row.raw(0)),
        row.as_ref().and_then(|row| row.raw(1)),
        handler.bytea,
        &mut body,
    );
    Written {
        rows: count,
        body: Some(Bytes::from(body)),
        location: None,
        inserted: None,
        shaping: crate::api::context::Shaping::default(),
    }
}
