//! The token check of every authenticated request (`JwtConfig::verify_claims`): a typical HS256
//! token with a role and two other claims, and the same checked against a three-key JWKS.
//!
//! `cargo bench -p sluice-http --bench jwt`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{Criterion, criterion_group, criterion_main};
use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use sluice_http::jwt::JwtConfig;
use std::hint::black_box;

const SECRET: &str = "sluice-bench-jwt-secret-of-32-characters-at-least";

fn token() -> String {
    let claims = serde_json::json!({"role": "sluice_bench_user", "max_bid": 20, "sub": "bench"});
    encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret(SECRET.as_bytes()),
    )
    .unwrap()
}

fn verify(c: &mut Criterion) {
    let token = token();
    let secret = JwtConfig::new(SECRET, false, None, ".role").unwrap();
    c.bench_function("HS256 token, secret", |b| {
        b.iter(|| {
            let claims = secret.verify_claims(black_box(&token)).unwrap();
            black_box(secret.role_of(&claims.value).map(str::len));
        })
    });
    use base64::Engine;
    let k = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
    let jwks = serde_json::json!({"keys": [
        {"kty": "oct", "kid": "a", "k": k("the-first-secret-of-thirty-two-bytes")},
        {"kty": "oct", "kid": "b", "k": k("the-second-secret-of-thirty-two-bytes")},
        {"kty": "oct", "k": k(SECRET)},
    ]});
    let set = JwtConfig::new(&jwks.to_string(), false, None, ".role").unwrap();
    c.bench_function("HS256 token, JWKS of three", |b| {
        b.iter(|| black_box(set.verify_claims(black_box(&token)).unwrap()))
    });
}

criterion_group!(benches, verify);
criterion_main!(benches);
