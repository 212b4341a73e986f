//! What PostgreSQL sees of a token's claims against what Sluice read from them: the role it
//! switches to is the one `request.jwt.claims` names, whichever way the claims are written
//! (a key given twice, a key written with escapes), and a role name is a value, never SQL.
#![allow(clippy::unwrap_used)]

use crate::common::{Served, send};
use sluice_rest::RestConfig;
use sluice_rest::auth::JwtConfig;
use std::sync::Arc;

const SECRET: &str = "reallyreallyreallyreallyverysafe";

const SETUP: &str = r#"
DO $do$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'rest_claims_a') THEN
    CREATE ROLE rest_claims_a NOLOGIN;
  END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'rest_claims_b') THEN
    CREATE ROLE rest_claims_b NOLOGIN;
  END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'rest_claims "q''; x') THEN
    CREATE ROLE "rest_claims ""q'; x" NOLOGIN;
  END IF;
END $do$;
CREATE FUNCTION seen() RETURNS json LANGUAGE sql STABLE AS $$
  SELECT json_build_object(
    'user', current_user,
    'json_role', current_setting('request.jwt.claims', true)::json ->> 'role',
    'jsonb_role', current_setting('request.jwt.claims', true)::jsonb ->> 'role',
    'json_exp', current_setting('request.jwt.claims', true)::json ->> 'exp',
    'jsonb_exp', current_setting('request.jwt.claims', true)::jsonb ->> 'exp')
$$;
"#;

/// base64url without padding, as tokens are written.
fn b64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
        }
    }
    out
}

/// An HS256 token whose claims are exactly `claims` (duplicates and escapes kept).
fn token(claims: &str) -> String {
    let message = format!(
        "{}.{}",
        b64url(br#"{"alg":"HS256","typ":"JWT"}"#),
        b64url(claims.as_bytes())
    );
    let signature = jsonwebtoken::crypto::sign(
        message.as_bytes(),
        &jsonwebtoken::EncodingKey::from_secret(SECRET.as_bytes()),
        jsonwebtoken::Algorithm::HS256,
    )
    .unwrap();
    format!("{message}.{signature}")
}

async fn seen(served: &Served, claims: &str) -> (u16, serde_json::Value) {
    let bearer = format!("Bearer {}", token(claims));
    let answer = send(
        served.address,
        "GET",
        "/rpc/seen",
        &[("authorization", &bearer)],
        Vec::new(),
        false,
    )
    .await;
    (answer.status, answer.json())
}

#[tokio::test]
async fn the_role_switched_to_is_the_role_postgresql_reads_from_the_claims() {
    let config = RestConfig {
        jwt: Some(Arc::new(
            JwtConfig::new(SECRET, false, None, ".role").unwrap(),
        )),
        anon_role: None,
        ..RestConfig::default()
    };
    let served = Served::start("claims_dup", SETUP, config).await.unwrap();
    for claims in [
        r#"{"role":"rest_claims_a","role":"rest_claims_b"}"#,
        r#"{"role":"rest_claims_b","role":"rest_claims_a"}"#,
        r#"{"role":"rest_claims_a","r\u006fle":"rest_claims_b"}"#,
        r#"{"r\u006fle":"rest_claims_b","role":"rest_claims_a"}"#,
    ] {
        let (status, body) = seen(&served, claims).await;
        assert_eq!(status, 200, "{claims}: {body}");
        assert_eq!(body["user"], body["json_role"], "{claims}: {body}");
        assert_eq!(body["user"], body["jsonb_role"], "{claims}: {body}");
    }
    // The exp that was checked is the exp PostgreSQL reads: a past one written after a future
    // one is refused, a future one after a past one is the one policies see.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let (future, past) = (now + 3600, now - 3600);
    let (status, body) = seen(
        &served,
        &format!(r#"{{"role":"rest_claims_a","exp":{future},"exp":{past}}}"#),
    )
    .await;
    assert_eq!((status, &body["message"]), (401, &"JWT expired".into()));
    let (status, body) = seen(
        &served,
        &format!(r#"{{"role":"rest_claims_a","exp":{past},"exp":{future}}}"#),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["json_exp"], future.to_string());
    assert_eq!(body["jsonb_exp"], future.to_string());
    // A role name with quotes and a semicolon is a role name, not SQL.
    let (status, body) = seen(&served, r#"{"role":"rest_claims \"q'; x"}"#).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["user"], "rest_claims \"q'; x");
    served.finish().await;
}

/// A verified token that names no role, with no anonymous role configured, is refused as
/// PostgREST refuses it (PGRST302); it ran as the role Sluice connects with.
#[tokio::test]
async fn a_token_without_a_role_is_refused_when_there_is_no_anonymous_role() {
    let config = RestConfig {
        jwt: Some(Arc::new(
            JwtConfig::new(SECRET, false, None, ".role").unwrap(),
        )),
        anon_role: None,
        ..RestConfig::default()
    };
    let served = Served::start("claims_norole", SETUP, config).await.unwrap();
    for claims in [
        r#"{"sub":"x"}"#,
        r#"{"role":""}"#,
        r#"{"role":null}"#,
        r#"{"role":"rest_claims_a","role":null}"#,
    ] {
        let (status, body) = seen(&served, claims).await;
        assert_eq!(
            (status, body["code"].as_str()),
            (401, Some("PGRST302")),
            "{claims}: {body}"
        );
    }
    served.finish().await;
}

/// With the role taken from elsewhere than `role` (or from the anonymous role), a policy
/// reading `request.jwt.claims ->> 'role'` sees the role the request runs as, as under
/// PostgREST, not the token's own `role` claim.
#[tokio::test]
async fn request_jwt_claims_name_the_role_the_request_runs_as() {
    let config = RestConfig {
        jwt: Some(Arc::new(
            JwtConfig::new(SECRET, false, None, ".app.role").unwrap(),
        )),
        anon_role: Some("rest_claims_b".into()),
        ..RestConfig::default()
    };
    let served = Served::start("claims_path", SETUP, config).await.unwrap();
    for (claims, role) in [
        (
            r#"{"role":"postgres","app":{"role":"rest_claims_a"}}"#,
            "rest_claims_a",
        ),
        (r#"{"role":"postgres"}"#, "rest_claims_b"),
        (r#"{"sub":"x"}"#, "rest_claims_b"),
    ] {
        let (status, body) = seen(&served, claims).await;
        assert_eq!(status, 200, "{claims}: {body}");
        assert_eq!(body["user"], role, "{claims}: {body}");
        assert_eq!(body["json_role"], role, "{claims}: {body}");
        assert_eq!(body["jsonb_role"], role, "{claims}: {body}");
    }
    served.finish().await;
}

/// `set_config('role', 'none', true)` is PostgreSQL's `SET ROLE NONE`: back to the role Sluice
/// connects with. No role can be named `none` (PostgreSQL reserves the name), so a token naming
/// it is answered as a token naming a role that does not exist; it ran as the connection role.
#[tokio::test]
async fn a_token_naming_the_role_none_does_not_run_as_the_connection_role() {
    let config = RestConfig {
        jwt: Some(Arc::new(
            JwtConfig::new(SECRET, false, None, ".role").unwrap(),
        )),
        anon_role: Some("rest_claims_b".into()),
        ..RestConfig::default()
    };
    let served = Served::start("claims_none", SETUP, config).await.unwrap();
    let (status, body) = seen(&served, r#"{"role":"none"}"#).await;
    assert_eq!(
        (status, body["code"].as_str(), body["message"].as_str()),
        (400, Some("22023"), Some("role \"none\" does not exist")),
        "{body}"
    );
    served.finish().await;
}
