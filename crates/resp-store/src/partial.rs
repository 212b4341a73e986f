//! A follower's read of keys written in part: their rows in `keys` and the named members' rows.

use std::collections::HashMap;
use std::fmt::Write as _;

use sluice_pg::Connection;
use sluice_pg::sql::quote_ident;
use sluice_resp::engine::{Elements, Key};

use crate::Error;
use crate::codec::{as_f64, as_i64};
use crate::load::{copy_rows, db_of, keys_in, push_hex_element, required};

/// A key written in part and the members (fields) named for it.
pub type PartKey = ((i32, Vec<u8>), Vec<Vec<u8>>);

/// What a key written in part is now.
#[derive(Debug)]
pub enum PartRead {
    /// No longer there (deleted, or past its expiry).
    Gone,
    /// Of a type whose members are not read in part (a later commit made it a list, say):
    /// read it whole.
    Whole,
    /// Its expiry (0: none) and the named members as they are now.
    Members(i64, Elements),
}

/// The element table, member column and value column of a type read in part.
const TABLES: [(&[u8], &str, &str); 3] = [
    (b"hash", "hash_fields", "field, value"),
    (b"set", "set_members", "member"),
    (b"zset", "zset_members", "member, score"),
];

/// Reads `parts` of `schema`, in the caller's snapshot (a REPEATABLE READ transaction),
/// answering in their order.
pub async fn read(
    conn: &mut Connection,
    schema: &str,
    databases: usize,
    parts: &[PartKey],
) -> Result<Vec<PartRead>, Error> {
    let s = quote_ident(schema);
    let index: HashMap<(i32, &[u8]), usize> = parts
        .iter()
        .enumerate()
        .map(|(i, ((db, key), _))| ((*db, key.as_slice()), i))
        .collect();
    // The type (an index into TABLES, or none) and expiry of each key found.
    let mut found: Vec<Option<(Option<usize>, i64)>> = vec![None; parts.len()];
    let keys_sql = format!(
        "COPY (SELECT db, key, type, (extract(epoch FROM expire_at) * 1000)::int8 \
               FROM {s}.keys t WHERE (expire_at IS NULL OR expire_at > now()) AND {}) \
         TO STDOUT (FORMAT binary)",
        keys_in(parts.iter().map(|((db, key), _)| (*db, key.as_slice())))
    );
    copy_rows(conn, &keys_sql, "keys", |data, f| {
        let db = db_of(data, f, databases)?;
        let key = required(data, f, 1)?;
        let kind = required(data, f, 2)?;
        let expire_at = crate::codec::field(data, f, 3)?
            .map(as_i64)
            .transpose()?
            .unwrap_or(0);
        if let Some(&i) = index.get(&(db as i32, key)) {
            let table = TABLES.iter().position(|(name, _, _)| *name == kind);
            found[i] = Some((table, expire_at));
        }
        Ok(())
    })
    .await?;
    // The members found, per key, by type.
    let mut values: Vec<HashMap<Vec<u8>, Found>> = vec![HashMap::new(); parts.len()];
    for (table_index, (_, table, columns)) in TABLES.iter().enumerate() {
        let wanted: Vec<&PartKey> = parts
            .iter()
            .zip(&found)
            .filter(|(part, f)| {
                !part.1.is_empty() && matches!(f, Some((Some(t), _)) if *t == table_index)
            })
            .map(|(part, _)| part)
            .collect();
        if wanted.is_empty() {
            continue;
        }
        let member_column = if table_index == 0 { "field" } else { "member" };
        let sql = format!(
            "COPY (SELECT t.db, t.key, {columns} FROM {s}.{table} t WHERE {}) \
             TO STDOUT (FORMAT binary)",
            members_filter(&wanted, member_column)
        );
        copy_rows(conn, &sql, table, |data, f| {
            let db = db_of(data, f, databases)?;
            let key = required(data, f, 1)?;
            let member = required(data, f, 2)?;
            let Some(&i) = index.get(&(db as i32, key)) else {
                return Ok(());
            };
            let value = match table_index {
                0 => Found::Value(Key::from(required(data, f, 3)?)),
                1 => Found::Present,
                _ => Found::Score(as_f64(required(data, f, 3)?)?),
            };
            values[i].insert(member.to_vec(), value);
            Ok(())
        })
        .await?;
    }
    Ok(parts
        .iter()
        .zip(found)
        .zip(values)
        .map(|((((_, _), members), found), mut values)| match found {
            None => PartRead::Gone,
            Some((None, _)) => PartRead::Whole,
            Some((Some(table), expire_at)) => {
                let named = members.iter().map(|m| {
                    let found = values.remove(m.as_slice());
                    (Key::from(m.as_slice()), found)
                });
                let elements = match table {
                    0 => Elements::Hash(
                        named
                            .map(|(m, found)| match found {
                                Some(Found::Value(v)) => (m, Some(v)),
                                _ => (m, None),
                            })
                            .collect(),
                    ),
                    1 => Elements::Set(named.map(|(m, found)| (m, found.is_some())).collect()),
                    _ => Elements::ZSet(
                        named
                            .map(|(m, found)| match found {
                                Some(Found::Score(s)) => (m, Some(s)),
                                _ => (m, None),
                            })
                            .collect(),
                    ),
                };
                PartRead::Members(expire_at, elements)
            }
        })
        .collect())
}

/// A member's row found.
#[derive(Debug, Clone)]
enum Found {
    Value(Key),
    Present,
    Score(f64),
}

/// `(t.db, t.key, t.<member>)` among the members named for `parts`.
fn members_filter(parts: &[&PartKey], member: &str) -> String {
    let mut dbs = String::new();
    let mut keys = String::new();
    let mut members = String::new();
    let mut first = true;
    for ((db, key), named) in parts {
        for m in named {
            let sep = if first { "" } else { "," };
            first = false;
            let _ = write!(dbs, "{sep}{db}");
            push_hex_element(&mut keys, sep, key);
            push_hex_element(&mut members, sep, m);
        }
    }
    format!(
        "(t.db, t.key, t.{member}) IN (SELECT w.db, decode(w.k, 'hex'), decode(w.m, 'hex') \
           FROM unnest('{{{dbs}}}'::int4[], '{{{keys}}}'::text[], '{{{members}}}'::text[]) \
           AS w(db, k, m))"
    )
}
