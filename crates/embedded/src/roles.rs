//! The login roles a test cluster creates, one per authentication method under test.

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Role {
    /// The role name.
    pub name: &'static str,
    /// Its password.
    pub password: &'static str,
    /// How it authenticates.
    pub method: AuthMethod,
    /// Whether the server accepts it only over TLS (`hostssl`; `hostnossl` rejects it).
    pub tls_only: bool,
}

/// Authenticates with `password` (clear text).
pub const PASSWORD_ROLE: Role = Role {
    name: "sluice_password",
    password: "cleartext-Secret-1",
    method: AuthMethod::Password,
    tls_only: false,
};

/// Authenticates with `md5`; its password is stored as an MD5 hash.
pub const MD5_ROLE: Role = Role {
    name: "sluice_md5",
    password: "md5-Secret-2",
    method: AuthMethod::Md5,
    tls_only: false,
};

/// Authenticates with `scram-sha-256`.
pub const SCRAM_ROLE: Role = Role {
    name: "sluice_scram",
    password: "scram-Secret-3",
    method: AuthMethod::ScramSha256,
    tls_only: false,
};

/// Authenticates with `scram-sha-256`, and only over TLS.
pub const TLS_ROLE: Role = Role {
    name: "sluice_tls",
    password: "tls-Secret-4",
    method: AuthMethod::ScramSha256,
    tls_only: true,
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
            "CREATE ROLE {} LOGIN PASSWORD '{}';\n",
            role.name,
            role.password.replace('\'', "''")
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
}
