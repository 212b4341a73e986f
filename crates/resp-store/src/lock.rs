//! One owner per schema: a session advisory lock held on a connection of its own.

use sluice_pg::{Config, Connection};

use crate::Error;

/// The first half of the advisory lock key: "slui" in ASCII, so Sluice's locks are recognisable.
const LOCK_CLASS: i32 = 0x736c_7569;

/// Application name of the owner's connections, shown to a second instance that is refused.
pub const APPLICATION: &str = "sluice redis store";

/// Takes the schema's lock on a new connection and keeps it there. A second instance gets
/// [`Error::Locked`] naming the backend and application that hold it.
pub async fn acquire(pg: &Config, schema: &str) -> Result<Connection, Error> {
    let mut conn = Connection::connect_with(pg)
        .await
        .map_err(|e| Error::pg("connecting for the owner lock", e))?;
    conn.batch_execute(&format!(
        "SET application_name = {}",
        sluice_pg::sql::quote_literal(APPLICATION)
    ))
    .await
    .map_err(|e| Error::pg("naming the owner connection", e))?;
    let row = conn
        .query_one(
            "SELECT pg_try_advisory_lock($1, hashtext($2))",
            &[&LOCK_CLASS, &schema],
        )
        .await
        .map_err(|e| Error::pg("taking the owner lock", e))?;
    let got: bool = row
        .get(0)
        .map_err(|e| Error::pg("taking the owner lock", e))?;
    if got {
        return Ok(conn);
    }
    let holder = conn
        .query_opt(
            "SELECT format('backend pid %s, application %L, client %s, since %s', \
                    a.pid, a.application_name, coalesce(a.client_addr::text, 'local socket'), \
                    date_trunc('second', a.backend_start)) \
             FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid \
             WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 \
               AND l.classid = $1::int4::oid AND l.objid = hashtext($2)::oid \
               AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            &[&LOCK_CLASS, &schema],
        )
        .await
        .map_err(|e| Error::pg("finding the owner lock's holder", e))?
        .and_then(|row| row.get::<String>(0).ok())
        .unwrap_or_else(|| "a session that could not be identified".to_string());
    Err(Error::Locked {
        schema: schema.to_string(),
        holder,
    })
}
