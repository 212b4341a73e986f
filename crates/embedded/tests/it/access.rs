//! Integration tests: only the cluster's owner gets in (SCRAM, a private password file and socket
//! directory), another OS user is refused, and an old trusting data directory is upgraded.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

use common::{psql, psql_path, tcp};
use sluice_embedded::{Cluster, ClusterOptions, PASSWORD_FILE, running_as_root};

/// The uid and gid of `nobody`, when this process is root and the user exists.
fn nobody(test_name: &str) -> Option<(u32, u32)> {
    if !running_as_root() {
        eprintln!(
            "skipping the other-user part of {test_name}: it runs psql as `nobody`, which needs \
             root"
        );
        return None;
    }
    let passwd = std::fs::read_to_string("/etc/passwd").expect("read /etc/passwd");
    let user = sluice_embedded::parsers::find_user(&passwd, "nobody");
    if user.is_none() {
        eprintln!("skipping the other-user part of {test_name}: no `nobody` user");
    }
    user.map(|u| (u.uid, u.gid))
}

/// Runs psql as another OS user with `conninfo` and `PGPASSFILE=passfile`; its stderr when it
/// fails, `Ok(stdout)` when it gets in.
fn psql_as(
    cluster: &Cluster,
    (uid, gid): (u32, u32),
    conninfo: &str,
    passfile: &Path,
) -> Result<String, String> {
    let mut command = Command::new(psql_path(cluster));
    command
        .args([
            "-X",
            "-q",
            "-At",
            "-c",
            "select current_user",
            "-d",
            conninfo,
        ])
        .current_dir("/")
        .stdin(Stdio::null())
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", "/nonexistent")
        .env("PGCONNECT_TIMEOUT", "10")
        .env("PGPASSFILE", passfile)
        .uid(uid)
        .gid(gid);
    common::outcome(&command.output().expect("run psql as another user"))
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).expect("stat").permissions().mode() & 0o777
}

#[test]
fn only_the_owner_gets_in() {
    let test = "only_the_owner_gets_in";
    if !common::can_start_clusters(test) {
        return;
    }
    let cluster = Cluster::start(ClusterOptions::temporary().tls(false).test_roles(false))
        .expect("start a temporary cluster");

    // The owner: with the password (the URL carries it, or the password file holds it).
    assert_eq!(
        psql(&cluster, &cluster.url(), None, "select current_user"),
        Ok("postgres".into())
    );
    let passfile = cluster.password_file();
    assert_eq!(passfile, cluster.data_dir().join(PASSWORD_FILE));
    assert_eq!(mode(&passfile), 0o600, "the password file is private");
    assert_eq!(
        mode(cluster.socket_dir()),
        0o700,
        "the socket directory is private"
    );
    let no_password = tcp(&cluster, "127.0.0.1", "postgres", "postgres", "");
    let with_file = format!("{no_password} passfile={}", passfile.display());
    assert_eq!(
        psql(&cluster, &with_file, None, "select current_user"),
        Ok("postgres".into())
    );
    assert!(
        cluster
            .psql_command()
            .contains(&passfile.display().to_string())
    );
    assert!(!cluster.psql_command().contains(cluster.password()));
    assert!(!cluster.url().contains(cluster.password()));
    assert!(!cluster.socket_url().contains(cluster.password()));
    assert_eq!(
        psql(&cluster, &cluster.socket_url(), None, "select 1"),
        Ok("1".into())
    );
    assert_eq!(
        psql(&cluster, &cluster.url_with_password(), None, "select 1"),
        Ok("1".into())
    );

    // Nothing is trusted, not even for the owner without the password.
    let refused = psql(&cluster, &no_password, None, "select 1").expect_err("no password");
    assert!(refused.contains("password"), "{refused}");
    let socket = format!(
        "host={} port={} user=postgres dbname=postgres",
        cluster.socket_dir().display(),
        cluster.port()
    );
    let refused = psql(&cluster, &socket, None, "select 1").expect_err("no password, socket");
    assert!(refused.contains("password"), "{refused}");
    assert_eq!(
        psql(&cluster, &socket, Some(cluster.password()), "select 1"),
        Ok("1".into())
    );

    // Another OS user: refused over TCP (it cannot read the password file), and cannot enter
    // the socket directory.
    let Some(stranger) = nobody(test) else {
        return;
    };
    let refused =
        psql_as(&cluster, stranger, &no_password, &passfile).expect_err("nobody over TCP");
    assert!(refused.contains("password"), "{refused}");
    let refused = psql_as(&cluster, stranger, &socket, &passfile).expect_err("nobody, socket");
    assert!(refused.contains("Permission denied"), "{refused}");
}

#[test]
fn an_old_trusting_data_directory_is_upgraded_on_start() {
    let test = "an_old_trusting_data_directory_is_upgraded_on_start";
    if !common::can_start_clusters(test) {
        return;
    }
    let parent = common::reachable_tempdir("sluice-upgrade-test-");
    let data_dir = parent.path().join("pgdata");
    let first = Cluster::start(ClusterOptions::persistent(&data_dir)).expect("first start");
    let old_password = first.password().to_owned();
    first.stop_server().expect("stop");

    // What an older Sluice left: every local connection trusted, no password file.
    let old_hba = "# Written by sluice-embedded when the cluster was created.\n\
                   local     all          all                             trust\n\
                   host      all          all              127.0.0.1/32   trust\n";
    std::fs::write(data_dir.join("pg_hba.conf"), old_hba).expect("write the old pg_hba.conf");
    std::fs::remove_file(first.password_file()).expect("remove the password file");
    // Left running by the older Sluice: the new start must stop it to upgrade.
    first.start_server().expect("start with the old rules");
    let no_password = tcp(&first, "127.0.0.1", "postgres", "postgres", "");
    let stranger = nobody(test);
    if let Some(stranger) = stranger {
        assert_eq!(
            psql_as(&first, stranger, &no_password, Path::new("/nonexistent")),
            Ok("postgres".into()),
            "before the upgrade, anyone got in"
        );
    }
    let pid = first.server_pid().expect("running");
    drop(first);

    let upgraded = Cluster::start(ClusterOptions::persistent(&data_dir).stop_on_drop(true))
        .expect("start and upgrade");
    assert_ne!(upgraded.server_pid(), Some(pid), "restarted to upgrade");
    assert_ne!(upgraded.password(), old_password, "a new password");
    assert_eq!(mode(&upgraded.password_file()), 0o600);
    let hba = std::fs::read_to_string(data_dir.join("pg_hba.conf")).expect("read pg_hba.conf");
    assert!(!hba.contains("trust\n"), "{hba}");
    let refused = psql(&upgraded, &no_password, None, "select 1").expect_err("no password");
    assert!(refused.contains("password"), "{refused}");
    assert_eq!(
        psql(&upgraded, &upgraded.url(), None, "select current_user"),
        Ok("postgres".into())
    );
    if let Some(stranger) = stranger {
        let passfile = upgraded.password_file();
        let refused =
            psql_as(&upgraded, stranger, &no_password, &passfile).expect_err("after the upgrade");
        assert!(refused.contains("password"), "{refused}");
    }
    upgraded.stop().expect("stop");

    // Started again, nothing more to upgrade: the password stays.
    let again = Cluster::start(ClusterOptions::persistent(&data_dir).stop_on_drop(true))
        .expect("start again");
    let kept = std::fs::read_to_string(again.password_file()).expect("read");
    assert!(
        kept.ends_with(&format!(":{}\n", again.password())),
        "{kept}"
    );
    assert_eq!(psql(&again, &again.url(), None, "select 1"), Ok("1".into()));
    again.stop().expect("stop");
}
