//! Streaming replicas of a running cluster: slot, base backup, standby start and catch-up.
//!
//! Each replica is a temporary cluster of its own (own data directory, port, socket directory
//! and watchdog) made by `pg_basebackup -R -C -S sluice_replica_<i>` from the primary over
//! 127.0.0.1, authenticating with SCRAM and the primary's password file exactly as any other
//! client (pg_hba.conf already lets the superuser make replication connections that way; nothing
//! is trusted). `-R` writes `standby.signal` and `primary_conninfo` (with the slot), so the
//! replica streams from the primary from its first start. Replicas stop (and their slots are
//! dropped, so a persistent primary keeps no WAL for them) before the primary does.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::auth::SUPERUSER;
use crate::cluster::Cluster;
use crate::commands::Programs;
use crate::error::{EmbeddedError, Result};
use crate::options::temporary_bases;
use crate::user::{create_private_dir, first_reachable, give_to, set_mode};
use crate::watchdog::Watchdog;

/// How long a new replica may take to replay what the primary had written when it started.
const CATCH_UP_TIMEOUT: Duration = Duration::from_secs(60);
/// How often the catch-up is polled.
const CATCH_UP_POLL: Duration = Duration::from_millis(50);

/// The name of the physical replication slot of replica `index`.
pub fn slot_name(index: usize) -> String {
    format!("sluice_replica_{index}")
}

/// Quotes a value for a libpq conninfo string (`'...'` with `\` and `'` escaped).
fn conninfo_value(value: &str) -> String {
    format!("'{}'", value.replace('\\', "\\\\").replace('\'', "\\'"))
}

impl Cluster {
    /// Starts `count` more streaming replicas of this (running) cluster and waits until each
    /// is in recovery and has replayed everything written here before it started.
    ///
    /// Each is a temporary cluster (a directory under `/dev/shm` or the temporary directory,
    /// its own free port on 127.0.0.1 and its own socket directory) with a physical replication
    /// slot named `sluice_replica_<i>` on this server. They are stopped and removed, and their
    /// slots dropped, by [`Cluster::stop_replicas`], which [`Cluster::stop`] and dropping this
    /// cluster call first. Needs `pg_basebackup` and `psql` next to the server binaries.
    pub fn start_replicas(&mut self, count: usize) -> Result<()> {
        for _ in 0..count {
            let index = self.replicas.len();
            let replica = self.start_replica(index)?;
            self.replicas.push(replica);
        }
        Ok(())
    }

    /// The replicas started by [`Cluster::start_replicas`], in order.
    pub fn replicas(&self) -> &[Cluster] {
        &self.replicas
    }

    /// Whether this cluster is a streaming replica made by [`Cluster::start_replicas`].
    pub fn is_replica(&self) -> bool {
        self.data_dir.join("standby.signal").exists()
    }

    /// Stops and removes every replica and drops its replication slot here. Reports the first
    /// failure after trying them all.
    pub fn stop_replicas(&mut self) -> Result<()> {
        let mut first_error = None;
        let replicas = std::mem::take(&mut self.replicas);
        for (index, replica) in replicas.into_iter().enumerate() {
            let stopped = replica.stop();
            let dropped = if self.server_pid().is_some() {
                self.drop_slot(index)
            } else {
                Ok(())
            };
            if let Err(error) = stopped.and(dropped) {
                first_error.get_or_insert(error);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// The libpq conninfo of this server's superuser over 127.0.0.1, password in its file.
    fn primary_conninfo(&self, application_name: &str) -> String {
        format!(
            "host={} port={} user={SUPERUSER} passfile={} application_name={}",
            self.host(),
            self.port,
            conninfo_value(&self.password_file().to_string_lossy()),
            conninfo_value(application_name),
        )
    }

    fn needed_program(&self, name: &'static str) -> Result<std::path::PathBuf> {
        self.programs
            .binaries
            .program(name)
            .ok_or_else(|| EmbeddedError::ReplicaProgramMissing {
                program: name,
                bin_dir: self.bin_dir().to_path_buf(),
            })
    }

    /// Drops the slot of replica `index` (`pg_receivewal --drop-slot`).
    fn drop_slot(&self, index: usize) -> Result<()> {
        let program = self.needed_program("pg_receivewal")?;
        self.programs
            .run(
                "dropping a replica's replication slot",
                self.programs
                    .command(&program)
                    .args(["--drop-slot", "-S", &slot_name(index), "-d"])
                    .arg(self.primary_conninfo("sluice-embedded")),
            )
            .map(|_| ())
    }

    fn start_replica(&self, index: usize) -> Result<Cluster> {
        let pg_basebackup = self.needed_program("pg_basebackup")?;
        let user = self.programs.user.clone();
        let base = first_reachable(&temporary_bases(), user.as_ref())?;
        let root = tempfile::Builder::new()
            .prefix("sluice-replica-")
            .tempdir_in(&base)
            .map_err(|e| EmbeddedError::io("create a temporary directory in", &base, e))?;
        set_mode(root.path(), 0o700)?;
        give_to(root.path(), user.as_ref())?;
        let data_dir = root.path().join("data");
        let watchdog = Watchdog::spawn(
            &self.programs.binaries.pg_ctl(),
            &data_dir,
            Some(root.path()),
            user.as_ref(),
        )?;
        let mut replica = Cluster {
            programs: Programs {
                binaries: self.programs.binaries.clone(),
                user,
            },
            log_file: data_dir.join("log").join("postgresql.log"),
            socket_dir: root.path().join("socket"),
            data_dir,
            port: 0,
            ca_cert: self.ca_cert.clone(),
            password: self.password.clone(),
            test_roles: self.test_roles,
            tls: self.tls,
            settings: self.settings.clone(),
            temp_root: Some(root),
            watchdog: Some(watchdog),
            stop_on_drop: true,
            released: false,
            replicas: Vec::new(),
        };
        // From here on an error drops `replica`, which stops and removes what was made.
        replica.create_socket_dir()?;
        create_private_dir(&replica.data_dir, 0o700, replica.programs.user.as_ref())?;
        // A slot left by a replica of an earlier process that died: it would keep WAL forever.
        let _ = self.drop_slot(index);
        let application_name = format!("sluice_replica_{index}");
        self.programs.run(
            "making a replica with pg_basebackup",
            self.programs
                .command(&pg_basebackup)
                .arg("-D")
                .arg(&replica.data_dir)
                .args(["-R", "-C", "-S", &slot_name(index)])
                .args(["-X", "stream", "-c", "fast", "--no-sync", "-d"])
                .arg(self.primary_conninfo(&application_name)),
        )?;
        // The copy carries the primary's server log; the replica starts a log of its own.
        let _ = std::fs::remove_file(&replica.log_file);
        replica.launch(None, None)?;
        let target = self.sql_value("SELECT pg_current_wal_lsn()")?;
        replica.wait_for_replay(&target)?;
        Ok(replica)
    }

    /// Waits until this replica is in recovery and has replayed up to `lsn`.
    fn wait_for_replay(&self, lsn: &str) -> Result<()> {
        let started = Instant::now();
        let check = format!(
            "SELECT pg_is_in_recovery() AND pg_last_wal_replay_lsn() >= '{}'::pg_lsn",
            lsn.replace('\'', "")
        );
        loop {
            let last = self.sql_value(&check);
            if matches!(&last, Ok(value) if value == "t") {
                return Ok(());
            }
            if started.elapsed() > CATCH_UP_TIMEOUT {
                return Err(EmbeddedError::ReplicaCatchUp {
                    data_dir: self.data_dir.clone(),
                    lsn: lsn.to_owned(),
                    last: match last {
                        Ok(value) => format!("the check answered {value:?}"),
                        Err(error) => error.to_string(),
                    },
                    log: self.log_file.clone(),
                });
            }
            std::thread::sleep(CATCH_UP_POLL);
        }
    }

    /// Runs one query with psql as the superuser over 127.0.0.1; its single value.
    fn sql_value(&self, sql: &str) -> Result<String> {
        let psql = self.needed_program("psql")?;
        let mut command: Command = self.programs.command(&psql);
        command
            .args(["-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql, "-d"])
            .arg(format!(
                "{} dbname=postgres",
                self.primary_conninfo("sluice-embedded")
            ));
        let output = self
            .programs
            .run("querying the server with psql", &mut command)?;
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conninfo_values_are_quoted() {
        assert_eq!(conninfo_value("/tmp/a b"), "'/tmp/a b'");
        assert_eq!(conninfo_value(r"it's\x"), r"'it\'s\\x'");
        assert_eq!(slot_name(2), "sluice_replica_2");
    }
}
