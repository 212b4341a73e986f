//! Fuzz target: any text through the InfluxQL statement parser of `/query`; it must not panic,
//! and what it accepts names databases and policies of 1 to 63 bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice_influx::influxql::{Statement, parse};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(statements) = parse(&text) else {
        return;
    };
    assert!(!statements.is_empty());
    let fits = |name: &str| !name.is_empty() && name.len() <= 63;
    for statement in statements {
        match statement {
            Statement::CreateDatabase { name, policy, .. } => {
                assert!(fits(&name));
                assert!(policy.is_none_or(|p| fits(&p)));
            }
            Statement::CreateRetentionPolicy {
                policy, database, ..
            }
            | Statement::AlterRetentionPolicy {
                policy, database, ..
            }
            | Statement::DropRetentionPolicy { policy, database } => {
                assert!(fits(&policy) && fits(&database));
            }
            Statement::ShowRetentionPolicies { database } => {
                assert!(database.is_none_or(|d| fits(&d)));
            }
            Statement::ShowDatabases => {}
        }
    }
});
