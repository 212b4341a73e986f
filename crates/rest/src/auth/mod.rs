//! Who a request runs as: a bearer JWT verified with the configured keys
//! ([`sluice_http::jwt`]: PostgREST's `jwt-secret`), its role taken from the claim at
//! `jwt-role-claim-key`; no token runs as the anonymous role, and without one configured is
//! refused (PGRST302).

use crate::error::ApiError;
use http::StatusCode;
use serde_json::Value;
use sluice_http::jwt::MAX_TOKEN_BYTES;
pub use sluice_http::jwt::{ClaimStep, JwtConfig, JwtConfigError, parse_claim_path};

/// Who the request runs as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The role to `SET LOCAL ROLE` to; `None`: the role Sluice connects with.
    pub role: Option<String>,
    /// The token's claims as JSON (`request.jwt.claims`), when there was a token; their
    /// `role` is the role the request runs as.
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
            (Some(_), None) => Err(token_required()),
            _ => Ok(anonymous()),
        };
    };
    let token = bearer_token(header)?;
    let Some(config) = config else {
        return Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "PGRST300",
            "Server lacks JWT secret",
        ));
    };
    verified(config, anon_role, token).map(|(identity, _)| identity)
}

/// The token of a `Bearer` header; a header too large or of another scheme is refused.
fn bearer_token(header: &http::HeaderValue) -> Result<&str, ApiError> {
    if header.len() > MAX_TOKEN_BYTES {
        return Err(unauthorized(
            "PGRST301",
            "JWT is too large",
            "JWT is too large",
        ));
    }
    let value = header.to_str().unwrap_or_default();
    match sluice_http::jwt::bearer_token(value) {
        Some(token) => Ok(token),
        None => Err(unauthorized(
            "PGRST301",
            "The Authorization header is not a Bearer token",
            "The Authorization header is not a Bearer token",
        )),
    }
}

/// The identity `token` names when `config` verifies it, with its `exp` (seconds since the
/// Unix epoch) when it has a numeric one.
fn verified(
    config: &JwtConfig,
    anon_role: Option<&str>,
    token: &str,
) -> Result<(Identity, Option<f64>), ApiError> {
    let claims = config
        .verify_claims(token)
        .map_err(|e| unauthorized(e.code, e.message, e.message))?;
    let exp = claims.value.get("exp").and_then(Value::as_f64);
    // The token's role, else the anonymous role, else none to run as: refused as PostgREST
    // refuses it, never run as the role Sluice connects with.
    let role = config
        .role_of(&claims.value)
        .or(anon_role)
        .ok_or_else(token_required)?
        .to_string();
    // `set_config('role', 'none', true)` is `SET ROLE NONE`: back to the role Sluice connects
    // with. PostgreSQL reserves the name, so no role has it: answered as PostgreSQL answers a
    // role that does not exist.
    if role == "none" {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "22023",
            "role \"none\" does not exist",
        ));
    }
    // The claims PostgreSQL sees name that role under `role`, as PostgREST sets them; the
    // token's own text when it already does (the usual `.role` claim: serde_json and
    // PostgreSQL's `->>` both read the last of a key given twice).
    let claims_json = if claims.value.get("role").and_then(Value::as_str) == Some(&role) {
        claims.json
    } else {
        let mut value = claims.value;
        if let Value::Object(object) = &mut value {
            object.insert("role".to_string(), Value::from(role.as_str()));
        }
        value.to_string()
    };
    let identity = Identity {
        role: Some(role),
        claims_json: Some(claims_json),
    };
    Ok((identity, exp))
}

/// PostgREST's PGRST302: no role to run the request as (no token, or a token naming no role,
/// and no anonymous role).
fn token_required() -> ApiError {
    ApiError::new(
        StatusCode::UNAUTHORIZED,
        "PGRST302",
        "Anonymous access is disabled",
    )
    .authenticate("Bearer".to_string())
}

/// Identities of tokens verified recently (PostgREST's `jwt-cache-max-lifetime`): a token seen
/// again skips the signature check and the claims' parsing until its `exp` or the cache's
/// lifetime, whichever comes first. Bounded: when full, it starts over.
#[derive(Debug)]
pub struct JwtCache {
    max_lifetime: std::time::Duration,
    entries:
        parking_lot::Mutex<std::collections::HashMap<Box<str>, (Identity, std::time::Instant)>>,
}

/// The most tokens a cache holds.
const CACHE_CAPACITY: usize = 65_536;

impl JwtCache {
    /// A cache keeping entries at most `max_lifetime`.
    pub fn new(max_lifetime: std::time::Duration) -> JwtCache {
        JwtCache {
            max_lifetime,
            entries: parking_lot::Mutex::new(std::collections::HashMap::new()),
        }
    }

    /// As [`authenticate`], answering a token verified before from the cache.
    pub fn authenticate(
        &self,
        config: Option<&JwtConfig>,
        anon_role: Option<&str>,
        authorization: Option<&http::HeaderValue>,
    ) -> Result<Identity, ApiError> {
        // Only a bearer token with keys to verify it is cached, keyed by the token itself (not
        // the header's text, which spaces and the scheme's case vary without end).
        let (Some(config), Some(header)) = (config, authorization) else {
            return authenticate(config, anon_role, authorization);
        };
        let token = bearer_token(header)?;
        let now = std::time::Instant::now();
        if let Some((identity, until)) = self.entries.lock().get(token)
            && now < *until
        {
            return Ok(identity.clone());
        }
        let (identity, exp) = verified(config, anon_role, token)?;
        // Never past the token's own expiry, whatever number it is; a deadline too far to
        // reckon is not kept.
        let mut lifetime = self.max_lifetime;
        if let Some(exp) = exp {
            let unix_now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64());
            let left = std::time::Duration::try_from_secs_f64((exp - unix_now).max(0.0))
                .unwrap_or(std::time::Duration::MAX);
            lifetime = lifetime.min(left);
        }
        if let Some(until) = now.checked_add(lifetime) {
            let mut entries = self.entries.lock();
            if entries.len() >= CACHE_CAPACITY {
                entries.clear();
            }
            entries.insert(token.into(), (identity.clone(), until));
        }
        Ok(identity)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::Value;
    use sluice_http::jwt::role_at;

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
            prop_assert!(error.www_authenticate().is_some());
        }
    }

    /// Any JSON value a claim may hold, a few levels deep.
    fn claim_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            "\\PC{0,12}".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::btree_map("[a-z]{1,4}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn sign(claims: &Value, secret: &str) -> http::HeaderValue {
        let token = jsonwebtoken::encode(
            &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
            claims,
            &jsonwebtoken::EncodingKey::from_secret(secret.as_bytes()),
        )
        .unwrap();
        http::HeaderValue::from_str(&format!("Bearer {token}")).unwrap()
    }

    proptest! {
        /// A token signed with the secret runs as the role its claim names when that is a
        /// non-empty string, else as the anonymous role; its claims reach `request.jwt.claims`
        /// unchanged. The same claims signed with another secret, or expired, are refused.
        #[test]
        fn signed_claims_decide_the_role(
            claims in prop::collection::btree_map("[a-z]{1,6}", claim_value(), 0..5),
            role in prop::option::of(claim_value()),
            exp_offset in prop::option::of(-100_000i64..100_000),
        ) {
            let mut claims: serde_json::Map<String, Value> = claims.into_iter().collect();
            claims.remove("exp");
            claims.remove("nbf");
            claims.remove("iat");
            claims.remove("aud");
            if let Some(role) = role {
                claims.insert("role".into(), role);
            }
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs() as i64;
            // Well clear of the verifier's clock-skew allowance either way.
            let exp_offset = exp_offset.map(|offset| match offset {
                0..=120 => offset + 121,
                -120..0 => offset - 121,
                _ => offset,
            });
            let expired = exp_offset.is_some_and(|offset| offset < 0);
            if let Some(offset) = exp_offset {
                claims.insert("exp".into(), Value::from(now + offset));
            }
            let claims = Value::Object(claims);
            let config = config();
            let result = authenticate(Some(&config), Some("anon"), Some(&sign(&claims, "reallyreallyreallyreallyverysafe")));
            if expired {
                let error = result.unwrap_err();
                prop_assert_eq!(error.status, StatusCode::UNAUTHORIZED);
            } else {
                let identity = result.unwrap();
                let expected = claims
                    .get("role")
                    .and_then(Value::as_str)
                    .filter(|r| !r.is_empty())
                    .unwrap_or("anon");
                prop_assert_eq!(identity.role.as_deref(), Some(expected));
                // The claims as signed, naming the role the request runs as.
                let mut named = claims.clone();
                named["role"] = Value::from(expected);
                let seen: Value = serde_json::from_str(identity.claims_json.as_deref().unwrap()).unwrap();
                prop_assert_eq!(seen, named);
            }
            let forged = authenticate(Some(&config), Some("anon"), Some(&sign(&claims, "another-secret-of-thirty-two-bytes!")));
            prop_assert_eq!(forged.unwrap_err().status, StatusCode::UNAUTHORIZED);
        }
    }

    #[test]
    fn the_cache_answers_a_token_seen_before_and_never_an_expired_one() {
        let config = config();
        let cache = JwtCache::new(std::time::Duration::from_secs(60));
        // {"role": "rest_web_user", "sub": "alice"}
        let alice = http::HeaderValue::from_static(
            "Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoicmVzdF93ZWJfdXNlciIsInN1YiI6ImFsaWNlIn0.eQzLzo6JL9eGBSsRwpQt_xmn-bZcrpoFkxa5ZMbcLY8",
        );
        let first = cache
            .authenticate(Some(&config), Some("anon"), Some(&alice))
            .unwrap();
        let again = cache
            .authenticate(Some(&config), Some("anon"), Some(&alice))
            .unwrap();
        assert_eq!(first, again);
        assert_eq!(first.role.as_deref(), Some("rest_web_user"));
        assert_eq!(cache.entries.lock().len(), 1);
        // A refused token is not kept, and is refused again.
        let forged = http::HeaderValue::from_static("Bearer a.b.c");
        for _ in 0..2 {
            assert!(
                cache
                    .authenticate(Some(&config), Some("anon"), Some(&forged))
                    .is_err()
            );
        }
        assert_eq!(cache.entries.lock().len(), 1);
        // No token: the anonymous role, nothing cached.
        let anonymous = cache
            .authenticate(Some(&config), Some("anon"), None)
            .unwrap();
        assert_eq!(anonymous.role.as_deref(), Some("anon"));
        assert_eq!(cache.entries.lock().len(), 1);
    }

    /// PostgREST's rule: the role is the token's, else the anonymous role, else the request is
    /// refused (PGRST302). Without the refusal the request ran as the role Sluice connects with.
    #[test]
    fn a_verified_token_without_a_role_needs_the_anonymous_role() {
        let config = config();
        for claims in [
            serde_json::json!({"sub": "x"}),
            serde_json::json!({"role": ""}),
            serde_json::json!({"role": 5}),
        ] {
            let header = sign(&claims, "reallyreallyreallyreallyverysafe");
            let error = authenticate(Some(&config), None, Some(&header)).unwrap_err();
            assert_eq!(
                (error.status, error.code.as_str()),
                (StatusCode::UNAUTHORIZED, "PGRST302"),
                "{claims}"
            );
            let anonymous = authenticate(Some(&config), Some("anon"), Some(&header)).unwrap();
            assert_eq!(anonymous.role.as_deref(), Some("anon"), "{claims}");
        }
    }

    /// `request.jwt.claims` names the role the request runs as under `role`, as PostgREST's
    /// do (it sets the claims' `role` to the role it switched to): a policy reading
    /// `->> 'role'` sees that role, not a claim of the same name the role was not taken from.
    #[test]
    fn the_claims_name_the_role_the_request_runs_as() {
        let secret = "reallyreallyreallyreallyverysafe";
        let config = JwtConfig::new(secret, false, None, ".app.role").unwrap();
        let claims_of = |identity: &Identity| -> Value {
            serde_json::from_str(identity.claims_json.as_deref().unwrap()).unwrap()
        };
        let header = sign(
            &serde_json::json!({"role": "admin", "app": {"role": "web"}, "sub": "x"}),
            secret,
        );
        let identity = authenticate(Some(&config), Some("anon"), Some(&header)).unwrap();
        assert_eq!(identity.role.as_deref(), Some("web"));
        assert_eq!(
            claims_of(&identity),
            serde_json::json!({"role": "web", "app": {"role": "web"}, "sub": "x"})
        );
        // No role in the token: the anonymous role's.
        let header = sign(&serde_json::json!({"sub": "x"}), secret);
        let identity = authenticate(Some(&config), Some("anon"), Some(&header)).unwrap();
        assert_eq!(identity.role.as_deref(), Some("anon"));
        assert_eq!(
            claims_of(&identity),
            serde_json::json!({"role": "anon", "sub": "x"})
        );
    }

    /// The cache holds a token once, however its header is written: keyed by the header's
    /// text, one valid token filled it with thousands of entries of up to 16 KiB each (the
    /// scheme's case, spaces before the token), evicting everyone else's.
    #[test]
    fn the_cache_keeps_a_token_once_whatever_its_header_looks_like() {
        let config = config();
        let cache = JwtCache::new(std::time::Duration::from_secs(60));
        let token = sign(
            &serde_json::json!({"role": "web"}),
            "reallyreallyreallyreallyverysafe",
        );
        let token = token.to_str().unwrap().strip_prefix("Bearer ").unwrap();
        for header in [
            format!("Bearer {token}"),
            format!("bearer {token}"),
            format!("BEARER {token}"),
            format!("Bearer  {token}"),
            format!("Bearer {}{token}", " ".repeat(1000)),
        ] {
            let header = http::HeaderValue::from_str(&header).unwrap();
            let identity = cache
                .authenticate(Some(&config), Some("anon"), Some(&header))
                .unwrap();
            assert_eq!(identity.role.as_deref(), Some("web"));
        }
        assert_eq!(cache.entries.lock().len(), 1);
    }

    /// A cached token is answered no longer than its `exp` allows, whatever number `exp` is
    /// (a fraction was not read, so the entry lived the cache's whole lifetime), and a far
    /// `exp` or lifetime does not overflow the deadline (that panicked).
    #[test]
    fn a_cached_token_never_outlives_its_exp() {
        let config = config();
        let unix_now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let cache = JwtCache::new(std::time::Duration::from_secs(3600));
        let soon = serde_json::json!({"role": "web", "exp": unix_now as f64 + 5.5});
        let header = sign(&soon, "reallyreallyreallyreallyverysafe");
        let before = std::time::Instant::now();
        cache
            .authenticate(Some(&config), Some("anon"), Some(&header))
            .unwrap();
        let entries = cache.entries.lock();
        let until = entries.values().next().map(|(_, until)| *until);
        assert!(
            until.is_none_or(|until| until <= before + std::time::Duration::from_secs(7)),
            "kept {:?} for an exp 5.5 s away",
            until.map(|until| until - before)
        );
        drop(entries);
        for lifetime in [60, u64::MAX] {
            let cache = JwtCache::new(std::time::Duration::from_secs(lifetime));
            for exp in [serde_json::json!(u64::MAX), serde_json::json!(1e19)] {
                let header = sign(
                    &serde_json::json!({"role": "web", "exp": exp}),
                    "reallyreallyreallyreallyverysafe",
                );
                for _ in 0..2 {
                    let identity = cache
                        .authenticate(Some(&config), Some("anon"), Some(&header))
                        .unwrap();
                    assert_eq!(identity.role.as_deref(), Some("web"));
                }
            }
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
