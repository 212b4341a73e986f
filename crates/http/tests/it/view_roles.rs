//! A view file that lists `roles` answers only requests whose bearer JWT verifies and names one
//! of them: 401 with a challenge without a valid token, 403 for another role.

use bytes::Bytes;
use http_body_util::Empty;
use sluice_embedded::testkit::{self, TestServer};
use sluice_http::jwt::JwtConfig;
use sluice_http::view::{ViewMount, load_slice};
use sluice_http::{Router, ServerOptions};
use sluice_pg::{Pool, PoolSettings};
use std::sync::Arc;

const VIEW: &str = r#"{"roles": ["editor"], "sql": [{"path": ["/one"], "GET": "SELECT 1 AS n"}]}"#;
const SECRET: &str = "reallyreallyreallyreallyverysafe";
/// HS256 tokens for SECRET: `{"role": "editor"}` and `{"role": "reader"}`.
const EDITOR: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoiZWRpdG9yIn0.RvuX0gc5DSoiXoZchslWMomN9vzg2zZZcWhn9S-zeaM";
const READER: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoicmVhZGVyIn0.m_kbN39q__pKstQD5wKyqnP7UtxM5Uli9OdFfoe09eE";

async fn get(address: std::net::SocketAddr, token: Option<&str>) -> (u16, Option<String>) {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let headers: Vec<(&str, &str)> = bearer
        .as_deref()
        .map(|b| vec![("authorization", b)])
        .unwrap_or_default();
    let (head, _) =
        testkit::exchange(address, "GET", "/v/one", &headers, Empty::<Bytes>::new()).await;
    let challenge = head
        .headers
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    (head.status.as_u16(), challenge)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_view_with_roles_admits_only_their_tokens() {
    let pool = Pool::connect(testkit::url(), PoolSettings::default()).expect("a pool");
    let view = load_slice("roles.json", VIEW.as_bytes()).expect("the view loads");
    assert_eq!(view.roles, vec!["editor".to_string()]);
    // Without keys to verify tokens with, such a view is refused by name.
    let refused = ViewMount::new(view.clone(), pool.clone()).with_jwt(None);
    assert!(refused.is_err_and(|e| e.contains("roles.json") && e.contains("jwt_secret")));
    let jwt = JwtConfig::new(SECRET, false, None, ".role").expect("the secret");
    let mount = ViewMount::new(view, pool)
        .with_jwt(Some(Arc::new(jwt)))
        .expect("keys given");
    let mut router = Router::new();
    router.mount("/v", Arc::new(mount));
    let server = TestServer::start(router, ServerOptions::default()).await;

    let (status, challenge) = get(server.addr, None).await;
    assert_eq!(status, 401);
    assert_eq!(challenge.as_deref(), Some("Bearer"));
    let (status, challenge) = get(server.addr, Some("not.a.token")).await;
    assert_eq!(status, 401);
    assert!(challenge.is_some_and(|c| c.contains("invalid_token")));
    assert_eq!(get(server.addr, Some(READER)).await.0, 403);
    assert_eq!(get(server.addr, Some(EDITOR)).await.0, 200);
}

#[test]
fn roles_must_be_names() {
    for bad in [
        r#"{"roles": [], "sql": {"path": ["/x"], "GET": "SELECT 1"}}"#,
        r#"{"roles": "editor", "sql": {"path": ["/x"], "GET": "SELECT 1"}}"#,
        r#"{"roles": [""], "sql": {"path": ["/x"], "GET": "SELECT 1"}}"#,
    ] {
        let error = load_slice("bad.json", bad.as_bytes()).expect_err(bad);
        assert!(error.to_string().contains("$.roles"), "{error}");
    }
}
