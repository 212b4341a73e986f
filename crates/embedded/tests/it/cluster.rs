//! Integration tests: temporary clusters (roles, TLS, lifecycle), failures, persistent clusters.

use crate::common;

use std::net::TcpListener;
use std::path::Path;

use common::{psql, tcp};
use sluice_embedded::{
    Cluster, ClusterOptions, EmbeddedError, MD5_ROLE, PASSWORD_ROLE, SCRAM_ROLE, TEST_DATABASE,
    TEST_ROLES, TLS_ROLE, process_alive, test_database,
};

#[test]
fn temporary_cluster_serves_every_role_tls_and_restarts() {
    if !common::can_start_clusters("temporary_cluster_serves_every_role_tls_and_restarts") {
        return;
    }
    let cluster = Cluster::start(ClusterOptions::temporary()).expect("start a temporary cluster");
    let root = cluster
        .data_dir()
        .parent()
        .expect("data dir has a parent")
        .to_path_buf();
    assert!(cluster.log_file().is_file(), "the server log exists");

    // Superuser over TCP and over the unix socket; the test settings are applied.
    assert_eq!(
        psql(&cluster, &cluster.url(), None, "select 1"),
        Ok("1".into())
    );
    assert_eq!(
        psql(&cluster, &cluster.socket_url(), None, "select 1"),
        Ok("1".into())
    );
    let socket = format!(
        "host={} port={} user=postgres dbname=postgres",
        cluster.socket_dir().display(),
        cluster.port()
    );
    let settings = "select current_setting('fsync') || current_setting('max_connections') \
                    || current_setting('ssl') || (select count(*) from pg_stat_ssl where pid = pg_backend_pid() and ssl)";
    let superuser = Some(cluster.password());
    assert_eq!(
        psql(&cluster, &socket, superuser, settings),
        Ok("off200on0".into())
    );

    // Passwords are stored as each method needs: md5 for the md5 role, SCRAM for the others.
    let stored = psql(
        &cluster,
        &socket,
        superuser,
        "select string_agg(rolname || '=' || left(rolpassword, 6), ',' order by rolname) \
         from pg_authid where rolname like 'sluice\\_%'",
    );
    let stored = stored.expect("read pg_authid");
    assert!(stored.contains("sluice_md5=md5"), "{stored}");
    for name in ["sluice_password", "sluice_scram", "sluice_tls"] {
        assert!(stored.contains(&format!("{name}=SCRAM-")), "{stored}");
    }

    // Each password role logs in over TCP with its password, and may create in sluice_test.
    for role in [PASSWORD_ROLE, MD5_ROLE, SCRAM_ROLE] {
        let url = cluster.url_for(&role, TEST_DATABASE);
        let sql = format!(
            "create table t_{0} (x int); select count(*) from t_{0}",
            role.name
        );
        assert_eq!(
            psql(&cluster, &url, Some(role.password()), &sql),
            Ok("0".into()),
            "{role:?}"
        );
        let without_password = tcp(&cluster, "127.0.0.1", role.name, TEST_DATABASE, "");
        let wrong = psql(&cluster, &without_password, Some("wrong"), "select 1")
            .expect_err("wrong password");
        assert!(
            wrong.contains("password authentication failed"),
            "{role:?}: {wrong}"
        );
    }

    // The TLS role: rejected without TLS, accepted with it.
    let tls_plain = tcp(
        &cluster,
        "127.0.0.1",
        TLS_ROLE.name,
        TEST_DATABASE,
        "sslmode=disable",
    );
    let refused = psql(&cluster, &tls_plain, Some(TLS_ROLE.password()), "select 1")
        .expect_err("the TLS role is rejected without TLS");
    assert!(refused.contains("no encryption"), "{refused}");
    let tls_on = tcp(
        &cluster,
        "127.0.0.1",
        TLS_ROLE.name,
        TEST_DATABASE,
        "sslmode=require",
    );
    assert_eq!(
        psql(
            &cluster,
            &tls_on,
            Some(TLS_ROLE.password()),
            "select ssl from pg_stat_ssl where pid = pg_backend_pid()"
        ),
        Ok("t".into())
    );

    // Certificate checks: the certificate names localhost, not 127.0.0.1.
    let ca = cluster
        .ca_cert_path()
        .expect("TLS is on")
        .display()
        .to_string();
    let verify = |host: &str, mode: &str| {
        let conninfo = tcp(
            &cluster,
            host,
            "postgres",
            "postgres",
            &format!("sslmode={mode} sslrootcert={ca}"),
        );
        psql(&cluster, &conninfo, superuser, "select 1")
    };
    assert_eq!(verify("localhost", "verify-full"), Ok("1".into()));
    let mismatch = verify("127.0.0.1", "verify-full").expect_err("name mismatch");
    assert!(mismatch.contains("does not match host name"), "{mismatch}");
    assert_eq!(verify("127.0.0.1", "verify-ca"), Ok("1".into()));

    // Restart: same port, a new postmaster, the data kept.
    let port = cluster.port();
    let pid = cluster.server_pid().expect("running");
    cluster.restart().expect("restart");
    assert_eq!(cluster.port(), port);
    assert_ne!(cluster.server_pid(), Some(pid));
    let scram = cluster.url_for(&SCRAM_ROLE, TEST_DATABASE);
    assert_eq!(
        psql(
            &cluster,
            &scram,
            Some(SCRAM_ROLE.password()),
            "select count(*) from t_sluice_scram"
        ),
        Ok("0".into())
    );

    // stop_server / start_server: down in between, back on the same port.
    let pid = cluster.server_pid().expect("running");
    cluster.stop_server().expect("stop_server");
    assert_eq!(cluster.server_pid(), None);
    assert!(!process_alive(pid));
    assert!(psql(&cluster, &cluster.url(), None, "select 1").is_err());
    cluster
        .stop_server()
        .expect("stopping a stopped server does nothing");
    cluster.start_server().expect("start_server");
    assert_eq!(
        psql(&cluster, &cluster.url(), None, "select 1"),
        Ok("1".into())
    );

    // stop: the server is gone and so are its files.
    let pid = cluster.server_pid().expect("running");
    cluster.stop().expect("stop");
    assert!(!process_alive(pid));
    assert!(!root.exists(), "{} was removed", root.display());
}

#[test]
fn dropping_a_cluster_stops_it_and_removes_its_files() {
    if !common::can_start_clusters("dropping_a_cluster_stops_it_and_removes_its_files") {
        return;
    }
    let cluster =
        Cluster::start(ClusterOptions::temporary().tls(false).test_roles(false)).expect("start");
    assert_eq!(cluster.ca_cert_path(), None);
    assert_eq!(
        psql(&cluster, &cluster.url(), None, "show ssl"),
        Ok("off".into())
    );
    let require = tcp(
        &cluster,
        "127.0.0.1",
        "postgres",
        "postgres",
        "sslmode=require",
    );
    let refused = psql(&cluster, &require, Some(cluster.password()), "select 1")
        .expect_err("no TLS when off");
    assert!(refused.contains("SSL"), "{refused}");
    let roles = psql(
        &cluster,
        &cluster.url(),
        None,
        "select count(*) from pg_roles where rolname like 'sluice%'",
    );
    assert_eq!(roles, Ok("0".into()));

    let pid = cluster.server_pid().expect("running");
    let watchdog = cluster
        .watchdog_pid()
        .expect("a temporary cluster has a watchdog");
    let data_dir = cluster.data_dir().to_path_buf();
    drop(cluster);
    assert!(!process_alive(pid), "server stopped");
    assert!(!process_alive(watchdog), "watchdog disarmed and reaped");
    assert!(!data_dir.exists(), "files removed");
}

#[test]
fn start_failures_report_the_server_log_and_leave_nothing_behind() {
    if !common::can_start_clusters("start_failures_report_the_server_log_and_leave_nothing_behind")
    {
        return;
    }
    let error = Cluster::start(ClusterOptions::temporary().setting("bad name", "1"))
        .expect_err("an invalid setting name");
    assert!(
        matches!(error, EmbeddedError::InvalidSetting { .. }),
        "{error}"
    );

    let error = Cluster::start(
        ClusterOptions::temporary()
            .tls(false)
            .test_roles(false)
            .setting("shared_buffers", "not-a-size"),
    )
    .expect_err("the server rejects the setting");
    let EmbeddedError::ServerStart { data_dir, tail, .. } = &error else {
        panic!("expected ServerStart, got {error}");
    };
    assert!(
        tail.contains("shared_buffers"),
        "the log tail explains it: {error}"
    );
    assert!(!data_dir.exists(), "the failed cluster was removed");
}

#[test]
fn a_taken_port_is_reported() {
    if !common::can_start_clusters("a_taken_port_is_reported") {
        return;
    }
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let error = Cluster::start(
        ClusterOptions::temporary()
            .tls(false)
            .test_roles(false)
            .port(port),
    )
    .expect_err("port taken");
    assert!(
        matches!(error, EmbeddedError::PortInUse { port: p, .. } if p == port),
        "{error}"
    );
}

#[test]
fn persistent_cluster_is_created_once_then_reused() {
    if !common::can_start_clusters("persistent_cluster_is_created_once_then_reused") {
        return;
    }
    let parent = common::reachable_tempdir("sluice-persistent-test-");
    let data_dir = parent.path().join("nested").join("pgdata");

    let first = Cluster::start(ClusterOptions::persistent(&data_dir)).expect("first start");
    assert_eq!(first.data_dir(), data_dir);
    assert_eq!(
        first.socket_dir(),
        data_dir,
        "persistent socket lives in the data dir"
    );
    let port = first.port();
    psql(
        &first,
        &first.url(),
        None,
        "create table kept (x int); insert into kept values (42)",
    )
    .expect("write");

    // While it runs, a second start finds it and reuses it.
    let pid = first.server_pid().expect("running");
    let second = Cluster::start(ClusterOptions::persistent(&data_dir)).expect("reuse running");
    assert_eq!(second.server_pid(), Some(pid));
    assert_eq!(second.port(), port);
    drop(second);
    assert_eq!(
        first.server_pid(),
        Some(pid),
        "dropping a persistent cluster leaves it running"
    );
    let other_port =
        Cluster::start(ClusterOptions::persistent(&data_dir).port(port.wrapping_add(1).max(1)))
            .expect_err("already running elsewhere");
    assert!(
        matches!(other_port, EmbeddedError::AlreadyRunningOnOtherPort { .. }),
        "{other_port}"
    );

    first.stop().expect("stop");
    assert!(!process_alive(pid));
    assert!(
        data_dir.join("PG_VERSION").is_file(),
        "stop keeps persistent data"
    );

    // Started again: same data, and the recorded port when it is still free.
    let again = Cluster::start(ClusterOptions::persistent(&data_dir)).expect("restart from disk");
    assert_eq!(
        psql(&again, &again.url(), None, "select x from kept"),
        Ok("42".into())
    );
    if TcpListener::bind(("127.0.0.1", port)).is_err() {
        assert_eq!(again.port(), port, "the recorded port is reused");
    }
    again.stop().expect("stop");

    // A directory with other content is refused.
    let stray = parent.path().join("stray");
    std::fs::create_dir(&stray).expect("mkdir");
    std::fs::write(stray.join("file"), "x").expect("write");
    let refused = Cluster::start(ClusterOptions::persistent(&stray)).expect_err("not a data dir");
    assert!(
        matches!(refused, EmbeddedError::NotADataDirectory { .. }),
        "{refused}"
    );
}

#[test]
fn the_shared_test_database_answers() {
    let db = test_database();
    assert!(std::ptr::eq(db, test_database()), "one per process");
    let Some(cluster) = db.cluster_or_skip("the_shared_test_database_answers") else {
        return;
    };
    assert!(db.is_embedded());
    assert_eq!(db.url(), cluster.url());
    for role in TEST_ROLES {
        let url = db.url_for(&role, TEST_DATABASE).expect("embedded");
        let url = format!("{url}?sslmode=require");
        assert_eq!(
            psql(cluster, &url, Some(role.password()), "select current_user"),
            Ok(role.name.into())
        );
    }
    assert!(Path::new(cluster.socket_dir()).is_dir());
}
