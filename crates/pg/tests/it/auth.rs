//! Connecting: every authentication method, every sslmode, channel binding, unix sockets,
//! passfiles and startup options, against the embedded cluster.
#![allow(clippy::unwrap_used)]

use crate::common;

use sluice_embedded::{
    Cluster, MD5_ROLE, PASSWORD_ROLE, Role, SCRAM_ROLE, TEST_DATABASE, TLS_ROLE,
};
use sluice_pg::{Connection, ErrorKind};

fn cluster(test: &str) -> Option<&'static Cluster> {
    common::db().cluster_or_skip(test)
}

/// A conninfo string for `role` on `host` with extra settings.
fn conninfo(c: &Cluster, role: &Role, host: &str, extra: &str) -> String {
    format!(
        "host={host} port={} user={} password={} dbname={TEST_DATABASE} {extra}",
        c.port(),
        role.name,
        role.password()
    )
}

async fn current_user(conn: &mut Connection) -> String {
    let rows = conn.simple_query("SELECT current_user").await.unwrap();
    common::text(&rows[0], 0).unwrap()
}

#[tokio::test]
async fn cleartext_md5_and_scram_passwords() {
    let Some(c) = cluster("cleartext_md5_and_scram_passwords") else {
        return;
    };
    for role in [PASSWORD_ROLE, MD5_ROLE, SCRAM_ROLE] {
        let mut conn = Connection::connect(&conninfo(c, &role, "127.0.0.1", "sslmode=disable"))
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", role.name));
        assert_eq!(current_user(&mut conn).await, role.name);
        assert!(!conn.is_tls());
    }
}

#[tokio::test]
async fn scram_over_tls_uses_channel_binding() {
    let Some(c) = cluster("scram_over_tls_uses_channel_binding") else {
        return;
    };
    let info = conninfo(
        c,
        &SCRAM_ROLE,
        "127.0.0.1",
        "sslmode=require channel_binding=require",
    );
    let mut conn = Connection::connect(&info).await.unwrap();
    assert!(conn.is_tls());
    assert_eq!(current_user(&mut conn).await, SCRAM_ROLE.name);
    // Without TLS there is nothing to bind to.
    let info = conninfo(
        c,
        &SCRAM_ROLE,
        "127.0.0.1",
        "sslmode=disable channel_binding=require",
    );
    let err = Connection::connect(&info).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Auth, "{err}");
    assert!(err.to_string().contains("channel binding"), "{err}");
}

#[tokio::test]
async fn channel_binding_require_refuses_methods_without_it() {
    // The embedded cluster trusts nobody any more, so the methods that cannot bind the session
    // to the TLS channel stand for trust too (check_channel_binding treats them alike).
    let Some(c) = cluster("channel_binding_require_refuses_methods_without_it") else {
        return;
    };
    for role in [PASSWORD_ROLE, MD5_ROLE] {
        let info = conninfo(
            c,
            &role,
            "127.0.0.1",
            "sslmode=require channel_binding=require",
        );
        let err = Connection::connect(&info).await.unwrap_err();
        assert!(
            err.to_string().contains("without channel binding"),
            "{}: {err}",
            role.name
        );
    }
}

#[tokio::test]
async fn wrong_password_is_an_auth_error_with_sqlstate() {
    let Some(c) = cluster("wrong_password_is_an_auth_error_with_sqlstate") else {
        return;
    };
    for role in [PASSWORD_ROLE, MD5_ROLE, SCRAM_ROLE] {
        let info = format!(
            "host=127.0.0.1 port={} user={} password=wrong dbname={TEST_DATABASE} sslmode=disable",
            c.port(),
            role.name
        );
        let err = Connection::connect(&info).await.unwrap_err();
        assert_eq!(err.code(), Some("28P01"), "{}: {err}", role.name);
        assert!(
            err.to_string().contains("password authentication failed"),
            "{err}"
        );
    }
}

#[tokio::test]
async fn missing_password_says_where_to_put_one() {
    let Some(c) = cluster("missing_password_says_where_to_put_one") else {
        return;
    };
    let info = format!(
        "host=127.0.0.1 port={} user={} dbname={TEST_DATABASE} sslmode=disable passfile=/nonexistent",
        c.port(),
        SCRAM_ROLE.name
    );
    let err = Connection::connect(&info).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Auth);
    assert!(err.to_string().contains("PGPASSWORD"), "{err}");
}

#[tokio::test]
async fn tls_only_role_needs_tls() {
    let Some(c) = cluster("tls_only_role_needs_tls") else {
        return;
    };
    let plain = Connection::connect(&conninfo(c, &TLS_ROLE, "127.0.0.1", "sslmode=disable")).await;
    assert!(
        plain.unwrap_err().code() == Some("28000"),
        "hostnossl rejects the role"
    );
    for mode in ["prefer", "require", "allow"] {
        let mut conn = Connection::connect(&conninfo(
            c,
            &TLS_ROLE,
            "127.0.0.1",
            &format!("sslmode={mode}"),
        ))
        .await
        .unwrap_or_else(|e| panic!("sslmode={mode}: {e}"));
        assert!(conn.is_tls(), "sslmode={mode}");
        assert_eq!(current_user(&mut conn).await, TLS_ROLE.name);
    }
}

#[tokio::test]
async fn verify_ca_and_verify_full() {
    let Some(c) = cluster("verify_ca_and_verify_full") else {
        return;
    };
    let ca = c.ca_cert_path().expect("TLS on").display().to_string();
    let full = format!("sslmode=verify-full sslrootcert={ca}");
    // The certificate names `localhost` only.
    let mut conn = Connection::connect(&conninfo(c, &TLS_ROLE, "localhost", &full))
        .await
        .unwrap();
    assert!(conn.is_tls());
    assert_eq!(current_user(&mut conn).await, TLS_ROLE.name);
    let err = Connection::connect(&conninfo(c, &TLS_ROLE, "127.0.0.1", &full))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Tls, "{err}");
    let verify_ca = format!("sslmode=verify-ca sslrootcert={ca}");
    let mut conn = Connection::connect(&conninfo(c, &TLS_ROLE, "127.0.0.1", &verify_ca))
        .await
        .unwrap();
    assert!(conn.is_tls());
    assert_eq!(current_user(&mut conn).await, TLS_ROLE.name);
}

#[tokio::test]
async fn verify_ca_rejects_a_foreign_root() {
    let Some(c) = cluster("verify_ca_rejects_a_foreign_root") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(vec!["other CA".into()]).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let other = params.self_signed(&key).unwrap();
    let path = dir.path().join("other.crt");
    std::fs::write(&path, other.pem()).unwrap();
    let info = conninfo(
        c,
        &TLS_ROLE,
        "127.0.0.1",
        &format!("sslmode=verify-ca sslrootcert={}", path.display()),
    );
    let err = Connection::connect(&info).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Tls, "{err}");
}

#[tokio::test]
async fn verify_full_without_a_root_certificate_says_what_to_do() {
    let Some(c) = cluster("verify_full_without_a_root_certificate_says_what_to_do") else {
        return;
    };
    let info = conninfo(
        c,
        &TLS_ROLE,
        "localhost",
        "sslmode=verify-full sslrootcert=/nonexistent/root.crt",
    );
    let err = Connection::connect(&info).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Tls);
    assert!(err.to_string().contains("sslrootcert"), "{err}");
}

#[tokio::test]
async fn unix_socket_and_url_forms() {
    let Some(c) = cluster("unix_socket_and_url_forms") else {
        return;
    };
    let info = format!(
        "host={} port={} user=postgres password={} dbname=postgres",
        c.socket_dir().display(),
        c.port(),
        c.password()
    );
    let mut conn = Connection::connect(&info).await.unwrap();
    assert!(!conn.is_tls(), "sslmode is ignored on unix sockets");
    assert_eq!(current_user(&mut conn).await, "postgres");
    let mut conn = Connection::connect(&c.url_for(&SCRAM_ROLE, TEST_DATABASE))
        .await
        .unwrap();
    assert_eq!(current_user(&mut conn).await, SCRAM_ROLE.name);
}

#[tokio::test]
async fn password_from_a_passfile() {
    let Some(c) = cluster("password_from_a_passfile") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let passfile = dir.path().join("pgpass");
    std::fs::write(
        &passfile,
        format!(
            "# test\n127.0.0.1:{}:*:{}:{}\n",
            c.port(),
            SCRAM_ROLE.name,
            SCRAM_ROLE.password()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&passfile, std::fs::Permissions::from_mode(0o600)).unwrap();
    let info = format!(
        "host=127.0.0.1 port={} user={} dbname={TEST_DATABASE} sslmode=disable passfile={}",
        c.port(),
        SCRAM_ROLE.name,
        passfile.display()
    );
    let mut conn = Connection::connect(&info).await.unwrap();
    assert_eq!(current_user(&mut conn).await, SCRAM_ROLE.name);
}

#[tokio::test]
async fn application_name_and_options_reach_the_server() {
    let url = common::db().url();
    let sep = if url.contains('?') { '&' } else { '?' };
    let url =
        format!("{url}{sep}application_name=sluice-test&options=-c%20search_path%3Dpg_catalog");
    let mut conn = Connection::connect(&url).await.unwrap();
    let rows = conn
        .simple_query("SELECT current_setting('application_name'), current_setting('search_path')")
        .await
        .unwrap();
    assert_eq!(common::text(&rows[0], 0).as_deref(), Some("sluice-test"));
    assert_eq!(common::text(&rows[0], 1).as_deref(), Some("pg_catalog"));
    assert_eq!(conn.parameter("application_name"), Some("sluice-test"));
    assert!(conn.parameter("server_version").is_some());
    assert_eq!(conn.parameter("client_encoding"), Some("UTF8"));
}

#[tokio::test]
async fn refused_and_timed_out_connections_fail_clearly() {
    // A port nobody listens on.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let err = Connection::connect(&format!(
        "host=127.0.0.1 port={port} user=x sslmode=disable"
    ))
    .await
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Connect);
    assert!(err.to_string().contains(&format!("port {port}")), "{err}");

    // A server that accepts but never answers: connect_timeout ends the wait.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let started = std::time::Instant::now();
    let err = Connection::connect(&format!(
        "host=127.0.0.1 port={port} user=x connect_timeout=2"
    ))
    .await
    .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    drop(silent);
}

#[tokio::test]
async fn second_host_is_tried_when_the_first_fails() {
    let Some(c) = cluster("second_host_is_tried_when_the_first_fails") else {
        return;
    };
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = listener.local_addr().unwrap().port();
    drop(listener);
    let url = format!(
        "postgres://postgres:{}@127.0.0.1:{dead},127.0.0.1:{}/postgres?sslmode=disable",
        c.password(),
        c.port()
    );
    let mut conn = Connection::connect(&url).await.unwrap();
    assert_eq!(current_user(&mut conn).await, "postgres");
}
