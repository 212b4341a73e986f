//! The computed fields of the exposed relations (functions over a relation's row type that
//! requests name like its columns) and their computed relationships (functions from a row to
//! rows of a relation, embedded like foreign keys), as PostgREST has them.

use super::model::{Cardinality, ComputedField, QualifiedName, Relationship, SchemaCache};
use sluice_pg::Connection;
use std::collections::HashMap;

/// Functions of one required parameter (more only with defaults, all of them `IN`) whose first
/// parameter is the row type of a relation of an exposed schema, returning one value (not a
/// set: a set of another table's rows would be an embedding, not a field). PostgREST finds them
/// through the request's `search_path`, which is the relation's schema, then the extra search
/// path ($2): so the function is in one of those, and the first of them in that order wins a
/// name. Pseudo-type results (`void`, `record`, `trigger`) have no value a field could show.
const COMPUTED: &str = "\
    SELECT c.oid, n.nspname::text, p.proname::text, p.prorettype, \
           pg_catalog.format_type(p.prorettype, NULL), \
           pg_catalog.format_type(coalesce(nullif(t.typbasetype, 0), p.prorettype), NULL), \
           pg_catalog.obj_description(p.oid, 'pg_proc') \
    FROM pg_catalog.pg_proc p \
    JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace \
    JOIN pg_catalog.pg_class c ON c.reltype = p.proargtypes[0] \
    JOIN pg_catalog.pg_namespace cn ON cn.oid = c.relnamespace \
    JOIN pg_catalog.pg_type t ON t.oid = p.prorettype \
    WHERE cn.nspname = ANY($1::text[]) \
      AND (n.oid = cn.oid OR n.nspname = ANY($2::text[])) \
      AND p.prokind = 'f' AND NOT p.proretset \
      AND p.pronargs >= 1 AND p.pronargs - p.pronargdefaults <= 1 \
      AND p.proallargtypes IS NULL AND p.provariadic = 0 AND t.typtype <> 'p' \
      AND c.relkind IN ('r', 'v', 'm', 'f', 'p') \
    ORDER BY c.oid, p.proname, \
      CASE WHEN n.oid = cn.oid THEN 0 ELSE pg_catalog.array_position($2::text[], n.nspname) END, \
      p.oid";

/// Adds to the relations of `cache` (found by OID in `by_oid`) their computed fields; `list` is
/// the exposed schemas as an array literal, `extra` the extra search path as one.
pub(super) async fn load(
    conn: &mut Connection,
    list: &str,
    extra: &str,
    by_oid: &HashMap<u32, QualifiedName>,
    cache: &mut SchemaCache,
) -> Result<(), sluice_pg::Error> {
    let rows = conn.query(COMPUTED, &[&list, &extra]).await?;
    for row in rows.iter() {
        let oid: u32 = row.get(0)?;
        let Some(table) = by_oid.get(&oid).and_then(|n| cache.tables.get_mut(n)) else {
            continue;
        };
        let function = QualifiedName::new(row.get::<&str>(1)?, row.get::<&str>(2)?);
        // A column of the same name hides the function in `row.name`; two overloads over the
        // same row type (differing in defaulted parameters) are one name to a request.
        if table.column(&function.name).is_some()
            || table
                .computed
                .iter()
                .any(|c| c.column.name == function.name)
        {
            continue;
        }
        let mut column = super::quick::result_column(
            function.name.clone(),
            row.get(3)?,
            row.get::<&str>(4)?.to_string(),
        );
        column.base_type_name = row.get::<&str>(5)?.to_string();
        column.description = row.get::<Option<String>>(6)?;
        table.computed.push(ComputedField {
            function,
            row_type: table.name.clone(),
            column,
        });
    }
    Ok(())
}

/// Functions of exactly one parameter, a relation's row type, returning rows of a relation (one,
/// or `SETOF`): computed relationships, embedded under the function's name. Same schema as the
/// relation taken, for the reason computed fields are.
const COMPUTED_RELATIONSHIPS: &str = "\
    SELECT c.oid, n.nspname::text, p.proname::text, f.oid, NOT p.proretset OR p.prorows = 1 \
    FROM pg_catalog.pg_proc p \
    JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace \
    JOIN pg_catalog.pg_class c ON c.reltype = p.proargtypes[0] AND c.relnamespace = n.oid \
    JOIN pg_catalog.pg_class f ON f.reltype = p.prorettype \
    WHERE n.nspname = ANY($1::text[]) AND p.prokind = 'f' AND p.pronargs = 1 \
      AND p.proallargtypes IS NULL \
      AND c.relkind IN ('r', 'v', 'm', 'f', 'p') AND f.relkind IN ('r', 'v', 'm', 'f', 'p') \
    ORDER BY n.nspname, p.proname, p.oid";

/// Adds the computed relationships to `cache`'s relationships; each replaces the foreign-key
/// relationships from its relation to a relation named as the function (PostgREST's override,
/// which also settles what would be ambiguous embeds).
pub(super) async fn load_relationships(
    conn: &mut Connection,
    list: &str,
    by_oid: &HashMap<u32, QualifiedName>,
    cache: &mut SchemaCache,
) -> Result<(), sluice_pg::Error> {
    let rows = conn.query(COMPUTED_RELATIONSHIPS, &[&list]).await?;
    for row in rows.iter() {
        let (Some(table), Some(foreign_table)) = (
            by_oid.get(&row.get::<u32>(0)?),
            by_oid.get(&row.get::<u32>(3)?),
        ) else {
            continue;
        };
        let function = QualifiedName::new(row.get::<&str>(1)?, row.get::<&str>(2)?);
        let relationships = cache.relationships.entry(table.clone()).or_default();
        relationships.retain(|r| {
            matches!(r.cardinality, Cardinality::Computed { .. }) || r.foreign_table != function
        });
        relationships.push(Relationship {
            table: table.clone(),
            foreign_table: foreign_table.clone(),
            is_self: table == foreign_table,
            cardinality: Cardinality::Computed {
                function,
                to_one: row.get(4)?,
            },
        });
    }
    Ok(())
}
