//! SQLSTATE codes the gates act on, by PostgreSQL's names (Appendix A of its manual), and the
//! classes they belong to.

/// `00000`.
pub const SUCCESSFUL_COMPLETION: &str = "00000";
/// `0A000`.
pub const FEATURE_NOT_SUPPORTED: &str = "0A000";
/// `21000`: e.g. `ON CONFLICT DO UPDATE command cannot affect row a second time`.
pub const CARDINALITY_VIOLATION: &str = "21000";
/// `22001`.
pub const STRING_DATA_RIGHT_TRUNCATION: &str = "22001";
/// `22003`.
pub const NUMERIC_VALUE_OUT_OF_RANGE: &str = "22003";
/// `22007`.
pub const INVALID_DATETIME_FORMAT: &str = "22007";
/// `22008`.
pub const DATETIME_FIELD_OVERFLOW: &str = "22008";
/// `22023`.
pub const INVALID_PARAMETER_VALUE: &str = "22023";
/// `22P02`.
pub const INVALID_TEXT_REPRESENTATION: &str = "22P02";
/// `23001`: a row still referenced through `ON DELETE RESTRICT`.
pub const RESTRICT_VIOLATION: &str = "23001";
/// `23502`.
pub const NOT_NULL_VIOLATION: &str = "23502";
/// `23503`.
pub const FOREIGN_KEY_VIOLATION: &str = "23503";
/// `23505`.
pub const UNIQUE_VIOLATION: &str = "23505";
/// `23514`.
pub const CHECK_VIOLATION: &str = "23514";
/// `23P01`.
pub const EXCLUSION_VIOLATION: &str = "23P01";
/// `25006`.
pub const READ_ONLY_SQL_TRANSACTION: &str = "25006";
/// `26000`: a prepared statement that does not exist (dropped on the server).
pub const INVALID_SQL_STATEMENT_NAME: &str = "26000";
/// `28000`.
pub const INVALID_AUTHORIZATION_SPECIFICATION: &str = "28000";
/// `28P01`.
pub const INVALID_PASSWORD: &str = "28P01";
/// `3D000`: the database named when connecting does not exist.
pub const INVALID_CATALOG_NAME: &str = "3D000";
/// `3F000`.
pub const INVALID_SCHEMA_NAME: &str = "3F000";
/// `40001`.
pub const SERIALIZATION_FAILURE: &str = "40001";
/// `40P01`.
pub const DEADLOCK_DETECTED: &str = "40P01";
/// `42501`.
pub const INSUFFICIENT_PRIVILEGE: &str = "42501";
/// `42601`.
pub const SYNTAX_ERROR: &str = "42601";
/// `42701`.
pub const DUPLICATE_COLUMN: &str = "42701";
/// `42703`.
pub const UNDEFINED_COLUMN: &str = "42703";
/// `42804`.
pub const DATATYPE_MISMATCH: &str = "42804";
/// `42883`.
pub const UNDEFINED_FUNCTION: &str = "42883";
/// `42939`: a reserved name (`pg_` prefixes for schemas, system columns).
pub const RESERVED_NAME: &str = "42939";
/// `42P01`.
pub const UNDEFINED_TABLE: &str = "42P01";
/// `42P06`.
pub const DUPLICATE_SCHEMA: &str = "42P06";
/// `42P07`.
pub const DUPLICATE_TABLE: &str = "42P07";
/// `42P17`.
pub const INVALID_OBJECT_DEFINITION: &str = "42P17";
/// `53300`.
pub const TOO_MANY_CONNECTIONS: &str = "53300";
/// `54000`: e.g. a row too big.
pub const PROGRAM_LIMIT_EXCEEDED: &str = "54000";
/// `54011`: more than 1,600 columns.
pub const TOO_MANY_COLUMNS: &str = "54011";
/// `55P03`.
pub const LOCK_NOT_AVAILABLE: &str = "55P03";
/// `57014`: canceled, or `statement_timeout`.
pub const QUERY_CANCELED: &str = "57014";
/// `57P01`.
pub const ADMIN_SHUTDOWN: &str = "57P01";
/// `57P02`.
pub const CRASH_SHUTDOWN: &str = "57P02";
/// `57P03`.
pub const CANNOT_CONNECT_NOW: &str = "57P03";
/// `57P04`: the session's database was dropped.
pub const DATABASE_DROPPED: &str = "57P04";
/// `57P05`: `idle_session_timeout` ended the session.
pub const IDLE_SESSION_TIMEOUT: &str = "57P05";
/// `P0001`: `RAISE EXCEPTION` without another code.
pub const RAISE_EXCEPTION: &str = "P0001";

/// Class `08`: connection exception.
pub const CLASS_CONNECTION_EXCEPTION: &str = "08";
/// Class `22`: data exception (a value the type cannot hold, a bad format, a NUL in text).
pub const CLASS_DATA_EXCEPTION: &str = "22";
/// Class `23`: integrity constraint violation.
pub const CLASS_INTEGRITY_CONSTRAINT_VIOLATION: &str = "23";
/// Class `28`: invalid authorization specification (a login refused).
pub const CLASS_INVALID_AUTHORIZATION: &str = "28";
/// Class `40`: transaction rollback.
pub const CLASS_TRANSACTION_ROLLBACK: &str = "40";
/// Class `42`: syntax error or access rule violation.
pub const CLASS_SYNTAX_ERROR_OR_ACCESS_RULE_VIOLATION: &str = "42";
/// Class `53`: insufficient resources.
pub const CLASS_INSUFFICIENT_RESOURCES: &str = "53";
/// Class `54`: program limit exceeded.
pub const CLASS_PROGRAM_LIMIT_EXCEEDED: &str = "54";
/// Class `57`: operator intervention.
pub const CLASS_OPERATOR_INTERVENTION: &str = "57";

/// Whether `code` says the server ended or broke the session: a connection exception
/// (`08xxx`) or the server going away (`57P01`, `57P02`, `57P04`, `57P05`).
pub fn is_connection_lost(code: &str) -> bool {
    class(code) == CLASS_CONNECTION_EXCEPTION
        || matches!(
            code,
            ADMIN_SHUTDOWN | CRASH_SHUTDOWN | DATABASE_DROPPED | IDLE_SESSION_TIMEOUT
        )
}

/// Whether `code` says the database cannot serve right now, so a client should come back
/// later (HTTP 503): the session was lost, or the server is starting up or shutting down
/// (`57P03`) or has no connection slot left (`53300`).
pub fn is_unavailable(code: &str) -> bool {
    is_connection_lost(code) || matches!(code, CANNOT_CONNECT_NOW | TOO_MANY_CONNECTIONS)
}

/// The class (first two characters) of a SQLSTATE.
pub fn class(code: &str) -> &str {
    code.get(..2).unwrap_or(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unavailable_means_the_session_or_server_not_the_request() {
        for code in ["08006", "08001", "57P01", "57P02", "57P04", "57P05"] {
            assert!(is_connection_lost(code) && is_unavailable(code), "{code}");
        }
        for code in ["57P03", "53300"] {
            assert!(!is_connection_lost(code) && is_unavailable(code), "{code}");
        }
        for code in ["57014", "53200", "23505", "40001", "", "0"] {
            assert!(!is_unavailable(code), "{code}");
        }
    }
}
