//! JSON Web Tokens for every HTTP gate: the keys of PostgREST's `jwt-secret` (an HMAC secret, a
//! PEM key, a JWK or JWKS chosen by `kid`), verification with PostgREST's checks and error texts,
//! and the role at `jwt-role-claim-key`.

mod keys;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::errors::ErrorKind;
pub use keys::JwtConfigError;
use keys::{Key, VerifyingKey};
use serde_json::Value;

/// Clock skew allowed on `exp`, `nbf` and `iat`, as PostgREST allows.
const LEEWAY_SECONDS: u64 = 30;

/// Why a token was refused: PostgREST's code (`PGRST301` malformed or unverifiable,
/// `PGRST303` a claim out of date or audience) and message, which never echoes the token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JwtError {
    /// PostgREST's error code.
    pub code: &'static str,
    /// What was wrong, safe to show.
    pub message: &'static str,
}

impl std::fmt::Display for JwtError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for JwtError {}

/// Longest token verified: every gate (REST, view mounts, Influx) refuses a larger one before
/// decoding it, whatever the HTTP header limit lets through.
pub const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// The token of an `Authorization: Bearer <token>` value (the scheme in any case, blanks
/// around the token ignored); None for another scheme.
pub fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
}

fn refused(code: &'static str, message: &'static str) -> JwtError {
    JwtError { code, message }
}

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

impl JwtConfig {
    /// The token's claims when one of the keys verifies it and its `exp`, `nbf`, `iat` and
    /// `aud` hold.
    pub fn verify(&self, token: &str) -> Result<Value, JwtError> {
        self.verify_claims(token).map(|claims| claims.value)
    }

    /// As [`JwtConfig::verify`], with the claims' JSON text as the token carries it.
    pub fn verify_claims(&self, token: &str) -> Result<Claims, JwtError> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(refused("PGRST301", "JWT is too large"));
        }
        verify_with(self, token)
    }

    /// The role the claims name at the configured claim path, if a non-empty string is there.
    pub fn role_of<'v>(&self, claims: &'v Value) -> Option<&'v str> {
        role_at(claims, &self.role_claim)
    }
}

/// A verified token's claims: parsed, and as the JSON text the token carried (what
/// `request.jwt.claims` is set to, without writing it out again).
#[derive(Debug, Clone, PartialEq)]
pub struct Claims {
    /// The claims object.
    pub value: Value,
    /// The same claims as JSON text.
    pub json: String,
}

/// The token's claims, when one of the configured keys verifies it. The key is chosen by the
/// token's `kid` (keys without a `kid` serve any; a token without one may be verified by any)
/// and must be of the family the token's `alg`
/// names: an HMAC token never meets a public key as its secret, nor `none` any key. The
/// signature is checked before anything of the claims is read.
fn verify_with(config: &JwtConfig, token: &str) -> Result<Claims, JwtError> {
    let malformed = || refused("PGRST301", "JWT is malformed");
    let (message, signature) = token.rsplit_once('.').ok_or_else(malformed)?;
    let (header, payload) = message.rsplit_once('.').ok_or_else(malformed)?;
    let header: TokenHeader = URL_SAFE_NO_PAD
        .decode(header)
        .ok()
        .and_then(|json| serde_json::from_slice(&json).ok())
        .ok_or_else(malformed)?;
    if header.crit.is_some() {
        return Err(refused(
            "PGRST301",
            "JWT names critical header parameters that are not understood",
        ));
    }
    let mut candidates = config
        .keys
        .iter()
        .filter(|k| k.kid.is_none() || header.kid.is_none() || k.kid == header.kid)
        .filter(|k| k.algorithms.contains(&header.alg))
        .peekable();
    if candidates.peek().is_none() {
        return Err(refused("PGRST301", "No suitable key or wrong key type"));
    }
    let mut verified = false;
    for candidate in candidates {
        // Another key of the same kid (or none) may be the one.
        if signed_by(candidate, header.alg, message, signature)? {
            verified = true;
            break;
        }
    }
    if !verified {
        return Err(refused("PGRST301", "JWT cryptographic operation failed"));
    }
    let json = URL_SAFE_NO_PAD
        .decode(payload)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .ok_or_else(malformed)?;
    let value: Value = serde_json::from_str(&json).map_err(|_| malformed())?;
    let Value::Object(claims) = &value else {
        return Err(malformed());
    };
    check_claims(claims, config.audience.as_deref(), unix_now())?;
    Ok(Claims { value, json })
}

/// The parameters of a token's header that verification reads (an unknown `alg`, `none`
/// included, does not parse).
#[derive(serde::Deserialize)]
struct TokenHeader {
    alg: jsonwebtoken::Algorithm,
    #[serde(default)]
    kid: Option<String>,
    /// RFC 7515 4.1.11: extensions the recipient must understand; Sluice understands none.
    #[serde(default)]
    crit: Option<serde::de::IgnoredAny>,
}

/// Whether `signature` is `key`'s over `message` with `algorithm`.
fn signed_by(
    key: &VerifyingKey,
    algorithm: jsonwebtoken::Algorithm,
    message: &str,
    signature: &str,
) -> Result<bool, JwtError> {
    match &key.key {
        Key::Hmac(keys) => {
            // Keys are only tried for the algorithms they list; a signature that is not
            // base64url cannot be this key's.
            let (Some(hmac), Ok(signature)) = (
                keys.for_algorithm(algorithm),
                URL_SAFE_NO_PAD.decode(signature),
            ) else {
                return Ok(false);
            };
            Ok(ring::hmac::verify(hmac, message.as_bytes(), &signature).is_ok())
        }
        // The JWT crate would take a public key's bytes as the HMAC secret: never.
        Key::Public(_) if keys::HMAC.contains(&algorithm) => Ok(false),
        Key::Public(public) => {
            jsonwebtoken::crypto::verify(signature, message.as_bytes(), public, algorithm)
                .map_err(|e| refused_by(&e))
        }
    }
}

/// PostgREST's refusal for an error of the JWT crate.
fn refused_by(error: &jsonwebtoken::errors::Error) -> JwtError {
    let (code, message) = match error.kind() {
        ErrorKind::InvalidSignature => ("PGRST301", "JWT cryptographic operation failed"),
        ErrorKind::InvalidAlgorithm | ErrorKind::InvalidAlgorithmName => {
            ("PGRST301", "JWT algorithm is not allowed")
        }
        _ => ("PGRST301", "JWT is malformed"),
    };
    refused(code, message)
}

/// Seconds since the Unix epoch.
fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The registered claims' checks: `exp` and `nbf` (as the JWT crate checked them:
/// numbers, fractions rounded; anything else is malformed) within the clock-skew allowance,
/// `iat` not in the future, and, when an audience is configured, `aud` naming it as PostgREST
/// checks it: a string equal to it, or an array holding it; absent, null or an empty array is
/// accepted; anything else is refused.
fn check_claims(
    claims: &serde_json::Map<String, Value>,
    audience: Option<&str>,
    now: u64,
) -> Result<(), JwtError> {
    let numeric = |name: &str| -> Result<Option<u64>, JwtError> {
        let Some(value) = claims.get(name) else {
            return Ok(None);
        };
        let seconds = value.as_u64().or_else(|| {
            value
                .as_f64()
                .filter(|v| v.is_finite() && *v >= 0.0 && *v < u64::MAX as f64)
                .map(|v| v.round() as u64)
        });
        seconds
            .map(Some)
            .ok_or_else(|| refused("PGRST301", "JWT is malformed"))
    };
    if numeric("exp")?.is_some_and(|exp| exp < now.saturating_sub(LEEWAY_SECONDS)) {
        return Err(refused("PGRST303", "JWT expired"));
    }
    if numeric("nbf")?.is_some_and(|nbf| nbf > now.saturating_add(LEEWAY_SECONDS)) {
        return Err(refused("PGRST303", "JWT not yet valid"));
    }
    if let Some(iat) = claims.get("iat").and_then(Value::as_u64)
        && iat > now.saturating_add(LEEWAY_SECONDS)
    {
        return Err(refused("PGRST303", "JWT issued at future"));
    }
    if let Some(audience) = audience {
        let named = match claims.get("aud") {
            None | Some(Value::Null) => true,
            Some(Value::String(aud)) => aud == audience,
            // PostgREST ignores an empty array, as it ignores null.
            Some(Value::Array(auds)) => {
                auds.is_empty() || auds.iter().any(|aud| aud.as_str() == Some(audience))
            }
            Some(_) => false,
        };
        if !named {
            return Err(refused("PGRST303", "JWT not in audience"));
        }
    }
    Ok(())
}

/// The string at `path` in the claims, if there is one.
pub fn role_at<'v>(claims: &'v Value, path: &[ClaimStep]) -> Option<&'v str> {
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
    use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
    use serde_json::json;

    const SECRET: &str = "a-secret-of-at-least-thirty-two-bytes";

    fn token(alg: Algorithm, kid: Option<&str>, claims: &Value, secret: &[u8]) -> String {
        let mut header = Header::new(alg);
        header.kid = kid.map(str::to_string);
        encode(&header, claims, &EncodingKey::from_secret(secret)).unwrap()
    }

    #[test]
    fn each_hmac_digest_verifies_with_the_secret_and_fails_with_another() {
        let config = JwtConfig::new(SECRET, false, None, ".role").unwrap();
        let claims = json!({"role": "web", "n": 1});
        for alg in [Algorithm::HS256, Algorithm::HS384, Algorithm::HS512] {
            let verified = config
                .verify_claims(&token(alg, None, &claims, SECRET.as_bytes()))
                .unwrap();
            assert_eq!(verified.value, claims, "{alg:?}");
            assert_eq!(config.role_of(&verified.value), Some("web"));
            let forged = token(alg, None, &claims, b"another-secret-of-thirty-two-bytes!");
            assert_eq!(
                config.verify(&forged).unwrap_err().message,
                "JWT cryptographic operation failed",
                "{alg:?}"
            );
        }
        // A signature that is not base64url is a failed signature, not a crash.
        let good = token(Algorithm::HS256, None, &claims, SECRET.as_bytes());
        let (message, _) = good.rsplit_once('.').unwrap();
        for signature in ["", "!!!!", "a"] {
            assert_eq!(
                config
                    .verify(&format!("{message}.{signature}"))
                    .unwrap_err()
                    .message,
                "JWT cryptographic operation failed"
            );
        }
    }

    #[test]
    fn a_token_past_the_size_limit_is_refused_before_it_is_read() {
        let config = JwtConfig::new(SECRET, false, None, ".role").unwrap();
        let pad = "x".repeat(MAX_TOKEN_BYTES);
        let big = token(
            Algorithm::HS256,
            None,
            &json!({"role": "web", "pad": pad}),
            SECRET.as_bytes(),
        );
        assert_eq!(config.verify(&big).unwrap_err().message, "JWT is too large");
        let fits = token(
            Algorithm::HS256,
            None,
            &json!({"role": "web", "pad": "x".repeat(MAX_TOKEN_BYTES / 2)}),
            SECRET.as_bytes(),
        );
        assert!(fits.len() <= MAX_TOKEN_BYTES);
        assert!(config.verify(&fits).is_ok());
    }

    #[test]
    fn claims_text_is_the_tokens_own() {
        let config = JwtConfig::new(SECRET, false, None, ".role").unwrap();
        // Keys out of alphabetical order, as a client may write them.
        let claims = json!({"sub": "x", "role": "web"});
        let verified = config
            .verify_claims(&token(Algorithm::HS256, None, &claims, SECRET.as_bytes()))
            .unwrap();
        let reread: Value = serde_json::from_str(&verified.json).unwrap();
        assert_eq!(reread, claims);
        // Claims that are not an object are malformed.
        let array = token(Algorithm::HS256, None, &json!([1, 2]), SECRET.as_bytes());
        assert_eq!(
            config.verify(&array).unwrap_err().message,
            "JWT is malformed"
        );
    }

    #[test]
    fn an_octet_jwk_verifies_by_kid() {
        let k = URL_SAFE_NO_PAD.encode(SECRET);
        let jwks = json!({"keys": [
            {"kty": "oct", "kid": "one", "k": URL_SAFE_NO_PAD.encode("the-first-secret-of-thirty-two-bytes")},
            {"kty": "oct", "kid": "two", "k": k},
        ]});
        let config = JwtConfig::new(&jwks.to_string(), false, None, ".role").unwrap();
        let claims = json!({"role": "web"});
        let signed = token(Algorithm::HS384, Some("two"), &claims, SECRET.as_bytes());
        assert_eq!(config.verify(&signed).unwrap(), claims);
        let wrong_kid = token(Algorithm::HS384, Some("one"), &claims, SECRET.as_bytes());
        assert!(config.verify(&wrong_kid).is_err());
    }

    /// A JWK whose `alg` is not of its own key type: an EC or Ed25519 public key under `HS256`
    /// verified HMAC tokens keyed by its public point (anyone could sign them), and an RSA key
    /// under `HS256`, `ES256` or `EdDSA` panicked in the JWT crate on every such token.
    #[test]
    fn a_jwk_whose_alg_is_not_of_its_key_type_is_refused() {
        // The P-256 key of crates/rest/tests/keys/jwks.json.
        let (x, y) = (
            "wh_r3KFbEXE7dWOYdlRmESSsY73OrbdbMAHOEriMEkk",
            "8gaZZBsyLV7JH1kC1tTpLsVUT6UrdhD1eLgKCeZnB8o",
        );
        let mut point = vec![4u8];
        point.extend(URL_SAFE_NO_PAD.decode(x).unwrap());
        point.extend(URL_SAFE_NO_PAD.decode(y).unwrap());
        let claims = json!({"role": "postgres"});
        for (jwk, public) in [
            (
                json!({"kty": "EC", "crv": "P-256", "x": x, "y": y, "alg": "HS256"}),
                point.clone(),
            ),
            (
                json!({"kty": "OKP", "crv": "Ed25519", "x": x, "alg": "HS256"}),
                URL_SAFE_NO_PAD.decode(x).unwrap(),
            ),
        ] {
            // Either the document is refused, or the token signed with the public key is.
            if let Ok(config) = JwtConfig::new(&jwk.to_string(), false, None, ".role") {
                let forged = token(Algorithm::HS256, None, &claims, &public);
                assert!(config.verify(&forged).is_err(), "{jwk} verified a forgery");
            }
        }
        for alg in ["HS256", "ES256", "EdDSA"] {
            let jwk = json!({"kty": "RSA", "n": x, "e": "AQAB", "alg": alg});
            let error = JwtConfig::new(&jwk.to_string(), false, None, ".role").unwrap_err();
            assert!(error.to_string().contains("key type"), "{jwk}: {error}");
        }
        // Keys whose alg is theirs still serve.
        for jwk in [
            json!({"kty": "EC", "crv": "P-256", "x": x, "y": y, "alg": "ES256"}),
            json!({"kty": "RSA", "n": x, "e": "AQAB", "alg": "PS384"}),
            json!({"kty": "oct", "k": URL_SAFE_NO_PAD.encode(SECRET), "alg": "HS512"}),
        ] {
            assert!(
                JwtConfig::new(&jwk.to_string(), false, None, ".role").is_ok(),
                "{jwk}"
            );
        }
    }

    /// A token signed with `header` (JSON text) and `claims` under HS256 with `SECRET`.
    fn token_with_header(header: &Value, claims: &Value) -> String {
        let message = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, SECRET.as_bytes());
        let signature = ring::hmac::sign(&key, message.as_bytes());
        format!("{message}.{}", URL_SAFE_NO_PAD.encode(signature.as_ref()))
    }

    /// RFC 7515 4.1.11: a recipient that does not understand an extension `crit` names must
    /// refuse the token; Sluice understands none.
    #[test]
    fn a_token_with_critical_extensions_is_refused() {
        let config = JwtConfig::new(SECRET, false, None, ".role").unwrap();
        let claims = json!({"role": "web"});
        let plain = token_with_header(&json!({"alg": "HS256", "typ": "JWT"}), &claims);
        assert_eq!(config.verify(&plain).unwrap(), claims);
        for crit in [
            json!(["exp"]),
            json!(["https://example.com/ext"]),
            json!([]),
            json!("b64"),
        ] {
            let header = json!({"alg": "HS256", "crit": crit, "https://example.com/ext": true});
            let error = config
                .verify(&token_with_header(&header, &claims))
                .unwrap_err();
            assert_eq!(error.code, "PGRST301", "{crit}");
            assert!(
                error.message.contains("critical"),
                "{crit}: {}",
                error.message
            );
        }
    }

    /// A JWKS may hold keys for encryption beside those for signatures (`use`, `key_ops`):
    /// only the latter verify tokens.
    #[test]
    fn keys_meant_for_other_uses_do_not_verify() {
        let k = URL_SAFE_NO_PAD.encode(SECRET);
        let claims = json!({"role": "web"});
        let signed = token(Algorithm::HS256, None, &claims, SECRET.as_bytes());
        for (key, verifies) in [
            (json!({"kty": "oct", "k": k, "use": "sig"}), true),
            (
                json!({"kty": "oct", "k": k, "key_ops": ["verify", "sign"]}),
                true,
            ),
            (json!({"kty": "oct", "k": k, "use": "enc"}), false),
            (
                json!({"kty": "oct", "k": k, "key_ops": ["encrypt", "decrypt"]}),
                false,
            ),
            (
                json!({"kty": "oct", "k": k, "use": "sig", "key_ops": ["sign"]}),
                false,
            ),
        ] {
            // Beside a signing key of another secret, so the document itself is usable.
            let other = json!({"kty": "oct", "k": URL_SAFE_NO_PAD.encode("another-secret-of-thirty-two-bytes!")});
            let jwks = json!({"keys": [other, key]});
            let config = JwtConfig::new(&jwks.to_string(), false, None, ".role").unwrap();
            assert_eq!(config.verify(&signed).is_ok(), verifies, "{key}");
        }
        // An identity provider's document with an encryption key (alg RSA-OAEP) loads; the
        // key is left out.
        let with_enc = json!({"keys": [
            {"kty": "RSA", "n": "wh_r3KFbEXE7dWOYdlRmESSsY73OrbdbMAHOEriMEkk", "e": "AQAB", "alg": "RSA-OAEP"},
            {"kty": "oct", "k": k},
        ]});
        let config = JwtConfig::new(&with_enc.to_string(), false, None, ".role").unwrap();
        assert!(config.verify(&signed).is_ok());
        // A document none of whose keys verifies signatures is refused at start.
        let only_enc = json!({"keys": [{"kty": "oct", "k": k, "use": "enc"}]});
        let error = JwtConfig::new(&only_enc.to_string(), false, None, ".role").unwrap_err();
        assert!(error.to_string().contains("signatures"), "{error}");
    }

    #[test]
    fn registered_claims_are_checked_as_postgrest_checks_them() {
        let now = 2_000_000_000u64;
        let check = |claims: Value, audience: Option<&str>| {
            check_claims(claims.as_object().unwrap(), audience, now).map_err(|e| e.message)
        };
        assert_eq!(check(json!({}), None), Ok(()));
        // Within the clock-skew allowance, fractions rounded.
        assert_eq!(check(json!({"exp": now - 20}), None), Ok(()));
        assert_eq!(check(json!({"exp": (now - 20) as f64 + 0.4}), None), Ok(()));
        assert_eq!(check(json!({"exp": now - 31}), None), Err("JWT expired"));
        assert_eq!(check(json!({"nbf": now + 30}), None), Ok(()));
        assert_eq!(
            check(json!({"nbf": now + 31}), None),
            Err("JWT not yet valid")
        );
        assert_eq!(
            check(json!({"iat": now + 31}), None),
            Err("JWT issued at future")
        );
        for bad in [
            json!("soon"),
            json!(null),
            json!(-5),
            json!(true),
            json!(f64::MAX),
        ] {
            assert_eq!(
                check(json!({"exp": bad.clone()}), None),
                Err("JWT is malformed"),
                "{bad}"
            );
        }
        // The audience only when one is configured.
        assert_eq!(check(json!({"aud": "other"}), None), Ok(()));
        assert_eq!(check(json!({"aud": "api"}), Some("api")), Ok(()));
        assert_eq!(check(json!({"aud": ["x", "api"]}), Some("api")), Ok(()));
        for ignored in [json!({}), json!({"aud": null}), json!({"aud": []})] {
            assert_eq!(check(ignored.clone(), Some("api")), Ok(()), "{ignored}");
        }
        for wrong in [
            json!("other"),
            json!(""),
            json!(["x"]),
            json!(["x", "y"]),
            json!(7),
        ] {
            assert_eq!(
                check(json!({"aud": wrong.clone()}), Some("api")),
                Err("JWT not in audience"),
                "{wrong}"
            );
        }
    }
}
