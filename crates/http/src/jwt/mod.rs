//! JSON Web Tokens for every HTTP gate: the keys of PostgREST's `jwt-secret` (an HMAC secret, a
//! PEM key, a JWK or JWKS chosen by `kid`), verification with PostgREST's checks and error texts,
//! and the role at `jwt-role-claim-key`.

mod keys;

use jsonwebtoken::{Validation, decode, decode_header, errors::ErrorKind};
pub use keys::JwtConfigError;
use keys::VerifyingKey;
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
        let claims = verify_with(self, token)?;
        if let Some(iat) = claims.get("iat").and_then(Value::as_u64) {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            if iat > now + LEEWAY_SECONDS {
                return Err(refused("PGRST303", "JWT issued at future"));
            }
        }
        Ok(claims)
    }

    /// The role the claims name at the configured claim path, if a non-empty string is there.
    pub fn role_of<'v>(&self, claims: &'v Value) -> Option<&'v str> {
        role_at(claims, &self.role_claim)
    }
}

/// The token's claims, when one of the configured keys verifies it. The key is chosen by the
/// token's `kid` (keys without a `kid` serve any; a token without one may be verified by any)
/// and must be of the family the token's `alg`
/// names: an HMAC token never meets a public key as its secret, nor `none` any key.
fn verify_with(config: &JwtConfig, token: &str) -> Result<Value, JwtError> {
    let refused_by = |error: &jsonwebtoken::errors::Error| {
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
        refused(code, message)
    };
    let header = decode_header(token).map_err(|e| refused_by(&e))?;
    let mut candidates = config
        .keys
        .iter()
        .filter(|k| k.kid.is_none() || header.kid.is_none() || k.kid == header.kid)
        .filter(|k| k.algorithms.contains(&header.alg))
        .peekable();
    if candidates.peek().is_none() {
        return Err(refused("PGRST301", "No suitable key or wrong key type"));
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
            Err(error) => return Err(refused_by(&error)),
        }
    }
    Err(last.map_or_else(
        || refused("PGRST301", "JWT is malformed"),
        |e| refused_by(&e),
    ))
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
