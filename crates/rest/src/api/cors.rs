//! Cross-origin requests as PostgREST answers them: any origin by default (or only those of
//! `cors_allowed_origins`), preflights answered before authentication and cached for a day, and
//! the response headers a browser script may read exposed.

use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use sluice_http::{Response, empty};

const ALLOW_METHODS: &str = "GET, POST, PATCH, PUT, DELETE, OPTIONS, HEAD";
const ALLOW_HEADERS: &str =
    "Authorization, Content-Type, Accept, Accept-Language, Content-Language";
const EXPOSE_HEADERS: &str = "Content-Encoding, Content-Location, Content-Range, Content-Type, \
                              Date, Location, Server, Transfer-Encoding, Range-Unit";
/// How long a browser may cache a preflight's answer, in seconds.
const MAX_AGE: &str = "86400";

/// The origin to name in `Access-Control-Allow-Origin`, when the request is a cross-origin one
/// this API allows (`allowed` empty: any origin).
fn allowed_origin<'h>(headers: &'h HeaderMap, allowed: &[String]) -> Option<&'h HeaderValue> {
    let origin = headers.get(header::ORIGIN)?;
    if allowed.is_empty() {
        return Some(origin);
    }
    let text = origin.to_str().ok()?;
    allowed.iter().any(|a| a == text).then_some(origin)
}

/// The answer to a preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`);
/// `None` when the request is not one, or its origin is not allowed (it then goes on as an
/// ordinary `OPTIONS`).
pub(crate) fn preflight(
    method: &Method,
    headers: &HeaderMap,
    allowed: &[String],
) -> Option<Response> {
    if method != Method::OPTIONS || !headers.contains_key(header::ACCESS_CONTROL_REQUEST_METHOD) {
        return None;
    }
    let origin = allowed_origin(headers, allowed)?.clone();
    let mut response = Response::new(empty());
    *response.status_mut() = StatusCode::OK;
    let out = response.headers_mut();
    out.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    out.insert(
        header::ACCESS_CONTROL_ALLOW_CREDENTIALS,
        HeaderValue::from_static("true"),
    );
    out.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static(ALLOW_METHODS),
    );
    // The headers the page asked for are allowed besides the usual ones (a custom header a
    // row-level policy reads from request.headers, say).
    let asked = headers
        .get(header::ACCESS_CONTROL_REQUEST_HEADERS)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty());
    let allow_headers = match asked {
        Some(asked) => HeaderValue::from_str(&format!("{ALLOW_HEADERS}, {asked}"))
            .unwrap_or(HeaderValue::from_static(ALLOW_HEADERS)),
        None => HeaderValue::from_static(ALLOW_HEADERS),
    };
    out.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, allow_headers);
    out.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static(MAX_AGE),
    );
    Some(response)
}

/// Adds the CORS headers to the answer of a cross-origin request from an allowed origin.
pub(crate) fn decorate(request: &HeaderMap, allowed: &[String], response: &mut Response) {
    let Some(origin) = allowed_origin(request, allowed) else {
        return;
    };
    let value = if allowed.is_empty() {
        HeaderValue::from_static("*")
    } else {
        origin.clone()
    };
    let out = response.headers_mut();
    out.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, value);
    if !allowed.is_empty() {
        out.insert(
            header::ACCESS_CONTROL_ALLOW_CREDENTIALS,
            HeaderValue::from_static("true"),
        );
        out.append(header::VARY, HeaderValue::from_static("Origin"));
    }
    out.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static(EXPOSE_HEADERS),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(k, v)| {
                (
                    http::HeaderName::from_static(k),
                    HeaderValue::from_static(v),
                )
            })
            .collect()
    }

    #[test]
    fn a_preflight_echoes_the_origin_and_the_asked_headers() {
        let asked = headers(&[
            ("origin", "http://example.com"),
            ("access-control-request-method", "POST"),
            ("access-control-request-headers", "X-App-Id"),
        ]);
        let response = preflight(&Method::OPTIONS, &asked, &[]).unwrap();
        let h = response.headers();
        assert_eq!(h["access-control-allow-origin"], "http://example.com");
        assert_eq!(h["access-control-allow-methods"], ALLOW_METHODS);
        assert!(
            h["access-control-allow-headers"]
                .to_str()
                .unwrap()
                .ends_with(", X-App-Id")
        );
        assert_eq!(h["access-control-max-age"], "86400");
        // Not a preflight: an OPTIONS without the request method, a GET.
        let plain = headers(&[("origin", "http://example.com")]);
        assert!(preflight(&Method::OPTIONS, &plain, &[]).is_none());
        assert!(preflight(&Method::GET, &asked, &[]).is_none());
    }

    #[test]
    fn an_origin_list_admits_only_its_origins() {
        let allowed = vec!["http://a.example".to_string()];
        let from_b = headers(&[
            ("origin", "http://b.example"),
            ("access-control-request-method", "GET"),
        ]);
        assert!(preflight(&Method::OPTIONS, &from_b, &allowed).is_none());
        let mut response = Response::new(empty());
        decorate(&from_b, &allowed, &mut response);
        assert!(
            response
                .headers()
                .get("access-control-allow-origin")
                .is_none()
        );
        let from_a = headers(&[("origin", "http://a.example")]);
        decorate(&from_a, &allowed, &mut response);
        assert_eq!(
            response.headers()["access-control-allow-origin"],
            "http://a.example"
        );
        assert_eq!(response.headers()["vary"], "Origin");
        // Without a list, any origin, answered with *.
        let mut open = Response::new(empty());
        decorate(&from_b, &[], &mut open);
        assert_eq!(open.headers()["access-control-allow-origin"], "*");
        assert!(
            open.headers()["access-control-expose-headers"]
                .to_str()
                .unwrap()
                .contains("Content-Range")
        );
        // No Origin: not a cross-origin request, nothing added.
        let mut same = Response::new(empty());
        decorate(&HeaderMap::new(), &[], &mut same);
        assert!(same.headers().is_empty());
    }
}
