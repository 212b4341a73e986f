//! Who may connect: the superuser's generated password, its pgpass file, and the upgrade of data
//! directories made when every local connection was trusted.
//!
//! Every connection, over TCP or the unix socket, authenticates with SCRAM-SHA-256 (see
//! [`crate::conf::render_hba`]). The superuser `postgres` gets a random password when the
//! cluster is initialised; it is kept in [`PASSWORD_FILE`], a pgpass-format file readable by the
//! server user alone (mode 0600; root reads it too), so `PGPASSFILE=<file> psql ...` works for
//! the owner and nobody else learns it. Client certificates would also keep strangers out, but
//! every PostgreSQL client speaks SCRAM with a password file, and libpq-style clients find the
//! file by `PGPASSFILE` or `passfile=` without further setup.

use std::fs;
use std::io::{Read as _, Write as _};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::commands::Programs;
use crate::conf;
use crate::error::{EmbeddedError, Result};
use crate::user::{ServerUser, give_to};

/// The pgpass-format file in the data directory holding the superuser's password.
pub const PASSWORD_FILE: &str = "sluice.pgpass";
/// The superuser every cluster has.
pub const SUPERUSER: &str = "postgres";
/// Length of generated passwords: 32 characters of 62 kinds, about 190 bits.
const PASSWORD_LEN: usize = 32;
const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// A password that `Debug` does not show.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_empty() {
            "\"\""
        } else {
            "\"********\""
        })
    }
}

/// The path of the password file of `data_dir`.
pub fn password_file(data_dir: &Path) -> PathBuf {
    data_dir.join(PASSWORD_FILE)
}

/// A fresh random password from the kernel's random source (letters and digits only, so it
/// needs no quoting in SQL, URLs or pgpass lines).
pub fn generate_password() -> Result<String> {
    let mut random =
        fs::File::open("/dev/urandom").map_err(|e| EmbeddedError::io("open", "/dev/urandom", e))?;
    let mut password = String::with_capacity(PASSWORD_LEN);
    let mut buf = [0u8; 64];
    while password.len() < PASSWORD_LEN {
        random
            .read_exact(&mut buf)
            .map_err(|e| EmbeddedError::io("read", "/dev/urandom", e))?;
        // 248 = 4 x 62: bytes above it would favour the first letters.
        for byte in buf.iter().filter(|b| **b < 248) {
            if password.len() == PASSWORD_LEN {
                break;
            }
            password.push(char::from(ALPHABET[usize::from(*byte) % ALPHABET.len()]));
        }
    }
    Ok(password)
}

/// The pgpass line giving the superuser's password for every host, port and database.
fn pgpass_line(password: &str) -> String {
    format!("*:*:*:{SUPERUSER}:{password}\n")
}

/// The superuser's password read back from a pgpass text written by `write_password_file`.
pub fn parse_password_file(text: &str) -> Option<&str> {
    text.lines().find_map(|line| {
        let rest = line.strip_prefix("*:*:*:")?;
        let password = rest.strip_prefix(SUPERUSER)?.strip_prefix(':')?;
        (!password.is_empty() && password.bytes().all(|b| ALPHABET.contains(&b)))
            .then_some(password)
    })
}

/// Reads the superuser's password of `data_dir`, `None` when the file is missing.
pub fn read_password(data_dir: &Path) -> Result<Option<String>> {
    let path = password_file(data_dir);
    let text = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(EmbeddedError::io("read", &path, e)),
    };
    parse_password_file(&text)
        .map(|p| Some(p.to_owned()))
        .ok_or(EmbeddedError::BadPasswordFile { path })
}

/// Writes the password file (mode 0600, owned by the server user), replacing any old one.
pub fn write_password_file(
    data_dir: &Path,
    password: &str,
    user: Option<&ServerUser>,
) -> Result<()> {
    let path = password_file(data_dir);
    let partial = data_dir.join(format!("{PASSWORD_FILE}.new"));
    let _ = fs::remove_file(&partial);
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&partial)
        .map_err(|e| EmbeddedError::io("create", &partial, e))?;
    file.write_all(pgpass_line(password).as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| EmbeddedError::io("write", &partial, e))?;
    fs::set_permissions(&partial, fs::Permissions::from_mode(0o600))
        .map_err(|e| EmbeddedError::io("set permissions of", &partial, e))?;
    give_to(&partial, user)?;
    fs::rename(&partial, &path).map_err(|e| EmbeddedError::io("rename", &partial, e))
}

/// The single-user-mode statements that give the superuser `password`, stored as SCRAM.
pub fn set_password_sql(password: &str) -> String {
    format!(
        "SET password_encryption = 'scram-sha-256';\nALTER ROLE {SUPERUSER} PASSWORD '{password}';\n"
    )
}

/// Gives the superuser of a stopped cluster a new password and writes the password file.
/// `more_sql` runs in the same single-user session (the test roles at initialisation).
pub fn set_superuser_password(programs: &Programs, data_dir: &Path, more_sql: &str) -> Result<()> {
    let password = generate_password()?;
    let mut sql = set_password_sql(&password);
    sql.push_str(more_sql);
    programs
        .single_user(data_dir, "template1", &sql)
        .map_err(|e| redact(e, &password))?;
    write_password_file(data_dir, &password, programs.user.as_ref())
}

/// Keeps a password out of an error's text (single-user mode may echo a failed statement).
fn redact(error: EmbeddedError, password: &str) -> EmbeddedError {
    match error {
        EmbeddedError::CommandFailed {
            what,
            command,
            status,
            output,
        } => EmbeddedError::CommandFailed {
            what,
            command,
            status,
            output: output.replace(password, "********"),
        },
        other => other,
    }
}

/// What [`upgrade_needed`] found wrong with an existing data directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Upgrade {
    /// No password file: the superuser has no password we know.
    pub password: bool,
    /// pg_hba.conf is ours but not the current one (it trusts connections).
    pub hba: bool,
}

impl Upgrade {
    /// Whether anything must change.
    pub fn any(self) -> bool {
        self.password || self.hba
    }
}

/// Checks an existing data directory against today's rules.
pub fn upgrade_needed(data_dir: &Path) -> Result<Upgrade> {
    let hba_path = data_dir.join("pg_hba.conf");
    let hba = fs::read_to_string(&hba_path).map_err(|e| EmbeddedError::io("read", &hba_path, e))?;
    Ok(Upgrade {
        password: !password_file(data_dir).is_file(),
        hba: conf::is_our_hba(&hba) && trusts_someone(&hba),
    })
}

/// Whether a pg_hba.conf that is not ours lets anyone in without a password.
pub fn foreign_hba_trusts(data_dir: &Path) -> bool {
    fs::read_to_string(data_dir.join("pg_hba.conf"))
        .is_ok_and(|hba| !conf::is_our_hba(&hba) && trusts_someone(&hba))
}

/// Whether a pg_hba.conf text has a `trust` line.
fn trusts_someone(hba: &str) -> bool {
    hba.lines().any(|line| {
        let line = line.split('#').next().unwrap_or_default();
        line.split_whitespace().any(|word| word == "trust")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn passwords_are_long_random_and_alphanumeric() {
        let a = generate_password().expect("password");
        let b = generate_password().expect("password");
        assert_eq!(a.len(), PASSWORD_LEN);
        assert!(a.bytes().all(|c| c.is_ascii_alphanumeric()), "{a}");
        assert_ne!(a, b);
    }

    #[test]
    fn the_password_file_is_private_and_reads_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(read_password(dir.path()).expect("missing is fine"), None);
        write_password_file(dir.path(), "abc123", None).expect("write");
        let path = password_file(dir.path());
        let mode = fs::metadata(&path).expect("stat").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(
            fs::read_to_string(&path).expect("read"),
            "*:*:*:postgres:abc123\n"
        );
        assert_eq!(
            read_password(dir.path()).expect("read").as_deref(),
            Some("abc123")
        );
        write_password_file(dir.path(), "second", None).expect("replace");
        assert_eq!(
            read_password(dir.path()).expect("read").as_deref(),
            Some("second")
        );
        fs::write(&path, "garbage").expect("write");
        assert!(matches!(
            read_password(dir.path()),
            Err(EmbeddedError::BadPasswordFile { .. })
        ));
    }

    #[test]
    fn set_password_sql_stores_scram() {
        let sql = set_password_sql("pw");
        assert!(sql.starts_with("SET password_encryption = 'scram-sha-256';\n"));
        assert!(sql.contains("ALTER ROLE postgres PASSWORD 'pw';"));
        assert_eq!(sql.lines().count(), 2, "one statement per line");
    }

    #[test]
    fn upgrades_are_found_and_foreign_files_left_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let hba = dir.path().join("pg_hba.conf");
        let old = "# Written by sluice-embedded when the cluster was created.\n\
                   local all all trust\nhost all all 127.0.0.1/32 trust\n";
        fs::write(&hba, old).expect("write");
        let found = upgrade_needed(dir.path()).expect("check");
        assert_eq!(
            found,
            Upgrade {
                password: true,
                hba: true
            }
        );
        fs::write(&hba, conf::render_hba(false, false)).expect("write");
        write_password_file(dir.path(), "pw", None).expect("write");
        assert!(!upgrade_needed(dir.path()).expect("check").any());
        assert!(!foreign_hba_trusts(dir.path()));
        fs::write(&hba, "# mine\nhost all all 0.0.0.0/0 trust # yes\n").expect("write");
        assert!(
            !upgrade_needed(dir.path()).expect("check").any(),
            "not ours"
        );
        assert!(foreign_hba_trusts(dir.path()));
        fs::write(&hba, "# mine, trust me\nhost all all 0.0.0.0/0 md5\n").expect("write");
        assert!(!foreign_hba_trusts(dir.path()), "comments do not count");
    }

    #[test]
    fn secrets_do_not_show_in_debug() {
        assert_eq!(format!("{:?}", Secret("pw".into())), "\"********\"");
    }

    #[test]
    fn redact_hides_the_password() {
        let error = EmbeddedError::CommandFailed {
            what: "x",
            command: "postgres --single".into(),
            status: "exited with 1".into(),
            output: "STATEMENT: ALTER ROLE postgres PASSWORD 'sekret'".into(),
        };
        assert!(!redact(error, "sekret").to_string().contains("sekret"));
    }

    proptest! {
        #[test]
        fn parse_password_file_never_panics(text in "\\PC{0,200}") {
            let _ = parse_password_file(&text);
        }
    }
}
