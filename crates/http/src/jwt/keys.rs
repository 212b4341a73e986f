//! The keys tokens are verified with, read from `jwt_secret`: an HMAC secret, a PEM public key,
//! a JWK or a JWKS document (inline, or from a file named `@path` as PostgREST reads it), each
//! key with the algorithms it may verify and its `kid`.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{
    AlgorithmParameters, EllipticCurve, Jwk, JwkSet, KeyAlgorithm, KeyOperations, PublicKeyUse,
};
use jsonwebtoken::{Algorithm, DecodingKey};

/// Why a `jwt_secret` is unusable.
#[derive(Debug, thiserror::Error)]
pub enum JwtConfigError {
    /// `jwt_secret_is_base64` is set and the secret does not decode.
    #[error("jwt_secret is not valid base64 (jwt_secret_is_base64 is set)")]
    Base64,
    /// An HMAC secret shorter than PostgREST accepts.
    #[error("jwt_secret must be at least 32 characters (PostgREST's rule for HMAC secrets)")]
    TooShort,
    /// The role claim path does not parse.
    #[error("jwt_role_claim_key {0:?}: {1}")]
    ClaimPath(String, &'static str),
    /// `@path` names a file that cannot be read.
    #[error("jwt_secret: cannot read {0}: {1}")]
    File(String, std::io::Error),
    /// A JWK, JWKS or PEM document that is not a usable key; says which and why.
    #[error("jwt_secret: {0}")]
    Key(String),
}

/// One key: what it verifies and the `kid` tokens select it by.
#[derive(Clone)]
pub(crate) struct VerifyingKey {
    pub(crate) kid: Option<String>,
    pub(crate) key: Key,
    pub(crate) algorithms: Vec<Algorithm>,
}

/// What verifies a signature.
#[derive(Clone)]
pub(crate) enum Key {
    /// An HMAC secret's keys, made once: making one hashes the secret, which per token cost as
    /// much as the token's own signature.
    Hmac(Box<HmacKeys>),
    /// A public key (RSA, EC, Ed25519), verified through the JWT crate.
    Public(DecodingKey),
}

/// An HMAC secret ready for each of the three digests.
#[derive(Clone)]
pub(crate) struct HmacKeys {
    hs256: ring::hmac::Key,
    hs384: ring::hmac::Key,
    hs512: ring::hmac::Key,
}

impl HmacKeys {
    fn new(secret: &[u8]) -> HmacKeys {
        HmacKeys {
            hs256: ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret),
            hs384: ring::hmac::Key::new(ring::hmac::HMAC_SHA384, secret),
            hs512: ring::hmac::Key::new(ring::hmac::HMAC_SHA512, secret),
        }
    }

    /// The key for `algorithm`, when it is one of the HMAC algorithms.
    pub(crate) fn for_algorithm(&self, algorithm: Algorithm) -> Option<&ring::hmac::Key> {
        match algorithm {
            Algorithm::HS256 => Some(&self.hs256),
            Algorithm::HS384 => Some(&self.hs384),
            Algorithm::HS512 => Some(&self.hs512),
            _ => None,
        }
    }
}

pub(crate) const HMAC: [Algorithm; 3] = [Algorithm::HS256, Algorithm::HS384, Algorithm::HS512];
const RSA: [Algorithm; 6] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
];

/// The keys `jwt_secret` holds; `is_base64` applies to an HMAC secret only.
pub(crate) fn read_keys(
    secret: &str,
    is_base64: bool,
) -> Result<Vec<VerifyingKey>, JwtConfigError> {
    let text = match secret.strip_prefix('@') {
        Some(path) => std::fs::read_to_string(path.trim())
            .map_err(|e| JwtConfigError::File(path.trim().to_string(), e))?,
        None => secret.to_string(),
    };
    let trimmed = text.trim();
    if trimmed.starts_with('{') {
        return from_json(trimmed);
    }
    if trimmed.starts_with("-----BEGIN") {
        return from_pem(trimmed).map(|key| vec![key]);
    }
    let secret = if is_base64 {
        base64::engine::general_purpose::STANDARD
            .decode(trimmed)
            .map_err(|_| JwtConfigError::Base64)?
    } else {
        // A secret read from a file keeps its bytes but a final newline.
        text.strip_suffix('\n').unwrap_or(&text).as_bytes().to_vec()
    };
    if secret.len() < 32 {
        return Err(JwtConfigError::TooShort);
    }
    Ok(vec![VerifyingKey {
        kid: None,
        key: Key::Hmac(Box::new(HmacKeys::new(&secret))),
        algorithms: HMAC.to_vec(),
    }])
}

/// A JWKS (`{"keys": [...]}`) or a single JWK.
fn from_json(text: &str) -> Result<Vec<VerifyingKey>, JwtConfigError> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| JwtConfigError::Key(format!("not valid JSON: {e}")))?;
    let jwks: Vec<Jwk> = if value.get("keys").is_some() {
        serde_json::from_value::<JwkSet>(value)
            .map_err(|e| JwtConfigError::Key(format!("not a JWKS document: {e}")))?
            .keys
    } else {
        vec![
            serde_json::from_value::<Jwk>(value)
                .map_err(|e| JwtConfigError::Key(format!("not a JWK: {e}")))?,
        ]
    };
    if jwks.is_empty() {
        return Err(JwtConfigError::Key("the JWKS document has no keys".into()));
    }
    let keys = jwks
        .iter()
        .enumerate()
        .filter(|(_, jwk)| verifies_signatures(jwk))
        .map(|(i, jwk)| {
            let key = match &jwk.algorithm {
                AlgorithmParameters::OctetKey(octet) => Key::Hmac(Box::new(HmacKeys::new(
                    &URL_SAFE_NO_PAD.decode(&octet.value).map_err(|_| {
                        JwtConfigError::Key(format!("key {i} of the JWKS: k is not base64url"))
                    })?,
                ))),
                _ => Key::Public(
                    DecodingKey::from_jwk(jwk)
                        .map_err(|e| JwtConfigError::Key(format!("key {i} of the JWKS: {e}")))?,
                ),
            };
            let family = family_of(&jwk.algorithm);
            let algorithms = match jwk.common.key_algorithm {
                Some(alg) => {
                    let algorithm = signing_algorithm(alg).ok_or_else(|| {
                        JwtConfigError::Key(format!("key {i} of the JWKS: {alg:?} does not sign"))
                    })?;
                    // An alg of another key type would have the JWT crate verify with this
                    // key's public bytes as an HMAC secret (anyone could sign), or panic: the
                    // document is refused.
                    if !family.contains(&algorithm) {
                        return Err(JwtConfigError::Key(format!(
                            "key {i} of the JWKS: alg {alg:?} is not of its key type"
                        )));
                    }
                    vec![algorithm]
                }
                None => family,
            };
            Ok(VerifyingKey {
                kid: jwk.common.key_id.clone(),
                key,
                algorithms,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if keys.is_empty() {
        return Err(JwtConfigError::Key(
            "no key of the JWKS document may verify signatures (use, key_ops or alg)".into(),
        ));
    }
    Ok(keys)
}

/// Whether a JWK may verify tokens: a document from an identity provider often lists keys for
/// encryption beside the signing ones (`use` other than `sig`, `key_ops` without `verify`, an
/// encryption `alg`); those are left out rather than tried on signatures.
fn verifies_signatures(jwk: &Jwk) -> bool {
    let common = &jwk.common;
    common
        .public_key_use
        .as_ref()
        .is_none_or(|usage| *usage == PublicKeyUse::Signature)
        && common
            .key_operations
            .as_ref()
            .is_none_or(|ops| ops.contains(&KeyOperations::Verify))
        && common
            .key_algorithm
            .is_none_or(|alg| signing_algorithm(alg).is_some())
}

/// The algorithms a JWK without `alg` may verify, by its key type and curve.
fn family_of(parameters: &AlgorithmParameters) -> Vec<Algorithm> {
    match parameters {
        AlgorithmParameters::RSA(_) => RSA.to_vec(),
        AlgorithmParameters::EllipticCurve(ec) => match ec.curve {
            EllipticCurve::P256 => vec![Algorithm::ES256],
            EllipticCurve::P384 => vec![Algorithm::ES384],
            // Not verifiable with the crate's backend: no algorithm, so no token matches it.
            EllipticCurve::P521 | EllipticCurve::Ed25519 => Vec::new(),
        },
        AlgorithmParameters::OctetKey(_) => HMAC.to_vec(),
        AlgorithmParameters::OctetKeyPair(_) => vec![Algorithm::EdDSA],
    }
}

fn signing_algorithm(alg: KeyAlgorithm) -> Option<Algorithm> {
    Some(match alg {
        KeyAlgorithm::HS256 => Algorithm::HS256,
        KeyAlgorithm::HS384 => Algorithm::HS384,
        KeyAlgorithm::HS512 => Algorithm::HS512,
        KeyAlgorithm::ES256 => Algorithm::ES256,
        KeyAlgorithm::ES384 => Algorithm::ES384,
        KeyAlgorithm::RS256 => Algorithm::RS256,
        KeyAlgorithm::RS384 => Algorithm::RS384,
        KeyAlgorithm::RS512 => Algorithm::RS512,
        KeyAlgorithm::PS256 => Algorithm::PS256,
        KeyAlgorithm::PS384 => Algorithm::PS384,
        KeyAlgorithm::PS512 => Algorithm::PS512,
        KeyAlgorithm::EdDSA => Algorithm::EdDSA,
        KeyAlgorithm::RSA1_5 | KeyAlgorithm::RSA_OAEP | KeyAlgorithm::RSA_OAEP_256 => return None,
    })
}

/// A PEM public key: RSA (`PUBLIC KEY` or `RSA PUBLIC KEY`), EC (P-256 or P-384) or Ed25519.
fn from_pem(text: &str) -> Result<VerifyingKey, JwtConfigError> {
    let pem = text.as_bytes();
    let (key, algorithms) = if let Ok(key) = DecodingKey::from_rsa_pem(pem) {
        (key, RSA.to_vec())
    } else if let Ok(key) = DecodingKey::from_ec_pem(pem) {
        // The curve decides which of the two verifies; the other fails on the signature.
        (key, vec![Algorithm::ES256, Algorithm::ES384])
    } else if let Ok(key) = DecodingKey::from_ed_pem(pem) {
        (key, vec![Algorithm::EdDSA])
    } else {
        return Err(JwtConfigError::Key(
            "a PEM document that is not an RSA, EC or Ed25519 public key".into(),
        ));
    };
    Ok(VerifyingKey {
        kid: None,
        key: Key::Public(key),
        algorithms,
    })
}
