//! The headers a REST request speaks through: `Prefer`, `Range`/`Range-Unit`, `Accept` (with
//! q-values), `Content-Type`.

use super::ast::{
    MediaType, PlanMedia, PlanOption, PreferCount, PreferHandling, PreferMissing, PreferParams,
    PreferResolution, PreferReturn, PreferTx, Preferences, RowRange,
};
use crate::error::ApiError;
use http::{HeaderMap, StatusCode};

/// Every `Prefer` header, comma-separated preferences each; unknown ones go to `invalid`.
pub fn preferences(headers: &HeaderMap) -> Preferences {
    let mut prefer = Preferences::default();
    for value in headers.get_all("prefer") {
        let Ok(text) = value.to_str() else { continue };
        for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (key, value) = item.split_once('=').unwrap_or((item, ""));
            let (key, value) = (key.trim(), value.trim());
            let known = match key {
                "return" => match value {
                    "minimal" => first(&mut prefer.return_, PreferReturn::Minimal),
                    "headers-only" => first(&mut prefer.return_, PreferReturn::HeadersOnly),
                    "representation" => first(&mut prefer.return_, PreferReturn::Representation),
                    _ => false,
                },
                "count" => match value {
                    "exact" => first(&mut prefer.count, PreferCount::Exact),
                    "planned" => first(&mut prefer.count, PreferCount::Planned),
                    "estimated" => first(&mut prefer.count, PreferCount::Estimated),
                    _ => false,
                },
                "resolution" => match value {
                    "merge-duplicates" => {
                        first(&mut prefer.resolution, PreferResolution::MergeDuplicates)
                    }
                    "ignore-duplicates" => {
                        first(&mut prefer.resolution, PreferResolution::IgnoreDuplicates)
                    }
                    _ => false,
                },
                "missing" => match value {
                    "default" => first(&mut prefer.missing, PreferMissing::Default),
                    "null" => first(&mut prefer.missing, PreferMissing::Null),
                    _ => false,
                },
                "handling" => match value {
                    "strict" => first(&mut prefer.handling, PreferHandling::Strict),
                    "lenient" => first(&mut prefer.handling, PreferHandling::Lenient),
                    _ => false,
                },
                "tx" => match value {
                    "commit" => first(&mut prefer.tx, PreferTx::Commit),
                    "rollback" => first(&mut prefer.tx, PreferTx::Rollback),
                    _ => false,
                },
                "params" => match value {
                    "single-object" => first(&mut prefer.params, PreferParams::SingleObject),
                    _ => false,
                },
                "max-affected" => value
                    .parse()
                    .ok()
                    .is_some_and(|n| first(&mut prefer.max_affected, n)),
                "timezone" if !value.is_empty() => {
                    prefer.timezone = Some(value.to_string());
                    true
                }
                _ => false,
            };
            if !known {
                prefer.invalid.push(item.to_string());
            }
        }
    }
    prefer
}

/// A preference given more than once keeps its first value, as PostgREST reads them; either
/// way it is one Sluice knows (not invalid).
fn first<T>(slot: &mut Option<T>, value: T) -> bool {
    if slot.is_none() {
        *slot = Some(value);
    }
    true
}

/// The `Range` header's rows (`0-24`, `10-`), when its unit is items (or not given). A range
/// whose end comes before its start is 416 PGRST103; other malformed ranges are ignored.
pub fn range(headers: &HeaderMap) -> Result<Option<RowRange>, ApiError> {
    let Some(value) = headers
        .get(http::header::RANGE)
        .and_then(|v| v.to_str().ok())
    else {
        return Ok(None);
    };
    let unit = headers
        .get("range-unit")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("items");
    if !unit.trim().eq_ignore_ascii_case("items") {
        return Ok(None);
    }
    let value = value.trim();
    let value = value.strip_prefix("items=").unwrap_or(value);
    let Some((start, end)) = value.split_once('-') else {
        return Ok(None);
    };
    let Ok(offset) = start.trim().parse::<u64>() else {
        return Ok(None);
    };
    let last = match end.trim() {
        "" => None,
        end => match end.parse::<u64>() {
            Ok(last) => Some(last),
            Err(_) => return Ok(None),
        },
    };
    if last.is_some_and(|last| last < offset) {
        return Err(ApiError::new(
            StatusCode::RANGE_NOT_SATISFIABLE,
            "PGRST103",
            "Requested range not satisfiable",
        )
        .details(
            "The lower boundary must be lower than or equal to the upper boundary in the Range header.",
        ));
    }
    Ok(Some(RowRange { offset, last }))
}

/// A media type from its text (parameters other than `nulls=stripped` ignored).
pub fn media_type(text: &str) -> MediaType {
    let mut parts = text.split(';').map(str::trim);
    let essence = parts.next().unwrap_or_default().to_ascii_lowercase();
    let stripped = parts.any(|p| p.replace(' ', "").eq_ignore_ascii_case("nulls=stripped"));
    match essence.as_str() {
        "application/json" => MediaType::Json,
        "application/vnd.pgrst.object+json" | "application/vnd.pgrst.object" => {
            MediaType::SingleObject {
                nulls_stripped: stripped,
            }
        }
        "application/vnd.pgrst.array+json" if stripped => MediaType::ArrayStripped,
        "application/vnd.pgrst.array+json" => MediaType::Json,
        "text/csv" => MediaType::Csv,
        "application/x-ndjson" | "application/jsonl" | "application/json-lines" => {
            MediaType::JsonLines
        }
        "application/csj" => MediaType::Csj,
        "application/x-www-form-urlencoded" => MediaType::UrlEncoded,
        "application/openapi+json" => MediaType::OpenApi,
        "text/plain" => MediaType::TextPlain,
        "application/octet-stream" => MediaType::OctetStream,
        "*/*" | "application/*" => MediaType::Any,
        "application/vnd.pgrst.plan" | "application/vnd.pgrst.plan+text" => plan_media(text, false),
        "application/vnd.pgrst.plan+json" => plan_media(text, true),
        _ => MediaType::Other(essence),
    }
}

/// The plan media type's `for=` and `options=` (values may be quoted; PostgREST's parameters
/// are split at `;` too, so a quoted `;` is not supported either).
fn plan_media(text: &str, json: bool) -> MediaType {
    let mut for_media = MediaType::Json;
    let mut asked: Vec<&str> = Vec::new();
    for param in text.split(';').skip(1) {
        let Some((key, value)) = param.split_once('=') else {
            continue;
        };
        let value = value.trim().trim_matches('"');
        match key.trim().to_ascii_lowercase().as_str() {
            "for" => for_media = media_type(value),
            "options" => asked = value.split('|').map(str::trim).collect(),
            _ => {}
        }
    }
    let options = PlanOption::ALL
        .into_iter()
        .filter(|option| asked.contains(&option.name()))
        .collect();
    MediaType::Plan(PlanMedia {
        json,
        for_media: Box::new(for_media),
        options,
    })
}

/// `Accept`'s media types, best first: by q-value, then in the header's order; `q=0` left out.
/// No header: `[Any]`.
pub fn accept(headers: &HeaderMap) -> Vec<MediaType> {
    let mut ranked: Vec<(u32, usize, MediaType)> = Vec::new();
    let mut order = 0;
    for value in headers.get_all(http::header::ACCEPT) {
        let Ok(text) = value.to_str() else { continue };
        for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let q = item
                .split(';')
                .skip(1)
                .filter_map(|p| p.trim().strip_prefix("q="))
                .next()
                .and_then(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            order += 1;
            if q <= 0.0 {
                continue;
            }
            ranked.push(((q * 1000.0) as u32, order, media_type(item)));
        }
    }
    if ranked.is_empty() {
        return vec![MediaType::Any];
    }
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    ranked.into_iter().map(|(_, _, media)| media).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(*k, v.parse().unwrap());
        }
        map
    }

    #[test]
    fn prefer_headers() {
        let p = preferences(&headers(&[
            ("prefer", "return=representation, count=exact"),
            (
                "prefer",
                "resolution=merge-duplicates,missing=default, tx=rollback",
            ),
            (
                "prefer",
                "max-affected=5, handling=strict, timezone=UTC, params=single-object, nope=1",
            ),
        ]));
        assert_eq!(p.return_, Some(PreferReturn::Representation));
        assert_eq!(p.count, Some(PreferCount::Exact));
        assert_eq!(p.resolution, Some(PreferResolution::MergeDuplicates));
        assert_eq!(p.missing, Some(PreferMissing::Default));
        assert_eq!(p.tx, Some(PreferTx::Rollback));
        assert_eq!(p.max_affected, Some(5));
        assert_eq!(p.handling, Some(PreferHandling::Strict));
        assert_eq!(p.timezone.as_deref(), Some("UTC"));
        assert_eq!(p.params, Some(PreferParams::SingleObject));
        assert_eq!(p.invalid, ["nope=1"]);
    }

    #[test]
    fn ranges() {
        assert_eq!(
            range(&headers(&[("range", "0-24")])).unwrap(),
            Some(RowRange {
                offset: 0,
                last: Some(24)
            })
        );
        assert_eq!(
            range(&headers(&[("range", "10-")])).unwrap(),
            Some(RowRange {
                offset: 10,
                last: None
            })
        );
        assert_eq!(
            range(&headers(&[("range", "1-2"), ("range-unit", "bytes")])).unwrap(),
            None
        );
        assert_eq!(range(&headers(&[("range", "x")])).unwrap(), None);
        assert_eq!(
            range(&headers(&[("range", "5-2")])).unwrap_err().code,
            "PGRST103"
        );
    }

    #[test]
    fn accept_ranks_by_quality_then_order() {
        let a = accept(&headers(&[(
            "accept",
            "text/csv;q=0.5, application/json, application/vnd.pgrst.object+json;nulls=stripped;q=0.9, text/xml;q=0",
        )]));
        assert_eq!(
            a,
            vec![
                MediaType::Json,
                MediaType::SingleObject {
                    nulls_stripped: true
                },
                MediaType::Csv
            ]
        );
        assert_eq!(accept(&HeaderMap::new()), vec![MediaType::Any]);
        assert_eq!(media_type("application/x-ndjson"), MediaType::JsonLines);
    }
}
