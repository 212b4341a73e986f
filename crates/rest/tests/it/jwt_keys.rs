//! Tokens signed with public-key algorithms: RS256/384/512 and PS256 with an RSA key, ES256 and
//! ES384, a PEM key or a JWKS document whose keys are chosen by `kid` (a rotation: the old and
//! the new key both verify while both are listed), and the algorithm confusions refused.
#![allow(clippy::unwrap_used)]

use crate::common::{Served, send};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use sluice_rest::RestConfig;
use sluice_rest::auth::JwtConfig;
use std::path::PathBuf;
use std::sync::Arc;

const SETUP: &str = "
DO $do$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'rest_keys_user') THEN
    CREATE ROLE rest_keys_user NOLOGIN;
  END IF;
END $do$;
CREATE FUNCTION whoami() RETURNS text LANGUAGE sql STABLE
  AS $$ SELECT current_user || ' ' || (current_setting('request.jwt.claims', true)::json ->> 'sub') $$;
GRANT EXECUTE ON FUNCTION whoami() TO rest_keys_user;
";

fn key_file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/keys")
        .join(name)
}

async fn serve(name: &str, secret: &str) -> Served {
    let config = RestConfig {
        jwt: Some(Arc::new(
            JwtConfig::new(secret, false, None, ".role").unwrap(),
        )),
        anon_role: None,
        ..RestConfig::default()
    };
    // Roles are the cluster's: each test makes its own database but the role once.
    let setup = SETUP.replace("rest_keys_user", &format!("rest_keys_{name}"));
    Served::start(&format!("keys_{name}"), &setup, config)
        .await
        .unwrap()
}

async fn whoami(served: &Served, token: &str) -> (u16, serde_json::Value) {
    let bearer = format!("Bearer {token}");
    let answer = send(
        served.address,
        "GET",
        "/rpc/whoami",
        &[("authorization", &bearer)],
        Vec::new(),
        false,
    )
    .await;
    (answer.status, answer.json())
}

fn token_for(name: &str, alg: Algorithm, kid: Option<&str>, private: &str, sub: &str) -> String {
    let pem = std::fs::read(key_file(private)).unwrap();
    let key = match alg {
        Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_pem(&pem).unwrap(),
        _ => EncodingKey::from_rsa_pem(&pem).unwrap(),
    };
    let mut header = Header::new(alg);
    header.kid = kid.map(str::to_string);
    let claims = serde_json::json!({"role": format!("rest_keys_{name}"), "sub": sub});
    jsonwebtoken::encode(&header, &claims, &key).unwrap()
}

#[tokio::test]
async fn an_rsa_pem_key_verifies_each_rsa_algorithm_and_nothing_else() {
    let name = "rsapem";
    let public = std::fs::read_to_string(key_file("rsa-a.pub")).unwrap();
    let served = serve(name, &public).await;
    for alg in [
        Algorithm::RS256,
        Algorithm::RS384,
        Algorithm::RS512,
        Algorithm::PS256,
    ] {
        let token = token_for(name, alg, None, "rsa-a.key", "alice");
        let (status, body) = whoami(&served, &token).await;
        assert_eq!(status, 200, "{alg:?}: {body}");
        assert_eq!(body, serde_json::json!(format!("rest_keys_{name} alice")));
    }
    // Signed by another RSA key: refused.
    let (status, body) = whoami(
        &served,
        &token_for(name, Algorithm::RS256, None, "rsa-b.key", "x"),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (401, Some("PGRST301")),
        "{body}"
    );
    // The HS/RS confusion: an HMAC token whose secret is the public key is not accepted.
    let forged = jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &serde_json::json!({"role": format!("rest_keys_{name}"), "sub": "mallory"}),
        &EncodingKey::from_secret(public.as_bytes()),
    )
    .unwrap();
    let (status, body) = whoami(&served, &forged).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["message"], "No suitable key or wrong key type");
    // An EC token meets no key either.
    let (status, _) = whoami(
        &served,
        &token_for(name, Algorithm::ES256, None, "ec256.key", "x"),
    )
    .await;
    assert_eq!(status, 401);
    served.finish().await;
}

#[tokio::test]
async fn ec_pem_keys_verify_their_curve() {
    for (name, public, private, alg, other) in [
        (
            "ec256",
            "ec256.pub",
            "ec256.key",
            Algorithm::ES256,
            Algorithm::ES384,
        ),
        (
            "ec384",
            "ec384.pub",
            "ec384.key",
            Algorithm::ES384,
            Algorithm::ES256,
        ),
    ] {
        let served = serve(name, &std::fs::read_to_string(key_file(public)).unwrap()).await;
        let (status, body) = whoami(&served, &token_for(name, alg, None, private, "bob")).await;
        assert_eq!(status, 200, "{alg:?}: {body}");
        assert_eq!(body, serde_json::json!(format!("rest_keys_{name} bob")));
        // A token of the other curve's algorithm, signed by the other key: refused.
        let other_key = if private == "ec256.key" {
            "ec384.key"
        } else {
            "ec256.key"
        };
        let (status, _) = whoami(&served, &token_for(name, other, None, other_key, "x")).await;
        assert_eq!(status, 401);
        served.finish().await;
    }
}

#[tokio::test]
async fn a_jwks_file_picks_the_key_by_kid() {
    let name = "jwks";
    let secret = format!("@{}", key_file("jwks.json").display());
    let served = serve(name, &secret).await;
    // Both RSA keys of a rotation verify, each under its own kid; the EC keys too.
    for (alg, kid, private) in [
        (Algorithm::RS256, "2026-a", "rsa-a.key"),
        (Algorithm::RS256, "2026-b", "rsa-b.key"),
        (Algorithm::PS256, "2026-b", "rsa-b.key"),
        (Algorithm::ES256, "ec-256", "ec256.key"),
        (Algorithm::ES384, "ec-384", "ec384.key"),
    ] {
        let (status, body) =
            whoami(&served, &token_for(name, alg, Some(kid), private, "carol")).await;
        assert_eq!(status, 200, "{alg:?} {kid}: {body}");
        assert_eq!(body, serde_json::json!(format!("rest_keys_{name} carol")));
    }
    // The right key under the wrong kid fails its signature check; an unknown kid finds no key.
    let (status, body) = whoami(
        &served,
        &token_for(name, Algorithm::RS256, Some("2026-a"), "rsa-b.key", "x"),
    )
    .await;
    assert_eq!(
        (status, body["message"].as_str()),
        (401, Some("JWT cryptographic operation failed"))
    );
    let (status, body) = whoami(
        &served,
        &token_for(name, Algorithm::RS256, Some("2025-z"), "rsa-a.key", "x"),
    )
    .await;
    assert_eq!(
        (status, body["message"].as_str()),
        (401, Some("No suitable key or wrong key type"))
    );
    // Without a kid, any key of the token's family may verify it.
    let (status, _) = whoami(
        &served,
        &token_for(name, Algorithm::RS512, None, "rsa-b.key", "dave"),
    )
    .await;
    assert_eq!(status, 200);
    served.finish().await;
}

#[test]
fn unusable_key_documents_are_refused_by_name() {
    use sluice_rest::auth::JwtConfigError;
    let cases = [
        ("{\"keys\": []}", "no keys"),
        ("{\"kty\": \"RSA\"}", "not a JWK"),
        ("{not json", "not valid JSON"),
        (
            "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----",
            "PEM",
        ),
    ];
    for (secret, expected) in cases {
        let error = JwtConfig::new(secret, false, None, ".role").unwrap_err();
        assert!(matches!(error, JwtConfigError::Key(_)), "{secret}: {error}");
        assert!(error.to_string().contains(expected), "{secret}: {error}");
    }
    let error = JwtConfig::new("@/nonexistent/jwks.json", false, None, ".role").unwrap_err();
    assert!(
        error.to_string().contains("/nonexistent/jwks.json"),
        "{error}"
    );
}
