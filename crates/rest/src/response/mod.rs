//! What a response looks like: the media type chosen from `Accept`, the row encoder for it (JSON
//! typed as PostgREST's `to_json` writes it), and the headers PostgREST clients read
//! (`Content-Range`, `Preference-Applied`).

use crate::error::ApiError;
use crate::request::{MediaType, PlanMedia};
use crate::schema;
use http::StatusCode;
use sluice_formats::{ColumnKind, ColumnSpec, Encoder, Format, Scalar};
use sluice_pg::types::oid;

pub mod applied;
pub mod composite;
pub mod media;
pub mod openapi;

/// How rows are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Representation {
    /// A JSON array of objects.
    Array,
    /// One JSON object (`application/vnd.pgrst.object+json`): exactly one row, else 406.
    Object,
    /// CSV with a header line (`text/csv`).
    Csv,
    /// One JSON object per line (`application/x-ndjson`).
    JsonLines,
    /// CSJ: a header line then one JSON array per row (`application/csj`).
    Csj,
}

impl Representation {
    /// The `Content-Type` header of a response in this representation.
    pub fn content_type(self) -> &'static str {
        match self {
            Representation::Array => "application/json; charset=utf-8",
            Representation::Object => "application/vnd.pgrst.object+json; charset=utf-8",
            Representation::Csv => "text/csv; charset=utf-8",
            Representation::JsonLines => "application/x-ndjson",
            Representation::Csj => "application/csj",
        }
    }

    /// The row format of the encoder (an object is a JSON Lines row without its newline).
    pub fn format(self) -> Format {
        match self {
            Representation::Array => Format::Json,
            Representation::Object | Representation::JsonLines => Format::JsonLines,
            Representation::Csv => Format::Csv,
            Representation::Csj => Format::Csj,
        }
    }
}

/// The representation for `accept` (best first), as PostgREST negotiates rows: 406 PGRST107
/// when none is available.
pub fn negotiate(accept: &[MediaType]) -> Result<Representation, ApiError> {
    for media in accept {
        let chosen = match media {
            MediaType::Json | MediaType::Any => Representation::Array,
            MediaType::SingleObject { .. } => Representation::Object,
            MediaType::Csv => Representation::Csv,
            MediaType::JsonLines => Representation::JsonLines,
            MediaType::Csj => Representation::Csj,
            _ => continue,
        };
        return Ok(chosen);
    }
    if accept.is_empty() {
        return Ok(Representation::Array);
    }
    Err(not_acceptable(accept))
}

/// 406 PGRST107 naming the media types accepted.
pub fn not_acceptable(accept: &[MediaType]) -> ApiError {
    let names: Vec<String> = accept.iter().map(media_name).collect();
    ApiError::new(
        StatusCode::NOT_ACCEPTABLE,
        "PGRST107",
        format!(
            "None of these media types are available: {}",
            names.join(", ")
        ),
    )
}

/// A media type as a client wrote it.
pub fn media_name(media: &MediaType) -> String {
    match media {
        MediaType::SingleObject { .. } => "application/vnd.pgrst.object+json".into(),
        MediaType::ArrayStripped => "application/vnd.pgrst.array+json;nulls=stripped".into(),
        MediaType::Plan(plan) => plan_media_name(plan),
        // The others are named as a handler for them would be.
        plain => media::handler_key(plain).unwrap_or_default().to_string(),
    }
}

/// The plan media type as PostgREST writes it: `application/vnd.pgrst.plan+json;
/// for="application/json"`, then `; options=analyze|buffers` when any were asked for.
pub fn plan_media_name(plan: &PlanMedia) -> String {
    let format = if plan.json { "json" } else { "text" };
    let mut name = format!(
        "application/vnd.pgrst.plan+{format}; for=\"{}\"",
        media_name(&plan.for_media)
    );
    if !plan.options.is_empty() {
        let options: Vec<&str> = plan.options.iter().map(|o| o.name()).collect();
        name.push_str("; options=");
        name.push_str(&options.join("|"));
    }
    name
}

/// The plan the request asks for, when the first of its accepted media types that Sluice can
/// answer is the plan media type (for a media type it can answer) and plans are enabled.
/// Without the setting the plan media type is not available, as PostgREST's negotiation has it.
/// With `handlers`, a media type some handler answers counts as one Sluice can answer (whether
/// it answers this request is the negotiation's to say).
pub fn wanted_plan<'a>(
    accept: &'a [MediaType],
    enabled: bool,
    handlers: Option<&schema::media::MediaHandlers>,
) -> Option<&'a PlanMedia> {
    let answerable = |media: &MediaType| {
        negotiate(std::slice::from_ref(media)).is_ok()
            || handlers.is_some_and(|handlers| {
                media::handler_key(media).is_some_and(|key| handlers.may_answer(key))
            })
    };
    for media in accept {
        match media {
            MediaType::Plan(plan) if enabled && answerable(&plan.for_media) => return Some(plan),
            MediaType::Plan(_) => continue,
            other if answerable(other) => return None,
            _ => continue,
        }
    }
    None
}

/// The JSON kind of a column as the REST API writes it: `to_json`'s forms (timestamps in ISO
/// 8601 with `T`), else what the driver's type cache says.
pub fn rest_kind(type_oid: u32, kind: ColumnKind) -> ColumnKind {
    match type_oid {
        oid::TIMESTAMP | oid::TIMESTAMPTZ => ColumnKind::scalar(Scalar::Timestamp),
        oid::TIMESTAMP_ARRAY | oid::TIMESTAMPTZ_ARRAY => ColumnKind::array(Scalar::Timestamp, b','),
        _ => kind,
    }
}

/// An encoder for rows with these output names and kinds.
pub fn encoder(representation: Representation, columns: &[ColumnSpec]) -> Encoder {
    Encoder::new(representation.format(), columns, true)
}

/// `Content-Range`: `first-last/total`, `*/total` without rows, `*` for an unknown total.
pub fn content_range(offset: u64, rows: u64, total: Option<u64>) -> String {
    let total = total.map_or_else(|| "*".to_string(), |t| t.to_string());
    if rows == 0 {
        format!("*/{total}")
    } else {
        format!("{offset}-{}/{total}", offset + rows - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_as_postgrest_writes_them() {
        assert_eq!(content_range(0, 3, None), "0-2/*");
        assert_eq!(content_range(10, 5, Some(100)), "10-14/100");
        assert_eq!(content_range(0, 0, Some(0)), "*/0");
        assert_eq!(content_range(0, 0, None), "*/*");
    }

    #[test]
    fn negotiation() {
        assert_eq!(negotiate(&[]).ok(), Some(Representation::Array));
        assert_eq!(
            negotiate(&[MediaType::Other("text/xml".into()), MediaType::Csv]).ok(),
            Some(Representation::Csv)
        );
        let error = negotiate(&[MediaType::Other("text/xml".into())]).unwrap_err();
        assert_eq!(
            (error.status.as_u16(), error.code.as_str()),
            (406, "PGRST107")
        );
    }
}
