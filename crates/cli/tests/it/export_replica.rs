//! `sluice export --replica`: reads from the replica URL given, or from the configured replicas
//! (the first in recovery); a primary given as a replica is refused, and so is `--replica` with
//! nothing configured.
#![allow(clippy::unwrap_used)]

use sluice_embedded::{ClusterOptions, private_cluster};
use std::process::{Command, Output};

const WHO: &str =
    "SELECT pg_is_in_recovery() AS replica, current_setting('application_name') AS app";

fn export(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sluice"));
    command.arg("export").args(args).arg(WHO);
    for (name, _) in std::env::vars() {
        if name == "DATABASE_URL" || name.starts_with("SLUICE_") {
            command.env_remove(name);
        }
    }
    command.envs(env.iter().copied());
    command.output().unwrap()
}

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

#[test]
fn export_reads_from_a_replica_when_asked() {
    let Some(mut cluster) = private_cluster(
        "export_replica",
        ClusterOptions::temporary().tls(false).test_roles(false),
    ) else {
        return;
    };
    cluster.start_replicas(1).unwrap();
    let primary = cluster.url();
    let replica = cluster.replicas()[0].url();
    let csv = ["--format", "csv", "--no-header"];
    let from_replica = "t,sluice-export-replica\n";

    // Without --replica: the primary.
    let mut args = vec!["-d", primary.as_str()];
    args.extend(csv);
    assert_eq!(stdout(&export(&args, &[])), "f,sluice\n");
    // The replica given.
    let given = format!("--replica={replica}");
    let mut args = vec!["-d", primary.as_str(), given.as_str()];
    args.extend(csv);
    assert_eq!(stdout(&export(&args, &[])), from_replica);
    // The configured replicas: the first in recovery (the primary listed first is passed over).
    let listed = format!("{primary},{replica}");
    let mut args = vec!["--replica"];
    args.extend(csv);
    let env = [("SLUICE_DATABASE_REPLICAS", listed.as_str())];
    assert_eq!(stdout(&export(&args, &env)), from_replica);
    // ... from a config file.
    let dir = std::env::temp_dir().join(format!("sluice-export-replica-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("sluice.toml");
    std::fs::write(
        &file,
        format!("[database]\nreplicas = [\"{primary}\", \"{replica}\"]\n"),
    )
    .unwrap();
    let file_arg = file.display().to_string();
    let mut args = vec!["--replica", "--config", file_arg.as_str()];
    args.extend(csv);
    assert_eq!(stdout(&export(&args, &[])), from_replica);
    let _ = std::fs::remove_dir_all(&dir);

    // A primary given as the replica: refused, saying so.
    let refused = export(&[&format!("--replica={primary}")], &[]);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("is not a replica"), "{stderr}");
    assert!(stderr.contains("leave out --replica"), "{stderr}");
    assert!(refused.stdout.is_empty());
    // Nothing configured.
    let refused = export(&["--replica"], &[]);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("none is configured"), "{stderr}");
}
