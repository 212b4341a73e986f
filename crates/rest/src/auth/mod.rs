//! Who a request runs as: a bearer JWT verified with the configured keys (PostgREST's
//! `jwt-secret`: an HMAC secret, a PEM key, a JWK or JWKS), its role taken from the claim at
//! `jwt-role-claim-key`; no token runs as the anonymous role, and without one configured is
//! refused (PGRST302).

mod keys;

use crate::error::ApiError;
use http::StatusCode;
use jsonwebtoken::{Validation, decode, decode_header, errors::ErrorKind};
pub use keys::JwtConfigError;
use keys::VerifyingKey;
use serde_json::Value;

/// Clock skew allowed on `exp`, `nbf` and `iat`, as PostgREST allows.
const LEEWAY_SECONDS: u64 = 30;

/// The longest `Authorization` value looked at; longer ones are refused unread.
const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// One step of a role claim path: `.key`, `."key with dots"`, `[0]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimStep {
    /// `.key` or `."key"`: an object's member.
    Key(String),
    /// `[n]`: an array's element.
    Index(usize),
}

/// How tokens are checked.
#[derive(Clone)]
pub struct JwtConfig {
    keys: Vec<VerifyingKey>,
    audience: Option<String>,
    role_claim: Vec<ClaimStep>,
}

impl std::fmt::Debug for JwtConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secret.
        f.debug_struct("JwtConfig")
            .field("keys", &self.keys.len())
            .field("audience", &self.audience)
            .field("role_claim", &self.role_claim)
            .finish_non_exhaustive()
    }
}

impl JwtConfig {
    /// The keys in `secret` (an HMAC secret, base64 when `is_base64`; a PEM public key; a JWK
    /// or JWKS document; any of them from a file as `@path`), the audience tokens must name,
    /// and the role claim path (`.role`, `.app_metadata.role`, `."https://x.io/role"`,
    /// `.roles[0]`).
    pub fn new(
        secret: &str,
        is_base64: bool,
        audience: Option<String>,
        role_claim_key: &str,
    ) -> Result<JwtConfig, JwtConfigError> {
        Ok(JwtConfig {
            keys: keys::read_keys(secret, is_base64)?,
            audience,
            role_claim: parse_claim_path(role_claim_key)?,
        })
    }
}

/// Parses PostgREST's `jwt-role-claim-key` syntax.
pub fn parse_claim_path(path: &str) -> Result<Vec<ClaimStep>, JwtConfigError> {
    let bad = |why| JwtConfigError::ClaimPath(path.to_string(), why);
    let mut steps = Vec::new();
    let mut rest = path.trim();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            if let Some(quoted) = after.strip_prefix('"') {
                let end = quoted.find('"').ok_or_else(|| bad("an unclosed quote"))?;
                steps.push(ClaimStep::Key(quoted[..end].to_string()));
                rest = &quoted[end + 1..];
            } else {
                let end = after.find(['.', '[']).unwrap_or(after.len());
                if end == 0 {
                    return Err(bad("an empty key"));
                }
                steps.push(ClaimStep::Key(after[..end].to_string()));
                rest = &after[end..];
            }
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']').ok_or_else(|| bad("an unclosed ["))?;
            let index = after[..end]
                .trim()
                .parse()
                .map_err(|_| bad("an index that is not a whole number"))?;
            steps.push(ClaimStep::Index(index));
            rest = &after[end + 1..];
        } else {
            return Err(bad("each step starts with . or ["));
        }
    }
    if steps.is_empty() {
        return Err(bad("an empty path"));
    }
    Ok(steps)
}

/// Who the request runs as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The role to `SET LOCAL ROLE` to; `None`: the role Sluice connects with.
    pub role: Option<String>,
    /// The token's claims as JSON (`request.jwt.claims`), when there was a token.
    pub claims_json: Option<String>,
}

impl Identity {
    /// Whether a token named the role (PostgREST answers 403 rather than 401 then).
    pub fn authenticated(&self) -> bool {
        self.claims_json.is_some()
    }
}

/// A 401 in PostgREST's shape; `description` goes to `WWW-Authenticate` as well.
fn unauthorized(code: &str, message: &str, description: &str) -> ApiError {
    ApiError::new(StatusCode::UNAUTHORIZED, code, message).authenticate(format!(
        "Bearer error=\"invalid_token\", error_description=\"{description}\""
    ))
}

/// The request's identity from its `Authorization` header.
pub fn authenticate(
    config: Option<&JwtConfig>,
    anon_role: Option<&str>,
    authorization: Option<&http::HeaderValue>,
) -> Result<Identity, ApiError> {
    let anonymous = || Identity {
        role: anon_role.map(str::to_string),
        claims_json: None,
    };
    let Some(header) = authorization else {
        return match (config, anon_role) {
            // JWT configured but no anonymous role: a token is required.
            (Some(_), None) => Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "PGRST302",
                "Anonymous access is disabled",
            )
            .authenticate("Bearer".to_string())),
            _ => Ok(anonymous()),
        };
    };
    if header.len() > MAX_TOKEN_BYTES {
        return Err(unauthorized(
            "PGRST301",
            "JWT is too large",
            "JWT is too large",
        ));
    }
    let value = header.to_str().unwrap_or_default();
    let token = match value.split_once(' ') {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => token.trim(),
        _ => {
            return Err(unauthorized(
                "PGRST301",
                "The Authorization header is not a Bearer token",
                "The Authorization header is not a Bearer token",
            ));
        }
    };
    let Some(config) = config else {
        return Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "PGRST300",
            "Server lacks JWT secret",
        ));
    };
    let claims = verify(config, token)?;
    if let Some(iat) = claims.get("iat").and_then(Value::as_u64) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        if iat > now + LEEWAY_SECONDS {
            return Err(unauthorized(
                "PGRST303",
                "JWT issued at future",
                "JWT issued at future",
            ));
        }
    }
    let role = role_at(&claims, &config.role_claim)
        .map(str::to_string)
        .or_else(|| anon_role.map(str::to_string));
    Ok(Identity {
        role,
        claims_json: Some(claims.to_string()),
    })
}

/// The token's claims, when one of the configured keys verifies it. The key is chosen by the
/// token's `kid` (keys without a `kid` serve any; a token without one may be verified by any)
/// and must be of the family the token's `alg`
/// names: an HMAC token never meets a public key as its secret, nor `none` any key.
fn verify(config: &JwtConfig, token: &str) -> Result<Value, ApiError> {
    let refused = |error: &jsonwebtoken::errors::Error| {
        let (code, message) = match error.kind() {
            ErrorKind::ExpiredSignature => ("PGRST303", "JWT expired"),
            ErrorKind::ImmatureSignature => ("PGRST303", "JWT not yet valid"),
            ErrorKind::InvalidAudience => ("PGRST303", "JWT not in audience"),
            ErrorKind::InvalidSignature => ("PGRST301", "JWT cryptographic operation failed"),
            ErrorKind::InvalidAlgorithm | ErrorKind::InvalidAlgorithmName => {
                ("PGRST301", "JWT algorithm is not allowed")
            }
            _ => ("PGRST301", "JWT is malformed"),
        };
        unauthorized(code, message, message)
    };
    let header = decode_header(token).map_err(|e| refused(&e))?;
    let mut candidates = config
        .keys
        .iter()
        .filter(|k| k.kid.is_none() || header.kid.is_none() || k.kid == header.kid)
        .filter(|k| k.algorithms.contains(&header.alg))
        .peekable();
    if candidates.peek().is_none() {
        let message = "No suitable key or wrong key type";
        return Err(unauthorized("PGRST301", message, message));
    }
    let mut validation = Validation::new(header.alg);
    validation.leeway = LEEWAY_SECONDS;
    validation.required_spec_claims.clear();
    validation.validate_exp = true;
    validation.validate_nbf = true;
    match &config.audience {
        Some(audience) => validation.set_audience(&[audience]),
        None => validation.validate_aud = false,
    }
    let mut last = None;
    for candidate in candidates {
        match decode::<Value>(token, &candidate.key, &validation) {
            Ok(data) => return Ok(data.claims),
            // Another key of the same kid (or none) may be the one.
            Err(error) if *error.kind() == ErrorKind::InvalidSignature => last = Some(error),
            Err(error) => return Err(refused(&error)),
        }
    }
    Err(last.map_or_else(
        || unauthorized("PGRST301", "JWT is malformed", "JWT is malformed"),
        |e| refused(&e),
    ))
}

/// The string at `path` in the claims, if there is one.
fn role_at<'v>(claims: &'v Value, path: &[ClaimStep]) -> Option<&'v str> {
    let mut at = claims;
    for step in path {
        at = match step {
            ClaimStep::Key(key) => at.get(key)?,
            ClaimStep::Index(i) => at.get(*i)?,
        };
    }
    at.as_str().filter(|role| !role.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn config() -> JwtConfig {
        JwtConfig::new("reallyreallyreallyreallyverysafe", false, None, ".role").unwrap()
    }

    proptest! {
        /// Whatever the header holds, without a valid signature nothing runs as anyone but the
        /// anonymous role: the answer is a refusal.
        #[test]
        fn no_valid_signature_no_role(token in "\\PC{0,200}", dots in 0usize..4) {
            let mut text = token.clone();
            for _ in 0..dots {
                text.push('.');
                text.push_str(&token);
            }
            let Ok(header) = http::HeaderValue::from_str(&format!("Bearer {text}")) else {
                return Ok(());
            };
            let config = config();
            let result = authenticate(Some(&config), Some("anon"), Some(&header));
            prop_assert!(result.is_err(), "{result:?}");
            let error = result.unwrap_err();
            prop_assert_eq!(error.status, StatusCode::UNAUTHORIZED);
            prop_assert!(error.www_authenticate.is_some());
        }
    }

    #[test]
    fn secrets_are_checked_and_never_shown() {
        assert!(matches!(
            JwtConfig::new("short", false, None, ".role"),
            Err(JwtConfigError::TooShort)
        ));
        assert!(matches!(
            JwtConfig::new("%%%", true, None, ".role"),
            Err(JwtConfigError::Base64)
        ));
        let shown = format!("{:?}", config());
        assert!(!shown.contains("reallyreally"), "{shown}");
        // No token and no anonymous role: refused.
        let error = authenticate(Some(&config()), None, None).unwrap_err();
        assert_eq!(error.code, "PGRST302");
        // A token but no secret configured.
        let header = http::HeaderValue::from_static("Bearer a.b.c");
        let error = authenticate(None, Some("anon"), Some(&header)).unwrap_err();
        assert_eq!(error.code, "PGRST300");
    }

    #[test]
    fn claim_paths_as_postgrest_writes_them() {
        assert_eq!(
            parse_claim_path(".role").unwrap(),
            vec![ClaimStep::Key("role".into())]
        );
        assert_eq!(
            parse_claim_path(r#".app."https://x.io/r.a"[1]"#).unwrap(),
            vec![
                ClaimStep::Key("app".into()),
                ClaimStep::Key("https://x.io/r.a".into()),
                ClaimStep::Index(1)
            ]
        );
        for bad in ["", "role", ".", ".\"open", ".a[x]", ".a[1"] {
            assert!(parse_claim_path(bad).is_err(), "{bad:?}");
        }
        let claims: Value = serde_json::json!({"app": {"roles": ["x", "editor"]}});
        let path = parse_claim_path(".app.roles[1]").unwrap();
        assert_eq!(role_at(&claims, &path), Some("editor"));
        assert_eq!(role_at(&claims, &parse_claim_path(".nope").unwrap()), None);
    }
}
