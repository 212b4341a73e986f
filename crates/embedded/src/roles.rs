//! The login roles a test cluster creates, one per authentication method under test.

use std::sync::OnceLock;

/// The name of the database test clusters create for the test roles (owned by `postgres`; every
/// test role may create schemas in it and objects in its `public` schema).
pub const TEST_DATABASE: &str = "sluice_test";

/// How the server authenticates a role over TCP (its pg_hba.conf method).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AuthMethod {
    /// `password`: the password is sent in clear text.
    Password,
    /// `md5`: the client proves the password with an MD5 digest (stored as md5 too).
    Md5,
    /// `scram-sha-256`.
    ScramSha256,
}

impl AuthMethod {
    /// The method's keyword in pg_hba.conf.
    pub fn hba_keyword(self) -> &'static str {
        match self {
            AuthMethod::Password => "password",
            AuthMethod::Md5 => "md5",
            AuthMethod::ScramSha256 => "scram-sha-256",
        }
    }
}

/// A login role of a test cluster.
///
/// Its password ([`Role::password`]) is generated once per process: the throw-away clusters of
/// a test process (copies of one template) share it, and no other OS user on the machine can
/// know it, so the test roles let in only the cluster's owner too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Role {
    /// The role name.
    pub name: &'static str,
    /// How it authenticates.
    pub method: AuthMethod,
    /// Whether the server accepts it only over TLS (`hostssl`; `hostnossl` rejects it).
    pub tls_only: bool,
    /// Readable start of its password (the rest is random).
    prefix: &'static str,
    /// Its index in [`TEST_ROLES`].
    slot: usize,
}

impl Role {
    /// Its password: the prefix, then 24 random letters and digits chosen for this process.
    pub fn password(&self) -> &'static str {
        static PASSWORDS: OnceLock<[String; 4]> = OnceLock::new();
        let passwords = PASSWORDS.get_or_init(|| {
            TEST_ROLES.map(|role| format!("{}-{}", role.prefix, random_alphanumeric(24)))
        });
        passwords.get(self.slot).map_or("", String::as_str)
    }
}

/// `len` letters and digits from std's per-process random hash keys (seeded by the OS).
fn random_alphanumeric(len: usize) -> String {
    use std::hash::{BuildHasher, Hasher};
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut out = String::with_capacity(len);
    let mut bits = 0u64;
    let mut left = 0;
    while out.len() < len {
        if left == 0 {
            let mut hasher = std::hash::RandomState::new().build_hasher();
            hasher.write_usize(out.len());
            bits = hasher.finish();
            left = 10; // 10 x 6 bits of the 64.
        }
        let index = (bits & 63) as usize;
        bits >>= 6;
        left -= 1;
        if let Some(&c) = ALPHABET.get(index) {
            out.push(char::from(c));
        }
    }
    out
}

/// Authenticates with `password` (clear text).
pub const PASSWORD_ROLE: Role = Role {
    name: "sluice_password",
    method: AuthMethod::Password,
    tls_only: false,
    prefix: "cleartext",
    slot: 0,
};

/// Authenticates with `md5`; its password is stored as an MD5 hash.
pub const MD5_ROLE: Role = Role {
    name: "sluice_md5",
    method: AuthMethod::Md5,
    tls_only: false,
    prefix: "md5",
    slot: 1,
};

/// Authenticates with `scram-sha-256`.
pub const SCRAM_ROLE: Role = Role {
    name: "sluice_scram",
    method: AuthMethod::ScramSha256,
    tls_only: false,
    prefix: "scram",
    slot: 2,
};

/// Authenticates with `scram-sha-256`, and only over TLS.
pub const TLS_ROLE: Role = Role {
    name: "sluice_tls",
    method: AuthMethod::ScramSha256,
    tls_only: true,
    prefix: "tls",
    slot: 3,
};

/// All the roles a cluster started with [`crate::ClusterOptions::test_roles`] has.
pub const TEST_ROLES: [Role; 4] = [PASSWORD_ROLE, MD5_ROLE, SCRAM_ROLE, TLS_ROLE];

/// The SQL that creates the test roles and database, one statement per line (the form
/// single-user mode reads). Run in `template1`, so the grant on its `public` schema is copied
/// into `sluice_test` and into every database tests create later.
pub(crate) fn setup_sql() -> String {
    let mut sql = String::new();
    let names: Vec<&str> = TEST_ROLES.iter().map(|r| r.name).collect();
    let names = names.join(", ");
    for role in TEST_ROLES {
        let encryption = match role.method {
            AuthMethod::Md5 => "md5",
            AuthMethod::Password | AuthMethod::ScramSha256 => "scram-sha-256",
        };
        sql.push_str(&format!("SET password_encryption = '{encryption}';\n"));
        sql.push_str(&format!(
            "CREATE ROLE {} LOGIN PASSWORD {};\n",
            role.name,
            sluice_pg::sql::quote_literal(role.password())
        ));
    }
    sql.push_str(&format!(
        "GRANT USAGE, CREATE ON SCHEMA public TO {names};\n\
         CREATE DATABASE {TEST_DATABASE} OWNER postgres;\n\
         GRANT CONNECT, CREATE, TEMPORARY ON DATABASE {TEST_DATABASE} TO {names};\n"
    ));
    sql
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setup_sql_creates_each_role_with_its_password_encryption() {
        let sql = setup_sql();
        assert_eq!(
            sql.lines().filter(|l| l.starts_with("CREATE ROLE")).count(),
            4
        );
        let md5_line = sql
            .lines()
            .position(|l| l.starts_with("CREATE ROLE sluice_md5"))
            .expect("md5 role");
        let lines: Vec<&str> = sql.lines().collect();
        assert_eq!(lines[md5_line - 1], "SET password_encryption = 'md5';");
        assert!(sql.contains("CREATE DATABASE sluice_test OWNER postgres;"));
    }

    #[test]
    fn passwords_are_random_per_process_and_stable_within_it() {
        let scram = SCRAM_ROLE.password();
        assert!(scram.starts_with("scram-"), "{scram}");
        assert_eq!(scram.len(), "scram-".len() + 24);
        assert_eq!(SCRAM_ROLE.password(), scram);
        let all: std::collections::HashSet<_> = TEST_ROLES.iter().map(|r| r.password()).collect();
        assert_eq!(all.len(), 4);
        assert!(setup_sql().contains(scram));
    }
}
