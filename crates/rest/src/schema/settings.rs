//! The settings requests set beyond their own: each role's (`ALTER ROLE .. SET`) and those a
//! function hoists from its `SET` clauses, read from the catalog with the schema cache.

use std::collections::HashMap;
use std::sync::Arc;

use sluice_pg::Connection;

use super::model::{IsolationLevel, RoleConfig};

/// The first PostgreSQL version with `has_parameter_privilege` (`GRANT SET ON PARAMETER`).
const PARAMETER_PRIVILEGES: u32 = 150_000;

/// The entries of a function's `proconfig` (`name=value`) whose name is one of `hoisted`, in
/// the function's order.
pub(super) fn hoisted(proconfig: Vec<String>, hoisted: &[String]) -> Vec<(String, String)> {
    proconfig
        .into_iter()
        .filter_map(|entry| {
            let (name, value) = entry.split_once('=')?;
            hoisted
                .iter()
                .any(|h| h == name)
                .then(|| (name.to_string(), value.to_string()))
        })
        .collect()
}

/// The isolation level a function's `SET default_transaction_isolation` names.
pub(super) fn isolation(proconfig: Vec<String>) -> Option<IsolationLevel> {
    proconfig.iter().find_map(|entry| {
        let value = entry.strip_prefix("default_transaction_isolation=")?;
        IsolationLevel::parse(value)
    })
}

/// The settings of every role the connecting role may become (a member of it, or a superuser),
/// as PostgREST reads them: those of all databases (`rolconfig`), only the ones the connecting
/// role may set inside a transaction (a `user` setting, or one granted with `GRANT SET ON
/// PARAMETER`); `default_transaction_isolation` is a transaction's isolation level instead.
pub(super) async fn load_role_settings(
    conn: &mut Connection,
) -> Result<HashMap<String, RoleConfig>, sluice_pg::Error> {
    // The version the server reported at connect time: no round trip.
    let version = conn.server_version_num().unwrap_or(0);
    let settable = if version >= PARAMETER_PRIVILEGES {
        "(ps.context = 'user' OR pg_catalog.has_parameter_privilege(current_user, ps.name, 'SET'))"
    } else {
        "ps.context = 'user'"
    };
    let sql = format!(
        "SELECT r.rolname::text, s.name, s.value \
         FROM pg_catalog.pg_roles r \
         CROSS JOIN LATERAL ( \
           SELECT split_part(c.entry, '=', 1) AS name, \
                  substr(c.entry, strpos(c.entry, '=') + 1) AS value, c.n \
           FROM unnest(r.rolconfig) WITH ORDINALITY AS c(entry, n)) s \
         JOIN pg_catalog.pg_settings ps ON ps.name = s.name \
         WHERE r.rolconfig IS NOT NULL \
           AND pg_catalog.pg_has_role(current_user, r.oid, 'MEMBER') \
           AND (s.name = 'default_transaction_isolation' OR {settable}) \
         ORDER BY r.rolname, s.n"
    );
    let rows = conn.query(&sql, &[]).await?;
    /// A role's configuration as its rows come.
    #[derive(Default)]
    struct Read {
        settings: Vec<(String, String)>,
        isolation: Option<IsolationLevel>,
    }
    let mut roles: HashMap<String, Read> = HashMap::new();
    for row in rows.iter() {
        let role = roles.entry(row.get(0)?).or_default();
        let name: String = row.get(1)?;
        let value: String = row.get(2)?;
        if name == "default_transaction_isolation" {
            role.isolation = IsolationLevel::parse(&value);
        } else {
            role.settings.push((name, value));
        }
    }
    Ok(roles
        .into_iter()
        .map(|(role, read)| {
            let settings: Arc<[(String, String)]> = read.settings.into();
            let isolation = read.isolation;
            (
                role,
                RoleConfig {
                    settings,
                    isolation,
                },
            )
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_hoisted_names_are_kept_in_order_with_values_whole() {
        let proconfig = vec![
            "search_path=public, extensions".to_string(),
            "statement_timeout=1s".to_string(),
            "work_mem=64MB".to_string(),
            "plan_filter.statement_cost_limit=1e4".to_string(),
            "not an entry".to_string(),
            "application_name=a=b".to_string(),
        ];
        let names = [
            "plan_filter.statement_cost_limit".to_string(),
            "statement_timeout".to_string(),
            "application_name".to_string(),
        ];
        assert_eq!(
            hoisted(proconfig, &names),
            [
                ("statement_timeout".to_string(), "1s".to_string()),
                (
                    "plan_filter.statement_cost_limit".to_string(),
                    "1e4".to_string()
                ),
                ("application_name".to_string(), "a=b".to_string()),
            ]
        );
    }

    #[test]
    fn a_function_names_its_isolation_level_as_postgresql_writes_it() {
        let config = |entry: &str| vec!["work_mem=1MB".to_string(), entry.to_string()];
        assert_eq!(
            isolation(config("default_transaction_isolation=serializable")),
            Some(IsolationLevel::Serializable)
        );
        assert_eq!(
            isolation(config("default_transaction_isolation=\"repeatable read\"")),
            Some(IsolationLevel::RepeatableRead)
        );
        assert_eq!(
            isolation(config("default_transaction_isolation=REPEATABLE READ")),
            Some(IsolationLevel::RepeatableRead)
        );
        assert_eq!(
            isolation(config("default_transaction_isolation=read committed")),
            None
        );
        assert_eq!(isolation(config("statement_timeout=1s")), None);
    }

    #[test]
    fn a_name_is_matched_whole_not_as_a_part() {
        let proconfig = vec!["lock_timeout=1s".to_string()];
        assert!(hoisted(proconfig, &["timeout".to_string()]).is_empty());
    }
}
