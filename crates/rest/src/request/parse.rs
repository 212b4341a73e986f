//! A request as a whole: method, path and query string split into their parts, headers read.

use super::ApiRequest;
use super::ast::{EmbedPath, Method, QueryParams, Resource};
use super::filter::parse_logic;
use super::headers::{accept, media_type, preferences, range};
use super::select::{parse_columns, parse_order, parse_select};
use crate::error::ApiError;
use http::StatusCode;

/// Parses a request: `path` is the part after the API's prefix (`/films`, `/rpc/f`, `/`).
pub fn parse_request(
    method: &http::Method,
    path: &str,
    query: Option<&str>,
    headers: &http::HeaderMap,
) -> Result<ApiRequest, ApiError> {
    let method = match *method {
        http::Method::GET => Method::Get,
        http::Method::HEAD => Method::Head,
        http::Method::POST => Method::Post,
        http::Method::PATCH => Method::Patch,
        http::Method::PUT => Method::Put,
        http::Method::DELETE => Method::Delete,
        http::Method::OPTIONS => Method::Options,
        ref other => {
            return Err(ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "PGRST117",
                format!("Unsupported HTTP method: {other}"),
            ));
        }
    };
    let resource = resource(path)?;
    let canonical = match (&resource, method) {
        (Resource::Relation(_), Method::Get | Method::Head) => {
            super::canonical_query(query.unwrap_or(""))
        }
        _ => String::new(),
    };
    let query = query_params(query.unwrap_or(""))?;
    let profile_header = match method {
        Method::Get | Method::Head => "accept-profile",
        _ => "content-profile",
    };
    let profile = headers
        .get(profile_header)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().to_string());
    let content_type = headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(media_type);
    Ok(ApiRequest {
        method,
        resource,
        query,
        prefer: preferences(headers),
        // Range is for GET alone (RFC 9110): PostgREST ignores it on HEAD too, which then
        // answers the whole result's Content-Range; limit and offset still apply.
        range: match method {
            Method::Get => range(headers)?,
            _ => None,
        },
        accept: accept(headers),
        content_type,
        profile,
        canonical_query: canonical,
    })
}

/// `/` is the schema, `/rpc/name` a function, `/name` a table or view; 404 PGRST125 otherwise.
fn resource(path: &str) -> Result<Resource, ApiError> {
    let decoded = percent_decode(path).ok_or_else(invalid_path)?;
    let trimmed = decoded.strip_suffix('/').unwrap_or(&decoded);
    let mut segments = trimmed.split('/').skip(1);
    match (segments.next(), segments.next(), segments.next()) {
        (None | Some(""), None, None) => Ok(Resource::Schema),
        (Some("rpc"), Some(name), None) if !name.is_empty() => {
            Ok(Resource::Routine(name.to_string()))
        }
        (Some(name), None, None) if !name.is_empty() => Ok(Resource::Relation(name.to_string())),
        _ => Err(invalid_path()),
    }
}

fn invalid_path() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "PGRST125",
        "Invalid path specified in request URL",
    )
}

/// `%xx` decoded (not `+`); `None` when the result is not UTF-8 or holds a NUL.
fn percent_decode(text: &str) -> Option<std::borrow::Cow<'_, str>> {
    if !text.contains(['%', '\0']) {
        return Some(std::borrow::Cow::Borrowed(text));
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let value = u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
            out.push(value);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    if out.contains(&0) {
        return None;
    }
    String::from_utf8(out).ok().map(std::borrow::Cow::Owned)
}

/// The reserved word a key ends with, and the embed path before it.
fn reserved(key: &str) -> Option<(EmbedPath, &str)> {
    const WORDS: [&str; 8] = [
        "select",
        "order",
        "limit",
        "offset",
        "or",
        "and",
        "columns",
        "on_conflict",
    ];
    let (before, last) = match key.rsplit_once('.') {
        Some((before, last)) => (Some(before), last),
        None => (None, key),
    };
    if !WORDS.contains(&last) {
        return None;
    }
    let mut path: Vec<String> = before
        .into_iter()
        .flat_map(|b| b.split('.'))
        .map(str::to_string)
        .collect();
    if matches!(last, "or" | "and") && path.last().is_some_and(|s| s == "not") {
        path.pop();
    }
    Some((path, last))
}

/// The query string split into reserved parameters and the rest.
fn query_params(query: &str) -> Result<QueryParams, ApiError> {
    let mut params = QueryParams::default();
    // As PostgREST splits it: at `&` and `;`, keeping only the pieces with a `=` (a bare `flag`
    // is no parameter; `flag=` is one with an empty value).
    let pairs = query
        .split(['&', ';'])
        .filter(|piece| piece.contains('='))
        .filter_map(|piece| form_urlencoded::parse(piece.as_bytes()).next());
    for (key, value) in pairs {
        let (key, value) = (key.into_owned(), value.into_owned());
        let Some((path, word)) = reserved(&key) else {
            params.params.push((key, value));
            continue;
        };
        // A negative offset counts as none and a negative limit is 416, as in PostgREST.
        let number = |value: &str| {
            let number = value.trim().parse::<i64>().map_err(|_| {
                ApiError::parse(
                    format!("failed to parse {word} parameter ({value})"),
                    format!("{value:?} is not a whole number of rows"),
                )
            })?;
            if number < 0 && word == "limit" {
                return Err(ApiError::new(
                    StatusCode::RANGE_NOT_SATISFIABLE,
                    "PGRST103",
                    "Requested range not satisfiable",
                )
                .details("Limit should be greater than or equal to zero."));
            }
            Ok(number.max(0).unsigned_abs())
        };
        match word {
            "select" if path.is_empty() => params.select = Some(parse_select(&value)?),
            "order" => params.order.push((path, parse_order(&value)?)),
            "limit" => params.limit.push((path, number(&value)?)),
            "offset" => params.offset.push((path, number(&value)?)),
            "or" | "and" => params.logic.push(parse_logic(&key, &value)?),
            "columns" if path.is_empty() => params.columns = Some(parse_columns(&value)?),
            "on_conflict" if path.is_empty() => params.on_conflict = Some(parse_columns(&value)?),
            // `x.select=` and the like name a column called select of an embed: a filter.
            _ => params.params.push((key, value)),
        }
    }
    Ok(params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::ast::*;

    fn get(path: &str, query: &str) -> Result<ApiRequest, ApiError> {
        parse_request(
            &http::Method::GET,
            path,
            Some(query),
            &http::HeaderMap::new(),
        )
    }

    #[test]
    fn paths() {
        assert_eq!(get("/", "").unwrap().resource, Resource::Schema);
        assert_eq!(
            get("/films", "").unwrap().resource,
            Resource::Relation("films".into())
        );
        assert_eq!(
            get("/films/", "").unwrap().resource,
            Resource::Relation("films".into())
        );
        assert_eq!(
            get("/my%20table", "").unwrap().resource,
            Resource::Relation("my table".into())
        );
        assert_eq!(
            get("/rpc/add", "").unwrap().resource,
            Resource::Routine("add".into())
        );
        for bad in ["/films/1", "/a/b/c", "/x%00y", "/%zz"] {
            assert_eq!(get(bad, "").unwrap_err().code, "PGRST125", "{bad}");
        }
        let e = parse_request(
            &http::Method::TRACE,
            "/films",
            None,
            &http::HeaderMap::new(),
        )
        .unwrap_err();
        assert_eq!((e.status.as_u16(), e.code.as_str()), (405, "PGRST117"));
    }

    #[test]
    fn query_strings() {
        let r = get(
            "/films",
            "select=id,title&id=gte.2&order=id.desc&limit=10&offset=5&clients.limit=3&clients.order=name&or=(a.eq.1,b.eq.2)&clients.not.and=(x.eq.1,y.eq.2)&name=like.A%2A&q=plus+sign",
        )
        .unwrap();
        let q = &r.query;
        assert_eq!(q.select.as_ref().map(Vec::len), Some(2));
        assert_eq!(q.limit, vec![(vec![], 10), (vec!["clients".into()], 3)]);
        assert_eq!(q.offset, vec![(vec![], 5)]);
        assert_eq!(q.order.len(), 2);
        assert_eq!(q.logic.len(), 2);
        assert_eq!(q.logic[1].0, vec!["clients".to_string()]);
        assert!(matches!(
            q.logic[1].1,
            LogicTree::Node {
                negated: true,
                op: LogicOperator::And,
                ..
            }
        ));
        assert_eq!(
            q.params,
            vec![
                ("id".into(), "gte.2".into()),
                ("name".into(), "like.A*".into()),
                ("q".into(), "plus sign".into())
            ]
        );
        assert_eq!(get("/films", "limit=ten").unwrap_err().code, "PGRST100");
        assert_eq!(get("/films", "select=a(").unwrap_err().code, "PGRST100");
    }

    #[test]
    fn headers_and_profiles() {
        let mut headers = http::HeaderMap::new();
        headers.insert("accept-profile", "other".parse().unwrap());
        headers.insert("content-profile", "writes".parse().unwrap());
        headers.insert(
            "content-type",
            "application/json; charset=utf-8".parse().unwrap(),
        );
        let r = parse_request(&http::Method::GET, "/t", None, &headers).unwrap();
        assert_eq!(r.profile.as_deref(), Some("other"));
        let r = parse_request(&http::Method::POST, "/t", None, &headers).unwrap();
        assert_eq!(r.profile.as_deref(), Some("writes"));
        assert_eq!(r.content_type, Some(MediaType::Json));
    }
}
