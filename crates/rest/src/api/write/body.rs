//! A write's body as the JSON payload the statement reads: JSON as it is, a form as one object,
//! CSV and JSON Lines as arrays of objects.

use crate::error::ApiError;
use crate::request::{ApiRequest, MediaType};
use crate::response;
use bytes::Bytes;
use http::StatusCode;

/// The JSON payload: a JSON body as it is, a form body as one object of strings, CSV as an
/// array of objects of strings (their text goes to the columns' input functions).
pub(super) fn body_as_json(request: &ApiRequest, body: &Bytes) -> Result<Vec<u8>, ApiError> {
    match request.content_type.as_ref().unwrap_or(&MediaType::Json) {
        MediaType::Json | MediaType::Any | MediaType::SingleObject { .. } => Ok(body.to_vec()),
        MediaType::UrlEncoded => {
            let object: serde_json::Map<String, serde_json::Value> = form_urlencoded::parse(body)
                .map(|(k, v)| (k.into_owned(), serde_json::Value::String(v.into_owned())))
                .collect();
            Ok(serde_json::Value::Object(object).to_string().into_bytes())
        }
        MediaType::Csv => csv_as_json(body),
        MediaType::JsonLines => {
            let mut rows = Vec::new();
            for (i, line) in body.split(|&b| b == b'\n').enumerate() {
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                let value: serde_json::Value = serde_json::from_slice(line).map_err(|e| {
                    ApiError::new(
                        StatusCode::BAD_REQUEST,
                        "PGRST102",
                        "Invalid JSON Lines body",
                    )
                    .details(format!("line {}: {e}", i + 1))
                })?;
                rows.push(value);
            }
            Ok(serde_json::Value::Array(rows).to_string().into_bytes())
        }
        other => Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "PGRST107",
            format!(
                "The request's Content-Type is not acceptable: {}",
                response::media_name(other)
            ),
        )),
    }
}

/// A CSV body (a header line of column names, then rows) as a JSON array of objects; an empty
/// field is NULL, as PostgREST reads CSV.
fn csv_as_json(body: &[u8]) -> Result<Vec<u8>, ApiError> {
    let text = std::str::from_utf8(body).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "PGRST102",
            "The CSV body is not UTF-8",
        )
        .details(e.to_string())
    })?;
    let mut records = csv_records(text);
    let header = records.next().ok_or_else(|| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "PGRST102",
            "The CSV body has no header line",
        )
    })??;
    let mut rows = Vec::new();
    for (i, record) in records.enumerate() {
        let record = record?;
        if record.len() != header.len() {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "PGRST102",
                "A CSV row has another number of fields than the header",
            )
            .details(format!(
                "row {} has {} fields, the header {}",
                i + 1,
                record.len(),
                header.len()
            )));
        }
        let object: serde_json::Map<String, serde_json::Value> = header
            .iter()
            .zip(record)
            .map(|(k, v)| {
                let value = match v {
                    Some(v) => serde_json::Value::String(v),
                    None => serde_json::Value::Null,
                };
                (k.clone().unwrap_or_default(), value)
            })
            .collect();
        rows.push(serde_json::Value::Object(object));
    }
    Ok(serde_json::Value::Array(rows).to_string().into_bytes())
}

/// CSV records: fields unquoted (`""` in quotes is `"`); an unquoted empty field is `None`.
fn csv_records(text: &str) -> impl Iterator<Item = Result<Vec<Option<String>>, ApiError>> + '_ {
    let mut chars = text.chars().peekable();
    std::iter::from_fn(move || {
        chars.peek()?;
        let mut record = Vec::new();
        let mut field = String::new();
        let mut quoted = false;
        let mut was_quoted = false;
        loop {
            match (chars.next(), quoted) {
                (None, true) => {
                    return Some(Err(ApiError::new(
                        StatusCode::BAD_REQUEST,
                        "PGRST102",
                        "Unterminated quoted field in the CSV body",
                    )));
                }
                (None, false) | (Some('\n'), false) => {
                    let field = std::mem::take(&mut field);
                    let field = field
                        .strip_suffix('\r')
                        .map(str::to_string)
                        .unwrap_or(field);
                    record.push((was_quoted || !field.is_empty()).then_some(field));
                    return Some(Ok(record));
                }
                (Some('"'), true) if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                (Some('"'), true) => quoted = false,
                (Some('"'), false) if field.is_empty() => {
                    quoted = true;
                    was_quoted = true;
                }
                (Some(','), false) => {
                    let value = std::mem::take(&mut field);
                    record.push((was_quoted || !value.is_empty()).then_some(value));
                    was_quoted = false;
                }
                (Some(c), _) => field.push(c),
            }
        }
    })
}
