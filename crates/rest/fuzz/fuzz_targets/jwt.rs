//! Fuzz target: any bytes as an `Authorization` header, verified against an HMAC secret and a
//! JWKS document; nothing may panic, and without a valid signature the answer is a refusal
//! (401 with `WWW-Authenticate`), never a role.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice_rest::auth::{JwtConfig, authenticate};
use std::sync::OnceLock;

const JWKS: &str = include_str!("../../tests/keys/jwks.json");

fn configs() -> &'static [JwtConfig; 2] {
    static CONFIGS: OnceLock<[JwtConfig; 2]> = OnceLock::new();
    CONFIGS.get_or_init(|| {
        [
            JwtConfig::new("reallyreallyreallyreallyverysafe", false, None, ".role")
                .expect("the HMAC secret is valid"),
            JwtConfig::new(JWKS, false, Some("api".into()), ".app.roles[0]")
                .expect("the JWKS is valid"),
        ]
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(header) = http::HeaderValue::from_bytes(data) else {
        return;
    };
    for config in configs() {
        if let Err(error) = authenticate(Some(config), Some("anon"), Some(&header)) {
            assert_eq!(error.status, http::StatusCode::UNAUTHORIZED, "{error:?}");
            assert!(error.www_authenticate().is_some(), "{error:?}");
        } else {
            // The fuzzer cannot forge a signature: only a request without a Bearer token could
            // pass, and a header is always given here.
            panic!("a fuzzed header was accepted: {header:?}");
        }
    }
});
