//! Reading a request: query parameters, credentials, and the body (inflated when gzip-encoded).

use crate::reply::ApiError;
use base64::Engine;
use bytes::Bytes;
use http::header;
use sluice_http::{BodyError, Request, RequestContext, read_body};
use std::borrow::Cow;
use std::io::Read;

/// Compressed bodies larger than this are inflated on the blocking pool, not the I/O thread.
const INLINE_INFLATE_LIMIT: usize = 256 * 1024;

/// The decoded query string parameters of a request.
#[derive(Debug, Default)]
pub struct QueryParams {
    pairs: Vec<(String, String)>,
}

impl QueryParams {
    /// Parses `a=1&b=x%20y` (form encoding, as InfluxDB clients send).
    pub fn parse(query: Option<&str>) -> QueryParams {
        let pairs = query
            .map(|q| {
                form_urlencoded::parse(q.as_bytes())
                    .map(|(k, v)| (k.into_owned(), v.into_owned()))
                    .collect()
            })
            .unwrap_or_default();
        QueryParams { pairs }
    }

    /// Adds the pairs of a form-encoded body.
    pub fn extend_from_form(&mut self, body: &[u8]) {
        self.pairs
            .extend(form_urlencoded::parse(body).map(|(k, v)| (k.into_owned(), v.into_owned())));
    }

    /// The first value of `name`, if given and not empty.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, v)| k == name && !v.is_empty())
            .map(|(_, v)| v.as_str())
    }
}

/// The secret a request presents: a token (`Authorization: Token x` or `Bearer x`), the
/// password of Basic auth, or v1's `p` query parameter (the user name is not checked: as in
/// InfluxDB 2's v1 compatibility, the password is the token).
pub fn presented_secret<'r>(request: &'r Request, params: &'r QueryParams) -> Option<Cow<'r, str>> {
    if let Some(value) = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    {
        let (scheme, rest) = value.trim().split_once(' ').unwrap_or((value, ""));
        let rest = rest.trim();
        if scheme.eq_ignore_ascii_case("token") || scheme.eq_ignore_ascii_case("bearer") {
            return Some(Cow::Borrowed(rest));
        }
        if scheme.eq_ignore_ascii_case("basic") {
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(rest)
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())?;
            let password = decoded.split_once(':').map_or("", |(_, p)| p).to_owned();
            return Some(Cow::Owned(password));
        }
    }
    params.get("p").map(Cow::Borrowed)
}

/// Whether `secret` is one of `tokens`, compared without an early exit on the first differing
/// byte so the comparison time says nothing about the token.
pub fn token_matches(tokens: &[String], secret: &str) -> bool {
    tokens.iter().any(|token| {
        token.len() == secret.len()
            && token
                .bytes()
                .zip(secret.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    })
}

/// Reads the whole body within the server's limit; a gzip body is inflated, and its inflated
/// size is held to the same limit (413 beyond it).
pub async fn body(request: Request, context: &RequestContext) -> Result<Bytes, ApiError> {
    let gzip = request
        .headers()
        .get(header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().to_ascii_lowercase());
    let gzip = match gzip.as_deref() {
        None | Some("" | "identity") => false,
        Some("gzip" | "x-gzip") => true,
        Some(other) => {
            return Err(ApiError::Invalid(format!(
                "unsupported Content-Encoding {other:?}: send the body plain or gzip-compressed"
            )));
        }
    };
    let content_length = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let limit = context.body_limit;
    let raw = read_body(
        request.into_body(),
        content_length,
        limit,
        context.body_timeout,
    )
    .await
    .map_err(|error| match error {
        BodyError::TooLarge { limit } => ApiError::TooLarge { limit },
        BodyError::Timeout(_) => ApiError::Timeout(error.to_string()),
        BodyError::Io(_) => ApiError::Invalid(error.to_string()),
        // sluice-http's memory budget is spent: 503 with Retry-After, as InfluxDB answers
        // when its write queue is full.
        BodyError::Busy(_) => ApiError::Unavailable {
            message: error.to_string(),
            cause: None,
        },
    })?;
    if !gzip {
        return Ok(raw);
    }
    if raw.len() <= INLINE_INFLATE_LIMIT {
        return inflate(&raw, limit);
    }
    tokio::task::spawn_blocking(move || inflate(&raw, limit))
        .await
        .map_err(|error| ApiError::Database {
            message: "inflating the body failed".to_owned(),
            cause: Some(error.to_string()),
        })?
}

/// Inflates a gzip body, failing with 413 as soon as it grows past `limit`.
pub fn inflate(compressed: &[u8], limit: usize) -> Result<Bytes, ApiError> {
    let mut out = Vec::with_capacity(compressed.len().saturating_mul(4).min(limit));
    let decoder = flate2::read::MultiGzDecoder::new(compressed);
    decoder
        .take(limit as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|error| ApiError::Invalid(format!("the gzip body is not valid: {error}")))?;
    if out.len() > limit {
        return Err(ApiError::TooLarge { limit });
    }
    Ok(Bytes::from(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_whole() {
        let tokens = vec!["secret".to_owned()];
        assert!(token_matches(&tokens, "secret"));
        assert!(!token_matches(&tokens, "secre"));
        assert!(!token_matches(&tokens, "secrex"));
        assert!(!token_matches(&[], "secret"));
    }

    #[test]
    fn params_decode() {
        let params = QueryParams::parse(Some("db=my%20db&precision=s&u="));
        assert_eq!(params.get("db"), Some("my db"));
        assert_eq!(params.get("precision"), Some("s"));
        assert_eq!(params.get("u"), None);
    }

    #[test]
    fn inflate_bounded() {
        use std::io::Write;
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(&[b'a'; 1000]).ok();
        let compressed = encoder.finish().unwrap_or_default();
        assert_eq!(inflate(&compressed, 1000).map(|b| b.len()).ok(), Some(1000));
        assert!(matches!(
            inflate(&compressed, 999),
            Err(ApiError::TooLarge { .. })
        ));
        assert!(matches!(
            inflate(b"not gzip", 999),
            Err(ApiError::Invalid(_))
        ));
    }
}
